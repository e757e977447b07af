package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/pkg/errors"
)

// scalingTable measures, for every preset and vocabulary, how much faster
// a training step runs at GOMAXPROCS than on one core (-scaling):
// -warmup untimed and -runs timed pairs of steps, one at each setting,
// with trainer.Rig.MeasureScaling.
func (o options) scalingTable(stdout io.Writer) error {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		return errors.Errorf("-scaling compares GOMAXPROCS 1 with GOMAXPROCS, which is %d here: run it with GOMAXPROCS of 2 or more", procs)
	}
	rows, err := o.rows()
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.Kind != "train" {
			continue
		}
		rig, err := newRig(r)
		if err != nil {
			return err
		}
		s, err := rig.MeasureScaling(o.warmup, o.runs, procs)
		if err != nil {
			return errors.Wrapf(err, "measuring the scaling of %s", r.name())
		}
		fmt.Fprintf(stdout, "%s: %.0f tok/s on 1 core, %.0f on %d: %.2fx (median of %d pairs of steps, %.2f-%.2f)\n",
			r.name(), s.OneTokensPerS, s.ProcsTokensPerS, procs, s.Ratio, o.runs, s.Low, s.High)
	}
	return nil
}
