//go:build race

package decode

// raceDetector says the race detector is on: it maps shadow memory for the
// heap, which no estimate of decoding's memory counts.
const raceDetector = true
