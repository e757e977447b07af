// Package par runs the parts of one computation on the calling goroutine and
// on a process-wide pool of helper goroutines, so that the kernels of a graph
// (matrix products, row and elementwise loops) keep every core busy.
//
// The caller always takes part and takes back any part no helper has claimed
// yet, so a computation never waits for a helper that is slow to start and
// never takes much longer than on the caller alone. With GOMAXPROCS 1 there
// are no helpers and everything runs on the caller.
//
// Helpers live as long as the program. After a part, a helper polls for the
// next one for a short while (spinTime) before it blocks, and a caller whose
// own parts are done polls for the helpers' to end before it blocks: a
// graph's kernels come one after another, microseconds apart, while waking a
// blocked goroutine on an idle virtual CPU takes tens of microseconds. A
// poll is a non-blocking channel receive or an atomic load, with the clock
// read once every pollsPerCheck polls.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinTime is how long an idle helper polls for work before it blocks, and
// pollsPerCheck how many polls go between two readings of the clock.
const (
	spinTime      = 200 * time.Microsecond
	pollsPerCheck = 256
)

// Do calls f(0), …, f(parts-1), each once, spread over the calling goroutine
// and up to GOMAXPROCS-1 helpers, and returns when every call has returned.
// The calls may run in any order and at the same time, so f must write only
// what part i owns.
func Do(parts int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), parts)
	if workers <= 1 {
		for i := range parts {
			f(i)
		}
		return
	}
	j := &job{f: f, parts: parts}
	j.left.Store(int64(parts))
	offered := j.offer(workers - 1)
	j.work(false)
	withdraw(offered)
	j.g.wait()
}

// A job is one call of Do: its parts, how many nobody has taken, and
// the group of the tasks offered for it. It is allocated once per call,
// with room for the task of one helper.
type job struct {
	f     func(i int)
	parts int
	// left counts the parts not yet claimed; front and back those
	// numbered from either end.
	left, front, back atomic.Int64
	g                 group
	one               [1]task
}

// work calls f on the parts nobody has taken, until there are none: the
// caller's from the first part on, a helper's from the last one back. With
// two workers (two cores), each then keeps to its own end of every
// computation: the rows of an op's output that one computed are, for the
// next op that splits its rows alike, the rows it reads, still in its own
// L2 rather than the other core's. Timed in pairs in one process against
// taking parts in order, both from the front (three sets of 31 pairs, bf16,
// small V1000), a forward pass was 2–6% faster and a training step 2–6.5%.
// Claims are counted (left) before they are numbered, so the two ends never
// take the same part.
func (j *job) work(fromBack bool) {
	for j.left.Add(-1) >= 0 {
		if fromBack {
			j.f(j.parts - int(j.back.Add(1)))
		} else {
			j.f(int(j.front.Add(1) - 1))
		}
	}
}

// A group counts the tasks of one Do that are not settled yet.
type group struct {
	wg      sync.WaitGroup
	pending atomic.Int64
}

// add counts one more task.
func (g *group) add() {
	g.wg.Add(1)
	g.pending.Add(1)
}

// done settles a task: the WaitGroup first, so that a caller who sees no
// task pending finds the WaitGroup at zero too.
func (g *group) done() {
	g.wg.Done()
	g.pending.Add(-1)
}

// wait returns once every task is settled. It polls for spinTime before it
// blocks: the helpers' last parts usually end within microseconds of the
// caller's, and a blocked caller takes tens of microseconds to wake.
func (g *group) wait() {
	deadline := time.Now().Add(spinTime)
	for polls := 1; g.pending.Load() > 0; polls++ {
		if polls%pollsPerCheck == 0 && time.Now().After(deadline) {
			break
		}
	}
	g.wg.Wait()
}

// For calls f on consecutive ranges [lo, hi) that cover [0, n), in parallel
// (see Do) when n is at least 2·grain: grain is the least length worth
// handing to another goroutine. Ranges are never shorter than grain but for
// the last one, and there are up to four per goroutine, so that a goroutine
// that starts late takes fewer.
func For(n, grain int, f func(lo, hi int)) {
	grain = max(grain, 1)
	parts := min(n/grain, 4*runtime.GOMAXPROCS(0))
	if parts <= 1 {
		if n > 0 {
			f(0, n)
		}
		return
	}
	Do(parts, func(i int) { f(n*i/parts, n*(i+1)/parts) })
}

// Workers is the most goroutines Do spreads its parts over: GOMAXPROCS.
func Workers() int { return runtime.GOMAXPROCS(0) }

// A task is a job offered to one helper; whoever claims it first, the
// helper or the caller taking it back, settles it in the job's group.
type task struct {
	j       *job
	claimed atomic.Bool
}

var helpers struct {
	mu      sync.Mutex
	started int
	tasks   chan *task
}

// offer offers j to up to n helpers, starting helpers as needed; j's group
// counts the tasks until they are settled. The caller must call withdraw
// on the result once its own share of the work is done.
func (j *job) offer(n int) []task {
	startHelpers(n)
	ts := j.one[:]
	if n > 1 {
		ts = make([]task, n)
	}
	for i := range ts {
		ts[i].j = j
		j.g.add()
		select {
		case helpers.tasks <- &ts[i]:
		default: // every helper is busy or has tasks waiting: skip this one
			ts[i].claimed.Store(true)
			j.g.done()
		}
	}
	return ts
}

// withdraw settles the tasks no helper has claimed yet, so that the caller
// waits only for those that are running.
func withdraw(ts []task) {
	for i := range ts {
		if ts[i].claimed.CompareAndSwap(false, true) {
			ts[i].j.g.done()
		}
	}
}

// startHelpers makes sure that at least n helpers exist.
func startHelpers(n int) {
	helpers.mu.Lock()
	defer helpers.mu.Unlock()
	if helpers.tasks == nil {
		helpers.tasks = make(chan *task, 64)
	}
	for ; helpers.started < n; helpers.started++ {
		go helper(helpers.tasks)
	}
}

// helper runs the tasks it can claim, forever.
func helper(tasks chan *task) {
	for {
		t := receive(tasks)
		if t.claimed.CompareAndSwap(false, true) {
			t.j.work(true)
			t.j.g.done()
		}
	}
}

// receive receives a task, polling for spinTime before it blocks.
func receive(tasks chan *task) *task {
	deadline := time.Now().Add(spinTime)
	for polls := 1; ; polls++ {
		select {
		case t := <-tasks:
			return t
		default:
		}
		if polls%pollsPerCheck == 0 && time.Now().After(deadline) {
			return <-tasks
		}
	}
}
