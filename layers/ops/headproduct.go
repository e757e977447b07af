package ops

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// HeadScores adds to s the attention logits of every head, q·kᵀ, read from the
// queries q [batch, lenQ, heads·dk] and keys k [batch, lenK, kvHeads·dk]
// as the projections leave them, head h in columns h·dk … (h+1)·dk. Query
// head h reads key head g(h) = h / (heads/kvHeads), kvHeads dividing heads
// (fewer is grouped-query attention):
//
//	s[b, h, i, j] = Σ_c q[b, i, h·dk + c] · k[b, j, g(h)·dk + c]
//
// giving [batch, heads, lenQ, lenK]. With kvHeads = heads it is
// BatchedMatMul(SplitHeads(q), SplitHeads(k), false, true) without the two
// copies that split the heads.
func HeadScores(s *graph.Scope, q, k *G.Node, heads int) *G.Node {
	return s.Record(func() (*G.Node, error) { return headScores(q, k, heads) }, q, k)
}

func headScores(q, k *G.Node, heads int) (*G.Node, error) {
	if err := checkHeads(heads, q); err != nil {
		return nil, errors.Wrap(err, "head scores")
	}
	dk := q.Shape()[2] / heads
	if k.Dims() != 3 || q.Shape()[0] != k.Shape()[0] || k.Shape()[2]%dk != 0 || heads%(k.Shape()[2]/dk) != 0 {
		return nil, errors.Errorf("head scores: keys %v do not match queries %v of %d heads: want [batch, lenK, kvHeads·dk], kvHeads dividing the heads", k.Shape(), q.Shape(), heads)
	}
	return headProduct(q, k, headLayouts{seq, seq, byHead}, false, true, [3]int{heads, k.Shape()[2] / dk, heads})
}

// HeadMix adds to s the heads' outputs, each head's attention weights w [batch,
// heads, lenQ, lenK] times its values v [batch, lenK, kvHeads·dk], head h
// reading value head g(h) = h / (heads/kvHeads), written side by side as
// MergeHeads would:
//
//	y[b, i, h·dk + c] = Σ_j w[b, h, i, j] · v[b, j, g(h)·dk + c]
//
// giving [batch, lenQ, heads·dk]. With kvHeads = heads it is
// MergeHeads(BatchedMatMul(w, SplitHeads(v), false, false)) without the
// copies that split and merge the heads.
func HeadMix(s *graph.Scope, w, v *G.Node, kvHeads int) *G.Node {
	return s.Record(func() (*G.Node, error) { return headMix(w, v, kvHeads) }, w, v)
}

func headMix(w, v *G.Node, kvHeads int) (*G.Node, error) {
	if w.Dims() != 4 || kvHeads < 1 || w.Shape()[1]%kvHeads != 0 {
		return nil, errors.Errorf("head mix: the weights %v must be [batch, heads, lenQ, lenK], the heads a multiple of %d key/value heads", w.Shape(), kvHeads)
	}
	if err := checkHeads(kvHeads, v); err != nil {
		return nil, errors.Wrap(err, "head mix")
	}
	if ws, vs := w.Shape(), v.Shape(); ws[0] != vs[0] || ws[3] != vs[1] {
		return nil, errors.Errorf("head mix: weights %v and values %v differ in batch or keys", ws, vs)
	}
	heads := w.Shape()[1]
	return headProduct(w, v, headLayouts{byHead, seq, seq}, false, false, [3]int{heads, kvHeads, heads})
}

// checkHeads checks that x is [batch, len, heads·dk].
func checkHeads(heads int, x *G.Node) error {
	if x.Dims() != 3 || heads < 1 || x.Shape()[2]%heads != 0 {
		return errors.Errorf("want [batch, len, heads·dk] with %d heads, have %v", heads, x.Shape())
	}
	return nil
}

// headLayout is how a stack of per-head matrices, one per batch entry b and
// head h, lies in a tensor; it names itself in an op's name.
type headLayout string

const (
	// seq is [batch, rows, heads·cols]: head h's matrix is columns
	// h·cols … (h+1)·cols of entry b, with a leading dimension heads·cols.
	seq headLayout = "seq"
	// byHead is [batch, heads, rows, cols]: one contiguous matrix per
	// (b, h).
	byHead headLayout = "head"
)

// headLayouts are the layouts of a product's operands a and b and its
// output c.
type headLayouts struct{ a, b, c headLayout }

// headMatrix is where the matrices of one operand lie: rows × cols each,
// for batch entries and its heads, each read by group of the product's
// heads (group > 1 for the key/value heads of grouped-query attention).
type headMatrix struct {
	layout       headLayout
	rows, cols   int
	heads, group int
}

// matrixOf reads the per-head matrix sizes of a tensor of shape s of
// heads of the product's all.
func matrixOf(l headLayout, s tensor.Shape, heads, all int) headMatrix {
	if l == byHead {
		return headMatrix{l, s[2], s[3], heads, all / heads}
	}
	return headMatrix{l, s[1], s[2] / heads, heads, all / heads}
}

