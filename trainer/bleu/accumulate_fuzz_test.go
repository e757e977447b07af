package bleu

import (
	"math"
	"testing"
)

// FuzzAccumulator scores arbitrary pairs with each smoothing: an error
// (invalid UTF-8, an empty reference) or a finite BLEU from 0 to 100 and a
// finite chrF, never a panic.
func FuzzAccumulator(f *testing.F) {
	f.Add("a cat sat on the mat .", "the cat sat on the mat .", "exp", 0.0)
	f.Add("", "x", "floor", 1.0)
	f.Add("a\xffb", "c", "add-k", 1e6)
	f.Add("Ü-Bahn, 3.5 % (etc.)", "U-Bahn , 3.5 %", "none", 0.0)
	f.Fuzz(func(t *testing.T, hyp, ref, smooth string, value float64) {
		opt := Options{Smooth: smooth, SmoothValue: value}
		a, err := NewAccumulator(opt, &ChrFOptions{})
		if err != nil {
			return
		}
		if err := a.Add(hyp, ref); err != nil {
			return
		}
		s, err := a.BLEU()
		if err != nil {
			return
		}
		if !(s.Score >= 0 && s.Score <= 100+1e-9) {
			t.Fatalf("BLEU %v of %q against %q with %+v", s, hyp, ref, opt)
		}
		if c := a.ChrF(); math.IsNaN(c.Score) || math.IsInf(c.Score, 0) || c.Score < 0 || c.Score > 100+1e-9 {
			t.Fatalf("chrF %v of %q against %q", c, hyp, ref)
		}
	})
}
