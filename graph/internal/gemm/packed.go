package gemm

import (
	"fmt"

	"github.com/transformer-go/transformer/graph/internal/par"
)

// PackedB is the right operand op(B) of products C = op(A)·op(B), k×n,
// copied once into the panels the micro-kernel reads, for a B that many
// products share: a weight matrix multiplied at every step of decoding.
// Products with it skip the packing of B, which for a product of a few
// dozen rows by a large B costs about as much as the product. It is valid
// only while B's elements are the ones it was packed from: whoever keeps
// one must drop it when B changes.
type PackedB[T float] struct {
	im   *impl[T]
	k, n int
	// data holds the blocks of kc rows of op(B) (the last may be
	// shorter), one after the other, each as the panels of nr columns that
	// packB writes for all n columns: see block.
	data []T
}

// PackSB packs op(B), k×n, for SgemmPacked: B is stored k×n, or n×k when
// transB is set, with leading dimension ldb. It panics when B does not
// fit in b.
func PackSB(transB bool, k, n int, b []float32, ldb int) *PackedB[float32] {
	return pack(sgemm, transB, k, n, b, ldb)
}

// PackDB is PackSB for float64.
func PackDB(transB bool, k, n int, b []float64, ldb int) *PackedB[float64] {
	return pack(dgemm, transB, k, n, b, ldb)
}

// RepackSB is PackSB into the memory of pb, a copy PackSB or RepackSB
// made of another k×n op(B), which it overwrites; when pb is nil or of
// other sizes, it is PackSB.
func RepackSB(pb *PackedB[float32], transB bool, k, n int, b []float32, ldb int) *PackedB[float32] {
	return repack(sgemm, pb, transB, k, n, b, ldb)
}

// RepackDB is RepackSB for float64.
func RepackDB(pb *PackedB[float64], transB bool, k, n int, b []float64, ldb int) *PackedB[float64] {
	return repack(dgemm, pb, transB, k, n, b, ldb)
}

// SgemmPacked computes C = e(op(A)·op(B) + beta·C) as SgemmEpilogue does,
// with op(B) packed by PackSB: op(A) is m×k.
func SgemmPacked(transA bool, m int, a []float32, lda int, b *PackedB[float32], beta float32, c []float32, ldc int, e Epilogue[float32]) {
	b.run(problem[float32]{transA: transA, m: m, n: b.n, k: b.k, a: a, lda: lda, beta: beta, c: c, ldc: ldc, epi: e})
}

// DgemmPacked is SgemmPacked for float64.
func DgemmPacked(transA bool, m int, a []float64, lda int, b *PackedB[float64], beta float64, c []float64, ldc int, e Epilogue[float64]) {
	b.run(problem[float64]{transA: transA, m: m, n: b.n, k: b.k, a: a, lda: lda, beta: beta, c: c, ldc: ldc, epi: e})
}

// Skinny reports whether products whose op(A) has m rows are computed as
// matrix–vector products (see gemv.go), which read B as it is: packing B
// for them gains nothing.
func Skinny(m int) bool { return m >= 1 && m <= maxSkinnyRows }

// pack packs op(B) for im.
func pack[T float](im *impl[T], transB bool, k, n int, b []T, ldb int) *PackedB[T] {
	return repack(im, nil, transB, k, n, b, ldb)
}

// repack packs op(B) for im into old's memory when old (which may be nil)
// is a copy of a k×n op(B) for im, else into new memory.
func repack[T float](im *impl[T], old *PackedB[T], transB bool, k, n int, b []T, ldb int) *PackedB[T] {
	p := problem[T]{transB: transB, k: k, n: n, b: b, ldb: ldb}
	br, bc := k, n
	if transB {
		br, bc = bc, br
	}
	if k < 0 || n < 0 {
		panic(fmt.Sprintf("gemm: negative size k=%d n=%d", k, n))
	}
	checkMatrix("b", br, bc, len(b), ldb)
	pb := old
	if pb == nil || pb.im != im || pb.k != k || pb.n != n {
		pb = &PackedB[T]{im: im, k: k, n: n, data: make([]T, im.depth(k)*roundUp(n, im.nr))}
	}
	par.For(ceilDiv(n, im.nr), 1, func(lo, hi int) {
		pb.fill(&p, lo*im.nr, min(hi*im.nr, n))
	})
	return pb
}

// fill packs columns [j0, j1) of op(B), p's B, into pb's panels; j0 is a
// multiple of nr.
func (pb *PackedB[T]) fill(p *problem[T], j0, j1 int) {
	if pb.k == 0 {
		return
	}
	kc := pb.im.kcEqual(pb.k)
	for pc := 0; pc < pb.k; pc += kc {
		rows := min(kc, pb.k-pc)
		pb.im.packB(pb.block(pc, j0, rows), p, pc, j0, rows, j1-j0)
	}
}

// run computes p, whose B is pb.
func (pb *PackedB[T]) run(p problem[T]) {
	p.packed = pb
	pb.im.run(p)
}

// block is the packed panels of op(B)[pc:pc+kc, j0:] for the block of rows
// that starts at pc (kc is that block's length).
func (pb *PackedB[T]) block(pc, j0, kc int) []T {
	im := pb.im
	return pb.data[im.depth(pc)*roundUp(pb.n, im.nr)+j0*im.depth(kc):]
}

// kcEqual is the length of the blocks of the inner dimension k: equal, so
// that none is much shorter than the others, and even for panels of
// bfloat16 pairs, so that no pair straddles two blocks.
func (im *impl[T]) kcEqual(k int) int {
	kc := ceilDiv(k, ceilDiv(k, im.kc))
	if im.panels != nil {
		kc = roundUp(kc, 2)
	}
	return kc
}

// panelsB returns the packed panels of op(B)[pc:pc+kc, jc:jc+nc]: those of
// p.packed when B is packed already, else buf after packing them into it.
func (im *impl[T]) panelsB(buf []T, p *problem[T], pc, jc, kc, nc int) []T {
	if p.packed != nil {
		return p.packed.block(pc, p.j0+jc, kc)
	}
	im.packB(buf, p, pc, jc, kc, nc)
	return buf
}
