package main

import (
	"encoding/json"
	"flag"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/cmd/internal/runtimeflag"
	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/atomicfile"
	"github.com/transformer-go/transformer/internal/cliflag"
	"github.com/transformer-go/transformer/internal/strictjson"
	"github.com/transformer-go/transformer/internal/sysmem"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer"
	"github.com/transformer-go/transformer/trainer/rundir"
)

// settings are a run's flags. They are saved as OUT/run.json, which -resume
// reads, holding what the run used: a synthetic task's settings or those of
// files (the others are left out), and the model's dropout and label
// smoothing.
type settings struct {
	Task      string `json:"task"`
	Symbols   int    `json:"symbols,omitempty"`
	MinLen    int    `json:"min_len,omitempty"`
	MaxLen    int    `json:"max_len,omitempty"`
	TrainSize int    `json:"train_size,omitempty"`
	HeldOut   int    `json:"held_out,omitempty"`

	Data       string `json:"data,omitempty"`
	SrcLang    string `json:"src_lang,omitempty"`
	TgtLang    string `json:"tgt_lang,omitempty"`
	TrainSrc   string `json:"train_src,omitempty"`
	TrainTgt   string `json:"train_tgt,omitempty"`
	ValidSrc   string `json:"valid_src,omitempty"`
	ValidTgt   string `json:"valid_tgt,omitempty"`
	MaxSentLen int    `json:"max_sentence_len,omitempty"`
	// BPEMerges is 0 (left out) where the run learns no BPE: with -bpe or
	// -spm, and on a synthetic task.
	BPEMerges  int    `json:"bpe_merges,omitempty"`
	BPEFile    string `json:"bpe_file,omitempty"`
	SPMFile    string `json:"spm_file,omitempty"`
	BLEUEvery  int    `json:"bleu_every,omitempty"`
	BLEUSample int    `json:"bleu_sample,omitempty"`
	KeepBest   string `json:"keep_best,omitempty"`

	Model          string  `json:"model,omitempty"`
	Preset         string  `json:"preset"`
	ConfigFile     string  `json:"config_file,omitempty"`
	Dropout        float64 `json:"dropout"`
	LabelSmoothing float64 `json:"label_smoothing"`

	Steps     int     `json:"steps"`
	Epochs    float64 `json:"epochs"`
	MaxTokens int     `json:"max_tokens"`
	// Warmup, LRFactor, WeightDecay and LR are nil where not given (and
	// left out of run.json): a given 0 is kept, and used or refused. The
	// settings of a new run set every one the run uses (see complete).
	Warmup   *int     `json:"warmup,omitempty"`
	LRFactor *float64 `json:"lr_factor,omitempty"`
	// Optimizer and Schedule empty (or left out of run.json) are Adam and
	// the paper's schedule.
	Optimizer   string   `json:"optimizer,omitempty"`
	WeightDecay *float64 `json:"weight_decay,omitempty"`
	Schedule    string   `json:"schedule,omitempty"`
	LR          *float64 `json:"lr,omitempty"`
	Cooldown    float64  `json:"cooldown,omitempty"`
	Clip        float64  `json:"clip"`
	Accumulate  int      `json:"accumulate"`
	Seed        uint64   `json:"seed"`
	EvalEvery   int      `json:"eval_every"`
	SaveEvery   int      `json:"save_every"`
	CheckEvery  int      `json:"check_every,omitempty"`
	LogEvery    int      `json:"log_every,omitempty"`
	Patience    int      `json:"patience,omitempty"`
	Keep        int      `json:"keep"`
	Average     int      `json:"average"`
	Out         string   `json:"out"`
	// Precision is that of the matrix products (graph.Precision); empty
	// is float32.
	Precision string `json:"precision,omitempty"`
}

// flags defines the command's flags over s and the ones that are not settings.
type flags struct {
	s         settings
	resume    string
	overwrite bool
	summary   bool
	vocabSize int
	// cpuProfile and memProfile name pprof files to write (not settings: a
	// resumed run may profile too).
	cpuProfile string
	memProfile string
	// runtime is -device, which a resumed run may change, and -precision,
	// a setting (Settings.Precision).
	runtime *runtimeflag.Flags
}

