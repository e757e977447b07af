//go:build mpi

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/transformer-go/transformer/internal/mpitest"
)

// TestMPISignals stops runs of 2 ranks with signals, as a user or a batch
// scheduler does. A stop signal to one rank, or one that mpirun forwards,
// makes every rank stop after the same step: rank 0 saves a checkpoint of
// that step and -resume on 2 ranks ends with the very bytes of a run never
// stopped. A rank killed outright makes mpirun end the other with an error
// instead of leaving it waiting.
func TestMPISignals(t *testing.T) {
	bin := buildMPI(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "model.json")
	if err := os.WriteFile(cfg, []byte(`{"d_model": 32, "heads": 2, "d_ff": 64, "encoder_layers": 1, "decoder_layers": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Long enough (several seconds) to outlast mpirun's second before it
	// forwards SIGTERM.
	const steps = 2500
	args := func(out string) []string {
		return []string{"-config", cfg, "-steps", strconv.Itoa(steps), "-max-tokens", "256", "-train-size", "500",
			"-held-out", "16", "-eval-every", "500", "-out", out}
	}
	whole := filepath.Join(dir, "whole")
	if out, err := mpitest.Command(t, "2", nil, bin, args(whole)...).CombinedOutput(); err != nil {
		t.Fatalf("run never stopped: %v\n%s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(whole, "final.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		sig   syscall.Signal
		rank  int  // the rank signalled, or -1 for mpirun
		stops bool // every rank checkpoints and stops, else mpirun ends them with an error
		exit0 bool // and mpirun exits with status 0
	}{
		{"SIGTERM to rank 1 alone", syscall.SIGTERM, 1, true, true},
		{"SIGUSR1 to mpirun, which forwards it", syscall.SIGUSR1, -1, true, true},
		{"SIGTERM to mpirun, which ends the job", syscall.SIGTERM, -1, true, false},
		{"SIGKILL to rank 1", syscall.SIGKILL, 1, false, false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprint("run", i))
			log, err := signalled(t, mpitest.Command(t, "2", nil, bin, args(out)...), tc.sig, tc.rank)
			if !tc.stops {
				if err == nil || !strings.Contains(log, "signal 9") {
					t.Fatalf("mpirun ended with %v, want an error naming the killed rank:\n%s", err, log)
				}
				return
			}
			if (err == nil) != tc.exit0 {
				t.Errorf("mpirun ended with %v (want status 0: %v)", err, tc.exit0)
			}
			m := regexp.MustCompile(`msg="interrupted: checkpoint saved" step=(\d+)`).FindStringSubmatch(log)
			if m == nil || strings.Contains(log, "msg=done") {
				t.Fatalf("no rank-0 checkpoint at a stop:\n%s", log)
			}
			step, _ := strconv.Atoi(m[1])
			if _, err := os.Stat(filepath.Join(out, "checkpoints", fmt.Sprintf("step-%08d.safetensors", step))); err != nil || step >= steps {
				t.Fatalf("stopped at step %d of %d, checkpoint: %v", step, steps, err)
			}
			if res, err := mpitest.Command(t, "2", nil, bin, "-resume", out).CombinedOutput(); err != nil {
				t.Fatalf("-resume: %v\n%s", err, res)
			}
			if got, err := os.ReadFile(filepath.Join(out, "final.safetensors")); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("stopped at step %d and resumed, the final weights differ from the run never stopped (%v)", step, err)
			}
			t.Logf("every rank stopped after step %d; resumed to the same final weights", step)
		})
	}
}

// signalled runs cmd (an mpirun), sends sig to the given rank (-1: to
// mpirun) once rank 0 logs its first progress line, and returns everything
// mpirun printed and how it ended. A run that does not end within two
// minutes is killed, with every rank, and fails the test.
func signalled(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, rank int) (string, error) {
	t.Helper()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hung := time.AfterFunc(2*time.Minute, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		done <- err
	}()
	var log strings.Builder
	sent := false
	for sc := bufio.NewScanner(pr); sc.Scan(); {
		fmt.Fprintln(&log, sc.Text())
		if !sent && strings.Contains(sc.Text(), "msg=step ") {
			pid := cmd.Process.Pid
			if rank >= 0 {
				pid = mpitest.RankPID(pid, rank)
			}
			if pid == 0 || syscall.Kill(pid, sig) != nil {
				t.Errorf("no process of rank %d to signal", rank)
			}
			sent = true
		}
	}
	err := <-done
	if !hung.Stop() {
		t.Fatalf("mpirun did not end within two minutes:\n%s", log.String())
	}
	if !sent {
		t.Fatalf("the run ended before any progress line:\n%s", log.String())
	}
	return log.String(), err
}
