package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Helper goroutines run parts of large products beside the calling
// goroutine. They live as long as the program and, after each task, poll
// for the next one for spinTime before blocking: waking a blocked goroutine
// on an idle CPU can take a good fraction of a millisecond (much longer
// than the medium-sized products of a training step take on one core), and
// products tend to come in quick succession. OpenBLAS's threads do the same.
const spinTime = time.Millisecond

// A task is a function offered to the helpers; whoever claims it first, a
// helper or the caller taking it back, settles it by calling wg.Done.
type task struct {
	run     func()
	claimed atomic.Bool
	wg      *sync.WaitGroup
}

var helpers struct {
	mu      sync.Mutex
	started int
	tasks   chan *task
}

// offer hands run to up to n helpers, starting helpers as needed; wg counts
// the tasks until they are settled. The caller must call withdraw on the
// result once its own share of the work is done.
func offer(run func(), n int, wg *sync.WaitGroup) []task {
	startHelpers(n)
	ts := make([]task, n)
	for i := range ts {
		ts[i] = task{run: run, wg: wg}
		wg.Add(1)
		select {
		case helpers.tasks <- &ts[i]:
		default: // every helper is busy or has tasks waiting: skip this one
			ts[i].claimed.Store(true)
			wg.Done()
		}
	}
	return ts
}

// withdraw settles the tasks no helper has claimed yet, so that the caller
// waits only for those that are running.
func withdraw(ts []task) {
	for i := range ts {
		if ts[i].claimed.CompareAndSwap(false, true) {
			ts[i].wg.Done()
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
			t.run()
			t.wg.Done()
		}
	}
}

// receive receives a task, polling for spinTime before it blocks.
func receive(tasks chan *task) *task {
	for deadline := time.Now().Add(spinTime); time.Now().Before(deadline); {
		select {
		case t := <-tasks:
			return t
		default:
			runtime.Gosched()
		}
	}
	return <-tasks
}
