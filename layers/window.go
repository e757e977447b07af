package layers

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// AttentionSlidingWindow names sliding-window attention in a Registry: the
// paper's multi-head (or, with kv_heads, grouped-query) attention whose
// self-attention sees the keys at most window positions behind each query
// (SlidingWindow), beside positions added to the embeddings. Its option
// window (OptionWindow, 256) is SlidingWindow.Window.
const (
	AttentionSlidingWindow = "sliding-window"
	OptionWindow           = "window"
)

// windowOption declares the option window: a whole number of positions.
var windowOption = Option{Name: OptionWindow, Default: 256, Valid: func(v float64) bool { return v >= 1 && v == math.Trunc(v) }, Want: "a whole number ≥ 1"}

// SlidingWindow is local attention (Longformer's, Mistral's) as a
// PositionBias: a query at position i sees the keys at positions j with
// i - j ≤ Window, and those farther behind are masked,
//
//	score(i, j) = q_i·k_jᵀ / sqrt(dk)   if i - j ≤ Window,   -Inf otherwise
//
// (keys ahead are the causal mask's to hide). A stack of N such layers
// reaches N·Window positions back, and an incremental decoder's step
// attends to the cache's last Window + 1 positions alone.
type SlidingWindow struct{ Window int }

// Bias is 0 for the keys within the window and -Inf for those behind it,
// the same for every head (BiasTable).
func (w SlidingWindow) Bias(s *graph.Scope, heads, lenQ, lenK int, at *Slot, _ float64) *G.Node {
	return BiasTable(s, fmt.Sprintf("window%d", w.Window), heads, lenQ, lenK, at, func(_, i, j int) float64 {
		if i-j > w.Window {
			return math.Inf(-1)
		}
		return 0
	})
}

// PlacesPositions is false: the window masks keys, it does not place them.
func (SlidingWindow) PlacesPositions() bool { return false }
