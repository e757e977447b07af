package main

import (
	"strconv"

	"github.com/transformer-go/transformer/data"
)

// codec turns an input line into token ids and ids into an output line: a
// run on files through its tokenizer, a synthetic task's run as token ids.
type codec interface {
	// encode is the ids of a line, without EOS.
	encode(line string) ([]int, error)
	// decode is the line of ids.
	decode(ids []int) string
	// tokens names each id, for a heat map's axes.
	tokens(ids []int) []string
}

// textCodec is a run's tokenizer.
type textCodec struct{ tok data.Tokenizer }

func (c textCodec) encode(line string) ([]int, error) { return c.tok.Encode(line), nil }

func (c textCodec) decode(ids []int) string { return c.tok.Decode(ids) }

func (c textCodec) tokens(ids []int) []string { return c.tok.Tokens(ids) }

// idCodec reads and writes a synthetic task's symbols as token ids, of a
// vocabulary of vocab ids: a line is decimal ids separated by spaces
// (data.ParseIDs).
type idCodec struct{ vocab int }

func (c idCodec) encode(line string) ([]int, error) {
	return data.ParseIDs(line, data.NumReserved, c.vocab)
}

func (c idCodec) decode(ids []int) string { return data.FormatIDs(ids) }

func (c idCodec) tokens(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(id)
	}
	return out
}
