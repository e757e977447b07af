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
// cmd/translate translates with the output directory. Ctrl-C (SIGINT), SIGTERM
// or SIGUSR1 saves a checkpoint and stops (under mpirun, every rank stops
// after the same step: see docs/mpi.md);
// -resume OUT continues exactly where the run stopped, from the newest
// checkpoint that loads. An OUT that holds a run is refused unless -resume or
// -overwrite, and OUT is locked while a run uses it (see trainer/rundir).
// -optimizer adamw -weight-decay 0.01 -schedule cosine -lr 5e-4 trains with
// AdamW and a cosine learning rate (see trainer.Options), recorded in
// run.json like every setting; a value given is used or refused, never
// taken for the default. -log-every N logs the loss of every N-th update
// (and adds it to metrics.jsonl). -summary prints the parameter summary
// of the model and exits. See -h for every flag.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/cliflag"
	"github.com/transformer-go/transformer/internal/strictjson"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer"
	"github.com/transformer-go/transformer/trainer/dist"
	"github.com/transformer-go/transformer/trainer/rundir"
)

// gcPercent is the heap growth at which a run collects garbage: training
// holds hundreds of megabytes of long-lived tensors (the arena, the
// parameters, Adam's moments) and makes little garbage a step, so Go's
// default of 100, which lets the heap double before a collection, showed
// as up to 400 MB of peak memory in evaluation and at the end of a run
// (docs/training.md#memory). GOGC, when set, decides instead.
const gcPercent = 25

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	world, err := dist.Join()
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
	ctx, stop := signalContext(os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	err = run(ctx, world, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) && !errors.Is(err, trainer.ErrInterrupted) { // -h printed the usage: exit 0
		fmt.Fprintf(os.Stderr, "train%s: %v\n", rankTag(world), err)
		os.Exit(1) // under mpirun, without Leave: mpirun then stops every rank
	}
	world.Leave()
	os.Exit(exitStatus(err, context.Cause(ctx)))
}

// signalContext is a context cancelled, with a signalCause, by the first
// of the signals, and the function that stops listening for them.
func signalContext(sigs ...os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		if sig, ok := <-ch; ok {
			cancel(signalCause{sig})
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(ch)
	}
}

// signalCause is the cause of a context that a signal cancelled.
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string { return "received " + c.sig.String() }

// exitStatus is the command's exit status after run returned err, its
// context cancelled for cause: 130, the shell's for SIGINT, after Ctrl-C
// stopped the run (which saved a checkpoint and said how to resume), so
// that a script tells an interrupted run from a finished one; 0 after
// SIGTERM or SIGUSR1, with which a scheduler (or mpirun) asks a run to
// checkpoint and stop, and after a run that ended.
func exitStatus(err, cause error) int {
	var sc signalCause
	if errors.Is(err, trainer.ErrInterrupted) && errors.As(cause, &sc) && sc.sig == os.Interrupt {
		return 130
	}
	return 0
}

// rankTag names the rank in messages of a data-parallel run.
func rankTag(w *dist.World) string {
	if w.Size() == 1 {
		return ""
	}
	return fmt.Sprintf(" (rank %d of %d)", w.Rank(), w.Size())
}

// summaryLine says what the command does, atop -h.
const summaryLine = "train trains a Transformer (by default the tiny preset on the built-in copy task; -task files on a corpus) into a run directory, resumable with -resume."

