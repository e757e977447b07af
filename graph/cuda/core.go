package cuda

import (
	"sync"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

// core is what the devices here keep on the Go side: a lock that makes
// their calls one at a time, and the live allocations, against which every
// launch, copy and product is checked before anything runs.
type core struct {
	mu     sync.Mutex
	allocs *allocs
}

// newCore is a core with no allocations.
func newCore() *core { return &core{allocs: newAllocs()} }

// checkLaunch checks l (the caller holds mu): graph's checks of the
// kernel, grid, block and arguments, and pointers that are null or inside
// a live allocation.
func (c *core) checkLaunch(l *graph.Launch) error {
	if err := l.Check(); err != nil {
		return err
	}
	for i, a := range l.Args() {
		if l.Pointer(i) && a != 0 {
			if err := c.allocs.within(graph.DevicePtr(a), 1); err != nil {
				return errors.Wrapf(err, "kernel %s, argument %d (%s)", l.Kernel, i+1, l.Kernel.Params()[i].Name)
			}
		}
	}
	return nil
}

// checkGemm checks g (the caller holds mu): graph's checks of its sizes and
// strides, then that each matrix, from the first product's to the last's,
// lies in one live allocation, and so does the table of addresses.
func (c *core) checkGemm(g *graph.DeviceGEMM) error {
	if err := g.Check(); err != nil {
		return err
	}
	size := 4
	if g.BF16 {
		size = 2
	}
	sa, sb, sc := g.Spans()
	for _, m := range []struct {
		name string
		p    graph.DevicePtr
		n    int
	}{{"A", g.A, sa * size}, {"B", g.B, sb * size}, {"C", g.C, sc * 4}} {
		if err := c.allocs.within(m.p, m.n); err != nil {
			return errors.Wrapf(err, "gemm: matrix %s", m.name)
		}
	}
	if g.Table != 0 {
		if err := c.allocs.within(g.Table, 3*8*g.Batch*g.Outer); err != nil {
			return errors.Wrap(err, "gemm: the table of addresses")
		}
	}
	return nil
}

// checkCopy checks a copy of n bytes at p (the caller holds mu).
func (c *core) checkCopy(what string, p graph.DevicePtr, n int) error {
	if n == 0 {
		return nil
	}
	return errors.Wrap(c.allocs.within(p, n), what)
}
