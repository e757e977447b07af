package bleu

import "testing"

// The expected values are what Python 3.11 gives.
func TestPyLower(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"Hello WORLD", "hello world"},
		{"ÄÖÜ ẞ Straße", "äöü ß straße"},
		{"\u0130", "i\u0307"},
		{"ΟΔΟΣ", "οδος"},
		{"ΣΑ", "σα"},
		{"Σ", "σ"},
		{"ΑΣ.", "ας."},
		{"ΑΣ'Α", "ασ'α"},
		{"ΑΣ1", "ας1"},
		{"ΑΣ\u0301", "ας\u0301"},
		{"Α\u0301Σ", "α\u0301ς"},
		{"ÅNGSTRÖM ǅ", "ångström ǆ"},
	}
	for _, tt := range tests {
		if got := pyLower(tt.in); got != tt.want {
			t.Errorf("pyLower(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPyTrimRight(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"a \t\r\n", "a"},
		{"a\u00a0\u3000\x1c\x1f", "a"},
		{"a\u0085", "a"},
		{"a\u200b", "a\u200b"},
		{" a", " a"},
	}
	for _, tt := range tests {
		if got := pyTrimRight(tt.in); got != tt.want {
			t.Errorf("pyTrimRight(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
