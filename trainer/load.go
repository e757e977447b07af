package trainer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer/rundir"
)

// Trained is a trained model loaded from a run directory by LoadRun,
// ready to translate, continue or tag text.
type Trained struct {
	Model  model.Model
	Params *graph.Params
	// Tokenizer is the run's BPE and vocabulary (bpe.txt, vocab.txt); nil
	// for a run on a synthetic task, whose ids are its symbols (its
	// checkpoint records no tokenizer).
	Tokenizer *data.Tokenizer
	// Path is the weights file loaded.
	Path string
	// Runtime is where and how Translate, Continue and Tag run the model
	// (nil: graph.CPU(), the CPU in float32).
	Runtime *graph.Runtime
}

// LoadOption sets how LoadRun loads a run.
type LoadOption func(*loadOptions)

// loadOptions are what LoadOptions set.
type loadOptions struct {
	reg *layers.Registry
}

// WithRegistry makes LoadRun build the model's variants from reg (see
// model.FromConfig): how a run of a variant of one's own is loaded.
func WithRegistry(reg *layers.Registry) LoadOption {
	return func(o *loadOptions) { o.reg = reg }
}

// LoadRun loads the model of the run directory dir in one call: its
// config and weights from checkpoint, which is "best", "final" or
// "averaged" (that file of dir) or a path (a relative one is in dir),
// rebuilt in float32 with the built-in variants (or those of a registry
// given WithRegistry), and its tokenizer, checked against the fingerprints
// the checkpoint records. A checkpoint that records a tokenizer (a run on
// text) is refused without its bpe.txt and vocab.txt; one that records
// none, of a synthetic task, loads without a Tokenizer.
func LoadRun(dir, checkpoint string, opts ...LoadOption) (*Trained, error) {
	var o loadOptions
	for _, opt := range opts {
		opt(&o)
	}
	path := checkpoint
	switch {
	case checkpoint == "best" || checkpoint == "final" || checkpoint == "averaged":
		path = filepath.Join(dir, checkpoint+".safetensors")
	case !filepath.IsAbs(checkpoint):
		path = filepath.Join(dir, checkpoint)
	}
	ck, err := model.LoadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	m, params, err := ck.Model(tensor.Float32, o.reg)
	if err != nil {
		return nil, err
	}
	tok, err := runTokenizer(ck, dir, m.Config().Vocab)
	if err != nil {
		return nil, err
	}
	return &Trained{Model: m, Params: params, Tokenizer: tok, Path: path}, nil
}

// runTokenizer reads the tokenizer of the run directory dir, checked
// against the checkpoint ck, whose model has vocab tokens: nil for a
// synthetic task's run, without the files and without their fingerprints
// in ck.
func runTokenizer(ck *model.Checkpoint, dir string, vocab int) (*data.Tokenizer, error) {
	bpePath, vocabPath := filepath.Join(dir, rundir.BPE), filepath.Join(dir, rundir.Vocab)
	_, recordsBPE := ck.Meta[data.BPEFingerprintKey]
	_, recordsVocab := ck.Meta[data.VocabFingerprintKey]
	var missing []string
	for _, p := range []string{bpePath, vocabPath} {
		if _, err := os.Stat(p); os.IsNotExist(err) {
			missing = append(missing, p)
		}
	}
	switch {
	case len(missing) == 2 && !recordsBPE && !recordsVocab:
		return nil, nil // a synthetic task's run
	case len(missing) > 0 && (recordsBPE || recordsVocab):
		return nil, errors.Errorf("%s was trained on text, with the tokenizer its metadata records, but %s is missing (a run trained from Go writes it when trainer.Data.Tokenizer is given)",
			ck.Path, strings.Join(missing, " and "))
	case len(missing) > 0:
		return nil, errors.Errorf("%s is missing: a run's tokenizer is %s and %s together", missing[0], rundir.BPE, rundir.Vocab)
	}
	bpe, err := data.ReadBPEFile(bpePath)
	if err != nil {
		return nil, err
	}
	v, err := data.ReadVocabFile(vocabPath)
	if err != nil {
		return nil, err
	}
	if err := checkFingerprints(ck.Meta, ck.Path, dir, bpe, v); err != nil {
		return nil, err
	}
	if v.Len() != vocab {
		return nil, errors.Errorf("%s holds %d tokens but the model of %s has %d", vocabPath, v.Len(), ck.Path, vocab)
	}
	return &data.Tokenizer{BPE: bpe, Vocab: v}, nil
}

