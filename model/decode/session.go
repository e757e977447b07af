package decode

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/layers/ops"
	"github.com/transformer-go/transformer/model"
)

// session is the decoding of one batch of sources: each model's step
// program of its shape, the step reached and the buffers reused from step
// to step.
type session struct {
	parts []part // one per model of the decoder
	rows  int
	steps int // cache positions: the most steps the session can take
	t     int
	lp    []float64   // rows of the last step's log-probabilities (logProbs)
	each  [][]float64 // an ensemble's: each model's rows of them
}

// part is one model's share of a session: its step program, the values
// that program carries to the next step, and its dtype.
type part struct {
	step    *graph.Program
	carried []string
	dt      tensor.Dtype
}

// start readies a session of beams rows per source whose caches hold steps
// positions: for models that read sources, it encodes srcs with each and
// hands each step program its encoding.
func (d *Decoder) start(srcs [][]int, beams, steps int) (*session, error) {
	ss := &session{rows: len(srcs) * beams, steps: steps}
	var ids []int
	srcLen := 0
	if d.sources() {
		ids, srcLen = d.srcIDs(srcs)
	}
	for _, mb := range d.members {
		p, err := mb.start(ids, len(srcs), srcLen, beams, steps)
		if err != nil {
			return nil, err
		}
		ss.parts = append(ss.parts, p)
	}
	return ss, nil
}

// start readies the member's part of a session of n sources (the padded
// ids [n, srcLen], none for srcLen 0), beams rows each, whose caches hold
// steps positions.
func (mb *member) start(ids []int, n, srcLen, beams, steps int) (part, error) {
	rows := n * beams
	var enc *graph.Program
	var memory map[string]tensor.Shape
	if srcLen > 0 {
		var err error
		if enc, memory, err = mb.encode(ids, n, srcLen); err != nil {
			return part{}, err
		}
	}
	key := fmt.Sprintf("step/%dx%dx%d", rows, srcLen, steps)
	step, err := mb.progs.Get(key, func() (*graph.Program, error) {
		s, outputs, carried := stepGraph(mb.m, mb.params, rows, srcLen, steps, memory)
		mb.carried[key] = carried
		p, err := graph.Compile(mb.rt, s, nil, outputs)
		return p, errors.Wrapf(err, "step program for %d rows and %d positions", rows, steps)
	})
	if err != nil {
		return part{}, err
	}
	p := part{step: step, carried: mb.carried[key], dt: mb.params.Dtype()}
	if enc == nil {
		return p, nil
	}
	return p, p.setMemory(enc, memory, ids, srcLen, beams, rows)
}

// Inputs of the step program besides the values carried and the memories.
const (
	inStepIDs  = "step_ids"  // [rows, 1] the previous token of each row
	inSlot     = "slot"      // [1] t, the cache slot the step writes
	inSlotMask = "slot_mask" // [1, 1, 1, maxLen] layers.StepMask(t)
	inRowSrc   = "row_src"   // [rows, srcLen] each row's source, whose padding its cross-attention hides
)

// stepGraph builds, in a scope of params, g's step program for rows rows,
// caches of maxLen positions and sources of srcLen positions (0: none)
// whose encoding has the shapes memory. Its outputs are the next-token
// log-probabilities (model.LogProbs, [rows, 1, vocab]) and the next values
// of those it carries, named as their inputs (carried).
func stepGraph(g model.Generator, params *graph.Params, rows, srcLen, maxLen int, memory map[string]tensor.Shape) (s *graph.Scope, outputs map[string]*G.Node, carried []string) {
	s = graph.NewScope(params)
	ids := s.Input(inStepIDs, tensor.Int, rows, 1)
	at := layers.Slot{Index: s.Input(inSlot, tensor.Int, 1), Mask: s.Input(inSlotMask, s.Dtype(), 1, 1, 1, maxLen)}
	var srcMask *G.Node
	if srcLen > 0 {
		srcMask = ops.PaddingMask(s, s.Input(inRowSrc, tensor.Int, rows, srcLen), model.PadID)
	}
	st := model.NewStep(s, ids, at, maxLen, srcMask, memory)
	logits := g.Step(st)
	outputs, carried = st.Carries()
	if s.Err() == nil {
		outputs[model.LogProbs] = s.LogSoftmax(logits)
	}
	return s, outputs, carried
}

