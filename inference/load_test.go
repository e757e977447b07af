package inference_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/data/sentencepiece"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
	"github.com/transformer-go/transformer/model/decode"
)

// numbersTokenizer is a tokenizer of German and English number words.
func numbersTokenizer(t *testing.T) data.BPETokenizer {
	t.Helper()
	text := strings.Fields("eins zwei drei vier fünf sechs sieben acht neun one two three four five six seven eight nine")
	bpe, err := data.LearnBPE(text, 100)
	if err != nil {
		t.Fatal(err)
	}
	var seqs [][]string
	for _, w := range text {
		seqs = append(seqs, bpe.Encode(w))
	}
	vocab, err := data.BuildVocab(seqs, data.VocabOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return data.BPETokenizer{BPE: bpe, Vocab: vocab}
}

// savedRun writes a run directory holding a model of kind with random
// weights as final.safetensors, and a tokenizer of number words.
func savedRun(t *testing.T, kind string) (string, data.BPETokenizer) {
	t.Helper()
	dir := t.TempDir()
	tok := numbersTokenizer(t)
	if err := tok.BPE.WriteFile(filepath.Join(dir, "bpe.txt")); err != nil {
		t.Fatal(err)
	}
	if err := tok.Vocab.WriteFile(filepath.Join(dir, "vocab.txt")); err != nil {
		t.Fatal(err)
	}
	saveModel(t, dir, kind, tok.Len(), tok.Fingerprints())
	return dir, tok
}

// saveModel writes a model of kind and vocab tokens with random weights,
// as the run directory dir's final.safetensors, whose metadata is meta.
func saveModel(t *testing.T, dir, kind string, vocab int, meta map[string]string) {
	t.Helper()
	cfg, err := model.Preset("tiny", vocab)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kind, cfg.DModel, cfg.Heads, cfg.DFF, cfg.Dropout = kind, 64, 4, 128, 0
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(4, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.Save(filepath.Join(dir, "final.safetensors"), cfg, params, meta); err != nil {
		t.Fatal(err)
	}
}

// spmModel is a small SentencePiece model (bpe, 600 pieces).
const spmModel = "../data/sentencepiece/testdata/bpe.model"

// TestLoadSentencePiece loads a run on a SentencePiece model, whose
// spm.model is its tokenizer, and refuses one whose spm.model is missing,
// another or unchecked, or of another size than the model's vocabulary.
func TestLoadSentencePiece(t *testing.T) {
	tok, err := sentencepiece.LoadTokenizer(spmModel)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spm := filepath.Join(dir, "spm.model")
	if err := tok.Model().WriteFile(spm); err != nil {
		t.Fatal(err)
	}
	saveModel(t, dir, model.KindEncoderDecoder, tok.Len(), tok.Fingerprints())
	r, err := inference.Load(dir, "final")
	if err != nil {
		t.Fatal(err)
	}
	loaded, ok := r.Tokenizer.(*sentencepiece.Tokenizer)
	if !ok || loaded.Model().Fingerprint() != tok.Model().Fingerprint() {
		t.Fatalf("the run's tokenizer is %T %v, want the *sentencepiece.Tokenizer of spm.model", r.Tokenizer, r.Tokenizer.Fingerprints())
	}
	search := decode.Search{Method: decode.MethodGreedy, MaxLen: 4, Batch: 2}
	if out, err := r.Translate([]string{"Ein Hund läuft.", "☃"}, search); err != nil || len(out) != 2 {
		t.Errorf("Translate: %q, %v", out, err)
	}

	other := t.TempDir()
	saveModel(t, other, model.KindEncoderDecoder, tok.Len()+1, tok.Fingerprints())
	tests := []struct {
		name, dir, want string
		spm             string // the spm.model to put in dir, "" for none
	}{
		{"missing", dir, "with the SentencePiece model its metadata records, but " + spm + " is missing", ""},
		{"another", dir, spm + " is not the file the model was trained with", "../data/sentencepiece/testdata/unigram.model"},
		{"of another size", other, "holds 601 tokens but the model of " + filepath.Join(other, "final.safetensors") + " has 602", spmModel},
	}
	for _, tt := range tests {
		os.Remove(filepath.Join(tt.dir, "spm.model"))
		if tt.spm != "" {
			raw, err := os.ReadFile(tt.spm)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(tt.dir, "spm.model"), raw, 0o644)
		}
		if _, err := inference.Load(tt.dir, "final"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s spm.model: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
	unchecked := t.TempDir()
	saveModel(t, unchecked, model.KindEncoderDecoder, tok.Len(), nil)
	tok.Model().WriteFile(filepath.Join(unchecked, "spm.model"))
	if _, err := inference.Load(unchecked, "final"); err == nil || !strings.Contains(err.Error(), "records no spm_sha256") {
		t.Errorf("a checkpoint that records no spm_sha256: %v", err)
	}
}

// TestLoad loads run directories of each kind, and refuses a
// tokenizer edited since training.
func TestLoad(t *testing.T) {
	sentences := []string{"drei eins vier", "neun"}
	search := decode.Search{Method: decode.MethodGreedy, MaxLen: 4, Batch: 2}
	dir, _ := savedRun(t, model.KindEncoderOnly)
	r, err := inference.Load(dir, "final")
	if err != nil {
		t.Fatal(err)
	}
	if r.Tokenizer == nil || r.Path != filepath.Join(dir, "final.safetensors") || r.Model.Config().Kind != model.KindEncoderOnly {
		t.Fatalf("loaded %+v", r)
	}
	if tags, err := r.Tag(sentences); err != nil || len(tags) != 2 {
		t.Errorf("Tag: %q, %v", tags, err)
	}
	if _, err := r.Translate(sentences, search); err == nil || !strings.Contains(err.Error(), "a model that generates") {
		t.Errorf("Translate with an encoder-only model: %v", err)
	}
	if _, err := r.Continue(sentences, search); err == nil || !strings.Contains(err.Error(), "needs a decoder-only model") {
		t.Errorf("Continue with an encoder-only model: %v", err)
	}

	dir, tok := savedRun(t, model.KindDecoderOnly)
	r, err = inference.Load(dir, filepath.Join(dir, "final.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Continue(sentences, search)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := decode.New(nil, r.Model, r.Params)
	defer d.Close()
	for i, s := range sentences {
		want, err := d.Decode([][]int{tok.Encode(s)}, search)
		if err != nil || got[i] != tok.Decode(want[0][0].Tokens) {
			t.Errorf("Continue(%q) = %q, the decoder's continuation %q (%v)", s, got[i], tok.Decode(want[0][0].Tokens), err)
		}
	}
	if _, err := r.Tag(sentences); err == nil || !strings.Contains(err.Error(), "needs an encoder-only model") {
		t.Errorf("Tag with a decoder-only model: %v", err)
	}

	vocabFile, _ := os.ReadFile(filepath.Join(dir, "vocab.txt"))
	lines := strings.SplitAfter(string(vocabFile), "\n")
	lines[len(lines)-2], lines[len(lines)-3] = lines[len(lines)-3], lines[len(lines)-2] // the last two tokens swapped
	os.WriteFile(filepath.Join(dir, "vocab.txt"), []byte(strings.Join(lines, "")), 0o644)
	if _, err := inference.Load(dir, "final"); err == nil || !strings.Contains(err.Error(), "vocab.txt is not the file the model was trained with") {
		t.Errorf("an edited vocab.txt: %v", err)
	}
	if _, err := inference.Load(dir, "best"); err == nil || !strings.Contains(err.Error(), "best.safetensors") {
		t.Errorf("a missing checkpoint: %v", err)
	}
	// A run on text is refused without its tokenizer.
	os.Remove(filepath.Join(dir, "bpe.txt"))
	os.Remove(filepath.Join(dir, "vocab.txt"))
	if _, err = inference.Load(dir, "final"); err == nil || !strings.Contains(err.Error(), "trained on text") || !strings.Contains(err.Error(), "bpe.txt and ") {
		t.Fatalf("a run on text without bpe.txt and vocab.txt: %v, want an error naming them", err)
	}
}

// TestLoadOfASyntheticTask: a checkpoint that records no tokenizer,
// without bpe.txt and vocab.txt, loads without a Tokenizer, and generating
// text from it says so.
func TestLoadOfASyntheticTask(t *testing.T) {
	dir := t.TempDir()
	cfg, err := model.Preset("tiny", 12)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kind, cfg.DModel, cfg.DFF = model.KindDecoderOnly, 32, 64
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.Save(filepath.Join(dir, "final.safetensors"), cfg, params, nil); err != nil {
		t.Fatal(err)
	}
	r, err := inference.Load(dir, "final")
	if err != nil || r.Tokenizer != nil {
		t.Fatalf("a synthetic task's run: %+v, %v", r, err)
	}
	if _, err := r.Continue([]string{"a"}, decode.DefaultSearch()); err == nil || !strings.Contains(err.Error(), "no tokenizer") {
		t.Errorf("Continue without a tokenizer: %v", err)
	}
}

// noBiasFFN is a feed-forward sublayer of one's own: the paper's network
// without biases.
type noBiasFFN struct{ dModel, dFF int }

func (f noBiasFFN) Apply(s *graph.Scope, x *G.Node) *G.Node {
	h := s.ReLU(layers.Linear{In: f.dModel, Out: f.dFF, NoBias: true}.Apply(s.In("linear1"), x))
	return layers.Linear{In: f.dFF, Out: f.dModel, NoBias: true}.Apply(s.In("linear2"), h)
}

// TestLoadWithRegistry loads a run of a variant of one's own in one call;
// without its registry the error names the variant.
func TestLoadWithRegistry(t *testing.T) {
	dir := t.TempDir()
	reg := layers.NewRegistry()
	err := reg.FFN.Register("nobias", func(z layers.Sizes) layers.FFN { return noBiasFFN{dModel: z.DModel, dFF: z.DFF} })
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := model.Preset("tiny", 12)
	if err != nil {
		t.Fatal(err)
	}
	cfg.FFN, cfg.DModel, cfg.DFF = "nobias", 32, 64
	m, err := model.FromConfig(cfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.Save(filepath.Join(dir, "final.safetensors"), m.Config(), params, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := inference.Load(dir, "final"); err == nil || !strings.Contains(err.Error(), `unknown ffn "nobias"`) {
		t.Errorf("a variant of one's own without its registry: %v", err)
	}
	r, err := inference.Load(dir, "final", inference.WithRegistry(reg))
	if err != nil || r.Model.Config().FFN != "nobias" {
		t.Fatalf("with the registry: %v", err)
	}
}

// TestLoadNamesWhatIsMissing: a run directory that does not exist is
// named as such, not as its missing best.safetensors, and a named
// checkpoint that a run lacks says why, and for averaged weights which
// flag of cmd/train writes them.
func TestLoadNamesWhatIsMissing(t *testing.T) {
	dir, _ := savedRun(t, model.KindDecoderOnly)
	file := filepath.Join(dir, "final.safetensors")
	for _, c := range []struct{ dir, which, want string }{
		{filepath.Join(dir, "none"), "best", "run directory " + filepath.Join(dir, "none") + ": stat "},
		{file, "best", "run directory " + file + ": not a directory"},
		{dir, "averaged", dir + " has no averaged.safetensors: the run averaged no checkpoints (cmd/train writes it with -average N"},
		{dir, "best", dir + " has no best.safetensors: the run has not evaluated yet"},
	} {
		if _, err := inference.Load(c.dir, c.which); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s, %s): %v, want an error saying %q", c.dir, c.which, err, c.want)
		}
	}
}
