package gemm

import (
	"runtime"
	"sync"

	"github.com/transformer-go/transformer/graph/internal/par"
)

// A microKernel computes one mr×nr tile of C from a packed mr×k panel of A
// (column by column, mr values each) and a packed k×nr panel of B (row by
// row, nr values each): C = A·B, or C += A·B when accumulate is set. c points
// at the tile's first element, and ldc is C's leading dimension.
type microKernel[T float] func(k int, a, b, c *T, ldc int, accumulate bool)

// A finishingKernel is a microKernel that also finishes the tile as an
// Epilogue does before storing it: it adds bias (nr values; nil for none)
// to each row, then applies ReLU when relu is set. It serves the whole
// tiles of a block's last pass over the inner dimension, so that the
// epilogue costs no pass over C of its own.
type finishingKernel[T float] func(k int, a, b, c *T, ldc int, accumulate bool, bias *T, relu bool)

// plain is the microKernel of f: f without an epilogue.
func plain[T float](f finishingKernel[T]) microKernel[T] {
	return func(k int, a, b, c *T, ldc int, accumulate bool) { f(k, a, b, c, ldc, accumulate, nil, false) }
}

// impl is a GEMM built around one micro-kernel and the cache blocking sizes
// that suit it.
//
// The loops, outermost first (BLIS's names):
//
//	jc: columns of C in blocks of nc;
//	pc: the inner dimension in blocks of kc; B[pc:pc+kc, jc:jc+nc] is packed
//	    into nc/nr panels of kc×nr, meant to live in L3 (or L2);
//	ic: rows of C in blocks of mc; A[ic:ic+mc, pc:pc+kc] is packed into mc/mr
//	    panels of mr×kc, meant to live in L2;
//	jr: one kc×nr panel of B, reread by every step of ir from L1;
//	ir: one mr×kc panel of A: the micro-kernel updates the mr×nr tile of C.
//
// Transposition is handled entirely by packing. Tiles at the right and
// bottom edges of C, smaller than mr×nr, are computed into a scratch tile
// (the packed panels are zero-padded) and then added to C.
type impl[T float] struct {
	name       string
	mr, nr     int // register tile of C updated by kernel
	mc, kc, nc int // cache blocks; mc is a multiple of mr and nc of nr
	kernel     microKernel[T]
	// finish, when set, is kernel with the epilogue fused (see macro).
	finish  finishingKernel[T]
	gather  packer[T] // copies rows into packed panels
	scatter packer[T] // copies columns into packed panels
	// panels, when set, packs the panels instead of copying them with
	// gather and scatter: the bfloat16 GEMM's (see bf16.go).
	panels panelPacker[T]
	// rows, when set, packs and multiplies the panels of an A that is not
	// transposed in another layout (see rowPanels).
	rows *rowPanels[T]
	// short, when set, are kernel and finish on the first shortRows rows
	// of a panel alone.
	short *kernels[T]
	pool  sync.Pool // of *workspace[T]
}

// rowPanels packs the panels of an A whose rows are contiguous row by row,
// each row's slots one after the other, and has the micro-kernels that
// read panels so laid out: the bfloat16 GEMM's, whose panels of pairs
// would otherwise be a transposition of A's rows (pairLines16), while by
// rows each row is rounded in place, 32 values an instruction. The kernels
// find row r of a panel at r·k slots; they compute what the ones of the
// other layout do, bit for bit.
type rowPanels[T float] struct {
	pack func(dst []T, w int, src []T, ld, kc, n int) // as a blockPacker
	kernels[T]
}

// kernels are the micro-kernel that computes a product's tiles and its
// finishing form (nil for none), and, when short is set, the kernels that
// compute the first shortRows rows of a panel alone: those of the last
// panel of a block whose rows leave it shortRows or fewer (the third panel
// of attention's products of 32 rows), which then costs two thirds of a
// whole one and, at exactly shortRows rows, no scratch tile.
type kernels[T float] struct {
	kernel microKernel[T]
	finish finishingKernel[T]
	short  *kernels[T]
}

// shortRows is the height of the tiles of kernels.short.
const shortRows = 8

