package graph

import (
	G "gorgonia.org/gorgonia"
)

// The Scope's op methods: each calls the op of the same name and records its
// error in the scope.

// MatMul is MatMul recorded in s. When w is a parameter, the product
// reads the copy of it packed for the GEMM that its program's runtime keeps
// while w is unchanged (see Runtime).
func (s *Scope) MatMul(x, w *G.Node, transW bool) *G.Node {
	return s.do(func() (*G.Node, error) { return product{transW: transW, wp: s.weight(w)}.apply(x, w, nil) }, x, w)
}

// Affine is Affine recorded in s, w packed as for MatMul.
func (s *Scope) Affine(x, w, b *G.Node, transW bool) *G.Node {
	return s.do(func() (*G.Node, error) { return product{transW: transW, wp: s.weight(w)}.apply(x, w, b) }, x, w, b)
}

// AffineReLU is AffineReLU recorded in s, w packed as for MatMul.
func (s *Scope) AffineReLU(x, w, b *G.Node, transW bool) *G.Node {
	return s.do(func() (*G.Node, error) {
		return product{transW: transW, relu: true, wp: s.weight(w)}.apply(x, w, b)
	}, x, w, b)
}

// weight is w's parameter, whose packed copies a product reads, or nil if
// w is not a parameter of s. Compile hands it its runtime's copies.
func (s *Scope) weight(w *G.Node) *param {
	if w == nil || s.b.nodes[w.Name()] != w {
		return nil
	}
	v := s.b.params.Value(w.Name())
	if v == nil {
		return nil
	}
	wp := &param{value: v, version: s.b.params.versions[w.Name()]}
	s.b.weights = append(s.b.weights, wp)
	return wp
}

// AddBias is AddBias recorded in s.
func (s *Scope) AddBias(x, b *G.Node) *G.Node {
	return s.do(func() (*G.Node, error) { return AddBias(x, b) }, x, b)
}

// Add is Add recorded in s.
func (s *Scope) Add(a, b *G.Node) *G.Node {
	return s.do(func() (*G.Node, error) { return Add(a, b) }, a, b)
}

// Sub is Sub recorded in s.
func (s *Scope) Sub(a, b *G.Node) *G.Node {
	return s.do(func() (*G.Node, error) { return Sub(a, b) }, a, b)
}

// Mul is Mul recorded in s.
func (s *Scope) Mul(a, b *G.Node) *G.Node {
	return s.do(func() (*G.Node, error) { return Mul(a, b) }, a, b)
}

// Div is Div recorded in s.
func (s *Scope) Div(a, b *G.Node) *G.Node {
	return s.do(func() (*G.Node, error) { return Div(a, b) }, a, b)
}

// Exp is Exp recorded in s.
func (s *Scope) Exp(x *G.Node) *G.Node { return s.do(func() (*G.Node, error) { return Exp(x) }, x) }

// Log is Log recorded in s.
func (s *Scope) Log(x *G.Node) *G.Node { return s.do(func() (*G.Node, error) { return Log(x) }, x) }

// Sqrt is Sqrt recorded in s.
func (s *Scope) Sqrt(x *G.Node) *G.Node { return s.do(func() (*G.Node, error) { return Sqrt(x) }, x) }

// Tanh is Tanh recorded in s.
func (s *Scope) Tanh(x *G.Node) *G.Node { return s.do(func() (*G.Node, error) { return Tanh(x) }, x) }

// Sigmoid is Sigmoid recorded in s.
func (s *Scope) Sigmoid(x *G.Node) *G.Node {
	return s.do(func() (*G.Node, error) { return Sigmoid(x) }, x)
}

// SiLU is SiLU recorded in s.
func (s *Scope) SiLU(x *G.Node) *G.Node { return s.do(func() (*G.Node, error) { return SiLU(x) }, x) }

// GELU is GELU recorded in s.
func (s *Scope) GELU(x *G.Node) *G.Node { return s.do(func() (*G.Node, error) { return GELU(x) }, x) }

// Reshape is Reshape recorded in s.
func (s *Scope) Reshape(x *G.Node, dims ...int) *G.Node {
	return s.do(func() (*G.Node, error) { return Reshape(x, dims...) }, x)
}

