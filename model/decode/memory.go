package decode

import (
	"fmt"
	"unsafe"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/model"
)

// checkMemory refuses, before anything is allocated, to decode the batch
// srcs with beams rows a source and caches of steps positions when the
// encoder's pass over the sources or the decoding steps would need more
// memory than the decoder's runtime may allocate.
func (d *Decoder) checkMemory(srcs [][]int, beams, steps int) error {
	longest := 0
	for _, s := range srcs {
		longest = max(longest, len(s))
	}
	srcLen := 0 // prompts are in the caches
	if d.m.Layout().Sources {
		srcLen = longest
	}
	eb := int(d.params.Dtype().Size())
	need := max(d.cfg.ForwardBytes(eb, len(srcs), srcLen, 0), decodeBytes(d.cfg, eb, len(srcs), beams, srcLen, steps))
	what := fmt.Sprintf("%d rows a source, sources of up to %d tokens and caches of %d positions", beams, longest, steps)
	if err := d.rt.CheckMemory(what, need); err != nil {
		return errors.Errorf("%v; decode fewer sources at once, with a narrower beam, or shorter ones", err)
	}
	return nil
}

// decodeBytes is the least memory that incremental decoding with a model
// of c holds at once for sources sources of srcLen positions (0 for a
// decoder-only model), beams rows each, whose caches hold steps positions:
// every decoder layer's cached self-attention keys and values and
// cross-attention keys and values of the sources, a row of
// log-probabilities a row, and the 2·beams² candidate extensions a step
// makes for one source (beams.candidates; 3 GB for 8,000 beams). Like
// model.Config.ForwardBytes, it is a lower bound that no size overflows.
func decodeBytes(c model.Config, elemBytes, sources, beams, srcLen, steps int) float64 {
	kv := float64(c.DModel) // the keys' and values' width
	if c.KVHeads > 0 {
		kv = float64(c.DModel / c.Heads * c.KVHeads)
	}
	perRow := float64(c.DecoderLayers)*2*kv*(float64(steps)+float64(srcLen)) + float64(c.Vocab)
	k := float64(beams)
	return float64(sources)*k*perRow*float64(elemBytes) + 2*k*k*float64(unsafe.Sizeof(candidate{}))
}
