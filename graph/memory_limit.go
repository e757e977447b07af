package graph

// MemoryLimit refuses work that needs more memory than a runtime may
// allocate. A runtime's is the memory the operating system gives this
// process, read at each check (the lowest of the machine's available
// memory, its control groups' limits and ulimit -v); a test sets one of
// its own with Runtime.LimitMemory.
type MemoryLimit interface {
	// Check returns an error naming what when need bytes are more than
	// may be allocated.
	Check(what string, need float64) error
}

// LimitMemory makes l the runtime's memory limit (nil: none).
func (rt *Runtime) LimitMemory(l MemoryLimit) { rt.limit = l }

// CheckMemory returns an error naming what when need bytes are more than
// the runtime may allocate (a nil runtime is CPU's): what code that
// estimates its memory asks before any work.
func (rt *Runtime) CheckMemory(what string, need float64) error {
	if rt == nil {
		rt = CPU()
	}
	if rt.limit == nil {
		return nil
	}
	return rt.limit.Check(what, need)
}
