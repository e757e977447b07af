package inference

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/onnx"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/decode"
)

// The ONNX files ExportONNX writes, by what the model does.
const (
	// ONNXEncoder is the encoder of a model that reads sources and
	// generates: source ids to every decoder layer's cross-attention keys
	// and values (decode.Graphs' encode).
	ONNXEncoder = "encoder.onnx"
	// ONNXStep is one decoding step against the key/value caches, which
	// are its inputs and (their next values) its outputs, with the
	// next-token log-probabilities (decode.Graphs' step).
	ONNXStep = "step.onnx"
	// ONNXScorer is the teacher-forced scorer (model.ScoreGraph): each
	// target's log-probability and whether it is the most probable token.
	ONNXScorer = "scorer.onnx"
	// ONNXTagger is an encoder-only model's log-probabilities at every
	// source position (model.EvalGraph's LogProbs): what model.Tag reads.
	ONNXTagger = "tagger.onnx"
)

// NextSuffix ends the name of a value the step graph carries among its
// outputs, the value's input name before it: ONNX's values have one name
// each.
const NextSuffix = ".next"

// ONNXShape is the fixed shape of the graphs ExportONNX writes.
type ONNXShape struct {
	// Batch is the rows of every graph.
	Batch int
	// SrcLen is the source positions of the encoder, the step graph's
	// row_src, the scorer of a model that reads sources and the tagger;
	// shorter sources are padded with model.PadID.
	SrcLen int
	// TgtLen is the target positions of the scorer (an encoder-only
	// model's targets are at its SrcLen source positions).
	TgtLen int
	// Steps is the positions of the step graph's caches: the most steps
	// a row decodes, its prompt's included.
	Steps int
}

// For is sh as the graphs of m read it: the sizes they do not read set to
// 0 (source positions for a decoder-only model, target positions and
// steps for an encoder-only model, whose targets are at its source
// positions).
func (sh ONNXShape) For(m model.Model) ONNXShape {
	l := m.Layout()
	if !l.Sources {
		sh.SrcLen = 0
	}
	if l.Aligned {
		sh.TgtLen, sh.Steps = 0, 0
	}
	return sh
}

// ExportONNX returns the ONNX models (package graph/onnx) of m with the
// parameters params, of the shape sh, by file name: for a model that
// generates, the step graph (ONNXStep) and, if it reads sources, the
// encoder (ONNXEncoder); for an encoder-only model (Layout.Aligned), the
// tagger (ONNXTagger); and for every model the scorer (ONNXScorer). A
// model of a kind that neither generates nor tags, a size out of range, or
// an op of m without an ONNX form (a variant of one's own) is an error
// naming it, before any model is made. Each model's metadata records the
// model's config, the shape (sh.For(m)) and the reserved ids.
func ExportONNX(m model.Model, params *graph.Params, sh ONNXShape) (map[string][]byte, error) {
	sh = sh.For(m)
	graphs, err := onnxGraphs(m, params, sh)
	if err != nil {
		return nil, err
	}
	meta, err := onnxMeta(m.Config(), sh)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, name := range slices.Sorted(maps.Keys(graphs)) {
		g := graphs[name]
		b, err := onnx.Export(g.Scope, g.Outputs, onnx.Options{Name: strings.TrimSuffix(name, ".onnx"), Doc: onnxDoc(name, g.Outputs), Meta: meta})
		if err != nil {
			return nil, errors.Wrapf(err, "%s of a model of kind %s", name, m.Config().Kind)
		}
		files[name] = b
	}
	return files, nil
}

// ONNXFiles names the files ExportONNX writes for m, in order: none for
// a model of a kind that neither generates nor tags.
func ONNXFiles(m model.Model) []string {
	switch l := m.Layout(); {
	case l.Aligned:
		return []string{ONNXScorer, ONNXTagger}
	case !decode.Generates(m):
		return nil
	case l.Sources:
		return []string{ONNXEncoder, ONNXScorer, ONNXStep}
	}
	return []string{ONNXScorer, ONNXStep}
}

