package model_test

import (
	"math"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/internal/modeltest"
	"github.com/transformer-go/transformer/model"
)

// TestAttentionWeights reads the weights of cross-, decoder self- and
// encoder self-attention: one row of weights summing to 1 for each head
// and query, over the keys; an unknown sublayer is an error.
func TestAttentionWeights(t *testing.T) {
	cfg := modeltest.Configs()["post-norm, sinusoidal"]
	m, params := modeltest.Model(t, cfg, 3, 1)
	src, out := []int{5, 6, 7, model.EOSID}, []int{8, 9}
	tests := []struct {
		name       string
		lenQ, lenK int
	}{
		{"decoder.layers.1.cross_attn", 3, 4},
		{"decoder.layers.0.self_attn", 3, 3},
		{"encoder.layers.0.self_attn", 4, 4},
	}
	for _, tc := range tests {
		w, err := model.Attention(nil, m, params, src, out, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if len(w) != cfg.Heads || len(w[0]) != tc.lenQ || len(w[0][0]) != tc.lenK {
			t.Fatalf("%s: weights %d×%d×%d, want %d×%d×%d", tc.name, len(w), len(w[0]), len(w[0][0]), cfg.Heads, tc.lenQ, tc.lenK)
		}
		for h := range w {
			for i, row := range w[h] {
				var sum float64
				for _, v := range row {
					sum += v
				}
				if math.Abs(sum-1) > 1e-9 {
					t.Fatalf("%s: head %d, query %d sums to %g", tc.name, h, i, sum)
				}
			}
		}
	}
	if _, err := model.Attention(nil, m, params, src, out, "decoder.layers.9.cross_attn"); err == nil || !strings.Contains(err.Error(), "layers.9") {
		t.Fatalf("unknown attention: %v", err)
	}
}
