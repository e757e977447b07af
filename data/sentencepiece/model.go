package sentencepiece

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pkg/errors"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/transformer-go/transformer/data/sentencepiece/internal/modelpb"
	"github.com/transformer-go/transformer/internal/atomicfile"
	"github.com/transformer-go/transformer/internal/sysmem"
)

// Limits on a model file, so that reading one takes bounded memory. The
// largest published models (250,000 pieces) take about 5 MB.
const (
	// MaxFileBytes bounds the size of a .model file.
	MaxFileBytes = 64 << 20
	// MaxPieces bounds the pieces of a model.
	MaxPieces = 1 << 22
)

// bytesPerPiece is about what a piece takes in memory once parsed and
// indexed, for the memory check of Parse.
const bytesPerPiece = 400

// Type is a model's segmentation algorithm (TrainerSpec.model_type).
type Type int

// The types of model this package applies.
const (
	Unigram Type = iota + 1 // Viterbi over the pieces' scores
	BPE                     // merges in the order of the pieces' scores
)

// String is the name spm_train's --model_type gives the type.
func (t Type) String() string {
	switch t {
	case Unigram:
		return "unigram"
	case BPE:
		return "bpe"
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// pieceType is a piece's type (ModelProto.SentencePiece.Type).
type pieceType = modelpb.ModelProto_SentencePiece_Type

// The types of pieces.
const (
	normalPiece  = modelpb.ModelProto_SentencePiece_NORMAL
	unknownPiece = modelpb.ModelProto_SentencePiece_UNKNOWN
	controlPiece = modelpb.ModelProto_SentencePiece_CONTROL
	userPiece    = modelpb.ModelProto_SentencePiece_USER_DEFINED
	bytePiece    = modelpb.ModelProto_SentencePiece_BYTE
	unusedPiece  = modelpb.ModelProto_SentencePiece_UNUSED
)

// piece is one entry of the vocabulary.
type piece struct {
	text  string
	score float32
	typ   pieceType
}

// Model is a SentencePiece model read from a .model file: it encodes text
// into pieces and ids, and decodes them, as SentencePiece 0.1.97's
// spm_encode and spm_decode do. A Model is immutable and safe for
// concurrent use.
type Model struct {
	// raw is the model file, fingerprint its SHA-256 in hex (Fingerprint).
	raw         []byte
	fingerprint string
	typ         Type
	pieces      []piece
	// normal indexes the normal, user-defined and unused pieces, reserved
	// the control, unknown and byte pieces (SentencePiece's pieces_ and
	// reserved_id_map_): a text may hold the first, never the second.
	normal, reserved map[string]int
	unk              int
	byteFallback     bool
	norm, denorm     *normalizer
	// lattice indexes the pieces of normal by every prefix (unigram).
	lattice            prefixes
	minScore, maxScore float32
	// user matches the user-defined symbols, which are never split.
	user prefixes
	// The decoder's settings: the text of an unknown id, and whether a
	// leading space marker is dropped (addDummyPrefix or removeExtra).
	unkSurface               string
	addDummyPrefix, removeWS bool
	// roles are the ids of the start, end and padding pieces that the
	// trainer spec names (-1 where it names none).
	roles roles
}

// roles are the ids of the special pieces a trainer spec names.
type roles struct{ bos, eos, pad int }

// Load reads the SentencePiece model of the .model file at path. Errors
// name the file; see Parse for what makes a model valid.
func Load(path string) (*Model, error) {
	raw, err := readFile(path)
	if err != nil {
		return nil, err
	}
	m, err := Parse(raw)
	if err != nil {
		return nil, errors.Wrapf(err, "%s", path)
	}
	return m, nil
}

// readFile reads path, refusing a file of more than MaxFileBytes (or that
// is not a regular file, such as a pipe, which could not be read again).
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrap(err, "SentencePiece model")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, errors.Wrap(err, "SentencePiece model")
	}
	if !st.Mode().IsRegular() {
		return nil, errors.Errorf("SentencePiece model %s is not a regular file", path)
	}
	if st.Size() > MaxFileBytes {
		return nil, errors.Errorf("%s: %d bytes, more than the %d a SentencePiece model may take", path, st.Size(), MaxFileBytes)
	}
	raw, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, errors.Wrapf(err, "reading %s", path)
	}
	if len(raw) > MaxFileBytes {
		return nil, errors.Errorf("%s: more than the %d bytes a SentencePiece model may take", path, MaxFileBytes)
	}
	return raw, nil
}