// rowsOf returns im's rowPanels when they pack p's A, else nil.
func (im *impl[T]) rowsOf(p *problem[T]) *rowPanels[T] {
	if p.transA {
		return nil
	}
	return im.rows
}

// kernelsOf returns the micro-kernels for the panels of p's A.
func (im *impl[T]) kernelsOf(p *problem[T]) kernels[T] {
	if r := im.rowsOf(p); r != nil {
		return r.kernels
	}
	return kernels[T]{im.kernel, im.finish, im.short}
}

// workspace holds one goroutine's packing buffers and scratch tile.
type workspace[T float] struct {
	a, b, tile []T
}

// minParallelWork is the least m·n·k for which a product is split among
// goroutines: below it the goroutine hand-off costs about as much as it saves.
const minParallelWork = 1 << 20

// run computes p after checking its arguments.
func (im *impl[T]) run(p problem[T]) {
	p.check()
	switch {
	case p.m == 0 || p.n == 0:
	case p.k == 0:
		scale(p.c, p.ldc, p.m, p.n, p.beta)
		p.epi.Apply(p.c, p.ldc, p.m, p.n)
	case p.m*p.n*p.k < minParallelWork:
		im.serial(p)
	default:
		im.parallel(p)
	}
}

// parallel computes p on the calling goroutine and up to GOMAXPROCS-1
// helpers (package par). C is cut into bands of rows or columns (across the
// longer side), more bands than goroutines, and each goroutine runs the
// blocked algorithm on the next band nobody has taken: a goroutine whose
// core is slower (a busy virtual CPU, a cold cache) takes fewer bands
// instead of holding the others up. Bands of rows share the packing of B:
// a block of it at a time, packed by all the goroutines together (see
// sharedBlocks). Bands of columns pack their own A, so there are only as
// many as keep that repeated packing small. Every element of C is computed
// as it would be by serial, whatever the bands.
//
// A product whose A is aliased (see aliasedA) goes to bands of columns even
// when C is taller than wide.
func (im *impl[T]) parallel(p problem[T]) {
	workers := runtime.GOMAXPROCS(0)
	switch {
	case workers == 1:
		im.serial(p)
	case p.m < p.n || im.aliasedA(p):
		im.columnBands(p, workers)
	case p.packed != nil:
		im.rowBands(p, workers)
	default:
		im.sharedBlocks(p, workers)
	}
}

// aliasedA reports whether p's A is transposed, packed into bfloat16 pairs,
// and has rows a multiple of 1 KB apart, whose lines fall into 4 of the L1
// cache's 64 sets or fewer. Packed by a band of rows, one or two panels of
// 12 lines, each strip of A is read down its rows alone and evicts the
// lines the next strip needs; a band of columns packs A in blocks of mc
// rows, which pairStripsBF16 reads a few rows at a time across all their
// strips. Timed in pairs, bands of columns made bfloat16 products with A
// 1024 floats wide 4-26% faster (TN 1024×128×128 most) and those with rows
// 8000 or 1000 floats apart 2-4% slower, as each band packs all of A; the
// float32 packers gained on some shapes and lost on others, so they keep
// their bands, and so does the widening GEMM, which packs with them.
func (im *impl[T]) aliasedA(p problem[T]) bool {
	_, paired := any(im.panels).(pairing)
	return p.transA && paired && p.lda%aliasedRows == 0
}

// aliasedRows is the leading dimension, in floats, whose multiples make
// rows 1 KB apart.
const aliasedRows = 256

// bandsPerWorker is how many bands parallel cuts per goroutine: the more
// there are, the less the goroutines wait for the last band at the end of
// a product (32 made a step of the small model 1-2% faster than 8 on two
// cores, 64 no faster again). minBandColumns is the least width of a band
// of columns: each packs all of A again, which for bands this wide costs
// about 2% of their product.
const (
	bandsPerWorker = 32
	minBandColumns = 512
)

// rowBands computes p in bands of rows.
func (im *impl[T]) rowBands(p problem[T], workers int) {
	tiles := ceilDiv(p.m, im.mr)
	im.bands(p, true, tiles, min(tiles, bandsPerWorker*workers))
}

