package main

import (
	"bytes"
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
// weights are byte-identical to those of a run never interrupted. By
// default the run is 40 updates long (a few kills); longtest.Full makes it
// 150 (a dozen or more).
func TestKilledRunResumesExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak test runs a dozen processes")
	}
	bin := filepath.Join(t.TempDir(), "train")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	steps, every := "40", "10"
	if longtest.Full() {
		steps, every = "150", "25"
	}
	args := []string{"-steps", steps, "-save-every", "1", "-eval-every", every, "-max-tokens", "128",
		"-train-size", "300", "-held-out", "16", "-keep", "2"}
	whole := filepath.Join(t.TempDir(), "whole")
	if out, err := exec.Command(bin, append(args, "-out", whole)...).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	killed := filepath.Join(t.TempDir(), "killed")
	rng := rand.New(rand.NewPCG(1, 2))
	cmd := exec.Command(bin, append(args, "-out", killed)...)
	kills := 0
	// Each try kills the run after 0.2 to 1.1 s; a slow machine makes little
	// progress in a try (on a 2-core Xeon, 32 to 38 kills of 150 steps), so
	// the bound only catches a run that never gets anywhere.
	for try := 0; ; try++ {
		if try == 150 {
			t.Fatalf("the run did not finish after %d kills", kills)
		}
		done, err := runFor(cmd, time.Duration(200+rng.IntN(900))*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		kills++
		cmd = exec.Command(bin, "-resume", killed)
		if ck, _ := filepath.Glob(filepath.Join(killed, "checkpoints", "*.state.safetensors")); len(ck) == 0 {
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

// runFor runs cmd and kills it after d unless it ends first; done says it
// ended by itself, successfully.
func runFor(cmd *exec.Cmd, d time.Duration) (done bool, err error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return false, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			return false, &runError{err, out.String()}
		}
		return true, nil
	case <-time.After(d):
		cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		return false, nil
	}
}

type runError struct {
	err error
	out string
}

func (e *runError) Error() string { return e.err.Error() + "\n" + e.out }
