package data

import (
	"strconv"
	"strings"

	"github.com/pkg/errors"
)

// ParseIDs reads a line of token ids, as a synthetic task's run is given
// its sentences: decimal integers separated by white space, each an
// ordinary token of a vocabulary of vocab ids (NumReserved to vocab-1; UnkID
// too). The error of a bad field names it by its place in the line and says
// which ids are allowed; a line without ids is an error.
func ParseIDs(line string, vocab int) ([]int, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, errors.Errorf("no token ids: want integers from %d to %d separated by spaces", NumReserved, vocab-1)
	}
	ids := make([]int, len(fields))
	for i, f := range fields {
		id, err := strconv.Atoi(f)
		switch {
		case err != nil:
			return nil, errors.Errorf("field %d, %q, is not a token id: want integers from %d to %d separated by spaces", i+1, clip(f), NumReserved, vocab-1)
		case id != UnkID && (id < NumReserved || id >= vocab):
			return nil, errors.Errorf("field %d, token id %d, is not a token of the vocabulary: want %d to %d (%d is unknown; %d to %d are reserved)",
				i+1, id, NumReserved, vocab-1, UnkID, PadID, EOSID)
		}
		ids[i] = id
	}
	return ids, nil
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
