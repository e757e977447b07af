package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transformer-go/transformer/trainer"
	"github.com/transformer-go/transformer/trainer/dist"
)

// TestOptimizerFlagsResumeExactly trains with each optimizer and schedule
// straight through, and again stopped (as Ctrl-C stops it) after its
// first checkpoint and resumed with -resume alone: run.json must carry
// the optimizer, schedule and rates, so the final weights are the same
// bytes.
func TestOptimizerFlagsResumeExactly(t *testing.T) {
	base := []string{"-steps", "12", "-max-tokens", "128", "-train-size", "100", "-held-out", "8", "-eval-every", "6", "-save-every", "1"}
	tests := []struct {
		flags []string
		saved map[string]any
	}{
		{[]string{"-optimizer", "adamw", "-weight-decay", "0.05", "-schedule", "cosine", "-lr", "5e-4", "-warmup", "3"},
			map[string]any{"optimizer": "adamw", "weight_decay": 0.05, "schedule": "cosine", "lr": 5e-4, "warmup": 3.0, "cooldown": nil}},
		{[]string{"-optimizer", "adamw", "-schedule", "linear", "-warmup", "2"},
			map[string]any{"optimizer": "adamw", "weight_decay": 0.01, "schedule": "linear", "lr": 1e-3}},
		{[]string{"-schedule", "constant", "-lr", "2e-3"},
			map[string]any{"optimizer": "adam", "weight_decay": nil, "schedule": "constant", "lr": 2e-3, "lr_factor": nil}},
		{[]string{"-lr", "2e-3"},
			map[string]any{"optimizer": "adam", "schedule": "paper", "lr": 2e-3, "lr_factor": nil}},
	}
	if testing.Short() {
		tests = tests[:1] // AdamW with a cosine rate; the trainer's tests cover the others
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			whole := filepath.Join(t.TempDir(), "whole")
			var out, errb bytes.Buffer
			if err := run(context.Background(), dist.Alone(), append(append(tc.flags, base...), "-out", whole), &out, &errb); err != nil {
				t.Fatal(err, errb.String())
			}
			stopped := filepath.Join(t.TempDir(), "stopped")
			ctx, cancel := context.WithCancel(context.Background())
			go func() { // Ctrl-C once the first checkpoint is written
				for {
					if ck, _ := filepath.Glob(filepath.Join(stopped, "checkpoints", "*.state.safetensors")); len(ck) > 0 {
						cancel()
						return
					}
					time.Sleep(time.Millisecond)
				}
			}()
			errb.Reset()
			if err := run(ctx, dist.Alone(), append(append(tc.flags, base...), "-out", stopped), &out, &errb); !errors.Is(err, trainer.ErrInterrupted) {
				t.Fatal(err, errb.String())
			}
			if !strings.Contains(errb.String(), "interrupted") || !strings.Contains(errb.String(), "-resume "+stopped) {
				t.Fatalf("the run was not interrupted, or its hint does not resume it:\n%s", errb.String())
			}
			if err := run(context.Background(), dist.Alone(), []string{"-resume", stopped}, &out, &errb); err != nil {
				t.Fatal(err, errb.String())
			}
			a, errA := os.ReadFile(filepath.Join(whole, "final.safetensors"))
			b, errB := os.ReadFile(filepath.Join(stopped, "final.safetensors"))
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				t.Fatalf("the resumed run's final weights differ from the uninterrupted run's (%v, %v)", errA, errB)
			}
			js, err := os.ReadFile(filepath.Join(stopped, "run.json"))
			if err != nil {
				t.Fatal(err)
			}
			var saved map[string]any
			if err := json.Unmarshal(js, &saved); err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.saved {
				if got := saved[k]; got != want {
					t.Errorf("run.json %s = %v, want %v", k, got, want)
				}
			}
		})
	}
}

// TestOptimizerFlagsChecked refuses bad optimizer and schedule flags
// before anything is written, naming the flag.
func TestOptimizerFlagsChecked(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-optimizer", "sgd"}, `-optimizer "sgd": want one of adam, adamw`},
		{[]string{"-schedule", "step"}, `-schedule "step": want one of paper, constant, linear, cosine`},
		{[]string{"-weight-decay", "0.1"}, "-weight-decay 0.1 needs -optimizer adamw"},
		{[]string{"-optimizer", "adamw", "-weight-decay", "NaN"}, "-weight-decay NaN"},
		{[]string{"-lr", "-1"}, "-lr -1"},
		{[]string{"-lr", "1e-3", "-lr-factor", "2"}, "give -lr (the peak rate) or -lr-factor"},
		{[]string{"-schedule", "cosine", "-lr-factor", "2"}, "-lr-factor is the paper's schedule's"},
		{[]string{"-schedule", "cosine", "-cooldown", "0.2"}, "-schedule cosine decays to the end of the run already"},
		{[]string{"-schedule", "linear", "-steps", "50"}, "warm-up (100) must be shorter than the run (50 steps)"},
		// Given zeros are used or refused, never taken for the defaults.
		{[]string{"-lr", "0"}, "-lr 0: want a number in (0, "},
		{[]string{"-lr-factor", "0"}, "-lr-factor 0: want a number in (0, "},
		{[]string{"-warmup", "0"}, "-warmup 0: the paper's schedule needs a warm-up of at least 1 update"},
		{[]string{"-warmup", "-1"}, "-warmup -1: want a number from 0"},
		{[]string{"-weight-decay", "0"}, "-weight-decay 0 needs -optimizer adamw"},
		{[]string{"-steps", "0"}, "-steps 0: want a number from 1"},
		{[]string{"-epochs", "0"}, "-epochs 0: want a number from 1"},
		{[]string{"-max-tokens", "0"}, "-max-tokens 0: want a number from 1"},
		{[]string{"-eval-every", "0"}, "-eval-every 0: want a number from 1"},
		{[]string{"-save-every", "0"}, "-save-every 0: want a number from 1"},
		{[]string{"-clip", "-1"}, "-clip -1: want a number from 0"},
		{[]string{"-dropout", "-1"}, "-dropout -1: want a number from 0"},
	}
	for _, tc := range tests {
		refused(t, tc.args, tc.want)
	}
}
