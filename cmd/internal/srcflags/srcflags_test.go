package srcflags

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
)

// TestLimit checks the default bound on sources: the model's max_len,
// and at most SinusoidalSourceLimit with sinusoidal positions, which a
// checkpoint may give a max_len as high as MaxMaxLen at no cost.
func TestLimit(t *testing.T) {
	tests := []struct {
		positions     string
		maxLen, limit int
	}{
		{"sinusoidal", model.MaxMaxLen, 1024},
		{"sinusoidal", 100, 100},
		{"learned", 4096, 4096},
		{"none", 4096, 4096},
	}
	for _, tc := range tests {
		c := model.Config{Positions: tc.positions, Sizes: layers.Sizes{MaxLen: tc.maxLen}}
		if got := Limit(c); got != tc.limit {
			t.Errorf("%s positions, max_len %d: %d, want %d", tc.positions, tc.maxLen, got, tc.limit)
		}
		b, err := Flags{Long: "error"}.Bound(c, "test", nil)
		if err != nil || b.Max != tc.limit || b.MaxLen != tc.maxLen {
			t.Errorf("%s positions, max_len %d: bound %+v, %v", tc.positions, tc.maxLen, b, err)
		}
	}
	var f Flags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	f.Register(fs)
	var help bytes.Buffer
	fs.SetOutput(&help)
	fs.PrintDefaults()
	if want := "(0: the model's max_len, at most 1024 with sinusoidal positions)"; !strings.Contains(help.String(), want) {
		t.Errorf("help %q does not say %q", help.String(), want)
	}
}
