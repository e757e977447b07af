package sentencepiece

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/transformer-go/transformer/data/sentencepiece/internal/modelpb"
)

// python is Debian's interpreter, which python3-sentencepiece installs
// into (another python3 may come first on PATH).
const python = "/usr/bin/python3"

// requirePython skips t, or fails it under CI=true, unless the Python
// binding of SentencePiece is installed.
func requirePython(t *testing.T) {
	t.Helper()
	if err := exec.Command(python, "-c", "import sentencepiece").Run(); err != nil {
		msg := "SentencePiece's Python binding not found for " + python + ": apt-get install python3-sentencepiece"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// bindingResult is what the Python binding made of one text.
type bindingResult struct {
	Pieces  []string `json:"pieces"` // hex
	IDs     []int    `json:"ids"`
	Decoded string   `json:"decoded"` // hex
}

// runBinding encodes texts with each model of paths, and decodes their
// ids, with SentencePiece's Python binding (testdata/binding.py).
func runBinding(t *testing.T, paths []string, texts []string) [][]bindingResult {
	t.Helper()
	req := struct {
		Models []string `json:"models"`
		Texts  []string `json:"texts"`
	}{Models: paths}
	for _, text := range texts {
		req.Texts = append(req.Texts, hex.EncodeToString([]byte(text)))
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "testdata/binding.py")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("testdata/binding.py: %v\n%s", err, stderr.String())
	}
	var res [][]bindingResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPythonBinding encodes random texts (combining marks, full-width
// forms, NFKC's compatibility characters, emoji, control characters, long
// words, invalid UTF-8, the models' own symbols) with the models of
// testdata, models derived from them (derivedModels), and models trained
// on Multi30k where spm_train and the data are at hand, and checks the
// pieces and ids, and the text of the ids, against SentencePiece's Python
// binding.
func TestPythonBinding(t *testing.T) {
	requirePython(t)
	const seed = 1
	n := 2000
	if testing.Short() {
		n = 200
	}
	rng := rand.New(rand.NewPCG(seed, 51))
	texts := make([]string, n)
	for i := range texts {
		texts[i] = randomText(rng)
	}
	var paths []string
	for _, name := range testModels {
		paths = append(paths, filepath.Join("testdata", name+".model"))
	}
	paths = append(paths, derivedModels(t)...)
	paths = append(paths, multi30kModels(t)...)
	res := runBinding(t, paths, texts)
	for i, path := range paths {
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for j, text := range texts {
			if !matchesBinding(t, m, text, res[i][j]) {
				if bad++; bad <= 3 {
					t.Errorf("%s, text %d %q: pieces %q, ids %v; the binding's pieces %v (hex), ids %v, decoded %s (hex)",
						path, j, text, m.Pieces(text), m.IDs(text), res[i][j].Pieces, res[i][j].IDs, res[i][j].Decoded)
				}
			}
		}
		t.Logf("%s: %d random texts (seed %d), %d differ", filepath.Base(path), n, seed, bad)
	}
}

// matchesBinding reports whether m encodes text, and decodes the ids, as
// the binding did (r).
func matchesBinding(t *testing.T, m *Model, text string, r bindingResult) bool {
	pieces := make([]string, 0, len(r.Pieces))
	for _, h := range r.Pieces {
		pieces = append(pieces, string(unhex(t, h)))
	}
	decoded, err := m.DecodeIDs(r.IDs)
	return err == nil && slices.Equal(m.Pieces(text), pieces) && slices.Equal(m.IDs(text), r.IDs) &&
		decoded == string(unhex(t, r.Decoded))
}

func unhex(t *testing.T, h string) []byte {
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// derivedModels writes models that spm_train does not make, from those
// of testdata: some pieces of type UNUSED (bpe splits them again, unigram
// skips them), scores above zero (the score of a unigram model's
// user-defined symbols depends on the greatest), and a bpe model whose
// merges all score alike (the leftmost merges first).
func derivedModels(t *testing.T) []string {
	dir := t.TempDir()
	edits := map[string]func(i int, p *modelpb.ModelProto_SentencePiece){
		"bpe": func(i int, p *modelpb.ModelProto_SentencePiece) {
			if i%3 == 0 {
				p.Type = modelpb.ModelProto_SentencePiece_UNUSED.Enum()
			}
		},
		"unigram": func(i int, p *modelpb.ModelProto_SentencePiece) {
			p.Score = proto.Float32(p.GetScore() + 8)
			if i%3 == 0 {
				p.Type = modelpb.ModelProto_SentencePiece_UNUSED.Enum()
			}
		},
		"suffix": func(i int, p *modelpb.ModelProto_SentencePiece) { p.Score = proto.Float32(0) },
	}
	var paths []string
	for _, name := range slices.Sorted(maps.Keys(edits)) {
		pb := readProto(t, name)
		for i, p := range pb.Pieces {
			if p.GetType() == modelpb.ModelProto_SentencePiece_NORMAL && len(p.GetPiece()) > 1 {
				edits[name](i, p)
			}
		}
		pb.SelfTestData = nil // its samples were encoded with the pieces as they were
		path := filepath.Join(dir, name+"-derived.model")
		if err := os.WriteFile(path, marshal(t, pb), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// multi30kModels are a unigram and a bpe model trained on Multi30k, where
// spm_train and the data are at hand (TestMulti30k requires them), and
// not with -short.
func multi30kModels(t *testing.T) []string {
	if _, err := exec.LookPath("spm_train"); err != nil || testing.Short() {
		return nil
	}
	if _, err := os.Stat(filepath.Join(multi30kDir, "train.de.gz")); err != nil {
		return nil
	}
	return []string{trainMulti30k(t, Unigram), trainMulti30k(t, BPE)}
}

// randomText is a text of up to 12 random chunks, each of one kind of
// trouble, joined by spaces or not.
func randomText(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(13) {
		b.WriteString(chunkKinds[rng.IntN(len(chunkKinds))](rng))
		if rng.IntN(3) > 0 {
			b.WriteString(pick(rng, spaces))
		}
	}
	return b.String()
}

// Material for random texts.
var (
	spaces = []string{" ", " ", " ", "  ", "\t", "\u00a0", "\u3000", "\u2003", "\u200b", "\n", "\r\n", "\u2028"}
	nfkc   = []string{"\ufb01", "\ufb02", "\ufb00", "\u2460", "\u00b2", "\u00bd", "\u216b", "\u338f", "\u337f", "\ufdfa",
		"\u01c5", "\u212b", "\u2126", "\u212a", "\u2103", "\u2122", "\u2026", "\u2025", "\u3231", "\u00a8", "\u00b4",
		"\u1ffe", "\u0344", "\u1e9b", "\u00c5", "A\u030a", "\u1100\u1161\u11a8", "\uac00", "\u0958", "\u2000", "\u017f",
		"\U0001d400", "\U0001d7d8", "\u3300", "\u32ff", "\uff61", "\uffe6"}
	symbols = []string{"\u2581", "\u2581\u2581", "<s>", "</s>", "<unk>", "<pad>", "<sep>", "@@", "\u2603", "<ctl>",
		"<0x41>", "<0xff>", "\u2047", " \u2047 ", "&", "...", "\ufffd"}
	words = []string{"a", "man", "Ein", "Mann", "schaut", "über", "Straße", "Öl", "Ärger", "the", "dog", "läuft",
		"Fußball", "café", "naïve", "İstanbul", "ǅemal", "ΣΊΣΥΦΟΣ", "москва", "東京", "한국어", "עברית", "ไทย"}
)

// chunkKinds make the chunks of randomText.
var chunkKinds = []func(*rand.Rand) string{
	func(rng *rand.Rand) string { return pick(rng, words) },
	func(rng *rand.Rand) string { return pick(rng, nfkc) },
	func(rng *rand.Rand) string { return pick(rng, symbols) },
	func(rng *rand.Rand) string { return pick(rng, spaces) + pick(rng, spaces) },
	func(rng *rand.Rand) string { // a letter under combining marks
		s := pick(rng, words)[:1]
		for range 1 + rng.IntN(5) {
			s += string(runeIn(rng, pick(rng, [][2]rune{{0x300, 0x36f}, {0x1ab0, 0x1aff}, {0x20d0, 0x20f0}, {0x1dc0, 0x1dff}})))
		}
		return s
	},
	func(rng *rand.Rand) string { // full-width and half-width forms
		s := ""
		for range 1 + rng.IntN(8) {
			s += string(runeIn(rng, [2]rune{0xff01, 0xffee}))
		}
		return s
	},
	func(rng *rand.Rand) string { // emoji, with joiners, skin tones, variation selectors, flags
		s := ""
		for range 1 + rng.IntN(4) {
			s += string(runeIn(rng, pick(rng, [][2]rune{{0x1f300, 0x1faff}, {0x2600, 0x27bf}, {0x1f1e6, 0x1f1ff}})))
			s += pick(rng, []string{"", "", "\u200d", "\ufe0f", "\ufe0e", string(runeIn(rng, [2]rune{0x1f3fb, 0x1f3ff}))})
		}
		return s
	},
	func(rng *rand.Rand) string { // control and format characters
		return string(runeIn(rng, pick(rng, [][2]rune{{0, 0x1f}, {0x7f, 0x9f}, {0x200b, 0x200f}, {0x202a, 0x202e},
			{0x2066, 0x2069}, {0xfeff, 0xfeff}, {0xfff9, 0xfffc}, {0xe0000, 0xe007f}})))
	},
	func(rng *rand.Rand) string { // a long word
		w := pick(rng, words)
		return strings.Repeat(w, 1+rng.IntN(400/len(w)+1))
	},
	func(rng *rand.Rand) string { // any character
		for {
			if r := rune(rng.IntN(0x110000)); r < 0xd800 || r > 0xdfff {
				return string(r)
			}
		}
	},
	func(rng *rand.Rand) string { // bytes that are not UTF-8
		return string([]byte{byte(0x80 + rng.IntN(0x80)), byte(rng.IntN(0x100))})
	},
}

func pick[T any](rng *rand.Rand, from []T) T { return from[rng.IntN(len(from))] }

// runeIn is a random rune of the range [r[0], r[1]].
func runeIn(rng *rand.Rand, r [2]rune) rune { return r[0] + rune(rng.IntN(int(r[1]-r[0]+1))) }
