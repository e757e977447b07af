// Package sentencepiece reads SentencePiece models (the .model files of
// spm_train) and applies them in Go exactly as SentencePiece 0.1.97's
// spm_encode and spm_decode do (the version of Debian's sentencepiece and
// python3-sentencepiece packages).
//
// Load and Parse read the model's ModelProto with code generated from
// SentencePiece's own sentencepiece_model.proto (internal/modelpb), and
// check it as SentencePiece does, and more, before any use. A Model
// encodes text in three steps:
//
//   - normalization: the rules of the model's precompiled charsmap (what
//     SentencePiece applies, whichever rule set, nmt_nfkc, nfkc_cf or
//     identity, the model names), user-defined symbols kept as they are,
//     and the white-space rules of its normalizer spec (add_dummy_prefix,
//     remove_extra_whitespaces, escape_whitespaces, and the trainer's
//     treat_whitespace_as_suffix);
//   - segmentation: Viterbi over the pieces' scores (unigram), or merges
//     in the order of their scores (bpe); user-defined symbols are always
//     pieces of their own;
//   - unknown characters: with byte fallback, spelled in byte pieces
//     (<0xE6>); without it, one unknown piece for each run of them.
//
// Decode is spm_decode's: control pieces read as nothing, the unknown
// piece as " ⁇ ", byte pieces as the UTF-8 they spell, and the model's
// denormalization rules, if any, apply last.
//
// Tokenizer is the data.Tokenizer of a model; its ids put data's reserved
// ids first. cmd/train -spm trains on one, and the run directory keeps the
// model file (docs/sentencepiece.md).
package sentencepiece
