package cuda

import (
	"sync"

	"github.com/pkg/errors"
)

// maxBlock is the most threads a block may have (MAX_BLOCK in common.cuh).
const maxBlock = 1024

// core is what both devices keep on the Go side: a lock that makes their
// calls one at a time, the live allocations, and the kernels' parameters.
type core struct {
	mu     sync.Mutex
	allocs allocs
	sigs   map[string][]param
}

// newCore reads the kernels' parameters from the embedded source.
func newCore() (*core, error) {
	sigs, _, err := kernels()
	if err != nil {
		return nil, err
	}
	return &core{allocs: allocs{}, sigs: sigs}, nil
}

// launchArgs checks a launch (the caller holds mu) and packs its arguments:
// a known kernel, a block of a power of two threads up to maxBlock, and
// pointers that are null or inside a live allocation.
func (c *core) launchArgs(kernel string, grid, block Dim3, in []any) (g, b [3]uint32, a *args, err error) {
	sig, ok := c.sigs[kernel]
	if !ok {
		return g, b, nil, errors.Errorf("no kernel %q", kernel)
	}
	if g, err = grid.dims("grid"); err != nil {
		return g, b, nil, errors.Wrapf(err, "kernel %s", kernel)
	}
	if b, err = block.dims("block"); err != nil {
		return g, b, nil, errors.Wrapf(err, "kernel %s", kernel)
	}
	if n := b[0] * b[1] * b[2]; n > maxBlock || n&(n-1) != 0 {
		return g, b, nil, errors.Errorf("kernel %s: block %v has %d threads, want a power of two up to %d", kernel, block, n, maxBlock)
	}
	if a, err = packArgs(kernel, sig, in); err != nil {
		return g, b, nil, err
	}
	for i, v := range in {
		if p, ok := v.(Ptr); ok && p != 0 {
			if err := c.allocs.within(p, 1); err != nil {
				a.pinner.Unpin()
				return g, b, nil, errors.Wrapf(err, "kernel %s, argument %d (%s)", kernel, i+1, sig[i].name)
			}
		}
	}
	return g, b, a, nil
}

// copyCheck checks a copy of n bytes at p (the caller holds mu).
func (c *core) copyCheck(what string, p Ptr, n int) error {
	if n == 0 {
		return nil
	}
	return errors.Wrap(c.allocs.within(p, n), what)
}

// freeCheck checks that p is an allocation's base and forgets it (the
// caller holds mu).
func (c *core) freeCheck(p Ptr) error {
	if _, ok := c.allocs[p]; !ok {
		return errors.Errorf("free: %#x is not an allocation", uint64(p))
	}
	delete(c.allocs, p)
	return nil
}
