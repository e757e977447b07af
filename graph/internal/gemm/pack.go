package gemm

// packA packs op(A)[i0:i0+mc, p0:p0+kc] into dst as panels of mr rows:
// panel q holds rows q·mr to q·mr+mr-1, column after column (mr slots each),
// starting at dst[q·mr·depth(kc)], or row after row where im.rows packs
// them (rowPanels). Rows past mc are zero.
func (im *impl[T]) packA(dst []T, p *problem[T], i0, p0, mc, kc int) {
	if r := im.rowsOf(p); r != nil {
		r.pack(dst, im.mr, p.a[p.offsetA(i0, p0):], p.lda, kc, mc)
		return
	}
	if im.panels != nil {
		im.panels.packA(im, dst, *p, i0, p0, mc, kc)
		return
	}
	im.copyA(dst, p, i0, p0, mc, kc)
}

// packB packs op(B)[p0:p0+kc, j0:j0+nc] into dst as panels of nr columns:
// panel q holds columns q·nr to q·nr+nr-1, row after row (nr slots each),
// starting at dst[q·nr·depth(kc)]. Columns past nc are zero.
func (im *impl[T]) packB(dst []T, p *problem[T], p0, j0, kc, nc int) {
	if im.panels != nil {
		im.panels.packB(im, dst, *p, p0, j0, kc, nc)
		return
	}
	im.copyB(dst, p, p0, j0, kc, nc)
}

// depth is how many slots of a packed panel's row or column hold kc
// elements of the inner dimension: kc, unless the panels say otherwise.
func (im *impl[T]) depth(kc int) int {
	if im.panels != nil {
		return im.panels.depth(kc)
	}
	return kc
}

// copyA is packA for panels that are copies of A: a slot per element.
func (im *impl[T]) copyA(dst []T, p *problem[T], i0, p0, mc, kc int) {
	mr := im.mr
	ir := 0
	if full := mc / mr; p.transA && full >= 4 {
		// Each row of the block is contiguous in A: copy it into all the
		// whole panels at once, which reads A in longer runs than panel by
		// panel does. (For a few panels, the extra calls cost more.)
		for q := range kc {
			im.gather(dst[q*mr:], mr*kc, p.a[p.offsetA(i0, p0+q):], mr, full, mr)
		}
		ir = full * mr
	}
	for ; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		d := dst[ir*kc : (ir+mr)*kc]
		if rows < mr {
			clear(d)
		}
		src := p.a[p.offsetA(i0+ir, p0):]
		if p.transA {
			im.gather(d, mr, src, p.lda, kc, rows)
		} else {
			im.scatter(d, mr, src, p.lda, rows, kc)
		}
	}
}

// copyB is packB for panels that are copies of B: a slot per element.
func (im *impl[T]) copyB(dst []T, p *problem[T], p0, j0, kc, nc int) {
	nr := im.nr
	for jr := 0; jr < nc; jr += nr {
		cols := min(nr, nc-jr)
		d := dst[jr*kc : (jr+nr)*kc]
		if cols < nr {
			clear(d)
		}
		src := p.b[p.offsetB(p0, j0+jr):]
		if p.transB {
			im.scatter(d, nr, src, p.ldb, cols, kc)
		} else {
			im.gather(d, nr, src, p.ldb, kc, cols)
		}
	}
}

// A packer copies a matrix into a packed panel, leaving alone the elements
// of the panel it does not cover; gather and scatter are the portable ones.
type packer[T float] func(dst []T, w int, src []T, ld, rows, cols int)

// gather copies the rows×cols matrix src (leading dimension ld) into dst
// with leading dimension w ≥ cols.
func gather[T float](dst []T, w int, src []T, ld, rows, cols int) {
	for r := range rows {
		copy(dst[r*w:][:cols], src[r*ld:][:cols])
	}
}

// scatter copies the transpose of the rows×cols matrix src (leading
// dimension ld) into dst with leading dimension w ≥ rows: src's row r becomes
// column r of dst.
func scatter[T float](dst []T, w int, src []T, ld, rows, cols int) {
	for r := range rows {
		s := src[r*ld:][:cols]
		for j, v := range s {
			dst[j*w+r] = v
		}
	}
}
