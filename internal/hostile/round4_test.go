package hostile

import "testing"

// TestHostileRound4 runs the cases the fourth hostile trial broke (issue
// 50), with TestHostileInputs's fixture and checks: decoding that the
// memory check let through to Go's fatal out-of-memory, a synthetic run
// resumed on other data after its run.json was edited, a run directory
// made inside another run, and a score that printed half its output
// before refusing.
func TestHostileRound4(t *testing.T) {
	// The copy run's untrained model never ends an output: every step of
	// -max-len is taken. 2,929,688 KB is the trial's 3,000,000,000 bytes.
	const trialLimit = `ulimit -v 2929688; `
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t) })
	}
}
