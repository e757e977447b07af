package data_test

import (
	"fmt"
	"log"
	"math/rand/v2"
	"slices"

	"github.com/transformer-go/transformer/data"
)

func ExamplePretokenize() {
	pieces := data.Pretokenize("Zwei  Männer grillen Würstchen, draußen.")
	fmt.Printf("%q\n", pieces)
	fmt.Println(data.Detokenize(pieces))
	// Output:
	// ["▁Zwei" "▁Männer" "▁grillen" "▁Würstchen" "," "▁draußen" "."]
	// Zwei Männer grillen Würstchen, draußen.
}

func ExampleLearnBPE() {
	corpus := []string{"low low low low low", "lower lower", "newest newest newest newest newest newest", "widest widest widest"}
	bpe, err := data.LearnBPE(corpus, 4)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(bpe.Merges())
	toks := bpe.Encode("slowest")
	fmt.Printf("%q %q\n", toks, bpe.Decode(toks))
	// Output:
	// [{e s} {es t} {o w} {▁l ow}]
	// ["▁s" "l" "ow" "est"] "slowest"
}

// Example_pipeline turns sentence pairs into ids, batches them and turns
// ids back into text.
func Example_pipeline() {
	pairs := []data.Pair{
		{Src: "Ein Mann schläft.", Tgt: "A man sleeps."},
		{Src: "Ein Hund schläft.", Tgt: "A dog sleeps."},
	}
	var text []string
	for _, p := range pairs {
		text = append(text, p.Src, p.Tgt)
	}
	bpe, err := data.LearnBPE(text, 20)
	if err != nil {
		log.Fatal(err)
	}
	var toks [][]string
	for _, s := range text {
		toks = append(toks, bpe.Encode(s))
	}
	vocab, err := data.BuildVocab(toks, data.VocabOptions{})
	if err != nil {
		log.Fatal(err)
	}
	tok := data.BPETokenizer{BPE: bpe, Vocab: vocab}
	examples := data.EncodePairs(tok, pairs)
	fmt.Printf("%q\n", bpe.Encode(pairs[0].Src))

	batcher, err := data.NewBatcher(examples, data.BatchConfig{MaxTokens: 24, Buckets: []int{4, 8}})
	if err != nil {
		log.Fatal(err)
	}
	batches, err := batcher.EvalBatches(examples)
	if err != nil {
		log.Fatal(err)
	}
	b := batches[0]
	fmt.Printf("shape %+v, %d examples\n", b.Shape(), b.Examples)
	for r := range b.Rows {
		fmt.Println(b.Src[r*b.SrcLen:(r+1)*b.SrcLen], b.TgtIn[r*b.TgtLen:(r+1)*b.TgtLen], b.TgtOut[r*b.TgtLen:(r+1)*b.TgtLen])
	}
	fmt.Println(tok.Decode(b.TgtOut[:b.TgtLen]))
	// Output:
	// ["▁Ein" "▁M" "an" "n" "▁schläft" "."]
	// shape {Rows:3 SrcLen:8 TgtLen:8}, 2 examples
	// [8 16 5 6 9 4 2 0] [1 7 18 5 10 4 0 0] [7 18 5 10 4 2 0 0]
	// [8 15 14 6 11 9 4 2] [1 7 17 13 12 10 4 0] [7 17 13 12 10 4 2 0]
	// [2 0 0 0 0 0 0 0] [1 0 0 0 0 0 0 0] [0 0 0 0 0 0 0 0]
	// A man sleeps.
}

func ExampleNewTask() {
	task, err := data.NewTask("reverse", data.TaskConfig{Symbols: 10, MinLen: 1, MaxLen: 10})
	if err != nil {
		log.Fatal(err)
	}
	e := task.Sample(rand.New(rand.NewPCG(1, 2)))
	reversed := slices.Clone(e.Src)
	slices.Reverse(reversed)
	fmt.Println(task.VocabSize(), slices.Equal(e.Tgt, reversed), data.IsHeldOut(e.Src))

	_, err = data.NewTask("rotate", data.TaskConfig{Symbols: 10, MinLen: 1, MaxLen: 10})
	fmt.Println(err)
	// Output:
	// 14 true false
	// unknown task "rotate" (valid: copy, reverse, sort)
}

func ExampleBatcher_State() {
	task, err := data.NewTask("copy", data.TaskConfig{Symbols: 10, MinLen: 1, MaxLen: 10})
	if err != nil {
		log.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	examples := make([]data.Example, 1000)
	for i := range examples {
		examples[i] = task.Sample(rng)
	}
	cfg := data.BatchConfig{MaxTokens: 256, Seed: 7}
	b, err := data.NewBatcher(examples, cfg)
	if err != nil {
		log.Fatal(err)
	}
	b.Next()
	saved := b.State() // store with a checkpoint
	want := b.Next()

	resumed, err := data.NewBatcher(examples, cfg)
	if err != nil {
		log.Fatal(err)
	}
	if err := resumed.Restore(saved); err != nil {
		log.Fatal(err)
	}
	fmt.Println(slices.Equal(resumed.Next().Src, want.Src), b.Shapes())
	// Output:
	// true [{32 8 8} {16 16 16}]
}
