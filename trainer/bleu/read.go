package bleu

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/pkg/errors"
)

// ReadLines reads one sentence a line from r the way sacreBLEU's command
// line reads its inputs: lines end at "\n", and trailing whitespace
// (including "\r") is removed. name is used in errors, which give the line
// number of any line that is not valid UTF-8.
func ReadLines(r io.Reader, name string) ([]string, error) {
	br := bufio.NewReader(r)
	var lines []string
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadString('\n')
		if line != "" {
			if !utf8.ValidString(line) {
				return nil, errors.Errorf("%s:%d: invalid UTF-8", name, lineNo)
			}
			lines = append(lines, pyTrimRight(line))
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return nil, errors.Wrapf(err, "reading %s after line %d", name, lineNo-1)
		}
	}
}

// ReadFile reads the sentences of the named file with ReadLines,
// decompressing it first if its name ends in ".gz".
func ReadFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrap(err, "opening sentences")
	}
	defer f.Close()
	if !strings.HasSuffix(path, ".gz") {
		return ReadLines(f, path)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, errors.Wrapf(err, "reading %s", path)
	}
	defer zr.Close()
	return ReadLines(zr, path)
}
