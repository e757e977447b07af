package data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/pkg/errors"
)

// gzipMagic is the two-byte header that starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// lineReader reads a text file line by line. A gzip-compressed file is
// recognised by its magic bytes and decompressed transparently. Lines are
// returned without their "\n" or "\r\n" terminator and must be valid UTF-8.
type lineReader struct {
	name string
	file *os.File
	gz   *gzip.Reader
	r    *bufio.Reader
	line int // 1-based number of the last line returned
}

// openLines opens path for reading line by line.
func openLines(path string) (*lineReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "open %s", path)
	}
	lr := &lineReader{name: path, file: f, r: bufio.NewReader(f)}
	magic, _ := lr.r.Peek(len(gzipMagic)) // a short file is simply not gzip
	if bytes.Equal(magic, gzipMagic) {
		gz, err := gzip.NewReader(lr.r)
		if err != nil {
			f.Close()
			return nil, errors.Wrapf(err, "%s: gzip header", path)
		}
		lr.gz = gz
		lr.r = bufio.NewReader(gz)
	}
	return lr, nil
}

// next returns the next line. ok is false once the file is exhausted.
func (l *lineReader) next() (line string, ok bool, err error) {
	s, err := l.r.ReadString('\n')
	if err == io.EOF && s == "" {
		return "", false, nil
	}
	if err != nil && err != io.EOF {
		return "", false, errors.Wrapf(err, "%s:%d", l.name, l.line+1)
	}
	l.line++
	s = strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
	if !utf8.ValidString(s) {
		return "", false, errors.Errorf("%s:%d: invalid UTF-8", l.name, l.line)
	}
	return s, true, nil
}

// Close releases the file.
func (l *lineReader) Close() error {
	if l.gz != nil {
		l.gz.Close()
	}
	return l.file.Close()
}

// readLines calls fn with every line of path and its 1-based number,
// stopping at the first error.
func readLines(path string, fn func(line string, n int) error) error {
	lr, err := openLines(path)
	if err != nil {
		return err
	}
	defer lr.Close()
	for {
		s, ok, err := lr.next()
		if err != nil || !ok {
			return err
		}
		if err := fn(s, lr.line); err != nil {
			return err
		}
	}
}
