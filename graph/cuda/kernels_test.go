package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// kernelTests check every kernel against the references of ref_test.go on
// several shapes, sizes that are not multiples of the block among them,
// and grids smaller than the work (so that the grid-stride loops turn).
func kernelTests() map[string]func(*env) {
	return map[string]func(*env){
		"elementwise": testElementwise, "dropout": testDropout, "dropoutmask": testDropoutMask, "bf16": testBF16,
		"softmax": testSoftmax, "maskedsoftmax": testMaskedSoftmax, "layout": testLayout, "pointwise": testPointwise, "broadcast": testBroadcast,
		"max": testMaxAxis, "slicing": testSlicing, "slot": testSlot, "targetscores": testTargetScores, "layernorm": testLayerNorm, "embedding": testEmbedding,
		"crossentropy": testCrossEntropy, "meanloss": testMeanLoss, "adam": testAdam, "gatherrows": testGatherRows,
		"gradsums": testGradSums, "idsmask": testIDsMask,
	}
}

// TestKernels runs kernelTests on every device there is, and checks that
// each kernel of the source was launched by one of them.
func TestKernels(t *testing.T) {
	for _, d := range devices(t) {
		seen := map[string]bool{}
		for name, test := range kernelTests() {
			t.Run(d.Name()+"/"+name, func(t *testing.T) { test(&env{t: t, d: d, seen: seen}) })
		}
		for _, k := range allKernels() {
			if !seen[k] {
				t.Errorf("%s: kernel %s was not tested", d.Name(), k)
			}
		}
	}
}

// shapes are the sizes the elementwise tests use.
var sizes = []int{1, 255, 1000, 4099}

// grids are the grid sizes tried for n elements in blocks of block threads:
// one block, and enough blocks for one element each.
func grids(n, block int) []int { return []int{1, (n + block - 1) / block} }

func testElementwise(e *env) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range sizes {
		for _, block := range []int{64, 256} {
			for _, grid := range grids(n, block) {
				a, b := randn(r, n, 1), randn(r, n, 1)
				pa, pb, py := e.upload(a), e.upload(b), e.alloc(n)
				run := func(kernel string, want func(i int) float64, args ...any) {
					e.launch(kernel, grid, block, args...)
					w := make([]float64, n)
					for i := range w {
						w[i] = want(i)
					}
					near(e.t, fmt.Sprintf("%s n=%d grid=%d block=%d", kernel, n, grid, block), e.download(py, n), w, e.d.tol)
				}
				run("add_f32", func(i int) float64 { return float64(a[i]) + float64(b[i]) }, py, pa, pb, n)
				run("mul_f32", func(i int) float64 { return float64(a[i]) * float64(b[i]) }, py, pa, pb, n)
				run("scale_f32", func(i int) float64 { return -1.5 * float64(a[i]) }, py, pa, float32(-1.5), n)
				run("relu_fwd_f32", func(i int) float64 { return max(float64(a[i]), 0) }, py, pa, n)
				run("relu_bwd_f32", func(i int) float64 { return float64(b[i]) * float64(step(a[i])) }, py, pa, pb, n)
				run("fill_f32", func(int) float64 { return 0.25 }, py, float32(0.25), n)
				run("accumulate_f32", func(i int) float64 { return 0.25 + float64(b[i]) }, py, pb, n)
			}
		}
	}
}

// step is 1 for x > 0, else 0.
func step(x float32) float32 {
	if x > 0 {
		return 1
	}
	return 0
}

