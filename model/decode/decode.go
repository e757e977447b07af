// Package decode generates with a model.Generator one position at a time
// against a cache of the earlier positions' keys and values: greedy
// decoding, beam search with GNMT's length penalty, and sampling.
package decode

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/sysmem"
	"github.com/transformer-go/transformer/model"
)

// Decoder generates with a model incrementally: an encoder-decoder
// translates its sources, encoded once per batch (an encode program gives
// each decoder layer's cross-attention keys and values); a decoder-only
// model continues its prompts, fed one position per step. Each step program
// decodes one new position per row against the cache, instead of re-running
// the model over the whole prefix. A Decoder of several models (NewEnsemble)
// runs each model's programs at every step and searches the mean of their
// distributions. It keeps the programs it compiles, one set per batch shape
// and model, until Close; it is not safe for concurrent use.
type Decoder struct {
	members []*member
	cfg     model.Config // the first member's, with the least MaxLen of all
}

// member is one model a Decoder decodes with, its parameters and the
// programs compiled for it.
type member struct {
	m      model.Generator
	params *graph.Params
	rt     *graph.Runtime // the decoder's, or for later members a Sibling of it
	progs  *graph.Programs
	// memories are the shapes of each encode program's outputs, and
	// carried the values each step program carries, by its key.
	memories map[string]map[string]tensor.Shape
	carried  map[string][]string
}

// Member is one model of an ensemble (NewEnsemble) and its parameters.
type Member struct {
	Model  model.Model
	Params *graph.Params
}

// New returns a decoder of m, a model.Generator (an encoder-decoder or a
// decoder-only model of package model, or one's own), with the parameters
// params, whose programs run on rt (nil: a CPU runtime of its own,
// graph.CPU). The error says why m cannot decode: it is no Generator, or one
// of its attention sublayers is not a layers.IncrementalAttention.
func New(rt *graph.Runtime, m model.Model, params *graph.Params) (*Decoder, error) {
	return NewEnsemble(rt, Member{Model: m, Params: params})
}

// NewEnsemble returns a decoder that decodes with several models as one,
// such as two runs of one recipe with different seeds: at every step the
// next-token distribution it searches is the mean of theirs,
//
//	p(y_t | y_<t, x) = 1/M · Σ_m p_m(y_t | y_<t, x),
//
// each member reading the same sources and the same prefix. The members
// must be of one kind, with one vocabulary (the same token ids: what the
// caller checks, as cmd/translate does by the tokenizers' fingerprints);
// outputs stay within the least max_len of them. New is NewEnsemble of one.
func NewEnsemble(rt *graph.Runtime, members ...Member) (*Decoder, error) {
	if len(members) == 0 {
		return nil, errors.New("an ensemble needs at least one model")
	}
	d := &Decoder{cfg: members[0].Model.Config()}
	for i, mb := range members {
		if err := canGenerate(mb.Model); err != nil {
			if len(members) == 1 {
				return nil, err
			}
			return nil, errors.Wrapf(err, "model %d of the ensemble", i+1)
		}
		if err := sameKind(i, mb.Model, members[0].Model); err != nil {
			return nil, err
		}
		d.cfg.MaxLen = min(d.cfg.MaxLen, mb.Model.Config().MaxLen)
		mrt := rt
		if i > 0 { // each model's step outputs outlive the others' steps
			mrt = rt.Sibling()
		}
		d.members = append(d.members, &member{m: mb.Model.(model.Generator), params: mb.Params, rt: mrt, progs: graph.NewPrograms(),
			memories: map[string]map[string]tensor.Shape{}, carried: map[string][]string{}})
	}
	return d, nil
}

// sameKind refuses a model m, model i of an ensemble (from 0), that cannot
// decode together with the first: of another kind, layout or vocabulary
// size.
func sameKind(i int, m, first model.Model) error {
	c, f := m.Config(), first.Config()
	switch {
	case c.Kind != f.Kind || m.Layout() != first.Layout():
		return errors.Errorf("model %d of the ensemble is of kind %s, the first of kind %s", i+1, c.Kind, f.Kind)
	case c.Vocab != f.Vocab:
		return errors.Errorf("model %d of the ensemble has a vocabulary of %d tokens, the first %d", i+1, c.Vocab, f.Vocab)
	}
	return nil
}

// canGenerate says why m cannot decode, or nil: it builds a step program's
// graph for one row, allocating nothing.
func canGenerate(m model.Model) error {
	g, ok := m.(model.Generator)
	if !ok {
		return errors.Errorf("incremental decoding needs a model that generates (a model.Generator), have a model of kind %s (%T)", m.Config().Kind, m)
	}
	var memory map[string]tensor.Shape
	srcLen := 0
	if m.Layout().Sources {
		enc, ok := m.(model.SourceEncoder)
		if !ok {
			return errors.Errorf("incremental decoding: %T reads sources but is not a model.SourceEncoder", m)
		}
		var s *graph.Scope
		if s, _, memory = encodeGraph(enc, graph.NewParamShapes(tensor.Float32), 1, 1); s.Err() != nil {
			return errors.Wrapf(s.Err(), "incremental decoding with a model of kind %s", m.Config().Kind)
		}
		srcLen = 1
	}
	s, _, _ := stepGraph(g, graph.NewParamShapes(tensor.Float32), 1, srcLen, 1, memory)
	return errors.Wrapf(s.Err(), "incremental decoding with a model of kind %s", m.Config().Kind)
}

