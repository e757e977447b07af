package hostile

import "testing"

// TestHostileRound4 runs the cases the fourth hostile trial broke (issue
// 50), with TestHostileInputs's fixture and checks: decoding that the
// memory check let through to Go's fatal out-of-memory, a synthetic run
// resumed on other data after its run.json was edited, a run directory
// made inside another run, a score that printed half its output before
// refusing, and a bench that measured its training rows before it found
// that a decoding row's model would not fit.
func TestHostileRound4(t *testing.T) {
	// Decoding allocates its caches for -max-len's positions whole, however
	// soon the outputs end. 2,929,688 KB is the trial's 3,000,000,000 bytes.
	const trialLimit = `ulimit -v 2929688; `
	const pairs200 = `printf '5 6 2\n%.0s' $(seq 200) > $T/s && printf '1 5 2\n%.0s' $(seq 200) > $T/g`
	cases := []hostileCase{
		// Bounded memory: the check bounds what decoding maps.
		{name: "translate -beam 300 -max-len 1024 under 3 GB", script: trialLimit + `echo '4 5 6' | $BIN/translate -model $COPY -beam 300 -max-len 1024`,
			code: 1, stderr: "decode fewer sources at once, with a narrower beam, or shorter ones"},
		{name: "translate 300 sources greedily at -max-len 1024 under 3 GB",
			script: trialLimit + `yes '4 5 6' | head -n 300 | $BIN/translate -model $COPY -method greedy -batch 300 -max-len 1024`,
			code:   1, stderr: "decode fewer sources at once"},
		{name: "translate -beam 100 -max-len 1024 under 3 GB fits", script: trialLimit + `echo '4 5 6' | $BIN/translate -model $COPY -beam 100 -max-len 1024`,
			code: 0},

		// Silent wrong answers: a synthetic run records its data's fingerprint.
		{name: "resume a copy run whose run.json says reverse", setup: `sed -i 's/"task": "copy"/"task": "reverse"/' $COPY/run.json`,
			script: `$BIN/train -resume $COPY -steps 3`, code: 1, stderr: "training or validation data changed since it was saved (data_sha256 differs"},
		{name: "resume a copy run with another seed in run.json", setup: `sed -i 's/"seed": 1,/"seed": 7,/' $COPY/run.json`,
			script: `$BIN/train -resume $COPY -steps 3`, code: 1, stderr: "data_sha256 differs"},

		// Data loss: a run's directory never lies inside another run's.
		{name: "train -out in another run's checkpoints/", script: `$BIN/train -out $COPY/checkpoints/step-00000030.safetensors -steps 2`,
			code: 1, stderr: "$T/copy/checkpoints/step-00000030.safetensors is inside the run directory $T/copy", absent: []string{"copy/checkpoints/step-00000030.safetensors"}},
		{name: "train -out inside a run that is training",
			script: `$BIN/train -out $T/a -steps 100000 -train-size 200 -held-out 8 -max-tokens 128 2>/dev/null & pid=$!
for i in $(seq 1200); do [ -e $T/a/.lock ] && break; sleep 0.05; done
$BIN/train -out $T/a/inner -steps 2 && status=0 || status=$?
kill $pid; wait $pid || true
exit $status`,
			code: 1, stderr: "$T/a/inner is inside the run directory $T/a", absent: []string{"a/inner"}},

		// Late checks: score prints every score or none.
		{name: "score -batch 64 whose largest batch does not fit", setup: pairs200,
			script: `ulimit -v 3000000; status=0
$BIN/score -checkpoint $RUN/final.safetensors -src $T/s -tgt $T/g -batch 64 > $T/out || status=$?
if [ -s $T/out ]; then echo "printed $(wc -l < $T/out) scores" >&2; exit 3; fi
exit $status`,
			code: 2, stderr: "scoring batches of 64 pairs (-batch), sources of up to 1024 tokens (-max-src-len) and targets of up to 1024: at least"},
		{name: "score -batch 8 prints every score", setup: pairs200,
			script: `ulimit -v 3000000; $BIN/score -checkpoint $RUN/final.safetensors -src $T/s -tgt $T/g -batch 8 | wc -l`, code: 0, stdout: "200"},

		// Late checks: bench checks every row before it measures one.
		{name: "bench -decode-preset big under 2.4 GB",
			script: `ulimit -v 2500000; status=0
$BIN/bench -presets tiny -vocabs 1000 -warmup 0 -runs 1 -rounds 1 -decode-preset big > $T/out || status=$?
if [ -s $T/out ]; then echo "measured: $(cat $T/out)" >&2; exit 3; fi
exit $status`,
			code: 1, stderr: "model too large: decoding with the big preset and vocabulary 8000"},

		// Ctrl-C: an interrupted run is told from a finished one.
		{name: "Ctrl-C exits with 130 and says how to resume",
			script: `$BIN/train -out $T/b -steps 100000 -train-size 200 -held-out 8 -max-tokens 128 2>$T/log & pid=$!
for i in $(seq 1200); do [ -e $T/b/run.json ] && break; sleep 0.05; done
sleep 0.5; kill -INT $pid; status=0; wait $pid || status=$?
grep -q -- "-resume $T/b\"$" $T/log
cat $T/log >&2; exit $status`,
			code: 130, stderr: "msg=\"interrupted: checkpoint saved\" step="},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t) })
	}
}
