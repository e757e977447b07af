// Package srcflags holds the -max-src-len and -long flags of the commands
// that read sentences for a model (cmd/translate, cmd/score), and the
// bound they set on its sources and targets.
package srcflags

import (
	"flag"
	"fmt"
	"io"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
)

// SinusoidalSourceLimit caps the default source length of a model with
// sinusoidal positions, whose max_len costs no weights and may be as high
// as MaxMaxLen.
const SinusoidalSourceLimit = 1024

// MaxBatch bounds the -batch of the commands that read sentences for a
// model (cmd/translate, cmd/score), which read their input a batch at a
// time: a batch is held in memory whole.
const MaxBatch = 1 << 16

// Limit is the most tokens a source (or prompt) of a model of config c may
// have by default: c.MaxLen, and with sinusoidal positions at most
// SinusoidalSourceLimit.
func Limit(c model.Config) int {
	if c.Positions == layers.PositionsSinusoid {
		return min(c.MaxLen, SinusoidalSourceLimit)
	}
	return c.MaxLen
}

// Flags are the -max-src-len and -long flags.
type Flags struct {
	// MaxSrcLen is the most tokens of a source, 0 for Limit.
	MaxSrcLen int
	// Long says what a longer source gets: "error" or "truncate".
	Long string
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.IntVar(&f.MaxSrcLen, "max-src-len", 0, fmt.Sprintf(
		"longest source in tokens, with the EOS (or a prompt's BOS) the model reads (0: the model's max_len, at most %d with sinusoidal positions)",
		SinusoidalSourceLimit))
	fs.StringVar(&f.Long, "long", "error", "a source longer than -max-src-len: error, or truncate (with a warning)")
}

// Check reports flag values that no model takes.
func (f Flags) Check() error {
	if f.Long != "error" && f.Long != "truncate" {
		return errors.Errorf("-long %q: want error or truncate", f.Long)
	}
	if f.MaxSrcLen < 0 {
		return errors.Errorf("-max-src-len %d: want 0 (the default) or more", f.MaxSrcLen)
	}
	return nil
}

// Bound is the bound the flags set for a model of config c, whose warnings
// go to warn, each starting with "prog: ".
func (f Flags) Bound(c model.Config, prog string, warn io.Writer) (Bound, error) {
	b := Bound{Max: Limit(c), MaxLen: c.MaxLen, Truncate: f.Long == "truncate", Prog: prog, Warn: warn}
	if f.MaxSrcLen > c.MaxLen {
		return b, errors.Errorf("-max-src-len %d: the model takes at most %d tokens (its max_len)", f.MaxSrcLen, c.MaxLen)
	}
	if f.MaxSrcLen > 0 {
		b.Max = f.MaxSrcLen
	}
	b.MaxTgt = max(Limit(c), b.Max)
	return b, nil
}

// Bound bounds the sources a command reads (Flags.Bound) and its targets.
type Bound struct {
	// Max is the most tokens of a source, MaxLen the model's max_len.
	Max, MaxLen int
	// MaxTgt is the most tokens of a target: Limit, or Max where that is
	// more (with sinusoidal positions, -max-src-len raises both), so
	// that a command can check its largest batch's memory before any.
	MaxTgt int
	// Truncate cuts a longer source to Max tokens instead of refusing it,
	// and writes a warning to Warn (if not nil) starting with "Prog: ".
	Truncate bool
	Prog     string
	Warn     io.Writer
}

// Source returns how many of the n tokens of the source at where
// ("FILE:LINE") to keep: n, or Max with a warning if Truncate; a source of
// more than Max tokens is otherwise an error.
func (b Bound) Source(where string, n int) (int, error) {
	if n <= b.Max {
		return n, nil
	}
	if b.Truncate {
		if b.Warn != nil {
			fmt.Fprintf(b.Warn, "%s: %s: %d tokens, truncated to %d (-max-src-len)\n", b.Prog, where, n, b.Max)
		}
		return b.Max, nil
	}
	raise := ""
	if b.Max < b.MaxLen {
		raise = fmt.Sprintf(", or raise -max-src-len (the model takes up to %d)", b.MaxLen)
	}
	return 0, errors.Errorf("%s: %d tokens, more than -max-src-len %d; give -long truncate to cut such lines%s", where, n, b.Max, raise)
}

// Target refuses a target at where of n tokens, BOS and EOS included, if
// n is more than MaxTgt: targets are never cut.
func (b Bound) Target(where string, n int) error {
	switch {
	case n <= b.MaxTgt:
		return nil
	case b.MaxTgt == b.MaxLen:
		return errors.Errorf("%s: a target of %d tokens, more than the model's max_len %d (targets are never truncated)", where, n, b.MaxLen)
	}
	return errors.Errorf("%s: a target of %d tokens, more than %d, the most with sinusoidal positions unless -max-src-len is higher (the model takes up to %d; targets are never truncated)",
		where, n, b.MaxTgt, b.MaxLen)
}
