package data

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestPretokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   \t\n ", nil},
		{"Hello", []string{"▁Hello"}},
		{"Ein Mann, 2 Hunde.", []string{"▁Ein", "▁Mann", ",", "▁2", "▁Hunde", "."}},
		{"  two   spaces ", []string{"▁two", "▁spaces"}},
		{"Straße Größe Mädchen", []string{"▁Straße", "▁Größe", "▁Mädchen"}},
		{"don't", []string{"▁don", "'", "t"}},
		{"3D-Drucker", []string{"▁3D", "-", "Drucker"}},
		{"(a)", []string{"▁(", "a", ")"}},
		{"...", []string{"▁.", ".", "."}},
		{"u\u0308ber", []string{"▁u\u0308ber"}}, // a combining mark stays in its word
		{"日本語 テキスト", []string{"▁日本語", "▁テキスト"}},
		{"a▁b", []string{"▁a", "▁", "b"}},
		{"▁ ▁x", []string{"▁▁", "▁▁", "x"}},
	}
	for _, tt := range tests {
		if got := Pretokenize(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Pretokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDetokenize(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"▁Ein", "▁Mann", ",", "▁2", "▁Hunde", "."}, "Ein Mann, 2 Hunde."},
		{[]string{"▁Hu", "nde", "▁sp", "ielen"}, "Hunde spielen"},
		{[]string{"▁a", "▁", "b"}, "a▁b"},
		{[]string{"▁▁", "▁▁", "x"}, "▁ ▁x"},
		{[]string{"no", "marker"}, "nomarker"},
	}
	for _, tt := range tests {
		if got := Detokenize(tt.in); got != tt.want {
			t.Errorf("Detokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// normalizeSpace is the text Detokenize(Pretokenize(s)) must give back.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func FuzzPretokenizeRoundTrip(f *testing.F) {
	for _, s := range []string{"", " ", "Ein Mann, 2 Hunde.", "a▁b ▁ ▁▁c", "\u00a0x\u2003y\n", "Größe: 3½ m²!", "\xff a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pieces := Pretokenize(s)
		for _, p := range pieces {
			if p == "" {
				t.Fatalf("Pretokenize(%q) has an empty piece", s)
			}
			if strings.ContainsFunc(p, unicode.IsSpace) {
				t.Fatalf("Pretokenize(%q) piece %q contains white space", s, p)
			}
		}
		if got, want := Detokenize(pieces), normalizeSpace(s); got != want {
			t.Fatalf("Detokenize(Pretokenize(%q)) = %q, want %q", s, got, want)
		}
	})
}
