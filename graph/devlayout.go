package graph

import "github.com/pkg/errors"

// BroadcastLayout is bcast_f32's layout for operands of shapes a and b
// broadcast together (NumPy's rule, as graph.BroadcastShape): the output's
// sizes, then a's strides and b's, 0 along the axes each broadcasts over;
// and the output's element count.
func BroadcastLayout(a, b []int) (layout []int32, n int, err error) {
	rank := max(len(a), len(b))
	layout = make([]int32, 3*rank)
	n = 1
	sa, sb := 1, 1
	for k := rank - 1; k >= 0; k-- {
		da, db := dimFromEnd(a, rank-1-k), dimFromEnd(b, rank-1-k)
		if da != db && da != 1 && db != 1 || da < 1 || db < 1 {
			return nil, 0, errors.Errorf("shapes %v and %v do not broadcast (axis %d: %d against %d)", a, b, k-rank, da, db)
		}
		out := max(da, db)
		layout[k] = int32(out)
		if da == out && da > 1 {
			layout[rank+k] = int32(sa)
		}
		if db == out && db > 1 {
			layout[2*rank+k] = int32(sb)
		}
		sa, sb, n = sa*da, sb*db, n*out
		if n > 1<<31-1 {
			return nil, 0, errors.Errorf("shapes %v and %v broadcast to more than 2^31 elements", a, b)
		}
	}
	return layout, n, nil
}

// PermuteLayout is permute_f32's layout for x of shape moved so that y's
// axis k is x's axis perm[k] (graph's transpose): y's sizes, then x's
// strides in y's order; and the element count.
func PermuteLayout(shape, perm []int) (layout []int32, n int, err error) {
	rank := len(shape)
	if len(perm) != rank {
		return nil, 0, errors.Errorf("permutation %v of shape %v: want %d axes", perm, shape, rank)
	}
	strides := make([]int, rank)
	n = 1
	for k := rank - 1; k >= 0; k-- {
		if shape[k] < 1 {
			return nil, 0, errors.Errorf("shape %v: axis %d has size %d", shape, k, shape[k])
		}
		strides[k], n = n, n*shape[k]
		if n > 1<<31-1 {
			return nil, 0, errors.Errorf("shape %v has more than 2^31 elements", shape)
		}
	}
	if !isPermutation(perm) {
		return nil, 0, errors.Errorf("%v is not a permutation of %d axes", perm, rank)
	}
	layout = make([]int32, 2*rank)
	for k, p := range perm {
		layout[k], layout[rank+k] = int32(shape[p]), int32(strides[p])
	}
	return layout, n, nil
}
