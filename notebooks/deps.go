//go:build tools

// Package notebooks is never built. It lists the packages the notebooks
// import besides the standard library and the project's own, so that their
// modules stay in notebooks/go.mod. Add a package here (and `go get` its
// module) before a notebook imports it; see README.md.
package notebooks

import (
	_ "gonum.org/v1/plot"
	_ "gonum.org/v1/plot/palette"
	_ "gonum.org/v1/plot/palette/moreland"
	_ "gonum.org/v1/plot/plotter"
	_ "gonum.org/v1/plot/plotutil"
	_ "gonum.org/v1/plot/vg"
	_ "gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg"
	_ "gorgonia.org/gorgonia"
	_ "gorgonia.org/tensor"
)