func testDropout(e *env) {
	r := rand.New(rand.NewPCG(2, 1))
	for _, n := range sizes {
		x := randn(r, n, 1)
		mask := make([]uint64, (n+63)/64)
		for i := range mask {
			mask[i] = r.Uint64()
		}
		px, py, pm := e.upload(x), e.alloc(n), e.alloc(2*len(mask))
		if err := e.d.ToDevice(pm, Uint64Bytes(mask)); err != nil {
			e.t.Fatal(err)
		}
		e.launch("dropout_f32", 3, 128, py, px, pm, float32(1/0.9), n)
		want := make([]float64, n)
		for i := range want {
			if mask[i/64]&(1<<(i%64)) != 0 {
				want[i] = float64(x[i] * float32(1/0.9))
			}
		}
		near(e.t, fmt.Sprintf("dropout n=%d", n), e.download(py, n), want, e.d.tol)
	}
}

// testDropoutMask checks dropout_mask bit for bit against maskRef, on
// sizes with a part word, an odd count and a part block of words, from one
// thread for all blocks and from one thread per block.
func testDropoutMask(e *env) {
	r := rand.New(rand.NewPCG(9, 1))
	for _, n := range []int{1, 63, 64, 65, 4095, 4096, 4097, 3*64*64 + 129, 12345} {
		for _, p := range []float64{0, 0.1, 0.5, 0.9} {
			seed, threshold, words := r.Uint64(), uint64(p*(1<<32)), (n+63)/64
			want := maskRef(seed, threshold, n)
			for _, grid := range []int{1, (words + 63) / 64} {
				pm, ps := e.alloc(2*words), e.alloc(2)
				if err := e.d.ToDevice(ps, Uint64Bytes([]uint64{seed})); err != nil {
					e.t.Fatal(err)
				}
				e.launch("dropout_mask", grid, 1, pm, ps, threshold, n)
				got := make([]uint64, words)
				if err := e.d.ToHost(Uint64Bytes(got), pm); err != nil {
					e.t.Fatal(err)
				}
				for w := range got {
					if got[w] != want[w] {
						e.t.Errorf("dropout_mask n=%d p=%g grid=%d: word %d = %#x, want %#x", n, p, grid, w, got[w], want[w])
						break
					}
				}
			}
		}
	}
}

// maskRef is graph's dropout mask of n elements, element by element: the
// elements 4096b... of block b draw from a PCG seeded (seed, b), elements
// 2k and 2k+1 from the low and high halves of one draw, kept (bit set) when
// the half is ≥ threshold.
func maskRef(seed, threshold uint64, n int) []uint64 {
	mask := make([]uint64, (n+63)/64)
	var g rand.PCG
	for i := 0; i < n; i += 2 {
		if i%(64*64) == 0 {
			g.Seed(seed, uint64(i/(64*64)))
		}
		u := g.Uint64()
		for k, half := range []uint64{u & (1<<32 - 1), u >> 32} {
			if i+k < n && half >= threshold {
				mask[(i+k)/64] |= 1 << ((i + k) % 64)
			}
		}
	}
	return mask
}

// bf16Nearest is x rounded to the nearest bfloat16, ties to the even one,
// found by comparing the two candidates in float64 (values that round past
// the largest bfloat16 are left to the explicit cases of testBF16).
func bf16Nearest(x float32) uint16 {
	lo := uint16(math.Float32bits(x) >> 16)
	hi := lo + 1
	dl := math.Abs(float64(x) - float64(math.Float32frombits(uint32(lo)<<16)))
	dh := math.Abs(float64(x) - float64(math.Float32frombits(uint32(hi)<<16)))
	if dh < dl || dh == dl && lo&1 == 1 {
		return hi
	}
	return lo
}

