// Package runtimeflag holds the -device and -precision flags that every
// command shares, and opens the graph.Runtime they name.
package runtimeflag

import (
	"flag"
	"fmt"
	"io"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
	_ "github.com/transformer-go/transformer/graph/cuda" // registers the CUDA device, -device cuda
)

// Flags are where and how a command runs its programs.
type Flags struct {
	Device    graph.Device
	Precision graph.Precision
}

// Register adds -device and -precision to fs, at cpu and float32, and
// returns the flags they set.
func Register(fs *flag.FlagSet) *Flags {
	f := &Flags{Device: graph.DeviceCPU, Precision: graph.Float32}
	fs.Var(given{&f.Device, "cpu, cuda or auto"}, "device", "where programs run: cpu, cuda (the first GPU; an error without one) or auto (a usable GPU, else the CPU)")
	fs.Var(given{&f.Precision, "float32 or bf16"}, "precision", "matrix products: float32, or bf16 (operands rounded to bfloat16, sums and everything else in float32)")
	return f
}

// given is a flag whose empty value is refused: graph takes an empty
// device or precision for the default, which a flag given "" (a script's
// unset variable) would then silently mean.
type given struct {
	flag.Value
	want string
}

// String is the value's, "" for the zero given the flag package makes
// to tell a default from the zero value.
func (g given) String() string {
	if g.Value == nil {
		return ""
	}
	return g.Value.String()
}

func (g given) Set(s string) error {
	if s == "" {
		return errors.Errorf("empty: want %s (leave the flag out for the default)", g.want)
	}
	return g.Value.Set(s)
}

// Open opens the runtime of f: a device that cannot be used is an error
// naming what is missing, before any work. When -device auto falls back to
// the CPU, it says why on warn.
func (f *Flags) Open(warn io.Writer) (*graph.Runtime, error) {
	rt, err := graph.NewRuntime(f.Device, f.Precision)
	if err != nil {
		return nil, err
	}
	if why := rt.Fallback(); why != "" {
		fmt.Fprintf(warn, "-device auto: running on the CPU (%s)\n", why)
	}
	return rt, nil
}
