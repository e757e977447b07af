package trainer

import (
	"slices"
	"testing"

	"github.com/transformer-go/transformer/model"
)

// TestRigForwardSeesTraining checks that the weights Forward keeps packed
// while frozen are dropped by the next training step: a forward pass after
// it gives what the same program gives unfrozen, and differs from the pass
// before it.
func TestRigForwardSeesTraining(t *testing.T) {
	cfg, err := model.Preset("tiny", 50)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRig(cfg, model.Shape{Batch: 7, SrcLen: 9, TgtLen: 8})
	if err != nil {
		t.Fatal(err)
	}
	scores := func() []float32 {
		return slices.Clone(r.fwd.Output(model.TargetScores).Data().([]float32))
	}
	for _, step := range []func() error{r.Forward, r.Forward, r.TrainStep, r.Forward} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if !r.p.Frozen() {
		t.Fatal("the parameters are not frozen after Forward")
	}
	frozen := scores()
	r.unfreeze()
	if err := r.fwd.Run(); err != nil {
		t.Fatal(err)
	}
	if got := scores(); !slices.Equal(frozen, got) {
		t.Error("a frozen forward pass after a training step differs from an unfrozen one")
	}
	if err := r.TrainStep(); err != nil {
		t.Fatal(err)
	}
	if err := r.Forward(); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(frozen, scores()) {
		t.Error("a forward pass after a training step gives what the pass before it gave")
	}
}
