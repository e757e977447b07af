package trainer

import (
	"strconv"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// Average writes to out the element-wise mean of the weights in paths, as the
// paper does with the last 5 (base) or 20 (big) checkpoints (section 6.1). All
// checkpoints must be of the same model; out gets the first one's config.
func Average(paths []string, out string) error {
	if len(paths) == 0 {
		return errors.New("no checkpoints to average")
	}
	var sum *graph.Params
	var cfg model.Config
	for i, path := range paths {
		ck, err := model.LoadCheckpoint(path)
		if err != nil {
			return err
		}
		if i == 0 {
			cfg = ck.Config
		} else if ck.Config != cfg {
			return errors.Errorf("%s is of another model than %s", path, paths[0])
		}
		_, params, err := ck.Transformer(tensor.Float64)
		if err != nil {
			return err
		}
		if sum == nil {
			sum = params
			continue
		}
		for _, name := range sum.Names() {
			addInto(sum.Value(name), params.Value(name))
		}
	}
	for _, name := range sum.Names() {
		for j, v := range graph.Float64s(sum.Value(name)) {
			sum.Value(name).Data().([]float64)[j] = v / float64(len(paths))
		}
	}
	return model.SaveCheckpoint(out, cfg, sum, map[string]string{"averaged": strconv.Itoa(len(paths))})
}
