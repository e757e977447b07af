package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/sysmem"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/decode"
	"github.com/transformer-go/transformer/trainer"
)

// The decoding rows: the tiny preset with this vocabulary, sources of
// decodeSrcLen tokens (EOS included), outputs of up to decodeMaxLen.
const (
	decodeVocab  = 8000
	decodeSrcLen = 16
	decodeMaxLen = 32
	// maxBatch is the largest batch a row takes.
	maxBatch = 1024
)

// row is one measurement: a kind (train, forward, greedy, beam4), the model
// and batch (and for train and forward, the length of sources and targets),
// and each side's tokens per second and peak RSS in MB.
type row struct {
	Kind   string `json:"kind"`
	Preset string `json:"preset"`
	Vocab  int    `json:"vocab"`
	Batch  int    `json:"batch,omitempty"`
	Len    int    `json:"len,omitempty"`
	// Precision is that of both sides' products (graph.Precision; "":
	// float32): PyTorch's bf16 runs under torch.autocast.
	Precision string `json:"precision,omitempty"`
	// Device is where ours run (graph.Device; "": the CPU).
	Device string `json:"device,omitempty"`

	Ours    float64 `json:"ours"`
	OursMB  float64 `json:"ours_mb"`
	Torch   float64 `json:"torch,omitempty"`
	TorchMB float64 `json:"torch_mb,omitempty"`
	// Ratio is the median over rounds of Ours / Torch.
	Ratio float64 `json:"ratio,omitempty"`
}

// name is the row's label in the table.
func (r row) name() string {
	kind := r.Kind
	if r.Device != "" && r.Device != string(graph.DeviceCPU) {
		kind += " " + r.Device
	}
	if r.precision() != graph.Float32 {
		kind += " " + string(r.precision())
	}
	switch {
	case r.Len > 0 && (r.Batch != 32 || r.Len != 32): // the default shape goes unsaid
		return fmt.Sprintf("%s %dx%d, %s V%d", kind, r.Batch, r.Len, r.Preset, r.Vocab)
	case r.Len == 0 && r.Batch > 0:
		return fmt.Sprintf("%s batch %d, %s V%d", kind, r.Batch, r.Preset, r.Vocab)
	}
	return fmt.Sprintf("%s, %s V%d", kind, r.Preset, r.Vocab)
}

// precision is the row's precision; rows hold only ones -precision
// accepted.
func (r row) precision() graph.Precision {
	p, _ := graph.ParsePrecision(r.Precision)
	return p
}

// runtime opens the runtime of the row's device and precision.
func (r row) runtime() (*graph.Runtime, error) {
	return graph.NewRuntime(graph.Device(r.Device), r.precision())
}

// measureRounds measures the rows o.rounds times, ours and PyTorch's in
// turn, and keeps the medians of the speeds and of the rounds' ratios, and
// the largest peak RSS: a machine whose speed drifts then moves both sides
// alike, and one slow round moves no median.
func (o options) measureRounds(rows []row) error {
	rounds := make([][]row, o.rounds)
	for i := range rounds {
		rounds[i] = slices.Clone(rows)
		if err := o.measure(rounds[i]); err != nil {
			return err
		}
	}
	for j := range rows {
		var ours, torch, ratio []float64
		for _, r := range rounds {
			ours, torch = append(ours, r[j].Ours), append(torch, r[j].Torch)
			ratio = append(ratio, r[j].Ours/r[j].Torch)
			rows[j].OursMB, rows[j].TorchMB = max(rows[j].OursMB, r[j].OursMB), max(rows[j].TorchMB, r[j].TorchMB)
		}
		rows[j].Ours, rows[j].Torch, rows[j].Ratio = median(ours), median(torch), median(ratio)
	}
	return nil
}

// median is the median of xs (not empty).
func median(xs []float64) float64 {
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// measure fills in the rows (a train and forward pair, or one decoding
// row): ours in this process or a child, and PyTorch's if asked.
func (o options) measure(rows []row) error {
	if err := o.measureOurs(rows); err != nil {
		return err
	}
	if o.torch {
		return measureTorch(o.python, rows, o.warmup, o.runs)
	}
	return nil
}

// measureOurs measures the rows in a child process (this command with
// -child), or here if -isolate=false, when peak RSS is the whole process's.
func (o options) measureOurs(rows []row) error {
	if !o.isolate {
		return ours(rows, o.warmup, o.runs)
	}
	spec, _ := json.Marshal(rows)
	exe, err := os.Executable()
	if err != nil {
		return errors.Wrap(err, "finding this command to run a measurement")
	}
	cmd := exec.Command(exe, "-child", string(spec), "-warmup", strconv.Itoa(o.warmup), "-runs", strconv.Itoa(o.runs))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return errors.Wrapf(err, "measuring %s", rows[0].name())
	}
	var got []row
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(rows) {
		return errors.Errorf("measuring %s: the child printed %q", rows[0].name(), out)
	}
	copy(rows, got)
	return nil
}

// measureChild is the child's side of measureOurs.
func measureChild(spec string, warmup, runs int, stdout io.Writer) error {
	rows, err := parseChild(spec)
	if err != nil {
		return err
	}
	if err := ours(rows, warmup, runs); err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(rows)
}