// encodeGraph builds, in a scope of params, the graph of enc's encode
// program for n sources of length srcLen: input src (its padding masked in
// the graph), outputs the values of model.SourceEncoder.Encode, and their
// shapes.
func encodeGraph(enc model.SourceEncoder, params *graph.Params, n, srcLen int) (*graph.Scope, map[string]*G.Node, map[string]tensor.Shape) {
	s := graph.NewScope(params)
	src := s.Input(model.InputSrc, tensor.Int, n, srcLen)
	outputs := enc.Encode(s, src, ops.PaddingMask(s, src, model.PadID))
	shapes := map[string]tensor.Shape{}
	for name, v := range outputs {
		if v != nil {
			shapes[name] = v.Shape()
		}
	}
	return s, outputs, shapes
}

// Graph is a graph that a Decoder compiles, built for an exporter
// (package graph/onnx): its scope and its outputs by name.
type Graph struct {
	Scope   *graph.Scope
	Outputs map[string]*G.Node
}

// Graphs builds, in scopes of params, the graphs with which a Decoder
// decodes with m rows rows of sources of srcLen positions, its caches
// holding maxLen positions, and the names of the values that step carries:
//
//   - encode, for a model that reads sources (else the zero Graph): input
//     model.InputSrc, int [rows, srcLen]; outputs the values its
//     model.SourceEncoder.Encode names (every decoder layer's
//     cross-attention keys and values, [rows, srcLen, kvHeads·dk]);
//   - step, one decoding step: inputs step_ids, int [rows, 1] (each row's
//     previous token), slot, int [1] (the step's position t), slot_mask
//     [1, 1, 1, maxLen] (layers.StepMask(t)), row_src, int [rows, srcLen]
//     (the sources, whose padding it masks) and encode's outputs, for a
//     model that reads sources, and the values it carries (carried, such
//     as "decoder.layers.0.self_attn.cache.k", [rows, maxLen,
//     kvHeads·dk]); outputs model.LogProbs [rows, 1, vocab], the next
//     token's log-probabilities, and each carried value's next value,
//     under its input's name.
//
// srcLen is ignored for a model without sources. The error says why m
// cannot decode, or which size is out of range.
func Graphs(m model.Model, params *graph.Params, rows, srcLen, maxLen int) (encode, step Graph, carried []string, err error) {
	if err := canGenerate(m); err != nil {
		return encode, step, nil, err
	}
	cfg := m.Config()
	sources := m.Layout().Sources
	switch {
	case rows < 1:
		return encode, step, nil, errors.Errorf("decoding graphs of %d rows: want at least 1", rows)
	case maxLen < 1 || maxLen > cfg.MaxLen:
		return encode, step, nil, errors.Errorf("decoding graphs of caches of %d positions: want 1 to the model's max_len %d", maxLen, cfg.MaxLen)
	case sources && (srcLen < 1 || srcLen > cfg.MaxLen):
		return encode, step, nil, errors.Errorf("decoding graphs of sources of %d positions: want 1 to the model's max_len %d", srcLen, cfg.MaxLen)
	}
	var memory map[string]tensor.Shape
	if !sources {
		srcLen = 0
	} else {
		encode.Scope, encode.Outputs, memory = encodeGraph(m.(model.SourceEncoder), params, rows, srcLen)
	}
	step.Scope, step.Outputs, carried = stepGraph(m.(model.Generator), params, rows, srcLen, maxLen, memory)
	return encode, step, carried, nil
}

// srcIDs pads the sources into ids [len(srcs), srcLen], srcLen the longest
// rounded up to a multiple of shapeStep, so that batches of nearby lengths
// share programs (within the config's MaxLen).
func (d *Decoder) srcIDs(srcs [][]int) (ids []int, srcLen int) {
	for _, s := range srcs {
		srcLen = max(srcLen, len(s))
	}
	srcLen = d.roundLen(srcLen)
	ids = make([]int, len(srcs)*srcLen)
	for i, s := range srcs {
		copy(ids[i*srcLen:], s)
	}
	return ids, srcLen
}

