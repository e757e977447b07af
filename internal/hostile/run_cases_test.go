package hostile

import "testing"

// TestHostileRuns runs the cases of training runs that the third hostile
// trial broke (issue 32), with TestHostileInputs's fixture and checks: a
// run directory renamed while it trains, files outside a run that a
// refused or mistaken command replaced, given values taken for defaults,
// idle flags, an interruption that changed a run's records, and checks
// that came too late or not at all.
func TestHostileRuns(t *testing.T) {
	const small = `-train-size 200 -held-out 8 -max-tokens 128`
	cases := []hostileCase{
		// Data loss: a process writes only into the directory it locked.
		{name: "run directory renamed while it trains, a new one in its place",
			script: `$BIN/train -out $T/new -steps 100000 -eval-every 50 ` + small + ` 2>$T/log & pid=$!
for i in $(seq 1200); do [ -e $T/new/checkpoints/step-00000050.safetensors ] && break; sleep 0.1; done
mv $T/new $T/new-old && mkdir $T/new && echo x > $T/new/notes
if wait $pid; then echo "the renamed run went on" >&2; exit 3; fi
cat $T/log >&2
[ "$(ls -A $T/new)" = notes ]`,
			code: 0, stderr: "is no longer the one this"},
		{name: "run directory renamed while it trains, nothing in its place",
			script: `$BIN/train -out $T/new -steps 100000 -eval-every 50 ` + small + ` 2>$T/log & pid=$!
for i in $(seq 1200); do [ -e $T/new/checkpoints/step-00000050.safetensors ] && break; sleep 0.1; done
mv $T/new $T/new-old
if wait $pid; then echo "the renamed run went on" >&2; exit 3; fi
cat $T/log >&2`,
			code: 0, stderr: "is no longer the one this", absent: []string{"new"}},
		{name: "-overwrite over notes in checkpoints/", setup: `echo mine > $COPY/checkpoints/notes.txt`,
			script: `$BIN/train -out $COPY -overwrite -steps 2`, code: 1, stderr: "holds checkpoints/notes.txt, which is not a run's"},
		{name: "-overwrite over weights of one's own in checkpoints/", setup: `cp $COPY/final.safetensors $COPY/checkpoints/keep-this.safetensors`,
			script: `$BIN/train -out $COPY -overwrite -steps 2`, code: 1, stderr: "holds checkpoints/keep-this.safetensors, which is not a run's"},
		{name: "a refused run keeps the profiles it was to write", setup: `echo old > $T/cpu.prof && echo old > $T/mem.prof`,
			script: `! $BIN/train -task files -data $T/none -cpuprofile $T/cpu.prof -memprofile $T/mem.prof -out $T/new -steps 2 && grep -qx old $T/cpu.prof && grep -qx old $T/mem.prof`,
			code:   0, stderr: "$T/none/train.de", absent: []string{"new"}},
		{name: "a refused run removes the parents of -out it made", script: `$BIN/train -task files -data $T/none -out $T/a/b/new -steps 2`,
			code: 1, stderr: "$T/none/train.de", absent: []string{"a"}},

		// Given values are used or refused, never taken for defaults.
		{name: "-warmup 0 with the paper's schedule", script: `$BIN/train -out $T/new -warmup 0 -steps 2`,
			code: 1, stderr: "-warmup 0: the paper's schedule needs a warm-up of at least 1 update", absent: []string{"new"}},
		{name: "-lr 0", script: `$BIN/train -out $T/new -lr 0 -steps 2`, code: 1, stderr: "-lr 0: want a number in (0, ", absent: []string{"new"}},
		{name: "-lr-factor 0", script: `$BIN/train -out $T/new -lr-factor 0 -steps 2`, code: 1, stderr: "-lr-factor 0: want a number in (0, ",
			absent: []string{"new"}},
		{name: "-eval-every 0", script: `$BIN/train -out $T/new -eval-every 0 -steps 2`, code: 1, stderr: "-eval-every 0: want a number from 1",
			absent: []string{"new"}},
		{name: "-clip -1", script: `$BIN/train -out $T/new -clip -1 -steps 2`, code: 1, stderr: "-clip -1: want a number from 0", absent: []string{"new"}},
		{name: "-weight-decay 0 and -warmup 0 are recorded and used",
			script: `$BIN/train -out $T/new -optimizer adamw -weight-decay 0 -schedule constant -warmup 0 -lr 0.002 -steps 1 ` + small +
				` && grep -q '"weight_decay": 0,' $T/new/run.json && grep -q '"warmup": 0,' $T/new/run.json && grep -q '"lr":0.002,' $T/new/metrics.jsonl`,
			code: 0},

		// Records: a run stopped and resumed leaves a never-interrupted run's.
		{name: "Ctrl-C and resume leave the averaged weights and the metrics of a run never stopped",
			script: `args="-steps 400 -eval-every 100 -save-every 100 -average 4 -keep 4 -log-every 50 ` + small + `"
$BIN/train -out $T/a $args 2>/dev/null
$BIN/train -out $T/b $args 2>$T/log & pid=$!
for i in $(seq 1200); do [ -e $T/b/checkpoints/step-00000100.safetensors ] && break; sleep 0.01; done
kill -INT $pid; status=0; wait $pid || status=$?
test $status = 130
grep -q 'interrupted: checkpoint saved' $T/log
$BIN/train -resume $T/b 2>/dev/null
cmp $T/a/averaged.safetensors $T/b/averaged.safetensors
diff <(grep -o '"step":[0-9]*,"\(train_loss\|step_loss\)":[^,]*' $T/a/metrics.jsonl) <(grep -o '"step":[0-9]*,"\(train_loss\|step_loss\)":[^,]*' $T/b/metrics.jsonl)
ls $T/b/checkpoints`,
			code: 0, stdout: "step-00000100.safetensors"},
		{name: "-log-every logs each N-th update's loss", script: `$BIN/train -out $T/new -steps 4 -log-every 2 ` + small + ` 2>$T/log && grep -c step_loss $T/new/metrics.jsonl && grep -c 'step_loss=' $T/log`,
			code: 0, stdout: "2\n2\n"},

		// Idle flags: refused, naming them.
		{name: "-bpe-merges with -bpe", script: `$BIN/train -task files -data $DATA -bpe $RUN/bpe.txt -bpe-merges 10 -out $T/new -steps 2`,
			code: 1, stderr: "-bpe-merges has no effect with -bpe", absent: []string{"new"}},
		{name: "-src-lang without -data", script: `$BIN/train -task files -train-src $DATA/train.de -train-tgt $DATA/train.en -valid-src $DATA/val.de -valid-tgt $DATA/val.en -src-lang fr -out $T/new -steps 2`,
			code: 1, stderr: "-src-lang has no effect without -data", absent: []string{"new"}},
		{name: "-bleu-sample with -bleu-every 0", script: `$BIN/train -task files -data $DATA -bleu-every 0 -bleu-sample 5 -out $T/new -steps 2`,
			code: 1, stderr: "-bleu-sample has no effect with -bleu-every 0", absent: []string{"new"}},
		{name: "-check-every in one process", script: `$BIN/train -check-every 10 -out $T/new -steps 2`,
			code: 1, stderr: "-check-every has no effect in one process", absent: []string{"new"}},
		{name: "-summary with a run's flag", script: `$BIN/train -summary -steps 5`, code: 1, stderr: "-steps has no effect with -summary"},

		// Checks before any work: memory, pipes, the state a resume restores.
		{name: "a synthetic corpus larger than memory", script: `$BIN/train -train-size 26000000 -out $T/new -steps 2`,
			code: 1, stderr: "-train-size 26000000 and -held-out 256: ", absent: []string{"new"}},
		{name: "resume on a FIFO in place of the data", setup: `rm $DATA/train.de && mkfifo $DATA/train.de`,
			script: `$BIN/train -resume $RUN -steps 6`, code: 1, stderr: "field train_src: $T/data/train.de is not a regular file"},
		{name: "resume from a state file with a NaN moment",
			setup:  `f=$COPY/checkpoints/step-00000002.state.safetensors && n=$(od -An -tu8 -N8 $f | tr -d ' ') && printf '\x00\x00\xc0\x7f' | dd of=$f bs=1 seek=$((8+n)) conv=notrunc 2>/dev/null`,
			script: `$BIN/train -resume $COPY -steps 3`, code: 0, changes: true,
			stderr: "step-00000002.state.safetensors: tensor "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t) })
	}
}
