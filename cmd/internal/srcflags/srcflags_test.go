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

// TestTargetBound: a target may be as long as a source by default, or
// as -max-src-len, so that a command knows its largest batch before any:
// with sinusoidal positions and a max_len of 2^20, 1,024 tokens unless
// -max-src-len says more.
func TestTargetBound(t *testing.T) {
	c := model.Config{Positions: layers.PositionsSinusoid, Sizes: layers.Sizes{MaxLen: model.MaxMaxLen}}
	for _, tc := range []struct {
		maxSrcLen, n int
		want         string // "" for no error
	}{
		{0, 1024, ""}, {0, 1025, "a target of 1025 tokens, more than 1024, the most with sinusoidal positions unless -max-src-len is higher"},
		{4096, 4096, ""}, {4096, 4097, "more than 4096"}, {100, 1024, ""},
	} {
		b, err := Flags{MaxSrcLen: tc.maxSrcLen, Long: "error"}.Bound(c, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		err = b.Target("x:1", tc.n)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("-max-src-len %d, a target of %d: %v, want %q", tc.maxSrcLen, tc.n, err, tc.want)
		}
	}
	c.MaxLen = 16
	b, _ := Flags{Long: "error"}.Bound(c, "test", nil)
	if err := b.Target("x:1", 17); err == nil || !strings.Contains(err.Error(), "more than the model's max_len 16") {
		t.Errorf("max_len 16, a target of 17: %v", err)
	}
}
