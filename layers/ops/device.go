package ops

import (
	"embed"

	"github.com/transformer-go/transformer/graph"
)

//go:generate sh ../../graph/cuda/ptx.sh kernels

// kernelFiles are the CUDA C of this package's device kernels
// (kernels/*.cu) and the PTX nvcc makes of each (graph/cuda/ptx.sh).
//
//go:embed kernels/*.cu kernels/*.ptx
var kernelFiles embed.FS

// deviceKernels is this package's device module, registered as a user's
// package of ops would register its own.
var deviceKernels = graph.MustRegisterDeviceModule("github.com/transformer-go/transformer/layers/ops", kernelFiles, "kernels")

// The handles of this package's kernels.
var (
	headsF32         = deviceKernels.Kernel("heads_f32")
	addPositionsF32  = deviceKernels.Kernel("add_positions_f32")
	positionsGradF32 = deviceKernels.Kernel("positions_grad_f32")
	setSlotF32       = deviceKernels.Kernel("set_slot_f32")
	slotGradF32      = deviceKernels.Kernel("slot_grad_f32")
	smoothedCEFwd    = deviceKernels.Kernel("smoothed_ce_fwd_f32")
	smoothedCEBwd    = deviceKernels.Kernel("smoothed_ce_bwd_f32")
	meanLossFwd      = deviceKernels.Kernel("mean_loss_fwd_f32")
	meanLossBwd      = deviceKernels.Kernel("mean_loss_bwd_f32")
	targetScoresF32  = deviceKernels.Kernel("target_scores_f32")
	idsMaskF32       = deviceKernels.Kernel("ids_mask_f32")
)

// The device kernels of this package's ops (graph.DeviceKernels): launches
// of the kernels named in each.

