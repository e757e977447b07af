// Package dist is the one place that talks to MPI: it lets the processes of
// a data-parallel run (started by mpirun) sum their gradients, agree on what
// to do next and share rank 0's state.
//
// Built with the mpi tag (and Open MPI's development files, found through
// pkg-config ompi), it runs on cogentcore.org/lab/base/mpi. Without the tag
// the world is this process alone (rank 0 of 1), every collective is the
// identity, and nothing needs cgo.
//
// MPI calls must come from the goroutine that called Join (the main one):
// under the mpi tag this package locks the main goroutine to its thread at
// init, as MPI_THREAD_FUNNELED requires.
package dist

import (
	"cogentcore.org/lab/base/mpi"
	"github.com/pkg/errors"
)

// maxCount is the most elements one MPI call moves: counts are C ints, so
// longer buffers go in pieces.
const maxCount = 1 << 30

// sendPiece is the most elements one all-reduce sends. MPI reduces a
// buffer onto itself only through MPI_IN_PLACE, which is (void *) 1 in Open
// MPI, and cogentcore's in-place form keeps that in a Go pointer: when the
// runtime moved the goroutine's stack during the call, it found the pointer
// and stopped the process ("invalid pointer found on stack"). So every
// all-reduce sends a copy, made a piece at a time into a buffer the world
// keeps.
const sendPiece = 1 << 20

// World is this process's place among the processes of a run.
type World struct {
	comm       *mpi.Comm
	rank, size int
	send32     []float32 // the copies that all-reduces send
	send64     []float64
}

// Alone is the world of a process that runs by itself.
func Alone() *World { return &World{rank: 0, size: 1} }

// Join starts MPI and returns this process's world: under mpirun, its rank
// among all ranks; started alone, or built without the mpi tag, a world of
// one. Call it once, from the main goroutine, and Leave at the end.
func Join() (*World, error) {
	mpi.LogErrors = false
	if err := initMPI(); err != nil {
		return nil, err
	}
	comm, err := mpi.NewComm(nil)
	if err != nil {
		return nil, errors.Wrap(err, "MPI: the world communicator")
	}
	return &World{comm: comm, rank: comm.Rank(), size: comm.Size()}, nil
}

// Leave shuts MPI down. The world is unusable afterwards.
func (w *World) Leave() {
	if w.comm != nil {
		mpi.Finalize()
		w.comm = nil
	}
}

// Rank is this process's rank, from 0.
func (w *World) Rank() int { return w.rank }

// Size is the number of processes.
func (w *World) Size() int { return w.size }

// Root reports whether this process is rank 0, the one that writes files.
func (w *World) Root() bool { return w.rank == 0 }

// parallel reports whether there is anyone to talk to.
func (w *World) parallel() bool { return w.size > 1 && w.comm != nil }

// SumF32 replaces buf on every rank with the element-wise sum of every
// rank's buf (an all-reduce).
func (w *World) SumF32(buf []float32) error {
	return w.pieces(len(buf), sendPiece, func(lo, hi int) error {
		return w.comm.AllReduceF32(mpi.OpSum, buf[lo:hi], sendCopy(&w.send32, buf[lo:hi]))
	}, "summing float32s")
}

// SumF64 is SumF32 for float64s.
func (w *World) SumF64(buf []float64) error {
	return w.pieces(len(buf), sendPiece, func(lo, hi int) error {
		return w.comm.AllReduceF64(mpi.OpSum, buf[lo:hi], sendCopy(&w.send64, buf[lo:hi]))
	}, "summing float64s")
}

// sendCopy is a copy of x in *buf, grown as needed: what an all-reduce
// into x sends.
func sendCopy[T float32 | float64](buf *[]T, x []T) []T {
	if cap(*buf) < len(x) {
		*buf = make([]T, len(x))
	}
	return append((*buf)[:0], x...)
}

// BroadcastF32 replaces buf on every rank with rank 0's.
func (w *World) BroadcastF32(buf []float32) error {
	return w.pieces(len(buf), maxCount, func(lo, hi int) error {
		return w.comm.BcastF32(mpi.Root, buf[lo:hi])
	}, "broadcasting float32s")
}

// BroadcastF64 replaces buf on every rank with rank 0's.
func (w *World) BroadcastF64(buf []float64) error {
	return w.pieces(len(buf), maxCount, func(lo, hi int) error {
		return w.comm.BcastF64(mpi.Root, buf[lo:hi])
	}, "broadcasting float64s")
}

// BroadcastBytes returns rank 0's b on every rank (b of other ranks is
// ignored).
func (w *World) BroadcastBytes(b []byte) ([]byte, error) {
	if !w.parallel() {
		return b, nil
	}
	n := []int64{int64(len(b))}
	if err := w.comm.BcastI64(mpi.Root, n); err != nil {
		return nil, errors.Wrap(err, "MPI: broadcasting a length")
	}
	if !w.Root() {
		b = make([]byte, n[0])
	}
	err := w.pieces(len(b), maxCount, func(lo, hi int) error {
		return w.comm.BcastU8(mpi.Root, b[lo:hi])
	}, "broadcasting bytes")
	return b, err
}

// pieces runs op over [0, n) in pieces of at most size elements (at most
// maxCount), when there is anyone to talk to.
func (w *World) pieces(n, size int, op func(lo, hi int) error, what string) error {
	if !w.parallel() {
		return nil
	}
	for lo := 0; lo < n; lo += size {
		if err := op(lo, min(lo+size, n)); err != nil {
			return errors.Wrapf(err, "MPI: %s", what)
		}
	}
	return nil
}

// Agree returns an error on every rank if err is not nil on any: each rank
// says whether it failed, so that one rank's failure stops all of them
// instead of leaving the others waiting. The error names the failed ranks'
// count; a rank's own err is returned as it is.
func (w *World) Agree(err error) error {
	failed := []float64{0}
	if err != nil {
		failed[0] = 1
	}
	if serr := w.SumF64(failed); serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	if failed[0] > 0 {
		return errors.Errorf("%.0f of the %d ranks failed (see their messages)", failed[0], w.size)
	}
	return nil
}

// Same returns an error unless every rank passed the same sum, say a hash
// of its parameters: the check that ranks have not diverged.
func (w *World) Same(sum uint64) error {
	if !w.parallel() {
		return nil
	}
	// One all-reduce of the maximum of the sum's four 16-bit pieces (exact
	// in float64) and of their negatives: the ranks agree exactly when each
	// maximum is minus the maximum of the negatives, the minimum.
	buf := make([]float64, 8)
	for i := range 4 {
		piece := float64(sum >> (16 * i) & 0xffff)
		buf[i], buf[4+i] = piece, -piece
	}
	if err := w.comm.AllReduceF64(mpi.OpMax, buf, sendCopy(&w.send64, buf)); err != nil {
		return errors.Wrap(err, "MPI: comparing checksums")
	}
	for i := range 4 {
		if buf[i] != -buf[4+i] {
			return errors.Errorf("the %d ranks hold different values (checksum %016x on rank %d)", w.size, sum, w.rank)
		}
	}
	return nil
}
