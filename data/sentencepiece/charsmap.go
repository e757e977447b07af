package sentencepiece

import (
	"encoding/binary"
	"strings"

	"github.com/pkg/errors"
)

// charsmap is a normalizer's precompiled rules (NormalizerSpec's
// precompiled_charsmap), which is what SentencePiece applies, whatever
// rule set the spec names: a darts-clone double-array trie over the bytes
// of the rules' sources, whose values are offsets of the rules' NUL-ended
// replacements in repl.
type charsmap struct {
	units []uint32
	repl  string
}

// A double-array unit, as darts-clone lays it out.
func hasLeaf(u uint32) bool  { return u>>8&1 == 1 }
func value(u uint32) uint32  { return u & (1<<31 - 1) }
func label(u uint32) uint32  { return u & (1<<31 | 0xFF) }
func offset(u uint32) uint32 { return u >> 10 << ((u & (1 << 9)) >> 6) }

// parseCharsmap reads a precompiled charsmap: a little-endian uint32, the
// size of the trie in bytes, the trie, then the replacements. It checks
// every rule a lookup can reach, so that a broken one is refused here,
// never met while normalizing.
func parseCharsmap(blob []byte) (*charsmap, error) {
	if len(blob) <= 4 {
		return nil, errors.Errorf("precompiled_charsmap: %d bytes, too short for its header", len(blob))
	}
	size := binary.LittleEndian.Uint32(blob)
	if uint64(size) > uint64(len(blob)-4) || size < 4 {
		return nil, errors.Errorf("precompiled_charsmap: its header gives the trie %d bytes, of the %d that follow it", size, len(blob)-4)
	}
	c := &charsmap{units: make([]uint32, size/4), repl: string(blob[4+size:])}
	for i := range c.units {
		c.units[i] = binary.LittleEndian.Uint32(blob[4+4*i:])
	}
	if err := c.check(); err != nil {
		return nil, errors.Wrap(err, "precompiled_charsmap")
	}
	return c, nil
}

// check walks every unit a lookup can reach, whatever the text (a NUL
// byte may lead into an empty unit, and from there on), and refuses a
// rule whose replacement lies outside repl or lacks its NUL.
func (c *charsmap) check() error {
	seen := make([]bool, len(c.units))
	stack := []uint32{offset(c.units[0])}
	for len(stack) > 0 {
		base := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for b := range uint32(256) {
			child, ok := c.child(base, b)
			if !ok || seen[child] {
				continue
			}
			seen[child] = true
			next := child ^ offset(c.units[child])
			if hasLeaf(c.units[child]) {
				if err := c.checkLeaf(next); err != nil {
					return err
				}
			}
			stack = append(stack, next)
		}
	}
	return nil
}

// child is the unit of the child of the node whose children start at
// base, along byte b, if there is one.
func (c *charsmap) child(base, b uint32) (uint32, bool) {
	id := base ^ b
	if uint64(id) >= uint64(len(c.units)) || label(c.units[id]) != b {
		return 0, false
	}
	return id, true
}

// checkLeaf checks the rule whose leaf unit is at id: its replacement
// lies in repl and ends with a NUL.
func (c *charsmap) checkLeaf(id uint32) error {
	if uint64(id) >= uint64(len(c.units)) {
		return errors.Errorf("a rule's value at unit %d, past the %d units", id, len(c.units))
	}
	v := value(c.units[id])
	if uint64(v) >= uint64(len(c.repl)) || strings.IndexByte(c.repl[v:], 0) < 0 {
		return errors.Errorf("a rule's replacement at offset %d, outside the %d bytes of NUL-ended replacements", v, len(c.repl))
	}
	return nil
}

// longest is the replacement of the longest rule that starts s and the
// length of its source, or 0 if no rule does: darts-clone's
// commonPrefixSearch, as SentencePiece's normalizer uses it.
func (c *charsmap) longest(s string) (string, int) {
	base, n, v := offset(c.units[0]), 0, uint32(0)
	for i := 0; i < len(s); i++ {
		id, ok := c.child(base, uint32(s[i]))
		if !ok {
			break
		}
		base = id ^ offset(c.units[id])
		if hasLeaf(c.units[id]) && uint64(base) < uint64(len(c.units)) {
			n, v = i+1, value(c.units[base])
		}
	}
	if n == 0 {
		return "", 0
	}
	r := c.repl[v:]
	return r[:strings.IndexByte(r, 0)], n
}
