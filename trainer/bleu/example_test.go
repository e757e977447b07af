package bleu_test

import (
	"fmt"

	"github.com/transformer-go/transformer/trainer/bleu"
)

func ExampleCorpus() {
	hyps := []string{
		"Two young white men are outside near a lot of bushes.",
		"A little girl is climbing into a wooden play house.",
		"A man in a blue shirt stands on a ladder and cleans windows.",
		`The owner of the dog said "it's fine", really!`,
	}
	refs := []string{
		"Two young, White males are outside near many bushes.",
		"A little girl climbing into a wooden playhouse.",
		"A man in a blue shirt is standing on a ladder cleaning windows.",
		`The dog's owner said: "It's fine" -- really!`,
	}
	var opt bleu.Options
	score, err := bleu.Corpus(hyps, refs, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(score)
	fmt.Println(opt.Signature())

	var chrfOpt bleu.ChrFOptions
	chrf, err := bleu.ChrF(hyps, refs, chrfOpt)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(chrf)
	fmt.Println(chrfOpt.Signature())
	// Output:
	// BLEU = 28.21 68.0/41.3/21.4/10.5 (BP = 1.000 ratio = 1.087 hyp_len = 50 ref_len = 46)
	// nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0
	// chrF2 = 66.10
	// nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0
}
