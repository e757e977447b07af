package data

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParseIDs: ParseIDs never panics; what it accepts are ids of the
// vocabulary from least (ordinary tokens, or all but PadID), as many as
// the line's fields, that FormatIDs writes back to
// a line it reads alike; what it refuses is named.
func FuzzParseIDs(f *testing.F) {
	for _, s := range []string{"5 6 7", " 4\t9  ", "", "3", "2", "-1", "10", "5 x", "99999999999999999999", "٣", "+5", "1 5 2"} {
		f.Add(s, 10, false)
		f.Add(s, 10, true)
	}
	f.Fuzz(func(t *testing.T, line string, vocab int, sequence bool) {
		vocab = NumReserved + 1 + abs(vocab)%1000
		least := NumReserved
		if sequence {
			least = PadID + 1
		}
		ids, err := ParseIDs(line, least, vocab)
		if err != nil {
			if ids != nil || !strings.Contains(err.Error(), "want") {
				t.Fatalf("%q: ids %v with error %v", line, ids, err)
			}
			return
		}
		if len(ids) != len(strings.Fields(line)) {
			t.Fatalf("%q: %d ids of %d fields", line, len(ids), len(strings.Fields(line)))
		}
		for _, id := range ids {
			if id != UnkID && (id < least || id >= vocab) {
				t.Fatalf("%q: id %d accepted in a vocabulary of %d", line, id, vocab)
			}
		}
		again, err := ParseIDs(FormatIDs(ids), least, vocab)
		if err != nil || !slices.Equal(again, ids) {
			t.Fatalf("%q: %v formats as %q, read back as %v (%v)", line, ids, FormatIDs(ids), again, err)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

func TestParseIDs(t *testing.T) {
	tests := []struct {
		line string
		want []int
		err  string
	}{
		{"4 5\t9", []int{4, 5, 9}, ""},
		{"3", []int{3}, ""},
		{"", nil, "no token ids: want integers from 4 to 9"},
		{"4 five", nil, `field 2, "five", is not a token id`},
		{"4 10", nil, "field 2, token id 10, is not a token of the vocabulary: want 4 to 9"},
		{"2", nil, "field 1, token id 2, is not a token of the vocabulary"},
	}
	for _, tt := range tests {
		got, err := ParseIDs(tt.line, NumReserved, 10)
		if tt.err == "" && (err != nil || !slices.Equal(got, tt.want)) || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("ParseIDs(%q) = %v, %v; want %v, %q", tt.line, got, err, tt.want, tt.err)
		}
	}
	if _, err := ParseIDs("1 5 0", PadID+1, 10); err == nil || !strings.Contains(err.Error(), "field 3, token id 0, is not a token of the vocabulary: want 1 to 9 (0 is padding)") {
		t.Errorf("a sequence with padding: %v", err)
	}
	if got, err := ParseIDs("1 5 2", PadID+1, 10); err != nil || !slices.Equal(got, []int{BOSID, 5, EOSID}) {
		t.Errorf("a sequence with BOS and EOS: %v, %v", got, err)
	}
	if s := FormatIDs([]int{4, 12, 5}); s != "4 12 5" {
		t.Errorf("FormatIDs = %q", s)
	}
}
