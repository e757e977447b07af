package data

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// sennrichCorpus is the example of Sennrich et al. (2016): "low" 5 times,
// "lower" 2, "newest" 6 and "widest" 3.
var sennrichCorpus = []string{
	"low low low low low", "lower lower", "newest newest newest",
	"newest newest newest", "widest widest widest",
}

// sennrichMerges are the merges LearnBPE must learn from sennrichCorpus,
// worked out by hand. Counts in brackets; "▁" sorts after ASCII letters.
var sennrichMerges = []Merge{
	{"e", "s"},      // (e,s)=9 ties (s,t)=9; "e" < "s"
	{"es", "t"},     // (es,t)=9 beats (w,e)=8
	{"o", "w"},      // (o,w)=7 ties (▁l,o)=7; "o" < "▁l"
	{"▁l", "ow"},    // 7
	{"e", "w"},      // (e,w)=6 ties (w,est) and (▁n,e); "e" < "w" < "▁n"
	{"ew", "est"},   // 6 ties (▁n,ew); "ew" < "▁n"
	{"▁n", "ewest"}, // 6
	{"d", "est"},    // 3 ties (i,d) and (▁w,i)
	{"i", "dest"},   // 3 ties (▁w,i)
	{"▁w", "idest"}, // 3
	{"e", "r"},      // 2 ties (▁low,e)
	{"▁low", "er"},  // 2; then every word is one symbol
}

