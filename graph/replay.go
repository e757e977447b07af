package graph

import (
	"slices"

	"github.com/pkg/errors"
)

// DefaultReplays is how many programs' recordings a runtime on a device
// keeps (see Runtime.SetReplays): enough for a trainer's batch shapes and a
// decoder's steps.
const DefaultReplays = 64

// replayCache bounds the recordings a runtime (with its siblings) keeps:
// the programs that have one, the one run last at the end. When a new one
// would pass the limit, the least recently run program lets go of its
// recording, and records again when it next runs.
type replayCache struct {
	limit int
	execs []*deviceExec
}

// add adds x, which has just recorded, letting go of the least recently
// run recordings beyond the limit.
func (c *replayCache) add(x *deviceExec) error {
	c.execs = append(c.execs, x)
	return c.trim()
}

// trim lets go of the least recently run recordings beyond the limit.
func (c *replayCache) trim() error {
	var first error
	for len(c.execs) > c.limit {
		if err := c.execs[0].dropReplay(); err != nil && first == nil {
			first = err
		}
		c.execs = c.execs[1:]
	}
	return errors.Wrap(first, "letting go of a recording")
}

// touch moves x, which has just run, to the end.
func (c *replayCache) touch(x *deviceExec) {
	if n := len(c.execs); n > 0 && c.execs[n-1] == x {
		return
	}
	c.remove(x)
	c.execs = append(c.execs, x)
}

// remove forgets x.
func (c *replayCache) remove(x *deviceExec) {
	if i := slices.Index(c.execs, x); i >= 0 {
		c.execs = slices.Delete(c.execs, i, i+1)
	}
}

// SetReplays sets how many of the runtime's programs (and its siblings')
// keep the recording of their work on a device, which they replay at every
// run after their second (a CUDA graph, on a GPU), instead of running
// their machine again: 0 runs every program's machine at every run, op by
// op. Programs beyond the limit let go of the least recently run ones'
// recordings. The default is DefaultReplays. On the CPU, programs are not
// recorded, and the call does nothing.
func (rt *Runtime) SetReplays(n int) error {
	if n < 0 {
		return errors.Errorf("replays: %d programs, want 0 or more", n)
	}
	return rt.at.setReplays(n)
}

// setReplays bounds the recordings the target keeps.
func (t *deviceTarget) setReplays(n int) error {
	t.shared.replays.limit = n
	return t.shared.replays.trim()
}