// run is the command: alone, or as one rank of world.
func run(ctx context.Context, world *dist.World, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	f := newFlags(fs)
	if err := cliflag.Parse(fs, args, "train [flags]", summaryLine, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.Errorf("unexpected arguments %q (flags start with -)", fs.Args())
	}
	if err := given(fs, world); err != nil {
		return err
	}
	if f.summary {
		if !world.Root() {
			return nil
		}
		return summary(f, stdout)
	}
	s, err := f.settings(fs)
	if s, err = shareSettings(world, s, err); err != nil {
		return err
	}
	for _, p := range [][2]string{{"-cpuprofile", f.cpuProfile}, {"-memprofile", f.memProfile}} {
		if err := rundir.Outside(p[0], p[1], s.Out); err != nil {
			return err
		}
		if err := rundir.NotInput(p[0], p[1], "-train-src", s.TrainSrc, "-train-tgt", s.TrainTgt, "-valid-src", s.ValidSrc,
			"-valid-tgt", s.ValidTgt, "-bpe", s.BPEFile, "-spm", s.SPMFile, "-config", s.ConfigFile); err != nil {
			return err
		}
	}
	return profiled(f, func(p *profiles) error { return train(ctx, world, s, f, p, stderr) })
}

// shareSettings gives every rank rank 0's settings (its clock names the
// default output directory; it alone reads run.json on -resume), or rank
// 0's failure to make them.
func shareSettings(world *dist.World, s settings, err error) (settings, error) {
	if world.Size() == 1 {
		return s, err
	}
	if err := world.Agree(err); err != nil {
		return s, err
	}
	js, err := json.Marshal(s)
	if err != nil {
		return s, errors.Wrap(err, "encoding the settings")
	}
	if js, err = world.BroadcastBytes(js); err != nil {
		return s, err
	}
	var root settings
	return root, errors.Wrap(json.Unmarshal(js, &root), "rank 0's settings")
}

// settings are the run's settings: from the flags, or from the run to resume.
func (f *flags) settings(fs *flag.FlagSet) (settings, error) {
	if f.resume == "" {
		if err := f.unused(fs); err != nil {
			return settings{}, err
		}
		s := f.s
		s.Precision = string(f.runtime.Precision)
		if !isGiven(fs, "average") { // the default gives way to a smaller -keep
			s.Average = min(s.Average, max(s.Keep, 0))
		}
		if err := s.complete(); err != nil {
			return s, err
		}
		return s, untranslated(fs, s)
	}
	extra, steps := "", false
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "steps":
			steps = true
		case "resume", "cpuprofile", "memprofile", "device":
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
	if steps {
		if f.s.Steps <= 0 || f.s.Steps > maxSetting {
			return s, errors.Errorf("-steps %d: want a number from 1 to %d", f.s.Steps, maxSetting)
		}
		s.Steps, s.Epochs = f.s.Steps, 0
	}
	return s, s.checkOptions()
}

// isGiven reports whether the flag name was given.
func isGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == name })
	return given
}

// unused refuses a flag a fresh run would silently ignore: a synthetic
// task's with -task files, a file task's with a synthetic one, one that
// another flag makes idle, and -vocab-size without -summary.
func (f *flags) unused(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(fl *flag.Flag) {
		if err == nil {
			err = f.unusedFlag(fl.Name)
		}
	})
	return err
}

// unusedFlag is unused's error for the flag name, if it has no effect.
func (f *flags) unusedFlag(name string) error {
	s := f.s
	switch name {
	case "symbols", "min-len", "max-len", "train-size", "held-out":
		if !s.synthetic() {
			return errors.Errorf("-%s has no effect with -task files (it is for the synthetic tasks)", name)
		}
	case "data", "src-lang", "tgt-lang", "train-src", "train-tgt", "valid-src", "valid-tgt",
		"max-sentence-len", "bpe-merges", "bpe", "spm", "bleu-every", "bleu-sample":
		if s.synthetic() {
			return errors.Errorf("-%s has no effect with -task %s (it is for -task files)", name, s.Task)
		}
		return f.unusedFileFlag(name)
	case "vocab-size":
		return errors.Errorf("-vocab-size %d has no effect without -summary (a run's vocabulary is its task's)", f.vocabSize)
	}
	return nil
}

