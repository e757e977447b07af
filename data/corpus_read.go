package data

import (
	"fmt"
	"strings"

	"github.com/pkg/errors"
)

// ReadParallel reads aligned sentence files: line n of tgtPath translates
// line n of srcPath. Either file may be gzip-compressed (recognised by its
// magic bytes). Files of different line counts and invalid UTF-8 are errors
// naming the files and line; pairs are filtered as opt says.
func ReadParallel(srcPath, tgtPath string, opt ReadOptions) ([]Pair, ReadStats, error) {
	return readParallel(srcPath, tgtPath, &pairFilter{opt: opt})
}

// PairLine locates pair i (from 0) of those ReadParallel(srcPath, tgtPath,
// opt) returns, for a message: "SRC:LINE and TGT:LINE". It reads the files
// again, up to that pair.
func PairLine(srcPath, tgtPath string, opt ReadOptions, i int) (string, error) {
	f := &pairFilter{opt: opt, find: i + 1}
	_, _, err := readParallel(srcPath, tgtPath, f)
	switch {
	case err == errFound:
		return f.found, nil
	case err == nil:
		return "", errors.Errorf("%s and %s hold %d pairs, not %d", srcPath, tgtPath, f.stats.Kept, i+1)
	}
	return "", err
}

// readParallel is ReadParallel through the filter f.
func readParallel(srcPath, tgtPath string, f *pairFilter) ([]Pair, ReadStats, error) {
	src, err := OpenLines(srcPath)
	if err != nil {
		return nil, ReadStats{}, err
	}
	defer src.Close()
	tgt, err := OpenLines(tgtPath)
	if err != nil {
		return nil, ReadStats{}, err
	}
	defer tgt.Close()
	for {
		s, sok, err := src.Next()
		if err != nil {
			return nil, f.stats, err
		}
		t, tok, err := tgt.Next()
		if err != nil {
			return nil, f.stats, err
		}
		if sok != tok {
			return nil, f.stats, lengthMismatch(src, tgt, sok)
		}
		if !sok {
			return f.result(srcPath + " and " + tgtPath)
		}
		where := func() string { return fmt.Sprintf("%s:%d and %s:%d", srcPath, src.line, tgtPath, tgt.line) }
		if err := f.add(Pair{s, t}, where); err != nil {
			return nil, f.stats, err
		}
	}
}

// ReadText reads plain text, one sentence per line (gzip allowed), for a
// language model: each line is the target of a Pair whose source is empty
// (data.BatchConfig.Join batches them as the target alone). Empty lines are
// skipped, long ones as opt says; invalid UTF-8 is an error naming the file
// and line.
func ReadText(path string, opt ReadOptions) ([]Pair, ReadStats, error) {
	f := pairFilter{opt: opt, text: true}
	err := ReadLines(path, func(line string, n int) error {
		return f.add(Pair{Tgt: line}, func() string { return fmt.Sprintf("%s:%d", path, n) })
	})
	if err != nil {
		return nil, f.stats, err
	}
	return f.result(path)
}

// lengthMismatch describes files of different line counts; srcLonger says
// which one still had a line.
func lengthMismatch(src, tgt *LineReader, srcLonger bool) error {
	longer, shorter := src, tgt
	if !srcLonger {
		longer, shorter = tgt, src
	}
	return errors.Errorf("%s ends after line %d but %s has line %d: line counts differ",
		shorter.name, shorter.line, longer.name, longer.line)
}

// ReadTSV reads pairs from a file (optionally gzip-compressed) with one
// pair per line, source and target separated by a single tab. A blank line
// is an empty pair; any other line without exactly one tab, and invalid
// UTF-8, are errors naming the file and line. Pairs are filtered as opt says.
func ReadTSV(path string, opt ReadOptions) ([]Pair, ReadStats, error) {
	f := pairFilter{opt: opt}
	err := ReadLines(path, func(line string, n int) error {
		src, tgt, ok := strings.Cut(line, "\t")
		if strings.TrimSpace(line) != "" && (!ok || strings.Contains(tgt, "\t")) {
			return errors.Errorf("%s:%d: want source and target separated by one tab, got %d fields",
				path, n, strings.Count(line, "\t")+1)
		}
		return f.add(Pair{src, tgt}, func() string { return fmt.Sprintf("%s:%d", path, n) })
	})
	if err != nil {
		return nil, f.stats, err
	}
	return f.result(path)
}
