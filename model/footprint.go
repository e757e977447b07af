package model

import (
	"fmt"
	"math"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/sysmem"
)

// Limits on the sizes of a Config. They are far beyond any model this
// package trains on a machine, and small enough that sizes multiplied
// together cannot overflow an int64, so Validate can estimate memory
// before anything is allocated.
const (
	MinVocab  = 5       // the 4 reserved tokens and one more
	MaxVocab  = 1 << 24 // 16.7M tokens
	MaxDModel = 1 << 16
	MaxDFF    = 1 << 18
	MaxLayers = 1 << 10 // per stack
	MaxMaxLen = 1 << 20 // positions
)

// Footprint is the memory a configuration needs, estimated from its sizes
// alone.
type Footprint struct {
	// Params is the number of scalar parameters of the encoder-decoder (an
	// upper bound for the one-stack variants).
	Params int64
	// Weights is the bytes of the weights alone: what decoding holds.
	Weights int64
	// Training is the bytes of the weights, their gradients and Adam's two
	// moments, plus the activations of one batch.
	Training int64
	// Activations is the bytes of the forward and backward values of one
	// training batch of the given token budget.
	Activations int64
	// Largest names the config field behind most of the parameters.
	Largest string
}

// Footprint estimates the memory of c with elements of elemBytes bytes (4
// for float32) and training batches of batchTokens target tokens. c must
// be valid.
func (c Config) Footprint(elemBytes, batchTokens int) Footprint {
	d, dff := int64(c.DModel), int64(c.DFF)
	norm := 2 * d // gain and bias
	if c.Norm == "rms" {
		norm = d
	}
	kv := d // the keys' and values' width: dk times the key/value heads
	if c.KVHeads > 0 {
		kv = d / int64(c.Heads) * int64(c.KVHeads)
	}
	attn := 2*(d*d+d) + 2*(d*kv+kv)
	ffn := 2*d*dff + dff + d
	if c.FFN == "swiglu" {
		ffn = 3 * d * dff
	}
	terms := []struct {
		field string
		n     int64
	}{
		{"vocab", int64(c.Vocab) * d},
		{"encoder_layers", int64(c.EncoderLayers) * (attn + ffn + 2*norm)},
		{"decoder_layers", int64(c.DecoderLayers) * (2*attn + ffn + 3*norm)},
	}
	if c.Positions == "learned" {
		terms = append(terms, struct {
			field string
			n     int64
		}{"max_len", 2 * int64(c.MaxLen) * d})
	}
	f := Footprint{}
	var most int64 = -1
	for _, t := range terms {
		f.Params += t.n
		if t.n > most {
			most, f.Largest = t.n, t.field
		}
	}
	if c.PreNorm {
		f.Params += 2 * norm // each stack's final norm
	}
	eb, tok := int64(elemBytes), int64(batchTokens)
	layers := int64(c.EncoderLayers + c.DecoderLayers)
	// Per token and layer: the sublayers' inputs, projections, norms and
	// dropout masks (~16 d), the feed-forward's inner values (~3 dFF) and
	// attention weights (heads × up to 64 keys, times 4); the output layer
	// keeps logits, log-probabilities and their gradient (3 × vocab).
	perToken := layers*(16*d+3*dff+4*64*int64(c.Heads)) + 3*int64(c.Vocab)
	f.Weights = f.Params * eb
	f.Activations = tok * perToken * eb
	f.Training = 4*f.Weights + f.Activations
	return f
}

// CheckMemory returns an error if the estimated need (training, or
// decoding with weights alone) exceeds the memory this machine has
// available now; the error names the largest field, its value and the
// estimate. Where the system does not report its memory, CheckMemory
// checks nothing.
func (c Config) CheckMemory(training bool, batchTokens int) error {
	avail, ok := sysmem.Available()
	if !ok {
		return nil
	}
	return c.checkMemory(training, batchTokens, avail)
}

