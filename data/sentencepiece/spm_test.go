package sentencepiece

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// testModels are the models of testdata (see testdata/make_models.sh).
var testModels = []string{"unigram", "bpe", "identity", "suffix"}

// loadTest loads the model testdata/NAME.model.
func loadTest(t testing.TB, name string) *Model {
	t.Helper()
	m, err := Load(filepath.Join("testdata", name+".model"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// splitLines splits text into lines as spm_encode reads them (std::getline):
// at "\n" only, a "\r" staying in its line.
func splitLines(text []byte) []string {
	lines := strings.Split(string(text), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// readLines reads the lines of the file at path, as splitLines.
func readLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return splitLines(b)
}

// spmIDs parses a line of ids as spm_decode does: fields separated by
// single spaces.
func spmIDs(t testing.TB, line string) []int {
	t.Helper()
	if line == "" {
		return nil
	}
	var ids []int
	for _, f := range strings.Split(line, " ") {
		id, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("id line %q: %v", line, err)
		}
		ids = append(ids, id)
	}
	return ids
}

// toolOutput is what SentencePiece made of lines of text: spm_encode's
// pieces and ids, and spm_decode's text of the ids, a line each.
type toolOutput struct {
	pieces, ids, decoded []string
}

// compare checks that m encodes every line of in into out's pieces and
// ids, and decodes out's ids into out's text, and returns how many lines
// differ; it reports the first few.
func compare(t *testing.T, name string, m *Model, in []string, out toolOutput) int {
	t.Helper()
	if len(out.pieces) != len(in) || len(out.ids) != len(in) || len(out.decoded) != len(in) {
		t.Fatalf("%s: %d lines of text, but %d of pieces, %d of ids and %d decoded", name, len(in), len(out.pieces), len(out.ids), len(out.decoded))
	}
	bad := 0
	for i, line := range in {
		toks := m.Encode(line)
		pieces, ids := make([]string, len(toks)), make([]string, len(toks))
		for j, tok := range toks {
			pieces[j], ids[j] = tok.Piece, strconv.Itoa(tok.ID)
		}
		decoded, err := m.DecodeIDs(spmIDs(t, out.ids[i]))
		gotPieces, gotIDs := strings.Join(pieces, " "), strings.Join(ids, " ")
		if gotPieces == out.pieces[i] && gotIDs == out.ids[i] && decoded == out.decoded[i] && err == nil {
			continue
		}
		if bad++; bad <= 3 {
			t.Errorf("%s, line %d %q:\npieces %q\n  want %q\nids %s\nwant %s\ndecoded %q (%v)\n   want %q",
				name, i+1, line, gotPieces, out.pieces[i], gotIDs, out.ids[i], decoded, err, out.decoded[i])
		}
	}
	return bad
}

// TestGolden checks the models of testdata against what spm_encode and
// spm_decode made of testdata/tricky.txt with them (testdata/make_models.sh).
func TestGolden(t *testing.T) {
	in := readLines(t, "testdata/tricky.txt")
	for _, name := range testModels {
		out := toolOutput{
			pieces:  readLines(t, filepath.Join("testdata", name+".pieces")),
			ids:     readLines(t, filepath.Join("testdata", name+".ids")),
			decoded: readLines(t, filepath.Join("testdata", name+".decoded")),
		}
		compare(t, name, loadTest(t, name), in, out)
	}
}

// requireTools skips t, or fails it under CI=true, unless spm_train,
// spm_encode and spm_decode are installed.
func requireTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"spm_train", "spm_encode", "spm_decode"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " not found: apt-get install sentencepiece"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// runTool runs a SentencePiece tool with stdin and returns its output.
func runTool(t *testing.T, stdin []byte, tool string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(tool, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// runTools is what spm_encode and spm_decode make of text with the model
// at path.
func runTools(t *testing.T, path string, text []byte) toolOutput {
	t.Helper()
	ids := runTool(t, text, "spm_encode", "--model="+path, "--output_format=id")
	return toolOutput{
		pieces:  splitLines(runTool(t, text, "spm_encode", "--model="+path, "--output_format=piece")),
		ids:     splitLines(ids),
		decoded: splitLines(runTool(t, ids, "spm_decode", "--model="+path, "--input_format=id")),
	}
}

// TestTools checks the models of testdata against spm_encode and
// spm_decode run now on testdata/tricky.txt.
func TestTools(t *testing.T) {
	requireTools(t)
	text, err := os.ReadFile("testdata/tricky.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range testModels {
		path := filepath.Join("testdata", name+".model")
		compare(t, name, loadTest(t, name), splitLines(text), runTools(t, path, text))
	}
}

// multi30kDir is where the shared Multi30k files live, relative to this
// package.
const multi30kDir = "../../../shared/data/multi30k"

// multi30kText is the text of the Multi30k file NAME.gz, or a skip (a
// failure under CI=true) when it is missing.
func multi30kText(t *testing.T, name string) []byte {
	t.Helper()
	path := filepath.Join(multi30kDir, name+".gz")
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Multi30k data missing: %v (see shared/README.md)", err)
		}
		t.Skipf("Multi30k data missing, skipping: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// trainMulti30k trains a model of the given type with spm_train on the
// German and English sentences of Multi30k's training set, 8,000 pieces
// and spm_train's defaults otherwise, and returns its path.
func trainMulti30k(t *testing.T, typ Type) string {
	t.Helper()
	dir := t.TempDir()
	var inputs []string
	for _, lang := range []string{"de", "en"} {
		p := filepath.Join(dir, "train."+lang)
		if err := os.WriteFile(p, multi30kText(t, "train."+lang), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	prefix := filepath.Join(dir, "multi30k-"+typ.String())
	runTool(t, nil, "spm_train", "--input="+strings.Join(inputs, ","), "--model_prefix="+prefix,
		"--vocab_size=8000", "--model_type="+typ.String(), "--minloglevel=2")
	return prefix + ".model"
}

// TestMulti30k trains a unigram and a bpe model of 8,000 pieces with
// spm_train on Multi30k's training sentences (German and English), and
// checks that on every line of train, val and test2016, in both
// languages, the pieces and ids are spm_encode's and the text of
// spm_encode's ids is spm_decode's.
func TestMulti30k(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: encodes Multi30k twice (about 10 s)")
	}
	requireTools(t)
	for _, typ := range []Type{Unigram, BPE} {
		path := trainMulti30k(t, typ)
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, split := range []string{"train", "val", "test_2016_flickr"} {
			for _, lang := range []string{"de", "en"} {
				name := split + "." + lang
				text := multi30kText(t, name)
				lines := splitLines(text)
				bad := compare(t, typ.String()+" "+name, m, lines, runTools(t, path, text))
				t.Logf("%s, %s: %d lines, %d differ", typ, name, len(lines), bad)
			}
		}
	}
}
