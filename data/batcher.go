package data

import (
	"math/rand/v2"

	"github.com/pkg/errors"
)

// BatchConfig configures a Batcher.
type BatchConfig struct {
	// MaxTokens is the token budget of a batch: Rows*SrcLen and
	// Rows*TgtLen are at most MaxTokens.
	MaxTokens int
	// Buckets are the padded lengths batches use, strictly increasing.
	// Nil means StepBuckets(DefaultBucketStep, longest), longest being the
	// length the longest example needs.
	Buckets []int
	// Seed seeds the shuffling of every epoch.
	Seed uint64
	// Join makes batches for a decoder-only model: each example is one
	// sequence, its source, EOSID, then its target (the target alone if
	// the source is empty). A row's decoder input is BOSID then that
	// sequence, its decoder target the sequence then EOSID, with the
	// source's positions (and its EOSID) PadID so that the loss counts the
	// target alone; the batch has no source matrix (SrcLen 0). A model
	// trained so continues the prompt "source EOSID" with the target.
	// Buckets are then lengths of joined sequences (JoinedLen).
	Join bool
}

// BatchState is the position of a Batcher in its batch stream. It
// marshals to JSON; restoring it with Batcher.Restore on a Batcher built
// from the same examples and config resumes the same stream.
type BatchState struct {
	Seed     uint64 `json:"seed"`
	Epoch    int    `json:"epoch"`
	Index    int    `json:"index"`    // next batch within the epoch
	Examples int    `json:"examples"` // number of examples, as a check
}

// Batcher cuts examples into batches of bounded token count and few shapes.
//
// Each example goes to the shortest bucket length that fits its longer
// side plus one (for EOSID or BOSID); the source and the target of a batch
// are both padded to that length. Every batch of a bucket of length L has
// exactly MaxTokens/L rows (so L may not exceed MaxTokens), a short batch
// being filled up with padding rows (see Batch), so there is one shape per
// bucket: at most len(Buckets) shapes, with the default buckets at most
// ceil(longest/8). Examples longer than the largest bucket are an error,
// never truncated.
//
// Every epoch shuffles the examples with a generator seeded from Seed and
// the epoch number, fills each bucket in that order, cuts it into batches
// (at most one short batch per bucket) and shuffles the batches. The
// stream therefore depends only on the examples, the config and the
// position, which State and Restore save and set.
//
// The Batcher keeps examples without copying them; they must not change.
type Batcher struct {
	examples []Example
	buckets  []int
	rows     []int // bucket -> rows per batch
	bucketOf []int // example -> bucket
	state    BatchState
	plan     []plannedBatch // batches of state.Epoch, nil until needed
	join     bool
}

// plannedBatch is a batch before its matrices are built.
type plannedBatch struct {
	bucket  int
	members []int // indices of examples
}

// NewBatcher returns a Batcher over examples positioned at the start of
// epoch 0.
func NewBatcher(examples []Example, cfg BatchConfig) (*Batcher, error) {
	if len(examples) == 0 {
		return nil, errors.New("no examples to batch")
	}
	if cfg.MaxTokens < 1 {
		return nil, errors.Errorf("token budget %d is not positive", cfg.MaxTokens)
	}
	b := &Batcher{
		examples: examples,
		buckets:  cfg.Buckets,
		state:    BatchState{Seed: cfg.Seed, Examples: len(examples)},
		join:     cfg.Join,
	}
	if b.buckets == nil {
		longest := 0
		for _, e := range examples {
			longest = max(longest, b.length(e))
		}
		b.buckets = StepBuckets(DefaultBucketStep, longest)
	}
	if err := checkBuckets(b.buckets, cfg.MaxTokens); err != nil {
		return nil, err
	}
	for _, l := range b.buckets {
		b.rows = append(b.rows, cfg.MaxTokens/l)
	}
	var err error
	b.bucketOf, err = b.assign(examples)
	return b, err
}

// assign returns the bucket of every example, checking the examples.
func (b *Batcher) assign(examples []Example) ([]int, error) {
	of := make([]int, len(examples))
	for i, e := range examples {
		if err := checkIDs(e.Src); err != nil {
			return nil, errors.Wrapf(err, "example %d: source", i)
		}
		if err := checkIDs(e.Tgt); err != nil {
			return nil, errors.Wrapf(err, "example %d: target", i)
		}
		k, err := bucketOf(b.buckets, b.length(e))
		if err != nil {
			return nil, errors.Wrapf(err, "example %d", i)
		}
		of[i] = k
	}
	return of, nil
}

