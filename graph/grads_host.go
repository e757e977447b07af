package graph

import (
	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph/internal/vadam"
)

// The host's gradients: tensors of the parameters' element type, summed in
// float64 for their squares, and Adam's step on every core (vadam).

// adamChunk is the number of elements a worker updates at a time.
const adamChunk = 1 << 15

func (t *hostTarget) adam(params, m, v *Params, g gradSet, s AdamStep) error {
	names := g.names
	if g.host == nil && len(names) > 0 {
		return errors.New("the gradients lie on a device, the runtime runs on the CPU")
	}
	if err := checkAdam(params, m, v, g); err != nil {
		return err
	}
	c := s.consts()
	var jobs []func()
	for i, name := range names {
		k := vadam.Step{Beta1: s.Beta1, Beta2: s.Beta2, Scale: s.Scale, Keep: 1, Step: c.step, RC2: c.rc2, Eps: s.Eps}
		theta := params.Value(name)
		if decays(len(theta.Shape())) {
			k.Keep = c.keep
		}
		var err error
		if jobs, err = adamJobs(jobs, theta, g.host[i], m.Value(name), v.Value(name), k); err != nil {
			return errors.Wrap(err, name)
		}
	}
	parallelJobs(jobs)
	for _, store := range []*Params{params, m, v} {
		store.Updated(names...)
	}
	return nil
}

// adamJobs appends to jobs Adam's step k of theta, chunk by chunk.
func adamJobs(jobs []func(), theta, g, m, v *tensor.Dense, k vadam.Step) ([]func(), error) {
	if theta.Dtype() == tensor.Float32 {
		return typedAdamJobs(jobs, theta, g, m, v, k, vadam.Update32)
	}
	return typedAdamJobs(jobs, theta, g, m, v, k, vadam.Update64)
}

// typedAdamJobs is adamJobs for tensors of T, updated by update.
func typedAdamJobs[T float32 | float64](jobs []func(), theta, g, m, v *tensor.Dense, k vadam.Step, update func(theta, g, m, v []T, s vadam.Step)) ([]func(), error) {
	th, ok0 := theta.Data().([]T)
	gs, ok1 := g.Data().([]T)
	ms, ok2 := m.Data().([]T)
	vs, ok3 := v.Data().([]T)
	if !ok0 || !ok1 || !ok2 || !ok3 {
		return nil, errors.Errorf("a parameter of %v with a gradient of %v and moments of %v", theta.Dtype(), g.Dtype(), m.Dtype())
	}
	return chunkJobs(jobs, len(th), func(lo, hi int) { update(th[lo:hi], gs[lo:hi], ms[lo:hi], vs[lo:hi], k) }), nil
}

// chunkJobs appends to jobs one call of f per chunk of [0, n).
func chunkJobs(jobs []func(), n int, f func(lo, hi int)) []func() {
	for lo := 0; lo < n; lo += adamChunk {
		hi := min(lo+adamChunk, n)
		jobs = append(jobs, func() { f(lo, hi) })
	}
	return jobs
}

// parallelJobs runs the jobs on every core.
func parallelJobs(jobs []func()) {
	ParallelFor(len(jobs), adamChunk, func(lo, hi int) {
		for _, j := range jobs[lo:hi] {
			j()
		}
	})
}

func (t *hostTarget) sumSquares(g gradSet) (float64, error) {
	var sq float64
	for _, d := range g.host {
		switch x := d.Data().(type) {
		case []float32:
			for _, v := range x {
				sq += float64(v) * float64(v)
			}
		case []float64:
			for _, v := range x {
				sq += v * v
			}
		}
	}
	return sq, nil
}

// hostSums are GradSums on the host; at is each sum's place in g.
type hostSums struct {
	g  gradSet
	at map[string]int
}

func (t *hostTarget) newSums(params *Params, names []string) (sums, error) {
	s := &hostSums{g: gradSet{names: names}, at: make(map[string]int, len(names))}
	for i, name := range names {
		s.at[name] = i
		s.g.host = append(s.g.host, tensor.New(tensor.Of(params.Dtype()), tensor.WithShape(params.Shape(name).Clone()...)))
	}
	return s, nil
}

func (s *hostSums) zero() error {
	for _, g := range s.g.host {
		g.Zero()
	}
	return nil
}

func (s *hostSums) add(g gradSet, scale float64) error {
	for i, name := range g.names {
		j, ok := s.at[name]
		if !ok {
			return errors.Errorf("no sum of %s", name)
		}
		if err := addScaled(s.g.host[j], g.host[i], scale); err != nil {
			return errors.Wrap(err, name)
		}
	}
	return nil
}

// addScaled adds n·g to acc.
func addScaled(acc, g *tensor.Dense, n float64) error {
	switch a := acc.Data().(type) {
	case []float32:
		return typedAddScaled(acc, g, a, float32(n))
	case []float64:
		return typedAddScaled(acc, g, a, n)
	}
	return nil
}

// typedAddScaled is addScaled for a sum acc of T, whose data is a: n·g in
// T, added element by element.
func typedAddScaled[T float32 | float64](acc, g *tensor.Dense, a []T, n T) error {
	x, ok := g.Data().([]T)
	if !ok || len(x) != len(a) {
		return errors.Errorf("a gradient of %v %v added to a sum of %v %v", g.Dtype(), g.Shape(), acc.Dtype(), acc.Shape())
	}
	for i, v := range x {
		a[i] += n * v
	}
	return nil
}

func (s *hostSums) gradSet() gradSet { return s.g }

func (s *hostSums) appendHost(buf any) (any, error) {
	for _, g := range s.g.host {
		switch x := g.Data().(type) {
		case []float32:
			b, _ := buf.([]float32)
			buf = append(b, x...)
		case []float64:
			b, _ := buf.([]float64)
			buf = append(b, x...)
		}
	}
	return buf, nil
}

func (s *hostSums) setHost(buf any) error {
	off := 0
	for _, g := range s.g.host {
		switch x := g.Data().(type) {
		case []float32:
			b, ok := buf.([]float32)
			if !ok || len(b)-off < len(x) {
				return errors.Errorf("%T of %d values for sums of float32", buf, lenOf(buf))
			}
			off += copy(x, b[off:])
		case []float64:
			b, ok := buf.([]float64)
			if !ok || len(b)-off < len(x) {
				return errors.Errorf("%T of %d values for sums of float64", buf, lenOf(buf))
			}
			off += copy(x, b[off:])
		}
	}
	return nil
}

// lenOf is the length of a []float32 or []float64.
func lenOf(buf any) int {
	switch b := buf.(type) {
	case []float32:
		return len(b)
	case []float64:
		return len(b)
	}
	return 0
}

func (s *hostSums) close() error { return nil }
