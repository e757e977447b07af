package data

import (
	"github.com/pkg/errors"
)

// Example is an encoded training or evaluation example: source and target
// ids without BOSID or EOSID, which batches add.
type Example struct {
	Src, Tgt []int
}

// Batch holds padded id matrices for one training or decoding step, each
// stored row-major. Row r holds a real example for r < Examples; the other
// rows only pad the batch to its fixed number of rows and are "empty
// examples": their source is EOSID then padding, their decoder input BOSID
// then padding, and their decoder target padding only, so they add nothing
// to a loss that ignores PadID targets while no attention row is entirely
// masked.
type Batch struct {
	Rows, SrcLen, TgtLen int // shape; Rows includes padding rows

	Src    []int // [Rows*SrcLen] source ids then EOSID, padded with PadID
	TgtIn  []int // [Rows*TgtLen] BOSID then target ids, padded with PadID
	TgtOut []int // [Rows*TgtLen] target ids then EOSID, padded with PadID
	// (Joined batches, BatchConfig.Join, have no Src, SrcLen 0, and hold
	// source EOSID target in TgtIn and TgtOut.)

	Examples  int   // real rows, the first Examples rows
	Index     []int // [Examples] position of each real row's example in the input
	SrcTokens int   // non-pad ids in the real rows of Src
	TgtTokens int   // non-pad ids in TgtOut, i.e. the target tokens of the loss
}

// Shape is the shape of a Batch.
type Shape struct {
	Rows, SrcLen, TgtLen int
}

// Shape returns the shape of b.
func (b Batch) Shape() Shape { return Shape{b.Rows, b.SrcLen, b.TgtLen} }

// NewSourceBatch returns a batch of the given shape holding srcs (for
// decoding), without target matrices (TgtLen 0). Rows beyond len(srcs) are
// padding rows. Each source needs one position for EOSID.
func NewSourceBatch(srcs [][]int, rows, srcLen int) (Batch, error) {
	if len(srcs) > rows || srcLen < 1 {
		return Batch{}, errors.Errorf("%d sources do not fit %d rows of length %d", len(srcs), rows, srcLen)
	}
	b := newBatch(rows, srcLen, 0)
	for r, src := range srcs {
		if err := checkIDs(src); err != nil {
			return Batch{}, errors.Wrapf(err, "source %d", r)
		}
		if len(src) >= srcLen {
			return Batch{}, errors.Errorf("source %d: %d ids and EOS do not fit length %d", r, len(src), srcLen)
		}
		b.setSource(r, src)
		b.Index = append(b.Index, r)
	}
	b.Examples = len(srcs)
	return b, nil
}

// newBatch returns a batch of the given shape made of padding rows.
func newBatch(rows, srcLen, tgtLen int) Batch {
	b := Batch{
		Rows: rows, SrcLen: srcLen, TgtLen: tgtLen,
		Src: make([]int, rows*srcLen),
	}
	if tgtLen > 0 {
		b.TgtIn = make([]int, rows*tgtLen)
		b.TgtOut = make([]int, rows*tgtLen)
	}
	for r := range rows {
		if srcLen > 0 {
			b.Src[r*srcLen] = EOSID
		}
		if tgtLen > 0 {
			b.TgtIn[r*tgtLen] = BOSID
		}
	}
	return b
}

// setSource writes src and EOSID into row r.
func (b *Batch) setSource(r int, src []int) {
	row := b.Src[r*b.SrcLen : (r+1)*b.SrcLen]
	copy(row, src)
	row[len(src)] = EOSID
	b.SrcTokens += len(src) + 1
}

// setTarget writes the decoder input and target of tgt into row r.
func (b *Batch) setTarget(r int, tgt []int) {
	in := b.TgtIn[r*b.TgtLen : (r+1)*b.TgtLen]
	out := b.TgtOut[r*b.TgtLen : (r+1)*b.TgtLen]
	copy(in[1:], tgt)
	copy(out, tgt)
	out[len(tgt)] = EOSID
	b.TgtTokens += len(tgt) + 1
}

// setJoined writes e into row r of a joined batch (BatchConfig.Join):
// decoder input BOSID then joined(e), target joined(e) then EOSID with the
// source's part PadID.
func (b *Batch) setJoined(r int, e Example) {
	seq := joined(e)
	in := b.TgtIn[r*b.TgtLen : (r+1)*b.TgtLen]
	out := b.TgtOut[r*b.TgtLen : (r+1)*b.TgtLen]
	copy(in[1:], seq)
	copy(out, seq)
	out[len(seq)] = EOSID
	prompt := len(seq) - len(e.Tgt) // the source and its EOSID, if any
	for j := range prompt {
		out[j] = PadID
	}
	b.TgtTokens += len(e.Tgt) + 1
}

// checkIDs reports an id that cannot appear in an example: a negative id,
// PadID, BOSID or EOSID.
func checkIDs(ids []int) error {
	for i, id := range ids {
		if id < 0 || id == PadID || id == BOSID || id == EOSID {
			return errors.Errorf("position %d: id %d is negative or reserved for padding, BOS or EOS", i, id)
		}
	}
	return nil
}
