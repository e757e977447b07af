package layers

import (
	"math"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// PaddingMask is the additive attention mask that hides padding keys: for ids
// [batch, len] it is [batch, 1, 1, len], 0 where ids[b, j] ≠ pad and -Inf where
// it is pad. It broadcasts over heads and queries.
func PaddingMask(dt tensor.Dtype, ids []int, batch, length, pad int) *tensor.Dense {
	m := make([]float64, batch*length)
	for i, id := range ids[:batch*length] {
		if id == pad {
			m[i] = math.Inf(-1)
		}
	}
	return graph.FromFloat64s(dt, m, batch, 1, 1, length)
}

// CausalMask is the decoder's self-attention mask: position i may attend to
// positions j ≤ i that are not padding. For ids [batch, len] it is
// [batch, 1, len, len], -Inf where j > i or ids[b, j] = pad.
func CausalMask(dt tensor.Dtype, ids []int, batch, length, pad int) *tensor.Dense {
	m := make([]float64, batch*length*length)
	for b := range batch {
		for i := range length {
			row := m[(b*length+i)*length : (b*length+i+1)*length]
			for j := range row {
				if j > i || ids[b*length+j] == pad {
					row[j] = math.Inf(-1)
				}
			}
		}
	}
	return graph.FromFloat64s(dt, m, batch, 1, length, length)
}

// StepMask is the self-attention mask of step t of an incremental decoder
// whose caches hold maxLen positions: [1, 1, 1, maxLen], 0 for the slots j ≤ t
// (written by this step and the earlier ones) and -Inf for j > t.
func StepMask(dt tensor.Dtype, t, maxLen int) *tensor.Dense {
	m := make([]float64, maxLen)
	for j := t + 1; j < maxLen; j++ {
		m[j] = math.Inf(-1)
	}
	return graph.FromFloat64s(dt, m, 1, 1, 1, maxLen)
}