// unusedFileFlag is unusedFlag's error for a flag of -task files.
func (f *flags) unusedFileFlag(name string) error {
	s := f.s
	switch {
	case (name == "src-lang" || name == "tgt-lang") && s.Data == "":
		return errors.Errorf("-%s has no effect without -data (it names the files in -data's directory)", name)
	case name == "bpe-merges" && s.BPEFile != "":
		return errors.New("-bpe-merges has no effect with -bpe (the merges are the file's)")
	case name == "bpe-merges" && s.SPMFile != "":
		return errors.New("-bpe-merges has no effect with -spm (the SentencePiece model's pieces are the vocabulary)")
	case name == "spm" && s.BPEFile != "":
		return errors.New("-spm and -bpe are two tokenizers: give one")
	case name == "bleu-sample" && s.BLEUEvery == 0:
		return errors.New("-bleu-sample has no effect with -bleu-every 0")
	}
	return nil
}

// untranslated refuses the BLEU flags, once the settings s are complete,
// for a model that translates nothing: an encoder-only model, or a
// language model of text.
func untranslated(fs *flag.FlagSet, s settings) error {
	var err error
	fs.Visit(func(fl *flag.Flag) {
		if err == nil && (fl.Name == "bleu-every" || fl.Name == "bleu-sample") && (s.text() || s.layout().Aligned) {
			err = errors.Errorf("-%s has no effect with a model that does not translate sources (an encoder-only model, or a language model of text)", fl.Name)
		}
	})
	return err
}

// summaryFlags are the flags -summary reads: those of the model.
var summaryFlags = []string{"summary", "vocab-size", "symbols", "model", "preset", "config", "dropout", "label-smoothing", "precision"}

// noDefault are flags whose 0 would stand for their default, and which
// are refused when given 0.
var noDefault = []string{"steps", "epochs", "max-tokens", "eval-every", "save-every", "accumulate", "keep"}

// optionalFloats are flags of cliflag.Float, whose -1 stands for their
// default, and which are refused when given -1.
var optionalFloats = []string{"dropout", "label-smoothing", "cooldown", "clip"}

// given refuses a given flag that would do nothing or be taken for its
// default: a 0 or -1 that stands for the default, -check-every in one
// process, and flags of a run with -summary.
func given(fs *flag.FlagSet, world *dist.World) error {
	summary := fs.Lookup("summary").Value.String() == "true"
	var err error
	fs.Visit(func(fl *flag.Flag) {
		v := fl.Value.String()
		switch {
		case err != nil:
		case summary && !slices.Contains(summaryFlags, fl.Name):
			err = errors.Errorf("-%s has no effect with -summary, which prints the model's parameters and trains nothing", fl.Name)
		case slices.Contains(noDefault, fl.Name) && (v == "0" || v == "-0"):
			err = errors.Errorf("-%s 0: want a number from 1 (leave the flag out for its default)", fl.Name)
		case slices.Contains(optionalFloats, fl.Name) && v == "":
			err = errors.Errorf("-%s -1: want a number from 0 (leave the flag out for its default)", fl.Name)
		case fl.Name == "check-every" && world.Size() == 1:
			err = errors.New("-check-every has no effect in one process (it compares the ranks of a run under mpirun)")
		}
	})
	return err
}