func newFlags(fs *flag.FlagSet) *flags {
	f := &flags{}
	s := &f.s
	fs.StringVar(&s.Task, "task", "copy", "what to learn: copy, reverse, sort (built-in, no files) or files")
	fs.IntVar(&s.Symbols, "symbols", 10, "synthetic tasks: number of distinct symbols")
	fs.IntVar(&s.MinLen, "min-len", 1, "synthetic tasks: shortest sequence")
	fs.IntVar(&s.MaxLen, "max-len", 10, "synthetic tasks: longest sequence")
	fs.IntVar(&s.TrainSize, "train-size", 20000, "synthetic tasks: training examples")
	fs.IntVar(&s.HeldOut, "held-out", 256, "synthetic tasks: held-out examples for validation and exact match")
	fs.StringVar(&s.Data, "data", "", "files: a directory of train.L.gz and val.L.gz files (Multi30k's layout), with -src-lang and -tgt-lang")
	fs.StringVar(&s.SrcLang, "src-lang", "de", "files: source language suffix, with -data")
	fs.StringVar(&s.TgtLang, "tgt-lang", "en", "files: target language suffix, with -data")
	fs.StringVar(&s.TrainSrc, "train-src", "", "files: training sources, one sentence per line (gzip allowed)")
	fs.StringVar(&s.TrainTgt, "train-tgt", "", "files: training targets, aligned with -train-src")
	fs.StringVar(&s.ValidSrc, "valid-src", "", "files: validation sources")
	fs.StringVar(&s.ValidTgt, "valid-tgt", "", "files: validation targets")
	fs.IntVar(&s.MaxSentLen, "max-sentence-len", 100, "files: skip pairs longer than this many words and punctuation marks")
	fs.IntVar(&s.BPEMerges, "bpe-merges", 8000, "files: BPE merges to learn jointly on sources and targets")
	fs.StringVar(&s.BPEFile, "bpe", "", "files: load BPE merges from this file instead of learning them")
	fs.StringVar(&s.SPMFile, "spm", "", "files: tokenize with this SentencePiece model (a .model file of spm_train) instead of BPE")
	fs.IntVar(&s.BLEUEvery, "bleu-every", 1, "files: translate a validation sample and report its BLEU every N evaluations (0: never)")
	fs.IntVar(&s.BLEUSample, "bleu-sample", 200, "files: validation sentences translated (greedily) for BLEU")
	fs.StringVar(&s.KeepBest, "keep-best", "loss", "keep best.safetensors by validation loss or by BLEU: loss or bleu")
	fs.StringVar(&s.Model, "model", model.KindEncoderDecoder, "model kind: "+strings.Join(model.Kinds(), ", ")+
		"; a decoder-only model learns source EOS target as one sequence, or with -task files and no sources (-train-tgt and -valid-tgt, or -data with -src-lang \"\") the target text alone")
	fs.StringVar(&s.Preset, "preset", "tiny", "model preset: "+presetList())
	fs.StringVar(&s.ConfigFile, "config", "", "JSON file of model config fields overriding the preset")
	cliflag.Float(fs, &s.Dropout, "dropout", "`rate` of dropout (default: the preset's; 0 for synthetic tasks, which do not overfit)")
	cliflag.Float(fs, &s.LabelSmoothing, "label-smoothing", "label smoothing `ε` (default: the preset's, 0.1)")
	fs.IntVar(&s.Steps, "steps", 0, "optimizer updates (default 450 for synthetic tasks, or from -epochs)")
	fs.Float64Var(&s.Epochs, "epochs", 0, "train this many passes over the data instead of -steps")
	fs.IntVar(&s.MaxTokens, "max-tokens", 0, "token budget of a batch (default 2048 for synthetic tasks, 4096 for files)")
	fs.StringVar(&s.Optimizer, "optimizer", trainer.OptimizerAdam, "optimizer: adam (the paper's) or adamw (decoupled weight decay)")
	cliflag.FloatPtr(fs, &s.WeightDecay, "weight-decay", "with -optimizer adamw: weight decay `λ` of weight matrices and embeddings (default 0.01; 0: none)")
	fs.StringVar(&s.Schedule, "schedule", trainer.SchedulePaper, "learning-rate schedule: paper (warm-up, then inverse square root), constant, linear or cosine (warm-up, then decay to zero at the end)")
	cliflag.FloatPtr(fs, &s.LR, "lr", "peak learning `rate`, at the end of warm-up (default: from -lr-factor with -schedule paper, 0.001 with the others)")
	cliflag.IntPtr(fs, &s.Warmup, "warmup", "learning-rate warm-up `updates` (default: a tenth of the run, at most 4000, as trainer.Options; 100 for synthetic tasks; 0: none, which -schedule paper refuses)")
	cliflag.Float(fs, &s.Cooldown, "cooldown", "with -schedule paper or constant: decay the learning rate linearly towards zero over this `fraction` of the run's last updates (default: 0; 1/3 for synthetic tasks with -schedule paper)")
	cliflag.FloatPtr(fs, &s.LRFactor, "lr-factor", "-schedule paper: the rate's `factor`, unless -lr gives the peak (default 1; 0.5 for synthetic tasks)")
	cliflag.Float(fs, &s.Clip, "clip", "clip gradients to this global `norm` (0: off; default off for files, 1 for synthetic tasks)")
	fs.IntVar(&s.Accumulate, "accumulate", 1, "batches per update (gradient accumulation)")
	fs.Uint64Var(&s.Seed, "seed", 1, "random seed (initialisation, data order, dropout)")
	fs.IntVar(&s.EvalEvery, "eval-every", 0, "evaluate every N updates (default: 10 times a run)")
	fs.IntVar(&s.SaveEvery, "save-every", 0, "checkpoint every N updates (default: as -eval-every)")
	fs.IntVar(&s.CheckEvery, "check-every", 100, "under mpirun (refused in one process): compare the ranks' parameter checksums every N updates, and at every evaluation (0: at evaluations only)")
	fs.IntVar(&s.Keep, "keep", 5, "step checkpoints to keep")
	fs.IntVar(&s.Average, "average", defaultAverage, "at the end, average the last N checkpoints into averaged.safetensors (default: the paper's 5, or -keep if fewer; 0: none)")
	fs.StringVar(&s.Out, "out", "", "output directory (default runs/TIME)")
	f.runtime = runtimeflag.Register(fs)
	fs.BoolVar(&f.overwrite, "overwrite", false, "start over in an -out directory that holds a run, removing the run's files")
	fs.StringVar(&f.resume, "resume", "", "continue the run in this output directory from its last checkpoint, with its settings")
	fs.BoolVar(&f.summary, "summary", false, "print the model's parameter summary and exit")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	fs.StringVar(&f.memProfile, "memprofile", "", "write a heap profile to this file at the end of the run (go tool pprof)")
	fs.IntVar(&f.vocabSize, "vocab-size", 0, "with -summary: vocabulary size (default: the task's)")
	fs.IntVar(&s.LogEvery, "log-every", 0, "log the training loss of every N-th update, and add it to metrics.jsonl (0: none)")
	fs.IntVar(&s.Patience, "patience", 0, "stop early after N evaluations in a row without a better validation loss (or BLEU, with -keep-best bleu); the final and averaged weights are written as at the end (0: never)")
	return f
}

