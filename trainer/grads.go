package trainer

import (
	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/trainer/dist"
)

// An update's gradients lie where the runtime runs its programs, on the
// host or on a device (graph.Gradients): a program's own for one batch on
// one rank, or sums over batches (graph.GradSums). The trainer reads only
// their sum of squares and hands them to Adam; on a device only the loss
// and the sum of squares cross to the host.

// accumulator is t.acc, zeroed, made on first use: sums of the gradients
// of every parameter, Σ_b n_b·∇L_b over the batches b of an update.
func (t *Trainer) accumulator() (*graph.GradSums, error) {
	if t.acc == nil {
		s, err := t.rt.NewGradSums(t.params, t.params.Names())
		if err != nil {
			return nil, err
		}
		t.acc = s
		return s, nil // made zero
	}
	return t.acc, t.acc.Zero()
}

// release brings what a device updated to the host (toHost), and frees
// the accumulator: at the end of a run.
func (t *Trainer) release() error {
	err := t.toHost()
	if t.acc != nil {
		if cerr := t.acc.Close(); err == nil {
			err = cerr
		}
		t.acc = nil
	}
	return err
}

// toHost copies the parameters and Adam's moments that Adam updated on a
// device to the host (nothing on the CPU): every reader of them on the
// host (checkpoints, the ranks' comparison, the end of a run) calls it
// first. Programs of the runtime read the device's copies.
func (t *Trainer) toHost() error {
	m, v := t.adam.Moments()
	return errors.Wrapf(t.rt.Download(t.params, m, v), "step %d", t.adam.Step)
}

// allReduce sums the accumulated gradients and tail over the ranks of w,
// in place, through the host (on a device: down, summed, and up again; no
// NCCL, see docs/cuda.md).
func (t *Trainer) allReduce(w *dist.World, tail []float64) error {
	var err error
	if t.flat, err = t.acc.AppendHost(truncated(t.flat)); err != nil {
		return err
	}
	if t.flat, err = elemsOf(t.params.Dtype()).sumWithTail(w, t.flat, tail); err != nil {
		return err
	}
	return t.acc.SetHost(t.flat)
}

// truncated is buf ([]float32 or []float64, or nil) emptied, its memory kept.
func truncated(buf any) any {
	switch b := buf.(type) {
	case []float32:
		return b[:0]
	case []float64:
		return b[:0]
	}
	return nil
}
