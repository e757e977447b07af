package ops

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

func TestSetSlotGradients(t *testing.T) {
	tests := []struct {
		name  string
		cache tensor.Shape
		slot  int
	}{
		{"first slot", tensor.Shape{2, 3, 5, 4}, 0},
		{"middle slot", tensor.Shape{2, 3, 5, 4}, 2},
		{"last slot", tensor.Shape{2, 3, 5, 4}, 4},
		{"3-D cache", tensor.Shape{3, 4, 2}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			xs := tc.cache.Clone()
			xs[len(xs)-2] = 1
			c := graph.GradCheck{
				Build: func(s *graph.Scope) *G.Node {
					return SetSlot(s, s.Param("cache", tc.cache, graph.Normal(1)), s.Param("x", xs, graph.Normal(1)), s.Input("slot", tensor.Int, 1))
				},
				Set:     func(p *graph.Program) error { return p.Set("slot", []int{tc.slot}) },
				Seed:    5,
				Float32: true,
			}
			if err := c.Run(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSetSlotValues(t *testing.T) {
	// cache [1, 2, 3, 2]: two heads of three slots; x writes slot 1 of each.
	cache := tensor.New(tensor.WithShape(1, 2, 3, 2), tensor.WithBacking([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
	x := tensor.New(tensor.WithShape(1, 2, 1, 2), tensor.WithBacking([]float32{-1, -2, -3, -4}))
	params := newTestParams(t, tensor.Float32)
	s := graph.NewScope(params)
	y := SetSlot(s, s.Constant("cache", cache), s.Constant("x", x), s.Input("slot", tensor.Int, 1))
	p, err := graph.Compile(nil, s, nil, map[string]*G.Node{"y": y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tests := []struct {
		slot int
		want []float32
	}{
		{1, []float32{1, 2, -1, -2, 5, 6, 7, 8, -3, -4, 11, 12}},
		{2, []float32{1, 2, 3, 4, -1, -2, 7, 8, 9, 10, -3, -4}},
	}
	for _, tc := range tests {
		if err := p.Set("slot", []int{tc.slot}); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		assertClose(t, "set slot", p.Output("y").Data().([]float32), tc.want, 0)
	}
	if err := p.Set("slot", []int{3}); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err == nil {
		t.Fatal("slot 3 of a 3-slot cache ran without error")
	}
}

func TestSetSlotShapeErrors(t *testing.T) {
	tests := []struct {
		name string
		x    tensor.Shape
		slot func(s *graph.Scope) *G.Node
	}{
		{"two positions", tensor.Shape{2, 3, 2, 4}, nil},
		{"other width", tensor.Shape{2, 3, 1, 5}, nil},
		{"other heads", tensor.Shape{2, 2, 1, 4}, nil},
		{"float slot", tensor.Shape{2, 3, 1, 4}, func(s *graph.Scope) *G.Node { return s.Param("f", tensor.Shape{1}, graph.Ones) }},
		{"two slots", tensor.Shape{2, 3, 1, 4}, func(s *graph.Scope) *G.Node { return s.Input("slots", tensor.Int, 2) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := graph.NewScope(newTestParams(t, tensor.Float32))
			slot := s.Input("slot", tensor.Int, 1)
			if tc.slot != nil {
				slot = tc.slot(s)
			}
			cache := s.Param("cache", tensor.Shape{2, 3, 5, 4}, graph.Ones)
			if y := SetSlot(s, cache, s.Param("x", tc.x, graph.Ones), slot); y != nil || s.Err() == nil {
				t.Fatalf("node %v, error %v: want no node and an error", y, s.Err())
			}
		})
	}
}
