package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/trainer"
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
	return o.eachTrainRow(func(r row) error {
		rig, err := newRig(r)
		if err != nil {
			return err
		}
		s, err := rig.MeasureScaling(o.warmup, o.runs, procs)
		if err != nil {
			return errors.Wrapf(err, "measuring the scaling of %s", r.name())
		}
		fmt.Fprintf(stdout, "%s: %.0f tok/s on 1 core, %.0f on %d: %.2fx (median of %d pairs of steps, %.2f-%.2f)\n",
			r.name(), s.ATokensPerS, s.BTokensPerS, procs, s.Ratio, o.runs, s.Low, s.High)
		return nil
	})
}

// bf16Table measures, for every preset and vocabulary, how much faster a
// training step runs with bfloat16 products than in float32 (-bf16-speedup):
// -warmup untimed and -runs timed pairs of steps, one of each precision,
// with trainer.MeasurePairs, on the same batch and the same initial
// weights.
func (o options) bf16Table(stdout io.Writer) error {
	return o.eachTrainRow(func(r row) error {
		var rigs [2]*trainer.Rig
		for i, prec := range []graph.Precision{graph.Float32, graph.BF16} {
			in := r
			in.Precision = string(prec)
			rig, err := newRig(in)
			if err != nil {
				return err
			}
			rigs[i] = rig
		}
		s, err := trainer.MeasurePairs(rigs[0].TrainStep, rigs[1].TrainStep, o.warmup, o.runs, float64(len(rigs[0].Batch.TgtOut)))
		if err != nil {
			return errors.Wrapf(err, "measuring the bf16 speed-up of %s", r.name())
		}
		fmt.Fprintf(stdout, "%s: %.0f tok/s in float32, %.0f with bf16 products (%s): %.2fx (median of %d pairs of steps, %.2f-%.2f)\n",
			r.name(), s.ATokensPerS, s.BTokensPerS, graph.BF16Kernel(), s.Ratio, o.runs, s.Low, s.High)
		return nil
	})
}

// eachTrainRow calls f with every training row the flags ask for.
func (o options) eachTrainRow(f func(row) error) error {
	rows, err := o.rows()
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.Kind != "train" {
			continue
		}
		if err := f(r); err != nil {
			return err
		}
	}
	return nil
}