// columnBands computes p in bands of columns: bandsPerWorker per goroutine
// at most, as few as one per goroutine when narrower ones would repack A
// too often.
func (im *impl[T]) columnBands(p problem[T], workers int) {
	tiles := ceilDiv(p.n, im.nr)
	n := max(workers, min(bandsPerWorker*workers, p.n/minBandColumns))
	im.bands(p, false, tiles, min(tiles, n))
}

// sharedBlocks computes p one block of op(B) at a time, kc×nc as in
// serial: the goroutines pack the block together into the B buffer of one
// workspace, then compute its product with the matching columns of op(A)
// in bands of rows.
func (im *impl[T]) sharedBlocks(p problem[T], workers int) {
	kc := im.kcEqual(p.k)
	w := im.workspace(0, min(p.n, im.nc), kc)
	defer im.pool.Put(w)
	pb := &PackedB[T]{im: im}
	for jc := 0; jc < p.n; jc += im.nc {
		for pc := 0; pc < p.k; pc += kc {
			q := p.block(pc, jc, min(kc, p.k-pc), min(im.nc, p.n-jc))
			pb.k, pb.n, pb.data = q.k, q.n, w.b[:q.k*roundUp(q.n, im.nr)]
			par.For(ceilDiv(q.n, im.nr), 1, func(lo, hi int) {
				pb.fill(&q, lo*im.nr, min(hi*im.nr, q.n))
			})
			q.packed = pb
			im.rowBands(q, workers)
		}
	}
}

// block returns the part of p that adds op(A)[:, pc:pc+kc]·op(B)[pc:pc+kc,
// jc:jc+nc] to C[:, jc:jc+nc]: with p's beta for the first block of the
// inner dimension, which serial computes first, and 1 for the others; with
// p's epilogue for the last block, none for the others.
func (p problem[T]) block(pc, jc, kc, nc int) problem[T] {
	if pc > 0 {
		p.beta = 1
	}
	if pc+kc < p.k {
		p.epi = Epilogue[T]{}
	}
	p.epi = p.epi.from(jc)
	p.a = p.a[p.offsetA(0, pc):]
	p.b = p.b[p.offsetB(pc, jc):]
	p.c = p.c[jc:]
	p.k, p.n = kc, nc
	return p
}

// bands computes p in n bands of rows (byRows) or columns, each a run of
// the tiles of mr rows or nr columns, taken one at a time by the goroutines.
func (im *impl[T]) bands(p problem[T], byRows bool, tiles, n int) {
	par.Do(n, func(b int) {
		im.serial(p.band(byRows, tiles*b/n, tiles*(b+1)/n, im.mr, im.nr))
	})
}

// band returns the part of p that computes the rows of C in tiles [t0, t1)
// of mr rows each when byRows is set, or the columns in tiles of nr columns.
func (p problem[T]) band(byRows bool, t0, t1, mr, nr int) problem[T] {
	if byRows {
		i0, i1 := t0*mr, min(t1*mr, p.m)
		p.a = p.a[p.offsetA(i0, 0):]
		p.c = p.c[i0*p.ldc:]
		p.m = i1 - i0
		return p
	}
	j0, j1 := t0*nr, min(t1*nr, p.n)
	if p.packed == nil {
		p.b = p.b[p.offsetB(0, j0):]
	}
	p.j0 += j0
	p.epi = p.epi.from(j0)
	p.c = p.c[j0:]
	p.n = j1 - j0
	return p
}

// offsetA is the index in p.a of op(A)[i, q].
func (p *problem[T]) offsetA(i, q int) int {
	if p.transA {
		return q*p.lda + i
	}
	return i*p.lda + q
}

// offsetB is the index in p.b of op(B)[q, j].
func (p *problem[T]) offsetB(q, j int) int {
	if p.transB {
		return j*p.ldb + q
	}
	return q*p.ldb + j
}