// headsDevice is SplitHeads' (split) or MergeHeads' device kernel, heads_f32.
func headsDevice(heads int, split bool) graph.DeviceKernels {
	return graph.DeviceKernels{Forward: func(d *graph.DeviceCall, y graph.DeviceOperand, in []graph.DeviceOperand) error {
		s := y.Shape
		if !split {
			s = in[0].Shape
		}
		return d.Launch(headsF32.Elems(y.Len()).Ptr(y.Ptr).Ptr(in[0].Ptr).Int(s[0]).Int(heads).Int(s[2]).Int(s[3]).Int(b2i(split)))
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
	return d.Launch(addPositionsF32.Elems(y.Len()).Ptr(y.Ptr).Ptr(in[0].Ptr).Ptr(in[1].Ptr).Int(y.Len()).Int(per))
}}

// positionsGradDevice is the device kernel of AddPositions' gradient of the
// positions, positions_grad_f32.
var positionsGradDevice = graph.DeviceKernels{Forward: func(d *graph.DeviceCall, dpe graph.DeviceOperand, in []graph.DeviceOperand) error {
	batch := in[0].Shape[0]
	return d.Launch(positionsGradF32.Elems(dpe.Len()).Ptr(dpe.Ptr).Ptr(in[0].Ptr).Int(batch).Int(in[0].Len() / batch).Int(dpe.Len()))
}}

// setSlotDevice is SetSlot's device kernel, set_slot_f32, the cache viewed as
// [lead, maxLen, d].
var setSlotDevice = graph.DeviceKernels{Forward: func(d *graph.DeviceCall, y graph.DeviceOperand, in []graph.DeviceOperand) error {
	lead, maxLen, dim := slotView(y.Shape)
	return d.Launch(setSlotF32.Elems(y.Len()).Ptr(y.Ptr).Ptr(in[0].Ptr).Ptr(in[1].Ptr).Ptr(in[2].Ptr).Int(lead).Int(maxLen).Int(dim))
}}

// slotGradDevice is the device kernel of SetSlot's gradients, slot_grad_f32.
func slotGradDevice(cacheGrad bool) graph.DeviceKernels {
	return graph.DeviceKernels{Forward: func(d *graph.DeviceCall, out graph.DeviceOperand, in []graph.DeviceOperand) error {
		lead, maxLen, dim := slotView(in[0].Shape)
		return d.Launch(slotGradF32.Elems(out.Len()).Ptr(out.Ptr).Ptr(in[0].Ptr).Ptr(in[1].Ptr).Int(lead).Int(maxLen).Int(dim).Int(b2i(cacheGrad)))
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
func rowLossDevice(eps float64, pad int, logits bool, vocab int) graph.DeviceKernels {
	check := func(ids []int) error { return checkTargetIDs(ids, vocab) }
	return graph.DeviceKernels{
		Forward: func(d *graph.DeviceCall, stats graph.DeviceOperand, in []graph.DeviceOperand) error {
			rows := in[1].Len()
			if err := d.CheckInts(in[1], check); err != nil {
				return err
			}
			return d.Launch(smoothedCEFwd.Rows(rows, vocab).Ptr(stats.Ptr).Ptr(in[0].Ptr).Ptr(in[1].Ptr).Int(rows).Int(vocab).
				F32(float32(eps)).Int(pad).Int(b2i(logits)))
		},
		Backward: func(d *graph.DeviceCall, _ int, dx graph.DeviceOperand, in []graph.DeviceOperand, stats, dstats graph.DeviceOperand) error {
			rows := in[1].Len()
			return d.Launch(smoothedCEBwd.Rows(rows, vocab).Ptr(dx.Ptr).Ptr(in[0].Ptr).Ptr(in[1].Ptr).Ptr(stats.Ptr).Ptr(dstats.Ptr).
				Int(rows).Int(vocab).F32(float32(eps)).Int(pad).Int(b2i(logits)))
		},
	}
}

// meanLossDevice are meanLoss's device kernels, mean_loss_fwd_f32 and
// mean_loss_bwd_f32, in one block.
func meanLossDevice(pad int) graph.DeviceKernels {
	return graph.DeviceKernels{
		Forward: func(d *graph.DeviceCall, l graph.DeviceOperand, in []graph.DeviceOperand) error {
			rows := in[1].Len()
			return d.Launch(meanLossFwd.Rows(1, rows).Ptr(l.Ptr).Ptr(in[0].Ptr).Ptr(in[1].Ptr).Int(rows).Int(pad))
		},
		Backward: func(d *graph.DeviceCall, _ int, dstats graph.DeviceOperand, in []graph.DeviceOperand, _, dl graph.DeviceOperand) error {
			rows := in[1].Len()
			return d.Launch(meanLossBwd.Rows(1, rows).Ptr(dstats.Ptr).Ptr(dl.Ptr).Ptr(in[1].Ptr).Int(rows).Int(pad))
		},
	}
}

// targetScoresDevice is TargetScores' device kernel, target_scores_f32.
func targetScoresDevice(pad, vocab int) graph.DeviceKernels {
	check := func(ids []int) error { return checkTargetIDs(ids, vocab) }
	return graph.DeviceKernels{Forward: func(d *graph.DeviceCall, scores graph.DeviceOperand, in []graph.DeviceOperand) error {
		rows := in[1].Len()
		if err := d.CheckInts(in[1], check); err != nil {
			return err
		}
		return d.Launch(targetScoresF32.Rows(rows, vocab).Ptr(scores.Ptr).Ptr(in[0].Ptr).Ptr(in[1].Ptr).Int(rows).Int(vocab).Int(pad))
	}}
}

// headProductDevice is the device kernel of HeadScores, HeadMix and their
// gradients: batched products of two levels, the batch entries and the
// heads, whose count does not depend on the batch. With grouped heads
// (grouped-query attention's keys and values), the product's heads h are
// taken as h = kv·G + j, G the largest group: for each j, one product over
// the entries and kv reads every operand at a stride of heads, and an
// output of fewer heads (a gradient of grouped keys or values) adds the
// products of its group, j by j, as the CPU's kernel adds them in order.
func headProductDevice(batch int, ms [3]headMatrix, transA, transB bool, k int) graph.DeviceKernels {
	m, n := ms[2].rows, ms[2].cols
	group := max(ms[0].group, ms[1].group, ms[2].group)
	heads := ms[2].heads * ms[2].group / group
	return graph.DeviceKernels{Forward: func(d *graph.DeviceCall, c graph.DeviceOperand, in []graph.DeviceOperand) error {
		for j := range group {
			oa, lda, ia, ba := ms[0].strides(j, group)
			ob, ldb, ib, bb := ms[1].strides(j, group)
			oc, ldc, ic, bc := ms[2].strides(j, group)
			err := d.Gemm(graph.DeviceGEMM{TransA: transA, TransB: transB, M: m, N: n, K: k, Alpha: 1, Beta: float32(min(j%ms[2].group, 1)),
				A: in[0].Ptr.Add(4 * oa), LDA: lda, B: in[1].Ptr.Add(4 * ob), LDB: ldb, C: c.Ptr.Add(4 * oc), LDC: ldc,
				Batch: heads, StrideA: ia, StrideB: ib, StrideC: ic, Outer: batch, OuterA: ba, OuterB: bb, OuterC: bc})
			if err != nil {
				return err
			}
		}
		return nil
	}}
}

// strides are where the product's heads h = kv·group + j read m: the
// offset and leading dimension of the first matrix (entry 0, kv 0), the
// distance from one kv to the next, and from one batch entry to the next,
// in elements.
func (m headMatrix) strides(j, group int) (off, ld, head, entry int) {
	off, ld = m.at(0, j)
	next, _ := m.at(0, group+j)
	b1, _ := m.at(1, j)
	return off, ld, next - off, b1 - off
}