// at is the offset and leading dimension of the matrix that the product's
// head h of batch entry b reads: its own head h/group.
func (m headMatrix) at(b, h int) (off, ld int) {
	h /= m.group
	if m.layout == byHead {
		return (b*m.heads + h) * m.rows * m.cols, m.cols
	}
	return b*m.rows*m.heads*m.cols + h*m.cols, m.heads * m.cols
}

// headProduct is c[b, h] = op(a[b, h])·op(b[b, h]) for every batch entry and
// head h of the product, each operand in its layout with its number of
// heads (heads: of a, b and c), which reads its head h/group (group its
// share of the product's heads). An output of fewer heads than the product
// (the gradient of grouped keys or values) sums its group's products. The
// products of the (b, h) of c run on several goroutines, each writing its
// own matrix of c. Its gradients are head products too:
//
//	da = dc·op(b)ᵀ (transposed when a was),  db = op(a)ᵀ·dc (transposed when b was)
func headProduct(a, b *G.Node, l headLayouts, transA, transB bool, heads [3]int) (*G.Node, error) {
	all := max(heads[0], heads[1], heads[2])
	ma, mb := matrixOf(l.a, a.Shape(), heads[0], all), matrixOf(l.b, b.Shape(), heads[1], all)
	m, k := ma.rows, ma.cols
	if transA {
		m, k = k, m
	}
	kb, n := mb.rows, mb.cols
	if transB {
		kb, n = n, kb
	}
	if k != kb || a.Shape()[0] != b.Shape()[0] {
		return nil, errors.Errorf("head product: %v by %v: sizes differ", a.Shape(), b.Shape())
	}
	batch := a.Shape()[0]
	ms := [3]headMatrix{ma, mb, {l.c, m, n, heads[2], all / heads[2]}}
	out := tensor.Shape{batch, m, heads[2] * n}
	if l.c == byHead {
		out = tensor.Shape{batch, heads[2], m, n}
	}
	op := graph.Op{
		Name:   fmt.Sprintf("head_product(%s·%s→%s,transA=%t,transB=%t,heads=%v)", l.a, l.b, l.c, transA, transB, heads),
		Arity:  2,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return out.Clone(), nil },
		F32:    graph.Kernels[float32]{Forward: headProductKernel(batch, ms, transA, transB, k, graph.Gemm[float32])},
		F64:    graph.Kernels[float64]{Forward: headProductKernel(batch, ms, transA, transB, k, graph.Gemm[float64])},
		BF16:   graph.Kernels[float32]{Forward: headProductKernel(batch, ms, transA, transB, k, graph.GemmBF16)},
		Device: headProductDevice(batch, ms, transA, transB, k),
		Diff:   []bool{true, true},
		Grad: func(in G.Nodes, _, dc *G.Node) (G.Nodes, error) {
			var da, db *G.Node
			var err error
			if transA { // da = (dc·op(b)ᵀ)ᵀ = op(b)·dcᵀ
				da, err = headProduct(b, dc, headLayouts{l.b, l.c, l.a}, transB, true, [3]int{heads[1], heads[2], heads[0]})
			} else {
				da, err = headProduct(dc, b, headLayouts{l.c, l.b, l.a}, false, !transB, [3]int{heads[2], heads[1], heads[0]})
			}
			if err != nil {
				return nil, err
			}
			if transB { // db = dcᵀ·op(a)
				db, err = headProduct(dc, a, headLayouts{l.c, l.a, l.b}, true, transA, [3]int{heads[2], heads[0], heads[1]})
			} else {
				db, err = headProduct(a, dc, headLayouts{l.a, l.c, l.b}, !transA, false, [3]int{heads[0], heads[2], heads[1]})
			}
			return G.Nodes{da, db}, err
		},
	}
	if heads[2] == all { // an output of fewer heads is a gradient's
		op.ONNX = headProductONNX(l, transA, transB, heads)
	}
	return op.Apply(a, b)
}

// headProductKernel runs the products of every (b, h) of c with mul,
// several goroutines each taking some, a matrix of c of a group of heads
// summing their products in order; ms are the matrices of a, b and c, k
// the inner size.
func headProductKernel[T graph.Float](batch int, ms [3]headMatrix, transA, transB bool, k int, mul graph.GemmFunc[T]) func(graph.Operand[T], []graph.Operand[T]) error {
	m, n := ms[2].rows, ms[2].cols
	heads, group := ms[2].heads, ms[2].group
	return func(c graph.Operand[T], in []graph.Operand[T]) error {
		graph.ParallelFor(batch*heads, group*m*n*k, func(lo, hi int) {
			for e := lo; e < hi; e++ {
				bi := e / heads
				oc, ldc := ms[2].at(bi, e%heads*group)
				for h := e % heads * group; h < (e%heads+1)*group; h++ {
					oa, lda := ms[0].at(bi, h)
					ob, ldb := ms[1].at(bi, h)
					beta := float64(min(h%group, 1))
					mul(transA, transB, m, n, k, in[0].Data[oa:], lda, in[1].Data[ob:], ldb, beta, c.Data[oc:], ldc)
				}
			}
		})
		return nil
	}
}
