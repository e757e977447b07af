package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/internal/atomicfile"
	"github.com/transformer-go/transformer/internal/strictjson"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer/rundir"
)

// settings are a run's flags. They are saved as OUT/run.json, which -resume reads.
type settings struct {
	Task      string `json:"task"`
	Symbols   int    `json:"symbols"`
	MinLen    int    `json:"min_len"`
	MaxLen    int    `json:"max_len"`
	TrainSize int    `json:"train_size"`
	HeldOut   int    `json:"held_out"`

	Data       string `json:"data,omitempty"`
	SrcLang    string `json:"src_lang,omitempty"`
	TgtLang    string `json:"tgt_lang,omitempty"`
	TrainSrc   string `json:"train_src,omitempty"`
	TrainTgt   string `json:"train_tgt,omitempty"`
	ValidSrc   string `json:"valid_src,omitempty"`
	ValidTgt   string `json:"valid_tgt,omitempty"`
	MaxSentLen int    `json:"max_sentence_len"`
	BPEMerges  int    `json:"bpe_merges"`
	BPEFile    string `json:"bpe_file,omitempty"`
	BLEUEvery  int    `json:"bleu_every,omitempty"`
	BLEUSample int    `json:"bleu_sample,omitempty"`
	KeepBest   string `json:"keep_best,omitempty"`

	Model          string  `json:"model,omitempty"`
	Preset         string  `json:"preset"`
	ConfigFile     string  `json:"config_file,omitempty"`
	Dropout        float64 `json:"dropout"`
	LabelSmoothing float64 `json:"label_smoothing"`

	Steps      int     `json:"steps"`
	Epochs     float64 `json:"epochs"`
	MaxTokens  int     `json:"max_tokens"`
	Warmup     int     `json:"warmup"`
	LRFactor   float64 `json:"lr_factor"`
	Cooldown   float64 `json:"cooldown,omitempty"`
	Clip       float64 `json:"clip"`
	Accumulate int     `json:"accumulate"`
	Seed       uint64  `json:"seed"`
	EvalEvery  int     `json:"eval_every"`
	SaveEvery  int     `json:"save_every"`
	CheckEvery int     `json:"check_every,omitempty"`
	Keep       int     `json:"keep"`
	Average    int     `json:"average"`
	Out        string  `json:"out"`
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
	fs.IntVar(&s.BLEUEvery, "bleu-every", 1, "files: translate a validation sample and report its BLEU every N evaluations (0: never)")
	fs.IntVar(&s.BLEUSample, "bleu-sample", 200, "files: validation sentences translated (greedily) for BLEU")
	fs.StringVar(&s.KeepBest, "keep-best", "loss", "keep best.safetensors by validation loss or by BLEU: loss or bleu")
	fs.StringVar(&s.Model, "model", model.KindEncoderDecoder, "model kind: "+strings.Join(model.Kinds(), ", ")+
		"; a decoder-only model learns source EOS target as one sequence, or with -task files and no sources (-train-tgt and -valid-tgt, or -data with -src-lang \"\") the target text alone")
	fs.StringVar(&s.Preset, "preset", "tiny", "model preset: "+presetList())
	fs.StringVar(&s.ConfigFile, "config", "", "JSON file of model config fields overriding the preset")
	fs.Float64Var(&s.Dropout, "dropout", -1, "dropout (default: the preset's; 0 for synthetic tasks, which do not overfit)")
	fs.Float64Var(&s.LabelSmoothing, "label-smoothing", -1, "label smoothing ε (default: the preset's, 0.1)")
	fs.IntVar(&s.Steps, "steps", 0, "optimizer updates (default 450 for synthetic tasks, or from -epochs)")
	fs.Float64Var(&s.Epochs, "epochs", 0, "train this many passes over the data instead of -steps")
	fs.IntVar(&s.MaxTokens, "max-tokens", 0, "token budget of a batch (default 2048 for synthetic tasks, 4096 for files)")
	fs.IntVar(&s.Warmup, "warmup", 0, "learning-rate warmup updates (default 4000; 100 for synthetic tasks)")
	fs.Float64Var(&s.Cooldown, "cooldown", -1, "decay the learning rate linearly towards zero over this fraction of the run's last updates (default: 0, the paper's schedule; 1/3 for synthetic tasks)")
	fs.Float64Var(&s.LRFactor, "lr-factor", 0, "learning-rate factor of the schedule (default 1; 0.5 for synthetic tasks)")
	fs.Float64Var(&s.Clip, "clip", -1, "clip gradients to this global norm (0: off; default off for files, 1 for synthetic tasks)")
	fs.IntVar(&s.Accumulate, "accumulate", 1, "batches per update (gradient accumulation)")
	fs.Uint64Var(&s.Seed, "seed", 1, "random seed (initialisation, data order, dropout)")
	fs.IntVar(&s.EvalEvery, "eval-every", 0, "evaluate every N updates (default: 10 times a run)")
	fs.IntVar(&s.SaveEvery, "save-every", 0, "checkpoint every N updates (default: as -eval-every)")
	fs.IntVar(&s.CheckEvery, "check-every", 100, "under mpirun: compare the ranks' parameter checksums every N updates, and at every evaluation (0: at evaluations only)")
	fs.IntVar(&s.Keep, "keep", 5, "step checkpoints to keep")
	fs.IntVar(&s.Average, "average", 0, "at the end, average the last N checkpoints into averaged.safetensors (the paper: 5)")
	fs.StringVar(&s.Out, "out", "", "output directory (default runs/TIME)")
	fs.BoolVar(&f.overwrite, "overwrite", false, "start over in an -out directory that holds a run, removing the run's files")
	fs.StringVar(&f.resume, "resume", "", "continue the run in this output directory from its last checkpoint, with its settings")
	fs.BoolVar(&f.summary, "summary", false, "print the model's parameter summary and exit")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	fs.StringVar(&f.memProfile, "memprofile", "", "write a heap profile to this file at the end of the run (go tool pprof)")
	fs.IntVar(&f.vocabSize, "vocab-size", 0, "with -summary: vocabulary size (default: the task's)")
	return f
}

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

