package data

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testdata returns the path of a fixture.
func testdata(name string) string { return filepath.Join("testdata", name) }

func TestReadParallel(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) }
	all := []Pair{
		{"Ein Mann.", "A man."},
		{"Zwei Hunde spielen.", "Two dogs play."},
		{"Eine Frau liest ein Buch.", "A woman reads a book."},
		{"Kinder", "Children"},
	}
	tests := []struct {
		name     string
		src, tgt string
		opt      ReadOptions
		want     []Pair
		stats    ReadStats
	}{
		{"plain", "pairs.de", "pairs.en", ReadOptions{}, all, ReadStats{Read: 5, Kept: 4, SkippedEmpty: 1}},
		{"gzip", "pairs.de.gz", "pairs.en.gz", ReadOptions{}, all, ReadStats{Read: 5, Kept: 4, SkippedEmpty: 1}},
		{"mixed", "pairs.de.gz", "pairs.en", ReadOptions{}, all, ReadStats{Read: 5, Kept: 4, SkippedEmpty: 1}},
		// "Zwei Hunde spielen." has 4 pieces, "Two dogs play." 4, "A woman reads a book." 6.
		{"max pieces", "pairs.de", "pairs.en", ReadOptions{MaxLen: 4},
			[]Pair{all[0], all[1], all[3]}, ReadStats{Read: 5, Kept: 3, SkippedEmpty: 1, SkippedLong: 1}},
		{"max words", "pairs.de", "pairs.en", ReadOptions{MaxLen: 2, Length: words},
			[]Pair{all[0], all[3]}, ReadStats{Read: 5, Kept: 2, SkippedEmpty: 1, SkippedLong: 2}},
	}
	for _, tt := range tests {
		pairs, stats, err := ReadParallel(testdata(tt.src), testdata(tt.tgt), tt.opt)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !slices.Equal(pairs, tt.want) {
			t.Errorf("%s: pairs %q, want %q", tt.name, pairs, tt.want)
		}
		if stats != tt.stats {
			t.Errorf("%s: stats %+v, want %+v", tt.name, stats, tt.stats)
		}
	}
}

func TestReadParallelErrors(t *testing.T) {
	tests := []struct {
		name     string
		src, tgt string
		opt      ReadOptions
		want     string
	}{
		{"target shorter", "three.de", "two.en", ReadOptions{},
			"testdata/two.en ends after line 2 but testdata/three.de has line 3"},
		{"source shorter", "two.en", "three.de", ReadOptions{},
			"testdata/two.en ends after line 2 but testdata/three.de has line 3"},
		{"invalid UTF-8", "badutf8.de", "badutf8.en", ReadOptions{}, "testdata/badutf8.de:2: invalid UTF-8"},
		{"strict empty", "pairs.de", "pairs.en", ReadOptions{Strict: true},
			"testdata/pairs.de:3 and testdata/pairs.en:3: empty sentence"},
		{"strict long", "pairs.de", "pairs.en", ReadOptions{Strict: true, MaxLen: 3},
			"testdata/pairs.de:2 and testdata/pairs.en:2: sentence longer than 3 tokens"},
		{"missing", "pairs.de", "nonexistent.en", ReadOptions{}, "open testdata/nonexistent.en"},
		{"truncated gzip", "truncated.gz", "pairs.en", ReadOptions{}, "testdata/truncated.gz: corrupt gzip data after line 2: unexpected EOF"},
	}
	for _, tt := range tests {
		_, _, err := ReadParallel(testdata(tt.src), testdata(tt.tgt), tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestReadTSV(t *testing.T) {
	pairs, stats, err := ReadTSV(testdata("pairs.tsv"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Pair{{"Ein Mann.", "A man."}, {"Zwei Hunde spielen.", "Two dogs play."}, {"Kinder", "Children"}}
	if !slices.Equal(pairs, want) {
		t.Errorf("pairs %q, want %q", pairs, want)
	}
	if wantStats := (ReadStats{Read: 5, Kept: 3, SkippedEmpty: 2}); stats != wantStats {
		t.Errorf("stats %+v, want %+v", stats, wantStats)
	}
}

func TestReadTSVErrors(t *testing.T) {
	tests := []struct {
		file string
		opt  ReadOptions
		want string
	}{
		{"threefields.tsv", ReadOptions{}, "testdata/threefields.tsv:2: want source and target separated by one tab, got 3 fields"},
		{"notab.tsv", ReadOptions{}, "testdata/notab.tsv:2: want source and target separated by one tab, got 1 fields"},
		{"pairs.tsv", ReadOptions{Strict: true}, "testdata/pairs.tsv:2: empty sentence"},
		{"badutf8.tsv", ReadOptions{}, "testdata/badutf8.tsv:2: invalid UTF-8"},
		{"missing.tsv", ReadOptions{}, "open testdata/missing.tsv"},
	}
	for _, tt := range tests {
		_, _, err := ReadTSV(testdata(tt.file), tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.file, err, tt.want)
		}
	}
}

// TestReadMaxBytes bounds the memory of the kept pairs: a corpus that
// passes MaxBytes is an error naming the line where it did, and a bound it
// fits changes nothing.
func TestReadMaxBytes(t *testing.T) {
	// "Ein Mann." "A man." (15 bytes) and "Zwei Hunde spielen." "Two dogs play." (33).
	first2 := int64(15+33) + 2*PairBytes
	if _, stats, err := ReadParallel(testdata("pairs.de"), testdata("pairs.en"), ReadOptions{MaxBytes: 1 << 20, Limit: "a test"}); err != nil || stats.Kept != 4 {
		t.Fatalf("within the bound: %+v, %v", stats, err)
	}
	_, _, err := ReadParallel(testdata("pairs.de"), testdata("pairs.en"), ReadOptions{MaxBytes: first2, Limit: "a test"})
	want := "pairs.de:4 and testdata/pairs.en:4: the 3 pairs read so far take more than the " + strconv.FormatInt(first2, 10) + " bytes a corpus may take in memory (a test)"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %v, want one ending %q", err, want)
	}
	if _, _, err := ReadText(testdata("pairs.en"), ReadOptions{MaxBytes: 10, Limit: "a test"}); err == nil || !strings.Contains(err.Error(), "pairs.en:1: the 1 pairs") {
		t.Errorf("ReadText: %v", err)
	}
}

// TestPairLine locates pairs past the lines the filter skips: pairs.de has
// an empty line, which ReadParallel skips.
func TestPairLine(t *testing.T) {
	pairs, _, err := ReadParallel(testdata("pairs.de"), testdata("pairs.en"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := range pairs {
		where, err := PairLine(testdata("pairs.de"), testdata("pairs.en"), ReadOptions{}, i)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, where)
	}
	var src []string
	if err := ReadLines(testdata("pairs.de"), func(line string, _ int) error { src = append(src, line); return nil }); err != nil {
		t.Fatal(err)
	}
	for i, where := range lines {
		n, _ := strconv.Atoi(where[strings.LastIndex(where, ":")+1:])
		if n < 1 || n > len(src) || src[n-1] != pairs[i].Src {
			t.Errorf("pair %d %q located at %s", i, pairs[i].Src, where)
		}
	}
	if _, err := PairLine(testdata("pairs.de"), testdata("pairs.en"), ReadOptions{}, len(pairs)); err == nil || !strings.Contains(err.Error(), "hold 4 pairs, not 5") {
		t.Errorf("a pair past the end: %v", err)
	}
}
