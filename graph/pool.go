package graph

import "gorgonia.org/tensor"

// pool holds the backing arrays of tensors that programs no longer use, so
// that the next program reuses them instead of allocating (fresh memory is
// slow to touch, and a model's activations are large).
type pool struct {
	f32 [][]float32
	f64 [][]float64
}

// take returns a tensor of shape s and type dt, on the smallest pooled array
// that is large enough but not more than a quarter larger (so a small tensor
// never takes a large array that a large tensor will need), or newly
// allocated. A nil pool always allocates.
func (p *pool) take(dt tensor.Dtype, s tensor.Shape) *tensor.Dense {
	n := s.TotalSize()
	if p != nil {
		switch dt {
		case tensor.Float32:
			if a, ok := takeFrom(&p.f32, n); ok {
				return tensor.New(tensor.WithShape(s.Clone()...), tensor.WithBacking(a))
			}
		case tensor.Float64:
			if a, ok := takeFrom(&p.f64, n); ok {
				return tensor.New(tensor.WithShape(s.Clone()...), tensor.WithBacking(a))
			}
		}
	}
	return tensor.New(tensor.Of(dt), tensor.WithShape(s.Clone()...))
}

// put gives t's array to the pool; t must not be used afterwards.
func (p *pool) put(t *tensor.Dense) {
	switch d := t.Data().(type) {
	case []float32:
		p.f32 = append(p.f32, d[:cap(d)])
	case []float64:
		p.f64 = append(p.f64, d[:cap(d)])
	}
}

// takeFrom removes the smallest array of n to 5n/4 elements from free and
// returns its first n elements.
func takeFrom[T float](free *[][]T, n int) ([]T, bool) {
	best := -1
	for i, a := range *free {
		if len(a) >= n && len(a) <= n+n/4 && (best < 0 || len(a) < len((*free)[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil, false
	}
	a := (*free)[best]
	(*free)[best] = (*free)[len(*free)-1]
	*free = (*free)[:len(*free)-1]
	return a[:n], true
}
