//go:build !openblas

package sysmem

// blasReserve is what the BLAS maps beyond Go's heap: nothing, for the
// project's own products.
const blasReserve = 0
