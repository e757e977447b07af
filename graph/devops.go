package graph

import (
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// The device kernels of this package's ops: launches of the kernels of
// kernels/*.cu named in each function, and matrix products.

// pointwiseDevice are the device kernels of the pointwise function name:
// NAME_fwd_f32, and NAME_bwd_f32 reading y (fromY) or x.
func pointwiseDevice(name string, fromY bool) DeviceKernels {
	fwd, bwd := deviceKernels.Kernel(name+"_fwd_f32"), deviceKernels.Kernel(name+"_bwd_f32")
	return DeviceKernels{
		Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
			return d.Launch(fwd.Elems(y.Len()).Ptr(y.Ptr).Ptr(x[0].Ptr).Int(y.Len()))
		},
		Backward: func(d *DeviceCall, _ int, dx DeviceOperand, x []DeviceOperand, y, dy DeviceOperand) error {
			v := x[0].Ptr
			if fromY {
				v = y.Ptr
			}
			return d.Launch(bwd.Elems(dx.Len()).Ptr(dx.Ptr).Ptr(v).Ptr(dy.Ptr).Int(dx.Len()))
		},
	}
}

// reluGradDevice is reluGradFromOutput's device kernel: relu_bwd_f32 with y
// for x.
var reluGradDevice = DeviceKernels{Forward: func(d *DeviceCall, dz DeviceOperand, in []DeviceOperand) error {
	return d.Launch(reluBwdF32.Elems(dz.Len()).Ptr(dz.Ptr).Ptr(in[0].Ptr).Ptr(in[1].Ptr).Int(dz.Len()))
}}

// binaryDevice are the device kernels of the binary op k with broadcasting:
// bcast_f32 and bcast_bwd_f32.
func binaryDevice(k binary) DeviceKernels {
	return DeviceKernels{
		Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
			lp, rank, n, err := broadcastLayout(d, x[0].Shape, x[1].Shape)
			if err != nil {
				return err
			}
			return d.Launch(bcastF32.Elems(n).Ptr(y.Ptr).Ptr(x[0].Ptr).Ptr(x[1].Ptr).Ptr(lp).Int(rank).Int(n).Int(int(k)))
		},
		Backward: func(d *DeviceCall, i int, dx DeviceOperand, x []DeviceOperand, _, dy DeviceOperand) error {
			lp, rank, n, err := broadcastLayout(d, x[0].Shape, x[1].Shape)
			if err != nil {
				return err
			}
			return d.Launch(bcastBwdF32.Elems(dx.Len()).Ptr(dx.Ptr).Ptr(x[0].Ptr).Ptr(x[1].Ptr).Ptr(dy.Ptr).Ptr(lp).Int(rank).Int(n).
				Int(dx.Len()).Int(int(k)).Int(i))
		},
	}
}

// broadcastDevice is broadcastOp's device kernel: the sum over the
// broadcast axes (bcast_bwd_f32 of an addition) or the repetition along
// them (permute_f32 with stride 0 there), then scale_f32 unless scale is 1.
func broadcastDevice(scale float64, sum bool) DeviceKernels {
	return DeviceKernels{Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
		var err error
		if sum {
			err = sumToDevice(d, y, x[0])
		} else {
			err = broadcastToDevice(d, y, x[0])
		}
		if err != nil || scale == 1 {
			return err
		}
		return d.Launch(scaleF32.Elems(y.Len()).Ptr(y.Ptr).Ptr(y.Ptr).F32(float32(scale)).Int(y.Len()))
	}}
}

// sumToDevice writes y, x summed over the axes along which y broadcasts to x.
func sumToDevice(d *DeviceCall, y, x DeviceOperand) error {
	lp, rank, n, err := broadcastLayout(d, x.Shape, y.Shape)
	if err != nil {
		return err
	}
	return d.Launch(bcastBwdF32.Elems(y.Len()).Ptr(y.Ptr).Ptr(x.Ptr).Ptr(x.Ptr).Ptr(x.Ptr).Ptr(lp).Int(rank).Int(n).
		Int(y.Len()).Int(int(add)).Int(1))
}

