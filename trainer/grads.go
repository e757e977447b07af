package trainer

import (
	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/trainer/dist"
)

// An update's gradients lie where the runtime runs its programs: on the
// host for the CPU, where the trainer reads them (hostGrads, hostSums), or
// on the device, where they stay with the parameters and Adam's moments
// (deviceGrads, deviceSums), and only the loss and the sum of squares
// cross to the host.

// stepGrads are the gradients of an update, wherever they lie.
type stepGrads interface {
	// sumSquares is Σ g² over all of them, the same bits for the same
	// gradients.
	sumSquares() (float64, error)
	// apply is Adam's step with learning rate lr and every gradient
	// multiplied by scale.
	apply(a *Adam, params *graph.Params, lr, scale float64) error
}

// accumulator sums Σ_b n_b·∇L_b over the batches b of an update.
type accumulator interface {
	zero() error
	add(p *graph.Program, n float64) error
	grads() stepGrads
	// allReduce sums the sums and tail over the ranks of w, in place.
	allReduce(w *dist.World, tail []float64) error
	close() error
}

// onDevice says the runtime runs the programs on a device.
func (t *Trainer) onDevice() bool { return t.rt.Device() != graph.DeviceCPU }

// own are the gradients of p's last run, where they lie.
func (t *Trainer) own(p *graph.Program) stepGrads {
	if t.onDevice() {
		return deviceGrads{g: p, names: p.ParamNames()}
	}
	return hostGrads{names: t.params.Names(), g: programGrads(p)}
}

// accumulator is t.acc, zeroed, made on first use.
func (t *Trainer) accumulator() (accumulator, error) {
	if t.acc == nil {
		if t.onDevice() {
			s, err := t.rt.NewGradSums(t.params, t.params.Names())
			if err != nil {
				return nil, err
			}
			t.acc = &deviceSums{s: s, names: t.params.Names()}
			return t.acc, nil // made zero
		}
		t.acc = newHostSums(t.params)
	}
	return t.acc, t.acc.zero()
}

// release brings what the device updated to the host (toHost), and frees
// the accumulator: at the end of a run.
func (t *Trainer) release() error {
	err := t.toHost()
	if t.acc != nil {
		if cerr := t.acc.close(); err == nil {
			err = cerr
		}
		t.acc = nil
	}
	return err
}

// toHost copies the parameters and Adam's moments that Adam updated on the
// device to the host (nothing on the CPU): every reader of them on the
// host (checkpoints, the ranks' comparison, the end of a run) calls it
// first. Programs of the runtime read the device's copies.
func (t *Trainer) toHost() error {
	m, v := t.adam.Moments()
	return errors.Wrapf(t.rt.Download(t.params, m, v), "step %d", t.adam.Step)
}

// hostGrads are gradients on the host by parameter name, whose squares
// sum in the order of names in float64.
type hostGrads struct {
	names []string
	g     map[string]*tensor.Dense
}

func (h hostGrads) sumSquares() (float64, error) {
	var sq float64
	for _, name := range h.names {
		if g, ok := h.g[name]; ok {
			sq += elemsOf(g.Dtype()).sumSquares(g)
		}
	}
	return sq, nil
}

func (h hostGrads) apply(a *Adam, params *graph.Params, lr, scale float64) error {
	return a.UpdateScaled(params, h.g, lr, scale)
}

// hostSums accumulate on the host, with flat the buffer of their
// all-reduce ([]float32 or []float64).
type hostSums struct {
	hostGrads
	dt   tensor.Dtype
	flat any
}

// newHostSums are zero sums of the gradients of every parameter of params.
func newHostSums(params *graph.Params) *hostSums {
	h := &hostSums{hostGrads: hostGrads{names: params.Names(), g: map[string]*tensor.Dense{}}, dt: params.Dtype()}
	for _, name := range h.names {
		h.g[name] = tensor.New(tensor.Of(h.dt), tensor.WithShape(params.Shape(name).Clone()...))
	}
	return h
}

func (h *hostSums) zero() error {
	for _, g := range h.g {
		g.Zero()
	}
	return nil
}

func (h *hostSums) add(p *graph.Program, n float64) error {
	for _, name := range p.ParamNames() {
		acc, ok := h.g[name]
		if !ok {
			return errors.Errorf("adding gradients: no sum of %s", name)
		}
		elemsOf(h.dt).addScaled(acc, p.Grad(name), n)
	}
	return nil
}

func (h *hostSums) grads() stepGrads { return h.hostGrads }

func (h *hostSums) allReduce(w *dist.World, tail []float64) error {
	var err error
	h.flat, err = elemsOf(h.dt).allReduce(w, h.flat, h.names, h.g, tail)
	return err
}

func (h *hostSums) close() error { return nil }

// deviceGrads are gradients on the runtime's device: a program's own
// (graph.Program) or sums over batches (graph.GradSums), of names.
type deviceGrads struct {
	g interface {
		deviceAdam
		SumSquares() (float64, error)
	}
	names []string
}

func (d deviceGrads) sumSquares() (float64, error) { return d.g.SumSquares() }

func (d deviceGrads) apply(a *Adam, params *graph.Params, lr, scale float64) error {
	return a.updateOn(d.g, params, d.names, lr, scale)
}

// deviceSums accumulate on the runtime's device, with flat the host
// buffer of their all-reduce.
type deviceSums struct {
	s     *graph.GradSums
	names []string
	flat  []float32
}

func (d *deviceSums) zero() error                           { return d.s.Zero() }
func (d *deviceSums) add(p *graph.Program, n float64) error { return d.s.Add(p, n) }
func (d *deviceSums) grads() stepGrads                      { return deviceGrads{g: d.s, names: d.names} }
func (d *deviceSums) close() error                          { return d.s.Close() }

// allReduce sums over the ranks on the host, as the host's sums do: the
// sums come down from the device, are all-reduced with the tail, and go
// back up (no NCCL; see docs/cuda.md).
func (d *deviceSums) allReduce(w *dist.World, tail []float64) error {
	var err error
	if d.flat, err = d.s.AppendHost(d.flat[:0]); err != nil {
		return err
	}
	if d.flat, err = sumWithTail(w.SumF32, d.flat, tail); err != nil {
		return err
	}
	return d.s.SetHost(d.flat)
}