// defaultAverage is -average's default: the paper averages the last 5
// checkpoints.
const defaultAverage = 5

func presetList() string {
	names := model.PresetNames()
	out := names[0]
	for _, n := range names[1:] {
		out += ", " + n
	}
	return out
}

// synthetic reports whether the task needs no files.
func (s settings) synthetic() bool { return s.Task != "files" }

// kind is the model kind; an empty Model is the encoder-decoder.
func (s settings) kind() string {
	if s.Model == "" {
		return model.KindEncoderDecoder
	}
	return s.Model
}

// layout is how the model of the run's kind reads batches.
func (s settings) layout() model.Layout { return model.KindLayout(s.kind()) }

// text reports whether the run learns a language model of target text
// alone: a decoder-only model on files without sources.
func (s settings) text() bool {
	return !s.synthetic() && !s.layout().Sources && s.TrainSrc == "" && s.ValidSrc == ""
}

// complete fills in defaults that depend on the task and checks the settings.
func (s *settings) complete() error {
	if err := s.check(); err != nil {
		return err
	}
	if s.synthetic() {
		if _, err := data.NewTask(s.Task, data.TaskConfig{Symbols: s.Symbols, MinLen: s.MinLen, MaxLen: s.MaxLen}); err != nil {
			return errors.Wrap(err, "-task")
		}
		if s.Data != "" || s.TrainSrc != "" {
			return errors.Errorf("-task %s is built in; use -task files with -data or -train-src", s.Task)
		}
		setDefault(&s.MaxTokens, 2048)
		s.completeRates(new(100), 0.5)
		s.BPEMerges = 0 // no BPE: run.json does not record the flag's default
		if s.Cooldown < 0 && s.paper() {
			s.Cooldown = 1.0 / 3
		}
		if s.Dropout < 0 && !configSets(s.ConfigFile, "dropout") {
			s.Dropout = 0 // the synthetic tasks' default gives way to -config's
		}
		if s.Clip == cliflag.Unset {
			s.Clip = 1
		}
		if s.Steps == 0 && s.Epochs == 0 {
			s.Steps = 450
		}
	} else {
		if err := s.completeFiles(); err != nil {
			return err
		}
		setDefault(&s.MaxTokens, 4096)
		s.completeRates(nil, 1) // the trainer's warm-up: a tenth of the run, at most 4,000
		if s.BPEFile != "" || s.SPMFile != "" {
			s.BPEMerges = 0 // the file's merges or pieces: run.json does not record the flag's default
		}
		if s.Clip == cliflag.Unset {
			s.Clip = 0
		}
	}
	s.Cooldown = max(s.Cooldown, 0)
	if err := s.checkBLEU(); err != nil {
		return err
	}
	s.clearIdle()
	switch {
	case s.Steps < 0 || s.Epochs < 0:
		return errors.New("-steps and -epochs must not be negative")
	case s.Steps > 0 && s.Epochs > 0:
		return errors.New("give -steps or -epochs, not both")
	case s.Steps == 0 && s.Epochs == 0:
		return errors.New("give -steps or -epochs")
	}
	if s.Out == "" {
		s.Out = filepath.Join("runs", time.Now().Format("20060102-150405"))
	}
	if err := s.absPaths(); err != nil {
		return err
	}
	if err := s.check(); err != nil {
		return err
	}
	if err := s.checkOptions(); err != nil {
		return err
	}
	s.recordDefaults()
	return nil
}