// Transpose is Transpose recorded in s.
func (s *Scope) Transpose(x *G.Node, perm ...int) *G.Node {
	return s.do(func() (*G.Node, error) { return Transpose(x, perm...) }, x)
}

// Slice is Slice recorded in s.
func (s *Scope) Slice(x *G.Node, axis, start, end int) *G.Node {
	return s.do(func() (*G.Node, error) { return Slice(x, axis, start, end) }, x)
}

// Concat is Concat recorded in s.
func (s *Scope) Concat(axis int, xs ...*G.Node) *G.Node {
	return s.do(func() (*G.Node, error) { return Concat(axis, xs...) }, xs...)
}

// Sum is Sum recorded in s.
func (s *Scope) Sum(x *G.Node, axis int, keep bool) *G.Node {
	return s.do(func() (*G.Node, error) { return Sum(x, axis, keep) }, x)
}

// Mean is Mean recorded in s.
func (s *Scope) Mean(x *G.Node, axis int, keep bool) *G.Node {
	return s.do(func() (*G.Node, error) { return Mean(x, axis, keep) }, x)
}

// Max is Max recorded in s.
func (s *Scope) Max(x *G.Node, axis int, keep bool) *G.Node {
	return s.do(func() (*G.Node, error) { return Max(x, axis, keep) }, x)
}

// ReLU is ReLU recorded in s.
func (s *Scope) ReLU(x *G.Node) *G.Node {
	return s.do(func() (*G.Node, error) { return ReLU(x) }, x)
}

// BatchedMatMul is BatchedMatMul recorded in s.
func (s *Scope) BatchedMatMul(a, b *G.Node, transA, transB bool) *G.Node {
	return s.do(func() (*G.Node, error) { return BatchedMatMul(a, b, transA, transB) }, a, b)
}

// Softmax is Softmax recorded in s; mask may be nil.
func (s *Scope) Softmax(x, mask *G.Node, scale float64) *G.Node {
	if mask == nil {
		return s.do(func() (*G.Node, error) { return Softmax(x, nil, scale) }, x)
	}
	return s.do(func() (*G.Node, error) { return Softmax(x, mask, scale) }, x, mask)
}

// LogSoftmax is LogSoftmax recorded in s.
func (s *Scope) LogSoftmax(x *G.Node) *G.Node {
	return s.do(func() (*G.Node, error) { return LogSoftmax(x) }, x)
}

// LayerNorm is LayerNorm recorded in s.
func (s *Scope) LayerNorm(x, g, b *G.Node, eps float64) *G.Node {
	return s.do(func() (*G.Node, error) { return LayerNorm(x, g, b, eps) }, x, g, b)
}

// AddLayerNorm is AddLayerNorm recorded in s.
func (s *Scope) AddLayerNorm(x, r, g, b *G.Node, eps float64) *G.Node {
	return s.do(func() (*G.Node, error) { return AddLayerNorm(x, r, g, b, eps) }, x, r, g, b)
}

// AddNormalize is AddNormalize recorded in s.
func (s *Scope) AddNormalize(x, r, g *G.Node, eps float64, center bool) *G.Node {
	return s.do(func() (*G.Node, error) { return AddNormalize(x, r, g, eps, center) }, x, r, g)
}

// Normalize is Normalize recorded in s.
func (s *Scope) Normalize(x, g *G.Node, eps float64, center bool) *G.Node {
	return s.do(func() (*G.Node, error) { return Normalize(x, g, eps, center) }, x, g)
}

// Embed is Embed recorded in s.
func (s *Scope) Embed(w, ids *G.Node, scale float64) *G.Node {
	return s.do(func() (*G.Node, error) { return Embed(w, ids, scale) }, w, ids)
}

// Dropout applies Dropout with probability p in a training graph; in an
// evaluation graph, or with p = 0, it returns x unchanged.
func (s *Scope) Dropout(x *G.Node, p float64) *G.Node {
	if !s.Training() || p == 0 {
		return x
	}
	s.b.dropouts++
	id := s.b.dropouts
	return s.do(func() (*G.Node, error) { return Dropout(x, p, s.b.rng, id) }, x)
}
