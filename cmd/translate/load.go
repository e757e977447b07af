package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/cmd/internal/srcflags"
	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/decode"
)

// translator is a trained model with its tokenizer, or for a synthetic
// task's run the token ids its lines are, and the runtime its programs run
// on; with several -model directories, an ensemble: m and params are the
// first model's, and others the rest.
type translator struct {
	m      model.Model
	params *graph.Params
	others []decode.Member
	tok    codec
	rt     *graph.Runtime
	// longest is the most tokens of a source the models trained on (the
	// least of an ensemble's; 0: not recorded): a longer one is warned of.
	longest int
}

// load reads the checkpoint (best, final, averaged or a file) and the
// tokenizer of each training output directory of dirs, to run on rt; a
// synthetic task's run has none, and reads and writes token ids. Several
// directories make an ensemble, whose models must generate and share one
// tokenizer (by its fingerprints).
func load(dirs []string, checkpoint string, rt *graph.Runtime) (*translator, error) {
	var t *translator
	for i, dir := range dirs {
		r, err := inference.Load(dir, checkpoint)
		if err != nil {
			return nil, errors.Wrap(err, "-model, -checkpoint")
		}
		if !decode.Generates(r.Model) && (len(dirs) > 1 || !r.Model.Layout().Aligned) {
			return nil, errors.Errorf("%s holds a model of kind %s, which neither generates nor tags (an ensemble's models generate)", r.Path, r.Model.Config().Kind)
		}
		if i == 0 {
			t = &translator{m: r.Model, params: r.Params, tok: idCodec{vocab: r.Model.Config().Vocab}, rt: rt, longest: r.LongestSource}
			if r.Tokenizer != nil {
				t.tok = textCodec{r.Tokenizer}
			}
			continue
		}
		if r.LongestSource > 0 && (t.longest == 0 || r.LongestSource < t.longest) {
			t.longest = r.LongestSource
		}
		if err := sameTokens(t, r, dirs[0], dir); err != nil {
			return nil, err
		}
		t.others = append(t.others, decode.Member{Model: r.Model, Params: r.Params})
	}
	return t, nil
}

// sameTokens refuses r, the run of dir, as a member of the ensemble of t
// (the run of first) unless its token ids mean what t's do: the same
// tokenizer files (bpe.txt and vocab.txt, or a SentencePiece model), by
// their fingerprints. Synthetic tasks' ids are their symbols, and
// decode.NewEnsemble refuses models of different vocabulary sizes.
func sameTokens(t *translator, r *inference.Run, first, dir string) error {
	tc, text := t.tok.(textCodec)
	switch {
	case text != (r.Tokenizer != nil):
		return errors.Errorf("-model: %s and %s cannot translate together: one was trained on text, the other on a synthetic task", first, dir)
	case text && !maps.Equal(tc.tok.Fingerprints(), r.Tokenizer.Fingerprints()):
		return errors.Errorf("-model: %s and %s cannot translate together: their tokenizers differ (bpe.txt and vocab.txt, or spm.model)", first, dir)
	}
	return nil
}

// members are the models the translator decodes with: its own, then the
// rest of an ensemble.
func (t *translator) members() []decode.Member {
	return append([]decode.Member{{Model: t.m, Params: t.params}}, t.others...)
}

// config is the first model's config, with the least max_len of an
// ensemble's models: what bounds the sources.
func (t *translator) config() model.Config {
	cfg := t.m.Config()
	for _, o := range t.others {
		cfg.MaxLen = min(cfg.MaxLen, o.Model.Config().MaxLen)
	}
	return cfg
}

// lines are consecutive lines of a file, or of standard input, the first
// of them its line first+1, and its name for messages.
type lines struct {
	name  string
	first int
	text  []string
}

// where locates line i (from 0) for a message: "NAME:LINE".
func (l lines) where(i int) string { return fmt.Sprintf("%s:%d", l.name, l.first+i+1) }

// openInput opens path (plain or gzip-compressed), or stdin if path is
// empty, to be read a line at a time.
func openInput(path string, stdin io.Reader) (*data.LineReader, error) {
	if path == "" {
		return data.NewLineReader("standard input", stdin)
	}
	return data.OpenLines(path)
}

// readChunk reads the next n lines of lr, or fewer at its end; first is
// the number of lines read before.
func readChunk(lr *data.LineReader, first, n int) (lines, error) {
	l := lines{name: lr.Name(), first: first}
	for len(l.text) < n {
		s, ok, err := lr.Next()
		if err != nil || !ok {
			return l, err
		}
		l.text = append(l.text, s)
	}
	return l, nil
}

// checkOutput refuses an output path whose directory does not exist or
// that is a directory, before any work is done (nothing for "").
func checkOutput(flag, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.Errorf("%s %s is a directory", flag, path)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return errors.Errorf("%s %s: its directory %s does not exist", flag, path, filepath.Dir(path))
	}
	return nil
}

// encode tokenizes line i of l, with EOSID appended (and BOSID prepended for
// a target; a prompt gets neither), within the bounds of b: a source (or a
// prompt with the BOSID the model reads before it) may be truncated, a
// target may not.
func (t *translator) encode(l lines, i int, kind text, b srcflags.Bound) ([]int, error) {
	ids, err := t.tok.encode(l.text[i])
	if err != nil {
		return nil, errors.Wrap(err, l.where(i))
	}
	if kind == targetText {
		if err := b.Target(l.where(i), len(ids)+2); err != nil {
			return nil, err
		}
		return append(append([]int{data.BOSID}, ids...), data.EOSID), nil
	}
	keep, err := b.Source(l.where(i), len(ids)+1) // EOSID; a prompt's BOSID
	if err != nil {
		return nil, err
	}
	if t.longest > 0 && keep > t.longest && b.Warn != nil {
		fmt.Fprintf(b.Warn, "%s: %s: a source of %d tokens, longer than any the model was trained on (%d): its output may be poor\n",
			b.Prog, l.where(i), keep, t.longest)
	}
	ids = ids[:keep-1]
	if kind == promptText {
		return ids, nil
	}
	return append(ids, data.EOSID), nil
}

// text is what a line is to encode.
type text int

const (
	sourceText text = iota // a sentence to translate: ids EOS
	targetText             // a translation to score: BOS ids EOS
	promptText             // a prompt to continue: ids
)

// sources tokenizes the input lines as sources, or as prompts.
func (t *translator) sources(in lines, prompts bool, b srcflags.Bound) ([][]int, error) {
	kind := sourceText
	if prompts {
		kind = promptText
	}
	srcs := make([][]int, len(in.text))
	for i := range srcs {
		var err error
		if srcs[i], err = t.encode(in, i, kind, b); err != nil {
			return nil, err
		}
	}
	return srcs, nil
}