func testBF16(e *env) {
	r := rand.New(rand.NewPCG(3, 1))
	cases := map[uint32]uint16{
		0x3f800000: 0x3f80, 0x3f808000: 0x3f80, 0x3f818000: 0x3f82, 0x3f808001: 0x3f81,
		0x7f7fffff: 0x7f80, 0x7f800000: 0x7f80, 0xff800000: 0xff80, 0x80000000: 0x8000, 0x00000001: 0x0000,
	}
	var x []float32
	var want []uint16
	for in, out := range cases {
		x, want = append(x, math.Float32frombits(in)), append(want, out)
	}
	for _, v := range randn(r, 1000, 100) {
		x, want = append(x, v), append(want, bf16Nearest(v))
	}
	x = append(x, float32(math.NaN()))
	n := len(x)
	px, ph, py := e.upload(x), e.alloc((n+1)/2), e.alloc(n)
	e.launch("to_bf16", 2, 256, ph, px, n)
	got := make([]uint16, n)
	if err := e.d.ToHost(Uint16Bytes(got), ph); err != nil {
		e.t.Fatal(err)
	}
	for i := range n - 1 {
		if got[i] != want[i] {
			e.t.Errorf("to_bf16(%g = %#08x) = %#04x, want %#04x", x[i], math.Float32bits(x[i]), got[i], want[i])
		}
	}
	if h := got[n-1]; h&0x7f80 != 0x7f80 || h&0x7f == 0 {
		e.t.Errorf("to_bf16(NaN) = %#04x, not a NaN", h)
	}
	e.launch("from_bf16", 2, 256, py, ph, n)
	back := e.download(py, n)
	for i := range n - 1 {
		if w := math.Float32frombits(uint32(got[i]) << 16); back[i] != w {
			e.t.Errorf("from_bf16(%#04x) = %g, want %g", got[i], back[i], w)
		}
	}
}

// rowShapes are the [rows, cols] the row kernels are tried on.
var rowShapes = [][2]int{{1, 1}, {3, 7}, {5, 256}, {4, 1000}, {2, 1531}}

func testSoftmax(e *env) {
	r := rand.New(rand.NewPCG(4, 1))
	for _, s := range rowShapes {
		rows, cols := s[0], s[1]
		for _, block := range []int{32, 256} {
			x, dy := randn(r, rows*cols, 3), randn(r, rows*cols, 1)
			px, pdy, py, pdx := e.upload(x), e.upload(dy), e.alloc(len(x)), e.alloc(len(x))
			what := fmt.Sprintf("logsoftmax %dx%d block=%d", rows, cols, block)
			e.launch("logsoftmax_fwd_f32", min(rows, 2), block, py, px, rows, cols)
			y := e.download(py, len(x))
			near(e.t, what+" forward", y, softmaxRef(f64(x), rows, cols, true), e.d.tol)
			e.launch("logsoftmax_bwd_f32", min(rows, 2), block, pdx, py, pdy, rows, cols)
			near(e.t, what+" backward", e.download(pdx, len(x)), softmaxBwdRef(f64(y), f64(dy), rows, cols, true), e.d.tol)
		}
	}
}

// testMaskedSoftmax runs graph.Softmax's kernels on attention scores
// [batch, heads, len, len] with no mask, a padding mask [batch, 1, 1, len]
// that masks every key of one sequence, and a causal mask [1, 1, len, len].
func testMaskedSoftmax(e *env) {
	r := rand.New(rand.NewPCG(11, 1))
	for _, s := range [][3]int{{1, 1, 1}, {2, 3, 5}, {2, 2, 67}} {
		b, h, n := s[0], s[1], s[2]
		rows := b * h * n
		x, dy := randn(r, rows*n, 3), randn(r, rows*n, 1)
		pad, causal := make([]float32, b*n), make([]float32, n*n)
		for i := range pad {
			if i/n == b-1 || r.IntN(4) == 0 { // the last sequence is all padding
				pad[i] = float32(math.Inf(-1))
			}
		}
		for i := range causal {
			if i%n > i/n {
				causal[i] = float32(math.Inf(-1))
			}
		}
		masks := []struct {
			name       string
			m          []float32
			s0, s1, s2 int
			at         func(row, j int) float64
		}{
			{"none", nil, 0, 0, 0, func(int, int) float64 { return 0 }},
			{"padding", pad, n, 0, 0, func(row, j int) float64 { return float64(pad[row/(h*n)*n+j]) }},
			{"causal", causal, 0, 0, n, func(row, j int) float64 { return float64(causal[row%n*n+j]) }},
		}
		px, pdy, py, pdx := e.upload(x), e.upload(dy), e.alloc(len(x)), e.alloc(len(x))
		for _, m := range masks {
			pm := Ptr(0)
			if m.m != nil {
				pm = e.upload(m.m)
			}
			what := fmt.Sprintf("softmax %dx%dx%dx%d mask=%s", b, h, n, n, m.name)
			e.launch("softmax_fwd_f32", min(rows, 7), 32, py, px, pm, rows, n, float32(0.5), h, n, m.s0, m.s1, m.s2, 1)
			y := e.download(py, len(x))
			near(e.t, what+" forward", y, maskedSoftmaxRef(f64(x), m.at, rows, n, 0.5), e.d.tol)
			e.launch("softmax_bwd_f32", min(rows, 7), 32, pdx, py, pdy, rows, n, float32(0.5))
			dx := softmaxBwdRef(f64(y), f64(dy), rows, n, false)
			for i := range dx {
				dx[i] *= 0.5
			}
			near(e.t, what+" backward", e.download(pdx, len(x)), dx, e.d.tol)
		}
	}
}

