// Package p3 is a version pin for one notebook import cell. See the package pin (pin/doc.go).
package p3

// Pin names this pin package.
const Pin = "p3"
