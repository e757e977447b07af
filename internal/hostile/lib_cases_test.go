package hostile

import "testing"

// longWords writes n lines of one 500,000-letter word each (letters a to
// d, drawn with awk's generator seeded 1 to n) to $T/long.de, and a copy
// to $T/long.en.
func longWords(n string) string {
	return `for s in $(seq ` + n + `); do awk -v s=$s 'BEGIN{srand(s); for(i=0;i<500000;i++) printf "%s", substr("abcd",int(rand()*4)+1,1); print ""}'; done > $T/long.de && cp $T/long.de $T/long.en`
}

// TestHostileLibraryCases runs the cases of the library and the loaders
// (issue 32): an encoder-only tagger on pairs that do not align, a run on
// text without its tokenizer, a relative -checkpoint, a synthetic task's
// run tried with token ids, beam search's candidates in the memory check,
// and BPE learning on long words, fast and stopped by Ctrl-C (a learner
// deaf to it is killed a minute later, failing the case).
func TestHostileLibraryCases(t *testing.T) {
	cases := []hostileCase{
		// Silent wrong answers: refused instead.
		{name: "encoder-only tagger on pairs that do not align", setup: `echo 'ein großer Hund läuft hier draußen .' >> $DATA/train.de && echo 'a dog .' >> $DATA/train.en`,
			script: `$BIN/train -task files -data $DATA -model encoder-only -bpe-merges 40 -max-tokens 256 -steps 2 -out $T/new`, code: 1,
			stderr: "-model encoder-only predicts a target token at every source position, so each source needs as many tokens (after BPE) as its target",
			absent: []string{"new"}},
		{name: "translate with a run on text whose tokenizer is gone", setup: `rm $RUN/bpe.txt $RUN/vocab.txt`,
			script: `echo 'ein Hund' | $BIN/translate -model $RUN -checkpoint final`, code: 1, stderr: "was trained on text, with the tokenizer its metadata records, but"},
		{name: "translate -checkpoint relative to the run, from elsewhere", script: `cd $T && echo 'ein Hund .' | $BIN/translate -model $RUN -checkpoint final.safetensors -method greedy -max-len 3`,
			code: 0},

		// The first run can be tried: token ids for a synthetic task's run.
		{name: "translate a copy-task run's token ids", script: `echo '4 5 6' | $BIN/translate -model $COPY -method greedy -max-len 4 | grep -Ex '[0-9 ]+'`, code: 0},
		{name: "translate a copy-task run's bad token id", script: `printf '4 5\n4 99\n' | $BIN/translate -model $COPY`, code: 1,
			stderr: "standard input:2: field 2, token id 99, is not a token of the vocabulary: want 4 to 13"},
		{name: "translate a copy-task run's words", script: `echo 'ein Hund' | $BIN/translate -model $COPY`, code: 1,
			stderr: `standard input:1: field 1, "ein", is not a token id`},
		{name: "the last line of train tries the run", script: `cmd=$($BIN/train -out $T/new -steps 1 -train-size 50 -held-out 8 -max-tokens 128 2>&1 | tail -n 1 | sed -n 's/.*try="\(.*\)"$/\1/p') && test -n "$cmd" && eval "$cmd" | grep -Ex '[0-9 ]+'`,
			code: 0},

		// Bounded memory: beam search's 2·beam² candidates are counted.
		{name: "translate -beam 8000", script: `echo 'ein Hund' | $BIN/translate -model $RUN -beam 8000`, code: 1,
			stderr: "8000 rows a source, sources of up to"},
		{name: "translate -beam 8000 of token ids", script: `echo '4 5 6' | $BIN/translate -model $COPY -beam 8000`, code: 1,
			stderr: "8000 rows a source, sources of up to 4 tokens"},

		// Long words: BPE learning is fast, and stops on Ctrl-C.
		{name: "BPE on a 500,000-letter word", setup: longWords("1"),
			script: `timeout --preserve-status -s KILL 90 $BIN/train -task files -train-src $T/long.de -train-tgt $T/long.en -valid-src $DATA/val.de -valid-tgt $DATA/val.en -bpe-merges 2000 -steps 1 -out $T/new`,
			code:   1, stderr: "raise -max-tokens to at least", absent: []string{"new"}},
		{name: "Ctrl-C while BPE learns on long words", setup: longWords("4"),
			script: `timeout --preserve-status -k 60 -s INT 5 $BIN/train -task files -train-src $T/long.de -train-tgt $T/long.en -valid-src $DATA/val.de -valid-tgt $DATA/val.en -bpe-merges 1000000 -steps 1 -out $T/new`,
			code:   1, stderr: "learning BPE, after", absent: []string{"new"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t) })
	}
}
