// Row kernels over [rows, cols] float32 matrices: launch any grid, blocks of a
// power of two threads up to MAX_BLOCK; each block takes whole rows.
#include "common.cuh"

// softmax_fwd_f32: y = e^(x - max) / Σ e^(x - max) along each row.
extern "C" __global__ void softmax_fwd_f32(float* y, const float* x, int rows, int cols) {
    __shared__ float s[MAX_BLOCK];
    for_each_row(r, rows) {
        const float* xr = x + (long long)r * cols;
        float* yr = y + (long long)r * cols;
        float m = -INFINITY;
        for_each_col(j, cols) m = fmaxf(m, xr[j]);
        m = block_max(m, s);
        float sum = 0;
        for_each_col(j, cols) {
            yr[j] = expf(xr[j] - m);
            sum += yr[j];
        }
        float inv = 1.0f / block_sum(sum, s);
        for_each_col(j, cols) yr[j] *= inv;
    }
}

// softmax_bwd_f32: dx = y ⊙ (dy - Σ dy ⊙ y) along each row.
extern "C" __global__ void softmax_bwd_f32(float* dx, const float* y, const float* dy, int rows, int cols) {
    __shared__ float s[MAX_BLOCK];
    for_each_row(r, rows) {
        long long o = (long long)r * cols;
        float dot = 0;
        for_each_col(j, cols) dot += dy[o + j] * y[o + j];
        dot = block_sum(dot, s);
        for_each_col(j, cols) dx[o + j] = y[o + j] * (dy[o + j] - dot);
    }
}

// logsoftmax_fwd_f32: y = x - max - log Σ e^(x - max) along each row.
extern "C" __global__ void logsoftmax_fwd_f32(float* y, const float* x, int rows, int cols) {
    __shared__ float s[MAX_BLOCK];
    for_each_row(r, rows) {
        const float* xr = x + (long long)r * cols;
        float m = -INFINITY;
        for_each_col(j, cols) m = fmaxf(m, xr[j]);
        m = block_max(m, s);
        float sum = 0;
        for_each_col(j, cols) sum += expf(xr[j] - m);
        float lse = m + logf(block_sum(sum, s));
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