// Parse reads a SentencePiece model from the bytes of a .model file (a
// serialized ModelProto). It refuses, as SentencePiece does, a model
// whose pieces are empty or defined twice, that has no unknown piece or
// two, whose byte pieces are malformed or (with byte fallback) not all
// 256, or whose normalization rules are broken, and a model whose
// self-test samples do not encode as they record. It also refuses what
// SentencePiece would misread or fail on later: a piece holding a NUL
// byte, a bpe model with a control piece that text can produce, and a
// model type other than unigram and bpe.
func Parse(raw []byte) (*Model, error) {
	if len(raw) > MaxFileBytes {
		return nil, errors.Errorf("%d bytes, more than the %d a SentencePiece model may take", len(raw), MaxFileBytes)
	}
	n, err := countPieces(raw)
	if err != nil {
		return nil, err
	}
	if err := (sysmem.Process{}).Check("reading a SentencePiece model", float64(n)*bytesPerPiece+4*float64(len(raw))); err != nil {
		return nil, err
	}
	var pb modelpb.ModelProto
	if err := proto.Unmarshal(raw, &pb); err != nil {
		return nil, errors.Wrap(err, "not a SentencePiece model (ModelProto)")
	}
	m, err := build(&pb)
	if err != nil {
		return nil, err
	}
	if err := m.selfTest(pb.GetSelfTestData().GetSamples()); err != nil {
		return nil, err
	}
	m.raw = bytes.Clone(raw)
	h := sha256.Sum256(m.raw)
	m.fingerprint = hex.EncodeToString(h[:])
	return m, nil
}

// countPieces counts the pieces of a serialized ModelProto without
// parsing them, refusing more than MaxPieces (or malformed protobuf).
func countPieces(raw []byte) (int, error) {
	n := 0
	for len(raw) > 0 {
		num, typ, l := protowire.ConsumeTag(raw)
		if l < 0 {
			return 0, errors.Wrap(protowire.ParseError(l), "not a SentencePiece model (ModelProto)")
		}
		m := protowire.ConsumeFieldValue(num, typ, raw[l:])
		if m < 0 {
			return 0, errors.Wrap(protowire.ParseError(m), "not a SentencePiece model (ModelProto)")
		}
		raw = raw[l+m:]
		if num == 1 {
			if n++; n > MaxPieces {
				return 0, errors.Errorf("more than %d pieces", MaxPieces)
			}
		}
	}
	return n, nil
}

// build checks the model pb and indexes it.
func build(pb *modelpb.ModelProto) (*Model, error) {
	spec := pb.GetTrainerSpec()
	m := &Model{byteFallback: spec.GetByteFallback()}
	switch t := spec.GetModelType(); t {
	case modelpb.TrainerSpec_UNIGRAM:
		m.typ = Unigram
	case modelpb.TrainerSpec_BPE:
		m.typ = BPE
	default:
		return nil, errors.Errorf("trainer_spec.model_type %v: only unigram and bpe models are supported", t)
	}
	if err := m.index(pb.GetPieces()); err != nil {
		return nil, err
	}
	var err error
	if m.norm, err = newNormalizer(pb.GetNormalizerSpec(), m.user, spec.GetTreatWhitespaceAsSuffix()); err != nil {
		return nil, errors.Wrap(err, "normalizer_spec")
	}
	// SentencePiece denormalizes decoded text only with rules of its own.
	if d := pb.GetDenormalizerSpec(); len(d.GetPrecompiledCharsmap()) > 0 {
		if m.denorm, err = newNormalizer(d, nil, false); err != nil {
			return nil, errors.Wrap(err, "denormalizer_spec")
		}
	}
	ns := pb.GetNormalizerSpec()
	m.addDummyPrefix, m.removeWS = ns.GetAddDummyPrefix(), ns.GetRemoveExtraWhitespaces()
	m.unkSurface = cString(spec.GetUnkSurface())
	m.roles = m.findRoles(spec)
	if m.typ == Unigram {
		return m, m.indexLattice()
	}
	return m, m.checkBPEControls()
}

// index checks the pieces and indexes them by text, as SentencePiece's
// InitializePieces does.
func (m *Model) index(pbs []*modelpb.ModelProto_SentencePiece) error {
	m.pieces = make([]piece, len(pbs))
	m.normal, m.reserved, m.unk = map[string]int{}, map[string]int{}, -1
	users := map[string]int{}
	var bytesFound [256]bool
	for i, sp := range pbs {
		p := piece{text: sp.GetPiece(), score: sp.GetScore(), typ: sp.GetType()}
		m.pieces[i] = p
		if err := m.add(i, p, users, &bytesFound); err != nil {
			return errors.Wrapf(err, "piece %d (%q)", i, p.text)
		}
	}
	if m.unk < 0 {
		return errors.New("no unknown piece (type UNKNOWN)")
	}
	if m.byteFallback {
		for b, ok := range bytesFound {
			if !ok {
				return errors.Errorf("trainer_spec.byte_fallback is set but there is no byte piece %s", bytePieceText(byte(b)))
			}
		}
	}
	m.user = newPrefixes(users)
	return nil
}