// onnxGraphs builds the graphs ExportONNX writes, by file name, checking
// m's kind and sh first.
func onnxGraphs(m model.Model, params *graph.Params, sh ONNXShape) (map[string]decode.Graph, error) {
	cfg, l := m.Config(), m.Layout()
	if len(ONNXFiles(m)) == 0 {
		return nil, errors.Errorf("a model of kind %s neither generates nor tags: only its scorer would export", cfg.Kind)
	}
	if err := checkONNXShape(sh, cfg.MaxLen, l.Sources, !l.Aligned, !l.Aligned); err != nil {
		return nil, err
	}
	score := model.Shape{Batch: sh.Batch, SrcLen: sh.SrcLen, TgtLen: sh.TgtLen}
	if l.Aligned {
		score.TgtLen = sh.SrcLen
	}
	s, outputs := model.ScoreGraph(m, params, score)
	graphs := map[string]decode.Graph{ONNXScorer: {Scope: s, Outputs: outputs}}
	if l.Aligned {
		s, outputs := model.EvalGraph(m, params, score)
		graphs[ONNXTagger] = decode.Graph{Scope: s, Outputs: map[string]*G.Node{model.LogProbs: outputs[model.LogProbs]}}
		return graphs, nil
	}
	enc, step, carried, err := decode.Graphs(m, params, sh.Batch, sh.SrcLen, sh.Steps)
	if err != nil {
		return nil, err
	}
	for _, name := range carried {
		step.Outputs[name+NextSuffix] = step.Outputs[name]
		delete(step.Outputs, name)
	}
	graphs[ONNXStep] = step
	if l.Sources {
		graphs[ONNXEncoder] = enc
	}
	return graphs, nil
}

// checkONNXShape refuses a shape with no rows, or with no positions or
// more than maxLen where the graphs have them: sources, targets, steps.
func checkONNXShape(sh ONNXShape, maxLen int, sources, targets, steps bool) error {
	if sh.Batch < 1 {
		return errors.Errorf("ONNX graphs of %d rows: want 1 or more", sh.Batch)
	}
	for _, c := range []struct {
		what   string
		n      int
		needed bool
	}{{"source positions", sh.SrcLen, sources}, {"target positions", sh.TgtLen, targets}, {"decoding steps", sh.Steps, steps}} {
		if c.needed && (c.n < 1 || c.n > maxLen) {
			return errors.Errorf("ONNX graphs of %d %s: want 1 to the model's max_len %d", c.n, c.what, maxLen)
		}
	}
	return nil
}

// onnxMeta is the metadata of every model ExportONNX writes.
func onnxMeta(cfg model.Config, sh ONNXShape) (map[string]string, error) {
	c, err := json.Marshal(cfg)
	if err != nil {
		return nil, errors.Wrap(err, "recording the model's config")
	}
	return map[string]string{
		"config": string(c),
		"shape":  fmt.Sprintf(`{"batch": %d, "src_len": %d, "tgt_len": %d, "steps": %d}`, sh.Batch, sh.SrcLen, sh.TgtLen, sh.Steps),
		"pad_id": fmt.Sprint(model.PadID), "bos_id": fmt.Sprint(model.BOSID), "eos_id": fmt.Sprint(model.EOSID),
	}, nil
}

// onnxDoc describes the model of the file name, whose outputs are
// outputs.
func onnxDoc(name string, outputs map[string]*G.Node) string {
	what := map[string]string{
		ONNXEncoder: "The encoder: source ids (padded with pad_id, ending with eos_id) to every decoder layer's cross-attention keys and values.",
		ONNXStep:    "One decoding step: each row's previous token at position slot (slot_mask: 0 up to slot, -Inf after), against the key/value caches, to the next token's log-probabilities and the caches' next values (NAME" + NextSuffix + ").",
		ONNXScorer:  "The teacher-forced scorer: for every target (row-major), its log-probability and 1 if it is the most probable token, both 0 for pad_id.",
		ONNXTagger:  "The tagger: log-probabilities of every token at every source position.",
	}[name]
	return what + " Outputs: " + strings.Join(slices.Sorted(maps.Keys(outputs)), ", ") + "."
}
