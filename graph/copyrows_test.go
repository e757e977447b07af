package graph_test

import (
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	. "github.com/transformer-go/transformer/graph"
)

// doubleProgram is a program on rt of the input named in, of the given
// shape, whose output out is twice it; with self, the input is an output
// too.
func doubleProgram(t *testing.T, rt *Runtime, in, out string, self bool, shape ...int) *Program {
	t.Helper()
	s := NewScope(NewTestParams(t, tensor.Float32))
	x := s.Input(in, tensor.Float32, shape...)
	outputs := map[string]*G.Node{out: s.Add(x, x)}
	if self {
		outputs["self"] = x
	}
	p, err := Compile(rt, s, nil, outputs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// runOutput sets p's input in to x (unless nil), runs p and returns its
// output out.
func runOutput(t *testing.T, p *Program, in string, x []float32, out string) []float32 {
	t.Helper()
	if x != nil {
		if err := p.Set(in, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(p.Output(out).Data().([]float32))
}

// TestCopyRows copies rows of one program's output into another's input
// and of a program's output into its own input, on the CPU and the
// simulated device: the inputs hold the rows asked for, run after run
// until the host sets them again; on the device nothing of them crosses to
// the host, and the host's stale copy of an input does not overwrite them.
func TestCopyRows(t *testing.T) {
	for name, rt := range map[string]*Runtime{"cpu": CPU(), "sim": simRuntime(t, Float32)} {
		t.Run(name, func(t *testing.T) {
			src := doubleProgram(t, rt, "x", "y", false, 3, 2)
			dst := doubleProgram(t, rt, "z", "w", false, 4, 2)
			runOutput(t, src, "x", []float32{1, 2, 3, 4, 5, 6}, "y")
			read := rt.CopiedToHost()
			if err := CopyRows(dst, "z", src, "y", []int{2, 0, 2, 1}); err != nil {
				t.Fatal(err)
			}
			if got := rt.CopiedToHost() - read; got != 0 {
				t.Errorf("CopyRows copied %d bytes to the host", got)
			}
			want := []float32{20, 24, 4, 8, 20, 24, 12, 16}
			for run := range 2 {
				if got := runOutput(t, dst, "z", nil, "w"); !slices.Equal(got, want) {
					t.Errorf("run %d after CopyRows: %v, want %v", run+1, got, want)
				}
			}
			if got := runOutput(t, dst, "z", []float32{8, 7, 6, 5, 4, 3, 2, 1}, "w"); got[0] != 16 || got[7] != 2 {
				t.Errorf("set after CopyRows: %v, want 16 … 2", got)
			}
			self := doubleProgram(t, rt, "c", "next", false, 2, 3)
			runOutput(t, self, "c", []float32{1, 2, 3, 4, 5, 6}, "next")
			for _, tc := range []struct {
				rows []int
				want []float32
			}{{nil, []float32{4, 8, 12, 16, 20, 24}}, {[]int{1, 0}, []float32{32, 40, 48, 8, 16, 24}}} {
				if err := CopyRows(self, "c", self, "next", tc.rows); err != nil {
					t.Fatal(err)
				}
				if got := runOutput(t, self, "c", nil, "next"); !slices.Equal(got, tc.want) {
					t.Errorf("a program's output into its own input, rows %v: %v, want %v", tc.rows, got, tc.want)
				}
			}
		})
	}
}

// TestCopyRowsRefuses: CopyRows names what is wrong with its programs,
// names, shapes and rows, and copies nothing then.
func TestCopyRowsRefuses(t *testing.T) {
	rts := map[string]*Runtime{"cpu": CPU(), "sim": simRuntime(t, Float32)}
	for name, rt := range rts {
		t.Run(name, func(t *testing.T) {
			other := rts["cpu"]
			if name == "cpu" {
				other = rts["sim"]
			}
			refusals(t, rt, other)
		})
	}
}

// refusals are TestCopyRowsRefuses on rt, other another runtime.
func refusals(t *testing.T, rt, other *Runtime) {
	src := doubleProgram(t, rt, "x", "y", true, 3, 2)
	fresh := doubleProgram(t, rt, "u", "v", false, 3, 2)
	wide := doubleProgram(t, rt, "a", "b", false, 3, 3)
	elsewhere := doubleProgram(t, other, "o", "p", false, 3, 2)
	s := NewScope(NewTestParams(t, tensor.Float32))
	ints, err := Compile(rt, s, nil, map[string]*G.Node{"ids": s.Input("ids", tensor.Int, 3, 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer ints.Close()
	runOutput(t, src, "x", []float32{1, 2, 3, 4, 5, 6}, "y")
	for _, tc := range []struct {
		dst        *Program
		in, out    string
		rows       []int
		want       string
		unreadable bool
	}{
		{src, "nope", "y", nil, "no input nope", false},
		{src, "x", "nope", nil, "no output nope", false},
		{elsewhere, "o", "y", nil, "different runtimes", false},
		{src, "x", "self", []int{0, 1, 2}, "one value", false},
		{ints, "ids", "y", nil, "want the same floats", false},
		{wide, "a", "y", nil, "differ beyond their first axis", false},
		{doubleProgram(t, rt, "r", "s", false, 2, 2), "r", "y", nil, "3 rows into 2", false},
		{fresh, "u", "y", []int{0, 1}, "2 row indices for 3 rows", false},
		{fresh, "u", "y", []int{0, 3, 1}, "row 1 from row 3", false},
		{fresh, "u", "y", []int{0, -1, 1}, "row 1 from row -1", false},
		{fresh, "u", "y", nil, "not readable", true},
	} {
		if tc.unreadable {
			runOutput(t, fresh, "u", nil, "v")
		} else {
			runOutput(t, src, "x", nil, "y")
		}
		err := CopyRows(tc.dst, tc.in, src, tc.out, tc.rows)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CopyRows into %s from %s, rows %v: error %v, want one saying %q", tc.in, tc.out, tc.rows, err, tc.want)
		}
	}
	if got := runOutput(t, fresh, "u", nil, "v"); slices.ContainsFunc(got, func(v float32) bool { return v != 0 }) {
		t.Errorf("a refused CopyRows changed the input: %v", got)
	}
}
