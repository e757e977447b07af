package nbplot

import (
	"bytes"
	"image/png"
	"math"
	"testing"
)

func TestHeatmaps(t *testing.T) {
	small := Heatmap{Title: "2×3", Z: []float64{0, 0.5, 1, 0.25, 0.75, 0}, Rows: 2, Cols: 3,
		XLabels: []string{"a", "b", "c"}, YLabels: []string{"x", "y"}, Min: 0, Max: 1}
	big := Heatmap{Title: "signed", Z: make([]float64, 64*64), Rows: 64, Cols: 64, Min: -1, Max: 1}
	for i := range big.Z {
		big.Z[i] = math.Sin(float64(i))
	}
	b, err := Heatmaps(3, 3, [][]Heatmap{{small, small}, {big, big}})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	// 2 panels of 3 inches and a 0.9-inch colour bar, 2 rows, at 96 dpi.
	if got := img.Bounds().Size(); got.X != 662 || got.Y != 6*96 {
		t.Errorf("image size %v", got)
	}
}

func TestHeatmapErrors(t *testing.T) {
	for name, h := range map[string]Heatmap{
		"size":   {Z: []float64{1, 2, 3}, Rows: 2, Cols: 2, Max: 1},
		"labels": {Z: []float64{1, 2}, Rows: 1, Cols: 2, XLabels: []string{"a"}, Max: 1},
		"scale":  {Z: []float64{1, 2}, Rows: 1, Cols: 2, Min: 1, Max: 1},
	} {
		if _, err := Heatmaps(2, 2, [][]Heatmap{{h}}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Heatmaps(2, 2, nil); err == nil {
		t.Error("no heatmaps: no error")
	}
}

func TestLinePlots(t *testing.T) {
	x := []float64{1, 10, 100, 1000}
	l := Lines{Title: "t", Series: []Series{{Name: "a", X: x, Y: []float64{1, 0.1, 0.01, 0.001}},
		{Name: "broken", X: x, Y: []float64{1, 2, math.NaN(), 3}}},
		LogX: true, LogY: true, XTicks: []Tick{{1, "1"}, {1000, "1k"}}, Legend: "top-left"}
	b, err := LinePlots(4, 3, l, Lines{Series: []Series{{X: x, Y: x}}, YMin: 0, YMax: 2000, NoPoints: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	if _, err := LinePlots(4, 3, Lines{Series: []Series{{X: x, Y: x[:2]}}}); err == nil {
		t.Error("mismatched series: no error")
	}
}
