package graph

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestAffineReLU checks that AffineReLU equals ReLU(Affine(…)) bit for bit,
// in float32 and float64, with w as it is and transposed, read as it is
// (the first product of a run) or packed (the others), and over enough rows
// and columns that the
// GEMM splits the product among goroutines and blocks its inner dimension;
// and that AffineReLU refuses a missing bias.
func TestAffineReLU(t *testing.T) {
	const rows, in, out = 70, 300, 90
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, transW := range []bool{false, true} {
			params := newTestParams(t, dt)
			s := NewScope(params)
			shape := tensor.Shape{in, out}
			if transW {
				shape = tensor.Shape{out, in}
			}
			x := s.Param("x", tensor.Shape{rows, in}, Normal(1))
			w, b := s.Param("w", shape, Normal(0.1)), s.Param("b", tensor.Shape{out}, Normal(1))
			outs := map[string]*G.Node{"fused": s.AffineReLU(x, w, b, transW), "apart": s.ReLU(s.Affine(x, w, b, transW))}
			p, err := Compile(nil, s, nil, outs)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second run reuses the packed w
				if err := p.Run(); err != nil {
					t.Fatal(err)
				}
				fused, apart := Float64s(p.Output("fused")), Float64s(p.Output("apart"))
				zeros := 0
				for i := range fused {
					if math.Float64bits(fused[i]) != math.Float64bits(apart[i]) {
						t.Fatalf("%v transW %t: y[%d] fused %v, apart %v", dt, transW, i, fused[i], apart[i])
					}
					if fused[i] == 0 {
						zeros++
					}
				}
				if zeros == 0 || zeros == len(fused) {
					t.Fatalf("%v: %d of %d outputs are 0: the ReLU is not exercised", dt, zeros, len(fused))
				}
			}
			_ = p.Close()
		}
	}
	if _, err := AffineReLU(G.NewMatrix(G.NewGraph(), tensor.Float32, G.WithShape(2, 3)), G.NewMatrix(G.NewGraph(), tensor.Float32, G.WithShape(3, 4)), nil, false); err == nil {
		t.Error("AffineReLU without a bias: no error")
	}
}
