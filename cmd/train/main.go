// Command train trains the Transformer.
//
// With no flags it trains the tiny preset on the built-in copy task, which
// needs no download, and writes its output to runs/TIME:
//
//	go run ./cmd/train
//
// On German–English Multi30k (a directory of train.de.gz, train.en.gz,
// val.de.gz, val.en.gz):
//
//	go run ./cmd/train -task files -data ../shared/data/multi30k -preset small -epochs 20
//
// The output directory holds run.json (the settings), config.json,
// metrics.jsonl (one line per evaluation), checkpoints/ (the last -keep step
// checkpoints), best.safetensors (lowest validation loss, or with -keep-best
// bleu highest BLEU), final.safetensors, loss.png, and for files bpe.txt and
// vocab.txt. On files, every -bleu-every evaluations also translate the first
// -bleu-sample validation sentences greedily and report their BLEU;
// cmd/translate translates with the output directory. Ctrl-C saves a checkpoint;
// -resume OUT continues exactly where the run stopped. -summary prints the
// parameter summary of the model and exits. See -h for every flag.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer"
	"github.com/transformer-go/transformer/trainer/rundir"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "train:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := newFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.Errorf("unexpected arguments %q (flags start with -)", fs.Args())
	}
	if f.summary {
		return summary(f, stdout)
	}
	s, err := f.settings(fs)
	if err != nil {
		return err
	}
	return profiled(f, func() error { return train(ctx, s, f, stderr) })
}

// settings are the run's settings: from the flags, or from the run to resume.
func (f *flags) settings(fs *flag.FlagSet) (settings, error) {
	if f.resume == "" {
		s := f.s
		return s, s.complete()
	}
	extra := ""
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "resume", "steps", "cpuprofile", "memprofile":
		default:
			extra = fl.Name
		}
	})
	if extra != "" {
		return settings{}, errors.Errorf("-resume takes the run's own settings; only -steps may change (have -%s)", extra)
	}
	s, err := loadSettings(f.resume)
	if err != nil {
		return s, err
	}
	if f.s.Steps > 0 {
		s.Steps, s.Epochs = f.s.Steps, 0
	}
	if p := filepath.Join(s.Out, rundir.BPE); !s.synthetic() && fileExists(p) {
		s.BPEFile = p
	}
	return s, nil
}

// summary prints the parameter summary of the configured model.
func summary(f *flags, w io.Writer) error {
	vocab := f.vocabSize
	if vocab == 0 {
		vocab = f.s.Symbols + 4
	}
	cfg, err := modelConfig(f.s, vocab)
	if err != nil {
		return err
	}
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		return err
	}
	params, err := model.ParamShapes(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(w, model.Summary(params))
	return err
}

// modelConfig is the preset, overridden by the config file and flags.
func modelConfig(s settings, vocab int) (model.Config, error) {
	cfg, err := model.Preset(s.Preset, vocab)
	if err != nil {
		return cfg, errors.Wrap(err, "-preset")
	}
	cfg.Kind = s.kind()
	if s.ConfigFile != "" {
		if cfg, err = model.LoadConfig(s.ConfigFile, cfg); err != nil {
			return cfg, err
		}
		cfg.Vocab = vocab
	}
	if s.Dropout >= 0 {
		cfg.Dropout = s.Dropout
	}
	if s.LabelSmoothing >= 0 {
		cfg.LabelSmoothing = s.LabelSmoothing
	}
	return cfg, errors.Wrap(cfg.Validate(), "model config")
}

// checkModel checks the model the settings describe, but for its
// vocabulary: its config and its variants.
func checkModel(s settings) error {
	cfg, err := modelConfig(s, model.MinVocab)
	if err == nil {
		_, err = model.FromConfig(cfg, nil)
	}
	return err
}

