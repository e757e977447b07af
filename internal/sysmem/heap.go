package sysmem

import "runtime/metrics"

// Reserve is the address space that a process's growth maps beyond its
// heap, which ulimit -v counts but no estimate of a heap does: Go reserves
// its heap ahead in large chunks, and each new thread maps a stack and,
// through cgo, a malloc arena of its own (256 MB). Decoding that grew the
// heap by 0.1 to 1.3 GB grew the address space by up to 230 MB more
// (model/decode's TestDecodeMemoryBoundsItsPeak). A build with the
// openblas tag reserves what OpenBLAS maps too (blasReserve).
const Reserve = 256<<20 + blasReserve

// HeapNeed is the memory a process needs to hold live bytes on Go's heap:
// the collector lets the heap grow by GOGC percent of what is live (100 by
// default: twice as much) before it collects, so garbage made meanwhile
// (decoding's, step by step) takes as much again.
func HeapNeed(live float64) float64 {
	return live * (1 + float64(gcPercent())/100)
}

// gcPercent is the collector's GOGC percent: the GOGC variable's, or
// debug.SetGCPercent's (100 by default, and taken as 100 where GOGC=off,
// which no estimate bounds).
func gcPercent() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[0].Value.Uint64() > 1<<20 {
		return 100
	}
	return s[0].Value.Uint64()
}
