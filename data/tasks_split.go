package data

import (
	"encoding/binary"
	"hash/fnv"

	"github.com/pkg/errors"
)

// heldOutBits is the number of leading hash bits that must be zero for a
// source to be held out: one source in 2^heldOutBits = 16 is.
const heldOutBits = 4

// IsHeldOut reports whether src belongs to the held-out sources of every
// Task: those whose 64-bit FNV-1a hash, taken over the ids as
// little-endian 64-bit integers, has its four leading bits zero. (The
// leading bits depend on every bit of the input; the trailing ones would
// only see the trailing bits of each byte.)
func IsHeldOut(src []int) bool {
	h := fnv.New64a()
	var buf [8]byte
	for _, id := range src {
		binary.LittleEndian.PutUint64(buf[:], uint64(id))
		h.Write(buf[:])
	}
	return h.Sum64()>>(64-heldOutBits) == 0
}

// checkSplit makes sure Sample and HeldOut terminate: when the task has at
// most enumerateLimit sources it counts the held-out ones, which must be
// neither none nor all. Larger tasks have both, with overwhelming
// probability for any hash that behaves like a random function.
func (t *Task) checkSplit() error {
	total := t.numSources()
	if total > enumerateLimit {
		return nil
	}
	held := 0
	for l := t.cfg.MinLen; l <= t.cfg.MaxLen; l++ {
		src := make([]int, l)
		for i := range src {
			src[i] = NumReserved
		}
		for ok := true; ok; ok = nextSource(src, t.cfg.Symbols) {
			if IsHeldOut(src) {
				held++
			}
		}
	}
	if held == 0 || held == total {
		return errors.Errorf("%d of its %d possible sources are held out; allow more sources", held, total)
	}
	return nil
}

// numSources returns the number of possible sources, or enumerateLimit+1
// if there are more.
func (t *Task) numSources() int {
	total, perLen := 0, 1
	for l := 1; l <= t.cfg.MaxLen; l++ {
		perLen *= t.cfg.Symbols
		if perLen > enumerateLimit {
			return enumerateLimit + 1
		}
		if l >= t.cfg.MinLen {
			total += perLen
		}
		if total > enumerateLimit {
			return enumerateLimit + 1
		}
	}
	return total
}

// nextSource advances src to the next sequence of its length in
// lexicographic order of ids and reports false after the last one.
func nextSource(src []int, symbols int) bool {
	for i := len(src) - 1; i >= 0; i-- {
		if src[i]++; src[i] < NumReserved+symbols {
			return true
		}
		src[i] = NumReserved
	}
	return false
}
