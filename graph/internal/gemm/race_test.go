//go:build race

package gemm

// raceEnabled reports whether the tests run under the race detector, whose
// sync.Pool drops pooled items at random: allocation counts mean nothing there.
const raceEnabled = true
