package data

import (
	"slices"
)

// Shard returns rank's share of b when size ranks split it (data-parallel
// training): every rank gets at most ⌈Examples/size⌉ of b's examples,
// assigned so that the ranks' target tokens are as even as a greedy
// longest-first assignment makes them, in their order in b. Each share has
// ⌈Rows/size⌉ rows and b's lengths, so shares of batches of one shape share
// a shape too; a rank may get no examples (all padding). Every rank computes
// the same assignment, so the shares are disjoint and cover b.
func (b Batch) Shard(rank, size int) Batch {
	if size <= 1 {
		return b
	}
	rows := shardRows(b, size)[rank]
	s := Batch{Rows: (b.Rows + size - 1) / size, SrcLen: b.SrcLen, TgtLen: b.TgtLen, Examples: len(rows)}
	s.Src = make([]int, s.Rows*s.SrcLen)
	s.TgtIn = make([]int, s.Rows*s.TgtLen)
	s.TgtOut = make([]int, s.Rows*s.TgtLen)
	for i, r := range rows {
		copy(s.Src[i*s.SrcLen:(i+1)*s.SrcLen], b.Src[r*b.SrcLen:])
		copy(s.TgtIn[i*s.TgtLen:(i+1)*s.TgtLen], b.TgtIn[r*b.TgtLen:])
		copy(s.TgtOut[i*s.TgtLen:(i+1)*s.TgtLen], b.TgtOut[r*b.TgtLen:])
		if r < len(b.Index) {
			s.Index = append(s.Index, b.Index[r])
		}
	}
	s.SrcTokens, s.TgtTokens = countNonPad(s.Src), countNonPad(s.TgtOut)
	return s
}

// shardRows assigns b's example rows to size ranks: longest target first,
// each to the rank with the fewest target tokens that still has room.
func shardRows(b Batch, size int) [][]int {
	tokens := make([]int, b.Examples)
	order := make([]int, b.Examples)
	for r := range order {
		order[r] = r
		tokens[r] = countNonPad(b.TgtOut[r*b.TgtLen : (r+1)*b.TgtLen])
	}
	slices.SortStableFunc(order, func(x, y int) int { return tokens[y] - tokens[x] })
	room := (b.Examples + size - 1) / size
	shares, load := make([][]int, size), make([]int, size)
	for _, r := range order {
		best := -1
		for k := range size {
			if len(shares[k]) < room && (best < 0 || load[k] < load[best]) {
				best = k
			}
		}
		shares[best] = append(shares[best], r)
		load[best] += tokens[r]
	}
	for _, s := range shares {
		slices.Sort(s)
	}
	return shares
}

// countNonPad is the number of ids that are not PadID.
func countNonPad(ids []int) int {
	n := 0
	for _, id := range ids {
		if id != PadID {
			n++
		}
	}
	return n
}
