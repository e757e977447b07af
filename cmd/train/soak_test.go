package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/transformer-go/transformer/internal/longtest"
)

// TestKilledRunResumesExactly kills a training process (SIGKILL, no chance to
// save) at random points, resumes it each time, and checks that the final
// weights are byte-identical to those of a run never interrupted. Two tries
// in three kill the run at a random moment after it saved a checkpoint
// past where the try began, so that every such try makes progress however
// busy the machine (a kill at a fixed time after the start once found a
// loaded machine still starting every try); the third kills it within its
// first second, in its start, its resume or its first writes. By default
// the run is 40 updates long; longtest.Full makes it 150.
func TestKilledRunResumesExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak test runs a dozen processes")
	}
	bin := filepath.Join(t.TempDir(), "train")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	steps, every := 40, "10"
	if longtest.Full() {
		steps, every = 150, "25"
	}
	args := []string{"-steps", fmt.Sprint(steps), "-save-every", "1", "-eval-every", every, "-max-tokens", "128",
		"-train-size", "300", "-held-out", "16", "-keep", "2"}
	whole := filepath.Join(t.TempDir(), "whole")
	if out, err := exec.Command(bin, append(args, "-out", whole)...).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	killed := filepath.Join(t.TempDir(), "killed")
	rng := rand.New(rand.NewPCG(1, 2))
	cmd := exec.Command(bin, append(args, "-out", killed)...)
	kills := 0
	// At most one try in three makes no progress: the bound only catches a
	// run that never gets anywhere.
	for try := 0; ; try++ {
		if try == 3*steps {
			t.Fatalf("the run did not finish after %d kills", kills)
		}
		done, err := runUntil(cmd, killMoment(rng, try, killed))
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		kills++
		cmd = exec.Command(bin, "-resume", killed)
		if newestStep(killed) == 0 {
			// Killed before its first checkpoint (on a busy machine, even
			// after run.json): nothing to resume, and only -overwrite
			// replaces the run's first files.
			cmd = exec.Command(bin, append(args, "-out", killed, "-overwrite")...)
		}
	}
	a, errA := os.ReadFile(filepath.Join(whole, "final.safetensors"))
	b, errB := os.ReadFile(filepath.Join(killed, "final.safetensors"))
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Fatalf("after %d kills the final weights differ from the uninterrupted run's (%v, %v)", kills, errA, errB)
	}
	t.Logf("killed %d times; final weights identical", kills)
}

// killMoment is when try kills the run in dir, polled: within its first
// second every third try, else up to 400 ms after the run saved a
// checkpoint past the one it had when the try began.
func killMoment(rng *rand.Rand, try int, dir string) func() bool {
	start := time.Now()
	if try%3 == 2 {
		at := time.Duration(rng.IntN(1000)) * time.Millisecond
		return func() bool { return time.Since(start) > at }
	}
	from, delay := newestStep(dir), time.Duration(rng.IntN(400))*time.Millisecond
	var progressed time.Time
	return func() bool {
		if progressed.IsZero() && newestStep(dir) > from {
			progressed = time.Now()
		}
		return !progressed.IsZero() && time.Since(progressed) > delay
	}
}

// newestStep is the step of the newest checkpoint state in dir, 0 if none.
func newestStep(dir string) int {
	paths, _ := filepath.Glob(filepath.Join(dir, "checkpoints", "step-*.state.safetensors"))
	newest := 0
	for _, p := range paths {
		var step int
		if _, err := fmt.Sscanf(filepath.Base(p), "step-%08d.state.safetensors", &step); err == nil {
			newest = max(newest, step)
		}
	}
	return newest
}

// runUntil runs cmd and kills it once kill, polled every 5 ms, says so,
// unless it ends first; done says it ended by itself, successfully.
func runUntil(cmd *exec.Cmd, kill func() bool) (done bool, err error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return false, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			if err != nil {
				return false, &runError{err, out.String()}
			}
			return true, nil
		case <-tick.C:
			if kill() {
				cmd.Process.Signal(syscall.SIGKILL)
				<-exited
				return false, nil
			}
		}
	}
}

type runError struct {
	err error
	out string
}

func (e *runError) Error() string { return e.err.Error() + "\n" + e.out }