// summary prints the parameter summary of the configured model.
func summary(f *flags, w io.Writer) error {
	if err := f.s.check(); err != nil {
		return err
	}
	vocab := f.vocabSize
	switch {
	case vocab == 0:
		vocab = f.s.Symbols + 4
	case vocab < model.MinVocab || vocab > model.MaxVocab:
		return errors.Errorf("-vocab-size %d: want 0 (the task's) or a number from %d to %d", vocab, model.MinVocab, model.MaxVocab)
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

// modelConfig is the preset, overridden by the config file and flags, with
// the vocabulary vocab (0: not known yet, and the least is taken). The
// file's kind must be -model's, and its vocab, if it has one, the task's:
// neither is silently replaced.
func modelConfig(s settings, vocab int) (model.Config, error) {
	known := vocab != 0
	if !known {
		vocab = model.MinVocab
	}
	cfg, err := model.Preset(s.Preset, model.MinVocab) // the vocabulary is checked below
	if err != nil {
		return cfg, errors.Wrap(err, "-preset")
	}
	cfg.Kind, cfg.Vocab = s.kind(), vocab
	if s.ConfigFile != "" {
		if cfg, err = model.LoadConfig(s.ConfigFile, cfg); err != nil {
			return cfg, err
		}
		if cfg.Kind != s.kind() {
			return cfg, errors.Errorf("-config %s: field kind %q, but -model is %s: give the kind with -model", s.ConfigFile, cfg.Kind, s.kind())
		}
		if known && cfg.Vocab != vocab {
			return cfg, errors.Errorf("-config %s: field vocab %d, but the task's vocabulary has %d tokens: leave the field out (a run's vocabulary is its data's)", s.ConfigFile, cfg.Vocab, vocab)
		}
		if idle := cfg.IdleLayers(); idle != "" && configSets(s.ConfigFile, idle) && cfg.EncoderLayers*cfg.DecoderLayers != 0 {
			return cfg, errors.Errorf("-config %s: field %s has no effect on a %s model, which has no such stack: leave it out", s.ConfigFile, idle, cfg.Kind)
		}
		cfg.Vocab = vocab
	}
	cfg = cfg.Trimmed() // config.json describes the model, without the preset's other stack
	if s.Dropout >= 0 {
		cfg.Dropout = s.Dropout
	}
	if s.LabelSmoothing >= 0 {
		cfg.LabelSmoothing = s.LabelSmoothing
	}
	return cfg, errors.Wrap(cfg.Validate(), "model config")
}

// sameConfig refuses to resume the run in dir with a model config other
// than its config.json's: run.json names the -config file, which may have
// changed since the run started, and a changed dropout or norm_eps would
// fit the checkpoint's shapes and continue a different run without a word.
func sameConfig(cfg model.Config, dir string) error {
	path := filepath.Join(dir, rundir.Config)
	raw, err := strictjson.ReadFile(path)
	if err != nil {
		return errors.Wrap(err, "the run's model config")
	}
	var was, now map[string]any
	js, _ := json.Marshal(cfg)
	if err := json.Unmarshal(raw, &was); err != nil {
		return errors.Wrapf(err, "%s", path)
	}
	json.Unmarshal(js, &now)
	delete(was, cfg.IdleLayers()) // an older run's config.json has the preset's
	delete(now, cfg.IdleLayers())
	var changed []string
	for k := range now {
		if fmt.Sprint(was[k]) != fmt.Sprint(now[k]) {
			changed = append(changed, fmt.Sprintf("%s %v, was %v", k, now[k], was[k]))
		}
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		return errors.Errorf("the model config is not the run's %s (%s): was its -config file changed since the run started?", path, strings.Join(changed, "; "))
	}
	return nil
}

// checkModel checks the model the settings describe, but for its
// vocabulary: its config, its variants, and the memory it needs with the
// least vocabulary (the real one needs more); and the memory a synthetic
// task's examples take.
func checkModel(s settings) error {
	if err := s.checkTaskMemory(); err != nil {
		return err
	}
	cfg, err := modelConfig(s, 0)
	if err == nil {
		_, err = model.FromConfig(cfg, nil)
	}
	if err == nil {
		err = trainer.CheckMemory(cfg, s.MaxTokens)
	}
	return err
}

// train runs (or resumes) training as the settings say. The settings are
// valid here; the run directory is locked before anything is written to it,
// and nothing is written (an overwritten run's files are not removed) until
// the data is read, the model built and the run resumed. In a
// data-parallel run every rank trains, rank 0 alone writes, and the ranks
// agree after each phase, so that one rank's failure stops them all.
func train(ctx context.Context, world *dist.World, s settings, f *flags, prof *profiles, stderr io.Writer) error {
	log := logger(world, stderr)
	if err := checkModel(s); err != nil {
		return err // the vocabulary comes later; the rest is checked before anything is written
	}
	f.runtime.Precision = s.precision()
	rt, err := f.runtime.Open(stderr)
	if err != nil {
		return err
	}
	dir, err := openRunDir(world, s, f)
	if err = world.Agree(err); err != nil {
		return err
	}
	defer dir.Close()
	t, err := setup(ctx, world, s, f, dir, rt, log, stderr)
	if err = world.Agree(err); err != nil {
		return err
	}
	prof.trained = true
	err = t.Run(ctx)
	if err := prof.writeHeap(); err != nil {
		return err
	}
	runtime.KeepAlive(t)
	if err != nil {
		if errors.Is(err, trainer.ErrInterrupted) {
			log.Info("interrupted: checkpoint saved", "step", t.Step(), "resume", resumeCommand(world, s.Out))
		}
		return err
	}
	if why := t.Stopped(); why != "" {
		log.Info("stopped early", "why", why)
	}
	log.Info("trained", "step", t.Step(), "activation_memory_mb", rt.ArenaBytes()>>20)
	if !world.Root() {
		return nil
	}
	return finish(s, dir, log)
}

// resumeCommand is the command that continues the run in out, from the
// directory the user is in: this command (see self); under mpirun, on as
// many ranks (any number would do).
func resumeCommand(world *dist.World, out string) string {
	cmd := fmt.Sprintf("%s -resume %s", self(os.Args[0]), out)
	if world.Size() > 1 {
		return fmt.Sprintf("mpirun -np %d %s", world.Size(), cmd)
	}
	return cmd
}

// self is how to run this command again from the working directory,
// given the path it was run by: a binary that "go run" built in a
// temporary directory is run again by its package path (which works from
// anywhere in the module); an installed binary found on $PATH by its
// name; any other by its path.
func self(arg0 string) string {
	switch {
	case strings.Contains(filepath.ToSlash(arg0), "/go-build"):
		return "go run " + modulePath + "/cmd/train"
	case !strings.ContainsRune(arg0, filepath.Separator):
		return arg0
	}
	if p, err := exec.LookPath(filepath.Base(arg0)); err == nil && sameFile(p, arg0) {
		return filepath.Base(arg0)
	}
	return arg0
}

// modulePath is this module's path.
const modulePath = "github.com/transformer-go/transformer"

// sameFile reports whether the paths a and b name the same file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// logger logs at info level on rank 0 and only errors on the others.
func logger(world *dist.World, stderr io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if !world.Root() {
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

// setup loads the data, builds the model and its trainer, and resumes the
// run if asked; only then does rank 0 write: a new run clears an
// overwritten one and writes its tokenizer, config.json and run.json, a
// resumed one its run.json (its -steps may have changed).
func setup(ctx context.Context, world *dist.World, s settings, f *flags, dir *rundir.Dir, rt *graph.Runtime, log *slog.Logger, stderr io.Writer) (*trainer.Trainer, error) {
	c, err := loadCorpus(ctx, s, log, f.resume)
	if err != nil {
		return nil, err
	}
	if s.Epochs > 0 {
		steps := math.Ceil(s.Epochs * float64(c.batches) / float64(s.Accumulate))
		if steps > maxSetting {
			return nil, errors.Errorf("-epochs %v: %d batches an epoch make %.0f steps, more than %d", s.Epochs, c.batches, steps, maxSetting)
		}
		s.Steps = max(1, int(steps))
		s.recordDefaults()
	}
	if s.Warmup != nil && *s.Warmup > s.Steps {
		log.Warn("the warm-up is longer than the run: the learning rate never reaches its peak; lower -warmup", "warmup", *s.Warmup, "steps", s.Steps)
	}
	cfg, err := modelConfig(s, c.vocab)
	if err == nil && f.resume != "" {
		err = sameConfig(cfg, f.resume)
	}
	if err == nil {
		err = trainer.CheckMemory(cfg, s.MaxTokens)
	}
	if err == nil {
		err = s.checkPositions(cfg, c.positions)
	}
	if err != nil {
		return nil, err
	}
	m, params, err := model.Init(cfg, tensor.Float32, s.Seed)
	if err != nil {
		return nil, err
	}
	log.Info("model", "preset", s.Preset, "parameters", params.Count(), "vocab", cfg.Vocab, "steps", s.Steps,
		"out", s.Out, "ranks", world.Size(), "device", rt.Device(), "precision", rt.Precision(), "bf16_kernel", bf16Kernel(rt))
	opt := s.options()
	opt.Meta, opt.World, opt.Runtime = c.meta, world, rt
	t, err := trainer.New(m, params, c.data, opt, trainer.NewReporter(stderr, log))
	if err != nil || !world.Root() {
		return t, s.flagError(err)
	}
	if err := dir.Check(); err != nil {
		return nil, err // the trainer took the directory at s.Out for its own
	}
	if f.resume != "" {
		if err := resume(t, s.Out, log); err != nil {
			return nil, err
		}
		return t, s.save(dir)
	}
	s.Dropout, s.LabelSmoothing = cfg.Dropout, cfg.LabelSmoothing // what the run uses, the preset's or -config's included
	if err := dir.Clear(); err != nil {
		return nil, err
	}
	if err := trainer.SaveTokenizer(c.tok, dir.Root()); err != nil {
		return nil, err
	}
	if err := dir.Check(); err == nil {
		err = cfg.Save(dir.Path(rundir.Config))
	}
	if err != nil {
		return nil, err
	}
	return t, s.save(dir)
}

// checkPositions refuses a model whose max_len cannot hold the positions
// the data needs, naming the settings that fix it.
func (s settings) checkPositions(cfg model.Config, positions int) error {
	if positions <= cfg.MaxLen {
		return nil
	}
	lengths := "-max-len"
	if !s.synthetic() {
		lengths = "-max-sentence-len"
	}
	from := "-preset " + s.Preset
	if s.ConfigFile != "" {
		from = "-config " + s.ConfigFile
	}
	return errors.Errorf("max_len %d (of %s): the data needs %d positions; raise max_len in a -config file, or lower %s",
		cfg.MaxLen, from, positions, lengths)
}

// openRunDir locks the run directory: a new one (refusing a finished or
// running run unless -overwrite), or the one to resume; on rank 0 alone
// (the others' is nil).
func openRunDir(world *dist.World, s settings, f *flags) (*rundir.Dir, error) {
	if !world.Root() {
		return nil, nil
	}
	if f.resume != "" {
		return rundir.Open(s.Out)
	}
	return rundir.Create(s.Out, f.overwrite)
}

// resume restores the newest loadable checkpoint and says what it skipped.
func resume(t *trainer.Trainer, out string, log *slog.Logger) error {
	if paths, err := trainer.Checkpoints(out); err == nil && len(paths) == 0 {
		return errors.Errorf("%s has no checkpoint to resume: the run stopped before saving its first; start it over with -out %s -overwrite", out, out)
	}
	r, err := t.Resume(out)
	for _, e := range r.Skipped {
		// The message alone: slog would print an error's stack trace.
		log.Warn("skipped a checkpoint that does not load", "error", e.Error())
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

// finish averages checkpoints if asked and names the outputs.
func finish(s settings, dir *rundir.Dir, log *slog.Logger) error {
	if err := dir.Check(); err != nil {
		return err
	}
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
		"metrics", filepath.Join(s.Out, "metrics.jsonl"), "plot", filepath.Join(s.Out, "loss.png"), "try", tryCommand(s))
	return nil
}

// bf16Kernel names the kernel of bf16 products (graph.BF16Kernel) for a
// run in bf16, and is empty for the others.
func bf16Kernel(rt *graph.Runtime) string {
	if rt.Precision() != graph.BF16 {
		return ""
	}
	return graph.BF16Kernel()
}
