package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model"
)

// drawAttention draws the cross-attention of decoder layer layer (-1: the
// last) and head head (-1: the heads' average) from p's target to its source
// as a PNG heat map at path.
func (t *translator) drawAttention(path string, p pair, layer, head int) error {
	cfg := t.m.Config()
	if layer == -1 {
		layer = cfg.DecoderLayers - 1
	}
	maps, err := model.Attention(t.rt, t.m, t.params, p.src, p.tgt, fmt.Sprintf("decoder.layers.%d.cross_attn", layer))
	if err != nil {
		return err
	}
	title := fmt.Sprintf("cross-attention, layer %d, ", layer)
	if head >= 0 {
		title += fmt.Sprintf("head %d", head)
	} else {
		title += "mean of the heads"
	}
	g := attentionGrid{w: headWeights(maps, head)}
	src := labels(t.tok.tokens(p.src))
	tgt := labels(t.tok.tokens(append(slices.Clone(p.tgt), data.EOSID)))
	return writeHeatMap(path, title, g, src, tgt)
}

// labels are tokens as axis labels: the space marker, which the plot's font
// lacks, shown as "_".
func labels(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, tok := range tokens {
		out[i] = strings.ReplaceAll(tok, data.SpaceMarker, "_")
	}
	return out
}

// headWeights is head h of maps [heads][lenQ][lenK], or their mean for h = -1.
func headWeights(maps [][][]float64, h int) [][]float64 {
	if h >= 0 {
		return maps[h]
	}
	mean := make([][]float64, len(maps[0]))
	for i := range mean {
		mean[i] = make([]float64, len(maps[0][i]))
		for _, m := range maps {
			for j, v := range m[i] {
				mean[i][j] += v / float64(len(maps))
			}
		}
	}
	return mean
}

// attentionGrid shows weights w [lenQ][lenK] with the source along x and the
// first target token at the top.
type attentionGrid struct{ w [][]float64 }

// Dims is the grid's size: source tokens by target tokens.
func (g attentionGrid) Dims() (c, r int) { return len(g.w[0]), len(g.w) }

// Z is the weight of column c (a source token) in row r (a target token, the
// last one at r = 0).
func (g attentionGrid) Z(c, r int) float64 { return g.w[len(g.w)-1-r][c] }

// X places column c at c.
func (g attentionGrid) X(c int) float64 { return float64(c) }

// Y places row r at r.
func (g attentionGrid) Y(r int) float64 { return float64(r) }

// writeHeatMap draws g, its columns labelled src and its rows tgt (top to
// bottom), on a fixed scale from weight 0 (white) to 1 (black), so that maps
// compare.
func writeHeatMap(path, title string, g attentionGrid, src, tgt []string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = "source", "target"
	hm := plotter.NewHeatMap(g, palette.Reverse(moreland.BlackBody()).Palette(64))
	hm.Min, hm.Max = 0, 1
	p.Add(hm)
	p.NominalX(src...)
	rows := slices.Clone(tgt)
	slices.Reverse(rows)
	p.NominalY(rows...)
	p.X.Tick.Label.Rotation = math.Pi / 2
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	cell := 0.3 * vg.Inch
	w, err := p.WriterTo(2*vg.Inch+cell*vg.Length(len(src)), 2*vg.Inch+cell*vg.Length(len(tgt)), "png")
	if err != nil {
		return errors.Wrap(err, "drawing the attention")
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return errors.Wrap(err, "drawing the attention")
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}
