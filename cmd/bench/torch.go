package main

import (
	_ "embed"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

//go:embed bench_torch.py
var torchScript []byte

// openblasOpenMP is where Debian's libopenblas0-openmp puts its BLAS.
const openblasOpenMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"

// torchResult is what bench_torch.py prints.
type torchResult struct {
	Train   float64 `json:"train_tokens_per_s"`
	Forward float64 `json:"forward_tokens_per_s"`
	Decode  float64 `json:"decode_tokens_per_s"`
	PeakMB  float64 `json:"peak_rss_mb"`
}

// measureTorch fills in PyTorch's side of the rows, with the PyTorch of
// python.
func measureTorch(python string, rows []row, warmup, runs int) error {
	r := rows[0]
	cfg, err := model.Preset(r.Preset, r.Vocab)
	if err != nil {
		return err
	}
	dev := graph.Device(r.Device)
	if dev == "" {
		dev = graph.DeviceCPU
	}
	args := []string{"train", string(r.precision()), string(dev)}
	if r.Kind != "train" {
		args[0] = "decode"
	}
	for _, v := range []int{cfg.DModel, cfg.Heads, cfg.DFF, cfg.EncoderLayers, cfg.Vocab, warmup, runs} {
		args = append(args, strconv.Itoa(v))
	}
	if r.Kind == "train" {
		args = append(args, strconv.Itoa(r.Batch), strconv.Itoa(r.Len))
	} else {
		args = append(args, r.Kind, strconv.Itoa(r.Batch), strconv.Itoa(decodeSrcLen), strconv.Itoa(decodeMaxLen))
	}
	res, err := runTorch(python, dev, args)
	if err != nil {
		return errors.Wrapf(err, "PyTorch, %s", r.name())
	}
	if r.Kind == "train" {
		rows[0].Torch, rows[1].Torch = res.Train, res.Forward
	} else {
		rows[0].Torch = res.Decode
	}
	for i := range rows {
		rows[i].TorchMB = res.PeakMB
	}
	return nil
}

// runTorch runs bench_torch.py with python and args, for the device dev,
// and reads its result.
func runTorch(python string, dev graph.Device, args []string) (torchResult, error) {
	var r torchResult
	// Without the OpenMP build, PyTorch would run on the pthread one, which
	// oversubscribes the cores: a slower PyTorch would flatter this project.
	env := os.Environ()
	if dev == graph.DeviceCPU {
		if _, err := os.Stat(openblasOpenMP); err != nil {
			return r, errors.Errorf("no OpenMP OpenBLAS at %s, which a fair PyTorch timing needs: apt-get install libopenblas0-openmp", openblasOpenMP)
		}
		env = append(env, "OMP_NUM_THREADS="+strconv.Itoa(runtime.GOMAXPROCS(0)), "LD_LIBRARY_PATH="+openblasOpenMP)
	}
	dir, err := os.MkdirTemp("", "bench")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "bench_torch.py")
	if err := os.WriteFile(script, torchScript, 0o644); err != nil {
		return r, err
	}
	cmd := exec.Command(python, append([]string{script}, args...)...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return r, errors.Wrapf(err, "running %s (apt-get install python3-torch libopenblas0-openmp)", python)
	}
	return r, errors.Wrap(json.Unmarshal(out, &r), "reading PyTorch's timings")
}