func testLayerNorm(e *env) {
	r := rand.New(rand.NewPCG(5, 1))
	// Not rows of 1 or 2: they normalize to ±1, where dx is r·d times
	// 1 - x̂² ≈ eps/σ², which float32 does not compute to 1e-5.
	for _, s := range append([][2]int{{1, 3}}, rowShapes[1:]...) {
		rows, cols := s[0], s[1]
		for _, center := range []bool{true, false} {
			x, g, b, dy := randn(r, rows*cols, 2), randn(r, cols, 1), randn(r, cols, 1), randn(r, rows*cols, 1)
			for i := range x {
				x[i] += 0.5 // an offset for centering to remove
			}
			px, pg, pb, pdy := e.upload(x), e.upload(g), e.upload(b), e.upload(dy)
			py, pm, pr, pdx, pdg, pdb := e.alloc(len(x)), e.alloc(rows), e.alloc(rows), e.alloc(len(x)), e.alloc(cols), e.alloc(cols)
			bias, dbias, c := pb, pdb, 1
			if !center {
				bias, dbias, c = 0, 0, 0 // RMS normalization: no bias, and no db asked for
			}
			what := fmt.Sprintf("layernorm %dx%d center=%t", rows, cols, center)
			e.launch("layernorm_fwd_f32", min(rows, 3), 128, py, pm, pr, px, pg, bias, rows, cols, float32(1e-5), c)
			var bref []float64
			if center {
				bref = f64(b)
			}
			y, _, _ := layerNormRef(f64(x), f64(g), bref, rows, cols, 1e-5, center)
			near(e.t, what+" forward", e.download(py, len(x)), y, e.d.tol)
			e.launch("layernorm_bwd_f32", min(rows, 3), 128, pdx, pdy, px, pg, pm, pr, rows, cols, c)
			e.launch("layernorm_bwd_params_f32", 2, 64, pdg, dbias, pdy, px, pm, pr, rows, cols)
			dx, dg, db := layerNormBwdRef(f64(dy), f64(x), f64(g), rows, cols, 1e-5, center)
			near(e.t, what+" dx", e.download(pdx, len(x)), dx, e.d.tol)
			near(e.t, what+" dg", e.download(pdg, cols), dg, e.d.tol)
			if center {
				near(e.t, what+" db", e.download(pdb, cols), db, e.d.tol)
			}
		}
	}
}

