package sentencepiece

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/transformer-go/transformer/data/sentencepiece/internal/modelpb"
)

// readProto parses testdata/NAME.model into its ModelProto.
func readProto(t *testing.T, name string) *modelpb.ModelProto {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".model"))
	if err != nil {
		t.Fatal(err)
	}
	var pb modelpb.ModelProto
	if err := proto.Unmarshal(raw, &pb); err != nil {
		t.Fatal(err)
	}
	return &pb
}

// marshal serializes pb.
func marshal(t *testing.T, pb *modelpb.ModelProto) []byte {
	t.Helper()
	raw, err := proto.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestParseRefuses checks that broken models are refused, each with an
// error that says what is wrong.
func TestParseRefuses(t *testing.T) {
	unigram := func(t *testing.T) *modelpb.ModelProto { return readProto(t, "unigram") }
	bpe := func(t *testing.T) *modelpb.ModelProto { return readProto(t, "bpe") }
	identity := func(t *testing.T) *modelpb.ModelProto { return readProto(t, "identity") }
	tests := []struct {
		name, want string
		model      func(t *testing.T) *modelpb.ModelProto
		edit       func(pb *modelpb.ModelProto)
	}{
		{"empty piece", "piece 10 (\"\"): empty piece", unigram, func(pb *modelpb.ModelProto) { pb.Pieces[10].Piece = proto.String("") }},
		{"NUL", "NUL byte", unigram, func(pb *modelpb.ModelProto) { pb.Pieces[300].Piece = proto.String("a\x00b") }},
		{"twice", "defined twice (first as piece 299)", unigram, func(pb *modelpb.ModelProto) { pb.Pieces[300].Piece = pb.Pieces[299].Piece }},
		{"no unknown", "no unknown piece", unigram, func(pb *modelpb.ModelProto) { pb.Pieces[0].Type = modelpb.ModelProto_SentencePiece_CONTROL.Enum() }},
		{"two unknowns", "a second unknown piece (the first is piece 0)", unigram, func(pb *modelpb.ModelProto) {
			pb.Pieces[3].Type = modelpb.ModelProto_SentencePiece_UNKNOWN.Enum()
		}},
		{"bytes without fallback", "byte_fallback is not set", unigram, func(pb *modelpb.ModelProto) { pb.TrainerSpec.ByteFallback = proto.Bool(false) }},
		{"a byte piece missing", "there is no byte piece <0x41>", unigram, func(pb *modelpb.ModelProto) { pb.Pieces = append(pb.Pieces[:7+0x41], pb.Pieces[8+0x41:]...) }},
		{"malformed byte piece", "a byte piece that is not <0xXX>", unigram, func(pb *modelpb.ModelProto) { pb.Pieces[7].Piece = proto.String("<0x0g>") }},
		{"lower-case byte piece", "a byte piece that is not <0xXX>", unigram, func(pb *modelpb.ModelProto) { pb.Pieces[7+0xab].Piece = proto.String("<0xab>") }},
		{"piece type", "unknown piece type 9", unigram, func(pb *modelpb.ModelProto) { pb.Pieces[300].Type = modelpb.ModelProto_SentencePiece_Type(9).Enum() }},
		{"word model", "model_type WORD: only unigram and bpe", unigram, func(pb *modelpb.ModelProto) { pb.TrainerSpec.ModelType = modelpb.TrainerSpec_WORD.Enum() }},
		{"unigram without pieces", "a unigram model without normal", identity, func(pb *modelpb.ModelProto) { pb.Pieces = pb.Pieces[:1] }},
		{"self-test", "1 of the 20 self-test samples fail", unigram, func(pb *modelpb.ModelProto) { pb.SelfTestData.Samples[3].Expected = proto.String("▁no") }},
		{"bpe control character", "a control piece that a bpe model makes of text", bpe, func(pb *modelpb.ModelProto) { pb.Pieces[3].Piece = proto.String("x") }},
		{"bpe control piece", "a control piece that a bpe model makes of text", bpe, func(pb *modelpb.ModelProto) { pb.Pieces[3].Piece = pb.Pieces[100].Piece }},
		{"charsmap header", "precompiled_charsmap: 3 bytes, too short", unigram, func(pb *modelpb.ModelProto) { pb.NormalizerSpec.PrecompiledCharsmap = []byte{1, 2, 3} }},
		{"charsmap trie size", "its header gives the trie", unigram, func(pb *modelpb.ModelProto) {
			pb.NormalizerSpec.PrecompiledCharsmap = append([]byte{0xff, 0xff, 0, 0}, pb.NormalizerSpec.PrecompiledCharsmap[4:1000]...)
		}},
		{"charsmap replacements cut", "outside the", unigram, func(pb *modelpb.ModelProto) {
			c := pb.NormalizerSpec.PrecompiledCharsmap
			pb.NormalizerSpec.PrecompiledCharsmap = c[:4+binary.LittleEndian.Uint32(c)+100]
		}},
		{"denormalizer", "denormalizer_spec: precompiled_charsmap", unigram, func(pb *modelpb.ModelProto) {
			pb.DenormalizerSpec = &modelpb.NormalizerSpec{PrecompiledCharsmap: []byte{9, 0, 0, 0, 1}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pb := tt.model(t)
			tt.edit(pb)
			_, err := Parse(marshal(t, pb))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestParseRefusesBytes checks that bytes that are no model are refused.
func TestParseRefusesBytes(t *testing.T) {
	raw, err := os.ReadFile("testdata/unigram.model")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, want string
		raw        []byte
	}{
		{"text", "not a SentencePiece model", []byte("this is not a model\n")},
		{"cut short", "not a SentencePiece model", raw[:len(raw)/2]},
		{"too many pieces", "more than 4194304 pieces", bytes.Repeat([]byte{0x0a, 0}, MaxPieces+1)},
		{"too large", "more than the 67108864 a SentencePiece model may take", make([]byte, MaxFileBytes+1)},
		{"nothing", "no unknown piece", nil},
	}
	for _, tt := range tests {
		if _, err := Parse(tt.raw); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one saying %q", tt.name, err, tt.want)
		}
	}
}

// TestLoadRefuses checks that Load names the file it refuses.
func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.model")
	if err := os.WriteFile(bad, []byte("no model"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.model")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{filepath.Join(dir, "missing.model"), "missing.model: no such file"},
		{dir, "is not a regular file"},
		{bad, bad + ": not a SentencePiece model"},
		{big, big + ": 67108865 bytes, more than the 67108864 a SentencePiece model may take"},
	}
	for _, tt := range tests {
		if _, err := Load(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%s): err = %v, want one saying %q", tt.path, err, tt.want)
		}
	}
}

// TestFileRoundTrip checks that a model writes the very bytes it was read
// from, and that its fingerprint is their SHA-256.
func TestFileRoundTrip(t *testing.T) {
	raw, err := os.ReadFile("testdata/bpe.model")
	if err != nil {
		t.Fatal(err)
	}
	m := loadTest(t, "bpe")
	if sum := sha256.Sum256(raw); m.Fingerprint() != hex.EncodeToString(sum[:]) {
		t.Errorf("Fingerprint = %s, want the file's SHA-256 %x", m.Fingerprint(), sum)
	}
	out := filepath.Join(t.TempDir(), "copy.model")
	if err := m.WriteFile(out); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("WriteFile wrote %d bytes (%v), want the %d of the file read", len(got), err, len(raw))
	}
	if loadTest(t, "unigram").Fingerprint() == m.Fingerprint() {
		t.Error("two models, one fingerprint")
	}
}

// TestPieces checks the lookups between pieces and ids, and that Decode of
// ids out of range is an error naming the id.
func TestPieces(t *testing.T) {
	m := loadTest(t, "unigram")
	if m.Type() != Unigram || loadTest(t, "bpe").Type() != BPE || m.Len() != 600 {
		t.Fatalf("Type %v, Len %d; want unigram and the 600 pieces of testdata/make_models.sh", m.Type(), m.Len())
	}
	for id := range m.Len() {
		if m.ID(m.Piece(id)) != id {
			t.Fatalf("piece %d %q has id %d", id, m.Piece(id), m.ID(m.Piece(id)))
		}
	}
	if m.ID("no such piece") != m.UnknownID() || m.Piece(-1) != "" || m.Piece(m.Len()) != "" || m.Piece(m.UnknownID()) != "<unk>" {
		t.Errorf("an unknown piece's id is %d, ids out of range have pieces %q, %q; want the unknown piece's %d and none",
			m.ID("no such piece"), m.Piece(-1), m.Piece(m.Len()), m.UnknownID())
	}
	for _, id := range []int{-1, 600} {
		if _, err := m.DecodeIDs([]int{5, id}); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("DecodeIDs(5, %d): err = %v, want out of range", id, err)
		}
	}
}

// TestDecodePieces checks Decode on pieces that are not the model's: they
// read as themselves, space markers and all, the unknown piece as the
// unknown surface, a control piece as nothing (as the Python binding's
// decode_pieces has them).
func TestDecodePieces(t *testing.T) {
	m := loadTest(t, "bpe")
	text := m.Decode([]string{"▁no", "such", "<unk>", "<s>", "▁piece", "▁a", "<0x41>"})
	if want := "nosuch ⁇ ▁piece a<0x41>"; text != want {
		t.Errorf("Decode = %q, want %q", text, want)
	}
}
