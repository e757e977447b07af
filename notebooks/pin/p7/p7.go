// Package p7 is a version pin for one notebook import cell. See the package pin (pin/doc.go).
package p7

// Pin names this pin package.
const Pin = "p7"