// checkFingerprints refuses a bpe.txt or vocab.txt of dir that is not the
// one the checkpoint at path (metadata meta) was trained with (edited,
// emptied or reordered since), and a checkpoint that records no
// fingerprints, whose tokenizer cannot be checked.
func checkFingerprints(meta map[string]string, path, dir string, bpe *data.BPE, vocab *data.Vocab) error {
	for _, f := range []struct{ key, file, have string }{
		{data.BPEFingerprintKey, rundir.BPE, bpe.Fingerprint()},
		{data.VocabFingerprintKey, rundir.Vocab, vocab.Fingerprint()},
	} {
		want, ok := meta[f.key]
		if !ok {
			return errors.Errorf("%s records no %s (the fingerprint of the %s it was trained with), so %s cannot be checked against it",
				path, f.key, f.file, filepath.Join(dir, f.file))
		}
		if want != f.have {
			return errors.Errorf("%s is not the file the model was trained with (its SHA-256 differs from the checkpoint's)", filepath.Join(dir, f.file))
		}
	}
	return nil
}

// Translate translates sentences with an encoder-decoder, or with a
// decoder-only model trained on pairs (continuing "source EOS"), and
// returns the best hypothesis of each, detokenized. A sentence without
// tokens is an error naming it (counting from 1), as an empty source is
// to Decoder.Decode.
func (r *Trained) Translate(sentences []string, s model.Search) ([]string, error) {
	return r.generate(sentences, s, true)
}

// Continue continues prompts with a decoder-only model and returns each
// continuation, detokenized.
func (r *Trained) Continue(prompts []string, s model.Search) ([]string, error) {
	if r.Model.Layout().Sources {
		return nil, errors.Errorf("continuing prompts needs a decoder-only model, have one of kind %s", r.Model.Config().Kind)
	}
	return r.generate(prompts, s, false)
}

// generate decodes the lines as sources (ended with EOSID) or prompts.
func (r *Trained) generate(lines []string, s model.Search, sources bool) ([]string, error) {
	if r.Tokenizer == nil {
		return nil, errors.New("this run has no tokenizer (a synthetic task): decode ids with model.NewDecoder(r.Runtime, r.Model, r.Params)")
	}
	if !model.Generates(r.Model) {
		return nil, errors.Errorf("translating needs a model that generates, have one of kind %s", r.Model.Config().Kind)
	}
	d, err := model.NewDecoder(r.Runtime, r.Model, r.Params)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	srcs := make([][]int, len(lines))
	for i, l := range lines {
		srcs[i] = r.Tokenizer.Encode(l)
		if sources {
			if len(srcs[i]) == 0 {
				return nil, errors.Errorf("sentence %d is empty: it has no tokens to translate", i+1)
			}
			srcs[i] = append(srcs[i], data.EOSID)
		}
	}
	hyps, err := d.Decode(srcs, s)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(hyps))
	for i, h := range hyps {
		out[i] = r.Tokenizer.Decode(h[0].Tokens)
	}
	return out, nil
}

// Tag maps each sentence through a tagger (a model whose targets align
// with its sources, such as an encoder-only model): the most probable
// token at every position of "sentence EOS", up to the first EOS,
// detokenized.
func (r *Trained) Tag(sentences []string) ([]string, error) {
	if !r.Model.Layout().Aligned {
		return nil, errors.Errorf("tagging needs an encoder-only model (one whose targets align with its sources), have one of kind %s", r.Model.Config().Kind)
	}
	if r.Tokenizer == nil {
		return nil, errors.New("this run has no tokenizer (a synthetic task): tag ids with model.Tag")
	}
	srcs := make([][]int, len(sentences))
	for i, sent := range sentences {
		srcs[i] = append(r.Tokenizer.Encode(sent), data.EOSID)
	}
	tags, err := model.Tag(r.Runtime, r.Model, r.Params, srcs, tagBatch)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(tags))
	for i, ids := range tags {
		if end := slices.Index(ids, data.EOSID); end >= 0 {
			ids = ids[:end]
		}
		out[i] = r.Tokenizer.Decode(ids)
	}
	return out, nil
}

// tagBatch is how many sentences Tag runs at once.
const tagBatch = 32
