package bleu

import (
	"io"

	"github.com/transformer-go/transformer/data"
)

// ReadLines reads one sentence a line from r the way sacreBLEU's command
// line reads its inputs: lines end at "\n", and trailing whitespace
// (including "\r") is removed. A gzip-compressed r is decompressed. name is
// used in errors, which give the line number of any line that is not valid
// UTF-8 or is longer than data.MaxLineBytes.
func ReadLines(r io.Reader, name string) ([]string, error) {
	lr, err := data.NewLineReader(name, r)
	if err != nil {
		return nil, err
	}
	return readAll(lr)
}

// ReadFile reads the sentences of the named file with ReadLines.
func ReadFile(path string) ([]string, error) {
	lr, err := data.OpenLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	return readAll(lr)
}

// readAll reads every line of lr, trimmed as sacreBLEU trims it.
func readAll(lr *data.LineReader) ([]string, error) {
	var lines []string
	for {
		line, ok, err := NextLine(lr)
		if err != nil || !ok {
			return lines, err
		}
		lines = append(lines, line)
	}
}

// NextLine reads the next line of lr as ReadLines does, its trailing
// whitespace removed; false at the end.
func NextLine(lr *data.LineReader) (string, bool, error) {
	line, ok, err := lr.Next()
	return pyTrimRight(line), ok, err
}