// Generates reports whether m generates, so that New takes it.
func Generates(m model.Model) bool { return canGenerate(m) == nil }

// Close releases the compiled programs.
func (d *Decoder) Close() error {
	var first error
	for i, mb := range d.members {
		if err := mb.progs.Close(); err != nil && first == nil {
			first = err
		}
		if i > 0 { // a Sibling of the decoder's runtime
			if err := mb.rt.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// sources reports whether the decoder's models read sources.
func (d *Decoder) sources() bool { return d.members[0].m.Layout().Sources }

// Decode decodes every source as s says and returns, for each, its
// hypotheses best first: NBest for beam search (fewer if the search
// finished fewer), one otherwise. For an encoder-decoder a source is the
// ids of a sentence, ending with model.EOSID as the model was trained on
// them: Decode adds EOSID to a source that lacks it (so [8 8 6] and
// [8 8 6 EOSID] decode alike); an empty source is an error. For a model
// without sources (decoder-only) a source is a prompt, ids without BOSID
// (possibly none), taken as it is, and each hypothesis is its
// continuation. Sources are sorted by length and decoded in batches of
// s.Batch.
func (d *Decoder) Decode(srcs [][]int, s Search) ([][]Hypothesis, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if d.sources() { // add EOSID where it is missing, to copies
		srcs = slices.Clone(srcs)
		for i, src := range srcs {
			srcs[i] = model.Ended(src)
		}
	}
	if s.MaxLen > d.cfg.MaxLen {
		return nil, errors.Errorf("max length %d is above the model's max_len %d", s.MaxLen, d.cfg.MaxLen)
	}
	order := make([]int, len(srcs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(srcs[a]) - len(srcs[b]) })
	out := make([][]Hypothesis, len(srcs))
	for start := 0; start < len(order); start += s.Batch {
		idx := order[start:min(start+s.Batch, len(order))]
		batch := make([][]int, len(idx))
		for i, j := range idx {
			batch[i] = srcs[j]
		}
		hyps, err := d.decodeBatch(batch, idx, s)
		if err != nil {
			return nil, errors.Wrapf(err, "decoding the batch of %d sources with source %d", len(idx), idx[0]+1)
		}
		for i, j := range idx {
			if len(hyps[i]) == 0 {
				return nil, errors.Errorf("decoding source %d found no hypothesis", j+1)
			}
			out[j] = hyps[i]
		}
	}
	return out, nil
}

// decodeBatch decodes one batch of sources together, srcs[i] being source
// idx[i] of Decode's.
func (d *Decoder) decodeBatch(srcs [][]int, idx []int, s Search) ([][]Hypothesis, error) {
	pl, err := d.plan(srcs, idx, s.MaxLen)
	if err != nil {
		return nil, err
	}
	r := rule{k: 1, nbest: 1, choose: topK}
	switch s.Method {
	case MethodBeam:
		r.k, r.nbest, r.alpha = s.Beam, s.NBest, s.Alpha
	case MethodSample:
		sm := &sampler{s: s}
		r.choose = func(row []float64, _ int) []int { return []int{sm.pick(row)} }
	}
	if err := d.checkMemory(pl, r.k); err != nil {
		return nil, err
	}
	ss, err := d.start(srcs, r.k, pl.steps)
	if err != nil {
		return nil, err
	}
	return search(ss, pl, r)
}

// plan is how a batch of sources is decoded: the tokens the rows of each
// are fed before they generate (model.Generator.Prefix), the most tokens
// each may generate, the cache positions all of them need, and the length
// of the longest source.
type plan struct {
	prefixes       [][]int
	limits         []int
	steps, longest int
}

// plan checks the sources' ids (srcs[i] is source idx[i]) and bounds each
// output by maxLen, or the source's length plus DefaultExtraLen, and so
// that its steps fit the config's MaxLen: source i takes len(prefix)-1
// steps to feed its prefix, then one per output token but the last.
func (d *Decoder) plan(srcs [][]int, idx []int, maxLen int) (plan, error) {
	pl := plan{prefixes: make([][]int, len(srcs)), limits: make([]int, len(srcs))}
	sources, positions := d.sources(), 0
	for i, src := range srcs {
		switch {
		case sources && len(src) == 0:
			return pl, errors.Errorf("source %d is empty (it needs at least EOS)", idx[i]+1)
		case sources && len(src) > d.cfg.MaxLen:
			return pl, errors.Errorf("source %d has %d tokens, more than the model's max_len %d", idx[i]+1, len(src), d.cfg.MaxLen)
		}
		for j, id := range src {
			if id < 0 || id >= d.cfg.Vocab {
				return pl, errors.Errorf("source %d, position %d: id %d is outside the vocabulary of %d", idx[i]+1, j+1, id, d.cfg.Vocab)
			}
		}
		prefix := d.members[0].m.Prefix(src)
		limit := maxLen
		if limit == 0 {
			limit = len(src) + DefaultExtraLen
		}
		limit = min(limit, d.cfg.MaxLen-(len(prefix)-1))
		if limit < 1 {
			return pl, errors.Errorf("source %d: a prompt of %d tokens leaves no room for output under the model's max_len %d", idx[i]+1, len(src), d.cfg.MaxLen)
		}
		pl.prefixes[i], pl.limits[i], pl.longest = prefix, limit, max(pl.longest, len(src))
		positions = max(positions, len(prefix)-1+limit)
	}
	pl.steps = d.roundLen(positions)
	return pl, nil
}

// checkMemory refuses, before anything is allocated, to decode the batch
// planned by pl with beams rows a source when what every model's decoding
// holds on the heap (decodeBytes), with the garbage Go's collector lets
// grow beside it (sysmem.HeapNeed), is more than the decoder's runtime may
// allocate.
func (d *Decoder) checkMemory(pl plan, beams int) error {
	n, srcLen := len(pl.prefixes), 0 // prompts are in the caches
	if d.sources() {
		srcLen = d.roundLen(pl.longest)
	}
	live := 0.0
	for _, mb := range d.members { // every member's caches live together
		live += decodeBytes(mb.m.Config(), int(mb.params.Dtype().Size()), n, beams, srcLen, pl.steps)
	}
	what := fmt.Sprintf("%d rows a source, sources of up to %d tokens and caches of %d positions", beams, pl.longest, pl.steps)
	if err := d.members[0].rt.CheckMemory(what, sysmem.HeapNeed(live)); err != nil {
		return errors.Errorf("%v; decode fewer sources at once, with a narrower beam, or shorter ones", err)
	}
	return nil
}

// MemoryNeed is the memory that decoding sources sources of up to srcLen
// tokens, beams rows each, with outputs of up to maxLen tokens, needs with
// a model of c whose elements take elemBytes bytes, beside its weights:
// what Decode checks before it allocates a batch, with the garbage Go's
// collector lets grow (sysmem.HeapNeed). A caller checks it before it
// loads or makes a model (cmd/bench).
func MemoryNeed(c model.Config, elemBytes, sources, beams, srcLen, maxLen int) float64 {
	positions := maxLen
	if !model.KindLayout(c.Kind).Sources { // the prompt is in the caches
		positions, srcLen = srcLen+maxLen, 0
	}
	return sysmem.HeapNeed(decodeBytes(c, elemBytes, sources, beams, roundLen(srcLen, c.MaxLen), roundLen(positions, c.MaxLen)))
}

// arenaSlack is how much larger than a program's need its runtime's arena
// grows (graph's arena adds an eighth).
const arenaSlack = 1.125

// decodeBytes bounds what decoding holds on the heap at once with a model
// of c whose elements take elemBytes bytes, for sources sources of srcLen
// padded positions (0 for a decoder-only model, whose prompts are in the
// caches), beams rows each, with caches of steps positions:
//
//   - the step program's inputs: each decoder layer's cached keys and
//     values, its own and the sources', and the sources' mask;
//   - its arena: the caches' next values, and a step's attention,
//     feed-forward and output values, with the arena's slack;
//   - the encoder's arena, which the step's replaces (both are held while
//     it grows);
//   - the host's side: a row's log-probabilities in float64, the beams'
//     tokens and their finished hypotheses, and the 2·beams² candidates of
//     a step of a source (3 GB for 8,000 beams).
//
// TestDecodeMemoryBoundsItsPeak measures it against decoding's peaks. It is
// computed in floating point, so that no size overflows it.
func decodeBytes(c model.Config, elemBytes, sources, beams, srcLen, steps int) float64 {
	kv := float64(c.DModel) // the keys' and values' width
	if c.KVHeads > 0 {
		kv = float64(c.DModel / c.Heads * c.KVHeads)
	}
	layers, heads, d, dff := float64(c.DecoderLayers), float64(c.Heads), float64(c.DModel), float64(c.DFF)
	s, ls, vocab := float64(steps), float64(srcLen), float64(c.Vocab)
	caches := 2 * layers * kv * s
	inputs := caches + 2*layers*kv*ls + ls
	step := caches + layers*(4*heads*(s+ls)+16*d+3*dff) + 4*vocab
	encode := ls * (2*layers*kv + 16*d + 3*dff + 3*heads*ls) // one layer's values at a time
	host := 8 * (vocab + 3*s)
	k, eb := float64(beams), float64(elemBytes)
	rows := float64(sources) * k
	return rows*(inputs+arenaSlack*step)*eb + float64(sources)*arenaSlack*encode*eb + rows*host +
		2*k*k*float64(unsafe.Sizeof(candidate{}))
}
