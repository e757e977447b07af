package data

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randomExamples returns n examples with lengths in [0, maxLen] and ids
// from NumReserved on.
func randomExamples(rng *rand.Rand, n, maxLen int) []Example {
	ids := func() []int {
		s := make([]int, rng.IntN(maxLen+1))
		for i := range s {
			s[i] = NumReserved + rng.IntN(50)
		}
		return s
	}
	out := make([]Example, n)
	for i := range out {
		out[i] = Example{Src: ids(), Tgt: ids()}
	}
	return out
}

// row returns row r of a row-major matrix with rows of length n.
func row(m []int, r, n int) []int { return m[r*n : (r+1)*n] }

// padded returns ids padded with PadID to length n.
func padded(n int, ids ...int) []int {
	out := make([]int, n)
	copy(out, ids)
	return out
}

// checkBatch verifies the matrices and counts of b against the examples
// it claims to hold.
func checkBatch(t *testing.T, b Batch, examples []Example) {
	t.Helper()
	if len(b.Src) != b.Rows*b.SrcLen || len(b.TgtIn) != b.Rows*b.TgtLen || len(b.TgtOut) != b.Rows*b.TgtLen {
		t.Fatalf("matrix sizes %d %d %d for shape %+v", len(b.Src), len(b.TgtIn), len(b.TgtOut), b.Shape())
	}
	if b.Examples != len(b.Index) || b.Examples > b.Rows {
		t.Fatalf("Examples %d, len(Index) %d, Rows %d", b.Examples, len(b.Index), b.Rows)
	}
	srcTokens, tgtTokens := 0, 0
	for r := range b.Rows {
		var wantSrc, wantIn, wantOut []int
		if r < b.Examples {
			e := examples[b.Index[r]]
			wantSrc = padded(b.SrcLen, append(slices.Clone(e.Src), EOSID)...)
			wantIn = padded(b.TgtLen, append([]int{BOSID}, e.Tgt...)...)
			wantOut = padded(b.TgtLen, append(slices.Clone(e.Tgt), EOSID)...)
			srcTokens += len(e.Src) + 1
			tgtTokens += len(e.Tgt) + 1
		} else {
			wantSrc, wantIn, wantOut = padded(b.SrcLen, EOSID), padded(b.TgtLen, BOSID), padded(b.TgtLen)
		}
		if !slices.Equal(row(b.Src, r, b.SrcLen), wantSrc) ||
			!slices.Equal(row(b.TgtIn, r, b.TgtLen), wantIn) ||
			!slices.Equal(row(b.TgtOut, r, b.TgtLen), wantOut) {
			t.Fatalf("row %d of %d (examples %d) is wrong", r, b.Rows, b.Examples)
		}
	}
	if b.SrcTokens != srcTokens || b.TgtTokens != tgtTokens {
		t.Fatalf("tokens %d/%d, want %d/%d", b.SrcTokens, b.TgtTokens, srcTokens, tgtTokens)
	}
	nonPad := 0
	for _, id := range b.TgtOut {
		if id != PadID {
			nonPad++
		}
	}
	if nonPad != b.TgtTokens {
		t.Fatalf("TgtOut has %d non-pad ids, TgtTokens %d", nonPad, b.TgtTokens)
	}
}

