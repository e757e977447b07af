// Package p5 is a version pin for one notebook import cell. See the package pin (pin/doc.go).
package p5

// Pin names this pin package.
const Pin = "p5"
