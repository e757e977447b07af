package graph

import (
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bf16Copies is the BF16 packed copies that rt holds, by key.
func bf16Copies(rt *Runtime) map[packKey]any {
	out := map[packKey]any{}
	for key, c := range hostOf(rt).packs.copies {
		if key.bf16 && c.current {
			out[key] = c.pack
		}
	}
	return out
}

// TestBF16PacksLiveUntilUpdated checks the life of a weight's BF16 packed
// copies: one of op(w) for the forward product and one of op(w)ᵀ for the
// input gradient, made at the first run (keepFirst, as for the batches of
// an accumulated step), reused by the next runs (a change that is not
// announced goes unseen, which shows it), made again into the same memory
// when w is Updated or Set, and not when another parameter is.
func TestBF16PacksLiveUntilUpdated(t *testing.T) {
	params := newTestParams(t, tensor.Float32)
	rt := newTestRuntime(t, BF16)
	hostOf(rt).packs.keepFirst = true
	c := newProductCase(params, "affine", true, 80, 70, 49)
	p, err := Compile(rt, c.s, c.loss, map[string]*G.Node{"y": c.y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c.check(t, p, "affine", true)
	first := bf16Copies(rt)
	if len(first) != 2 {
		t.Fatalf("%d BF16 copies after a run, want 2 (op(w) and op(w)ᵀ): %v", len(first), first)
	}
	w := params.Value("w").Float32s()
	y0 := Float64s(p.Output("y"))
	w[0] += 1 // not announced: the copies are read
	runProgram(t, p)
	if y := Float64s(p.Output("y")); !equalFloats(y, y0) {
		t.Error("the run after an unannounced change did not reuse the packed copy")
	}
	sameCopies := func(what string) {
		t.Helper()
		now := bf16Copies(rt)
		for key, pb := range first {
			if now[key] != pb {
				t.Errorf("%s: copy %+v was not packed into the first one's memory", what, key)
			}
		}
	}
	sameCopies("a second run")
	params.Updated("b")
	runProgram(t, p)
	if y := Float64s(p.Output("y")); !equalFloats(y, y0) {
		t.Error("updating b made w's copies again")
	}
	params.Updated("w")
	c.check(t, p, "affine", true) // with w[0] changed
	sameCopies("after Updated")
	w[0] -= 1
	if err := params.Set("w", params.Value("w")); err != nil {
		t.Fatal(err)
	}
	c.check(t, p, "affine", true)
	sameCopies("after Set")
}

// TestBF16PacksAtSecondRead checks that no BF16 copy is made before a
// second product reads a version of the weight: a training step that
// reads each version once makes none, and holds no memory for one.
func TestBF16PacksAtSecondRead(t *testing.T) {
	params := newTestParams(t, tensor.Float32)
	rt := newTestRuntime(t, BF16)
	c := newProductCase(params, "affine", false, 80, 70, 49)
	p, err := Compile(rt, c.s, c.loss, map[string]*G.Node{"y": c.y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for range 2 {
		c.check(t, p, "affine", false)
		params.Updated()
	}
	if n := len(bf16Copies(rt)); n != 0 {
		t.Errorf("%d copies of versions read once", n)
	}
	c.check(t, p, "affine", false)
	c.check(t, p, "affine", false)
	if n := len(bf16Copies(rt)); n != 2 {
		t.Errorf("%d copies of a version read twice, want 2", n)
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
		rt := newTestRuntime(t, prec)
		hostOf(rt).packs.keepFirst = true
		c := newProductCase(params, "affine", true, 256, 200, 160)
		p, err := Compile(rt, c.s, c.loss, map[string]*G.Node{"y": c.y})
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