// kind is the model kind; run.json files of older runs have none.
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
		setDefault(&s.Warmup, 100)
		setDefaultFloat(&s.LRFactor, 0.5)
		if s.Cooldown < 0 {
			s.Cooldown = 1.0 / 3
		}
		if s.Dropout < 0 {
			s.Dropout = 0
		}
		if s.Clip < 0 {
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
		setDefault(&s.Warmup, 4000)
		setDefaultFloat(&s.LRFactor, 1)
		s.Clip = max(s.Clip, 0)
		s.Cooldown = max(s.Cooldown, 0)
	}
	if err := s.checkBLEU(); err != nil {
		return err
	}
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
	return s.check()
}

// check refuses settings out of range, NaN included, naming the flag. It
// runs on the flags of a new run and on the run.json of a resumed one,
// before anything is written.
func (s settings) check() error {
	ints := []struct {
		flag           string
		v, least, most int
	}{
		{"symbols", s.Symbols, 1, 1 << 20}, {"min-len", s.MinLen, 1, s.MaxLen}, {"max-len", s.MaxLen, 1, 1 << 12},
		{"train-size", s.TrainSize, 1, maxExamples / max(1, s.MaxLen)}, {"held-out", s.HeldOut, 1, maxExamples / max(1, s.MaxLen)},
		{"max-sentence-len", s.MaxSentLen, 1, 1 << 16}, {"bpe-merges", s.BPEMerges, 0, 1 << 24},
		{"steps", s.Steps, 0, maxSetting}, {"max-tokens", s.MaxTokens, 0, 1 << 24},
		{"warmup", s.Warmup, 0, maxSetting}, {"accumulate", s.Accumulate, 1, 1 << 16},
		{"eval-every", s.EvalEvery, 0, maxSetting}, {"save-every", s.SaveEvery, 0, maxSetting},
		{"check-every", s.CheckEvery, 0, maxSetting},
		{"keep", s.Keep, 1, 1 << 16}, {"average", s.Average, 0, s.Keep},
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
		{"epochs", s.Epochs, maxSetting, false}, {"lr-factor", s.LRFactor, maxSetting, false}, {"clip", s.Clip, maxSetting, true},
		{"cooldown", s.Cooldown, 1, true},
	}
	for _, c := range floats {
		if !(c.v >= 0 && c.v < c.most) && !(c.unsetOK && c.v == -1) {
			return errors.Errorf("-%s %v: want a number in [0, %v)", c.flag, c.v, c.most)
		}
	}
	if !slices.Contains(model.Kinds(), s.kind()) {
		return errors.Errorf("-model %q: want one of %s", s.Model, strings.Join(model.Kinds(), ", "))
	}
	return nil
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
	if s.BPEFile == "" && s.BPEMerges <= 0 {
		return errors.New("-bpe-merges must be positive (or give -bpe FILE)")
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

func setDefaultFloat(v *float64, def float64) {
	if *v == 0 {
		*v = def
	}
}

// save writes the settings to OUT/run.json.
func (s settings) save() error {
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return errors.Wrap(err, "encoding settings")
	}
	return atomicfile.WriteBytes(filepath.Join(s.Out, rundir.Settings), append(js, '\n'))
}

// loadSettings reads OUT/run.json of an earlier run.
func loadSettings(dir string) (settings, error) {
	var s settings
	js, err := os.ReadFile(filepath.Join(dir, rundir.Settings))
	if err != nil {
		return s, errors.Wrapf(err, "-resume %s: not a training output directory", dir)
	}
	if err := strictjson.Decode(js, &s); err != nil {
		return s, errors.Wrapf(err, "%s", filepath.Join(dir, rundir.Settings))
	}
	s.Out = dir
	if s.KeepBest == "" {
		s.KeepBest = "loss" // a run.json written before -keep-best
	}
	err = s.check()
	if err == nil {
		err = s.checkSaved()
	}
	return s, errors.Wrapf(err, "%s", filepath.Join(dir, rundir.Settings))
}

// checkSaved checks what check leaves to complete, which fills in the
// defaults of a new run's flags: the task and its files, the preset and
// the BLEU settings of a run.json.
func (s settings) checkSaved() error {
	if s.synthetic() {
		_, err := data.NewTask(s.Task, data.TaskConfig{Symbols: s.Symbols, MinLen: s.MinLen, MaxLen: s.MaxLen})
		if err != nil {
			return errors.Wrap(err, "-task")
		}
	} else if s.TrainTgt == "" || s.ValidTgt == "" || (s.TrainSrc == "") != (s.ValidSrc == "") ||
		s.TrainSrc == "" && s.layout().Sources {
		return errors.Errorf("-task files: want train_src, train_tgt, valid_src and valid_tgt (a decoder-only model: train_tgt and valid_tgt alone will do), have %q, %q, %q and %q",
			s.TrainSrc, s.TrainTgt, s.ValidSrc, s.ValidTgt)
	}
	if _, err := model.Preset(s.Preset, model.MinVocab); err != nil {
		return errors.Wrap(err, "-preset")
	}
	return s.checkBLEU()
}
