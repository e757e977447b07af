package graph

import (
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	blas "github.com/transformer-go/transformer/graph/internal/gemm"
)

// bf16Copies is the BF16 packed copies p holds, by key.
func bf16Copies(p *Params) map[packKey]any {
	out := map[packKey]any{}
	for key, pb := range p.packs.copies {
		if key.bf16 {
			out[key] = pb
		}
	}
	return out
}

// TestBF16PacksLiveUntilUpdated checks the life of a weight's BF16 packed
// copies once changes are announced (Params.Updated): one of op(w) for
// the forward product and one of op(w)ᵀ for the input gradient, made at
// the first run, reused by the next runs (a change that is not announced
// goes unseen, which shows it), kept through a freeze, dropped when w is
// Updated or Set, and not when another parameter is; before any
// announcement, no copy outlives a run. keepWidened stands in for a CPU
// whose copies are bfloat16 where they are not.
func TestBF16PacksLiveUntilUpdated(t *testing.T) {
	params := newTestParams(t, tensor.Float32)
	params.packs.keepWidened = !blas.BF16Halves()
	c := newProductCase(params, "affine", true, 80, 70, 49)
	p, err := Compile(newTestRuntime(t, BF16), c.s, c.loss, map[string]*G.Node{"y": c.y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c.check(t, p, "affine", true)
	if n := len(params.packs.copies); n != 0 {
		t.Fatalf("%d copies outlive a run before any change is announced", n)
	}
	params.Updated()
	c.check(t, p, "affine", true)
	first := bf16Copies(params)
	if len(first) != 2 {
		t.Fatalf("%d BF16 copies after a run, want 2 (op(w) and op(w)ᵀ): %v", len(first), first)
	}
	w := params.Value("w").Float32s()
	y0 := Float64s(p.Output("y"))
	w[0] += 1 // not announced: the copies stay
	runProgram(t, p)
	if y := Float64s(p.Output("y")); !equalFloats(y, y0) {
		t.Error("the run after an unannounced change did not reuse the packed copy")
	}
	for key, pb := range bf16Copies(params) {
		if first[key] != pb {
			t.Errorf("copy %+v was made again", key)
		}
	}
	defer params.Freeze()()
	params.Updated("b")
	if len(bf16Copies(params)) != 2 {
		t.Error("updating b (or freezing) dropped w's copies")
	}
	params.Updated("w")
	if len(bf16Copies(params)) != 0 {
		t.Error("updating w left its copies")
	}
	c.check(t, p, "affine", true) // with w[0] changed
	if err := params.Set("w", params.Value("w")); err != nil {
		t.Fatal(err)
	}
	if len(bf16Copies(params)) != 0 {
		t.Error("Set left the copies")
	}
}

// TestBF16PacksWidened checks that on a CPU whose BF16 copies are float32
// none outlives an unfrozen run, changes announced or not.
func TestBF16PacksWidened(t *testing.T) {
	if blas.BF16Halves() {
		t.Skip("this CPU's BF16 copies are bfloat16 (TestBF16PacksLiveUntilUpdated checks them)")
	}
	params := newTestParams(t, tensor.Float32)
	params.Updated()
	c := newProductCase(params, "affine", false, 80, 70, 49)
	p, err := Compile(newTestRuntime(t, BF16), c.s, c.loss, map[string]*G.Node{"y": c.y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c.check(t, p, "affine", false)
	if n := len(params.packs.copies); n != 0 {
		t.Errorf("%d widened copies outlive an unfrozen run", n)
	}
}

func runProgram(t *testing.T, p *Program) {
	t.Helper()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
}

// stepAllocs is the bytes and the allocations per run of p followed by
// the announcement that w changed, as a training step's.
func stepAllocs(t *testing.T, p *Program, params *Params) (bytes, allocs float64) {
	t.Helper()
	step := func() {
		runProgram(t, p)
		params.Updated("w")
	}
	step()
	runtime.GC()
	var before, after runtime.MemStats
	const runs = 50
	runtime.ReadMemStats(&before)
	for range runs {
		step()
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / runs, float64(after.Mallocs-before.Mallocs) / runs
}

// TestBF16StepAllocations checks that a step of BF16 products whose
// weight copies are kept (and packed again into their memory after every
// update) allocates no more than the same step in float32, give or take
// a few small objects and the scratch buffers that a garbage collection
// takes from the GEMM's pools: not the copies' size (2 × 125 KB).
func TestBF16StepAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector include the items its sync.Pool drops at random")
	}
	var bytes, allocs [2]float64
	for i, prec := range []Precision{BF16, Float32} {
		params := newTestParams(t, tensor.Float32)
		params.packs.keepWidened = true
		params.Updated()
		c := newProductCase(params, "affine", true, 256, 200, 160)
		p, err := Compile(newTestRuntime(t, prec), c.s, c.loss, map[string]*G.Node{"y": c.y})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.Set("r", c.r); err != nil {
			t.Fatal(err)
		}
		bytes[i], allocs[i] = stepAllocs(t, p, params)
	}
	t.Logf("per step: bf16 %.0f B in %.1f allocations, float32 %.0f B in %.1f", bytes[0], allocs[0], bytes[1], allocs[1])
	if bytes[0] > bytes[1]+64<<10 || allocs[0] > allocs[1]+16 {
		t.Errorf("a BF16 step allocates %.0f B in %.1f allocations, float32 %.0f B in %.1f", bytes[0], allocs[0], bytes[1], allocs[1])
	}
}
