package model

import (
	"fmt"
	"strings"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
)

// Limits on the sizes of a Config: far beyond any model this package trains
// on a machine, and small enough that the products of sizes in Footprint's
// estimates, made before anything is allocated, cannot overflow an int64.
const (
	MinVocab  = 5       // the 4 reserved tokens and one more
	MaxVocab  = 1 << 24 // 16.7M tokens
	MaxDModel = 1 << 16
	MaxDFF    = 1 << 18
	MaxLayers = 1 << 10 // per stack
	MaxMaxLen = 1 << 20 // positions
)

// Footprint is the memory a configuration needs, estimated from its sizes
// and the parameters its model declares.
type Footprint struct {
	// Params is the number of scalar parameters of the model.
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
	// BatchTokens is the token budget of the training batch estimated.
	BatchTokens int
}

// Footprint estimates the memory of the model of c, with the built-in
// variants, with elements of elemBytes bytes (4 for float32) and training
// batches of batchTokens target tokens. Its parameters are the ones the
// model declares (ParamShapes), counted without allocating them; variants
// the built-in registry lacks are counted as the paper's. c must be valid.
func (c Config) Footprint(elemBytes, batchTokens int) Footprint {
	m, err := newTransformer(c, nil, false)
	if err != nil { // a kind or variants of one's own, counted as the paper's
		c.Kind, c.Attention, c.FFN, c.Norm, c.Positions, c.Options = KindEncoderDecoder, "", "", layers.NormLayer, layers.PositionsSinusoid, nil
		m, err = newTransformer(c, nil, false)
	}
	shapes := graph.NewParamShapes(tensor.Float32)
	if err == nil {
		shapes, _ = ParamShapes(m)
	}
	return c.FootprintOf(shapes, elemBytes, batchTokens)
}

// FootprintOf is Footprint of the model of c whose parameters have the
// given shapes (ParamShapes): exact for variants of one's own.
func (c Config) FootprintOf(shapes *graph.Params, elemBytes, batchTokens int) Footprint {
	f := Footprint{BatchTokens: batchTokens}
	byField := map[string]int64{}
	for _, name := range shapes.Names() {
		n := int64(shapes.Shape(name).TotalSize())
		f.Params += n
		byField[paramField(name)] += n
	}
	for _, field := range []string{"vocab", "encoder_layers", "decoder_layers", "max_len"} {
		if f.Largest == "" || byField[field] > byField[f.Largest] {
			f.Largest = field
		}
	}
	d, dff := int64(c.DModel), int64(c.DFF)
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

// paramField is the config field that sizes the parameter name: the
// embedding's vocab, the positions' max_len, a stack's layers.
func paramField(name string) string {
	switch {
	case strings.HasPrefix(name, "embed."):
		return "vocab"
	case strings.Contains(name, ".pos."):
		return "max_len"
	case strings.HasPrefix(name, "encoder."):
		return "encoder_layers"
	}
	return "decoder_layers"
}

// CheckMemory returns an error if the need of the footprint f of c
// (training on batches of f.BatchTokens tokens, or decoding with weights
// alone) is more than rt may allocate (nil: a CPU runtime; see
// graph.MemoryLimit). The error names the largest field, its value, the
// estimate and the limit that applied.
func (c Config) CheckMemory(rt *graph.Runtime, f Footprint, training bool) error {
	need, what := f.Weights, "its weights"
	if training {
		need, what = f.Training, fmt.Sprintf("training on batches of %d tokens", f.BatchTokens)
	}
	v := map[string]int{"vocab": c.Vocab, "encoder_layers": c.EncoderLayers, "decoder_layers": c.DecoderLayers, "max_len": c.MaxLen}[f.Largest]
	return rt.CheckMemory(fmt.Sprintf("model too large: %s = %d (d_model %d, d_ff %d) gives %d parameters; %s", f.Largest, v, c.DModel, c.DFF, f.Params, what), float64(need))
}

// ForwardBytes is the least memory that one forward pass without gradients
// holds at once over rows sequences of srcLen source and tgtLen target
// positions, with elements of elemBytes bytes: the scores and the weights
// of its largest attention (heads × queries × keys a row, both held while
// the softmax runs), or the output layer's log-probabilities (vocab a
// target position), whichever is more. It is a lower bound, computed in
// floating point so that no size overflows it: what it refuses cannot fit.
func (c Config) ForwardBytes(elemBytes, rows, srcLen, tgtLen int) float64 {
	r, s, t := float64(rows), float64(srcLen), float64(tgtLen)
	attn := 2 * r * float64(c.Heads) * max(s*s, t*t, t*s)
	out := r * t * float64(c.Vocab)
	return max(attn, out) * float64(elemBytes)
}