// broadcastLayout is the broadcast of shapes a and b (BroadcastLayout)
// in the node's layout buffer 0: the layout's address, its rank and the
// number of elements of the broadcast shape.
func broadcastLayout(d *DeviceCall, a, b tensor.Shape) (lp DevicePtr, rank, n int, err error) {
	layout, n, err := BroadcastLayout(a, b)
	if err != nil {
		return 0, 0, 0, err
	}
	lp, err = d.Layout(0, layout)
	return lp, len(layout) / 3, n, err
}

// broadcastToDevice writes y, x repeated along the axes along which it
// broadcasts to y.
func broadcastToDevice(d *DeviceCall, y, x DeviceOperand) error {
	layout, n, err := BroadcastLayout(x.Shape, y.Shape)
	if err != nil {
		return err
	}
	rank := len(layout) / 3
	lp, err := d.Layout(0, layout[:2*rank])
	if err != nil {
		return err
	}
	return d.Launch(permuteF32.Elems(n).Ptr(y.Ptr).Ptr(x.Ptr).Ptr(lp).Int(rank).Int(n))
}

// softmaxDevice are Softmax's device kernels: softmax_fwd_f32 with the
// mask's row strides, and softmax_bwd_f32.
func softmaxDevice(scale float64) DeviceKernels {
	return DeviceKernels{
		Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
			cols := lastDim(y.Shape)
			lead := []int{1, 1, 1}
			strides := []int{0, 0, 0}
			xs := y.Shape[:len(y.Shape)-1]
			if len(xs) > 3 {
				return errors.Errorf("softmax of %v on the device: at most 3 axes before the last", y.Shape)
			}
			copy(lead[3-len(xs):], xs)
			var mask DevicePtr
			if len(x) == 2 {
				mask = x[1].Ptr
				ms := x[1].Shape
				st := ms.CalcStrides()
				for k := range xs {
					if ms[k] > 1 {
						strides[3-len(xs)+k] = st[k]
					}
				}
			}
			rows := y.Len() / cols
			return d.Launch(softmaxFwdF32.Rows(rows, cols).Ptr(y.Ptr).Ptr(x[0].Ptr).Ptr(mask).Int(rows).Int(cols).F32(float32(scale)).
				Int(lead[1]).Int(lead[2]).Int(strides[0]).Int(strides[1]).Int(strides[2]).Int(1))
		},
		Backward: func(d *DeviceCall, _ int, dx DeviceOperand, _ []DeviceOperand, y, dy DeviceOperand) error {
			cols := lastDim(y.Shape)
			rows := y.Len() / cols
			return d.Launch(softmaxBwdF32.Rows(rows, cols).Ptr(dx.Ptr).Ptr(y.Ptr).Ptr(dy.Ptr).Int(rows).Int(cols).F32(float32(scale)))
		},
	}
}

// logSoftmaxDevice are LogSoftmax's device kernels.
var logSoftmaxDevice = DeviceKernels{
	Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
		cols := lastDim(y.Shape)
		rows := y.Len() / cols
		return d.Launch(logsoftmaxFwdF32.Rows(rows, cols).Ptr(y.Ptr).Ptr(x[0].Ptr).Int(rows).Int(cols))
	},
	Backward: func(d *DeviceCall, _ int, dx DeviceOperand, _ []DeviceOperand, y, dy DeviceOperand) error {
		cols := lastDim(y.Shape)
		rows := y.Len() / cols
		return d.Launch(logsoftmaxBwdF32.Rows(rows, cols).Ptr(dx.Ptr).Ptr(y.Ptr).Ptr(dy.Ptr).Int(rows).Int(cols))
	},
}

