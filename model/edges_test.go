package model

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/transformer-go/transformer/internal/sysmem"
)

// TestDecodeMemoryCountsBeamCandidates: beam search makes 2·beam²
// candidates a step, which the memory check must count: 8,000 beams over
// one short source need more than 3 GB, not the 1 GB of their caches.
func TestDecodeMemoryCountsBeamCandidates(t *testing.T) {
	cfg, err := Preset("tiny", 40)
	if err != nil {
		t.Fatal(err)
	}
	const beam = 8000
	need := cfg.decodeBytes(4, 1, beam, 10, 64)
	candidates := 2 * beam * beam * float64(unsafe.Sizeof(candidate{}))
	if need < candidates {
		t.Errorf("beam %d: estimated %.2f GB, less than its candidates' %.2f GB", beam, need/(1<<30), candidates/(1<<30))
	}
	avail := sysmem.Limit{Bytes: 2 << 30, Source: "a test"}
	if err := avail.Check("beam 8000", need); err == nil {
		t.Errorf("beam %d fits in 2 GB, by an estimate of %.2f GB", beam, need/(1<<30))
	}
}

// TestUnregisteredVariantIsNamedBeforeItsOptions: a config naming a
// variant of one's own, with its options, built without its registry, is
// refused for the name, not for the options.
func TestUnregisteredVariantIsNamedBeforeItsOptions(t *testing.T) {
	cfg, err := Preset("tiny", 40)
	if err != nil {
		t.Fatal(err)
	}
	cfg.FFN, cfg.Options = "nobias", map[string]float64{"gain": 2}
	_, err = FromConfig(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown ffn "nobias"`) || strings.Contains(err.Error(), "remove") ||
		!strings.Contains(err.Error(), "WithRegistry") {
		t.Fatalf("an unregistered ffn with options: %v, want an error naming the ffn and the registry", err)
	}
}

// TestSaliencyRows: the map has a row per source token and one for EOSID,
// as documented, and an empty source is an error.
func TestSaliencyRows(t *testing.T) {
	cfg := decodeConfigs()["post-norm, sinusoidal"]
	m, params := decodeModel(t, cfg, 5, 1)
	src := []int{5, 9, 7}
	sal, err := Saliency(nil, m, params, src, []int{6, 8}, 1)
	if err != nil || !sal.Shape().Eq([]int{len(src) + 1, cfg.DModel}) {
		t.Fatalf("saliency of %d tokens: %v, %v, want [%d, %d]", len(src), sal, err, len(src)+1, cfg.DModel)
	}
	if _, err := Saliency(nil, m, params, nil, []int{6, 8}, 1); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty source: %v, want an error", err)
	}
}
