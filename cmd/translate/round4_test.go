package main

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/model/checkpoint"
)

// TestLongerThanTrainedIsWarnedOf: a source longer than any the run
// trained on (its checkpoint records the longest) is translated with a
// warning naming its line (once garbage came without a word); one as long
// is not; a run that records none warns of none.
func TestLongerThanTrainedIsWarnedOf(t *testing.T) {
	dir := writeRun(t, "learned")
	input := "ein Hund\nein Hund ein Hund\n"
	var out, errb bytes.Buffer
	if err := run([]string{"-model", dir, "-method", "greedy", "-max-len", "3"}, strings.NewReader(input), &out, &errb); err != nil || errb.Len() > 0 {
		t.Fatalf("a run that records no longest source: %v, warned %q", err, errb.String())
	}
	r, err := inference.Load(dir, "best")
	if err != nil {
		t.Fatal(err)
	}
	longest := len(r.Tokenizer.Encode("ein Hund")) + 1
	path := filepath.Join(dir, "best.safetensors")
	ck, err := checkpoint.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := ck.Model(tensor.Float32, nil)
	if err != nil {
		t.Fatal(err)
	}
	ck.Meta[data.LongestSourceKey] = strconv.Itoa(longest)
	if err := checkpoint.Save(path, ck.Config, params, ck.Meta); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run([]string{"-model", dir, "-method", "greedy", "-max-len", "3"}, strings.NewReader(input), &out, &errb); err != nil {
		t.Fatal(err)
	}
	long := len(r.Tokenizer.Encode("ein Hund ein Hund")) + 1
	want := "translate: standard input:2: a source of " + strconv.Itoa(long) + " tokens, longer than any the model was trained on (" + strconv.Itoa(longest) + "): its output may be poor\n"
	if errb.String() != want || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("warned %q, want %q; output %q", errb.String(), want, out.String())
	}
}
