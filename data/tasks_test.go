package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestTaskTargets(t *testing.T) {
	cfg := TaskConfig{Symbols: 10, MinLen: 1, MaxLen: 12}
	tests := []struct {
		name string
		ok   func(src, tgt []int) bool
	}{
		{"copy", slices.Equal[[]int]},
		{"reverse", func(src, tgt []int) bool {
			r := slices.Clone(tgt)
			slices.Reverse(r)
			return slices.Equal(src, r)
		}},
		{"sort", func(src, tgt []int) bool {
			return slices.IsSorted(tgt) && sameMultiset(src, tgt)
		}},
	}
	for _, tt := range tests {
		task, err := NewTask(tt.name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if task.Name() != tt.name || task.Config() != cfg || task.VocabSize() != NumReserved+10 {
			t.Errorf("%s: Name %q Config %+v VocabSize %d", tt.name, task.Name(), task.Config(), task.VocabSize())
		}
		rng := rand.New(rand.NewPCG(1, 2))
		lengths := make(map[int]int)
		for range 5000 {
			e := task.Sample(rng)
			lengths[len(e.Src)]++
			if !tt.ok(e.Src, e.Tgt) {
				t.Fatalf("%s: wrong target %v for %v", tt.name, e.Tgt, e.Src)
			}
			for _, id := range e.Src {
				if id < NumReserved || id >= task.VocabSize() {
					t.Fatalf("%s: id %d outside [%d, %d)", tt.name, id, NumReserved, task.VocabSize())
				}
			}
		}
		for l := cfg.MinLen; l <= cfg.MaxLen; l++ {
			// Uniform lengths give 5000/12 ≈ 417 each; 300 is far below.
			if lengths[l] < 300 {
				t.Errorf("%s: length %d drawn %d times of 5000", tt.name, l, lengths[l])
			}
		}
		if len(lengths) != cfg.MaxLen-cfg.MinLen+1 {
			t.Errorf("%s: lengths %v outside [%d, %d]", tt.name, lengths, cfg.MinLen, cfg.MaxLen)
		}
	}
}

// sameMultiset reports whether a and b hold the same ids, counted.
func sameMultiset(a, b []int) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestTaskHeldOut(t *testing.T) {
	task, err := NewTask("reverse", TaskConfig{Symbols: 4, MinLen: 1, MaxLen: 6})
	if err != nil {
		t.Fatal(err)
	}
	held := task.HeldOut(300)
	if len(held) != 300 {
		t.Fatalf("HeldOut(300) has %d examples", len(held))
	}
	heldSet := make(map[string]bool)
	for _, e := range held {
		if !IsHeldOut(e.Src) {
			t.Fatalf("HeldOut returned %v, which IsHeldOut rejects", e.Src)
		}
		heldSet[fmt.Sprint(e.Src)] = true
	}
	if again := task.HeldOut(500); !slices.EqualFunc(held, again[:300], equalExample) {
		t.Error("HeldOut(300) is not a prefix of HeldOut(500)")
	}
	// With 5,460 possible sources, 200,000 training draws see nearly all of
	// them; none may be held out.
	rng := rand.New(rand.NewPCG(7, 7))
	seen := make(map[string]bool)
	for range 200000 {
		e := task.Sample(rng)
		if heldSet[fmt.Sprint(e.Src)] {
			t.Fatalf("training example %v is in the held-out set", e.Src)
		}
		seen[fmt.Sprint(e.Src)] = true
	}
	total := 4 + 16 + 64 + 256 + 1024 + 4096
	heldShare := float64(total-len(seen)) / float64(total)
	if heldShare < 1.0/32 || heldShare > 1.0/8 {
		t.Errorf("%d of %d sources never drawn for training (share %.3f), want about 1/16", total-len(seen), total, heldShare)
	}
}

func equalExample(a, b Example) bool { return slices.Equal(a.Src, b.Src) && slices.Equal(a.Tgt, b.Tgt) }

func TestTaskSampleDeterministic(t *testing.T) {
	task, _ := NewTask("sort", TaskConfig{Symbols: 10, MinLen: 1, MaxLen: 10})
	draw := func(seed uint64) []Example {
		rng := rand.New(rand.NewPCG(seed, 0))
		out := make([]Example, 100)
		for i := range out {
			out[i] = task.Sample(rng)
		}
		return out
	}
	if !slices.EqualFunc(draw(1), draw(1), equalExample) {
		t.Error("same seed, different examples")
	}
	if slices.EqualFunc(draw(1), draw(2), equalExample) {
		t.Error("different seeds, same examples")
	}
}

func TestNewTaskErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  TaskConfig
		want string
	}{
		{"shuffle", TaskConfig{Symbols: 10, MinLen: 1, MaxLen: 10}, `unknown task "shuffle" (valid: copy, reverse, sort)`},
		{"Copy", TaskConfig{Symbols: 10, MinLen: 1, MaxLen: 10}, `unknown task "Copy"`},
		{"copy", TaskConfig{Symbols: 0, MinLen: 1, MaxLen: 10}, "want Symbols >= 1"},
		{"copy", TaskConfig{Symbols: 10, MinLen: 0, MaxLen: 10}, "want Symbols >= 1"},
		{"copy", TaskConfig{Symbols: 10, MinLen: 5, MaxLen: 4}, "want Symbols >= 1"},
		{"copy", TaskConfig{Symbols: 10, MinLen: 1, MaxLen: 5000}, "MaxLen <= 4096"},
		{"copy", TaskConfig{Symbols: 1, MinLen: 1, MaxLen: 1}, "of its 1 possible sources are held out"},
	}
	for _, tt := range tests {
		_, err := NewTask(tt.name, tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewTask(%q, %+v) error %v, want %q", tt.name, tt.cfg, err, tt.want)
		}
	}
}

func TestTaskSmallSpace(t *testing.T) {
	// 3+9+27+81 = 120 sources, enumerated by NewTask; about 7 are held out.
	task, err := NewTask("copy", TaskConfig{Symbols: 3, MinLen: 1, MaxLen: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range task.HeldOut(50) {
		if !IsHeldOut(e.Src) {
			t.Fatalf("held-out source %v is not held out", e.Src)
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 1000 {
		if e := task.Sample(rng); IsHeldOut(e.Src) {
			t.Fatalf("training source %v is held out", e.Src)
		}
	}
}

func TestTaskNames(t *testing.T) {
	for _, name := range TaskNames() {
		if _, err := NewTask(name, TaskConfig{Symbols: 10, MinLen: 1, MaxLen: 10}); err != nil {
			t.Errorf("NewTask(%q): %v", name, err)
		}
	}
}
