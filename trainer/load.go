package trainer

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer/rundir"
)

// Trained is a trained model loaded from a run directory by LoadRun,
// ready to translate, continue or tag text.
type Trained struct {
	Model  model.Model
	Params *graph.Params
	// Tokenizer is the run's BPE and vocabulary (bpe.txt, vocab.txt); nil
	// for a run on a synthetic task, whose ids are its symbols.
	Tokenizer *data.Tokenizer
	// Path is the weights file loaded.
	Path string
	// Runtime is where and how Translate, Continue and Tag run the model
	// (nil: graph.CPU(), the CPU in float32).
	Runtime *graph.Runtime
}

// LoadRun loads the model of the run directory dir in one call: its
// config and weights from checkpoint, which is "best", "final" or
// "averaged" (that file of dir) or a path, rebuilt with the built-in
// variants in float32, and its tokenizer, checked against the
// fingerprints the checkpoint records.
func LoadRun(dir, checkpoint string) (*Trained, error) {
	path := checkpoint
	switch checkpoint {
	case "best", "final", "averaged":
		path = filepath.Join(dir, checkpoint+".safetensors")
	}
	ck, err := model.LoadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	m, params, err := ck.Model(tensor.Float32, nil)
	if err != nil {
		return nil, err
	}
	r := &Trained{Model: m, Params: params, Path: path}
	bpePath := filepath.Join(dir, rundir.BPE)
	if _, err := os.Stat(bpePath); os.IsNotExist(err) {
		return r, nil // a synthetic task's run
	}
	bpe, err := data.ReadBPEFile(bpePath)
	if err != nil {
		return nil, err
	}
	vocab, err := data.ReadVocabFile(filepath.Join(dir, rundir.Vocab))
	if err != nil {
		return nil, err
	}
	if err := checkFingerprints(ck.Meta, path, dir, bpe, vocab); err != nil {
		return nil, err
	}
	if vocab.Len() != m.Config().Vocab {
		return nil, errors.Errorf("%s holds %d tokens but the model of %s has %d",
			filepath.Join(dir, rundir.Vocab), vocab.Len(), path, m.Config().Vocab)
	}
	r.Tokenizer = &data.Tokenizer{BPE: bpe, Vocab: vocab}
	return r, nil
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
// returns the best hypothesis of each, detokenized.
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
