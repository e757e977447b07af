//go:build openblas

package graph

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// With the openblas build tag every matrix product, this package's and
// Gorgonia's, goes through the system's CBLAS (build with
// CGO_LDFLAGS=-lopenblas and Debian's libopenblas-dev) instead of gonum's
// pure-Go BLAS. The choice is process-wide, as BLAS itself is.
func init() {
	impl := netlib.Implementation{}
	blas32.Use(impl)
	blas64.Use(impl)
	G.Use(impl)
}
