package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/transformer-go/transformer/data"
)

// tryCommand is the command that tries the finished run of s from the
// working directory: cmd/translate on a few symbols of a synthetic task
// (as token ids), on the first validation sentences of files, or with a
// language model of text continuing their first words (whole sentences
// would be continued with little more than a full stop).
func tryCommand(s settings) string {
	cmd := translateCommand(self(os.Args[0])) + " -model " + s.Out
	if !s.layout().Aligned {
		cmd += " -method greedy"
	}
	if s.synthetic() {
		ids := make([]int, 0, 5)
		for id := data.NumReserved; id < data.NumReserved+min(5, s.Symbols, s.MaxLen); id++ {
			ids = append(ids, id)
		}
		return "echo " + data.FormatIDs(ids) + " | " + cmd
	}
	if s.text() {
		return firstLines(s.ValidTgt) + " | cut -d ' ' -f 1-" + strconv.Itoa(promptWords) + " | " + cmd + " -prompt"
	}
	return firstLines(s.ValidSrc) + " | " + cmd
}

// promptWords is how many first words of a sentence tryCommand prompts a
// language model with.
const promptWords = 2

// translateCommand is how to run cmd/translate beside this command, run
// as self: by its package path, or beside this binary.
func translateCommand(self string) string {
	if rest, ok := strings.CutSuffix(self, "/cmd/train"); ok {
		return rest + "/cmd/translate"
	}
	if rest, ok := strings.CutSuffix(self, "train"); ok {
		return rest + "translate"
	}
	return "translate"
}

// firstLines is the command that prints the first three lines of path,
// gzip-compressed or not.
func firstLines(path string) string {
	if strings.HasSuffix(path, ".gz") {
		return "zcat " + path + " | head -n 3"
	}
	return "head -n 3 " + path
}
