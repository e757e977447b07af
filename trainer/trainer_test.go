package trainer

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

func TestSchedule(t *testing.T) {
	s := Schedule{DModel: 512, Warmup: 4000, Factor: 1}
	peak := math.Pow(512, -0.5) * math.Pow(4000, -0.5)
	tests := []struct {
		step int
		want float64
	}{
		{1, math.Pow(512, -0.5) * math.Pow(4000, -1.5)},
		{2000, peak / 2},
		{4000, peak},
		{16000, peak / 2},
	}
	for _, tc := range tests {
		if got := s.At(tc.step); math.Abs(got-tc.want) > 1e-12*tc.want {
			t.Errorf("lr(%d) = %g, want %g", tc.step, got, tc.want)
		}
	}
}

// TestScheduleCooldown checks the linear decay of the run's last updates:
// untouched before it, a fraction (Steps − step + 1)/Cooldown within it.
func TestScheduleCooldown(t *testing.T) {
	paper := Schedule{DModel: 128, Warmup: 100, Factor: 0.5}
	s := paper
	s.Steps, s.Cooldown = 450, 150
	tests := []struct {
		step     int
		fraction float64
	}{
		{1, 1}, {100, 1}, {300, 1}, {301, 1}, {302, 149.0 / 150}, {375, 76.0 / 150}, {450, 1.0 / 150},
	}
	for _, tc := range tests {
		want := paper.At(tc.step) * tc.fraction
		if got := s.At(tc.step); math.Abs(got-want) > 1e-12*want {
			t.Errorf("lr(%d) = %g, want %g", tc.step, got, want)
		}
	}
}

func TestAdamMatchesItsFormula(t *testing.T) {
	params, _ := graph.NewParams(tensor.Float64, rand.New(rand.NewPCG(1, 1)))
	theta, _ := params.Get("w", tensor.Shape{2}, graph.Zeros)
	copy(theta.Data().([]float64), []float64{1, -2})
	adam, err := NewAdam(params)
	if err != nil {
		t.Fatal(err)
	}
	g1, g2 := []float64{0.5, -3}, []float64{-1, 2}
	want := []float64{1, -2}
	m, v := []float64{0, 0}, []float64{0, 0}
	for step, g := range [][]float64{g1, g2} {
		lr := 0.1 * float64(step+1)
		if err := adam.Update(params, map[string]*tensor.Dense{"w": tensor.New(tensor.WithBacking(append([]float64(nil), g...)))}, lr); err != nil {
			t.Fatal(err)
		}
		tt := float64(step + 1)
		for i := range want {
			m[i] = 0.9*m[i] + 0.1*g[i]
			v[i] = 0.98*v[i] + 0.02*g[i]*g[i]
			want[i] -= lr * (m[i] / (1 - math.Pow(0.9, tt))) / (math.Sqrt(v[i]/(1-math.Pow(0.98, tt))) + 1e-9)
		}
	}
	for i, w := range want {
		if got := theta.Data().([]float64)[i]; math.Abs(got-w) > 1e-12 {
			t.Errorf("θ[%d] = %.15g, want %.15g", i, got, w)
		}
	}
}

