package trainer

import (
	"fmt"
	"testing"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// The benchmarks time one step at batch 32, source and target length 32, in
// target tokens per second: a training step (forward, backward and Adam) and
// a forward pass (evaluation graph), for the tiny and small presets with
// vocabularies of 1,000 and 8,000. cmd/bench prints the same figures beside
// PyTorch's. The BF16 ones time the same steps with bfloat16 products
// (graph.BF16).

func benchmark(b *testing.B, prec graph.Precision, step func(r *Rig) error) {
	for _, preset := range []string{"tiny", "small"} {
		for _, vocab := range []int{1000, 8000} {
			b.Run(fmt.Sprintf("%s/vocab=%d", preset, vocab), func(b *testing.B) {
				cfg, err := model.Preset(preset, vocab)
				if err != nil {
					b.Fatal(err)
				}
				rt, err := graph.NewRuntime(graph.DeviceCPU, prec)
				if err != nil {
					b.Fatal(err)
				}
				r, err := NewRig(cfg, model.Shape{Batch: 32, SrcLen: 32, TgtLen: 32}, rt)
				if err != nil {
					b.Fatal(err)
				}
				if err := step(r); err != nil { // the first run plans the program's memory
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if err := step(r); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*len(r.Batch.TgtOut))/b.Elapsed().Seconds(), "tgt-tokens/s")
			})
		}
	}
}

func BenchmarkTrainStep(b *testing.B) { benchmark(b, graph.Float32, (*Rig).TrainStep) }

func BenchmarkForward(b *testing.B) { benchmark(b, graph.Float32, (*Rig).Forward) }

func BenchmarkTrainStepBF16(b *testing.B) { benchmark(b, graph.BF16, (*Rig).TrainStep) }

func BenchmarkForwardBF16(b *testing.B) { benchmark(b, graph.BF16, (*Rig).Forward) }
