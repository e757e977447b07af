// Package p8 is a version pin for one notebook import cell. See the package pin (pin/doc.go).
package p8

// Pin names this pin package.
const Pin = "p8"
