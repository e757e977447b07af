package trainer

import (
	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model"
)

// ModelBatch is the data batch b as the model's batch type, sharing its
// id slices: what a model's Feed takes. (Package data knows nothing of
// models, nor package model of data, so the two types meet here.)
func ModelBatch(b data.Batch) model.Batch {
	return model.Batch{
		Shape: model.Shape{Batch: b.Rows, SrcLen: b.SrcLen, TgtLen: b.TgtLen},
		Src:   b.Src, TgtIn: b.TgtIn, TgtOut: b.TgtOut,
	}
}
