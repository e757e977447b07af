package cuda

import (
	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

// Every allocation of a device here starts at a multiple of granule bytes
// (cuMemAlloc's alignment; the simulated device's and the recording
// device's too) and is granule bytes long or a multiple of it, so no two
// allocations share a granule. An allocation of at most smallBytes is found
// by its granules; a larger one by the pages it touches, of which each has
// at most two such allocations (one ending in it, one starting).
const (
	granuleShift = 8
	granule      = 1 << granuleShift
	pageShift    = 16
	smallBytes   = 1 << pageShift
)

// allocs are a device's live allocations, so that a launch's pointers and
// a copy's or a product's memory are checked in constant time before they
// are touched.
type allocs struct {
	size  map[graph.DevicePtr]int
	small map[uint64]graph.DevicePtr
	large map[uint64][2]graph.DevicePtr
}

// newAllocs is an empty set of allocations.
func newAllocs() *allocs {
	return &allocs{size: map[graph.DevicePtr]int{}, small: map[uint64]graph.DevicePtr{}, large: map[uint64][2]graph.DevicePtr{}}
}

// rounded is n bytes rounded up to whole granules, at least one.
func rounded(n int) int { return max((n+granule-1)/granule, 1) * granule }

// add records the allocation of n bytes at p, which holds n rounded up to
// whole granules.
func (a *allocs) add(p graph.DevicePtr, n int) error {
	if uint64(p)%granule != 0 {
		return errors.Errorf("an allocation at %#x is not aligned to %d bytes", uint64(p), granule)
	}
	a.size[p] = n
	n = rounded(n)
	if n <= smallBytes {
		for g := uint64(p) >> granuleShift; g < (uint64(p)+uint64(n))>>granuleShift; g++ {
			a.small[g] = p
		}
		return nil
	}
	for pg := uint64(p) >> pageShift; pg <= (uint64(p)+uint64(n)-1)>>pageShift; pg++ {
		e := a.large[pg]
		if e[0] == 0 {
			e[0] = p
		} else {
			e[1] = p
		}
		a.large[pg] = e
	}
	return nil
}

// remove forgets the allocation at p, which must be one's base.
func (a *allocs) remove(p graph.DevicePtr) error {
	n, ok := a.size[p]
	if !ok {
		return errors.Errorf("free: %#x is not an allocation", uint64(p))
	}
	delete(a.size, p)
	n = rounded(n)
	if n <= smallBytes {
		for g := uint64(p) >> granuleShift; g < (uint64(p)+uint64(n))>>granuleShift; g++ {
			delete(a.small, g)
		}
		return nil
	}
	for pg := uint64(p) >> pageShift; pg <= (uint64(p)+uint64(n)-1)>>pageShift; pg++ {
		e := a.large[pg]
		switch p {
		case e[0]:
			e[0], e[1] = e[1], 0
		case e[1]:
			e[1] = 0
		}
		if e[0] == 0 {
			delete(a.large, pg)
		} else {
			a.large[pg] = e
		}
	}
	return nil
}

// within says whether [p, p+n) lies in one allocation.
func (a *allocs) within(p graph.DevicePtr, n int) error {
	if base, ok := a.small[uint64(p)>>granuleShift]; ok && a.covers(base, p, n) {
		return nil
	}
	for _, base := range a.large[uint64(p)>>pageShift] {
		if base != 0 && a.covers(base, p, n) {
			return nil
		}
	}
	return errors.Errorf("%d bytes at %#x are not within one allocation", n, uint64(p))
}

// covers reports whether the allocation at base, of the bytes asked for,
// holds [p, p+n).
func (a *allocs) covers(base, p graph.DevicePtr, n int) bool {
	return p >= base && uint64(p-base)+uint64(n) <= uint64(a.size[base])
}

// bases are the live allocations' bases.
func (a *allocs) bases() []graph.DevicePtr {
	out := make([]graph.DevicePtr, 0, len(a.size))
	for p := range a.size {
		out = append(out, p)
	}
	return out
}
