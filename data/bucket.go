package data

import (
	"slices"

	"github.com/pkg/errors"
)

// DefaultBucketStep is the spacing of the default bucket lengths.
const DefaultBucketStep = 8

// StepBuckets returns the bucket lengths step, 2*step, ... up to the first
// multiple of step that is at least maxLen, or nil if step < 1. They give
// at most ceil(maxLen/step) batch shapes and waste fewer than step
// positions per sequence.
func StepBuckets(step, maxLen int) []int {
	if step < 1 {
		return nil
	}
	var b []int
	for l := step; len(b) == 0 || b[len(b)-1] < maxLen; l += step {
		b = append(b, l)
	}
	return b
}

// checkBuckets reports whether buckets are usable lengths for batches of
// at most maxTokens tokens: positive, strictly increasing, at most maxTokens.
func checkBuckets(buckets []int, maxTokens int) error {
	if len(buckets) == 0 {
		return errors.New("no buckets")
	}
	for i, l := range buckets {
		if l < 1 || (i > 0 && l <= buckets[i-1]) {
			return errors.Errorf("bucket lengths %v are not positive and strictly increasing", buckets)
		}
	}
	if last := buckets[len(buckets)-1]; last > maxTokens {
		return errors.Errorf("bucket length %d exceeds the budget of %d tokens", last, maxTokens)
	}
	return nil
}

// paddedLen returns the length e needs in a batch: its longer side plus
// one for EOSID (source) or BOSID/EOSID (target).
func paddedLen(e Example) int { return max(len(e.Src), len(e.Tgt)) + 1 }

// JoinedLen returns the length e needs in a joined batch
// (BatchConfig.Join): its joined sequence plus one for BOSID/EOSID.
func JoinedLen(e Example) int { return len(joined(e)) + 1 }

// joined is e as one sequence: the source, EOSID, the target; the target
// alone if the source is empty.
func joined(e Example) []int {
	if len(e.Src) == 0 {
		return e.Tgt
	}
	return append(append(append(make([]int, 0, len(e.Src)+1+len(e.Tgt)), e.Src...), EOSID), e.Tgt...)
}

// bucketOf returns the index of the shortest bucket that fits an example
// needing length n.
func bucketOf(buckets []int, n int) (int, error) {
	i, _ := slices.BinarySearch(buckets, n)
	if i == len(buckets) {
		return 0, errors.Errorf("needs length %d, more than the largest bucket %d", n, buckets[len(buckets)-1])
	}
	return i, nil
}