// train runs (or resumes) training as the settings say. The settings are
// valid here; the run directory is locked before anything is written to it,
// and run.json is written only once the model is built (and resumed).
func train(ctx context.Context, s settings, f *flags, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if err := checkModel(s); err != nil {
		return err // the vocabulary comes later; the rest is checked before anything is written
	}
	dir, err := openRunDir(s, f)
	if err != nil {
		return err
	}
	defer dir.Close()
	c, err := loadCorpus(s, log)
	if err != nil {
		return err
	}
	if s.Epochs > 0 {
		s.Steps = max(1, int(math.Ceil(s.Epochs*float64(c.batches)/float64(s.Accumulate))))
	}
	cfg, err := modelConfig(s, c.vocab)
	if err == nil {
		err = cfg.CheckMemory(true, s.MaxTokens)
	}
	if err != nil {
		return err
	}
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		return err
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(s.Seed, 2)))
	if err != nil {
		return err
	}
	log.Info("model", "preset", s.Preset, "parameters", params.Count(), "vocab", cfg.Vocab, "steps", s.Steps, "out", s.Out)
	opt := s.options()
	opt.Meta = c.meta
	t, err := trainer.New(m, params, c.data, opt, newReporter(stderr, log))
	if err != nil {
		return err
	}
	if f.resume != "" {
		if err := resume(t, s.Out, log); err != nil {
			return err
		}
	}
	if err := s.save(); err != nil {
		return err
	}
	if err := cfg.Save(dir.Path(rundir.Config)); err != nil {
		return err
	}
	err = t.Run(ctx)
	if err := writeHeapProfile(f.memProfile); err != nil {
		return err
	}
	runtime.KeepAlive(t)
	if err != nil {
		if errors.Is(err, trainer.ErrInterrupted) {
			log.Info("interrupted: checkpoint saved", "step", t.Step(), "resume", "go run ./cmd/train -resume "+s.Out)
			return nil
		}
		return err
	}
	log.Info("trained", "step", t.Step(), "activation_memory_mb", params.ArenaBytes()>>20)
	return finish(s, log)
}

// openRunDir locks the run directory: a new one (refusing a finished or
// running run unless -overwrite), or the one to resume.
func openRunDir(s settings, f *flags) (*rundir.Dir, error) {
	if f.resume != "" {
		return rundir.Open(s.Out)
	}
	return rundir.Create(s.Out, f.overwrite)
}

// resume restores the newest loadable checkpoint and says what it skipped.
func resume(t *trainer.Trainer, out string, log *slog.Logger) error {
	r, err := t.Resume(out)
	for _, e := range r.Skipped {
		log.Warn("skipped a checkpoint that does not load", "error", e)
	}
	if r.TornMetrics {
		log.Warn("dropped the incomplete last line of metrics.jsonl")
	}
	if err != nil {
		return err
	}
	log.Info("resumed", "step", r.Step, "checkpoint", r.Path)
	return nil
}

// options are the trainer's options from the settings.
func (s settings) options() trainer.Options {
	eval := s.EvalEvery
	if eval == 0 {
		eval = max(1, s.Steps/10)
	}
	save := s.SaveEvery
	if save == 0 {
		save = eval
	}
	return trainer.Options{
		Steps: s.Steps, Warmup: s.Warmup, LRFactor: s.LRFactor, ClipNorm: s.Clip, Accumulate: s.Accumulate,
		EvalEvery: eval, SaveEvery: save, KeepLast: s.Keep, Seed: s.Seed, OutDir: s.Out,
	}
}

// finish averages checkpoints if asked and names the outputs.
func finish(s settings, log *slog.Logger) error {
	if s.Average > 0 {
		paths, err := trainer.Checkpoints(s.Out)
		if err != nil {
			return err
		}
		paths = paths[max(0, len(paths)-s.Average):]
		if err := trainer.Average(paths, filepath.Join(s.Out, "averaged.safetensors")); err != nil {
			return err
		}
		log.Info("averaged checkpoints", "count", len(paths), "path", filepath.Join(s.Out, "averaged.safetensors"))
	}
	log.Info("done", "out", s.Out, "final", filepath.Join(s.Out, "final.safetensors"),
		"metrics", filepath.Join(s.Out, "metrics.jsonl"), "plot", filepath.Join(s.Out, "loss.png"))
	return nil
}
