// Kernels that move or sum values between layouts; launch any grid and block.
#include "common.cuh"

// heads_f32 is graph.SplitHeads (split 1) or MergeHeads (split 0), each the
// other's gradient: the head-major [batch, heads, len, dk] element
// (b, h, t, k) is the token-major [batch, len, heads·dk] element
// (b, t, h·dk + k); split writes the first from the second.
extern "C" __global__ void heads_f32(float* y, const float* x, int batch, int heads, int len, int dk, int split) {
    for_each_elem(e, (long long)batch * heads * len * dk) {
        long long k = e % dk, t = e / dk % len, h = e / dk / len % heads, b = e / dk / len / heads;
        long long tok = ((b * len + t) * heads + h) * dk + k;
        if (split) {
            y[e] = x[tok];
        } else {
            y[tok] = x[e];
        }
    }
}

// add_positions_f32 is graph.AddPositions: y = x + pe, the n elements of x
// being a batch of sequences of per = len·d elements, pe's first per each.
extern "C" __global__ void add_positions_f32(float* y, const float* x, const float* pe, int n, int per) {
    for_each_elem(i, n) y[i] = x[i] + pe[i % per];
}

// positions_grad_f32 is AddPositions' gradient of pe [maxLen, d], total =
// maxLen·d elements: dpe[i] = Σ_b dy[b·per + i] for i < per, 0 beyond (sums
// in double, here and below).
extern "C" __global__ void positions_grad_f32(float* dpe, const float* dy, int batch, int per, int total) {
    for_each_elem(i, total) {
        double s = 0;
        for (int b = 0; b < batch && i < per; b++) s += dy[(long long)b * per + i];
        dpe[i] = (float)s;
    }
}

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
