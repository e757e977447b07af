package cuda

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
		da, db := dimAt(a, rank-1-k), dimAt(b, rank-1-k)
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

// dimAt is the size of s's axis k places before the last (1 if none).
func dimAt(s []int, k int) int {
	if k >= len(s) {
		return 1
	}
	return s[len(s)-1-k]
}
