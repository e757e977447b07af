package data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"unicode/utf8"

	"github.com/pkg/errors"
)

// MaxLineBytes bounds a line's length: a longer line (or a file with no
// line breaks, such as /dev/zero) is an error naming the line, not an
// unbounded allocation.
const MaxLineBytes = 1 << 20

// errTooLong stops the reading of a line past MaxLineBytes.
var errTooLong = errors.New("line too long")

// gzipMagic is the two-byte header that starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// LineReader reads text line by line. A gzip-compressed input is
// recognised by its magic bytes and decompressed transparently. Lines are
// returned without their "\n" or "\r\n" terminator, must be valid UTF-8 and
// at most MaxLineBytes long; errors name the input and the line.
type LineReader struct {
	name string
	c    io.Closer // the file, if LineReader opened it
	gz   *gzip.Reader
	r    *bufio.Reader
	line int // 1-based number of the last line returned
}

// OpenLines opens the file at path for reading line by line.
func OpenLines(path string) (*LineReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.WithStack(err) // the error names path
	}
	lr, err := NewLineReader(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	lr.c = f
	return lr, nil
}

// NewLineReader reads r line by line; name stands for r in errors.
func NewLineReader(name string, r io.Reader) (*LineReader, error) {
	lr := &LineReader{name: name, r: bufio.NewReader(r)}
	magic, _ := lr.r.Peek(len(gzipMagic)) // a short input is simply not gzip
	if bytes.Equal(magic, gzipMagic) {
		gz, err := gzip.NewReader(lr.r)
		if err != nil {
			return nil, errors.Wrapf(err, "%s: gzip header", name)
		}
		lr.gz = gz
		lr.r = bufio.NewReader(gz)
	}
	return lr, nil
}

// Name is the name of the input in errors.
func (l *LineReader) Name() string { return l.name }

// Line is the number of the last line returned, from 1.
func (l *LineReader) Line() int { return l.line }

// Next returns the next line. ok is false once the input is exhausted.
func (l *LineReader) Next() (line string, ok bool, err error) {
	b, err := l.readLine()
	if err == io.EOF && len(b) == 0 {
		return "", false, nil
	}
	if err == errTooLong {
		return "", false, l.tooLong()
	}
	if err != nil && err != io.EOF {
		return "", false, l.readError(err)
	}
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if len(b) > MaxLineBytes {
		return "", false, l.tooLong()
	}
	l.line++
	if !utf8.Valid(b) {
		if err := l.gzipError(); err != nil {
			return "", false, err
		}
		return "", false, errors.Errorf("%s:%d: invalid UTF-8", l.name, l.line)
	}
	return string(b), true, nil
}

// readLine reads up to and including the next "\n", refusing to hold more
// than MaxLineBytes.
func (l *LineReader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLineBytes+2 { // the terminator may be "\r\n"
			return nil, errTooLong
		}
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// tooLong is the error of a line past MaxLineBytes.
func (l *LineReader) tooLong() error {
	return errors.Errorf("%s:%d: line longer than %d bytes", l.name, l.line+1, MaxLineBytes)
}

// readError describes a failed read, naming the input and the line.
func (l *LineReader) readError(err error) error {
	if l.gz != nil {
		return errors.Errorf("%s: corrupt gzip data after line %d: %v", l.name, l.line, err)
	}
	return errors.Wrapf(err, "%s:%d", l.name, l.line+1)
}

// gzipError reads the rest of a gzip input to tell bytes garbled by a
// corrupt stream from a file that is simply not UTF-8: it returns the
// stream's error, or nil.
func (l *LineReader) gzipError() error {
	if l.gz == nil {
		return nil
	}
	if _, err := io.Copy(io.Discard, l.r); err != nil {
		return errors.Errorf("%s: corrupt gzip data near line %d: %v", l.name, l.line, err)
	}
	return nil
}

// Close releases the input.
func (l *LineReader) Close() error {
	if l.gz != nil {
		l.gz.Close()
	}
	if l.c != nil {
		return l.c.Close()
	}
	return nil
}

// ReadLines calls fn with every line of the file at path and its 1-based
// number, stopping at the first error.
func ReadLines(path string, fn func(line string, n int) error) error {
	lr, err := OpenLines(path)
	if err != nil {
		return err
	}
	defer lr.Close()
	for {
		s, ok, err := lr.Next()
		if err != nil || !ok {
			return err
		}
		if err := fn(s, lr.line); err != nil {
			return err
		}
	}
}
