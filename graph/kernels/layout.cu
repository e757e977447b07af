// Kernels that move or sum values between layouts; launch any grid and block.
#include "common.cuh"

// sum_axis_f32 is graph.Sum (scale 1) or Mean (scale 1/n) over the middle
// axis of x viewed as [outer, n, inner]: y[o, i] = scale·Σ_a x[o, a, i].
extern "C" __global__ void sum_axis_f32(float* y, const float* x, int outer, int n, int inner, float scale) {
    for_each_elem(e, (long long)outer * inner) {
        long long o = e / inner, i = e % inner;
        double s = 0;
        for (int a = 0; a < n; a++) s += x[(o * n + a) * inner + i];
        y[e] = (float)(scale * s);
    }
}

// spread_axis_f32 is sum_axis_f32's gradient: dx[o, a, i] = scale·dy[o, i].
extern "C" __global__ void spread_axis_f32(float* dx, const float* dy, int outer, int n, int inner, float scale) {
    for_each_elem(e, (long long)outer * n * inner) dx[e] = scale * dy[e / ((long long)n * inner) * inner + e % inner];
}

// max_axis_f32 is graph.Max over the middle axis of x [outer, n, inner]:
// y[o, i] = max_a x[o, a, i], NaN if any is NaN.
extern "C" __global__ void max_axis_f32(float* y, const float* x, int outer, int n, int inner) {
    for_each_elem(e, (long long)outer * inner) {
        long long o = e / inner, i = e % inner;
        float m = x[o * n * inner + i];
        for (int a = 1; a < n; a++) {
            float v = x[(o * n + a) * inner + i];
            if (v > m || v != v) m = v;
        }
        y[e] = m;
    }
}

// max_axis_bwd_f32 routes dy[o, i] to the first a where x[o, a, i] equals
// y[o, i], and 0 to the others.
extern "C" __global__ void max_axis_bwd_f32(float* dx, const float* x, const float* y, const float* dy, int outer,
                                            int n, int inner) {
    for_each_elem(e, (long long)outer * inner) {
        long long o = e / inner, i = e % inner;
        int first = n;
        for (int a = 0; a < n && first == n; a++) {
            if (x[(o * n + a) * inner + i] == y[e]) first = a;
        }
        for (int a = 0; a < n; a++) dx[(o * n + a) * inner + i] = a == first ? dy[e] : 0.0f;
    }
}

// slice_axis_f32 is graph's slice along the middle axis of x [outer, n,
// inner]: y [outer, len, inner] = x[:, start:start+len, :].
extern "C" __global__ void slice_axis_f32(float* y, const float* x, int outer, int n, int inner, int start, int len) {
    for_each_elem(e, (long long)outer * len * inner) {
        long long o = e / inner / len, a = e / inner % len, i = e % inner;
        y[e] = x[(o * n + start + a) * inner + i];
    }
}

// place_axis_f32 is slice_axis_f32 the other way, for concatenation and the
// slice's gradient: y[:, start:start+len, :] = x, y being [outer, n, inner]
// and x [outer, len, inner]; the rest of y is left as it is.
extern "C" __global__ void place_axis_f32(float* y, const float* x, int outer, int n, int inner, int start, int len) {
    for_each_elem(e, (long long)outer * len * inner) {
        long long o = e / inner / len, a = e / inner % len, i = e % inner;
        y[(o * n + start + a) * inner + i] = x[e];
    }
}

// permute_f32 is graph's transpose: layout holds rank sizes of y, then rank
// strides of x for y's axes (x's strides permuted), in elements.
extern "C" __global__ void permute_f32(float* y, const float* x, const int* layout, int rank, int n) {
    for_each_elem(e, n) {
        long long r = e, at = 0;
        for (int k = rank - 1; k >= 0; k--) {
            at += r % layout[k] * layout[rank + k];
            r /= layout[k];
        }
        y[e] = x[at];
    }
}
