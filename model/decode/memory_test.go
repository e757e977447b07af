package decode

import (
	"strings"
	"testing"
	"unsafe"

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

// TestMemoryEstimatesAreLowerBounds decodes batches that fit and checks the
// estimate the memory check uses against everything the decoding
// allocated: the check refuses only what cannot fit.
func TestMemoryEstimatesAreLowerBounds(t *testing.T) {
	for _, name := range []string{"post-norm, sinusoidal", "decoder-only, post-norm", "grouped-query, swiglu"} {
		cfg := modeltest.Configs()[name]
		m, params := modeltest.Model(t, cfg, 1, 1)
		src := make([][]int, 3)
		for i := range src {
			for range 200 {
				src[i] = append(src[i], 5+i)
			}
		}
		d, err := New(nil, m, params)
		if err != nil {
			t.Fatal(err)
		}
		s := DefaultSearch()
		s.MaxLen = 100
		took := float64(modeltest.Allocated(func() { _, err = d.Decode(src, s) }))
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		steps := d.roundLen(100 + 1)
		srcLen := 200
		if cfg.Kind == model.KindDecoderOnly {
			steps, srcLen = d.roundLen(200+100+1), 0
		}
		est := decodeBytes(cfg, int(params.Dtype().Size()), 3, s.Beam, srcLen, steps)
		t.Logf("%s: decoding 3 sources of 200 tokens: estimated %.1f MB, allocated %.1f MB", name, est/(1<<20), took/(1<<20))
		if est > took {
			t.Errorf("%s: decoding 3 sources of 200 tokens: estimated %.0f bytes, took %.0f", name, est, took)
		}
	}
}