// encode runs the member's encode program, compiled the first time, on
// the padded sources ids [n, srcLen], and returns it with the shapes of its
// outputs.
func (mb *member) encode(ids []int, n, srcLen int) (*graph.Program, map[string]tensor.Shape, error) {
	key := fmt.Sprintf("encode/%dx%d", n, srcLen)
	enc, err := mb.progs.Get(key, func() (*graph.Program, error) {
		s, outputs, shapes := encodeGraph(mb.m.(model.SourceEncoder), mb.params, n, srcLen)
		mb.memories[key] = shapes
		p, err := graph.Compile(mb.rt, s, nil, outputs)
		return p, errors.Wrapf(err, "encode program for %d sources of length %d", n, srcLen)
	})
	if err != nil {
		return nil, nil, err
	}
	if err := enc.Set(model.InputSrc, ids); err != nil {
		return nil, nil, err
	}
	return enc, mb.memories[key], errors.Wrap(enc.Run(), "encoding the sources")
}

// setMemory copies the encode program's outputs (named in memory) and the
// sources ids [n, srcLen], whose padding the step program masks, into the
// step program of rows rows, each source's row repeated beams times; the
// outputs stay on a device.
func (p part) setMemory(enc *graph.Program, memory map[string]tensor.Shape, ids []int, srcLen, beams, rows int) error {
	repeat := make([]int, rows)
	for r := range repeat {
		repeat[r] = r / beams
	}
	for name := range memory {
		if err := graph.CopyRows(p.step, name, enc, name, repeat); err != nil {
			return err
		}
	}
	rowIDs := make([]int, 0, rows*srcLen)
	for _, i := range repeat {
		rowIDs = append(rowIDs, ids[i*srcLen:(i+1)*srcLen]...)
	}
	return p.step.Set(inRowSrc, rowIDs)
}

// advance runs step t of every model: row r continues row parents[r] of
// the step before (nil: row r itself), whose carried values it reads, with
// the token tokens[r]. logProbs reads the next-token log-probabilities it
// gives.
func (ss *session) advance(tokens, parents []int) error {
	if ss.t >= ss.steps {
		return errors.Errorf("decoding step %d of a session of %d steps", ss.t+1, ss.steps)
	}
	for _, p := range ss.parts {
		if err := p.advance(ss.t, ss.steps, tokens, parents); err != nil {
			return err
		}
	}
	ss.t++
	return nil
}

// advance runs step t of the part's program, whose caches hold steps
// positions (see session.advance).
func (p part) advance(t, steps int, tokens, parents []int) error {
	if t > 0 {
		for _, name := range p.carried { // the caches' updates, kept on a device
			if err := graph.CopyRows(p.step, name, p.step, name, parents); err != nil {
				return err
			}
		}
	}
	for _, in := range [...]struct {
		name string
		v    any
	}{{inStepIDs, tokens}, {inSlot, []int{t}}, {inSlotMask, layers.StepMask(p.dt, t, steps).Data()}} {
		if err := p.step.Set(in.name, in.v); err != nil {
			return err
		}
	}
	return errors.Wrapf(p.step.Run(), "decoding step %d", t+1)
}

// logProbs is rows r0 to r0+n-1 of the last step's next-token
// log-probabilities, [n·vocab], valid until the next call: an ensemble's
// are those of the mean of its models' distributions. Only the rows a
// search reads are converted and checked, each while it is in cache.
func (ss *session) logProbs(r0, n int) ([]float64, error) {
	var err error
	if len(ss.parts) == 1 {
		ss.lp, err = ss.parts[0].logProbs(ss.lp, r0, n, ss.t)
		return ss.lp, err
	}
	ss.each = slices.Grow(ss.each[:0], len(ss.parts))[:len(ss.parts)]
	for i, p := range ss.parts {
		if ss.each[i], err = p.logProbs(ss.each[i], r0, n, ss.t); err != nil {
			return nil, errors.Wrapf(err, "model %d of the ensemble", i+1)
		}
	}
	ss.lp = meanProbs(ss.lp, ss.each)
	return ss.lp, nil
}

// logProbs writes rows r0 to r0+n-1 of the part's last step's
// log-probabilities into dst (see session.logProbs) after step t.
func (p part) logProbs(dst []float64, r0, n, t int) ([]float64, error) {
	out := p.step.Output(model.LogProbs)
	at, end := r0*out.Shape()[2], (r0+n)*out.Shape()[2] // out: [rows, 1, vocab]
	switch d := out.Data().(type) {
	case []float32:
		return logProbsInto(dst, d[at:end], n, t)
	case []float64:
		return logProbsInto(dst, d[at:end], n, t)
	}
	return dst, errors.Errorf("decoding step %d: log-probabilities of type %T", t, out.Data())
}