// reduceDevice are Sum's, Mean's and Max's device kernels over the view v.
func reduceDevice(r reduction, v view) DeviceKernels {
	scale := float32(1)
	if r == meanAxis {
		scale = float32(1 / float64(v.n))
	}
	return DeviceKernels{
		Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
			if r == maxAxis {
				return d.Launch(maxAxisF32.Elems(v.outer * v.inner).Ptr(y.Ptr).Ptr(x[0].Ptr).Int(v.outer).Int(v.n).Int(v.inner))
			}
			return d.Launch(sumAxisF32.Elems(v.outer * v.inner).Ptr(y.Ptr).Ptr(x[0].Ptr).Int(v.outer).Int(v.n).Int(v.inner).F32(scale))
		},
		Backward: func(d *DeviceCall, _ int, dx DeviceOperand, x []DeviceOperand, y, dy DeviceOperand) error {
			if r == maxAxis {
				return d.Launch(maxAxisBwdF32.Elems(v.outer * v.inner).Ptr(dx.Ptr).Ptr(x[0].Ptr).Ptr(y.Ptr).Ptr(dy.Ptr).
					Int(v.outer).Int(v.n).Int(v.inner))
			}
			return d.Launch(spreadAxisF32.Elems(dx.Len()).Ptr(dx.Ptr).Ptr(dy.Ptr).Int(v.outer).Int(v.n).Int(v.inner).F32(scale))
		},
	}
}

// copyDevice is Reshape's device kernel: y = x (scale_f32 by 1).
var copyDevice = DeviceKernels{Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
	return d.Launch(scaleF32.Elems(y.Len()).Ptr(y.Ptr).Ptr(x[0].Ptr).F32(1).Int(y.Len()))
}}

// transposeDevice is Transpose's device kernel: permute_f32.
func transposeDevice(perm []int) DeviceKernels {
	return DeviceKernels{Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
		layout, n, err := PermuteLayout(x[0].Shape, perm)
		if err != nil {
			return err
		}
		lp, err := d.Layout(0, layout)
		if err != nil {
			return err
		}
		return d.Launch(permuteF32.Elems(n).Ptr(y.Ptr).Ptr(x[0].Ptr).Ptr(lp).Int(len(perm)).Int(n))
	}}
}

// sliceDevice are Slice's device kernels over x viewed as [outer, n, inner]:
// slice_axis_f32, and place_axis_f32 into zeros.
func sliceDevice(outer, n, inner, start, size int) DeviceKernels {
	return DeviceKernels{
		Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
			return d.Launch(sliceAxisF32.Elems(y.Len()).Ptr(y.Ptr).Ptr(x[0].Ptr).Int(outer).Int(n).Int(inner).Int(start).Int(size))
		},
		Backward: func(d *DeviceCall, _ int, dx DeviceOperand, _ []DeviceOperand, _, dy DeviceOperand) error {
			if err := d.Launch(fillF32.Elems(dx.Len()).Ptr(dx.Ptr).F32(0).Int(dx.Len())); err != nil {
				return err
			}
			return d.Launch(placeAxisF32.Elems(dy.Len()).Ptr(dx.Ptr).Ptr(dy.Ptr).Int(outer).Int(n).Int(inner).Int(start).Int(size))
		},
	}
}

// concatDevice are Concat's device kernels, y viewed as [outer, n, inner]
// and input i taking sizes[i] positions of its axis from starts[i].
func concatDevice(outer, n, inner int, starts, sizes []int) DeviceKernels {
	return DeviceKernels{
		Forward: func(d *DeviceCall, y DeviceOperand, xs []DeviceOperand) error {
			for i, x := range xs {
				if err := d.Launch(placeAxisF32.Elems(x.Len()).Ptr(y.Ptr).Ptr(x.Ptr).Int(outer).Int(n).Int(inner).Int(starts[i]).Int(sizes[i])); err != nil {
					return err
				}
			}
			return nil
		},
		Backward: func(d *DeviceCall, i int, dx DeviceOperand, _ []DeviceOperand, _, dy DeviceOperand) error {
			return d.Launch(sliceAxisF32.Elems(dx.Len()).Ptr(dx.Ptr).Ptr(dy.Ptr).Int(outer).Int(n).Int(inner).Int(starts[i]).Int(sizes[i]))
		},
	}
}

