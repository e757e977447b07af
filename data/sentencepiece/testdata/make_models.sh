#!/usr/bin/env bash
# Trains the small models the tests read, with Debian's spm_train
# (apt-get install sentencepiece), on the project's own documentation:
#   unigram.model   unigram, nmt_nfkc, user-defined and control symbols,
#                   byte fallback, self-test samples
#   bpe.model       bpe, nmt_nfkc, user-defined and control symbols,
#                   unknown pieces (no byte fallback)
#   identity.model  unigram, the identity normalizer, no dummy prefix, extra
#                   white space kept, a denormalization rule
#   suffix.model    bpe, the identity normalizer, the space marker as a
#                   suffix, byte fallback, a padding piece and no start piece
# and writes what spm_encode and spm_decode make of tricky.txt (lines of
# white space, normalization cases, user-defined and control symbols,
# invalid UTF-8, NUL bytes) with each: MODEL.pieces and MODEL.ids
# (spm_encode --output_format=piece, id) and MODEL.decoded (spm_decode of
# MODEL.ids). Run from this directory; it overwrites them all.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat ../../../README.md ../../../docs/*.md > "$work/text"
printf '26\t61 6E 64\n2E 2E 2E\t2026\n' > "$work/denorm.tsv"
common=(--input="$work/text" --vocab_size=600 --character_coverage=0.98 --minloglevel=2)
spm_train "${common[@]}" --model_prefix="$work/unigram" --model_type=unigram \
	--user_defined_symbols='<sep>,@@,☃' --control_symbols='<ctl>' --byte_fallback=true --self_test_sample_size=20
spm_train "${common[@]}" --model_prefix="$work/bpe" --model_type=bpe \
	--user_defined_symbols='<sep>,@@' --control_symbols='<ctl>'
spm_train "${common[@]}" --model_prefix="$work/identity" --model_type=unigram \
	--normalization_rule_name=identity --add_dummy_prefix=false --remove_extra_whitespaces=false \
	--denormalization_rule_tsv="$work/denorm.tsv"
spm_train "${common[@]}" --model_prefix="$work/suffix" --model_type=bpe \
	--normalization_rule_name=identity --treat_whitespace_as_suffix=true --byte_fallback=true \
	--unk_id=0 --eos_id=1 --pad_id=2 --bos_id=-1
for m in unigram bpe identity suffix; do
	cp "$work/$m.model" "$m.model"
	spm_encode --model="$m.model" --output_format=piece < tricky.txt > "$m.pieces"
	spm_encode --model="$m.model" --output_format=id < tricky.txt > "$m.ids"
	spm_decode --model="$m.model" --input_format=id < "$m.ids" > "$m.decoded"
done