// clearIdle clears the settings of the other kind of task, whose flags
// defaults the run does not use, so that run.json records none of them:
// a synthetic task's on files, and those of files on a synthetic task
// (with the languages of -data where there is none).
func (s *settings) clearIdle() {
	if s.synthetic() {
		s.SrcLang, s.TgtLang, s.MaxSentLen, s.BLEUEvery, s.BLEUSample = "", "", 0, 0, 0
		return
	}
	s.Symbols, s.MinLen, s.MaxLen, s.TrainSize, s.HeldOut = 0, 0, 0, 0, 0
	if s.Data == "" {
		s.SrcLang, s.TgtLang = "", ""
	}
}

// paper reports whether the run uses the paper's schedule.
func (s settings) paper() bool { return s.Schedule == "" || s.Schedule == trainer.SchedulePaper }

// completeRates sets the task's defaults of the warm-up (nil: the
// trainer's, trainer.Options.Warmup) and the paper's schedule's factor,
// where not given.
func (s *settings) completeRates(warmup *int, factor float64) {
	if s.Warmup == nil {
		s.Warmup = warmup
	}
	if s.paper() && s.LR == nil && s.LRFactor == nil {
		s.LRFactor = &factor
	}
}

// recordDefaults sets the rates, the weight decay and the warm-up left
// out to the trainer's defaults (trainer.Options.WithDefaults), so that
// run.json holds the values a resume needs whatever later defaults
// become. The warm-up's default, a tenth of the run, waits for the steps,
// which -epochs makes once the data are read (setup calls it again).
func (s *settings) recordDefaults() {
	o := s.options().WithDefaults()
	s.WeightDecay, s.LR, s.LRFactor = o.WeightDecay, o.LR, o.LRFactor
	if s.Steps > 0 {
		s.Warmup = o.Warmup
	}
}

