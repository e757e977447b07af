package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/model"
)

// TestEnsemble translates with a run twice over, whose mean distribution
// is the run's own, so the hypotheses and their scores are the run's
// alone; and with a second model of other weights, which must change some.
func TestEnsemble(t *testing.T) {
	dir, same := writeRun(t, "sinusoidal"), writeRun(t, "sinusoidal")
	other := writeRunMaxLen(t, model.KindEncoderDecoder, "learned", 24, 40)
	input := "ein Hund spielt .\nzwei Katzen schlafen im Park .\neine Katze läuft .\n"
	alone := translateOK(t, input, "-model", dir, "-nbest", "2")
	twice := translateOK(t, input, "-model", dir+","+same, "-nbest", "2")
	if !slices.Equal(alone, twice) {
		t.Fatalf("a run twice over translates otherwise than the run:\n%s\nagainst\n%s", strings.Join(twice, "\n"), strings.Join(alone, "\n"))
	}
	mixed := translateOK(t, input, "-model", dir+","+other, "-nbest", "2")
	if slices.Equal(alone, mixed) {
		t.Fatalf("an ensemble with another model translates as the first alone:\n%s", strings.Join(mixed, "\n"))
	}
}

// TestCommaInDirectory loads a run whose directory's name holds a comma
// as one model, not as an ensemble of two missing ones.
func TestCommaInDirectory(t *testing.T) {
	dir := writeRun(t, "sinusoidal")
	comma := filepath.Join(t.TempDir(), "a,b")
	if err := os.Rename(dir, comma); err != nil {
		t.Fatal(err)
	}
	input := "ein Hund spielt .\n"
	if got, want := translateOK(t, input, "-model", comma), translateOK(t, input, "-model", writeRun(t, "sinusoidal")); !slices.Equal(got, want) {
		t.Fatalf("the run in %s translates %q, the same run elsewhere %q", comma, got, want)
	}
}

func TestEnsembleErrors(t *testing.T) {
	dir := writeRun(t, "sinusoidal")
	tmp := t.TempDir()
	in := writeFile(t, tmp, "in.de", "ein Hund .\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-model", dir + ",", "-input", in}, "directory 2 of the list is empty"},
		{[]string{"-model", dir + "," + dir, "-input", in, "-score", in}, "-score takes one model; -model names 2"},
		{[]string{"-model", dir + "," + dir, "-input", in, "-attention", tmp + "/a.png"}, "-attention takes one model"},
		{[]string{"-model", dir + "," + writeRunMaxLen(t, model.KindEncoderDecoder, "sinusoidal", 24, 10), "-input", in}, "their tokenizers differ (bpe.txt and vocab.txt, or spm.model)"},
		{[]string{"-model", dir + "," + writeSyntheticRun(t, model.KindEncoderDecoder), "-input", in}, "one was trained on text, the other on a synthetic task"},
		{[]string{"-model", dir + "," + writeRunOf(t, model.KindDecoderOnly, "sinusoidal"), "-input", in}, "model 2 of the ensemble is of kind decoder-only"},
		{[]string{"-model", dir + "," + tmp, "-input", in}, "best.safetensors"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		err := run(tc.args, strings.NewReader(""), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}
