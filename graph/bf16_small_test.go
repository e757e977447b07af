package graph

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestBF16SmallProductsAreFloat32 checks that a MatMul whose rows are too
// few for bfloat16 to pay (blas.BF16Pays) is computed in float32 by a BF16
// program, bit for bit as by the float32 program, with w packed beforehand
// (frozen) or not; and that one with enough rows is not.
func TestBF16SmallProductsAreFloat32(t *testing.T) {
	for _, rows := range []int{5, 80} {
		for _, frozen := range []bool{false, true} {
			params := newTestParams(t, tensor.Float32)
			var ys [2][]float64
			for i, prec := range []Precision{BF16, Float32} {
				c := newProductCase(params, "affine", false, rows, 70, 49)
				p, err := Compile(newTestRuntime(t, prec), c.s, c.loss, map[string]*G.Node{"y": c.y})
				if err != nil {
					t.Fatal(err)
				}
				if frozen {
					defer params.Freeze()()
				}
				if err := p.Set("r", c.r); err != nil {
					t.Fatal(err)
				}
				if err := p.Run(); err != nil {
					t.Fatal(err)
				}
				ys[i] = append(Float64s(p.Output("y")), Float64s(p.Grad("x"))...)
				_ = p.Close()
			}
			if same := equalFloats(ys[0], ys[1]); same != (rows == 5) {
				t.Errorf("%d rows, frozen %t: bf16 and float32 results equal: %t", rows, frozen, same)
			}
		}
	}
}
