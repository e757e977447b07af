package runtimeflag

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/graph"
)

// TestFlags checks the defaults, the values the flags take and refuse, and
// what Open makes of them on a machine whose CUDA device cannot run
// programs: -device auto runs on the CPU and says why, -device cuda is an
// error naming the device.
func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		parse   string // in the parse error, "" for none
		open    string // in Open's error, "" for none
		device  graph.Device
		prec    graph.Precision
		warning string
	}{
		{args: nil, device: graph.DeviceCPU, prec: graph.Float32},
		{args: []string{"-precision", "bf16"}, device: graph.DeviceCPU, prec: graph.BF16},
		{args: []string{"-device", "auto"}, device: graph.DeviceCPU, prec: graph.Float32, warning: "-device auto: running on the CPU ("},
		{args: []string{"-device", "cuda"}, open: "device: cuda: "},
		{args: []string{"-device", "gpu"}, parse: `device "gpu": want cpu, cuda or auto`},
		{args: []string{"-precision", "fp16"}, parse: `precision "fp16": want float32 or bf16`},
		{args: []string{"-device", ""}, parse: `invalid value "" for flag -device: empty: want cpu, cuda or auto`},
		{args: []string{"-precision", ""}, parse: `invalid value "" for flag -precision: empty: want float32 or bf16`},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := Register(fs)
		err := fs.Parse(c.args)
		if c.parse != "" {
			if err == nil || !strings.Contains(err.Error(), c.parse) {
				t.Errorf("%v: parse error %v, want one containing %q", c.args, err, c.parse)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		var warn bytes.Buffer
		rt, err := f.Open(&warn)
		if c.open != "" {
			if err == nil || !strings.Contains(err.Error(), c.open) {
				t.Errorf("%v: Open error %v, want one containing %q", c.args, err, c.open)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if rt.Device() != c.device || rt.Precision() != c.prec {
			t.Errorf("%v: runtime %v, want %s %s", c.args, rt, c.device, c.prec)
		}
		if !strings.HasPrefix(warn.String(), c.warning) || (c.warning == "") != (warn.Len() == 0) {
			t.Errorf("%v: warned %q, want %q…", c.args, warn.String(), c.warning)
		}
	}
}

// TestHelp: the flags' help shows their defaults, and the flag package's
// probe of their zero values does not panic.
func TestHelp(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	Register(fs)
	var help bytes.Buffer
	fs.SetOutput(&help)
	fs.PrintDefaults()
	if s := help.String(); strings.Contains(s, "panic") || !strings.Contains(s, "(default cpu)") || !strings.Contains(s, "(default float32)") {
		t.Errorf("help:\n%s", s)
	}
}
