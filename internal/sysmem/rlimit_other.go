//go:build !linux

package sysmem

// addressSpace is where the process's address space is limited: only
// Linux is asked.
func addressSpace() (Limit, bool) { return Limit{}, false }
