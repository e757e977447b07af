// Row kernels over [rows, cols] float32 matrices: launch any grid, blocks of a
// power of two threads up to MAX_BLOCK; each block takes whole rows.
#include "common.cuh"

// softmax_fwd_f32 is graph.Softmax: y = softmax(scale·x + mask) along each
// row, e^(v - max) / Σ e^(v - max); a row whose every entry is -Inf (masked)
// is all zeros. mask is additive and may be null; it is broadcast as
// graph.Softmax's: x's rows are [d0, d1, d2] (rows = d0·d1·d2), row
// (i0, i1, i2) takes the mask's row at i0·s0 + i1·s1 + i2·s2 elements (a
// stride 0 where the mask has 1 there), and its element j at j·mcol. It
// reads a row twice and writes it once: the max and the sum of exponentials
// in one pass (online_add), then the output.
extern "C" __global__ void softmax_fwd_f32(float* y, const float* x, const float* mask, int rows, int cols,
                                           float scale, int d1, int d2, int s0, int s1, int s2, int mcol) {
    __shared__ float s[MAX_BLOCK];
    for_each_row(r, rows) {
        const float* xr = x + (long long)r * cols;
        float* yr = y + (long long)r * cols;
        const float* mr = 0;
        if (mask) mr = mask + (long long)(r / d2 / d1) * s0 + (long long)(r / d2 % d1) * s1 + (long long)(r % d2) * s2;
        float m = -INFINITY, l = 0;
        for_each_col(j, cols) online_add(scale * xr[j] + (mr ? mr[(long long)j * mcol] : 0.0f), &m, &l);
        float top = block_max(m, s);
        float sum = block_sum(m == -INFINITY ? 0.0f : l * expf(m - top), s);
        float inv = sum > 0 ? 1.0f / sum : 0.0f;
        for_each_col(j, cols) {
            float v = scale * xr[j] + (mr ? mr[(long long)j * mcol] : 0.0f);
            yr[j] = top == -INFINITY ? 0.0f : expf(v - top) * inv;
        }
    }
}

// softmax_bwd_f32: dx = scale·y ⊙ (dy - Σ dy ⊙ y) along each row.
extern "C" __global__ void softmax_bwd_f32(float* dx, const float* y, const float* dy, int rows, int cols,
                                           float scale) {
    __shared__ float s[MAX_BLOCK];
    for_each_row(r, rows) {
        long long o = (long long)r * cols;
        float dot = 0;
        for_each_col(j, cols) dot += dy[o + j] * y[o + j];
        dot = block_sum(dot, s);
        for_each_col(j, cols) dx[o + j] = scale * y[o + j] * (dy[o + j] - dot);
    }
}

// logsoftmax_fwd_f32: y = x - max - log Σ e^(x - max) along each row, the
// max and the sum in one pass (online_add).
extern "C" __global__ void logsoftmax_fwd_f32(float* y, const float* x, int rows, int cols) {
    __shared__ float s[MAX_BLOCK];
    for_each_row(r, rows) {
        const float* xr = x + (long long)r * cols;
        float m = -INFINITY, l = 0;
        for_each_col(j, cols) online_add(xr[j], &m, &l);
        float top = block_max(m, s);
        float lse = top + logf(block_sum(m == -INFINITY ? 0.0f : l * expf(m - top), s));
        for_each_col(j, cols) y[(long long)r * cols + j] = xr[j] - lse;
    }
}

// logsoftmax_bwd_f32: dx = dy - e^y · Σ dy along each row.
extern "C" __global__ void logsoftmax_bwd_f32(float* dx, const float* y, const float* dy, int rows, int cols) {
    __shared__ float s[MAX_BLOCK];
    for_each_row(r, rows) {
        long long o = (long long)r * cols;
        float sum = 0;
        for_each_col(j, cols) sum += dy[o + j];
        sum = block_sum(sum, s);
        for_each_col(j, cols) dx[o + j] = dy[o + j] - expf(y[o + j]) * sum;
    }
}
