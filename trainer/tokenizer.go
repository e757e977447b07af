package trainer

import (
	"maps"
	"os"
	"path/filepath"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/data/sentencepiece"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer/rundir"
)

// tokenizerFile is one file of a run's tokenizer: its name in the run
// directory, the checkpoint metadata key of its fingerprint (a key of the
// tokenizer's Fingerprints), how to write it, and how to read the
// fingerprint of a copy of it.
type tokenizerFile struct {
	name, key string
	write     func(path string) error
	read      func(path string) (string, error)
}

// tokenizerFiles are the files of tok in a run directory: a
// data.BPETokenizer's bpe.txt and vocab.txt, or a SentencePiece model's
// spm.model.
func tokenizerFiles(tok data.Tokenizer) ([]tokenizerFile, error) {
	switch tok := tok.(type) {
	case *data.BPETokenizer:
		if tok == nil {
			return nil, errors.New("Data.Tokenizer is a nil *data.BPETokenizer")
		}
		return tokenizerFiles(*tok)
	case data.BPETokenizer:
		if tok.BPE == nil || tok.Vocab == nil {
			return nil, errors.New("Data.Tokenizer needs its BPE and its Vocab")
		}
		return bpeFiles(tok), nil
	case *sentencepiece.Tokenizer:
		if tok == nil {
			return nil, errors.New("Data.Tokenizer is a nil *sentencepiece.Tokenizer")
		}
		return spmFiles(tok.Model()), nil
	}
	return nil, errors.Errorf("Data.Tokenizer is a %T: a run directory holds a data.BPETokenizer or a *sentencepiece.Tokenizer", tok)
}

// spmFiles are the files of a SentencePiece model's tokenizer: spm.model.
func spmFiles(m *sentencepiece.Model) []tokenizerFile {
	return []tokenizerFile{{rundir.SentencePiece, sentencepiece.FingerprintKey, m.WriteFile, func(path string) (string, error) {
		m, err := sentencepiece.Load(path)
		if err != nil {
			return "", err
		}
		return m.Fingerprint(), nil
	}}}
}

// bpeFiles are the files of a data.BPETokenizer: bpe.txt and vocab.txt.
func bpeFiles(tok data.BPETokenizer) []tokenizerFile {
	return []tokenizerFile{
		{rundir.BPE, data.BPEFingerprintKey, tok.BPE.WriteFile, func(path string) (string, error) {
			b, err := data.ReadBPEFile(path)
			if err != nil {
				return "", err
			}
			return b.Fingerprint(), nil
		}},
		{rundir.Vocab, data.VocabFingerprintKey, tok.Vocab.WriteFile, func(path string) (string, error) {
			v, err := data.ReadVocabFile(path)
			if err != nil {
				return "", err
			}
			return v.Fingerprint(), nil
		}},
	}
}

// tokenizerMeta checks the tokenizer tok (Data.Tokenizer) against the
// model m, the fingerprints meta (Options.Meta) already records, and the
// files of it that the run directory dir already holds (a resumed run's),
// and returns meta with tok's fingerprints, so that every checkpoint
// records the tokenizer (inference.Load checks it). Without tok it returns meta.
func tokenizerMeta(m model.Model, tok data.Tokenizer, meta map[string]string, dir string) (map[string]string, error) {
	if tok == nil {
		return meta, nil
	}
	files, err := tokenizerFiles(tok)
	if err != nil {
		return nil, err
	}
	if tok.Len() != m.Config().Vocab {
		return nil, errors.Errorf("Data.Tokenizer's vocabulary holds %d tokens, the model's %d", tok.Len(), m.Config().Vocab)
	}
	out := maps.Clone(meta)
	if out == nil {
		out = map[string]string{}
	}
	fps := tok.Fingerprints()
	for _, f := range files {
		if have, ok := out[f.key]; ok && have != fps[f.key] {
			return nil, errors.Errorf("Options.Meta[%q] records another %s than Data.Tokenizer's", f.key, f.name)
		}
		out[f.key] = fps[f.key]
		path := filepath.Join(dir, f.name)
		if _, err := os.Stat(path); os.IsNotExist(err) {
			continue
		}
		have, err := f.read(path)
		if err != nil {
			return nil, errors.Wrap(err, "the run directory's tokenizer")
		}
		if have != fps[f.key] {
			return nil, errors.Errorf("%s is not Data.Tokenizer's (another run's, or edited): use another OutDir", path)
		}
	}
	return out, nil
}

// SaveTokenizer writes tok's files (rundir.BPE and rundir.Vocab, or
// rundir.SentencePiece) into the run directory dir, atomically, where it
// does not hold them yet (New checked those it holds against
// Data.Tokenizer); a nil tok writes nothing. New writes Data.Tokenizer so; a command that writes a run's
// files after New (cmd/train) writes its tokenizer with it.
func SaveTokenizer(tok data.Tokenizer, dir string) error {
	if tok == nil {
		return nil
	}
	files, err := tokenizerFiles(tok)
	if err != nil {
		return err
	}
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if _, err := os.Stat(path); err == nil {
			continue
		}
		if err := f.write(path); err != nil {
			return errors.Wrapf(err, "writing the run's tokenizer to %s", path)
		}
	}
	return nil
}