func testEmbedding(e *env) {
	r := rand.New(rand.NewPCG(6, 1))
	for _, s := range [][3]int{{1, 1, 1}, {7, 5, 3}, {50, 33, 257}} { // ids, vocab, dim
		n, vocab, dim := s[0], s[1], s[2]
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32(r.IntN(vocab)) // repeats, for the scatter-add
		}
		table, dy := randn(r, vocab*dim, 1), randn(r, n*dim, 1)
		pt, pi, pdy, py, pdt := e.upload(table), e.uploadInts(ids), e.upload(dy), e.alloc(n*dim), e.alloc(vocab*dim)
		e.launch("embed_fwd_f32", 3, 128, py, pt, pi, n, dim, vocab, float32(1.5))
		e.launch("fill_f32", 3, 128, pdt, float32(0), vocab*dim)
		e.launch("embed_bwd_f32", 3, 128, pdt, pdy, pi, n, dim, vocab, float32(1.5))
		y, dt := make([]float64, n*dim), make([]float64, vocab*dim)
		for i, id := range ids {
			for j := range dim {
				y[i*dim+j] = 1.5 * float64(table[int(id)*dim+j])
				dt[int(id)*dim+j] += 1.5 * float64(dy[i*dim+j])
			}
		}
		what := fmt.Sprintf("embedding n=%d vocab=%d dim=%d", n, vocab, dim)
		near(e.t, what+" forward", e.download(py, n*dim), y, e.d.tol)
		near(e.t, what+" backward", e.download(pdt, vocab*dim), dt, e.d.tol)
	}
	// An id out of range reads nothing: its row is NaN.
	pt, pi, py := e.upload([]float32{1, 2}), e.uploadInts([]int32{1, 2, -1}), e.alloc(3)
	e.launch("embed_fwd_f32", 1, 32, py, pt, pi, 3, 1, 2, float32(1))
	if y := e.download(py, 3); y[0] != 2 || !math.IsNaN(float64(y[1])) || !math.IsNaN(float64(y[2])) {
		e.t.Errorf("embedding of ids 1, 2, -1 in a vocabulary of 2 = %v, want [2 NaN NaN]", y)
	}
}

func testCrossEntropy(e *env) {
	r := rand.New(rand.NewPCG(7, 1))
	const pad = 0
	for _, s := range rowShapes {
		rows, vocab := s[0], max(s[1], 2)
		for _, logits := range []bool{true, false} {
			for _, eps := range []float64{0, 0.1} {
				x, targets := randn(r, rows*vocab, 2), make([]int32, rows)
				if !logits {
					x = f32(softmaxRef(f64(x), rows, vocab, true))
				}
				for i := range targets {
					targets[i] = int32(r.IntN(vocab)) // 0, pad, now and then
				}
				targets[0] = pad
				dstats := randn(r, 2*rows, 1)
				px, pt, pd := e.upload(x), e.uploadInts(targets), e.upload(dstats)
				ps, pdx, lg := e.alloc(2*rows), e.alloc(len(x)), b2i(logits)
				what := fmt.Sprintf("cross-entropy %dx%d logits=%t eps=%g", rows, vocab, logits, eps)
				e.launch("smoothed_ce_fwd_f32", min(rows, 2), 256, ps, px, pt, rows, vocab, float32(eps), pad, lg)
				near(e.t, what+" stats", e.download(ps, 2*rows), ceRef(f64(x), targets, vocab, eps, pad, logits), e.d.tol)
				e.launch("smoothed_ce_bwd_f32", min(rows, 2), 256, pdx, px, pt, ps, pd, rows, vocab, float32(eps), pad, lg)
				near(e.t, what+" dx", e.download(pdx, len(x)), ceBwdRef(f64(x), targets, f64(dstats), vocab, eps, pad, logits), e.d.tol)
			}
		}
	}
}

// f32 is x narrowed.
func f32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