// inputs are the run's input paths with their run.json fields.
func (s *settings) inputs() map[string]*string {
	return map[string]*string{
		"data": &s.Data, "train_src": &s.TrainSrc, "train_tgt": &s.TrainTgt, "valid_src": &s.ValidSrc,
		"valid_tgt": &s.ValidTgt, "bpe_file": &s.BPEFile, "spm_file": &s.SPMFile, "config_file": &s.ConfigFile,
	}
}

// absPaths makes the input paths absolute, so that run.json names the same
// files wherever a -resume runs.
func (s *settings) absPaths() error {
	for field, p := range s.inputs() {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return errors.Wrapf(err, "%s %s", field, *p)
		}
		*p = abs
	}
	return nil
}

// checkInputs checks that the input files a run.json names exist, naming
// the field: relative paths resolve from where the command runs.
func (s *settings) checkInputs() error {
	for _, field := range []string{"train_src", "train_tgt", "valid_src", "valid_tgt", "config_file"} {
		p := *s.inputs()[field]
		if p == "" {
			continue
		}
		st, err := os.Stat(p)
		switch {
		case err != nil:
			return errors.Errorf("field %s: %v", field, err)
		case !st.Mode().IsRegular():
			// A pipe's open would wait for a writer for ever, holding the lock.
			return errors.Errorf("field %s: %s is not a regular file (a pipe or a device): a resumed run reads its data again, and needs the files", field, p)
		}
	}
	return nil
}

// check refuses settings out of range, NaN included, naming the flag, but
// for the trainer's options (checkOptions). It runs on the flags of a new
// run and on the run.json of a resumed one, before anything is written.
func (s settings) check() error {
	type bound struct {
		flag           string
		v, least, most int
	}
	ints := []bound{
		{"bpe-merges", s.BPEMerges, 0, 1 << 24},
		{"steps", s.Steps, 0, maxSetting}, {"max-tokens", s.MaxTokens, 0, 1 << 24}, {"average", s.Average, 0, max(s.Keep, 0)},
	}
	if s.synthetic() {
		ints = append(ints, bound{"symbols", s.Symbols, 1, 1 << 20}, bound{"min-len", s.MinLen, 1, s.MaxLen}, bound{"max-len", s.MaxLen, 1, 1 << 12},
			bound{"train-size", s.TrainSize, 1, maxExamples / max(1, s.MaxLen)}, bound{"held-out", s.HeldOut, 1, maxExamples / max(1, s.MaxLen)})
	} else {
		ints = append(ints, bound{"max-sentence-len", s.MaxSentLen, 1, 1 << 16})
	}
	for _, c := range ints {
		if c.v < c.least || c.v > c.most {
			return errors.Errorf("-%s %d: want a number from %d to %d", c.flag, c.v, c.least, c.most)
		}
	}
	floats := []struct {
		flag    string
		v, most float64
		unsetOK bool // -1 means the preset's value
	}{
		{"dropout", s.Dropout, 1, true}, {"label-smoothing", s.LabelSmoothing, 1, true},
		{"epochs", s.Epochs, maxSetting, false}, {"cooldown", s.Cooldown, 1, true},
	}
	for _, c := range floats {
		if !(c.v >= 0 && c.v < c.most) && !(c.unsetOK && c.v == -1) {
			return errors.Errorf("-%s %v: want a number in [0, %v)", c.flag, c.v, c.most)
		}
	}
	if !slices.Contains(model.Kinds(), s.kind()) {
		return errors.Errorf("-model %q: want one of %s", s.Model, strings.Join(model.Kinds(), ", "))
	}
	_, err := graph.ParsePrecision(s.Precision)
	return errors.Wrap(err, "-precision")
}

