package data

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pkg/errors"
)

// ParseIDs reads a line of token ids: decimal integers separated by white
// space, each from least to vocab-1 (UnkID too) of a vocabulary of vocab
// ids. A synthetic task's run is given its sentences with least
// NumReserved, ordinary tokens; a line that holds a sequence with its
// BOSID and EOSID takes least PadID+1. The error of a bad field names it by
// its place in the line and says which ids are allowed; a line without ids
// is an error.
func ParseIDs(line string, least, vocab int) ([]int, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, errors.Errorf("no token ids: want integers from %d to %d separated by spaces", least, vocab-1)
	}
	ids := make([]int, len(fields))
	for i, f := range fields {
		id, err := strconv.Atoi(f)
		switch {
		case err != nil:
			return nil, errors.Errorf("field %d, %q, is not a token id: want integers from %d to %d separated by spaces", i+1, clip(f), least, vocab-1)
		case id != UnkID && (id < least || id >= vocab):
			return nil, errors.Errorf("field %d, token id %d, is not a token of the vocabulary: want %d to %d%s", i+1, id, least, vocab-1, reserved(least))
		}
		ids[i] = id
	}
	return ids, nil
}

// reserved says, for a message of ParseIDs, what the ids below least are.
func reserved(least int) string {
	switch {
	case least > UnkID:
		return fmt.Sprintf(" (%d is unknown; %d to %d are reserved)", UnkID, PadID, UnkID-1)
	case least == PadID+1:
		return fmt.Sprintf(" (%d is padding)", PadID)
	}
	return ""
}

// FormatIDs writes ids as ParseIDs reads them: decimal integers separated
// by single spaces.
func FormatIDs(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(id))
	}
	return b.String()
}

// clip shortens a field for a message.
func clip(s string) string {
	const most = 20
	if r := []rune(s); len(r) > most {
		return string(r[:most]) + "…"
	}
	return s
}