func testMeanLoss(e *env) {
	r := rand.New(rand.NewPCG(8, 1))
	const pad = 3
	for _, rows := range []int{1, 5, 700, 2049} {
		stats, targets := randn(r, 2*rows, 1), make([]int32, rows)
		var sum float64
		count := 0
		for i := range targets {
			targets[i] = int32(r.IntN(5))
			if targets[i] != pad {
				sum += float64(stats[2*i+1])
				count++
			} else {
				stats[2*i+1] = 0
			}
		}
		ps, pt, pl, pdl, pds := e.upload(stats), e.uploadInts(targets), e.alloc(1), e.upload([]float32{2}), e.alloc(2*rows)
		e.launch("mean_loss_fwd_f32", 1, 256, pl, ps, pt, rows, pad)
		near(e.t, fmt.Sprintf("mean loss rows=%d", rows), e.download(pl, 1), []float64{sum / float64(max(count, 1))}, e.d.tol)
		e.launch("mean_loss_bwd_f32", 1, 256, pds, pdl, pt, rows, pad)
		want := make([]float64, 2*rows)
		for i, t := range targets {
			if t != pad {
				want[2*i+1] = 2 / float64(count)
			}
		}
		near(e.t, fmt.Sprintf("mean loss gradient rows=%d", rows), e.download(pds, 2*rows), want, e.d.tol)
	}
}

func testAdam(e *env) {
	r := rand.New(rand.NewPCG(9, 1))
	const b1, b2, eps, lr, scale, decay = 0.9, 0.98, 1e-9, 1e-3, 0.5, 0.01
	for _, n := range sizes {
		sizes := []int{n, n/2 + 1} // the first decays and has a bfloat16 copy
		var words []uint64
		var th, m, v [2][]float64
		var pth, pm, pv, pg [2]Ptr
		pbf := e.alloc(n)
		for i, k := range sizes {
			theta, zero := randn(r, k, 1), make([]float32, k)
			pth[i], pm[i], pv[i], pg[i] = e.upload(theta), e.upload(zero), e.upload(zero), e.alloc(k)
			th[i], m[i], v[i] = f64(theta), make([]float64, k), make([]float64, k)
			entry := []uint64{uint64(pth[i]), uint64(pg[i]), uint64(pm[i]), uint64(pv[i]), uint64(k), 0, 0, 0}
			if i == 0 {
				entry[5], entry[6] = 1, uint64(pbf)
			}
			words = append(words, entry...)
		}
		table, consts := e.uploadWords(words), e.alloc(8)
		for t := 1; t <= 3; t++ {
			c1, c2 := 1-math.Pow(b1, float64(t)), 1-math.Pow(b2, float64(t))
			k := []float32{b1, b2, eps, float32(lr / c1), float32(1 / math.Sqrt(c2)), scale, float32(1 - lr*decay)}
			if err := e.d.ToDevice(consts, Float32Bytes(k)); err != nil {
				e.t.Fatal(err)
			}
			for i, size := range sizes {
				g := randn(r, size, 1)
				if err := e.d.ToDevice(pg[i], Float32Bytes(g)); err != nil {
					e.t.Fatal(err)
				}
				adamRef(th[i], f64(g), m[i], v[i], b1, b2, eps, lr, c1, c2, scale, decay*float64(1-i))
			}
			e.launchGrid("adam_multi_f32", Dim3{X: 2, Y: 2}, 256, table, consts)
		}
		for i := range sizes {
			what := fmt.Sprintf("adam n=%d, tensor %d", sizes[i], i)
			near(e.t, what+" θ", e.download(pth[i], sizes[i]), th[i], e.d.tol)
			near(e.t, what+" m", e.download(pm[i], sizes[i]), m[i], e.d.tol)
			near(e.t, what+" v", e.download(pv[i], sizes[i]), v[i], e.d.tol)
		}
		bf := make([]uint16, n)
		if err := e.d.ToHost(Uint16Bytes(bf), pbf); err != nil {
			e.t.Fatal(err)
		}
		for i, x := range e.download(pth[0], n) {
			if bf[i] != bf16Nearest(x) {
				e.t.Fatalf("adam n=%d: bfloat16 copy[%d] = %#x, want θ %g rounded, %#x", n, i, bf[i], x, bf16Nearest(x))
			}
		}
	}
}

