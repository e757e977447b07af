package model_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeCodeIsExamples checks that every Go block of the README and of
// docs/*.md is an excerpt of an Example that runs in go test: its lines,
// their white space aside (gofmt aligns comments by block), appear in that
// order in one of the external example files (lines in between, such as
// error checks, may be left out of the README).
func TestReadmeCodeIsExamples(t *testing.T) {
	var examples []string
	for _, pattern := range []string{"*/example_test.go", "*/*/example_test.go"} {
		files, err := filepath.Glob(filepath.Join("..", pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(text), "_test\n") {
				continue // not an external test package
			}
			examples = append(examples, string(text))
		}
	}
	docs, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range append([]string{filepath.Join("..", "README.md")}, docs...) {
		md, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks := goBlocks(string(md))
		if len(blocks) == 0 && filepath.Base(path) == "README.md" {
			t.Fatal("the README has no Go code")
		}
		for _, b := range blocks {
			if !excerptOfAny(b, examples) {
				t.Errorf("%s: code is not an excerpt of an example:\n%s", path, b)
			}
		}
	}
}

// goBlocks are the ```go blocks of markdown text.
func goBlocks(md string) []string {
	var blocks []string
	for _, part := range strings.Split(md, "```go\n")[1:] {
		end := strings.Index(part, "```")
		if end < 0 {
			end = len(part)
		}
		blocks = append(blocks, part[:end])
	}
	return blocks
}

// excerptOfAny reports whether block is an excerpt (allFound) of one of
// the texts.
func excerptOfAny(block string, texts []string) bool {
	for _, text := range texts {
		if allFound(block, strings.Split(text, "\n")) {
			return true
		}
	}
	return false
}

// allFound reports whether every non-empty line of block is found, in
// order, in lines, white space aside.
func allFound(block string, lines []string) bool {
	i := 0
	for _, want := range strings.Split(block, "\n") {
		want = squeeze(want)
		if want == "" {
			continue
		}
		for i < len(lines) && squeeze(lines[i]) != want {
			i++
		}
		if i == len(lines) {
			return false
		}
		i++
	}
	return true
}

// squeeze is line without its indentation, its other white space runs
// made one space.
func squeeze(line string) string { return strings.Join(strings.Fields(line), " ") }
