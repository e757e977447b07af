package main

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
)

// writeSyntheticRun writes what cmd/train leaves for a synthetic task of
// 6 symbols: a checkpoint that records no tokenizer, and no bpe.txt or
// vocab.txt.
func writeSyntheticRun(t *testing.T, kind string) string {
	t.Helper()
	dir := t.TempDir()
	cfg, _ := model.Preset("tiny", data.NumReserved+6)
	cfg.Kind, cfg.DModel, cfg.DFF, cfg.MaxLen = kind, 32, 64, 24
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.Save(filepath.Join(dir, "best.safetensors"), m.Config(), params, map[string]string{"step": "1"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSyntheticRunReadsTokenIDs translates, continues and tags token ids
// with the runs of synthetic tasks, and names the line of a bad id.
func TestSyntheticRunReadsTokenIDs(t *testing.T) {
	for _, tc := range []struct {
		kind string
		args []string
	}{
		{model.KindEncoderDecoder, []string{"-method", "greedy", "-max-len", "6"}},
		{model.KindEncoderDecoder, []string{"-nbest", "2"}},
		{model.KindDecoderOnly, []string{"-prompt", "-method", "greedy", "-max-len", "4"}},
		{model.KindEncoderOnly, nil},
	} {
		dir := writeSyntheticRun(t, tc.kind)
		var out, errb bytes.Buffer
		args := append([]string{"-model", dir}, tc.args...)
		if err := run(args, strings.NewReader("4 5 6\n9 8\n"), &out, &errb); err != nil {
			t.Fatalf("%s %v: %v", tc.kind, tc.args, err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if want := 2 + 2*strings.Count(strings.Join(tc.args, " "), "-nbest"); len(lines) != want {
			t.Fatalf("%s %v: %d lines %q, want %d", tc.kind, tc.args, len(lines), lines, want)
		}
		for _, l := range lines {
			if i := strings.LastIndex(l, "\t"); i >= 0 {
				l = l[i+1:]
			}
			if _, err := data.ParseIDs(l, data.NumReserved, data.NumReserved+6); err != nil && l != "" {
				t.Errorf("%s %v: output line %q is not token ids: %v", tc.kind, tc.args, l, err)
			}
		}
		err := run([]string{"-model", dir}, strings.NewReader("4 5\n4 x 5\n"), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), `standard input:2: field 2, "x", is not a token id`) {
			t.Errorf("%s: a bad id: %v, want an error naming line 2", tc.kind, err)
		}
	}
}