// testGradSums checks the kernels over tables of tensors that gradient
// sums use: p += a·g, p = 0, the bfloat16 copies, the partial sums of
// squares of each thread of a tensor's row of the grid (which must add up
// to Σ g² whatever the grid), and their sum in one block.
func testGradSums(e *env) {
	r := rand.New(rand.NewPCG(10, 1))
	for _, n := range sizes {
		for _, grid := range grids(n, 256) {
			k := []int{n, n/3 + 1}
			var words []uint64
			var xs, ys [2][]float32
			var px, py [2]Ptr
			var sq float64
			pbf := e.alloc(n)
			for i := range k {
				xs[i], ys[i] = randn(r, k[i], 1), randn(r, k[i], 1)
				px[i], py[i] = e.upload(xs[i]), e.upload(ys[i])
				words = append(words, uint64(py[i]), uint64(px[i]), 0, 0, uint64(k[i]), 0, 0, 0)
				for _, x := range xs[i] {
					sq += float64(x) * float64(x)
				}
			}
			words[6] = uint64(pbf)
			table := e.uploadWords(words)
			e.launchGrid("axpy_multi_f32", Dim3{X: grid, Y: 2}, 256, table, float32(-2.5))
			what := fmt.Sprintf("n=%d grid=%d", n, grid)
			for i := range k {
				want := make([]float64, k[i])
				for j := range want {
					want[j] = float64(ys[i][j]) - 2.5*float64(xs[i][j])
				}
				near(e.t, fmt.Sprintf("axpy %s, tensor %d", what, i), e.download(py[i], k[i]), want, e.d.tol)
			}
			e.launchGrid("to_bf16_multi", Dim3{X: grid, Y: 1}, 256, table)
			bf := make([]uint16, n)
			if err := e.d.ToHost(Uint16Bytes(bf), pbf); err != nil {
				e.t.Fatal(err)
			}
			for j, y := range e.download(py[0], n) {
				if bf[j] != bf16Nearest(y) {
					e.t.Fatalf("to_bf16_multi %s: [%d] = %#x, want %#x", what, j, bf[j], bf16Nearest(y))
				}
			}
			threads := grid * 256
			parts, sum := e.alloc(2*threads), e.alloc(1)
			e.launchGrid("sum_squares_multi_f32", Dim3{X: grid, Y: 2}, 256, parts, table)
			e.launch("sum_f32", 1, 64, sum, parts, 2*threads)
			near(e.t, "sum of squares "+what, e.download(sum, 1), []float64{sq}, e.d.tol)
			e.launchGrid("fill_multi_f32", Dim3{X: grid, Y: 2}, 256, table)
			for i := range k {
				near(e.t, fmt.Sprintf("fill %s, tensor %d", what, i), e.download(py[i], k[i]), make([]float64, k[i]), e.d.tol)
			}
		}
	}
}

// testIDsMask checks the attention masks made from ids: -Inf at the
// padding keys and (causal) at the keys after the query.
func testIDsMask(e *env) {
	const batch, n, pad = 3, 5, 0
	ids := []int32{4, 0, 2, 2, 0, 0, 0, 1, 7, 3, 9, 9, 9, 9, 0}
	pi := e.uploadInts(ids)
	for _, causal := range []int{0, 1} {
		rows := batch
		if causal == 1 {
			rows = batch * n
		}
		pm := e.alloc(rows * n)
		e.launch("ids_mask_f32", 2, 64, pm, pi, batch, n, pad, causal)
		want := make([]float64, rows*n)
		for r := range rows {
			b, i := r, n
			if causal == 1 {
				b, i = r/n, r%n
			}
			for j := range n {
				if j > i || ids[b*n+j] == pad {
					want[r*n+j] = math.Inf(-1)
				}
			}
		}
		got := e.download(pm, rows*n)
		for k, w := range want {
			if float64(got[k]) != w {
				e.t.Errorf("ids_mask causal=%d: [%d] = %v, want %v", causal, k, got[k], w)
			}
		}
	}
}