// embedDevice are Embed's device kernels: embed_fwd_f32, and embed_bwd_f32
// into zeros.
func embedDevice(vocab int, scale float64) DeviceKernels {
	check := func(ids []int) error { return checkIDs(ids, vocab) }
	return DeviceKernels{
		Forward: func(d *DeviceCall, y DeviceOperand, in []DeviceOperand) error {
			if err := d.CheckInts(in[1], check); err != nil {
				return err
			}
			n, dim := in[1].Len(), lastDim(y.Shape)
			return d.Launch(embedFwdF32.Elems(n * dim).Ptr(y.Ptr).Ptr(in[0].Ptr).Ptr(in[1].Ptr).Int(n).Int(dim).Int(vocab).F32(float32(scale)))
		},
		Backward: func(d *DeviceCall, _ int, dw DeviceOperand, in []DeviceOperand, _, dy DeviceOperand) error {
			if err := d.Launch(fillF32.Elems(dw.Len()).Ptr(dw.Ptr).F32(0).Int(dw.Len())); err != nil {
				return err
			}
			n, dim := in[1].Len(), lastDim(dw.Shape)
			return d.Launch(embedBwdF32.Elems(n * dim).Ptr(dw.Ptr).Ptr(dy.Ptr).Ptr(in[1].Ptr).Int(n).Int(dim).Int(vocab).F32(float32(scale)))
		},
	}
}

// normalizeDevice are the device kernels of a normalizing op of the form
// f: rowsNormDevice's, given the sum x + r in scratch memory (add_f32)
// when f.sum.
func normalizeDevice(f normForm) DeviceKernels {
	k := rowsNormDevice(f.eps, f.center)
	if !f.sum {
		return k
	}
	var in []DeviceOperand // the sum's operands, made again at every call (calls do not overlap)
	sum := func(d *DeviceCall, x []DeviceOperand) ([]DeviceOperand, error) {
		n := x[0].Len()
		s, err := d.Scratch(3, 4*n)
		if err == nil {
			err = d.Launch(addF32.Elems(n).Ptr(s).Ptr(x[0].Ptr).Ptr(x[1].Ptr).Int(n))
		}
		in = append(append(in[:0], DeviceOperand{Shape: x[0].Shape, Ptr: s}), x[2:]...)
		return in, err
	}
	return DeviceKernels{
		Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
			in, err := sum(d, x)
			if err != nil {
				return err
			}
			return k.Forward(d, y, in)
		},
		Backward: func(d *DeviceCall, i int, dx DeviceOperand, x []DeviceOperand, y, dy DeviceOperand) error {
			in, err := sum(d, x)
			if err != nil {
				return err
			}
			return k.Backward(d, max(i-1, 0), dx, in, y, dy)
		},
	}
}

