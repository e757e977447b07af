package graph

import (
	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph/internal/cuda"
)

// A sum of squares reduces in two passes of fixed launches, so that its
// bits depend on the gradients alone (not on GOMAXPROCS, nor on timing):
// sum_squares_f32 writes one partial per thread of a grid of sqBlocks
// blocks of sqBlock threads for each gradient, and sum_f32 adds all the
// partials in one block.
const (
	sqBlocks  = 16
	sqBlock   = 256
	sqThreads = sqBlocks * sqBlock
)

// GradSums are sums of gradients of parameters kept on a runtime's device,
// one per parameter: the trainer's Σ_b n_b·∇L_b over a step's batches b of
// n_b tokens. Zero, Add each batch, then SumSquares and Adam; nothing
// crosses to the host but the sum of squares (and the sums themselves by
// AppendHost and SetHost, for an all-reduce on the host).
type GradSums struct {
	rt    *Runtime
	names []string
	// off is the offset of each parameter's sum in buf, in elements,
	// sizes their sizes in the order of names, and n the elements of all.
	off   map[string]int
	sizes []int
	n     int
	buf   cuda.Ptr
}

// NewGradSums returns zero sums of the gradients of the named parameters
// of params, on the runtime's device, laid out one after another in the
// order of names. Close frees them.
func (rt *Runtime) NewGradSums(params *Params, names []string) (*GradSums, error) {
	if rt.cuda == nil {
		return nil, errors.New("gradient sums: the runtime has no device")
	}
	g := &GradSums{rt: rt, names: names, off: map[string]int{}}
	for _, name := range names {
		if params.Shape(name) == nil {
			return nil, errors.Errorf("gradient sums: no parameter %s", name)
		}
		g.off[name] = g.n
		g.sizes = append(g.sizes, params.Shape(name).TotalSize())
		g.n += g.sizes[len(g.sizes)-1]
	}
	var err error
	if g.buf, err = rt.cuda.Alloc(4 * max(g.n, 1)); err != nil {
		return nil, errors.Wrap(err, "gradient sums on the device")
	}
	return g, g.Zero()
}

// Zero sets the sums to zero.
func (g *GradSums) Zero() error {
	return errors.Wrap(cuda.Elems(g.rt.cuda, "fill_f32", g.n, g.buf, float32(0), g.n), "zeroing the gradient sums")
}

// Add adds scale times the gradients of p's last run to the sums: p must
// run on the sums' runtime, and the sums hold every parameter it
// differentiates.
func (g *GradSums) Add(p *Program, scale float64) error {
	if p.rt != g.rt {
		return errors.New("adding gradients: the program runs on another runtime than the sums")
	}
	grads, err := p.deviceGrads(p.params)
	if err != nil {
		return errors.Wrap(err, "adding gradients")
	}
	for i, name := range p.params {
		off, ok := g.off[name]
		if !ok {
			return errors.Errorf("adding gradients: no sum of %s", name)
		}
		n := p.grads[i].Shape().TotalSize()
		if err := cuda.Elems(g.rt.cuda, "axpy_f32", n, g.at(off), grads[i], float32(scale), n); err != nil {
			return errors.Wrapf(err, "adding the gradient of %s", name)
		}
	}
	return nil
}

// at is the device address of element off of the sums.
func (g *GradSums) at(off int) cuda.Ptr { return g.buf.Add(4 * off) }

// SumSquares is Σ g² over every element of every sum, computed on the
// device in a fixed order: the same bits for the same sums.
func (g *GradSums) SumSquares() (float64, error) {
	ptrs := make([]cuda.Ptr, len(g.names))
	for i, name := range g.names {
		ptrs[i] = g.at(g.off[name])
	}
	return g.rt.sumSquares(ptrs, g.sizes)
}

// Adam is Program.Adam from the sums of names.
func (g *GradSums) Adam(params, m, v *Params, names []string, s AdamStep) error {
	grads := make([]cuda.Ptr, len(names))
	for i, name := range names {
		off, ok := g.off[name]
		if !ok {
			return errors.Errorf("adam: no gradient sum of %s", name)
		}
		grads[i] = g.at(off)
	}
	return g.rt.adam(params, m, v, names, grads, s)
}

// AppendHost appends the sums to buf, in the order of their names, copied
// from the device.
func (g *GradSums) AppendHost(buf []float32) ([]float32, error) {
	k := len(buf)
	buf = append(buf, make([]float32, g.n)...)
	return buf, errors.Wrap(g.rt.cuda.ToHost(cuda.Float32Bytes(buf[k:]), g.buf), "copying the gradient sums to the host")
}

// SetHost copies the first elements of src, sums laid out as AppendHost
// appends them, to the device.
func (g *GradSums) SetHost(src []float32) error {
	if len(src) < g.n {
		return errors.Errorf("setting the gradient sums: have %d values, want %d", len(src), g.n)
	}
	return errors.Wrap(g.rt.cuda.ToDevice(g.buf, cuda.Float32Bytes(src[:g.n])), "copying the gradient sums to the device")
}

// Close frees the sums' device memory.
func (g *GradSums) Close() error {
	if g.buf == 0 || g.rt.cuda == nil {
		return nil
	}
	err := g.rt.cuda.Free(g.buf)
	g.buf = 0
	return errors.Wrap(err, "freeing the gradient sums")
}

// SumSquares is Σ g² over the gradients of the program's last run on a
// device, computed there as GradSums.SumSquares computes it.
func (p *Program) SumSquares() (float64, error) {
	grads, err := p.deviceGrads(p.params)
	if err != nil {
		return 0, errors.Wrap(err, "sum of squares")
	}
	sizes := make([]int, len(grads))
	for i, n := range p.grads {
		sizes[i] = n.Shape().TotalSize()
	}
	return p.rt.sumSquares(grads, sizes)
}

// sumSquares is Σ x² over the device arrays xs of sizes elements, reduced
// in the runtime's scratch memory (grown as needed).
func (rt *Runtime) sumSquares(xs []cuda.Ptr, sizes []int) (float64, error) {
	parts := len(xs) * sqThreads
	scratch, err := grow(rt.cuda, &rt.scratch, 0, 4*(parts+1))
	if err != nil {
		return 0, errors.Wrap(err, "sum of squares")
	}
	for i, x := range xs {
		err := rt.cuda.Launch("sum_squares_f32", cuda.Dim3{X: sqBlocks}, cuda.Dim3{X: sqBlock}, scratch.Add(4*i*sqThreads), x, sizes[i])
		if err != nil {
			return 0, errors.Wrap(err, "sum of squares")
		}
	}
	sum := scratch.Add(4 * parts)
	if err := cuda.Rows(rt.cuda, "sum_f32", 1, parts, sum, scratch, parts); err != nil {
		return 0, errors.Wrap(err, "sum of squares")
	}
	one := []float32{0}
	err = rt.cuda.ToHost(cuda.Float32Bytes(one), sum)
	return float64(one[0]), errors.Wrap(err, "copying the sum of squares to the host")
}
