package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"

	"github.com/transformer-go/transformer/internal/modeltest"
	"github.com/transformer-go/transformer/internal/sysmem"
	"github.com/transformer-go/transformer/model"
)

// TestDecodeMemoryCountsBeamCandidates: beam search makes 2·beam²
// candidates a step, which the memory check must count: 8,000 beams over
// one short source need more than 3 GB, not the 1 GB of their caches.
func TestDecodeMemoryCountsBeamCandidates(t *testing.T) {
	cfg, err := model.Preset("tiny", 40)
	if err != nil {
		t.Fatal(err)
	}
	const beam = 8000
	need := decodeBytes(cfg, 4, 1, beam, 10, 64)
	candidates := 2 * beam * beam * float64(unsafe.Sizeof(candidate{}))
	if need < candidates {
		t.Errorf("beam %d: estimated %.2f GB, less than its candidates' %.2f GB", beam, need/(1<<30), candidates/(1<<30))
	}
	avail := sysmem.Limit{Bytes: 2 << 30, Source: "a test"}
	if err := avail.Check("beam 8000", need); err == nil {
		t.Errorf("beam %d fits in 2 GB, by an estimate of %.2f GB", beam, need/(1<<30))
	}
}

// TestBatchesThatCannotFitAreRefused decodes with a beam of 2^62 rows: it
// is refused, naming the sizes and the estimate, before anything is
// allocated.
func TestBatchesThatCannotFitAreRefused(t *testing.T) {
	for _, name := range []string{"post-norm, sinusoidal", "decoder-only, post-norm"} {
		cfg := modeltest.Configs()[name]
		cfg.MaxLen = 1 << 20
		m, params := modeltest.Model(t, cfg, 1, 1)
		d, err := New(nil, m, params)
		if err != nil {
			t.Fatal(err)
		}
		s := DefaultSearch()
		s.Beam = 1 << 62 // times the 2 sources: more than an int holds
		grew := modeltest.Allocated(func() { _, err = d.Decode(modeltest.Sources(cfg.Vocab, 2, 1), s) })
		d.Close()
		if err == nil || !strings.Contains(err.Error(), "4611686018427387904 rows a source") || !strings.Contains(err.Error(), "GB needed") {
			t.Errorf("%s: beam 2^62: %v", name, err)
		}
		if grew > 64<<20 {
			t.Errorf("%s: allocated %d MB before refusing", name, grew>>20)
		}
	}
}

// peakCase is a batch whose decoding TestDecodeMemoryBoundsItsPeak
// measures: a model's sizes, the sources and the search.
type peakCase struct {
	Name                   string
	Kind, FFN              string
	DModel, Heads, DFF, KV int
	Layers, Vocab          int
	Sources, SrcLen        int
	Beam, MaxLen           int
	// Ends makes every step's most probable token EOS, so that decoding
	// stops after a step or two (its caches are allocated whole); false
	// makes EOS improbable, so that every output takes MaxLen steps.
	Ends bool
}

// peakEnv, set in a child process, names the case it measures.
const peakEnv = "DECODE_PEAK_CASE"

// TestDecodeMemoryBoundsItsPeak decodes batches, each in a process of its
// own, and checks the memory check's need against the growth of the
// address space at its peak (VmPeak, what ulimit -v counts) and of the
// heap: decoding never maps more than the check allows for (its need, and
// the runtime's reserve), and the estimate of what it holds is within
// 2.5 times the heap it took. Among them: the shapes of the fourth hostile
// trial, which the estimate of caches and candidates alone let through to
// Go's fatal out-of-memory (beam 100 at 1,024 positions, 300 sources
// greedily), and one decoded to the end, whose garbage the collector lets
// grow.
func TestDecodeMemoryBoundsItsPeak(t *testing.T) {
	if js := os.Getenv(peakEnv); js != "" {
		measurePeak(t, js)
		return
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc/self/status (Linux) for the address space's peak")
	}
	if raceDetector {
		t.Skip("the race detector maps shadow memory beside the heap, which the check does not count")
	}
	for _, c := range []peakCase{
		{Name: "beam 100, 1,024 positions", Kind: model.KindEncoderDecoder, DModel: 128, Heads: 4, DFF: 512, Layers: 2, Vocab: 14,
			Sources: 1, SrcLen: 4, Beam: 100, MaxLen: 1024, Ends: true},
		{Name: "150 sources greedily", Kind: model.KindEncoderDecoder, DModel: 128, Heads: 4, DFF: 512, Layers: 2, Vocab: 14,
			Sources: 150, SrcLen: 4, Beam: 1, MaxLen: 512, Ends: true},
		{Name: "small, beam 4, vocabulary 8,000", Kind: model.KindEncoderDecoder, DModel: 256, Heads: 8, DFF: 1024, Layers: 3, Vocab: 8000,
			Sources: 32, SrcLen: 30, Beam: 4, MaxLen: 128, Ends: true},
		{Name: "decoder-only", Kind: model.KindDecoderOnly, DModel: 128, Heads: 4, DFF: 512, Layers: 2, Vocab: 8000,
			Sources: 64, SrcLen: 30, Beam: 1, MaxLen: 512, Ends: true},
		{Name: "grouped-query, swiglu", Kind: model.KindEncoderDecoder, FFN: layers.FFNSwiGLU, DModel: 128, Heads: 8, KV: 2, DFF: 512, Layers: 2,
			Vocab: 8000, Sources: 16, SrcLen: 200, Beam: 8, MaxLen: 300, Ends: true},
		{Name: "six layers, sources of 1,000 tokens", Kind: model.KindEncoderDecoder, DModel: 64, Heads: 4, DFF: 64, Layers: 6, Vocab: 14,
			Sources: 4, SrcLen: 1000, Beam: 4, MaxLen: 20, Ends: true},
		{Name: "beam 100 to the end", Kind: model.KindEncoderDecoder, DModel: 128, Heads: 4, DFF: 512, Layers: 2, Vocab: 14,
			Sources: 1, SrcLen: 4, Beam: 100, MaxLen: 300},
	} {
		js, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestDecodeMemoryBoundsItsPeak$")
		cmd.Env = append(os.Environ(), peakEnv+"="+string(js))
		out, err := cmd.CombinedOutput()
		var m peak
		if _, serr := fmt.Sscanf(string(out[max(0, bytes.Index(out, []byte("peak "))):]), "peak %f %f %f %f", &m.addr, &m.heap, &m.est, &m.need); err != nil || serr != nil {
			t.Fatalf("%s: %v %v\n%s", c.Name, err, serr, out)
		}
		t.Logf("%s: address space +%.0f MB, heap +%.0f MB; estimated %.0f MB, needed %.0f MB and the reserve", c.Name, m.addr/(1<<20), m.heap/(1<<20), m.est/(1<<20), m.need/(1<<20))
		if m.addr > m.need+reserve {
			t.Errorf("%s: the address space grew by %.0f MB, more than the %.0f MB the check allows for", c.Name, m.addr/(1<<20), (m.need+reserve)/(1<<20))
		}
		if m.est > 2.5*m.heap {
			t.Errorf("%s: estimated %.0f MB, more than 2.5 times the %.0f MB the heap grew by", c.Name, m.est/(1<<20), m.heap/(1<<20))
		}
	}
}