// rowsNormDevice are the device kernels of Normalize and LayerNorm:
// layernorm_fwd_f32 (the rows' means and reciprocal deviations in scratch
// memory 0 and 1; the gradients compute them again), layernorm_bwd_f32 and
// layernorm_bwd_params_f32 (scratch memory 2).
func rowsNormDevice(eps float64, center bool) DeviceKernels {
	stats := func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) (mean, rstd DevicePtr, err error) {
		cols := lastDim(x[0].Shape)
		rows := x[0].Len() / cols
		if mean, err = d.Scratch(0, 4*rows); err == nil {
			rstd, err = d.Scratch(1, 4*rows)
		}
		if err != nil {
			return 0, 0, err
		}
		var b DevicePtr
		if len(x) == 3 {
			b = x[2].Ptr
		}
		return mean, rstd, d.Launch(layernormFwdF32.Rows(rows, cols).Ptr(y.Ptr).Ptr(mean).Ptr(rstd).Ptr(x[0].Ptr).Ptr(x[1].Ptr).Ptr(b).
			Int(rows).Int(cols).F32(float32(eps)).Int(b2i(center)))
	}
	return DeviceKernels{
		Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
			_, _, err := stats(d, y, x)
			return err
		},
		Backward: func(d *DeviceCall, i int, dx DeviceOperand, x []DeviceOperand, _, dy DeviceOperand) error {
			cols := lastDim(x[0].Shape)
			rows := x[0].Len() / cols
			yp, err := d.Scratch(2, 4*x[0].Len())
			if err != nil {
				return err
			}
			mean, rstd, err := stats(d, DeviceOperand{Shape: x[0].Shape, Ptr: yp}, x[:2])
			if err != nil {
				return err
			}
			switch i {
			case 0:
				return d.Launch(layernormBwdF32.Rows(rows, cols).Ptr(dx.Ptr).Ptr(dy.Ptr).Ptr(x[0].Ptr).Ptr(x[1].Ptr).Ptr(mean).Ptr(rstd).
					Int(rows).Int(cols).Int(b2i(center)))
			case 1:
				return d.Launch(layernormBwdPF32.Elems(cols).Ptr(dx.Ptr).Ptr(0).Ptr(dy.Ptr).Ptr(x[0].Ptr).Ptr(mean).Ptr(rstd).Int(rows).Int(cols))
			}
			return d.Launch(layernormBwdPF32.Elems(cols).Ptr(yp).Ptr(dx.Ptr).Ptr(dy.Ptr).Ptr(x[0].Ptr).Ptr(mean).Ptr(rstd).Int(rows).Int(cols))
		},
	}
}

// b2i is 1 for true, 0 for false: a kernel's int flag.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// productDevice is the device kernel of MatMul, Affine and AffineReLU: the
// bias repeated into y (permute_f32), one Gemm adding x·op(w) to it, and
// relu_fwd_f32 in place.
func productDevice(pr product, out int) DeviceKernels {
	return DeviceKernels{Forward: func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error {
		in := lastDim(x[0].Shape)
		rows := x[0].Len() / in
		beta := float32(0)
		if len(x) == 3 {
			if err := broadcastToDevice(d, DeviceOperand{Shape: tensor.Shape{rows, out}, Ptr: y.Ptr}, x[2]); err != nil {
				return err
			}
			beta = 1
		}
		ldb := out
		if pr.transW {
			ldb = in
		}
		err := d.Gemm(DeviceGEMM{M: rows, N: out, K: in, Alpha: 1, Beta: beta, A: x[0].Ptr, LDA: in,
			B: x[1].Ptr, LDB: ldb, TransB: pr.transW, C: y.Ptr, LDC: out, Batch: 1})
		if err != nil || !pr.relu {
			return err
		}
		return d.Launch(reluFwdF32.Elems(y.Len()).Ptr(y.Ptr).Ptr(y.Ptr).Int(y.Len()))
	}}
}

// matMulGradWDevice is matMulGradW's device kernel: dw = xᵀ·dy, or dyᵀ·x
// for transW.
func matMulGradWDevice(transW bool, in, out int) DeviceKernels {
	return DeviceKernels{Forward: func(d *DeviceCall, dw DeviceOperand, t []DeviceOperand) error {
		rows := t[0].Len() / in
		g := DeviceGEMM{TransA: true, M: in, N: out, K: rows, Alpha: 1, A: t[0].Ptr, LDA: in, B: t[1].Ptr, LDB: out,
			C: dw.Ptr, LDC: out, Batch: 1}
		if transW {
			g = DeviceGEMM{TransA: true, M: out, N: in, K: rows, Alpha: 1, A: t[1].Ptr, LDA: out, B: t[0].Ptr, LDB: in,
				C: dw.Ptr, LDC: in, Batch: 1}
		}
		return d.Gemm(g)
	}}
}

