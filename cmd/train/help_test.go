package main

import (
	"testing"

	"github.com/transformer-go/transformer/internal/cliflag"
)

func TestHelpExitsZero(t *testing.T) {
	cliflag.HelpExitsZero(t, "TestHelpExitsZero", main, "optimizer")
}

// TestSelfWorksFromHere checks the command that hints (the resume after an
// interruption) name: one that works from the user's directory.
func TestSelfWorksFromHere(t *testing.T) {
	tests := map[string]string{
		"/tmp/go-build1234/b001/exe/train": "go run github.com/transformer-go/transformer/cmd/train",
		"train":                            "train",
		"./bin/train":                      "./bin/train",
		"/nowhere/on/path/train":           "/nowhere/on/path/train",
	}
	for arg0, want := range tests {
		if got := self(arg0); got != want {
			t.Errorf("self(%q) = %q, want %q", arg0, got, want)
		}
	}
}
