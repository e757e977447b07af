// Command ids writes the BPE-encoded Multi30k that scripts/sweep/sweep.py
// trains on: for each merge count, the joint BPE learned as cmd/train learns
// it, its vocabulary (vocab.txt, one token per line, the line number its id)
// and the ids of the training and validation pairs (train.src, train.tgt,
// val.src, val.tgt, one sentence per line).
//
// Usage: go run ./scripts/sweep/ids DATA OUT MERGES...
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: ids DATA OUT MERGES...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3:]); err != nil {
		fmt.Fprintln(os.Stderr, "ids:", err)
		os.Exit(1)
	}
}

func run(dir, out string, merges []string) error {
	counts := make([]int, len(merges))
	for i, m := range merges {
		n, err := strconv.Atoi(m)
		if err != nil || n < 1 {
			return errors.Errorf("merges %q: want a positive whole number", m)
		}
		counts[i] = n
	}
	// As cmd/train reads them: training sentences of at most 100 words.
	train, _, err := data.ReadParallel(filepath.Join(dir, "train.de.gz"), filepath.Join(dir, "train.en.gz"), data.ReadOptions{MaxLen: 100})
	if err != nil {
		return err
	}
	valid, _, err := data.ReadParallel(filepath.Join(dir, "val.de.gz"), filepath.Join(dir, "val.en.gz"), data.ReadOptions{})
	if err != nil {
		return err
	}
	for _, n := range counts {
		if err := write(filepath.Join(out, "bpe"+strconv.Itoa(n)), n, train, valid); err != nil {
			return err
		}
	}
	return nil
}

// write learns n merges on train's sentences and writes the vocabulary and
// the ids of both splits to dir.
func write(dir string, n int, train, valid []data.Pair) error {
	var sentences []string
	for _, p := range train {
		sentences = append(sentences, p.Src, p.Tgt)
	}
	bpe, err := data.LearnBPE(sentences, n)
	if err != nil {
		return err
	}
	var seqs [][]string
	for _, p := range train {
		seqs = append(seqs, bpe.Encode(p.Src), bpe.Encode(p.Tgt))
	}
	vocab, err := data.BuildVocab(seqs, data.VocabOptions{})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tok := data.BPETokenizer{BPE: bpe, Vocab: vocab}
	for _, split := range []struct {
		name  string
		pairs []data.Pair
	}{{"train", train}, {"val", valid}} {
		var src, tgt strings.Builder
		for _, e := range data.EncodePairs(tok, split.pairs) {
			src.WriteString(data.FormatIDs(e.Src) + "\n")
			tgt.WriteString(data.FormatIDs(e.Tgt) + "\n")
		}
		for ext, b := range map[string]string{".src": src.String(), ".tgt": tgt.String()} {
			if err := os.WriteFile(filepath.Join(dir, split.name+ext), []byte(b), 0o644); err != nil {
				return errors.Wrap(err, "ids")
			}
		}
	}
	fmt.Println(dir, "vocabulary", vocab.Len())
	return vocab.WriteFile(filepath.Join(dir, "vocab.txt"))
}
