package vadam

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// step is Adam's step t with learning rate lr and AdamW's decay λ.
func step(t int, lr, decay float64) Step {
	c1, c2 := 1-math.Pow(0.9, float64(t)), 1-math.Pow(0.98, float64(t))
	return Step{Beta1: 0.9, Beta2: 0.98, Scale: 0.5, Keep: 1 - lr*decay, Step: lr / c1, RC2: 1 / math.Sqrt(c2), Eps: 1e-9}
}

// values are n float32 values of magnitudes from 1e-30 to 1e6, with zeros,
// signs and subnormals among them.
func values(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch rng.IntN(8) {
		case 0:
			x[i] = 0
		case 1:
			x[i] = math.Float32frombits(rng.Uint32() & 0x807fffff) // subnormal
		default:
			x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(36)-30)))
		}
	}
	return x
}

// TestUpdate32MatchesGo checks the vector update against the portable one,
// bit for bit, over several steps (the moments carry over), with and
// without decay, at lengths that leave every tail.
func TestUpdate32MatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 16, 31, 1000} {
		for _, decay := range []float64{0, 0.01} {
			theta, m, v := values(rng, n), make([]float32, n), make([]float32, n)
			want := [3][]float32{slices.Clone(theta), slices.Clone(m), slices.Clone(v)}
			for tt := 1; tt <= 3; tt++ {
				g, s := values(rng, n), step(tt, 1e-3, decay)
				Update32(theta, g, m, v, s)
				update(want[0], g, want[1], want[2], s)
				for i, got := range [3][]float32{theta, m, v} {
					for j := range got {
						if math.Float32bits(got[j]) != math.Float32bits(want[i][j]) {
							t.Fatalf("n=%d decay=%g step %d: %s[%d] = %g, want %g", n, decay, tt, []string{"θ", "m", "v"}[i], j, got[j], want[i][j])
						}
					}
				}
			}
		}
	}
}

// TestFirstStep checks the update against what Adam's first step must do:
// with zero moments, m̂/sqrt(v̂) is the gradient's sign, so each parameter
// moves by the learning rate against its gradient (ε aside), and AdamW
// first scales it by 1-lr·λ.
func TestFirstStep(t *testing.T) {
	const lr, decay = 1e-2, 0.1
	for _, tc := range []struct {
		name   string
		update func(theta, g []float64, s Step)
	}{
		{"float32", func(theta, g []float64, s Step) {
			th, gs := make([]float32, len(g)), make([]float32, len(g))
			for i := range g {
				th[i], gs[i] = float32(theta[i]), float32(g[i])
			}
			Update32(th, gs, make([]float32, len(g)), make([]float32, len(g)), s)
			for i := range th {
				theta[i] = float64(th[i])
			}
		}},
		{"float64", func(theta, g []float64, s Step) {
			Update64(theta, g, make([]float64, len(g)), make([]float64, len(g)), s)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := []float64{3, -0.25, 1e-3, -40, 5, 6, -7, 8, 9.5}
			theta := make([]float64, len(g))
			for i := range theta {
				theta[i] = float64(i) - 4
			}
			before := slices.Clone(theta)
			tc.update(theta, g, step(1, lr, decay))
			for i := range g {
				want := before[i]*(1-lr*decay) - lr*math.Copysign(1, g[i])
				if math.Abs(theta[i]-want) > 1e-6 {
					t.Errorf("θ[%d] = %.9g after the first step, want %.9g", i, theta[i], want)
				}
			}
		})
	}
}

// BenchmarkUpdate32 times the update of a million parameters, the vector
// one and the portable one, in parameters per second.
func BenchmarkUpdate32(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(3, 4))
	theta, g, m, v := values(rng, n), values(rng, n), make([]float32, n), make([]float32, n)
	for _, f := range []struct {
		name string
		f    func(theta, g, m, v []float32, s Step)
	}{{"vector", Update32}, {"go", update[float32]}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				f.f(theta, g, m, v, step(10, 1e-4, 0))
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mparams/s")
		})
	}
}
