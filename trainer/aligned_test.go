package trainer

import (
	"strings"
	"testing"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model"
)

// TestEncoderOnlyRefusesUnalignedExamples: an encoder-only model is given
// examples whose source and target differ in length but whose padded
// batches have one shape; New names the example.
func TestEncoderOnlyRefusesUnalignedExamples(t *testing.T) {
	enc := kindFixture(t, model.KindEncoderOnly, "reverse")
	train := append([]data.Example(nil), enc.data.Train.Examples()...)
	train[6] = data.Example{Src: []int{5, 6, 7}, Tgt: []int{5, 6}}
	b, err := data.NewBatcher(train, data.BatchConfig{MaxTokens: 192, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	d := enc.data
	d.Train = b
	_, err = New(enc.m, enc.params, d, options(t.TempDir(), 1), nil)
	if err == nil || !strings.Contains(err.Error(), "training example 7: a source of 3 tokens and a target of 2") {
		t.Fatalf("an unaligned training example: %v", err)
	}
	valid, err := enc.data.Train.EvalBatches([]data.Example{{Src: []int{5}, Tgt: []int{5}}, {Src: []int{5, 6, 7, 8}, Tgt: []int{5}}})
	if err != nil {
		t.Fatal(err)
	}
	d = enc.data
	d.Valid = valid
	_, err = New(enc.m, enc.params, d, options(t.TempDir(), 1), nil)
	if err == nil || !strings.Contains(err.Error(), "(example 2): a source of 4 tokens and a target of 1") {
		t.Fatalf("an unaligned validation example: %v", err)
	}
}
