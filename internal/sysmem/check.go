package sysmem

import (
	"math"

	"github.com/pkg/errors"
)

// Check returns an error naming what when need bytes are more than l: a
// Limit is a graph.MemoryLimit of a fixed size.
func (l Limit) Check(what string, need float64) error {
	if need <= float64(l.Bytes) {
		return nil
	}
	return errors.Errorf("%s: at least %s needed, and this process may allocate %s",
		what, Bytes(int64(min(need, math.MaxInt64/2))), l)
}

// Process is the memory this process may still allocate, read at each
// Check (Lowest): the graph.MemoryLimit of a runtime. Where the system
// reports no limit, it checks nothing.
type Process struct{}

// Check is Limit.Check of the lowest limit now.
func (Process) Check(what string, need float64) error {
	l, ok := Lowest()
	if !ok {
		return nil
	}
	return l.Check(what, need)
}
