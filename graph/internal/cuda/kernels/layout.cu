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

// set_slot_f32 is graph.SetSlot over a cache [lead, maxLen, d]: y = cache
// with position slot[0] replaced by x [lead, 1, d]; y may be the cache
// itself. A slot outside [0, maxLen) (the host checks it) makes y NaN.
extern "C" __global__ void set_slot_f32(float* y, const float* cache, const float* x, const int* slot, int lead,
                                        int maxLen, int d) {
    int t = slot[0];
    for_each_elem(e, (long long)lead * maxLen * d) {
        long long l = e / d / maxLen, u = e / d % maxLen;
        y[e] = t < 0 || t >= maxLen ? NAN : u == t ? x[l * d + e % d] : cache[e];
    }
}

// slot_grad_f32 is SetSlot's gradient from dy [lead, maxLen, d]: for the
// cache (cache 1), dy with position slot[0] zeroed, out [lead, maxLen, d];
// for x (cache 0), dy at that position, out [lead, 1, d].
extern "C" __global__ void slot_grad_f32(float* out, const float* dy, const int* slot, int lead, int maxLen, int d,
                                         int cache) {
    int t = slot[0];
    bool bad = t < 0 || t >= maxLen;
    if (cache) {
        for_each_elem(e, (long long)lead * maxLen * d) out[e] = bad ? NAN : e / d % maxLen == t ? 0.0f : dy[e];
    } else {
        for_each_elem(e, (long long)lead * d) out[e] = bad ? NAN : dy[(e / d * maxLen + t) * d + e % d];
    }
}
