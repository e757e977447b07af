package graph

import (
	"strings"
	"testing"

	"github.com/transformer-go/transformer/internal/sysmem"
)

// TestRuntimeChecksItsMemoryLimit: a runtime refuses a need above its
// limit, naming what needs it and the limit; the default runtime's limit
// is the operating system's, and a runtime without a limit refuses
// nothing.
func TestRuntimeChecksItsMemoryLimit(t *testing.T) {
	rt := CPU()
	rt.LimitMemory(sysmem.Limit{Bytes: 1 << 30, Source: "a test"})
	if err := rt.CheckMemory("a batch", 1<<29); err != nil {
		t.Errorf("half the limit: %v", err)
	}
	if err := rt.CheckMemory("a batch", 1<<31); err == nil || !strings.Contains(err.Error(), "a batch: at least 2.0 GB needed") || !strings.Contains(err.Error(), "a test") {
		t.Errorf("twice the limit: %v", err)
	}
	var none *Runtime
	if _, known := sysmem.Lowest(); known {
		if err := none.CheckMemory("a batch", 1e30); err == nil {
			t.Error("a nil runtime allows 10^30 bytes")
		}
	}
	rt.LimitMemory(nil)
	if err := rt.CheckMemory("a batch", 1e30); err != nil {
		t.Errorf("no limit: %v", err)
	}
}
