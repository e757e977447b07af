package decode

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/simtest"
	"github.com/transformer-go/transformer/model"
)

// TestDeviceDecoding decodes with tiny's random weights on the simulated
// device and on the CPU: greedy search and beam search give the CPU's
// tokens, and log-probabilities within 1e-4, with the steps replayed from
// the recording of the first (the runtime's default) and run op by op.
func TestDeviceDecoding(t *testing.T) {
	for _, replays := range []int{graph.DefaultReplays, 0} {
		dev, c := simtest.Counted(t)
		if err := dev.SetReplays(replays); err != nil {
			t.Fatal(err)
		}
		checkDecoding(t, dev)
		if n := c.Replayed.Load(); (replays > 0) != (n > 0) {
			t.Errorf("%d recordings kept: %d steps replayed", replays, n)
		}
	}
}

// checkDecoding decodes with tiny's random weights on the device runtime dev
// and on the CPU: greedy search and beam search give the CPU's tokens, and
// log-probabilities within 1e-4.
func checkDecoding(t *testing.T, dev *graph.Runtime) {
	t.Helper()
	m, params := tinyRandom(t)
	srcs := [][]int{{5, 9, 12, 7, model.EOSID}, {20, 6, model.EOSID}}
	for _, s := range []Search{
		{Method: MethodGreedy, Temperature: 1, Batch: 2, MaxLen: 6},
		{Method: MethodBeam, Beam: 2, NBest: 1, Alpha: 0.6, Temperature: 1, Batch: 2, MaxLen: 6},
	} {
		want := decodeOn(t, graph.CPU(), m, params, srcs, s)
		got := decodeOn(t, dev, m, params, srcs, s)
		for i := range want {
			w, g := want[i][0], got[i][0]
			if !slices.Equal(g.Tokens, w.Tokens) || g.LogProb-w.LogProb > 1e-4 || w.LogProb-g.LogProb > 1e-4 {
				t.Errorf("%s, source %d: %v (log-probability %g) on the device, %v (%g) on the CPU",
					s.Method, i, g.Tokens, g.LogProb, w.Tokens, w.LogProb)
			}
		}
	}
}

// decodeOn decodes srcs with s on rt.
func decodeOn(t *testing.T, rt *graph.Runtime, m model.Model, params *graph.Params, srcs [][]int, s Search) [][]Hypothesis {
	t.Helper()
	return decodeEnsemble(t, rt, srcs, s, Member{m, params})
}

// decodeEnsemble decodes srcs with s on rt by the ensemble of members.
func decodeEnsemble(t *testing.T, rt *graph.Runtime, srcs [][]int, s Search, members ...Member) [][]Hypothesis {
	t.Helper()
	d, err := NewEnsemble(rt, members...)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, err := d.Decode(srcs, s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tinyRandom is tiny, vocabulary 30, with random float32 weights.
func tinyRandom(t *testing.T) (model.Model, *graph.Params) {
	t.Helper()
	cfg, err := model.Preset("tiny", 30)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	return m, params
}

// TestDeviceDecodingKeepsCachesThere: on the simulated device, starting
// a session (encoding, the memory copied beam by beam into the step
// program) reads nothing back to the host, and a beam step that reorders
// the rows' caches reads back only its log-probabilities.
func TestDeviceDecodingKeepsCachesThere(t *testing.T) {
	dev := simtest.Runtime(t)
	m, params := tinyRandom(t)
	d, err := New(dev, m, params)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ss, err := d.start([][]int{{5, 9, 12, 7, model.EOSID}, {20, 6, model.EOSID}}, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	if got := dev.CopiedToHost(); got != 0 {
		t.Errorf("starting a session copied %d bytes to the host, want 0", got)
	}
	tokens := []int{model.BOSID, model.BOSID, model.BOSID, model.BOSID}
	for step, parents := range [][]int{nil, {1, 1, 3, 2}} {
		before := dev.CopiedToHost()
		if err := ss.advance(tokens, parents); err != nil {
			t.Fatal(err)
		}
		if _, err := ss.logProbs(0, 4); err != nil {
			t.Fatal(err)
		}
		if got, want := dev.CopiedToHost()-before, 4*m.Config().Vocab*4; got != want {
			t.Errorf("step %d copied %d bytes to the host, want %d (the log-probabilities)", step+1, got, want)
		}
		tokens = []int{7, 8, 9, 10}
	}
}
