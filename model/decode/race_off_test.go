//go:build !race

package decode

// raceDetector says the race detector is on (see race_on_test.go).
const raceDetector = false
