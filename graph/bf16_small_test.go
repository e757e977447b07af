package graph

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestBF16SmallProductsAreFloat32 checks that a MatMul whose rows are too
// few for bfloat16 to pay (blas.BF16Pays) is computed in float32 by a BF16
// program, bit for bit as by the float32 program, with w read as it is
// (the first run) or packed beforehand (the second); and that one with
// enough rows is not.
func TestBF16SmallProductsAreFloat32(t *testing.T) {
	const runs = 2
	for _, rows := range []int{4, 80} {
		params := newTestParams(t, tensor.Float32)
		var ys [2][runs][]float64
		for i, prec := range []Precision{BF16, Float32} {
			c := newProductCase(params, "affine", false, rows, 70, 49)
			p, err := Compile(newTestRuntime(t, prec), c.s, c.loss, map[string]*G.Node{"y": c.y})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Set("r", c.r); err != nil {
				t.Fatal(err)
			}
			for run := range runs {
				if err := p.Run(); err != nil {
					t.Fatal(err)
				}
				ys[i][run] = append(Float64s(p.Output("y")), Float64s(p.Grad("x"))...)
			}
			_ = p.Close()
		}
		for run := range runs {
			if same := equalFloats(ys[0][run], ys[1][run]); same != (rows == 4) {
				t.Errorf("%d rows, run %d: bf16 and float32 results equal: %t", rows, run, same)
			}
		}
	}
}
