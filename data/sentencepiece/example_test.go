package sentencepiece_test

import (
	"fmt"
	"log"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/data/sentencepiece"
)

// A model trained by spm_train encodes and decodes text as spm_encode and
// spm_decode do; as a data.Tokenizer its ids start with the reserved ones.
func Example() {
	m, err := sentencepiece.Load("testdata/bpe.model")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Type(), m.Len())
	fmt.Printf("%q\n", m.Pieces("The  model's ﬁle: 漢"))
	ids := m.IDs("The  model's ﬁle: 漢")
	fmt.Println(ids)
	text, err := m.DecodeIDs(ids)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", text)

	var tok data.Tokenizer = sentencepiece.NewTokenizer(m)
	ids = tok.Encode("The  model's ﬁle: 漢")
	fmt.Println(tok.Len(), ids)
	fmt.Printf("%q\n", tok.Decode(append(append([]int{data.BOSID}, ids...), data.EOSID, data.PadID)))
	// Output:
	// bpe 600
	// ["▁The" "▁model" "'" "s" "▁f" "ile" ":" "▁" "漢"]
	// [224 181 578 545 31 266 581 541 0]
	// "The model's file:  ⁇ "
	// 601 [225 182 579 546 32 267 582 542 3]
	// "The model's file:  ⁇ "
}