func TestBatcherEpoch(t *testing.T) {
	examples := randomExamples(rand.New(rand.NewPCG(1, 1)), 1000, 40)
	const maxTokens = 300
	b, err := NewBatcher(examples, BatchConfig{MaxTokens: maxTokens, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	shapes := b.Shapes()
	// Longest need is at most 41, so the default buckets are 8, 16, ..., 48.
	if len(shapes) > 6 {
		t.Errorf("%d shapes, want at most ceil(41/8) = 6", len(shapes))
	}
	for epoch := range 2 {
		seen := make([]int, len(examples))
		short := make(map[Shape]int)
		for range b.EpochLen() {
			batch := b.Next()
			checkBatch(t, batch, examples)
			s := batch.Shape()
			if !slices.Contains(shapes, s) || s.Rows*s.SrcLen > maxTokens || s.Rows != maxTokens/s.SrcLen {
				t.Fatalf("shape %+v not among %+v or over budget", s, shapes)
			}
			if batch.Examples < batch.Rows {
				short[s]++
			}
			for _, i := range batch.Index {
				seen[i]++
				if need := paddedLen(examples[i]); need > s.SrcLen || need <= s.SrcLen-DefaultBucketStep {
					t.Fatalf("example needing %d in bucket %d", need, s.SrcLen)
				}
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("epoch %d: example %d seen %d times", epoch, i, n)
			}
		}
		for s, n := range short {
			if n > 1 {
				t.Errorf("epoch %d: %d short batches of shape %+v, want at most 1", epoch, n, s)
			}
		}
		if st := b.State(); st.Epoch != epoch+1 || st.Index != 0 {
			t.Errorf("after epoch %d: state %+v", epoch, st)
		}
	}
}

// stream returns the Index of the next n batches of b.
func stream(b *Batcher, n int) [][]int {
	out := make([][]int, n)
	for i := range out {
		out[i] = b.Next().Index
	}
	return out
}

func TestBatcherShuffle(t *testing.T) {
	examples := randomExamples(rand.New(rand.NewPCG(2, 2)), 500, 20)
	newB := func(seed uint64) *Batcher {
		b, err := NewBatcher(examples, BatchConfig{MaxTokens: 128, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	n := newB(1).EpochLen()
	a := stream(newB(1), 2*n)
	if !slices.EqualFunc(a, stream(newB(1), 2*n), slices.Equal) {
		t.Error("same seed, different batches")
	}
	if slices.EqualFunc(a, stream(newB(2), 2*n), slices.Equal) {
		t.Error("different seeds, same batches")
	}
	if slices.EqualFunc(a[:n], a[n:], slices.Equal) {
		t.Error("two epochs in the same order")
	}
}

func TestBatcherResume(t *testing.T) {
	examples := randomExamples(rand.New(rand.NewPCG(3, 3)), 700, 30)
	cfg := BatchConfig{MaxTokens: 200, Buckets: []int{10, 20, 31}, Seed: 42}
	whole, err := NewBatcher(examples, cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := whole.EpochLen()
	want := stream(whole, 3*n)
	for _, stop := range []int{0, 1, n - 1, n, n + 5, 2*n + 3} {
		first, _ := NewBatcher(examples, cfg)
		got := stream(first, stop)
		saved, err := json.Marshal(first.State())
		if err != nil {
			t.Fatal(err)
		}
		var state BatchState
		if err := json.Unmarshal(saved, &state); err != nil {
			t.Fatal(err)
		}
		resumed, _ := NewBatcher(examples, BatchConfig{MaxTokens: 200, Buckets: []int{10, 20, 31}})
		if err := resumed.Restore(state); err != nil {
			t.Fatalf("stop %d: %v", stop, err)
		}
		got = append(got, stream(resumed, 3*n-stop)...)
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("stopped after %d batches (state %s): resumed stream differs", stop, saved)
		}
	}
}

func TestBatcherRestoreErrors(t *testing.T) {
	examples := randomExamples(rand.New(rand.NewPCG(4, 4)), 100, 10)
	b, _ := NewBatcher(examples, BatchConfig{MaxTokens: 64})
	tests := []struct {
		state BatchState
		want  string
	}{
		{BatchState{Examples: 99}, "for 99 examples, not 100"},
		{BatchState{Examples: 100, Epoch: -1}, "out of range"},
		{BatchState{Examples: 100, Index: -1}, "out of range"},
		{BatchState{Examples: 100, Index: b.EpochLen()}, "out of range"},
	}
	for _, tt := range tests {
		if err := b.Restore(tt.state); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Restore(%+v) error %v, want %q", tt.state, err, tt.want)
		}
	}
}

func TestBatcherEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	b, err := NewBatcher(randomExamples(rng, 300, 30), BatchConfig{MaxTokens: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	eval := randomExamples(rng, 77, 30)
	batches, err := b.EvalBatches(eval)
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	lastLen := 0
	for _, batch := range batches {
		checkBatch(t, batch, eval)
		if !slices.Contains(b.Shapes(), batch.Shape()) || batch.SrcLen < lastLen {
			t.Fatalf("shape %+v unknown or out of order", batch.Shape())
		}
		if !slices.IsSorted(batch.Index) || batch.SrcLen == lastLen && batch.Index[0] < order[len(order)-1] {
			t.Fatalf("examples of bucket %d out of input order", batch.SrcLen)
		}
		lastLen = batch.SrcLen
		order = append(order, batch.Index...)
	}
	slices.Sort(order)
	for i, idx := range order {
		if i != idx {
			t.Fatalf("evaluation does not hold every example exactly once: %v", order)
		}
	}
	again, _ := b.EvalBatches(eval)
	for i := range batches {
		if !slices.Equal(batches[i].Src, again[i].Src) || !slices.Equal(batches[i].TgtOut, again[i].TgtOut) {
			t.Fatal("evaluation batches differ between calls")
		}
	}
	if _, err := b.EvalBatches([]Example{{Src: slices.Repeat([]int{5}, 40)}}); err == nil || !strings.Contains(err.Error(), "more than the largest bucket") {
		t.Errorf("EvalBatches with an over-long example: error %v", err)
	}
}

func TestNewBatcherErrors(t *testing.T) {
	ok := []Example{{Src: []int{5, 6}, Tgt: []int{7}}}
	tests := []struct {
		name     string
		examples []Example
		cfg      BatchConfig
		want     string
	}{
		{"no examples", nil, BatchConfig{MaxTokens: 10}, "no examples"},
		{"no budget", ok, BatchConfig{}, "token budget 0"},
		{"bucket over budget", ok, BatchConfig{MaxTokens: 10, Buckets: []int{8, 16}}, "bucket length 16 exceeds"},
		{"unsorted buckets", ok, BatchConfig{MaxTokens: 100, Buckets: []int{8, 8}}, "strictly increasing"},
		{"zero bucket", ok, BatchConfig{MaxTokens: 100, Buckets: []int{0, 8}}, "strictly increasing"},
		{"empty buckets", ok, BatchConfig{MaxTokens: 100, Buckets: []int{}}, "no buckets"},
		{"too long", []Example{ok[0], {Src: slices.Repeat([]int{5}, 8)}}, BatchConfig{MaxTokens: 100, Buckets: []int{4, 8}},
			"example 1: needs length 9, more than the largest bucket 8"},
		{"pad in source", []Example{ok[0], {Src: []int{5, PadID}}}, BatchConfig{MaxTokens: 100}, "example 1: source: position 1"},
		{"EOS in target", []Example{{Tgt: []int{EOSID}}}, BatchConfig{MaxTokens: 100}, "example 0: target: position 0"},
		{"negative id", []Example{{Src: []int{-4}}}, BatchConfig{MaxTokens: 100}, "id -4"},
	}
	for _, tt := range tests {
		_, err := NewBatcher(tt.examples, tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestNewSourceBatch(t *testing.T) {
	srcs := [][]int{{5, 6, 7}, {}, {UnkID}}
	b, err := NewSourceBatch(srcs, 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{
		5, 6, 7, EOSID, PadID,
		EOSID, PadID, PadID, PadID, PadID,
		UnkID, EOSID, PadID, PadID, PadID,
		EOSID, PadID, PadID, PadID, PadID, // padding row
	}
	if !slices.Equal(b.Src, want) {
		t.Errorf("Src = %v, want %v", b.Src, want)
	}
	if b.Shape() != (Shape{4, 5, 0}) || b.Examples != 3 || !slices.Equal(b.Index, []int{0, 1, 2}) ||
		b.SrcTokens != 7 || b.TgtIn != nil || b.TgtOut != nil {
		t.Errorf("batch %+v", b)
	}
	errs := []struct {
		srcs       [][]int
		rows, slen int
		want       string
	}{
		{srcs, 2, 5, "3 sources do not fit 2 rows"},
		{srcs, 4, 0, "length 0"},
		{srcs, 4, 3, "source 0: 3 ids and EOS do not fit length 3"},
		{[][]int{{BOSID}}, 1, 5, "source 0: position 0"},
	}
	for _, tt := range errs {
		if _, err := NewSourceBatch(tt.srcs, tt.rows, tt.slen); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewSourceBatch(%v, %d, %d) error %v, want %q", tt.srcs, tt.rows, tt.slen, err, tt.want)
		}
	}
}

func TestStepBuckets(t *testing.T) {
	tests := []struct {
		step, max int
		want      []int
	}{
		{8, 1, []int{8}},
		{8, 8, []int{8}},
		{8, 9, []int{8, 16}},
		{8, 41, []int{8, 16, 24, 32, 40, 48}},
		{5, 0, []int{5}},
		{0, 10, nil},
		{-1, 10, nil},
	}
	for _, tt := range tests {
		if got := StepBuckets(tt.step, tt.max); !slices.Equal(got, tt.want) {
			t.Errorf("StepBuckets(%d, %d) = %v, want %v", tt.step, tt.max, got, tt.want)
		}
	}
}
