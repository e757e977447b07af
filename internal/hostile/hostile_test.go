package hostile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// memoryKB bounds every command's address space (ulimit -v): a command
// that read a whole device, an endless input or a 64 GB sparse file into
// memory would die with "fatal error: out of memory" (a training run of
// the tiny model needs less than 3 GB of address space).
const memoryKB = 4 << 20

// fixture holds the built commands and two finished runs to copy: one on
// files (with bpe.txt, vocab.txt and averaged.safetensors), one on the
// copy task.
type fixture struct {
	bin, data, run, copy string
}

var fix *fixture

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() || runtime.GOOS == "windows" {
		fmt.Println("hostile: skipped (-short, or no bash and ulimit here)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "hostile")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fix, err = setup(dir)
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, "hostile: setup:", err)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// setup builds the commands into dir/bin and trains the two runs.
func setup(dir string) (*fixture, error) {
	f := &fixture{bin: filepath.Join(dir, "bin"), data: filepath.Join(dir, "data"), run: filepath.Join(dir, "run"), copy: filepath.Join(dir, "copy")}
	build := exec.Command("go", "build", "-o", f.bin+"/", "./cmd/train", "./cmd/translate", "./cmd/score", "./cmd/bleu", "./cmd/bench", "./cmd/export")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %v\n%s", err, out)
	}
	if err := writeData(f.data); err != nil {
		return nil, err
	}
	for _, args := range [][]string{
		// Relative paths, from dir: a resume elsewhere must find them.
		{"-task", "files", "-data", "data", "-bpe-merges", "40", "-steps", "4", "-eval-every", "2", "-average", "2",
			"-bleu-every", "0", "-max-tokens", "256", "-warmup", "10", "-out", "run"},
		{"-steps", "2", "-train-size", "50", "-held-out", "8", "-max-tokens", "128", "-eval-every", "1", "-out", "copy"},
	} {
		cmd := exec.Command(filepath.Join(f.bin, "train"), args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("train %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return f, nil
}

// writeData writes a small German–English corpus in Multi30k's layout.
func writeData(dir string) error {
	nouns := [][2]string{{"Hund", "dog"}, {"Katze", "cat"}, {"Mann", "man"}, {"Frau", "woman"}, {"Kind", "child"}}
	verbs := [][2]string{{"läuft", "runs"}, {"schläft", "sleeps"}, {"spielt", "plays"}, {"isst", "eats"}}
	places := [][2]string{{"hier", "here"}, {"dort", "there"}, {"draußen", "outside"}}
	var de, en []string
	for _, n := range nouns {
		for _, v := range verbs {
			for _, p := range places {
				de = append(de, fmt.Sprintf("ein %s %s %s .", n[0], v[0], p[0]))
				en = append(en, fmt.Sprintf("a %s %s %s .", n[1], v[1], p[1]))
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, lines := range map[string][]string{"train.de": de, "train.en": en, "val.de": de[:8], "val.en": en[:8]} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// hostileCase is a mistaken command. setup (bash, may be empty) prepares
// the case's copies, and script (bash) runs it, with $BIN the commands,
// $RUN a copy of the run on files (whose run.json names $DATA, a copy of
// its data), $COPY a copy of the run on the copy task, and $T the case's
// directory.
type hostileCase struct {
	name, setup, script string
	// code is the exit status wanted: -1 for any but 0, -2 for any.
	code int
	// stderr and stdout are substrings the outputs must hold.
	stderr, stdout string
	// absent are paths under $T that must not exist afterwards.
	absent []string
	// changes is true for a case that may change the runs (a right answer
	// that continues one); every other case must leave their files as
	// they were.
	changes bool
}

// TestHostileInputs runs the table; each case lists what it checks. The
// table's classes: data loss (a run's files changed or removed by a
// failed or mistaken command), silent wrong answers (weights used with
// another tokenizer or data, non-finite results), unbounded memory (a
// device, a 64 GB sparse file or an endless input read whole), late
// checks (an error found after the work), and errors that do not say
// what and where.
func TestHostileInputs(t *testing.T) {
	const swapVocab = `sed -i '10{h;d};11{G}' $RUN/vocab.txt` // two tokens change places: same size, other ids
	const sparseHeader = `printf '\x00\x00\x00\x00\x00\x01\x00\x00' > $T/huge.safetensors && truncate -s 64G $T/huge.safetensors`
	cases := []hostileCase{
		// Data loss: a failed or mistaken command never changes a run.
		{name: "resume on training data that changed", setup: `sed -i 's/dog/cat/' $DATA/train.en`,
			script: `$BIN/train -resume $RUN -steps 6`, code: 1, stderr: "training or validation data changed since it was saved"},
		{name: "resume with an edited vocab.txt", setup: swapVocab,
			script: `$BIN/train -resume $RUN -steps 6`, code: 1, stderr: "not the run's bpe.txt and vocab.txt"},
		{name: "resume with vocab.txt removed", setup: `rm $RUN/vocab.txt`,
			script: `$BIN/train -resume $RUN -steps 6`, code: 1, stderr: "the run's vocabulary"},
		{name: "overwrite with a mistyped -data", script: `$BIN/train -task files -data $T/dta -out $RUN -overwrite -steps 2`,
			code: 1, stderr: "/dta/train.de"},
		{name: "overwrite with a max_len the data does not fit", setup: `echo '{"max_len": 8}' > $T/short.json`,
			script: `$BIN/train -config $T/short.json -out $COPY -overwrite -steps 2`, code: 1, stderr: "max_len 8 (of -config"},
		{name: "checkpoints without run.json, no -overwrite", setup: `rm $RUN/run.json`,
			script: `$BIN/train -out $RUN -steps 2`, code: 1, stderr: "a run's file, but no run.json: start over with -overwrite"},
		{name: "a new run into a finished one", script: `$BIN/train -out $COPY -steps 2`, code: 1, stderr: "holds a run: continue it with -resume"},
		{name: "resume with a changed setting", script: `$BIN/train -resume $COPY -dropout 0.2`, code: 1, stderr: "only -steps may change (have -dropout)"},
		{name: "resume with -steps 0", script: `$BIN/train -resume $COPY -steps 0`, code: 1, stderr: "-steps 0: want a number from 1"},
		{name: "resume with -steps past the range", script: `$BIN/train -resume $COPY -steps 2000000000`, code: 1, stderr: "-steps 2000000000: want a number from 1 to"},
		{name: "resume to fewer steps than done", script: `$BIN/train -resume $COPY -steps 1`, code: 1, stderr: "past this run's last step 1"},
		{name: "run.json with a field out of range", setup: `sed -i 's/"train_size": 50/"train_size": -1/' $COPY/run.json`,
			script: `$BIN/train -resume $COPY -steps 3`, code: 1, stderr: "run.json: field train_size: -train-size -1"},
		{name: "run.json of 2 MB", setup: `truncate -s 2M $COPY/run.json`,
			script: `$BIN/train -resume $COPY -steps 3`, code: 1, stderr: "has 2097152 bytes, more than the 1048576"},
		{name: "run.json naming data that is gone", setup: `rm $DATA/val.en`,
			script: `$BIN/train -resume $RUN -steps 6`, code: 1, stderr: "field valid_tgt"},

		// Late checks: found before any work or file.
		{name: "-memprofile in a missing directory", script: `$BIN/train -out $T/new -steps 2 -memprofile $T/none/mem.prof`,
			code: 1, stderr: "-memprofile: open", absent: []string{"new"}},
		{name: "-memprofile over a run's weights", script: `$BIN/train -resume $COPY -steps 3 -memprofile $COPY/final.safetensors`,
			code: 1, stderr: "-memprofile $T/copy/final.safetensors is inside the run directory"},
		{name: "-cpuprofile into a new run's directory", script: `$BIN/train -out $T/new -steps 2 -cpuprofile $T/new/cpu.prof`,
			code: 1, stderr: "-cpuprofile $T/new/cpu.prof is inside the run directory", absent: []string{"new"}},
		{name: "-attention over a run's weights", script: `echo 'ein Hund' | $BIN/translate -model $RUN -checkpoint final -attention $RUN/final.safetensors`,
			code: 1, stderr: "-attention $T/run/final.safetensors is inside the run directory"},
		{name: "-attention into another run's checkpoints", script: `echo 'ein Hund' | $BIN/translate -model $RUN -attention $COPY/checkpoints/a.png`,
			code: 1, stderr: "is inside the run directory", absent: []string{"copy/checkpoints/a.png"}},
		{name: "-attention through a hard link to a run's weights", setup: `ln $RUN/best.safetensors $T/a.png`,
			script: `echo 'ein Hund' | $BIN/translate -model $RUN -attention $T/a.png`, code: 1, stderr: "is the run's file"},
		{name: "-memprofile through a symbolic link to a run's weights", setup: `ln -s $COPY/final.safetensors $T/mem.prof`,
			script: `$BIN/train -out $T/new -steps 2 -memprofile $T/mem.prof`, code: 1, stderr: "-memprofile $T/mem.prof is inside the run directory",
			absent: []string{"new"}},
		{name: "translate -temperature without sampling", script: `echo 'ein Hund' | $BIN/translate -model $RUN -temperature 0.5`,
			code: 1, stderr: "-temperature has no effect without -method sample (have -method beam)"},
		{name: "translate -layer without -attention", script: `echo 'ein Hund' | $BIN/translate -model $RUN -layer 1`,
			code: 1, stderr: "-layer has no effect without -attention"},
		{name: "score -heads without -from torch", setup: `echo '5 2' > $T/s && echo '1 5 2' > $T/g`,
			script: `$BIN/score -checkpoint $RUN/final.safetensors -heads 3 -src $T/s -tgt $T/g`, code: 2, stderr: "-heads 3 has no effect without -from torch"},
		{name: "train a file task's flag on the copy task", script: `$BIN/train -out $T/new -steps 2 -bpe-merges 10`,
			code: 1, stderr: "-bpe-merges has no effect with -task copy", absent: []string{"new"}},
		{name: "train a synthetic task's flag on files", script: `$BIN/train -task files -data $DATA -out $T/new -steps 2 -train-size 10`,
			code: 1, stderr: "-train-size has no effect with -task files", absent: []string{"new"}},
		{name: "-config with a vocab the task has not", setup: `echo '{"vocab": 50}' > $T/v.json`,
			script: `$BIN/train -config $T/v.json -out $T/new -steps 2`, code: 1,
			stderr: "field vocab 50, but the task's vocabulary has 14 tokens", absent: []string{"new"}},
		{name: "-config of another model kind", setup: `echo '{"kind": "decoder-only"}' > $T/k.json`,
			script: `$BIN/train -config $T/k.json -out $COPY -overwrite -steps 2`, code: 1,
			stderr: `field kind "decoder-only", but -model is encoder-decoder`},
		{name: "-config of a run's own config.json", setup: `cp $COPY/config.json $T/c.json`,
			script: `$BIN/train -config $T/c.json -out $T/new -steps 1 -train-size 50 -held-out 8 -max-tokens 128`, code: 0},
		{name: "-cpuprofile over the training data", script: `$BIN/train -task files -data $DATA -cpuprofile $DATA/train.de -out $T/new -steps 2`,
			code: 1, stderr: "-cpuprofile $T/data/train.de is the file of -train-src", absent: []string{"new"}},
		{name: "-attention over the input", setup: `echo 'ein Hund' > $T/in`, script: `$BIN/translate -model $RUN -input $T/in -attention $T/in && grep -q Hund $T/in`,
			code: 1, stderr: "-attention $T/in is the file of -input"},
		{name: "translate -input missing, found before the weights are read", script: `$BIN/translate -model $RUN -checkpoint /dev/zero -input $T/none`,
			code: 1, stderr: "open $T/none: no such file"},
		{name: "translate -score missing, found before the weights are read", script: `echo 'ein Hund' | $BIN/translate -model $RUN -checkpoint /dev/zero -score $T/none`,
			code: 1, stderr: "-score: open $T/none: no such file"},
		{name: "score -tgt missing, found before the weights are read", setup: `echo '5 2' > $T/s`,
			script: `$BIN/score -checkpoint /dev/zero -src $T/s -tgt $T/none`, code: -1, stderr: "open $T/none: no such file"},
		{name: "-valid-tgt missing, found before the training data are read", script: `$BIN/train -task files -train-src <(yes 'ein Hund') -train-tgt <(yes 'a dog') -valid-src $DATA/val.de -valid-tgt $T/none -out $T/new -steps 2`,
			code: 1, stderr: "-valid-tgt: stat $T/none: no such file", absent: []string{"new"}},
		{name: "-config naming a field twice", setup: `echo '{"d_model": 64, "d_model": 32}' > $T/dup.json`,
			script: `$BIN/train -config $T/dup.json -out $T/new -steps 2`, code: 1, stderr: `field "d_model" appears twice`, absent: []string{"new"}},
		{name: "run.json naming a field twice", setup: `sed -i 's/"seed": 1,/"seed": 1, "seed": 2,/' $COPY/run.json`,
			script: `$BIN/train -resume $COPY -steps 3`, code: 1, stderr: `field "seed" appears twice`},
		{name: "-config's dropout on a synthetic task", setup: `echo '{"dropout": 0.1}' > $T/d.json`,
			script: `$BIN/train -config $T/d.json -out $T/new -steps 1 -train-size 50 -held-out 8 -max-tokens 128 && grep '"dropout": 0.1' $T/new/config.json`, code: 0},
		{name: "resume after its -config file changed", setup: `echo '{"attn_dropout": 0.1}' > $T/d.json && $BIN/train -config $T/d.json -out $T/new -steps 1 -train-size 50 -held-out 8 -max-tokens 128 2>/dev/null && echo '{"attn_dropout": 0.3}' > $T/d.json`,
			script: `$BIN/train -resume $T/new -steps 2`, code: 1, stderr: "attn_dropout 0.3, was 0.1): was its -config file changed"},
		{name: "max_len shorter than the data", setup: `echo '{"max_len": 8}' > $T/short.json`,
			script: `$BIN/train -config $T/short.json -out $T/new -steps 2`, code: 1, stderr: "the data needs 12 positions",
			absent: []string{"new"}},
		{name: "-head out of range", script: `echo 'ein Hund' | $BIN/translate -model $RUN -attention $T/a.png -head 99`,
			code: 1, stderr: "-head 99: the heads are 0 to", absent: []string{"a.png"}},
		{name: "-layer out of range", script: `echo 'ein Hund' | $BIN/translate -model $RUN -attention $T/a.png -layer 7`,
			code: 1, stderr: "-layer 7: the decoder's layers are 0 to"},
		{name: "-attention into a missing directory", script: `echo 'ein Hund' | $BIN/translate -model $RUN -attention $T/none/a.png`,
			code: 1, stderr: "its directory " + "$T/none does not exist"},

		// Bounded memory: loaders check before they read.
		{name: "-config /dev/zero", script: `$BIN/train -config /dev/zero -out $T/new`, code: 1, stderr: "/dev/zero is not a regular file",
			absent: []string{"new"}},
		{name: "-config a 64 GB sparse file", setup: `truncate -s 64G $T/huge.json`,
			script: `$BIN/train -config $T/huge.json -out $T/new`, code: 1, stderr: "has 68719476736 bytes, more than the 1048576 a JSON settings file may have"},
		{name: "-train-src /dev/zero", script: `$BIN/train -task files -train-src /dev/zero -train-tgt $DATA/train.en -valid-src $DATA/val.de -valid-tgt $DATA/val.en -steps 2 -out $T/new`,
			code: 1, stderr: "/dev/zero:1: line longer than", absent: []string{"new"}},
		{name: "-bpe /dev/zero", script: `$BIN/train -task files -data $DATA -bpe /dev/zero -steps 2 -out $T/new`, code: 1, stderr: "/dev/zero:1: line longer than",
			absent: []string{"new"}},
		{name: "-spm /dev/zero", script: `$BIN/train -task files -data $DATA -spm /dev/zero -steps 2 -out $T/new`, code: 1, stderr: "/dev/zero is not a regular file",
			absent: []string{"new"}},
		{name: "-spm a 64 GB sparse file", setup: `truncate -s 64G $T/huge.model`,
			script: `$BIN/train -task files -data $DATA -spm $T/huge.model -steps 2 -out $T/new`, code: 1,
			stderr: "68719476736 bytes, more than the 67108864 a SentencePiece model may take", absent: []string{"new"}},
		{name: "export into a run's directory", script: `$BIN/export -model $RUN -checkpoint final -out $RUN/onnx`,
			code: 1, stderr: "-out $T/run/onnx/encoder.onnx is inside the run directory", absent: []string{"run/onnx"}},
		{name: "export over a file of an earlier export", setup: `mkdir $T/o && echo mine > $T/o/step.onnx`,
			script: `$BIN/export -model $RUN -checkpoint final -out $T/o`, code: 1, stderr: "$T/o/step.onnx exists: -force replaces it",
			absent: []string{"o/encoder.onnx"}},
		{name: "export weights from /dev/zero", script: `$BIN/export -model $RUN -checkpoint /dev/zero -out $T/o`,
			code: 1, stderr: "not a regular file", absent: []string{"o"}},
		{name: "translate weights from /dev/zero", script: `echo hi | $BIN/translate -model $RUN -checkpoint /dev/zero`,
			code: 1, stderr: "not a regular file"},
		{name: "translate weights of a 64 GB sparse file", setup: sparseHeader,
			script: `echo hi | $BIN/translate -model $RUN -checkpoint $T/huge.safetensors`, code: 1, stderr: "header size 1099511627776 is more than the 104857600"},
		{name: "score weights from /dev/zero", setup: `echo '5 2' > $T/s && echo '1 5 2' > $T/g`,
			script: `$BIN/score -checkpoint /dev/zero -src $T/s -tgt $T/g`, code: 2, stderr: "not a regular file"},
		{name: "score -from torch of a 64 GB sparse file", setup: sparseHeader + ` && echo '5 2' > $T/s && echo '1 5 2' > $T/g`,
			script: `$BIN/score -checkpoint $T/huge.safetensors -from torch -heads 2 -src $T/s -tgt $T/g`, code: 2, stderr: "header size 1099511627776"},
		{name: "resume with metrics.jsonl a 64 GB sparse file", setup: `truncate -s 64G $COPY/metrics.jsonl`,
			script: `$BIN/train -resume $COPY -steps 3`, code: 1, stderr: "metrics.jsonl has 68719476736 bytes, more than the"},
		// Under 2.4 GB the eighth of what is left, which the data may
		// take, is read in seconds.
		{name: "train on endless data", script: `ulimit -v 2500000; $BIN/train -task files -train-src <(yes 'ein Hund läuft') -train-tgt <(yes 'a dog runs') -valid-src $DATA/val.de -valid-tgt $DATA/val.en -steps 2 -out $T/new`,
			code: 1, stderr: "bytes a corpus may take in memory (1/8 of", absent: []string{"new"}},
		{name: "translate streams endless input", script: `set +o pipefail; yes 'ein Hund läuft hier .' | $BIN/translate -model $RUN -checkpoint final -method greedy -max-len 3 -batch 4 | head -n 9 | wc -l`,
			code: 0, stdout: "9"},
		{name: "score streams endless input", script: `set +o pipefail; $BIN/score -checkpoint $RUN/final.safetensors -src <(yes '5 6 2') -tgt <(yes '1 5 2') -batch 4 | head -n 9 | wc -l`,
			code: 0, stdout: "9"},
		{name: "bleu of endless hypotheses against four references", setup: `printf 'a b\nc d\ne f\ng h\n' > $T/ref`,
			script: `yes 'a b' | $BIN/bleu -ref $T/ref`, code: 1, stderr: "have more lines than the 4 of the references"},
		{name: "bleu streams 300,000 lines", script: `$BIN/bleu -ref <(yes 'a man runs here .' | head -n 300000) -hyp <(yes 'a man runs here .' | head -n 300000)`,
			code: 0, stdout: "BLEU = 100.00"},
		{name: "translate -batch of a billion lines", script: `yes 'ein Hund' | $BIN/translate -model $RUN -batch 1000000000`,
			code: 1, stderr: "-batch 1000000000: want 1 to 65536"},
		{name: "score -batch of a billion lines", setup: `echo '5 2' > $T/s && echo '1 5 2' > $T/g`,
			script: `$BIN/score -checkpoint $RUN/final.safetensors -src $T/s -tgt $T/g -batch 1000000000`, code: 2, stderr: "-batch 1000000000: want 1 to 65536"},
		{name: "translate -score with more targets than lines", setup: `printf 'ein Hund .\n' > $T/in && printf 'a dog .\na cat .\n' > $T/tgt`,
			script: `$BIN/translate -model $RUN -checkpoint final -input $T/in -score $T/tgt`, code: 1, stderr: "tgt has more lines than the 1 of"},

		// Silent wrong answers: refused instead.
		{name: "averaged weights with an edited vocab.txt", setup: swapVocab,
			script: `echo 'ein Hund' | $BIN/translate -model $RUN -checkpoint averaged`, code: 1, stderr: "vocab.txt is not the file the model was trained with"},
		{name: "final weights with an edited bpe.txt", setup: `sed -i '$d' $RUN/bpe.txt`,
			script: `echo 'ein Hund' | $BIN/translate -model $RUN -checkpoint final`, code: 1, stderr: "bpe.txt is not the file the model was trained with"},
		{name: "score -from torch of weights that are not PyTorch's", setup: `echo '5 2' > $T/s && echo '1 5 2' > $T/g`,
			script: `$BIN/score -checkpoint $RUN/final.safetensors -from torch -heads 4 -src $T/s -tgt $T/g`, code: 2, stderr: "self_attn.in_proj_weight: missing"},
		{name: "bleu with add-k smoothing of 1e308", setup: `printf 'a b c\n' > $T/ref && printf 'a b d\n' > $T/hyp`,
			script: `$BIN/bleu -ref $T/ref -hyp $T/hyp -smooth add-k -smooth-value 1e308`, code: 2, stderr: "smoothing value 1e+308 of add-k: want at most"},
		{name: "bleu with floor smoothing of 5", setup: `printf 'a b c\n' > $T/ref && printf 'a b d\n' > $T/hyp`,
			script: `$BIN/bleu -ref $T/ref -hyp $T/hyp -smooth floor -smooth-value 5`, code: 2, stderr: "of floor: want at most 1"},
		{name: "divergence names the step", script: `$BIN/train -out $T/new -steps 30 -lr-factor 100000000 -warmup 1 -clip 0 -train-size 200 -held-out 8 -max-tokens 256`,
			code: 1, stderr: "the loss is NaN; stopping. No checkpoint was saved before it."},

		// Errors that name what and where; flags checked in every mode.
		{name: "bench with a stray argument", script: `$BIN/bench tiny`, code: 1, stderr: `unexpected arguments ["tiny"]`},
		{name: "bench -vocabs with a word", script: `$BIN/bench -vocabs 1000,abc`, code: 1, stderr: `-vocabs 1000,abc: vocabulary size "abc"`},
		{name: "bench -scaling -rounds 0", script: `$BIN/bench -scaling -rounds 0`, code: 1, stderr: "-rounds 0: want 1 to 1000"},
		{name: "bench -shape without a length", script: `$BIN/bench -shape 64`, code: 1, stderr: `-shape "64": want batch x length`},
		{name: "bench -shape past max_len", script: `$BIN/bench -presets tiny -shape 2x5000`, code: 1, stderr: "length 5000 is longer than the preset's max_len"},
		{name: "bench -decode-batches 0", script: `$BIN/bench -decode-batches 0`, code: 1, stderr: `-decode-batches 0: batch size "0"`},
		{name: "bench -child of a huge vocabulary", script: `$BIN/bench -child '[{"kind":"train","preset":"base","vocab":16000000}]'`,
			code: 1, stderr: "model too large"},

		// Right answers: a resume from another directory finds the run's
		// files (run.json's paths are absolute).
		{name: "resume from another directory", script: `mkdir $T/elsewhere && cd $T/elsewhere && $BIN/train -resume $RUN -steps 6`,
			code: 0, stderr: "msg=resumed step=4", changes: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t) })
	}
}

// check runs the case in a directory of its own and checks its outcome.
func (c hostileCase) check(t *testing.T) {
	dir := t.TempDir()
	env := []string{"BIN=" + fix.bin, "RUN=" + filepath.Join(dir, "run"), "COPY=" + filepath.Join(dir, "copy"),
		"DATA=" + filepath.Join(dir, "data"), "T=" + dir}
	for _, p := range [][2]string{{fix.run, "run"}, {fix.copy, "copy"}, {fix.data, "data"}} {
		if err := os.CopyFS(filepath.Join(dir, p[1]), os.DirFS(p[0])); err != nil {
			t.Fatal(err)
		}
	}
	// The copy of the run names the copy of the data.
	settings := filepath.Join(dir, "run", "run.json")
	js, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, bytes.ReplaceAll(js, []byte(fix.data), []byte(filepath.Join(dir, "data"))), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.setup != "" {
		if stdout, stderr, code := bashSplit(t, env, c.setup); code != 0 {
			t.Fatalf("setup %q: status %d\n%s%s", c.setup, code, stdout, stderr)
		}
	}
	before := hashes(t, dir, "run", "copy")
	stdout, stderr, code := bashSplit(t, env, fmt.Sprintf("ulimit -v %d\n%s", memoryKB, c.script))
	stderr = strings.ReplaceAll(stderr, dir, "$T")
	switch {
	case c.code >= 0 && code != c.code, c.code == -1 && code == 0:
		t.Errorf("status %d, want %d\nstderr: %s", code, c.code, stderr)
	case !strings.Contains(stderr, c.stderr):
		t.Errorf("stderr does not hold %q:\n%s", c.stderr, stderr)
	case !strings.Contains(stdout, c.stdout):
		t.Errorf("stdout does not hold %q:\n%s", c.stdout, stdout)
	}
	for _, bad := range []string{"panic:", "fatal error:", "goroutine "} {
		if strings.Contains(stderr, bad) {
			t.Errorf("stderr holds %q:\n%s", bad, stderr)
		}
	}
	for _, p := range c.absent {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("the command left %s", p)
		}
	}
	if !c.changes {
		after := hashes(t, dir, "run", "copy")
		for name, h := range before {
			if after[name] != h {
				t.Errorf("%s changed or went", name)
			}
		}
		for name := range after {
			if _, ok := before[name]; !ok {
				t.Errorf("%s was added", name)
			}
		}
	}
}

// bashSplit runs script under bash (errexit, pipefail) with env added,
// for at most two minutes.
func bashSplit(t *testing.T, env []string, script string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -eo pipefail\n"+script)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%q ran past two minutes", script)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

// hashes are the SHA-256 of every file under the named directories of
// dir, by path; the lock, which every command that opens a run takes, is
// left out.
// fileHash is the SHA-256 of a file's bytes; a symbolic link is its
// target, and a file of more than 1 GB (a case's sparse file) its size and
// time, so that hashing reads neither a device nor 64 GB of zeros.
func fileHash(p string) (string, error) {
	st, err := os.Lstat(p)
	switch {
	case err != nil:
		return "", err
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		return "link to " + target, err
	case !st.Mode().IsRegular() || st.Size() > 1<<30:
		return fmt.Sprintf("%v, %d bytes, modified %v", st.Mode(), st.Size(), st.ModTime()), nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashes(t *testing.T, dir string, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range names {
		root := filepath.Join(dir, name)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == ".lock" {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[rel], err = fileHash(p)
			return err
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return out
}