// length is the length e needs in a batch: paddedLen, or JoinedLen if the
// batches are joined.
func (b *Batcher) length(e Example) int {
	if b.join {
		return JoinedLen(e)
	}
	return paddedLen(e)
}

// Examples returns the examples b batches, in their order, not copied:
// they must not change.
func (b *Batcher) Examples() []Example { return b.examples }

// Shapes returns the shape of each bucket in increasing length: every
// shape that Next and EvalBatches can produce.
func (b *Batcher) Shapes() []Shape {
	shapes := make([]Shape, len(b.buckets))
	for k, l := range b.buckets {
		shapes[k] = Shape{Rows: b.rows[k], SrcLen: b.srcLen(l), TgtLen: l}
	}
	return shapes
}

// srcLen is the source length of a bucket of length l: l, or 0 if the
// batches are joined.
func (b *Batcher) srcLen(l int) int {
	if b.join {
		return 0
	}
	return l
}

// EpochLen returns the number of batches in an epoch.
func (b *Batcher) EpochLen() int {
	counts := make([]int, len(b.buckets))
	for _, k := range b.bucketOf {
		counts[k]++
	}
	n := 0
	for k, c := range counts {
		n += (c + b.rows[k] - 1) / b.rows[k]
	}
	return n
}

// Next returns the next batch, moving on to the next epoch after the last
// batch of an epoch.
func (b *Batcher) Next() Batch {
	if b.plan == nil {
		b.plan = b.planEpoch(b.state.Epoch)
	}
	p := b.plan[b.state.Index]
	if b.state.Index++; b.state.Index == len(b.plan) {
		b.state.Epoch++
		b.state.Index = 0
		b.plan = nil
	}
	return b.build(b.examples, p)
}

// State returns the position of the next batch.
func (b *Batcher) State() BatchState { return b.state }

// Restore moves to the position s, taken from State of a Batcher built from
// the same examples and config (the seed is taken from s).
func (b *Batcher) Restore(s BatchState) error {
	if s.Examples != len(b.examples) {
		return errors.Errorf("batch state is for %d examples, not %d", s.Examples, len(b.examples))
	}
	if s.Epoch < 0 || s.Index < 0 || s.Index >= b.EpochLen() {
		return errors.Errorf("batch state epoch %d, index %d is out of range (%d batches per epoch)",
			s.Epoch, s.Index, b.EpochLen())
	}
	b.state = s
	b.plan = nil
	return nil
}

// planEpoch returns the batches of an epoch in the order Next returns them.
func (b *Batcher) planEpoch(epoch int) []plannedBatch {
	rng := rand.New(rand.NewPCG(b.state.Seed, uint64(epoch)))
	members := make([][]int, len(b.buckets))
	for _, i := range rng.Perm(len(b.examples)) {
		members[b.bucketOf[i]] = append(members[b.bucketOf[i]], i)
	}
	plan := b.cut(members)
	rng.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	return plan
}

// cut splits the members of each bucket into batches of the bucket's rows.
func (b *Batcher) cut(members [][]int) []plannedBatch {
	var plan []plannedBatch
	for k, m := range members {
		for start := 0; start < len(m); start += b.rows[k] {
			end := min(start+b.rows[k], len(m))
			plan = append(plan, plannedBatch{bucket: k, members: m[start:end]})
		}
	}
	return plan
}

// build makes the batch p of examples.
func (b *Batcher) build(examples []Example, p plannedBatch) Batch {
	l := b.buckets[p.bucket]
	batch := newBatch(b.rows[p.bucket], b.srcLen(l), l)
	for r, i := range p.members {
		if b.join {
			batch.setJoined(r, examples[i])
			continue
		}
		batch.setSource(r, examples[i].Src)
		batch.setTarget(r, examples[i].Tgt)
	}
	batch.Examples = len(p.members)
	batch.Index = append([]int(nil), p.members...)
	return batch
}

// EvalBatches returns batches of examples, such as a validation set, for
// evaluation: one pass, unshuffled, with the buckets and rows of b so that
// only shapes from Shapes occur. Batches come in increasing bucket length,
// examples within a bucket in input order; Batch.Index maps rows back to
// examples.
func (b *Batcher) EvalBatches(examples []Example) ([]Batch, error) {
	of, err := b.assign(examples)
	if err != nil {
		return nil, err
	}
	members := make([][]int, len(b.buckets))
	for i, k := range of {
		members[k] = append(members[k], i)
	}
	plan := b.cut(members)
	batches := make([]Batch, len(plan))
	for i, p := range plan {
		batches[i] = b.build(examples, p)
	}
	return batches, nil
}