// add indexes piece i, p; users collects the user-defined symbols and
// bytesFound the byte pieces.
func (m *Model) add(i int, p piece, users map[string]int, bytesFound *[256]bool) error {
	switch {
	case p.text == "":
		return errors.New("empty piece")
	case strings.IndexByte(p.text, 0) >= 0:
		return errors.New("a piece holds a NUL byte, where SentencePiece's tries cut it short")
	}
	index := m.reserved
	switch p.typ {
	case normalPiece, userPiece, unusedPiece:
		index = m.normal
	case unknownPiece:
		if m.unk >= 0 {
			return errors.Errorf("a second unknown piece (the first is piece %d)", m.unk)
		}
		m.unk = i
	case controlPiece:
	case bytePiece:
		b, ok := pieceByte(p.text)
		switch {
		case !m.byteFallback:
			return errors.New("a byte piece, but trainer_spec.byte_fallback is not set")
		case !ok:
			return errors.New("a byte piece that is not <0xXX>")
		}
		bytesFound[b] = true
	default:
		return errors.Errorf("unknown piece type %d", p.typ)
	}
	if first, ok := index[p.text]; ok {
		return errors.Errorf("defined twice (first as piece %d)", first)
	}
	index[p.text] = i
	if p.typ == userPiece {
		users[p.text] = i
	}
	return nil
}

// findRoles finds the pieces that the trainer spec names start, end and
// padding, as SentencePiece's bos_id, eos_id and pad_id do: a name that is
// not a control piece names none.
func (m *Model) findRoles(spec *modelpb.TrainerSpec) roles {
	role := func(name, def string) int {
		if name = cString(name); name == "" {
			name = def
		}
		if id := m.ID(name); m.pieces[id].typ == controlPiece {
			return id
		}
		return -1
	}
	return roles{
		bos: role(spec.GetBosPiece(), "<s>"),
		eos: role(spec.GetEosPiece(), "</s>"),
		pad: role(spec.GetPadPiece(), "<pad>"),
	}
}

// cString is s up to its first NUL byte: what SentencePiece reads of a
// string it passes as a C string.
func cString(s string) string {
	s, _, _ = strings.Cut(s, "\x00")
	return s
}

// checkBPEControls refuses a bpe model in which text can produce a
// control piece: one that is also a normal piece, or one character long.
// SentencePiece fails to encode any text that holds it.
func (m *Model) checkBPEControls() error {
	for i, p := range m.pieces {
		if p.typ != controlPiece {
			continue
		}
		if _, ok := m.normal[p.text]; ok || oneCharLen(p.text[0]) >= len(p.text) {
			return errors.Errorf("piece %d (%q) is a control piece that a bpe model makes of text (it is one character, or also a normal piece): SentencePiece cannot encode text that holds it", i, p.text)
		}
	}
	return nil
}

// selfTest encodes the model's self-test samples, as SentencePiece does
// on loading, and refuses the model if one does not give the pieces it
// records.
func (m *Model) selfTest(samples []*modelpb.SelfTestData_Sample) error {
	failed := 0
	var first string
	for _, s := range samples {
		got := strings.Join(m.Pieces(s.GetInput()), " ")
		if got != s.GetExpected() {
			if failed == 0 {
				first = fmt.Sprintf("%q encodes as %q, the sample says %q", s.GetInput(), got, s.GetExpected())
			}
			failed++
		}
	}
	if failed > 0 {
		return errors.Errorf("%d of the %d self-test samples fail: %s", failed, len(samples), first)
	}
	return nil
}

// Type is the model's segmentation algorithm.
func (m *Model) Type() Type { return m.typ }

// Len is the number of pieces: ids run from 0 to Len()-1.
func (m *Model) Len() int { return len(m.pieces) }

// Piece is the text of the piece id (SentencePiece's IdToPiece), "" for
// an id out of range.
func (m *Model) Piece(id int) string {
	if id < 0 || id >= len(m.pieces) {
		return ""
	}
	return m.pieces[id].text
}

// ID is the id of the piece text, or the unknown piece's for text that is
// not a piece (SentencePiece's PieceToId). A control, unknown or byte
// piece comes first where a normal piece has the same text.
func (m *Model) ID(text string) int {
	if id, ok := m.reserved[text]; ok {
		return id
	}
	if id, ok := m.normal[text]; ok {
		return id
	}
	return m.unk
}

// UnknownID is the id of the unknown piece.
func (m *Model) UnknownID() int { return m.unk }

// Fingerprint is the SHA-256 of the model file, in hex: a checkpoint
// records it so that a loader can tell a changed file.
func (m *Model) Fingerprint() string { return m.fingerprint }

// WriteFile saves the model atomically: the very bytes it was read from.
func (m *Model) WriteFile(path string) error {
	return atomicfile.WriteBytes(path, m.raw)
}