// meanProbs writes into dst (grown as needed) the log of the mean of the
// distributions whose log-probabilities are each[m], element by element:
// log(1/M · Σ_m exp(l_m)) = l* + log Σ_m exp(l_m - l*) - log M with l* the
// largest l_m, which keeps exp from underflowing; -Inf where every model
// gives -Inf.
func meanProbs(dst []float64, each [][]float64) []float64 {
	n := len(each[0])
	dst = slices.Grow(dst[:0], n)[:n]
	logM := math.Log(float64(len(each)))
	for i := range dst {
		top := math.Inf(-1)
		for _, l := range each {
			top = max(top, l[i])
		}
		if math.IsInf(top, -1) {
			dst[i] = top
			continue
		}
		sum := 0.0
		for _, l := range each {
			sum += math.Exp(l[i] - top)
		}
		dst[i] = top + math.Log(sum) - logM
	}
	return dst
}

// logProbsInto writes the log-probabilities src [rows·vocab] into dst
// (grown as needed) as float64s, in the same pass refusing ones that no
// distribution has: NaN, +Inf, or a row without a finite value. Broken
// weights give them, and a search fed them would end with no hypothesis.
// Rows are split among the cores (graph.ParallelFor); the error is the
// first bad row's, as if they went in order.
func logProbsInto[T float32 | float64](dst []float64, src []T, rows, step int) ([]float64, error) {
	dst = slices.Grow(dst[:0], len(src))[:len(src)]
	vocab := len(src) / rows
	var firstBad atomic.Int64
	firstBad.Store(int64(rows))
	graph.ParallelFor(rows, vocab, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			out := dst[r*vocab : (r+1)*vocab]
			if !widenFinite(out, src[r*vocab:(r+1)*vocab]) && checkRow(out, step) != nil {
				lower(&firstBad, int64(r))
				return // the part's later rows cannot be the first bad one
			}
		}
	})
	if r := int(firstBad.Load()); r < rows {
		return dst, checkRow(dst[r*vocab:(r+1)*vocab], step)
	}
	return dst, nil
}

// lower sets a to v if v is less.
func lower(a *atomic.Int64, v int64) {
	for old := a.Load(); v < old && !a.CompareAndSwap(old, v); old = a.Load() {
	}
}

// widenFinite writes in as float64s into out and reports whether every
// value is finite: x - x is 0 for a finite x and NaN for NaN and ±Inf, so
// the sums stay 0 for a row of finite values (four of them, so that the
// additions do not wait on each other).
func widenFinite[T float32 | float64](out []float64, in []T) bool {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(in); i += 4 {
		f0, f1, f2, f3 := float64(in[i]), float64(in[i+1]), float64(in[i+2]), float64(in[i+3])
		out[i], out[i+1], out[i+2], out[i+3] = f0, f1, f2, f3
		s0, s1, s2, s3 = s0+(f0-f0), s1+(f1-f1), s2+(f2-f2), s3+(f3-f3)
	}
	for ; i < len(in); i++ {
		f := float64(in[i])
		out[i] = f
		s0 += f - f
	}
	return (s0+s1)+(s2+s3) == 0
}

// checkRow refuses a row of log-probabilities that holds NaN or +Inf, or
// no finite value.
func checkRow(row []float64, step int) error {
	finite := false
	for _, f := range row {
		if math.IsNaN(f) || math.IsInf(f, 1) {
			return errors.Errorf("decoding step %d: the model's log-probabilities hold %v (are its weights finite?)", step, f)
		}
		finite = finite || !math.IsInf(f, -1)
	}
	if !finite {
		return errors.Errorf("decoding step %d: the model gives every token probability 0", step)
	}
	return nil
}

// shapeStep is the granularity of the padded lengths of decoding programs.
const shapeStep = 8

// roundLen rounds n up to a multiple of shapeStep, within the config's MaxLen.
func (d *Decoder) roundLen(n int) int { return roundLen(n, d.cfg.MaxLen) }

// roundLen rounds n up to a multiple of shapeStep, within maxLen.
func roundLen(n, maxLen int) int { return min((n+shapeStep-1)/shapeStep*shapeStep, maxLen) }