// serial computes p on the calling goroutine; p.m, p.n and p.k are positive.
func (im *impl[T]) serial(p problem[T]) {
	kcEqual := im.kcEqual(p.k)
	w := im.workspace(min(p.m, im.mc), min(p.n, im.nc), kcEqual)
	defer im.pool.Put(w)
	if p.beta != 0 && p.beta != 1 {
		scale(p.c, p.ldc, p.m, p.n, p.beta)
	}
	ks := im.kernelsOf(&p)
	for jc := 0; jc < p.n; jc += im.nc {
		nc := min(im.nc, p.n-jc)
		for pc := 0; pc < p.k; pc += kcEqual {
			kc := min(kcEqual, p.k-pc)
			accumulate := pc > 0 || p.beta != 0
			panels := *w
			panels.b = im.panelsB(w.b, &p, pc, jc, kc, nc)
			var epi Epilogue[T] // the last pass's
			if pc+kc == p.k {
				epi = p.epi.from(jc)
			}
			for ic := 0; ic < p.m; ic += im.mc {
				mc := min(im.mc, p.m-ic)
				c := p.c[ic*p.ldc+jc:]
				im.packA(w.a, &p, ic, pc, mc, kc)
				im.macro(&panels, ks, mc, nc, kc, c, p.ldc, accumulate, epi)
			}
		}
	}
}

// workspace returns buffers for packing mc×kc blocks of A and kc×nc blocks
// of B, from the pool when it has large enough ones.
func (im *impl[T]) workspace(mc, nc, kc int) *workspace[T] {
	w, _ := im.pool.Get().(*workspace[T])
	if w == nil {
		w = &workspace[T]{tile: make([]T, im.mr*im.nr)}
	}
	if n := roundUp(mc, im.mr) * kc; cap(w.a) < n {
		w.a = make([]T, n)
	}
	if n := roundUp(nc, im.nr) * kc; cap(w.b) < n {
		w.b = make([]T, n)
	}
	return w
}

// macro updates the mc×nc block of C at c from the packed blocks of A and B
// in w, tile by tile with the micro-kernels ks, and finishes it with epi
// (whose Bias starts at the block's first column); the micro-kernel's k is
// the panels' depth. Whole tiles are finished by the finishing kernel where
// there is one, the others after they are added to C.
func (im *impl[T]) macro(w *workspace[T], ks kernels[T], mc, nc, kc int, c []T, ldc int, accumulate bool, epi Epilogue[T]) {
	mr, nr := im.mr, im.nr
	kd := im.depth(kc)
	fused := ks.finish != nil && (epi.Bias != nil || epi.ReLU)
	for jr := 0; jr < nc; jr += nr {
		b := &w.b[jr*kd]
		cols := min(nr, nc-jr)
		for ir := 0; ir < mc; ir += mr {
			a := &w.a[ir*kd]
			rows := min(mr, mc-ir)
			k, height := ks, mr
			if rows <= shortRows && ks.short != nil {
				k, height = *ks.short, shortRows
			}
			if rows == height && cols == nr {
				if fused {
					k.finish(kd, a, b, &c[ir*ldc+jr], ldc, accumulate, epi.biasAt(jr), epi.ReLU)
				} else {
					k.kernel(kd, a, b, &c[ir*ldc+jr], ldc, accumulate)
				}
				continue
			}
			k.kernel(kd, a, b, &w.tile[0], nr, false)
			addTile(c[ir*ldc+jr:], ldc, w.tile, nr, rows, cols, accumulate)
			if fused {
				epi.from(jr).Apply(c[ir*ldc+jr:], ldc, rows, cols)
			}
		}
	}
	if !fused {
		epi.Apply(c, ldc, mc, nc)
	}
}

// addTile adds the rows×cols matrix t (leading dimension ldt) to c, or
// copies it there when accumulate is false.
func addTile[T float](c []T, ldc int, t []T, ldt, rows, cols int, accumulate bool) {
	for i := range rows {
		ci, ti := c[i*ldc:][:cols], t[i*ldt:][:cols]
		if !accumulate {
			copy(ci, ti)
			continue
		}
		for j, v := range ti {
			ci[j] += v
		}
	}
}

// scale multiplies the m×n matrix c by beta; beta 0 clears c, NaNs included.
func scale[T float](c []T, ldc, m, n int, beta T) {
	for i := range m {
		ci := c[i*ldc:][:n]
		if beta == 0 {
			clear(ci)
			continue
		}
		for j := range ci {
			ci[j] *= beta
		}
	}
}

func roundUp(x, multiple int) int { return ceilDiv(x, multiple) * multiple }

func ceilDiv(x, y int) int { return (x + y - 1) / y }