// precision is the precision of the run's products.
func (s settings) precision() graph.Precision {
	p, _ := graph.ParsePrecision(s.Precision)
	return p
}

// taskShare: a synthetic task's examples may take 1/taskShare of the
// memory the process may allocate (their batches and the model take more).
const taskShare = 4

// checkTaskMemory refuses a synthetic task whose examples, at their
// longest, would take more than 1/taskShare of the memory the process may
// allocate (sysmem.Lowest), naming the flags: they are made before any
// other work, and a run that ran out of memory would die without a word
// (and with its directory locked).
func (s settings) checkTaskMemory() error {
	l, ok := sysmem.Lowest()
	if !s.synthetic() || !ok {
		return nil
	}
	return s.taskFits(l)
}

// taskFits is checkTaskMemory with the limit l.
func (s settings) taskFits(l sysmem.Limit) error {
	// An example is a source and a target of at most MaxLen ids (8 bytes
	// each), with their two slice headers (24 bytes each).
	need := int64(s.TrainSize+s.HeldOut) * int64(2*24+2*8*s.MaxLen)
	if need <= l.Bytes/taskShare {
		return nil
	}
	return errors.Errorf("-train-size %d and -held-out %d: %d examples of up to %d symbols (-max-len) take up to %s, more than the 1/%d of %s the examples may take; lower -train-size or -max-len",
		s.TrainSize, s.HeldOut, s.TrainSize+s.HeldOut, s.MaxLen, sysmem.Bytes(need), taskShare, l)
}

// maxExamples bounds the tokens of a synthetic task's examples (2^28 ids
// take 2 GiB).
const maxExamples = 1 << 28

// maxSetting bounds every count and rate, far above any sensible value, so
// that no setting asks for an unbounded allocation.
const maxSetting = 1 << 30

// completeFiles fills the file names from -data and checks they are all given.
func (s *settings) completeFiles() error {
	if s.Data != "" {
		if s.TrainSrc != "" || s.ValidSrc != "" {
			return errors.New("give -data or the -train-*/-valid-* files, not both")
		}
		type file struct {
			dst  *string
			name string
		}
		files := []file{{&s.TrainTgt, "train." + s.TgtLang}, {&s.ValidTgt, "val." + s.TgtLang}}
		if s.SrcLang != "" || s.layout().Sources {
			files = append(files, file{&s.TrainSrc, "train." + s.SrcLang}, file{&s.ValidSrc, "val." + s.SrcLang})
		}
		for _, p := range files {
			*p.dst = findData(s.Data, p.name)
		}
	}
	switch {
	case s.text() && s.TrainTgt != "" && s.ValidTgt != "":
	case s.TrainSrc == "" || s.TrainTgt == "" || s.ValidSrc == "" || s.ValidTgt == "":
		return errors.New("-task files needs -data DIR, or -train-src, -train-tgt, -valid-src and -valid-tgt (a decoder-only model: -train-tgt and -valid-tgt alone will do)")
	}
	if s.BPEFile == "" && s.SPMFile == "" && s.BPEMerges <= 0 {
		return errors.New("-bpe-merges must be positive (or give -bpe FILE or -spm FILE)")
	}
	return nil
}

// checkBLEU checks the BLEU flags.
func (s settings) checkBLEU() error {
	switch {
	case s.KeepBest == "bleu" && s.synthetic():
		return errors.New("-keep-best bleu needs -task files")
	case s.BLEUEvery < 0 || s.BLEUSample < 0:
		return errors.New("-bleu-every and -bleu-sample must not be negative")
	case s.KeepBest != "loss" && s.KeepBest != "bleu":
		return errors.Errorf("-keep-best %q: want loss or bleu", s.KeepBest)
	case s.KeepBest == "bleu" && (s.BLEUEvery == 0 || s.BLEUSample == 0):
		return errors.New("-keep-best bleu needs -bleu-every and -bleu-sample above 0")
	case s.KeepBest == "bleu" && (s.text() || s.layout().Aligned):
		return errors.New("-keep-best bleu needs a model that translates sources: an encoder-decoder, or a decoder-only model trained on pairs")
	}
	return nil
}