func TestLearnBPEGolden(t *testing.T) {
	tests := []struct {
		n    int
		want []Merge
	}{
		{0, nil},
		{3, sennrichMerges[:3]},
		{12, sennrichMerges},
		{100, sennrichMerges}, // stops when no pair occurs twice
	}
	for _, tt := range tests {
		b, err := LearnBPE(sennrichCorpus, tt.n)
		if err != nil {
			t.Fatalf("LearnBPE(%d): %v", tt.n, err)
		}
		if got := b.Merges(); !slices.Equal(got, tt.want) {
			t.Errorf("LearnBPE(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestLearnBPEErrors(t *testing.T) {
	if _, err := LearnBPE(sennrichCorpus, -1); err == nil {
		t.Error("LearnBPE with -1 merges: no error")
	}
}

func TestBPEEncode(t *testing.T) {
	b, err := NewBPE(sennrichMerges)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"low", []string{"▁low"}},
		{"lowest", []string{"▁low", "est"}},   // (▁low,est) is no merge
		{"newer", []string{"▁n", "ew", "er"}}, // (e,w) first, then (e,r)
		{"slow", []string{"▁s", "l", "ow"}},   // (l,ow) needs "▁l"
		{"lower, widest!", []string{"▁lower", ",", "▁widest", "!"}},
		{"eses", []string{"▁e", "s", "es"}}, // "▁e" is not "e"
		{"xyz", []string{"▁x", "y", "z"}},
	}
	for _, tt := range tests {
		got := b.Encode(tt.in)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if dec := b.Decode(got); dec != tt.in {
			t.Errorf("Decode(Encode(%q)) = %q", tt.in, dec)
		}
	}
}

func TestLearnBPEDeterministic(t *testing.T) {
	corpus := randomCorpus(rand.New(rand.NewPCG(1, 1)), 3000)
	first, err := LearnBPE(corpus, 300)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Merges()) != 300 {
		t.Fatalf("learned %d merges, want 300", len(first.Merges()))
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for run := range 3 {
		shuffled := slices.Clone(corpus)
		if run > 0 {
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		}
		again, err := LearnBPE(shuffled, 300)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(again.Merges(), first.Merges()) {
			t.Fatalf("run %d learned different merges", run)
		}
	}
}

// randomCorpus returns n sentences of words over a small alphabet with a
// skewed word distribution, so that many pairs tie.
func randomCorpus(rng *rand.Rand, n int) []string {
	const letters = "abcdeäöß"
	runes := []rune(letters)
	words := make([]string, 200)
	for i := range words {
		w := make([]rune, 1+rng.IntN(8))
		for j := range w {
			w[j] = runes[rng.IntN(len(runes))]
		}
		words[i] = string(w)
	}
	sents := make([]string, n)
	for i := range sents {
		s := make([]string, 1+rng.IntN(10))
		for j := range s {
			s[j] = words[rng.IntN(1+rng.IntN(len(words)))]
		}
		sents[i] = strings.Join(s, " ") + "."
	}
	return sents
}

// TestLearnerMatchesEncode checks that applying the learned merges to the
// training pieces gives the segmentation the learner arrived at.
func TestLearnerMatchesEncode(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := range 200 {
		corpus := randomCorpus(rng, 1+rng.IntN(50))
		counts := countPieces(corpus)
		l := newLearner(counts)
		var merges []Merge
		for len(merges) < 1+rng.IntN(200) {
			p, ok := l.best()
			if !ok {
				break
			}
			merges = append(merges, Merge{l.syms[p.a], l.syms[p.b]})
			l.merge(p)
		}
		b, err := NewBPE(merges)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		for w := range l.first {
			var learned []string
			for _, id := range l.word(w) {
				learned = append(learned, l.syms[id])
			}
			piece := strings.Join(learned, "")
			if got := b.segment(piece); !slices.Equal(got, learned) {
				t.Fatalf("trial %d word %d: Encode gives %q, learner %q", trial, w, got, learned)
			}
		}
	}
}

func TestNewBPEErrors(t *testing.T) {
	tests := []struct {
		name   string
		merges []Merge
		want   string
	}{
		{"empty symbol", []Merge{{"a", ""}}, "merge 1: empty symbol"},
		{"space", []Merge{{"a", "b"}, {"a b", "c"}}, "merge 2: symbol \"a b\" contains white space"},
		{"invalid UTF-8", []Merge{{"\xff", "b"}}, "merge 1: symbol \"\\xff\" is not valid UTF-8"},
		{"unknown symbol", []Merge{{"a", "b"}, {"bc", "d"}}, "merge 2: symbol \"bc\" is produced by no earlier merge"},
		{"duplicate", []Merge{{"a", "b"}, {"c", "d"}, {"a", "b"}}, "merge 3: duplicate merge"},
	}
	for _, tt := range tests {
		_, err := NewBPE(tt.merges)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewBPE error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestBPEFileRoundTrip(t *testing.T) {
	b, err := NewBPE(append(sennrichMerges, Merge{"▁", "x"}, Merge{"▁▁", "▁x"}))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "merges.txt")
	if err := b.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(string(raw), "\n"); lines[0] != "e s" || len(lines) != len(b.Merges())+1 {
		t.Errorf("file starts %q and has %d lines, want \"e s\" and one line per merge", lines[0], len(lines))
	}
	loaded, err := ReadBPEFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(loaded.Merges(), b.Merges()) {
		t.Errorf("loaded %q, want %q", loaded.Merges(), b.Merges())
	}
}

func TestReadBPEFile(t *testing.T) {
	tests := []struct {
		file string
		want string // error substring; empty means success
	}{
		{"good.merges", ""},
		{"onefield.merges", "testdata/onefield.merges:3: want two symbols"},
		{"twospaces.merges", "testdata/twospaces.merges:2: want two symbols"},
		{"unknown_symbol.merges", "testdata/unknown_symbol.merges:2: symbol \"xy\" is produced by no earlier merge"},
		{"duplicate.merges", "testdata/duplicate.merges:2: duplicate merge"},
		{"badutf8.merges", "testdata/badutf8.merges:2: invalid UTF-8"},
		{"missing.merges", "open testdata/missing.merges"},
	}
	for _, tt := range tests {
		b, err := ReadBPEFile(filepath.Join("testdata", tt.file))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.file, err)
		case tt.want == "" && len(b.Merges()) != 3:
			t.Errorf("%s: %d merges, want 3", tt.file, len(b.Merges()))
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want %q", tt.file, err, tt.want)
		}
	}
}

func TestBPEConcurrentEncode(t *testing.T) {
	corpus := randomCorpus(rand.New(rand.NewPCG(4, 4)), 500)
	b, err := LearnBPE(corpus, 200)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := NewBPE(b.Merges())
	want := make([][]string, len(corpus))
	for i, s := range corpus {
		want[i] = fresh.Encode(s)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range corpus {
				i := (i + g*61) % len(corpus)
				if got := b.Encode(corpus[i]); !slices.Equal(got, want[i]) {
					t.Errorf("goroutine %d: Encode(%q) = %q, want %q", g, corpus[i], got, want[i])
				}
			}
		})
	}
	wg.Wait()
}
