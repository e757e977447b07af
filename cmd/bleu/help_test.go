package main

import (
	"os"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/internal/cliflag"
)

func TestHelpExitsZero(t *testing.T) { cliflag.HelpExitsZero(t, "TestHelpExitsZero", main, "ref") }

// TestReadmeSaysBleuTakesNoDevice: bleu runs no model, so it has neither
// -device nor -precision, and the README's word on the commands that take
// them must leave it out.
func TestReadmeSaysBleuTakesNoDevice(t *testing.T) {
	var cfg config
	fs := newFlagSet(&cfg)
	if fs.Lookup("device") != nil || fs.Lookup("precision") != nil {
		t.Fatal("bleu has -device or -precision")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "Every command but `cmd/bleu` takes `-device cpu|cuda|auto` and `-precision float32|bf16`") {
		t.Error("the README does not say that every command but cmd/bleu takes -device and -precision")
	}
}
