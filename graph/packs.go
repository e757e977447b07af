package graph

import (
	"unsafe"

	"gorgonia.org/tensor"

	blas "github.com/transformer-go/transformer/graph/internal/gemm"
)

// version counts the changes of one parameter's values (Params.Set,
// Params.Updated). Its address names the parameter to the runtimes' packed
// copies, which are copies of one version of its values.
type version struct{ n uint64 }

// Updated announces that the named parameters have changed value in place
// (all of them when no name is given), as an optimizer step or a broadcast
// changes them: it counts a new version of each. Every change of a value
// made through its tensor (Value) must be announced before the next run of
// a program that reads it, for the runtimes keep packed copies of the
// weights that products read while their versions stay the same (see
// Runtime). Set announces its own change.
func (p *Params) Updated(names ...string) {
	if len(names) == 0 {
		names = p.names
	}
	for _, name := range names {
		if v := p.versions[name]; v != nil {
			v.n++
		}
	}
}

// packCache holds the packed copies of the weights that the products of a
// runtime's programs read, by parameter and product. A copy is of one
// version of its parameter: a product that reads a later version packs
// the weight anew, into the same memory, so that no copy is ever read
// stale and no step allocates one. A copy is made by the second product
// that reads a version, as evaluation and decoding read it (and the
// batches of an accumulated step), never by a training step that reads
// each version once: its product packs B anyway, once, so a copy would
// save no work and hold memory, half of a float32 weight for each
// bfloat16 copy and a whole one for the others. A copy not made again for
// a whole version is let go, and so are a parameter's copies when the last
// open program that reads it is closed.
type packCache struct {
	copies map[packKey]*packCopy
	// readers counts, by parameter, the open programs whose products read
	// it: its copies go when the last one is closed.
	readers map[*version]int
	// keepFirst keeps copies from the first product that reads a
	// version (a test's switch).
	keepFirst bool
}

// packKey identifies a parameter and the product op(w) that reads it:
// transposed or not, [k, n], with BF16 products or not.
type packKey struct {
	param  *version
	transB bool
	k, n   int
	bf16   bool
}

// packCopy is the packed copy of a parameter for one product: the version
// that products read last and how many did, and the copy (nil when none
// is kept), current when it holds that version's values.
type packCopy struct {
	version uint64
	reads   int
	pack    any // a *blas.PackedB[float32] or [float64]
	current bool
}

// open hands the parameters ws, read by the products of a program being
// compiled, the cache's copies, and returns them without repeats.
func (c *packCache) open(ws []*param) []*version {
	if c.readers == nil {
		c.readers = map[*version]int{}
	}
	seen := make(map[*version]bool, len(ws))
	var vs []*version
	for _, w := range ws {
		w.packs = c
		if !seen[w.version] {
			seen[w.version] = true
			vs = append(vs, w.version)
			c.readers[w.version]++
		}
	}
	return vs
}

// close forgets the copies of the parameters vs that a program being
// closed read and no other open program reads.
func (c *packCache) close(vs []*version) {
	for _, v := range vs {
		if c.readers[v]--; c.readers[v] > 0 {
			continue
		}
		delete(c.readers, v)
		for key := range c.copies {
			if key.param == v {
				delete(c.copies, key)
			}
		}
	}
}

// get returns the copy by key for the parameter's current version, made
// by pack (into the memory of the copy of an earlier version, old, which
// may be nil) when the version has been read often enough to keep one:
// first products of this version get nil when it has not.
func (c *packCache) get(key packKey, pack func(old any) any) any {
	v := key.param.n
	pc := c.copies[key]
	switch {
	case pc == nil:
		if c.copies == nil {
			c.copies = map[packKey]*packCopy{}
		}
		pc = &packCopy{version: v}
		c.copies[key] = pc
	case pc.version != v:
		if !pc.current {
			pc.pack = nil // not made again for a whole version
		}
		pc.version, pc.reads, pc.current = v, 0, false
	}
	pc.reads++
	if !pc.current && pc.reads >= c.readsToKeep() {
		pc.pack, pc.current = pack(pc.pack), true
	}
	if !pc.current {
		return nil
	}
	return pc.pack
}

// readsToKeep is how many products must read a version of a parameter
// before its copy is made and kept.
func (c *packCache) readsToKeep() int {
	if c.keepFirst {
		return 1
	}
	return 2
}

// param is a MatMul's w that is a parameter: its tensor and version, and
// the packed copies of the runtime its program was compiled on (nil
// before it is compiled).
type param struct {
	value   *tensor.Dense
	version *version
	packs   *packCache
}

// packed returns the packed copy of op(b), [k, n], for a product with m
// rows, or nil when w is nil, packing would not pay for a product of m
// rows, b is not the parameter's own elements (a copy made for this run,
// say) or the runtime keeps no copy yet (packCache.get).
func packed[T Float](w *param, transB bool, m, k, n int, b []T) any {
	if !packPays(m) {
		return nil
	}
	return cachedPack(w, false, transB, k, n, b, func(old any) any { return packB(old, transB, k, n, b) })
}

// packedBF16 is packed for BF16 products, whose GEMM packs B for every
// product, however few its rows.
func packedBF16(w *param, transB bool, k, n int, b []float32) *blas.PackedB[float32] {
	pb, _ := cachedPack(w, true, transB, k, n, b, func(old any) any {
		ldb := n
		if transB {
			ldb = k
		}
		pb, _ := old.(*blas.PackedB[float32])
		return blas.RepackBF16B(pb, transB, k, n, b, ldb)
	}).(*blas.PackedB[float32])
	return pb
}

// cachedPack returns the copy of op(b) that w's runtime keeps, made by
// pack; nil when w is nil or not compiled, or b is not the parameter's own
// elements.
func cachedPack[T Float](w *param, bf16, transB bool, k, n int, b []T, pack func(old any) any) any {
	if w == nil || w.packs == nil || len(b) == 0 || !sameData(w.value, b) {
		return nil
	}
	return w.packs.get(packKey{w.version, transB, k, n, bf16}, pack)
}

// sameData reports whether b is the elements of t.
func sameData[T Float](t *tensor.Dense, b []T) bool {
	var d []T
	switch t.Dtype() {
	case tensor.Float32:
		d, _ = any(t.Float32s()).([]T)
	case tensor.Float64:
		d, _ = any(t.Float64s()).([]T)
	}
	return len(d) == len(b) && unsafe.SliceData(d) == unsafe.SliceData(b)
}
