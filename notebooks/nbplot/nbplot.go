// Package nbplot draws the notebooks' figures with gonum.org/v1/plot and returns
// them as PNG bytes for gophernotes' display.PNG.
//
// Its API holds only numbers, strings, slices and plain structs, on purpose: the
// gophernotes interpreter (gomacro) approximates recursive types such as
// gonum/plot's *plot.Plot (a Plot holds Plotters whose Plot method takes a
// *Plot) by a placeholder type, now and then, depending on the order it
// happens to convert them in. Notebook cells that held *plot.Plot values or
// called Plot.Draw failed intermittently with errors such as "reflect.FuncOf:
// last arg of variadic func must be slice" or "not a package: p in p.Draw";
// compiled here, the same gonum/plot code is reliable.
package nbplot

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Heatmap is a matrix drawn as coloured cells, row 0 at the top (as a matrix
// is printed) and column 0 at the left.
type Heatmap struct {
	Title          string
	XTitle, YTitle string
	// Z holds Rows×Cols values, row-major.
	Z          []float64
	Rows, Cols int
	// XLabels (Cols of them) and YLabels (Rows) label the columns and rows;
	// nil labels a few of them with their index. Column labels are written
	// vertically.
	XLabels, YLabels []string
	// Min and Max are the values of the two ends of the colour scale. With
	// Min ≥ 0 the scale is sequential (black, purple, blue, green, white:
	// moreland.Kindlmann); with Min < 0 it is diverging (blue, white at the
	// middle, red: moreland.SmoothBlueRed).
	Min, Max float64
}

// Heatmaps renders rows of heatmaps, each panel width×height inches, with one
// colour bar at the right for the scale of the first panel.
func Heatmaps(width, height float64, rows [][]Heatmap) ([]byte, error) {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return nil, fmt.Errorf("nbplot: no heatmaps")
	}
	first := rows[0][0]
	plots := make([][]*plot.Plot, len(rows))
	for i, row := range rows {
		if len(row) != len(rows[0]) {
			return nil, fmt.Errorf("nbplot: heatmap row %d has %d panels, row 0 has %d", i, len(row), len(rows[0]))
		}
		for _, h := range row {
			p, err := h.plot()
			if err != nil {
				return nil, err
			}
			plots[i] = append(plots[i], p)
		}
	}
	bar := plot.New()
	bar.Add(&plotter.ColorBar{ColorMap: colorMap(first.Min, first.Max), Vertical: true})
	bar.HideX()
	bar.Title.Text = " "
	img, err := render(inch(width), inch(height), plots, bar)
	if err != nil {
		return nil, err
	}
	return encode(quantize(img, colorMap(first.Min, first.Max))), nil
}

// colorMap is the scale of a heatmap from lo to hi.
func colorMap(lo, hi float64) palette.ColorMap {
	cm := moreland.Kindlmann()
	if lo < 0 {
		cm = moreland.SmoothBlueRed()
	}
	cm.SetMin(lo)
	cm.SetMax(hi)
	return cm
}

// grid is a row-major matrix as a plotter.GridXYZ with row 0 at the top.
type grid struct {
	rows, cols int
	z          []float64
}

func (g grid) Dims() (c, r int)   { return g.cols, g.rows }
func (g grid) Z(c, r int) float64 { return g.z[(g.rows-1-r)*g.cols+c] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }

func (h Heatmap) plot() (*plot.Plot, error) {
	if h.Rows <= 0 || h.Cols <= 0 || len(h.Z) != h.Rows*h.Cols {
		return nil, fmt.Errorf("nbplot: heatmap %q: %d values for %d×%d", h.Title, len(h.Z), h.Rows, h.Cols)
	}
	if h.XLabels != nil && len(h.XLabels) != h.Cols || h.YLabels != nil && len(h.YLabels) != h.Rows {
		return nil, fmt.Errorf("nbplot: heatmap %q: %d column and %d row labels for %d×%d",
			h.Title, len(h.XLabels), len(h.YLabels), h.Rows, h.Cols)
	}
	if !(h.Max > h.Min) {
		return nil, fmt.Errorf("nbplot: heatmap %q: scale from %g to %g", h.Title, h.Min, h.Max)
	}
	hm := plotter.NewHeatMap(grid{rows: h.Rows, cols: h.Cols, z: h.Z}, colorMap(h.Min, h.Max).Palette(256))
	hm.Min, hm.Max = h.Min, h.Max
	// Values a rounding error outside the scale keep the colour of its end.
	pal := hm.Palette.Colors()
	hm.Underflow, hm.Overflow = pal[0], pal[len(pal)-1]
	// Large matrices are drawn as one image: no seams between thousands of
	// cells, and a smaller PNG.
	hm.Rasterized = h.Rows*h.Cols > 1024
	p := plot.New()
	p.Title.Text = h.Title
	p.X.Label.Text, p.Y.Label.Text = h.XTitle, h.YTitle
	p.Add(hm)
	p.X.Tick.Marker = labelTicks(h.XLabels, h.Cols, false)
	if h.XLabels != nil {
		p.X.Tick.Label.Rotation = math.Pi / 2
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	p.Y.Tick.Marker = labelTicks(h.YLabels, h.Rows, true)
	return p, nil
}

// labelTicks puts labels[i] at position i, reversed for rows (row 0 is at
// the top); nil labels means index numbers at about eight positions.
func labelTicks(labels []string, size int, reverse bool) plot.ConstantTicks {
	step := 1
	if labels == nil {
		step = (size + 7) / 8
	}
	var ticks plot.ConstantTicks
	for i := 0; i < size; i += step {
		l := fmt.Sprint(i)
		if labels != nil {
			l = labels[i]
		}
		v := float64(i)
		if reverse {
			v = float64(size - 1 - i)
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: l})
	}
	return ticks
}

