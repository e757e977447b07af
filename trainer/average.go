package trainer

import (
	"slices"
	"strconv"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/data/sentencepiece"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
)

// sameShapes reports parameters a and b that differ in their names or shapes.
func sameShapes(a, b *graph.Params) error {
	if !slices.Equal(a.Names(), b.Names()) {
		return errors.New("the checkpoints hold different tensors")
	}
	for _, name := range a.Names() {
		if !a.Shape(name).Eq(b.Shape(name)) {
			return errors.Errorf("tensor %s has shapes %v and %v", name, a.Shape(name), b.Shape(name))
		}
	}
	return nil
}

// Average writes to out the element-wise mean of the weights in paths, as the
// paper does with the last 5 (base) or 20 (big) checkpoints (section 6.1). All
// checkpoints must be of the same model, of any kind (its tensors are
// averaged by name), and of the same tokenizer (the same fingerprints,
// data.BPEFingerprintKey and data.VocabFingerprintKey, or
// sentencepiece.FingerprintKey, or none); out gets
// the first one's config and the fingerprints, so that the tools that load
// it check its tokenizer as they check a step's.
func Average(paths []string, out string) error {
	if len(paths) == 0 {
		return errors.New("no checkpoints to average")
	}
	var sum *graph.Params
	var cfg model.Config
	meta := map[string]string{"averaged": strconv.Itoa(len(paths))}
	for i, path := range paths {
		ck, err := checkpoint.Read(path)
		if err != nil {
			return err
		}
		if i == 0 {
			cfg = ck.Config
			for _, k := range fingerprintKeys {
				if v, ok := ck.Meta[k]; ok {
					meta[k] = v
				}
			}
		} else if !ck.Config.Equal(cfg) {
			return errors.Errorf("%s is of another model than %s", path, paths[0])
		}
		if err := sameFingerprints(meta, ck.Meta); err != nil {
			return errors.Wrapf(err, "%s and %s", path, paths[0])
		}
		params, err := ck.Params(tensor.Float64)
		if err != nil {
			return err
		}
		if sum != nil {
			if err := sameShapes(sum, params); err != nil {
				return errors.Wrapf(err, "%s and %s", paths[0], path)
			}
		}
		if sum == nil {
			sum = params
			continue
		}
		for _, name := range sum.Names() {
			s := sum.Value(name).Data().([]float64) // the checkpoints are read in float64
			for j, v := range params.Value(name).Data().([]float64) {
				s[j] += v
			}
		}
	}
	for _, name := range sum.Names() {
		s := sum.Value(name).Data().([]float64)
		for j := range s {
			s[j] /= float64(len(paths))
		}
	}
	return checkpoint.Save(out, cfg, sum, meta)
}

// fingerprintKeys name the tokenizer's fingerprints in a checkpoint's metadata.
var fingerprintKeys = []string{data.BPEFingerprintKey, data.VocabFingerprintKey, sentencepiece.FingerprintKey}

// sameFingerprints refuses metadata whose tokenizer fingerprints are not
// those of want (both missing is the same).
func sameFingerprints(want, have map[string]string) error {
	for _, k := range fingerprintKeys {
		if want[k] != have[k] {
			return errors.Errorf("%s differ: %q and %q: the weights are of another tokenizer", k, have[k], want[k])
		}
	}
	return nil
}