// reserve is the address space the check's limit leaves to the runtime.
const reserve = sysmem.Reserve

// peak is what a child process measured: the growth of the address space
// at its peak and of the heap, the estimate and the check's need.
type peak struct{ addr, heap, est, need float64 }

// measurePeak decodes the case js with float32 weights whose last norm
// makes every position's output one vector, so that EOS is the most
// probable token everywhere, or the least, and prints what peak holds.
func measurePeak(t *testing.T, js string) {
	var c peakCase
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		t.Fatal(err)
	}
	cfg, err := model.Preset("tiny", c.Vocab)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kind, cfg.DModel, cfg.Heads, cfg.DFF, cfg.EncoderLayers, cfg.DecoderLayers = c.Kind, c.DModel, c.Heads, c.DFF, c.Layers, c.Layers
	if c.Kind == model.KindDecoderOnly {
		cfg.EncoderLayers = 0
	}
	if c.KV > 0 {
		cfg.Attention, cfg.KVHeads = layers.AttentionGroupedQuery, c.KV
	}
	if c.FFN != "" {
		cfg.FFN = c.FFN
	}
	m, params, err := model.Init(cfg, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	eos := -100.0
	if c.Ends {
		eos = 100
	}
	constantOutput(params, cfg.DModel, eos)
	srcs := make([][]int, c.Sources)
	for i := range srcs {
		srcs[i] = append(slices.Repeat([]int{5 + i%(c.Vocab-5)}, c.SrcLen-1), model.EOSID)
	}
	d, err := New(nil, m, params)
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSearch()
	s.Beam, s.MaxLen, s.Batch = c.Beam, c.MaxLen, c.Sources
	if c.Beam == 1 {
		s.Method = MethodGreedy
	}
	pl, err := d.plan(srcs, make([]int, len(srcs)), s.MaxLen)
	if err != nil {
		t.Fatal(err)
	}
	srcLen := 0
	if d.sources() {
		srcLen = d.roundLen(pl.longest)
	}
	est := decodeBytes(cfg, 4, c.Sources, c.Beam, srcLen, pl.steps)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	addr := procKB(t, "VmSize:")
	if _, err := d.Decode(srcs, s); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	fmt.Printf("peak %d %d %.0f %.0f\n", procKB(t, "VmPeak:")-addr, after.HeapSys-before.HeapSys, est, sysmem.HeapNeed(est))
}

// constantOutput sets the last decoder layer's last norm to give the
// vector b whatever its input (weight 0, bias b), and EOS's embedding,
// tied to the output layer, to eos·b: EOS's logit is eos·|b|².
func constantOutput(params *graph.Params, dModel int, eos float64) {
	last := ""
	for _, n := range params.Names() {
		if strings.HasPrefix(n, "decoder.layers.") && strings.Contains(n, ".norm") && strings.HasSuffix(n, ".weight") && n > last {
			last = n
		}
	}
	w := params.Value(last).Data().([]float32)
	b := params.Value(strings.TrimSuffix(last, "weight") + "bias").Data().([]float32)
	e := params.Value("embed.weight").Data().([]float32)[model.EOSID*dModel:]
	rng := rand.New(rand.NewPCG(1, 1))
	for j := range w {
		w[j], b[j] = 0, float32(rng.NormFloat64())
		e[j] = float32(eos) * b[j]
	}
}

// procKB is a "KEY N kB" line of /proc/self/status, in bytes.
func procKB(t *testing.T, key string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == key {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n << 10
		}
	}
	t.Fatalf("/proc/self/status has no %s", key)
	return 0
}