// Series is one line of a Lines plot. A NaN in Y breaks the line there, so one
// series (one legend entry) can be drawn as separate pieces.
type Series struct {
	Name string
	X, Y []float64
}

// Tick is a labelled tick mark.
type Tick struct {
	Value float64
	Label string
}

// Lines is a line plot with point markers; series i gets gonum's plotutil
// colour, dash pattern and marker number i.
type Lines struct {
	Title          string
	XTitle, YTitle string
	Series         []Series
	// LogX and LogY make an axis logarithmic.
	LogX, LogY bool
	// XTicks, if not nil, replaces the x axis' tick marks.
	XTicks []Tick
	// YMin and YMax fix the y range when YMax > YMin.
	YMin, YMax float64
	// Legend is where the legend goes: "top-left", "top-right" (the
	// default), "bottom-left" or "bottom-right".
	Legend string
	// NoPoints draws the lines without markers.
	NoPoints bool
}

// LinePlots renders line plots side by side, each width×height inches.
func LinePlots(width, height float64, plots ...Lines) ([]byte, error) {
	var row []*plot.Plot
	for _, l := range plots {
		p, err := l.plot()
		if err != nil {
			return nil, err
		}
		row = append(row, p)
	}
	img, err := render(inch(width), inch(height), [][]*plot.Plot{row}, nil)
	if err != nil {
		return nil, err
	}
	return encode(img), nil
}

func (l Lines) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = l.Title
	p.X.Label.Text, p.Y.Label.Text = l.XTitle, l.YTitle
	if l.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	if l.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	if l.XTicks != nil {
		ticks := make(plot.ConstantTicks, len(l.XTicks))
		for i, t := range l.XTicks {
			ticks[i] = plot.Tick{Value: t.Value, Label: t.Label}
		}
		p.X.Tick.Marker = ticks
	}
	p.Add(plotter.NewGrid())
	for i, s := range l.Series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("nbplot: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		var thumbs []plot.Thumbnailer
		for _, piece := range pieces(s) {
			line, err := plotter.NewLine(piece)
			if err != nil {
				return nil, fmt.Errorf("nbplot: series %q: %v", s.Name, err)
			}
			line.Color, line.Dashes, line.Width = plotutil.Color(i), plotutil.Dashes(i), vg.Points(1.5)
			p.Add(line)
			thumbs = []plot.Thumbnailer{line}
			if !l.NoPoints {
				pts, err := plotter.NewScatter(piece)
				if err != nil {
					return nil, fmt.Errorf("nbplot: series %q: %v", s.Name, err)
				}
				pts.Color, pts.Shape = plotutil.Color(i), plotutil.Shape(i)
				p.Add(pts)
				thumbs = append(thumbs, pts)
			}
		}
		if s.Name != "" && thumbs != nil {
			p.Legend.Add(s.Name, thumbs...)
		}
	}
	if l.YMax > l.YMin {
		p.Y.Min, p.Y.Max = l.YMin, l.YMax
	}
	switch l.Legend {
	case "top-left":
		p.Legend.Top, p.Legend.Left = true, true
	case "bottom-left":
		p.Legend.Left = true
	case "bottom-right":
	default:
		p.Legend.Top = true
	}
	return p, nil
}

// pieces cuts a series at its NaN values.
func pieces(s Series) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range s.X {
		if math.IsNaN(s.Y[i]) {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, plotter.XY{X: s.X[i], Y: s.Y[i]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func inch(x float64) vg.Length { return vg.Length(x) * vg.Inch }

// barWidth is the width of a colour bar.
const barWidth = 0.9 * vg.Inch

// render draws rows of plots, each w×h, aligned, with bar (if not nil) at the
// right.
func render(w, h vg.Length, rows [][]*plot.Plot, bar *plot.Plot) (image.Image, error) {
	barW := vg.Length(0)
	if bar != nil {
		barW = barWidth
	}
	cols := len(rows[0])
	total := w*vg.Length(cols) + barW
	img := vgimg.New(total, h*vg.Length(len(rows)))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: 4 * vg.Millimeter, PadY: 4 * vg.Millimeter}
	canvases := plot.Align(rows, tiles, draw.Crop(dc, 0, -barW, 0, 0))
	for r, row := range rows {
		for c, p := range row {
			p.Draw(canvases[r][c])
		}
	}
	if bar != nil {
		bar.Draw(draw.Crop(dc, total-barW, 0, vg.Inch/2, 0))
	}
	return img.Image(), nil
}

// quantize maps every pixel to the nearest of 192 colours of cm and 64 greys
// (the text and axes). Heatmaps of large matrices are drawn as a smoothly
// interpolated image with a different colour at nearly every pixel; on a
// palette they compress several times better, and look the same.
func quantize(img image.Image, cm palette.ColorMap) image.Image {
	var pal color.Palette
	for _, c := range cm.Palette(192).Colors() {
		pal = append(pal, c)
	}
	for i := 0; i < 64; i++ {
		g := uint8(i * 255 / 63)
		pal = append(pal, color.RGBA{R: g, G: g, B: g, A: 255})
	}
	out := image.NewPaletted(img.Bounds(), pal)
	cache := map[color.RGBA]uint8{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			c := color.RGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: uint8(a >> 8)}
			i, ok := cache[c]
			if !ok {
				i = uint8(pal.Index(c))
				cache[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	return out
}

// encode writes img as PNG.
func encode(img image.Image) []byte {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		panic(err) // writing to a bytes.Buffer does not fail
	}
	return buf.Bytes()
}