func (c Config) checkMemory(training bool, batchTokens int, avail int64) error {
	f := c.Footprint(4, batchTokens)
	need, what := f.Weights, "its weights"
	if training {
		need, what = f.Training, fmt.Sprintf("training on batches of %d tokens", batchTokens)
	}
	if need <= avail {
		return nil
	}
	return errors.Errorf("model too large: %s = %s gives %d parameters; %s needs about %s, and this machine has %s available",
		f.Largest, c.fieldValue(f.Largest), f.Params, what, bytesString(need), bytesString(avail))
}

// fieldValue is the value of the named size field of c, as text.
func (c Config) fieldValue(field string) string {
	v := map[string]int{"vocab": c.Vocab, "encoder_layers": c.EncoderLayers, "decoder_layers": c.DecoderLayers, "max_len": c.MaxLen}[field]
	return fmt.Sprintf("%d (d_model %d, d_ff %d)", v, c.DModel, c.DFF)
}

// bytesString writes n in GB or MB.
func bytesString(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
}

// forwardBytes is the least memory that one forward pass without gradients
// holds at once over rows sequences of srcLen source and tgtLen target
// positions, with elements of elemBytes bytes: the scores and the weights
// of its largest attention (heads × queries × keys a row, both held while
// the softmax runs), or the output layer's log-probabilities (vocab a
// target position), whichever is more. It is a lower bound, computed in
// floating point so that no size overflows it: what it refuses cannot fit.
func (c Config) forwardBytes(elemBytes, rows, srcLen, tgtLen int) float64 {
	r, s, t := float64(rows), float64(srcLen), float64(tgtLen)
	attn := 2 * r * float64(c.Heads) * max(s*s, t*t, t*s)
	out := r * t * float64(c.Vocab)
	return max(attn, out) * float64(elemBytes)
}

// decodeBytes is the least memory that incremental decoding holds at once
// for sources sources of srcLen positions (0 for a decoder-only model),
// beams rows each, whose caches hold steps positions: every decoder
// layer's cached self-attention keys and values and cross-attention keys
// and values of the sources, and a row of log-probabilities a row. Like
// forwardBytes, it is a lower bound that no size overflows.
func (c Config) decodeBytes(elemBytes, sources, beams, srcLen, steps int) float64 {
	kv := float64(c.DModel) // the keys' and values' width
	if c.KVHeads > 0 {
		kv = float64(c.DModel / c.Heads * c.KVHeads)
	}
	perRow := float64(c.DecoderLayers)*2*kv*(float64(steps)+float64(srcLen)) + float64(c.Vocab)
	return float64(sources) * float64(beams) * perRow * float64(elemBytes)
}

// checkAvailable returns an error if need bytes are more than this machine
// has available, naming what needs them; where the system does not report
// its memory, it checks nothing.
func checkAvailable(what string, need float64) error {
	avail, ok := sysmem.Available()
	if !ok {
		return nil
	}
	return fitsIn(what, need, avail)
}

// fitsIn is checkAvailable with avail bytes available.
func fitsIn(what string, need float64, avail int64) error {
	if need <= float64(avail) {
		return nil
	}
	return errors.Errorf("%s: at least %s needed, and this machine has %s available",
		what, bytesString(int64(min(need, math.MaxInt64/2))), bytesString(avail))
}

// checkMemory refuses, before anything is allocated, to decode the batch
// srcs with beams rows a source and caches of steps positions when the
// encoder's pass over the sources or the decoding steps would need more
// memory than this machine has available.
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
	need := max(d.cfg.forwardBytes(eb, len(srcs), srcLen, 0), d.cfg.decodeBytes(eb, len(srcs), beams, srcLen, steps))
	what := fmt.Sprintf("%d rows a source, sources of up to %d tokens and caches of %d positions", beams, longest, steps)
	if err := checkAvailable(what, need); err != nil {
		return errors.Errorf("%v; decode fewer sources at once, with a narrower beam, or shorter ones", err)
	}
	return nil
}
