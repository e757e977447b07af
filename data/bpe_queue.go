package data

// queueEntry is a pair with its count at the time it was queued.
type queueEntry struct {
	count       int
	pair        symPair
	left, right string
}

// pairQueue is a max-heap of pairs for container/heap: highest count
// first, ties broken by the byte-wise order of left, then of right.
type pairQueue []queueEntry

func (q pairQueue) Len() int { return len(q) }

func (q pairQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if a.count != b.count {
		return a.count > b.count
	}
	if a.left != b.left {
		return a.left < b.left
	}
	return a.right < b.right
}

func (q pairQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

// Push appends x, a queueEntry.
func (q *pairQueue) Push(x any) { *q = append(*q, x.(queueEntry)) }

// Pop removes and returns the last entry.
func (q *pairQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