// findData is dir/name.gz if it exists, else dir/name.
func findData(dir, name string) string {
	if p := filepath.Join(dir, name+".gz"); fileExists(p) {
		return p
	}
	return filepath.Join(dir, name)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func setDefault(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

// save writes the settings to run.json in dir, the run's directory
// s.Out, if it is still the one locked.
func (s settings) save(dir *rundir.Dir) error {
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return errors.Wrap(err, "encoding settings")
	}
	if err := dir.Check(); err != nil {
		return err
	}
	return atomicfile.WriteBytes(dir.Path(rundir.Settings), append(js, '\n'))
}

// loadSettings reads OUT/run.json of an earlier run.
func loadSettings(dir string) (settings, error) {
	var s settings
	js, err := strictjson.ReadFile(filepath.Join(dir, rundir.Settings))
	if err != nil {
		return s, errors.Wrapf(err, "-resume %s: not a training output directory", dir)
	}
	if err := strictjson.Decode(js, &s); err != nil {
		return s, errors.Wrapf(err, "%s", filepath.Join(dir, rundir.Settings))
	}
	s.Out = dir
	if s.KeepBest == "" {
		s.KeepBest = "loss" // a run.json without keep_best
	}
	if s.LRFactor != nil && *s.LRFactor == 0 {
		s.LRFactor = nil // a run.json's 0 is a factor the run did not use; a given 0 is refused
	}
	err = s.checkFileFields() // before check, which would name a missing setting of files
	if err == nil {
		err = s.check()
	}
	if err == nil {
		err = s.checkSaved()
	}
	if err == nil {
		err = s.checkOptions()
	}
	if err != nil {
		err = fieldError(err)
	} else {
		err = s.checkInputs()
	}
	return s, errors.Wrapf(err, "%s", filepath.Join(dir, rundir.Settings))
}

// fieldError names the run.json field of an error of check or checkSaved,
// which name the flag: "-train-size -1: ..." becomes "field train_size:
// -train-size -1: ...".
func fieldError(err error) error {
	msg := err.Error()
	if !strings.HasPrefix(msg, "-") {
		return err
	}
	flag, _, _ := strings.Cut(msg[1:], " ")
	flag = strings.TrimSuffix(flag, ":")
	field, ok := map[string]string{"bpe": "bpe_file", "spm": "spm_file", "config": "config_file"}[flag]
	if !ok {
		field = strings.ReplaceAll(flag, "-", "_")
	}
	return errors.Wrapf(err, "field %s", field)
}

// checkSaved checks what check leaves to complete, which fills in the
// defaults of a new run's flags: the synthetic task, the preset and the
// BLEU settings of a run.json (checkFileFields checks its files).
func (s settings) checkSaved() error {
	if s.synthetic() {
		_, err := data.NewTask(s.Task, data.TaskConfig{Symbols: s.Symbols, MinLen: s.MinLen, MaxLen: s.MaxLen})
		if err != nil {
			return errors.Wrap(err, "-task")
		}
	}
	if _, err := model.Preset(s.Preset, model.MinVocab); err != nil {
		return errors.Wrap(err, "-preset")
	}
	return s.checkBLEU()
}

// checkFileFields checks that a run.json of a run on files names its
// files.
func (s settings) checkFileFields() error {
	if s.synthetic() || s.TrainTgt != "" && s.ValidTgt != "" && (s.TrainSrc == "") == (s.ValidSrc == "") &&
		(s.TrainSrc != "" || !s.layout().Sources) {
		return nil
	}
	return errors.Errorf("-task files: want train_src, train_tgt, valid_src and valid_tgt (a decoder-only model: train_tgt and valid_tgt alone will do), have %q, %q, %q and %q",
		s.TrainSrc, s.TrainTgt, s.ValidSrc, s.ValidTgt)
}

// configSets reports whether the -config file at path names field; an
// unreadable file names none (modelConfig reports its error).
func configSets(path, field string) bool {
	if path == "" {
		return false
	}
	raw, err := strictjson.ReadFile(path)
	if err != nil {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	_, ok := fields[field]
	return ok
}

// optionFlag is a flag that sets a field of trainer.Options.
type optionFlag struct {
	name string
	// most bounds the value, so that no run.json asks for an unbounded
	// count or rate (0: no bound); the trainer checks the rest.
	most float64
	// given is the flag's value where the option's differs (nil: the same).
	given func(s settings) any
}

// optionFlags are the flags of the trainer's options, by the field each sets.
var optionFlags = map[trainer.Field]optionFlag{
	"Steps": {name: "steps"}, "Optimizer": {name: "optimizer"}, "WeightDecay": {name: "weight-decay", most: maxSetting},
	"Schedule": {name: "schedule"}, "LR": {name: "lr", most: maxSetting}, "LRFactor": {name: "lr-factor", most: maxSetting},
	"Warmup": {name: "warmup", most: maxSetting}, "Cooldown": {name: "cooldown", given: func(s settings) any { return s.Cooldown }},
	"ClipNorm": {name: "clip", most: maxSetting}, "Accumulate": {name: "accumulate", most: 1 << 16},
	"EvalEvery": {name: "eval-every", most: maxSetting}, "SaveEvery": {name: "save-every", most: maxSetting},
	"CheckEvery": {name: "check-every", most: maxSetting}, "LogEvery": {name: "log-every", most: maxSetting},
	"Patience": {name: "patience", most: maxSetting}, "KeepLast": {name: "keep", most: 1 << 16}, "Seed": {name: "seed"}, "OutDir": {name: "out"},
}

// options are the trainer's options from the settings.
func (s settings) options() trainer.Options {
	return trainer.Options{
		Steps: s.Steps, Optimizer: s.Optimizer, WeightDecay: s.WeightDecay, Schedule: s.Schedule, LR: s.LR, LRFactor: s.LRFactor,
		Warmup: s.Warmup, Cooldown: int(math.Round(s.Cooldown * float64(s.Steps))), ClipNorm: s.Clip, Accumulate: s.Accumulate,
		EvalEvery: s.EvalEvery, SaveEvery: s.SaveEvery, CheckEvery: s.CheckEvery, LogEvery: s.LogEvery, Patience: s.Patience,
		KeepLast: s.Keep, Seed: s.Seed, OutDir: s.Out,
	}
}

// unknownSteps stands for the steps of a run with -epochs before its data
// are read, so that everything but the steps is checked before then.
const unknownSteps = 1 << 40

// checkOptions checks the trainer's options the settings make, naming the
// flags: the trainer's checks (trainer.Options.Validate), and the bounds
// of optionFlags.
func (s settings) checkOptions() error {
	o := s.options()
	if o.Steps == 0 {
		o.Steps = unknownSteps
		o.Cooldown = int(math.Round(s.Cooldown * unknownSteps))
	}
	if err := s.flagError(o.Validate()); err != nil {
		return err
	}
	v := reflect.ValueOf(o)
	for _, field := range slices.Sorted(maps.Keys(optionFlags)) {
		f := v.FieldByName(string(field))
		if f.Kind() == reflect.Pointer {
			f = f.Elem()
		}
		if most := optionFlags[field].most; most > 0 && f.IsValid() && (f.CanInt() && float64(f.Int()) > most || f.CanFloat() && f.Float() > most) {
			return errors.Errorf("-%s %v: want at most %.0f", optionFlags[field].name, f, most)
		}
	}
	return nil
}

// flagError is err with the options of the trainer's Problems named by
// their flags (see flagged).
func (s settings) flagError(err error) error {
	var ps trainer.Problems
	if errors.As(err, &ps) {
		return errors.New(ps.Say(s.flagged))
	}
	return err
}

// flagged names an option of a trainer.Problem by its flag, with the value
// the flag was given.
func (s settings) flagged(g trainer.Given) trainer.Given {
	f, ok := optionFlags[g.Field]
	if !ok {
		return g
	}
	if f.given != nil && g.Value != nil {
		g.Value = f.given(s)
	}
	return trainer.Given{Field: trainer.Field("-" + f.name), Value: g.Value}
}
