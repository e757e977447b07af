package ops

import "github.com/transformer-go/transformer/graph"

// The device kernels of this package's ops (graph.DeviceKernels): launches
// of the kernels of graph/internal/cuda/kernels named in each.

// headsDevice is SplitHeads' (split) or MergeHeads' device kernel, heads_f32.
func headsDevice(heads int, split bool) graph.DeviceKernels {
	return graph.DeviceKernels{Forward: func(d *graph.DeviceCall, y graph.DeviceOperand, in []graph.DeviceOperand) error {
		s := y.Shape
		if !split {
			s = in[0].Shape
		}
		return d.Elems("heads_f32", y.Len(), y.Ptr, in[0].Ptr, s[0], heads, s[2], s[3], b2i(split))
	}}
}

// b2i is 1 for true, 0 for false: a kernel's int flag.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// addPositionsDevice is AddPositions' device kernel, add_positions_f32.
var addPositionsDevice = graph.DeviceKernels{Forward: func(d *graph.DeviceCall, y graph.DeviceOperand, in []graph.DeviceOperand) error {
	per := y.Shape[1] * y.Shape[2]
	return d.Elems("add_positions_f32", y.Len(), y.Ptr, in[0].Ptr, in[1].Ptr, y.Len(), per)
}}

// positionsGradDevice is the device kernel of AddPositions' gradient of the
// positions, positions_grad_f32.
var positionsGradDevice = graph.DeviceKernels{Forward: func(d *graph.DeviceCall, dpe graph.DeviceOperand, in []graph.DeviceOperand) error {
	batch := in[0].Shape[0]
	return d.Elems("positions_grad_f32", dpe.Len(), dpe.Ptr, in[0].Ptr, batch, in[0].Len()/batch, dpe.Len())
}}

// setSlotDevice is SetSlot's device kernel, set_slot_f32, the cache viewed as
// [lead, maxLen, d].
var setSlotDevice = graph.DeviceKernels{Forward: func(d *graph.DeviceCall, y graph.DeviceOperand, in []graph.DeviceOperand) error {
	lead, maxLen, dim := slotView(y.Shape)
	return d.Elems("set_slot_f32", y.Len(), y.Ptr, in[0].Ptr, in[1].Ptr, in[2].Ptr, lead, maxLen, dim)
}}

// slotGradDevice is the device kernel of SetSlot's gradients, slot_grad_f32.
func slotGradDevice(cacheGrad bool) graph.DeviceKernels {
	return graph.DeviceKernels{Forward: func(d *graph.DeviceCall, out graph.DeviceOperand, in []graph.DeviceOperand) error {
		lead, maxLen, dim := slotView(in[0].Shape)
		return d.Elems("slot_grad_f32", out.Len(), out.Ptr, in[0].Ptr, in[1].Ptr, lead, maxLen, dim, b2i(cacheGrad))
	}}
}

// slotView is a cache of shape s as [lead, maxLen, d].
func slotView(s []int) (lead, maxLen, d int) {
	n := len(s)
	lead = 1
	for _, v := range s[:n-2] {
		lead *= v
	}
	return lead, s[n-2], s[n-1]
}

// rowLossDevice are the device kernels of the rows' smoothed losses,
// smoothed_ce_fwd_f32 and smoothed_ce_bwd_f32.
func rowLossDevice(eps float64, pad int, logits bool) graph.DeviceKernels {
	return graph.DeviceKernels{
		Forward: func(d *graph.DeviceCall, stats graph.DeviceOperand, in []graph.DeviceOperand) error {
			rows := in[1].Len()
			vocab := in[0].Len() / rows
			if err := checkTargetIDs(in[1].Ints, vocab); err != nil {
				return err
			}
			return d.Rows("smoothed_ce_fwd_f32", rows, vocab, stats.Ptr, in[0].Ptr, in[1].Ptr, rows, vocab, float32(eps), pad, b2i(logits))
		},
		Backward: func(d *graph.DeviceCall, _ int, dx graph.DeviceOperand, in []graph.DeviceOperand, stats, dstats graph.DeviceOperand) error {
			rows := in[1].Len()
			vocab := in[0].Len() / rows
			return d.Rows("smoothed_ce_bwd_f32", rows, vocab, dx.Ptr, in[0].Ptr, in[1].Ptr, stats.Ptr, dstats.Ptr, rows, vocab,
				float32(eps), pad, b2i(logits))
		},
	}
}

