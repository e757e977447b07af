//go:build !race

package gemm

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
