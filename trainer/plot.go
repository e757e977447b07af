package trainer

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/pkg/errors"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/transformer-go/transformer/internal/atomicfile"
)

// PlotRun draws a run's metrics as a PNG of four panels over updates: the
// training and validation loss (and the loss of single steps, where
// Options.LogEvery logged them); validation BLEU, or exact match on a
// synthetic task; the learning rate; and tokens per second. title, drawn
// above them, names the run and its key settings.
func PlotRun(ms []Metrics, title, path string) error {
	evals := slices.DeleteFunc(slices.Clone(ms), func(m Metrics) bool { return !m.IsEvaluation() })
	if len(evals) == 0 {
		return nil
	}
	panels := [][]*plot.Plot{{lossPanel(ms, evals), qualityPanel(evals)}, {
		linePanel(ms, "learning rate", "rate", func(m Metrics) (float64, bool) { return m.LR, true }),
		linePanel(evals, "throughput", "target tokens / s", func(m Metrics) (float64, bool) { return m.TokensPerS, true }),
	}}
	const width, height = 10 * vg.Inch, 7 * vg.Inch
	img := vgimg.New(width, height)
	dc := draw.New(img)
	heading := plot.New().Title.TextStyle // the default title font
	heading.XAlign, heading.YAlign = draw.XCenter, draw.YTop
	dc.FillText(heading, vg.Point{X: width / 2, Y: height - vg.Points(6)}, title)
	tiles := draw.Tiles{Rows: 2, Cols: 2, PadTop: vg.Points(34), PadX: vg.Points(24), PadY: vg.Points(18),
		PadLeft: vg.Points(6), PadRight: vg.Points(12), PadBottom: vg.Points(6)}
	for i, row := range plot.Align(panels, tiles, dc) {
		for j, c := range row {
			panels[i][j].Draw(c)
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return errors.Wrap(err, "rendering the run's plot")
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}

// lossPanel plots the training loss of single steps (ms's step lines), its
// mean between evaluations and the validation loss (evals).
func lossPanel(ms, evals []Metrics) *plot.Plot {
	p := panel("loss", "nats per target token")
	addLine(p, "train, single steps", series(ms, func(m Metrics) (float64, bool) { return deref(m.StepLoss) }), 2)
	addLine(p, "train (label-smoothed)", series(evals, func(m Metrics) (float64, bool) { return m.TrainLoss, true }), 0)
	addLine(p, "validation", series(evals, func(m Metrics) (float64, bool) { return m.ValLoss, true }), 1)
	p.Legend.Top = true
	return p
}

// qualityPanel plots validation BLEU where the run measured it, else the
// exact match of a synthetic task's held-out examples, else accuracy.
func qualityPanel(ms []Metrics) *plot.Plot {
	bleu := series(ms, func(m Metrics) (float64, bool) { return deref(m.BLEU) })
	if len(bleu) > 0 {
		return withLine(panel("validation BLEU", "BLEU"), bleu)
	}
	exact := series(ms, func(m Metrics) (float64, bool) { v, ok := deref(m.ExactMatch); return 100 * v, ok })
	if len(exact) > 0 {
		return withLine(panel("held-out exact match", "% of examples"), exact)
	}
	return withLine(panel("validation accuracy", "% of target tokens"),
		series(ms, func(m Metrics) (float64, bool) { return 100 * m.ValAcc, true }))
}

// linePanel plots one measure of the evaluations that have it, from 0.
func linePanel(ms []Metrics, title, unit string, y func(Metrics) (float64, bool)) *plot.Plot {
	p := withLine(panel(title, unit), series(ms, y))
	p.Y.Min = 0
	return p
}

// panel is an empty panel over updates.
func panel(title, unit string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "update"
	p.Y.Label.Text = unit
	p.Add(plotter.NewGrid())
	return p
}

// withLine adds xy to p as a line with points.
func withLine(p *plot.Plot, xy plotter.XYs) *plot.Plot {
	addLine(p, "", xy, 0)
	return p
}

// addLine adds xy to p as a line with points in colour i of
// plotutil.DefaultColors, named in the legend unless name is "".
func addLine(p *plot.Plot, name string, xy plotter.XYs, i int) {
	if len(xy) == 0 {
		return
	}
	l, s, err := plotter.NewLinePoints(xy)
	if err != nil { // series holds finite points only: cannot fail
		return
	}
	l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
	s.Shape = plotutil.Shape(i)
	p.Add(l, s)
	if name != "" {
		p.Legend.Add(name, l, s)
	}
}

// series is y of each evaluation that has it, finite, against its step.
func series(ms []Metrics, y func(Metrics) (float64, bool)) plotter.XYs {
	var xy plotter.XYs
	for _, m := range ms {
		if v, ok := y(m); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			xy = append(xy, plotter.XY{X: float64(m.Step), Y: v})
		}
	}
	return xy
}

// deref is *p and whether p is set.
func deref(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// plotTitle names the run (its directory) and its key settings: the
// model's kind and sizes, the optimizer and schedule, and the runtime.
func (t *Trainer) plotTitle() string {
	c, o := t.m.Config(), t.opt
	lr := ""
	switch {
	case o.LR != nil:
		lr = fmt.Sprintf(", peak lr %g", *o.LR)
	case o.LRFactor != nil:
		lr = fmt.Sprintf(", lr factor %g", *o.LRFactor)
	}
	warmup := 0
	if o.Warmup != nil {
		warmup = *o.Warmup
	}
	return fmt.Sprintf("%s — %s, d_model %d, %s, %d heads, vocab %d — %s, %s%s, warm-up %d — %s",
		filepath.Base(o.OutDir), c.Kind, c.DModel, c.Stacks(), c.Heads, c.Vocab,
		o.Optimizer, o.Schedule, lr, warmup, t.rt)
}
