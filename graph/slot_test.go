package graph

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
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
			c := GradCheck{
				Build: func(s *Scope) *G.Node {
					return s.SetSlot(s.Param("cache", tc.cache, Normal(1)), s.Param("x", xs, Normal(1)), s.Input("slot", tensor.Int, 1))
				},
				Set:     func(p *Program) error { return p.Set("slot", []int{tc.slot}) },
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
	s := NewScope(params)
	y := s.SetSlot(s.Constant("cache", cache), s.Constant("x", x), s.Input("slot", tensor.Int, 1))
	p, err := Compile(nil, s, nil, map[string]*G.Node{"y": y})
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
	s := NewScope(newTestParams(t, tensor.Float32))
	cache := s.Param("cache", tensor.Shape{2, 3, 5, 4}, Ones)
	slot := s.Input("slot", tensor.Int, 1)
	tests := []struct {
		name string
		x    tensor.Shape
		slot *G.Node
	}{
		{"two positions", tensor.Shape{2, 3, 2, 4}, slot},
		{"other width", tensor.Shape{2, 3, 1, 5}, slot},
		{"other heads", tensor.Shape{2, 2, 1, 4}, slot},
		{"float slot", tensor.Shape{2, 3, 1, 4}, s.Param("f", tensor.Shape{1}, Ones)},
		{"two slots", tensor.Shape{2, 3, 1, 4}, s.Input("slots", tensor.Int, 2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := SetSlot(cache, s.Param(tc.name, tc.x, Ones), tc.slot); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
