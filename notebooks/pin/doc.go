// Package pin holds the version pins of the notebooks' import cells.
//
// gophernotes builds every import cell as a Go plugin in a throw-away module
// and runs `go get` without a version for each package the cell names.
// Importing, in the same cell, one of the packages p1, p2, ... by its
// relative path (`_ "./pin/p1"`) adds this module,
// github.com/transformer-go/transformer/notebooks, to the plugin's module
// graph, so its go.mod, which holds the project's go.mod requirements at the
// same versions, decides the version of every module the cell uses.
// setup.sh's module proxy offers only those versions to `go get`.
//
// A package imported once in a kernel session is not imported again, so each
// import cell of a notebook needs a pin that no earlier cell used: p1 in the
// first import cell, p2 in the second, and so on. Add p10, p11, ... by copying
// p9 if a notebook needs more.
package pin