// maskDevice is the device kernel of a dropout mask: drawn on the device by
// dropout_mask from the run's seed(), a per-run word (DeviceCall.PerRun),
// the CPU's mask of the same seed (drawMask), so that no mask is copied to
// the device.
func maskDevice(seed func() uint64, threshold uint64) DeviceKernels {
	return DeviceKernels{Forward: func(d *DeviceCall, y DeviceOperand, in []DeviceOperand) error {
		s, err := d.PerRun(0, seed)
		if err != nil {
			return err
		}
		n := in[0].Len()
		return d.Launch(dropoutMaskK.Elems((n + 64*maskBlock - 1) / (64 * maskBlock)).Ptr(y.Ptr).Ptr(s).U64(threshold).Int(n))
	}}
}

// batchedDevice is BatchedMatMul's device kernel, and its gradients': over
// the batch axes full, to which a's, b's and c's (batches) broadcast, one
// strided batched Gemm when none broadcasts, else one Gemm per entry of
// full, those landing on one matrix of c adding up.
func batchedDevice(full tensor.Shape, batches [3]tensor.Shape, transA, transB bool, m, k, n int) DeviceKernels {
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	g := DeviceGEMM{TransA: transA, TransB: transB, M: m, N: n, K: k, Alpha: 1, LDA: lda, LDB: ldb, LDC: n, Batch: 1}
	return DeviceKernels{Forward: func(d *DeviceCall, c DeviceOperand, in []DeviceOperand) error {
		entries := max(full.TotalSize(), 1)
		if batches[0].Eq(full) && batches[1].Eq(full) && batches[2].Eq(full) {
			g := g
			g.A, g.B, g.C, g.Batch = in[0].Ptr, in[1].Ptr, c.Ptr, entries
			g.StrideA, g.StrideB, g.StrideC = m*k, k*n, m*n
			return d.Gemm(g)
		}
		if err := d.Launch(fillF32.Elems(c.Len()).Ptr(c.Ptr).F32(0).Int(c.Len())); err != nil {
			return err
		}
		g := g
		g.Beta = 1
		for e := range entries {
			ia, ib, ic := entryOf(e, full, batches[0]), entryOf(e, full, batches[1]), entryOf(e, full, batches[2])
			g.A, g.B, g.C = in[0].Ptr.Add(4*ia*m*k), in[1].Ptr.Add(4*ib*k*n), c.Ptr.Add(4*ic*m*n)
			if err := d.Gemm(g); err != nil {
				return err
			}
		}
		return nil
	}}
}

// entryOf is the entry of batch axes s (broadcast to full, aligned at the
// end) under full's entry e.
func entryOf(e int, full, s tensor.Shape) int {
	at, stride := 0, 1
	for i := 1; i <= len(full); i++ {
		idx := e % full[len(full)-i]
		e /= full[len(full)-i]
		if i <= len(s) && s[len(s)-i] > 1 {
			at += idx * stride
			stride *= s[len(s)-i]
		}
	}
	return at
}

// The handles of the kernels above that no other file launches.
var (
	reluBwdF32       = deviceKernels.Kernel("relu_bwd_f32")
	bcastF32         = deviceKernels.Kernel("bcast_f32")
	softmaxFwdF32    = deviceKernels.Kernel("softmax_fwd_f32")
	softmaxBwdF32    = deviceKernels.Kernel("softmax_bwd_f32")
	logsoftmaxFwdF32 = deviceKernels.Kernel("logsoftmax_fwd_f32")
	logsoftmaxBwdF32 = deviceKernels.Kernel("logsoftmax_bwd_f32")
	maxAxisF32       = deviceKernels.Kernel("max_axis_f32")
	maxAxisBwdF32    = deviceKernels.Kernel("max_axis_bwd_f32")
	sumAxisF32       = deviceKernels.Kernel("sum_axis_f32")
	spreadAxisF32    = deviceKernels.Kernel("spread_axis_f32")
	embedFwdF32      = deviceKernels.Kernel("embed_fwd_f32")
	embedBwdF32      = deviceKernels.Kernel("embed_bwd_f32")
	dropoutMaskK     = deviceKernels.Kernel("dropout_mask")
)
