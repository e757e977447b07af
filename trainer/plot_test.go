package trainer

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// TestPlotRun draws runs with BLEU, with exact match and with neither, one
// with a non-finite loss among its evaluations, and checks that each is a
// PNG of the promised size, which panels with different data make differ.
func TestPlotRun(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	var bleu, exact, plain []Metrics
	for i := 1; i <= 8; i++ {
		m := Metrics{Step: 100 * i, TrainLoss: 6 / float64(i), ValLoss: 5.5 / float64(i), ValAcc: 0.1 * float64(i),
			LR: 1e-3 * float64(min(i, 3)) / 3, TokensPerS: 5000 + 100*float64(i%3)}
		plain = append(plain, m)
		if i%2 == 0 {
			m.BLEU = f(4 * float64(i))
		}
		bleu = append(bleu, m)
		m.BLEU, m.ExactMatch = nil, f(0.1*float64(i))
		exact = append(exact, m)
	}
	plain[3].ValLoss = math.Inf(1)
	dir := t.TempDir()
	if d := os.Getenv("PLOT_DIR"); d != "" {
		dir = d
	}
	sizes := map[string]int64{}
	for name, ms := range map[string][]Metrics{"bleu": bleu, "exact": exact, "plain": plain} {
		path := filepath.Join(dir, name+".png")
		if err := PlotRun(ms, "runs/"+name+" — encoder-decoder, d_model 128", path); err != nil {
			t.Fatal(err)
		}
		r, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cfg.Width != 960 || cfg.Height != 672 {
			t.Errorf("%s: %d×%d pixels, want 960×672 (10×7 inches at 96 dpi)", name, cfg.Width, cfg.Height)
		}
		st, _ := os.Stat(path)
		sizes[name] = st.Size()
	}
	if sizes["bleu"] == sizes["exact"] || sizes["exact"] == sizes["plain"] {
		t.Errorf("PNG sizes %v: the quality panel does not follow the data", sizes)
	}
	if err := PlotRun(bleu, "x", filepath.Join(dir, "missing", "loss.png")); err == nil {
		t.Error("a plot into a missing directory: no error")
	}
}

// TestPlotTitleNamesTheModelsStacks: a decoder-only model's plot is
// titled with its decoder's layers alone, not the "2+2" of an encoder it
// lacks.
func TestPlotTitleNamesTheModelsStacks(t *testing.T) {
	cfg, err := model.Preset("tiny", 40)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kind = model.KindDecoderOnly
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	title := (&Trainer{m: m, opt: Options{OutDir: "lm"}, rt: graph.CPU()}).plotTitle()
	if !strings.Contains(title, "decoder-only, d_model 128, 2 decoder layers,") || strings.Contains(title, "+") {
		t.Errorf("title %q", title)
	}
}