// meanLossDevice are meanLoss's device kernels, mean_loss_fwd_f32 and
// mean_loss_bwd_f32, in one block.
func meanLossDevice(pad int) graph.DeviceKernels {
	return graph.DeviceKernels{
		Forward: func(d *graph.DeviceCall, l graph.DeviceOperand, in []graph.DeviceOperand) error {
			rows := in[1].Len()
			return d.Rows("mean_loss_fwd_f32", 1, rows, l.Ptr, in[0].Ptr, in[1].Ptr, rows, pad)
		},
		Backward: func(d *graph.DeviceCall, _ int, dstats graph.DeviceOperand, in []graph.DeviceOperand, _, dl graph.DeviceOperand) error {
			rows := in[1].Len()
			return d.Rows("mean_loss_bwd_f32", 1, rows, dstats.Ptr, dl.Ptr, in[1].Ptr, rows, pad)
		},
	}
}

// targetScoresDevice is TargetScores' device kernel, target_scores_f32.
func targetScoresDevice(pad int) graph.DeviceKernels {
	return graph.DeviceKernels{Forward: func(d *graph.DeviceCall, scores graph.DeviceOperand, in []graph.DeviceOperand) error {
		rows := in[1].Len()
		vocab := in[0].Len() / rows
		if err := checkTargetIDs(in[1].Ints, vocab); err != nil {
			return err
		}
		return d.Rows("target_scores_f32", rows, vocab, scores.Ptr, in[0].Ptr, in[1].Ptr, rows, vocab, pad)
	}}
}

// headProductDevice is the device kernel of HeadScores, HeadMix and their
// gradients: per batch entry, one batched Gemm over the heads where C's
// matrices do not interleave (C by head) and no heads are grouped, else one
// Gemm per head, those of a group adding into one matrix of C.
func headProductDevice(batch int, ms [3]headMatrix, transA, transB bool, k int) graph.DeviceKernels {
	m, n := ms[2].rows, ms[2].cols
	heads, group := ms[2].heads, ms[2].group
	batched := ms[2].layout == byHead && ms[0].group == 1 && ms[1].group == 1 && group == 1
	per := 1
	if batched {
		per = heads
	}
	return graph.DeviceKernels{Forward: func(d *graph.DeviceCall, c graph.DeviceOperand, in []graph.DeviceOperand) error {
		for bi := range batch {
			for e := 0; e < heads; e += per {
				oc, ldc := ms[2].at(bi, e*group)
				for h := e * group; h < (e+1)*group; h++ {
					oa, lda := ms[0].at(bi, h)
					ob, ldb := ms[1].at(bi, h)
					g := graph.DeviceGEMM{TransA: transA, TransB: transB, M: m, N: n, K: k, Alpha: 1, Beta: float32(min(h%group, 1)),
						A: in[0].Ptr.Add(4 * oa), LDA: lda, B: in[1].Ptr.Add(4 * ob), LDB: ldb, C: c.Ptr.Add(4 * oc), LDC: ldc, Batch: per}
					if batched {
						g.StrideA, g.StrideB, g.StrideC = headStride(ms[0]), headStride(ms[1]), headStride(ms[2])
					}
					if err := d.Gemm(g); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}}
}

// headStride is the distance between two heads' matrices of m, in elements.
func headStride(m headMatrix) int {
	o1, _ := m.at(0, 1)
	o0, _ := m.at(0, 0)
	return o1 - o0
}