// fixture is a very small model on the copy task.
type fixture struct {
	m      model.Model
	params *graph.Params
	data   Data
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	task, err := data.NewTask("copy", data.TaskConfig{Symbols: 6, MinLen: 1, MaxLen: 5})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	train := make([]data.Example, 400)
	for i := range train {
		train[i] = task.Sample(rng)
	}
	b, err := data.NewBatcher(train, data.BatchConfig{MaxTokens: 128, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	held := task.HeldOut(32)
	valid, err := b.EvalBatches(held)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := model.Preset("tiny", task.VocabSize())
	cfg.DModel, cfg.Heads, cfg.DFF, cfg.EncoderLayers, cfg.DecoderLayers = 16, 2, 32, 1, 1
	m, err := model.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	return fixture{m: m, params: params, data: Data{Train: b, Valid: valid, HeldOut: held}}
}

func options(dir string, steps int) Options {
	return Options{Steps: steps, Warmup: 10, LRFactor: 1, Cooldown: steps / 2, Accumulate: 2, ClipNorm: 5,
		EvalEvery: 4, SaveEvery: 3, KeepLast: 2, Seed: 9, OutDir: dir}
}

// stopAt cancels the run after the given step, as Ctrl-C would.
type stopAt struct {
	quiet
	step   int
	cancel context.CancelFunc
}

func (s stopAt) Step(i StepInfo) {
	if i.Step == s.step {
		s.cancel()
	}
}

// wholeRun trains a fixture straight through for steps updates.
func wholeRun(t *testing.T, steps int) fixture {
	t.Helper()
	whole := newFixture(t)
	tr, err := New(whole.m, whole.params, whole.data, options(t.TempDir(), steps), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return whole
}

// interruptedRun trains a fixture in dir and stops it after step stop, as
// Ctrl-C would (which saves a checkpoint).
func interruptedRun(t *testing.T, dir string, steps, stop int) {
	t.Helper()
	first := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	tr1, _ := New(first.m, first.params, first.data, options(dir, steps), stopAt{step: stop, cancel: cancel})
	if err := tr1.Run(ctx); err != ErrInterrupted {
		t.Fatalf("interrupted run: %v", err)
	}
}

// assertSameWeights fails t unless a and b are bit-identical.
func assertSameWeights(t *testing.T, a, b fixture) {
	t.Helper()
	for _, name := range a.params.Names() {
		x, y := a.params.Value(name).Data().([]float32), b.params.Value(name).Data().([]float32)
		for i := range x {
			if x[i] != y[i] {
				t.Fatalf("%s[%d]: %v uninterrupted, %v resumed", name, i, x[i], y[i])
			}
		}
	}
}

func TestResumeIsExact(t *testing.T) {
	const steps = 8
	whole := wholeRun(t, steps)
	dir := t.TempDir()
	interruptedRun(t, dir, steps, 5)
	// Resumed by a new process's worth of objects.
	second := newFixture(t)
	tr2, _ := New(second.m, second.params, second.data, options(dir, steps), nil)
	r, err := tr2.Resume(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tr2.Step() != 5 || r.Step != 5 || len(r.Skipped) != 0 || r.TornMetrics {
		t.Fatalf("resumed at step %d (%+v), want 5 with nothing skipped", tr2.Step(), r)
	}
	if err := tr2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertSameWeights(t, whole, second)
	ms, err := ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Step != 4 || ms[1].Step != 8 {
		t.Fatalf("metrics of the resumed run: %+v", ms)
	}
	for _, f := range []string{"final.safetensors", "best.safetensors", "loss.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if ck, _ := Checkpoints(dir); len(ck) != 2 {
		t.Errorf("kept checkpoints %v, want the last 2", ck)
	}
}

// TestResumeFallsBackAndRepairs damages what a kill can damage, the newest
// checkpoint and the last metrics line, and resumes from the checkpoint
// before to the same weights.
func TestResumeFallsBackAndRepairs(t *testing.T) {
	const steps = 8
	whole := wholeRun(t, steps)
	dir := t.TempDir()
	interruptedRun(t, dir, steps, 5) // checkpoints of steps 3 and 5
	newest := filepath.Join(dir, "checkpoints", "step-00000005.safetensors")
	if err := os.Truncate(newest, 100); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(dir, "metrics.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"step": 6, "train_lo`)
	f.Close()
	second := newFixture(t)
	tr2, _ := New(second.m, second.params, second.data, options(dir, steps), nil)
	r, err := tr2.Resume(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Step != 3 || len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0].Error(), newest) || !r.TornMetrics {
		t.Fatalf("resumed %+v, want step 3 after skipping %s, with the torn metrics line dropped", r, newest)
	}
	if err := tr2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertSameWeights(t, whole, second)
	if ms, err := ReadMetrics(filepath.Join(dir, "metrics.jsonl")); err != nil || len(ms) != 2 {
		t.Fatalf("metrics after the repaired resume: %+v, %v", ms, err)
	}
}

func TestResumeRefuses(t *testing.T) {
	dir := t.TempDir()
	interruptedRun(t, dir, 8, 5)
	fx := newFixture(t)
	tr, _ := New(fx.m, fx.params, fx.data, options(dir, 4), nil)
	if _, err := tr.Resume(dir); err == nil || !strings.Contains(err.Error(), "checkpoint of step 5, past this run's last step 4") {
		t.Errorf("resume with fewer steps than done: %v", err)
	}
	for _, st := range []state{{Step: 1e9}, {Step: -100}, {Step: 5, ElapsedS: math.NaN()}, {Step: 5, ElapsedS: -1}} {
		if err := st.check(5); err == nil {
			t.Errorf("state %+v of step 5 accepted", st)
		}
	}
	if err := (state{Step: 5, ElapsedS: 12}).check(5); err != nil {
		t.Error(err)
	}
}

func TestTrainingLearnsToCopy(t *testing.T) {
	f := newFixture(t)
	opt := options(t.TempDir(), 300)
	opt.EvalEvery, opt.SaveEvery, opt.Warmup, opt.LRFactor = 300, 300, 30, 0.3
	tr, _ := New(f.m, f.params, f.data, opt, nil)
	before, err := tr.Evaluate()
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	after, err := tr.Evaluate()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("validation loss %.3f → %.3f, accuracy %.3f → %.3f", before.Loss(), after.Loss(), before.Accuracy(), after.Accuracy())
	if !(after.Loss() < 0.25*before.Loss()) || !(after.Accuracy() > 0.9) {
		t.Fatalf("validation loss %.3f → %.3f, accuracy %.3f → %.3f: not learning", before.Loss(), after.Loss(), before.Accuracy(), after.Accuracy())
	}
}

func TestNonFiniteLossStopsTheRun(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	tr, _ := New(f.m, f.params, f.data, options(dir, 3), nil)
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := f.params.Value("embed.weight").Data().([]float32)
	for i := range w {
		w[i] = float32(math.NaN())
	}
	opt := options(dir, 6)
	tr2, _ := New(f.m, f.params, f.data, opt, nil)
	err := tr2.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "NaN") || !strings.Contains(err.Error(), "checkpoints") {
		t.Fatalf("error %v, want one about the NaN loss naming the checkpoints", err)
	}
	ck, _ := Checkpoints(dir)
	if len(ck) == 0 || !strings.HasSuffix(ck[len(ck)-1], "step-00000003.safetensors") {
		t.Fatalf("checkpoints after the failure: %v", ck)
	}
	if _, err := model.LoadCheckpoint(ck[len(ck)-1]); err != nil {
		t.Fatal(err)
	}
}

func TestEvaluationLeavesTrainingStateAlone(t *testing.T) {
	f := newFixture(t)
	tr, _ := New(f.m, f.params, f.data, options(t.TempDir(), 1), nil)
	before := snapshot(f.params)
	rng, _ := tr.pcg.MarshalBinary()
	pos := f.data.Train.State()
	if _, err := tr.Evaluate(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.ExactMatch(); err != nil {
		t.Fatal(err)
	}
	after := snapshot(f.params)
	for name, v := range before {
		for i := range v {
			if v[i] != after[name][i] {
				t.Fatalf("evaluation changed %s", name)
			}
		}
	}
	rng2, _ := tr.pcg.MarshalBinary()
	if string(rng) != string(rng2) || pos != f.data.Train.State() {
		t.Fatal("evaluation moved the dropout generator or the data position")
	}
}

func snapshot(p *graph.Params) map[string][]float64 {
	s := map[string][]float64{}
	for _, n := range p.Names() {
		s[n] = graph.Float64s(p.Value(n))
	}
	return s
}

func TestAverage(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.safetensors"), filepath.Join(dir, "b.safetensors")
	if err := model.SaveCheckpoint(a, f.m.Config(), f.params, nil); err != nil {
		t.Fatal(err)
	}
	first := snapshot(f.params)
	for _, n := range f.params.Names() {
		for i, v := range f.params.Value(n).Data().([]float32) {
			f.params.Value(n).Data().([]float32)[i] = 3*v + 1
		}
	}
	if err := model.SaveCheckpoint(b, f.m.Config(), f.params, nil); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "avg.safetensors")
	if err := Average([]string{a, b}, out); err != nil {
		t.Fatal(err)
	}
	ck, err := model.LoadCheckpoint(out)
	if err != nil {
		t.Fatal(err)
	}
	_, avg, err := ck.Model(tensor.Float64, nil)
	if err != nil {
		t.Fatal(err)
	}
	for n, v := range first {
		for i, x := range v {
			want := (x + float64(float32(3*float32(x)+1))) / 2
			if got := avg.Value(n).Data().([]float64)[i]; math.Abs(got-want) > 1e-6 {
				t.Fatalf("%s[%d] = %g, want %g", n, i, got, want)
			}
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	good := options("out", 10)
	bad := []func(o *Options){
		func(o *Options) { o.Steps = 0 },
		func(o *Options) { o.Warmup = -1 },
		func(o *Options) { o.Accumulate = 0 },
		func(o *Options) { o.KeepLast = 0 },
		func(o *Options) { o.OutDir = "" },
		func(o *Options) { o.Cooldown = -1 },
		func(o *Options) { o.Cooldown = o.Steps + 1 },
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, change := range bad {
		o := good
		change(&o)
		if o.Validate() == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}
