package main

import (
	"testing"

	"github.com/transformer-go/transformer/internal/cliflag"
)

func TestHelpExitsZero(t *testing.T) { cliflag.HelpExitsZero(t, "TestHelpExitsZero", main, "presets") }
