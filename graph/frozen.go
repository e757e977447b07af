package graph

import (
	"unsafe"

	"gorgonia.org/tensor"

	blas "github.com/transformer-go/transformer/graph/internal/gemm"
)

// Freeze promises that no parameter of p changes value until the returned
// function is called. Until then, every MatMul of a Scope built on p whose
// w is a parameter packs w for the GEMM at its first run and reuses that
// copy at every later run, instead of packing it anew each time: a decoder
// multiplies the same weights at every step. Unfreezing drops the copies,
// so a change made afterwards (an optimizer step, a load) is always seen,
// except the BF16 ones of a store whose changes are announced (Updated).
// Set drops them too. Calls nest: the copies go when the last unfreeze
// runs. Writing to a parameter's tensor while p is frozen is a bug that
// the products would not see.
func (p *Params) Freeze() (unfreeze func()) {
	p.packs.frozen++
	done := false
	return func() {
		if done {
			return
		}
		done = true
		if p.packs.frozen--; p.packs.frozen == 0 {
			p.packs.thaw()
		}
	}
}

// Frozen reports whether p is frozen (see Freeze).
func (p *Params) Frozen() bool { return p.packs.frozen > 0 }

// Updated announces that the named parameters have changed value (all of
// them when no name is given), as an optimizer step changes them: their
// packed copies are dropped, and the next product packs them anew.
//
// The first call also promises that every later change of a value will be
// announced, by Updated or by Set: from then on the BF16 products keep the
// bfloat16 copies of a weight across runs, frozen or not, until it
// changes, so that one copy of op(w) serves every forward product and one
// of op(w)ᵀ every input gradient between two optimizer steps (the batches
// of an accumulated step, evaluation, decoding). A change that is not
// announced is a bug that the products would not see. On CPUs whose BF16
// copies are float32 (BF16Kernel is a widening one) the copies are kept
// only while frozen, as before the promise: they would cost twice the
// weights' memory and save no arithmetic there.
func (p *Params) Updated(names ...string) {
	c := &p.packs
	c.announced = true
	if len(names) == 0 {
		c.drop()
		return
	}
	for _, name := range names {
		if v := p.values[name]; v != nil {
			c.dropParam(tensorData(v))
		}
	}
}

// reuse returns the dropped BF16 copy by key, whose memory the next copy
// by key is packed into, and forgets it; nil if there is none.
func (c *packs) reuse(key packKey) *blas.PackedB[float32] {
	pb := c.stale[key]
	delete(c.stale, key)
	return pb
}

// packs holds the packed copies of the parameters that products used, by
// the parameter's elements and how the product reads them: while its
// Params are frozen, and BF16 ones also while their parameters are
// unchanged once changes are announced (see Updated).
type packs struct {
	frozen    int
	announced bool
	// keepWidened keeps BF16 copies across runs even where they are
	// float32 (a test's switch).
	keepWidened bool
	copies      map[packKey]any // a *blas.PackedB[float32] or [float64]
	// stale holds the copies that Updated dropped and keeps would keep,
	// for their memory: a training step packs its weights again into it
	// instead of allocating their size anew.
	stale map[packKey]*blas.PackedB[float32]
}

// packKey identifies a parameter by the address of its elements, and the
// product op(w) that reads it: transposed or not, [k, n], with BF16
// products or not.
type packKey struct {
	data   unsafe.Pointer
	transB bool
	k, n   int
	bf16   bool
}

// drop forgets every packed copy.
func (c *packs) drop() { c.copies = nil }

// dropParam forgets the packed copies of the parameter whose elements
// start at data, keeping the memory of those that keeps would keep.
func (c *packs) dropParam(data unsafe.Pointer) {
	for key, pb := range c.copies {
		if key.data != data {
			continue
		}
		delete(c.copies, key)
		if pb, ok := pb.(*blas.PackedB[float32]); ok && c.keeps(key) {
			if c.stale == nil {
				c.stale = map[packKey]*blas.PackedB[float32]{}
			}
			c.stale[key] = pb
		}
	}
}

// thaw forgets the copies that live only while the store is frozen.
func (c *packs) thaw() {
	for key := range c.copies {
		if !c.keeps(key) {
			delete(c.copies, key)
		}
	}
	if len(c.copies) == 0 {
		c.drop()
	}
}

// keeps reports whether the copy by key is kept while the store is not
// frozen: a BF16 one, once changes are announced, on a CPU whose BF16
// copies hold bfloat16 values (or by a test's wish).
func (c *packs) keeps(key packKey) bool {
	return key.bf16 && c.announced && (blas.BF16Halves() || c.keepWidened)
}

// param is a MatMul's w that is a parameter: the packed copies of its
// Params and its tensor.
type param struct {
	packs *packs
	value *tensor.Dense
}

// packed returns the packed copy of op(b), [k, n], for a product with m
// rows, packing it the first time; nil when w is nil, its Params are not
// frozen, packing would not pay for a product of m rows, or b is not the
// parameter's own elements (a copy made for this run, say).
func packed[T Float](w *param, transB bool, m, k, n int, b []T) any {
	if !packPays(m) {
		return nil
	}
	return cachedPack(w, packKey{unsafe.Pointer(unsafe.SliceData(b)), transB, k, n, false}, b, func() any { return packB(transB, k, n, b) })
}

// packedBF16 is packed for BF16 products, whose GEMM packs B for every
// product, however few its rows.
func packedBF16(w *param, transB bool, k, n int, b []float32) *blas.PackedB[float32] {
	key := packKey{unsafe.Pointer(unsafe.SliceData(b)), transB, k, n, true}
	pb, _ := cachedPack(w, key, b, func() any {
		ldb := n
		if transB {
			ldb = k
		}
		return blas.RepackBF16B(w.packs.reuse(key), transB, k, n, b, ldb)
	}).(*blas.PackedB[float32])
	return pb
}

// cachedPack returns w's copy by key, made by pack the first time; nil when w
// is nil, its Params neither are frozen nor keep the copy (packs.keeps),
// or b is not the parameter's own elements.
func cachedPack[T Float](w *param, key packKey, b []T, pack func() any) any {
	if w == nil || w.packs.frozen == 0 && !w.packs.keeps(key) || len(b) == 0 || !sameData(w.value, b) {
		return nil
	}
	c := w.packs
	if pb, ok := c.copies[key]; ok {
		return pb
	}
	pb := pack()
	if pb != nil {
		if c.copies == nil {
			c.copies = map[packKey]any{}
		}
		c.copies[key] = pb
	}
	return pb
}

// tensorData is the address of t's elements.
func tensorData(t *tensor.Dense) unsafe.Pointer {
	switch t.Dtype() {
	case tensor.Float32:
		return unsafe.Pointer(unsafe.SliceData(t.Float32s()))
	case tensor.Float64:
		return unsafe.Pointer(unsafe.SliceData(t.Float64s()))
	}
	return nil
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
