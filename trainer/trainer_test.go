package trainer

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/data/sentencepiece"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
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
		grads := graph.HostGradients(map[string]*tensor.Dense{"w": tensor.New(tensor.WithBacking(append([]float64(nil), g...)))})
		if err := adam.Update(params, grads, lr, 1); err != nil {
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

func newFixture(t testing.TB) fixture {
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
	return Options{Steps: steps, Warmup: new(10), LRFactor: new(1.0), Cooldown: steps / 2, Accumulate: 2, ClipNorm: 5,
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
	return wholeRunWith(t, options(t.TempDir(), steps))
}

// wholeRunWith trains a fixture straight through with opt.
func wholeRunWith(t *testing.T, opt Options) fixture {
	t.Helper()
	whole := newFixture(t)
	tr, err := New(whole.m, whole.params, whole.data, opt, Quiet)
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
	interruptedRunWith(t, options(dir, steps), stop)
}

// interruptedRunWith trains a fixture with opt and stops it after step stop.
func interruptedRunWith(t *testing.T, opt Options, stop int) {
	t.Helper()
	first := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	tr1, err := New(first.m, first.params, first.data, opt, stopAt{step: stop, cancel: cancel})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr1.Run(ctx); err != ErrInterrupted {
		t.Fatalf("interrupted run: %v", err)
	}
}

// resumedRunWith resumes the run that interruptedRunWith left in
// opt.OutDir, with a new process's worth of objects, and trains it to its end.
func resumedRunWith(t *testing.T, opt Options) (fixture, *Trainer) {
	t.Helper()
	return resumedRunReporting(t, opt, Quiet)
}

// resumedRunReporting is resumedRunWith with the reporter rep.
func resumedRunReporting(t *testing.T, opt Options, rep Reporter) (fixture, *Trainer) {
	t.Helper()
	f := newFixture(t)
	tr, err := New(f.m, f.params, f.data, opt, rep)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Resume(opt.OutDir); err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f, tr
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
	tr2, _ := New(second.m, second.params, second.data, options(dir, steps), Quiet)
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
	tr2, _ := New(second.m, second.params, second.data, options(dir, steps), Quiet)
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
	opt.EvalEvery, opt.SaveEvery, opt.Warmup, opt.LRFactor = 300, 300, new(30), new(0.3)
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
	f.params.Updated("embed.weight")
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
	if _, err := checkpoint.Read(ck[len(ck)-1]); err != nil {
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

// testAverageSentencePiece averages checkpoints of a run on a
// SentencePiece model: the average records the model's fingerprint, and
// checkpoints of two models are refused.
func testAverageSentencePiece(t *testing.T, f fixture, dir string) {
	var paths []string
	for i, fp := range []string{"s1", "s1", "s2"} {
		paths = append(paths, filepath.Join(dir, "spm"+strconv.Itoa(i)+".safetensors"))
		if err := checkpoint.Save(paths[i], f.m.Config(), f.params, map[string]string{sentencepiece.FingerprintKey: fp}); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "spm-avg.safetensors")
	if err := Average(paths[:2], out); err != nil {
		t.Fatal(err)
	}
	if ck, err := checkpoint.Read(out); err != nil || ck.Meta[sentencepiece.FingerprintKey] != "s1" {
		t.Errorf("averaged weights of a SentencePiece run carry metadata %v (%v), want its fingerprint", ck.Meta, err)
	}
	if err := Average(paths[1:], out); err == nil || !strings.Contains(err.Error(), "spm_sha256 differ") {
		t.Errorf("averaging weights of two SentencePiece models: %v", err)
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
	prints := map[string]string{data.BPEFingerprintKey: "b1", data.VocabFingerprintKey: "v1"}
	if err := checkpoint.Save(a, f.m.Config(), f.params, prints); err != nil {
		t.Fatal(err)
	}
	first := snapshot(f.params)
	for _, n := range f.params.Names() {
		for i, v := range f.params.Value(n).Data().([]float32) {
			f.params.Value(n).Data().([]float32)[i] = 3*v + 1
		}
	}
	other := filepath.Join(dir, "other.safetensors")
	if err := checkpoint.Save(other, f.m.Config(), f.params, map[string]string{data.BPEFingerprintKey: "b1", data.VocabFingerprintKey: "v2"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "avg.safetensors")
	if err := Average([]string{a, other}, out); err == nil || !strings.Contains(err.Error(), "vocab_sha256 differ") {
		t.Fatalf("averaging weights of two vocabularies: %v", err)
	}
	if err := checkpoint.Save(b, f.m.Config(), f.params, prints); err != nil {
		t.Fatal(err)
	}
	if err := Average([]string{a, b}, out); err != nil {
		t.Fatal(err)
	}
	ck, err := checkpoint.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Meta[data.BPEFingerprintKey] != "b1" || ck.Meta[data.VocabFingerprintKey] != "v1" {
		t.Errorf("averaged weights carry metadata %v, want the checkpoints' fingerprints", ck.Meta)
	}
	testAverageSentencePiece(t, f, dir)
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
	bad := []struct {
		change func(o *Options)
		want   string
	}{
		{func(o *Options) { o.Steps = 0 }, "Steps 0: want a number from 1"},
		{func(o *Options) { o.Warmup = new(-1) }, "Warmup -1: want a number from 0"},
		{func(o *Options) { o.Warmup = new(0) }, "Warmup 0: the paper's schedule needs a warm-up of at least 1 update (Schedule constant, linear and cosine take 0)"}, // not the default
		{func(o *Options) { o.Schedule, o.LRFactor, o.Warmup, o.Cooldown = ScheduleConstant, nil, new(0), 0 }, ""},
		{func(o *Options) { o.Accumulate = -1 }, "Accumulate -1: want a number from 1"},
		{func(o *Options) { o.KeepLast = -1 }, "KeepLast -1: want a number from 1"},
		{func(o *Options) { o.LogEvery = -1 }, "LogEvery -1: want a number from 0"},
		{func(o *Options) { o.OutDir = "" }, "OutDir is required"},
		{func(o *Options) { o.Cooldown = -1 }, "Cooldown -1: want a number from 0 to the 10 steps"},
		{func(o *Options) { o.Cooldown = o.Steps + 1 }, "Cooldown 11: want a number from 0 to the 10 steps"},
		{func(o *Options) { o.Optimizer = "sgd" }, `Optimizer "sgd": want one of adam, adamw`},
		{func(o *Options) { o.WeightDecay = new(0.1) }, "WeightDecay 0.1 needs Optimizer adamw"},
		{func(o *Options) { o.WeightDecay = new(0.0) }, "WeightDecay 0 needs Optimizer adamw"}, // given, 0 included
		{func(o *Options) { o.Optimizer, o.WeightDecay = OptimizerAdamW, new(math.NaN()) }, "WeightDecay NaN: want a finite number from 0"},
		{func(o *Options) { o.Schedule = "step" }, `Schedule "step": want one of paper, constant, linear, cosine`},
		{func(o *Options) { o.LR = new(1e-3) }, "give LR (the peak rate) or LRFactor (the paper's schedule's factor), not both: have 0.001 and 1"},
		{func(o *Options) { o.Schedule, o.LRFactor, o.Cooldown, o.Warmup = ScheduleCosine, nil, 0, new(2) }, ""},
		{func(o *Options) { o.Schedule, o.Cooldown = ScheduleCosine, 0 }, "LRFactor is the paper's schedule's; Schedule cosine takes LR"},
		{func(o *Options) { o.Schedule, o.LRFactor, o.Warmup = ScheduleLinear, nil, new(2) }, "Schedule linear decays to the end of the run already: Cooldown 5: want 0"},
		{func(o *Options) { o.Schedule, o.LRFactor, o.Cooldown, o.Warmup = ScheduleLinear, nil, 0, new(10) }, "Schedule linear: warm-up (10) must be shorter than the run (10 steps)"},
		{func(o *Options) { o.Schedule, o.LRFactor, o.LR = ScheduleConstant, nil, new(math.Inf(1)) }, "LR +Inf: want a number in (0, +Inf)"},
		{func(o *Options) { o.ClipNorm = math.NaN() }, "ClipNorm NaN: want a finite number from 0"},
		{func(o *Options) { o.LRFactor, o.LR = nil, new(math.NaN()) }, "LR NaN: want a number in (0, +Inf)"},
		{func(o *Options) { o.LRFactor = new(-1.0) }, "LRFactor -1: want a number in (0, +Inf)"},
		// Given zeros are used or refused, never taken for the defaults.
		{func(o *Options) { o.LRFactor, o.LR = nil, new(0.0) }, "LR 0: want a number in (0, +Inf)"},
		{func(o *Options) { o.LRFactor = new(0.0) }, "LRFactor 0: want a number in (0, +Inf)"},
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, tc := range bad {
		o := good
		tc.change(&o)
		err := o.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("case %d: %v", i, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %d: error %v, want one saying %q", i, err, tc.want)
		}
	}
	// Every bad option in one error.
	err := Options{Steps: -1, Optimizer: "sgd", Accumulate: -2, KeepLast: -1}.Validate()
	for _, want := range []string{"Steps -1: want", `Optimizer "sgd"`, "Accumulate -2: want", "KeepLast -1: want", "OutDir is required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("all bad options at once: %v, want it to say %q", err, want)
		}
	}
}

// TestNonFiniteWeightsAreNeverSaved makes one parameter infinite in a way
// the loss does not see (an embedding row no batch reads): the save stops
// the run naming the step, the parameter and the value, and the last good
// checkpoint stays the newest.
func TestNonFiniteWeightsAreNeverSaved(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	tr, _ := New(f.m, f.params, f.data, options(dir, 3), nil)
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	name := f.params.Names()[len(f.params.Names())-1]
	f.params.Value(name).Data().([]float32)[0] = float32(math.Inf(1))
	if err := tr.checkFinite(); err == nil || !strings.Contains(err.Error(), "step 3: parameter "+name+" holds +Inf") {
		t.Fatalf("checkFinite: %v", err)
	}
	if _, err := tr.save(); err == nil {
		t.Fatal("saved infinite weights")
	}
	if ck, _ := Checkpoints(dir); len(ck) == 0 || !strings.HasSuffix(ck[len(ck)-1], "step-00000003.safetensors") {
		t.Fatalf("checkpoints after the refused save: %v", ck)
	}
}

func TestPerplexityIsFinite(t *testing.T) {
	for _, tc := range []struct{ loss, want float64 }{{0, 1}, {math.Log(5), 5}, {709, math.Exp(709)}, {800, math.MaxFloat64}} {
		if got := perplexity(tc.loss); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("perplexity(%v) = %v, want %v", tc.loss, got, tc.want)
		}
	}
}

// TestOptionsDefaults checks that options left out mean the documented
// defaults, and that given zeros are kept.
func TestOptionsDefaults(t *testing.T) {
	got := Options{Steps: 100, OutDir: "out"}.WithDefaults()
	want := Options{Steps: 100, OutDir: "out", Optimizer: OptimizerAdam, Schedule: SchedulePaper, LRFactor: new(1.0), Warmup: new(10),
		Accumulate: 1, EvalEvery: 10, SaveEvery: 10, KeepLast: DefaultKeepLast}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	if w := *(Options{Steps: 100000}).WithDefaults().Warmup; w != DefaultWarmup {
		t.Errorf("warm-up of a long run %d, want the paper's %d", w, DefaultWarmup)
	}
	aw := Options{Steps: 100, Optimizer: OptimizerAdamW, Schedule: ScheduleConstant}.WithDefaults()
	if *aw.WeightDecay != DefaultWeightDecay || *aw.LR != DefaultLR || *aw.Warmup != 0 || aw.LRFactor != nil {
		t.Errorf("AdamW with a constant rate: %+v", aw)
	}
	zeros := Options{Steps: 100, Optimizer: OptimizerAdamW, WeightDecay: new(0.0), Schedule: ScheduleCosine, Warmup: new(0)}.WithDefaults()
	if *zeros.WeightDecay != 0 || *zeros.Warmup != 0 {
		t.Errorf("given zeros became defaults: weight decay %v, warm-up %v", *zeros.WeightDecay, *zeros.Warmup)
	}
	if err := (Options{Steps: 3, OutDir: "out"}).Validate(); err != nil {
		t.Errorf("only the required options: %v", err)
	}
}

// TestOptionsMessageNamesOnlyWhatWasGiven gives LRFactor to the cosine
// schedule: the error names LRFactor, not a default LR never given.
func TestOptionsMessageNamesOnlyWhatWasGiven(t *testing.T) {
	err := Options{Steps: 10, OutDir: "out", Schedule: ScheduleCosine, LRFactor: new(2.0)}.Validate()
	if err == nil || !strings.Contains(err.Error(), "LRFactor is the paper's schedule's; Schedule cosine takes LR") ||
		strings.Contains(err.Error(), "not both") || strings.Contains(err.Error(), "0.001") {
		t.Errorf("cosine with LRFactor 2: %v", err)
	}
}

// TestProblemsNameOptionsTheCallersWay names the options of Validate's
// problems as a command names its flags, and their values as it was given
// them.
func TestProblemsNameOptionsTheCallersWay(t *testing.T) {
	err := Options{Steps: 10, OutDir: "out", LR: new(1e-3), LRFactor: new(2.0), LogEvery: -1}.Validate()
	ps, ok := err.(Problems)
	if !ok {
		t.Fatalf("error %v (%T), want Problems", err, err)
	}
	flags := func(g Given) Given {
		if g.Field == "LogEvery" {
			g.Value = "minus one"
		}
		return Given{Field: "-" + Field(strings.ToLower(string(g.Field))), Value: g.Value}
	}
	want := "give -lr (the peak rate) or -lrfactor (the paper's schedule's factor), not both: have 0.001 and 2; -logevery minus one: want a number from 0"
	if got := ps.Say(flags); got != want {
		t.Errorf("named as flags:\n%s\nwant\n%s", got, want)
	}
	if got := err.Error(); !strings.HasPrefix(got, "bad training options: give LR (the peak rate) or LRFactor") {
		t.Errorf("as Options names them: %s", got)
	}
}

// TestNewPreparesOutDir checks that New creates a missing output directory
// and refuses one it cannot use, before any work.
func TestNewPreparesOutDir(t *testing.T) {
	fx := newFixture(t)
	dir := filepath.Join(t.TempDir(), "a", "b")
	if _, err := New(fx.m, fx.params, fx.data, Options{Steps: 1, OutDir: dir}, Quiet); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("New did not create %s: %v", dir, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("New left files in %s: %v", dir, entries)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	for _, out := range []string{file, filepath.Join(file, "sub")} {
		if _, err := New(fx.m, fx.params, fx.data, Options{Steps: 1, OutDir: out}, Quiet); err == nil || !strings.Contains(err.Error(), "output directory "+out) {
			t.Errorf("OutDir %s: error %v", out, err)
		}
	}
}

// TestSchedules checks each schedule's rate against its formula at
// warm-up, its peak, the middle of the decay and the last step.
func TestSchedules(t *testing.T) {
	const peak = 5e-4
	tests := []struct {
		s    Schedule
		step int
		want float64
	}{
		{Schedule{Kind: ScheduleConstant, Peak: peak, Steps: 100}, 1, peak},
		{Schedule{Kind: ScheduleConstant, Peak: peak, Steps: 100, Warmup: 10}, 5, peak / 2},
		{Schedule{Kind: ScheduleConstant, Peak: peak, Steps: 100, Warmup: 10}, 100, peak},
		{Schedule{Kind: ScheduleConstant, Peak: peak, Steps: 100, Cooldown: 50}, 100, peak / 50},
		{Schedule{Kind: ScheduleLinear, Peak: peak, Steps: 110, Warmup: 10}, 5, peak / 2},
		{Schedule{Kind: ScheduleLinear, Peak: peak, Steps: 110, Warmup: 10}, 10, peak},
		{Schedule{Kind: ScheduleLinear, Peak: peak, Steps: 110, Warmup: 10}, 11, peak},
		{Schedule{Kind: ScheduleLinear, Peak: peak, Steps: 110, Warmup: 10}, 61, peak / 2},
		{Schedule{Kind: ScheduleLinear, Peak: peak, Steps: 110, Warmup: 10}, 110, peak / 100},
		{Schedule{Kind: ScheduleCosine, Peak: peak, Steps: 110, Warmup: 10}, 10, peak},
		{Schedule{Kind: ScheduleCosine, Peak: peak, Steps: 110, Warmup: 10}, 11, peak},
		{Schedule{Kind: ScheduleCosine, Peak: peak, Steps: 110, Warmup: 10}, 61, peak / 2},
		{Schedule{Kind: ScheduleCosine, Peak: peak, Steps: 110, Warmup: 10}, 36, peak * (1 + math.Sqrt(0.5)) / 2},
		{Schedule{Kind: ScheduleCosine, Peak: peak, Steps: 110, Warmup: 10}, 110, peak * (1 + math.Cos(math.Pi*0.99)) / 2},
		// The paper's with its peak given directly: the same curve as its factor gives.
		{Schedule{DModel: 512, Warmup: 4000, Peak: peak}, 4000, peak},
		{Schedule{DModel: 512, Warmup: 4000, Peak: peak}, 16000, peak / 2},
		{Schedule{DModel: 512, Warmup: 4000, Peak: math.Pow(512*4000, -0.5)}, 77, Schedule{DModel: 512, Warmup: 4000, Factor: 1}.At(77)},
	}
	for _, tc := range tests {
		if err := tc.s.Validate(); err != nil {
			t.Errorf("%+v: %v", tc.s, err)
		}
		if got := tc.s.At(tc.step); math.Abs(got-tc.want) > 1e-12*tc.want {
			t.Errorf("%s lr(%d) = %g, want %g", tc.s.Kind, tc.step, got, tc.want)
		}
	}
}

// TestAdamWMatchesItsFormula checks AdamW's decoupled decay: matrices are
// decayed, θ·(1 - lr·λ) before Adam's step, vectors (biases, gains) not.
func TestAdamWMatchesItsFormula(t *testing.T) {
	params, _ := graph.NewParams(tensor.Float64, rand.New(rand.NewPCG(1, 1)))
	w, _ := params.Get("w", tensor.Shape{1, 2}, graph.Zeros)
	b, _ := params.Get("b", tensor.Shape{2}, graph.Zeros)
	copy(w.Data().([]float64), []float64{1, -2})
	copy(b.Data().([]float64), []float64{1, -2})
	const decay = 0.1
	adam, err := NewAdamW(params, decay)
	if err != nil {
		t.Fatal(err)
	}
	wantW, wantB := []float64{1, -2}, []float64{1, -2}
	m, v := []float64{0, 0}, []float64{0, 0}
	for step, g := range [][]float64{{0.5, -3}, {-1, 2}} {
		lr := 0.1 * float64(step+1)
		grads := map[string]*tensor.Dense{
			"w": tensor.New(tensor.WithShape(1, 2), tensor.WithBacking(append([]float64(nil), g...))),
			"b": tensor.New(tensor.WithBacking(append([]float64(nil), g...))),
		}
		if err := adam.Update(params, graph.HostGradients(grads), lr, 1); err != nil {
			t.Fatal(err)
		}
		tt := float64(step + 1)
		for i := range wantW {
			m[i] = 0.9*m[i] + 0.1*g[i]
			v[i] = 0.98*v[i] + 0.02*g[i]*g[i]
			adamStep := lr * (m[i] / (1 - math.Pow(0.9, tt))) / (math.Sqrt(v[i]/(1-math.Pow(0.98, tt))) + 1e-9)
			wantW[i] = wantW[i]*(1-lr*decay) - adamStep
			wantB[i] -= adamStep
		}
	}
	for i := range wantW {
		if got := w.Data().([]float64)[i]; math.Abs(got-wantW[i]) > 1e-12 {
			t.Errorf("w[%d] = %.15g, want %.15g", i, got, wantW[i])
		}
		if got := b.Data().([]float64)[i]; math.Abs(got-wantB[i]) > 1e-12 {
			t.Errorf("b[%d] = %.15g, want %.15g (biases are not decayed)", i, got, wantB[i])
		}
	}
	if _, err := NewAdamW(params, -1); err == nil {
		t.Error("NewAdamW took a negative decay")
	}
}

// TestResumeIsExactForEachOptimizerAndSchedule stops and resumes a run of
// each optimizer and schedule, and checks its weights are those of a run
// never interrupted (and differ from the other settings' runs, so that
// the settings are in effect).
func TestResumeIsExactForEachOptimizerAndSchedule(t *testing.T) {
	const steps = 8
	var runs []fixture
	for _, opt := range []Options{
		{Optimizer: OptimizerAdam, Schedule: SchedulePaper, LR: new(3e-3), Warmup: new(3), Cooldown: 2},
		{Optimizer: OptimizerAdamW, WeightDecay: new(0.5), Schedule: ScheduleConstant, LR: new(3e-3)},
		{Optimizer: OptimizerAdamW, WeightDecay: new(0.5), Schedule: ScheduleLinear, LR: new(3e-3), Warmup: new(2)},
		{Optimizer: OptimizerAdamW, Schedule: ScheduleCosine, LR: new(3e-3), Warmup: new(2)},
	} {
		t.Run(opt.Optimizer+"-"+opt.Schedule, func(t *testing.T) {
			opt.Steps, opt.Accumulate, opt.EvalEvery, opt.SaveEvery, opt.KeepLast, opt.Seed = steps, 2, 4, 3, 2, 9
			opt.OutDir = t.TempDir()
			whole := wholeRunWith(t, opt)
			opt.OutDir = t.TempDir()
			interruptedRunWith(t, opt, 5)
			second := newFixture(t)
			tr, err := New(second.m, second.params, second.data, opt, Quiet)
			if err != nil {
				t.Fatal(err)
			}
			if r, err := tr.Resume(opt.OutDir); err != nil || r.Step != 5 {
				t.Fatalf("resumed at %+v: %v", r, err)
			}
			if err := tr.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			assertSameWeights(t, whole, second)
			for _, other := range runs {
				if reflect.DeepEqual(snapshot(other.params), snapshot(whole.params)) {
					t.Errorf("the same weights as another optimizer's or schedule's run")
				}
			}
			runs = append(runs, whole)
		})
	}
}