// parseChild parses and checks the rows of -child: one or two rows
// (train and forward, or one of decoding) of a preset and vocabulary that
// fit in memory, as rows makes them.
func parseChild(spec string) ([]row, error) {
	var rows []row
	if err := json.Unmarshal([]byte(spec), &rows); err != nil || len(rows) == 0 || len(rows) > 2 {
		return nil, errors.Errorf("-child %q: not a measurement", spec)
	}
	for _, r := range rows {
		switch {
		case r.Kind != "train" && r.Kind != "forward" && r.Kind != "greedy" && r.Kind != "beam4":
			return nil, errors.Errorf("-child: unknown kind %q", r.Kind)
		case r.Batch > maxBatch || r.Len < 0:
			return nil, errors.Errorf("-child: batch %d, length %d: want batch 1 to %d", r.Batch, r.Len, maxBatch)
		}
		if err := r.checkMemory(); err != nil {
			return nil, errors.Wrap(err, "-child")
		}
		if r.Batch < 1 {
			return nil, errors.Errorf("-child: batch %d: want batch 1 to %d", r.Batch, maxBatch)
		}
	}
	return rows, nil
}

// checkMemory refuses a row whose model and work would not fit in the
// memory the process may allocate: training (weights, gradients, Adam's
// moments and a batch's activations) for the train and forward rows, the
// weights and the decoding of its batch for the others.
func (r row) checkMemory() error {
	cfg, err := model.Preset(r.Preset, r.Vocab)
	if err == nil {
		err = checkLen(cfg, r.Len)
	}
	if err != nil || r.Kind == "train" || r.Kind == "forward" {
		if err == nil {
			err = trainer.CheckMemory(cfg, r.Batch*r.Len)
		}
		return err
	}
	beams := 1
	if r.Kind == "beam4" {
		beams = 4
	}
	f := cfg.Footprint(4, 0)
	what := fmt.Sprintf("model too large: decoding with the %s preset and vocabulary %d (%d parameters) at batch %d, beam %d, outputs of up to %d tokens",
		r.Preset, r.Vocab, f.Params, r.Batch, beams, decodeMaxLen)
	need := float64(f.Weights) + decode.MemoryNeed(cfg, 4, max(r.Batch, 1), beams, decodeSrcLen, decodeMaxLen)
	return (*graph.Runtime)(nil).CheckMemory(what, need)
}

// ours measures the rows in this process.
func ours(rows []row, warmup, runs int) error {
	var err error
	if rows[0].Kind == "train" {
		err = oursTrain(rows, warmup, runs)
	} else {
		rows[0].Ours, err = oursDecode(rows[0], warmup, runs)
	}
	if peak, ok := sysmem.PeakRSS(); ok {
		for i := range rows {
			rows[i].OursMB = float64(peak) / (1 << 20)
		}
	}
	return err
}

// oursTrain measures a train and forward pair.
func oursTrain(rows []row, warmup, runs int) error {
	rig, err := newRig(rows[0])
	if err != nil {
		return err
	}
	s, err := rig.MeasureSpeed(warmup, runs)
	rows[0].Ours, rows[1].Ours = s.TrainTokensPerS, s.ForwardTokensPerS
	return err
}

// newRig builds the training and forward rig of a train row: its preset and
// vocabulary, batch, and source and target length.
func newRig(r row) (*trainer.Rig, error) {
	cfg, err := model.Preset(r.Preset, r.Vocab)
	if err != nil {
		return nil, err
	}
	rt, err := r.runtime()
	if err != nil {
		return nil, err
	}
	return trainer.NewRig(cfg, model.Shape{Batch: r.Batch, SrcLen: r.Len, TgtLen: r.Len}, rt)
}

// oursDecode measures a decoding row in output tokens per second.
func oursDecode(r row, warmup, runs int) (float64, error) {
	cfg, err := model.Preset(r.Preset, r.Vocab)
	if err != nil {
		return 0, err
	}
	m, params, err := model.Init(cfg, tensor.Float32, 1)
	if err != nil {
		return 0, err
	}
	rt, err := r.runtime()
	if err != nil {
		return 0, err
	}
	silenceEOS(params, cfg.DModel)
	d, err := decode.New(rt, m, params)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	s := decode.DefaultSearch()
	if r.Kind == "greedy" {
		s.Method = decode.MethodGreedy
	}
	s.MaxLen, s.Batch = decodeMaxLen, r.Batch
	srcs := randomSources(r.Batch, r.Vocab)
	tokens := 0
	decode := func() error {
		hyps, err := d.Decode(srcs, s)
		tokens = decode.OutputTokens(hyps)
		return err
	}
	for range warmup {
		if err := decode(); err != nil {
			return 0, err
		}
	}
	t, err := trainer.MedianDuration(runs, decode)
	return float64(tokens) / t.Seconds(), err
}

// silenceEOS zeroes the end token's embedding, which is also its row of the
// output projection: among thousands of random logits its logit 0 is never
// the largest, so every output runs to decodeMaxLen tokens and both sides
// decode the same number of tokens.
func silenceEOS(params *graph.Params, dModel int) {
	e := params.Value("embed.weight").Data().([]float32)
	clear(e[model.EOSID*dModel : (model.EOSID+1)*dModel])
	params.Updated("embed.weight")
}

// randomSources are n sources of random ids ending with EOS.
func randomSources(n, vocab int) [][]int {
	rng := rand.New(rand.NewPCG(3, 4))
	srcs := make([][]int, n)
	for i := range srcs {
		for range decodeSrcLen - 1 {
			srcs[i] = append(srcs[i], 4+rng.IntN(vocab-4))
		}
		srcs[i] = append(srcs[i], model.EOSID)
	}
	return srcs
}
