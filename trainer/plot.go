package trainer

import (
	"bytes"
	"slices"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// PlotLosses draws the training and validation loss against the step as a PNG.
// Lines of single steps (Options.LogEvery) are left out.
func PlotLosses(ms []Metrics, path string) error {
	ms = slices.DeleteFunc(slices.Clone(ms), func(m Metrics) bool { return !m.IsEvaluation() })
	if len(ms) == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = "Loss"
	p.X.Label.Text = "step"
	p.Y.Label.Text = "loss (nats per token)"
	p.Legend.Top = true
	train, val := make(plotter.XYs, len(ms)), make(plotter.XYs, len(ms))
	for i, m := range ms {
		train[i] = plotter.XY{X: float64(m.Step), Y: m.TrainLoss}
		val[i] = plotter.XY{X: float64(m.Step), Y: m.ValLoss}
	}
	if err := plotutil.AddLinePoints(p, "train (label-smoothed)", train, "validation", val); err != nil {
		return errors.Wrap(err, "plotting losses")
	}
	w, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, "png")
	if err != nil {
		return errors.Wrap(err, "rendering the loss plot")
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return errors.Wrap(err, "rendering the loss plot")
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}
