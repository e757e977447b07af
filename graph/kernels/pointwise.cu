// The pointwise functions of graph (pointwise.go) and their gradients over
// n float32 elements; launch any grid and block. NAME_fwd_f32 writes y =
// f(x); NAME_bwd_f32 writes dx = dy·f'(v), v being x or y as the CPU's
// backward reads it (said for each).
#include "common.cuh"

#define SQRT1_2 0.70710678118654752f
#define INV_SQRT_2PI 0.39894228040143268f

__device__ float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

__device__ float silu_grad(float x) {
    float s = sigmoidf(x);
    return s * (1.0f + x * (1.0f - s));
}

__device__ float gelu_grad(float x) { return 0.5f * (1.0f + erff(x * SQRT1_2)) + x * expf(-0.5f * x * x) * INV_SQRT_2PI; }

// exp: dx = dy·y; the backward pass reads v = y.
extern "C" __global__ void exp_fwd_f32(float* y, const float* x, int n) {
    for_each_elem(i, n) y[i] = expf(x[i]);
}
extern "C" __global__ void exp_bwd_f32(float* dx, const float* v, const float* dy, int n) {
    for_each_elem(i, n) dx[i] = dy[i] * (v[i]);
}

// log: dx = dy / x; the backward pass reads v = x.
extern "C" __global__ void log_fwd_f32(float* y, const float* x, int n) {
    for_each_elem(i, n) y[i] = logf(x[i]);
}
extern "C" __global__ void log_bwd_f32(float* dx, const float* v, const float* dy, int n) {
    for_each_elem(i, n) dx[i] = dy[i] * (1.0f / v[i]);
}

// sqrt: dx = dy / 2y; the backward pass reads v = y.
extern "C" __global__ void sqrt_fwd_f32(float* y, const float* x, int n) {
    for_each_elem(i, n) y[i] = sqrtf(x[i]);
}
extern "C" __global__ void sqrt_bwd_f32(float* dx, const float* v, const float* dy, int n) {
    for_each_elem(i, n) dx[i] = dy[i] * (0.5f / v[i]);
}

// tanh: dx = dy·(1 - y²); the backward pass reads v = y.
extern "C" __global__ void tanh_fwd_f32(float* y, const float* x, int n) {
    for_each_elem(i, n) y[i] = tanhf(x[i]);
}
extern "C" __global__ void tanh_bwd_f32(float* dx, const float* v, const float* dy, int n) {
    for_each_elem(i, n) dx[i] = dy[i] * (1.0f - v[i] * v[i]);
}

// sigmoid: dx = dy·y·(1 - y); the backward pass reads v = y.
extern "C" __global__ void sigmoid_fwd_f32(float* y, const float* x, int n) {
    for_each_elem(i, n) y[i] = sigmoidf(x[i]);
}
extern "C" __global__ void sigmoid_bwd_f32(float* dx, const float* v, const float* dy, int n) {
    for_each_elem(i, n) dx[i] = dy[i] * (v[i] * (1.0f - v[i]));
}

// silu: x·σ(x), dx = dy·σ(x)·(1 + x·(1 - σ(x))); the backward pass reads v = x.
extern "C" __global__ void silu_fwd_f32(float* y, const float* x, int n) {
    for_each_elem(i, n) y[i] = x[i] * sigmoidf(x[i]);
}
extern "C" __global__ void silu_bwd_f32(float* dx, const float* v, const float* dy, int n) {
    for_each_elem(i, n) dx[i] = dy[i] * (silu_grad(v[i]));
}

// gelu: x·Φ(x) exactly (not the tanh form), dx = dy·(Φ(x) + x·φ(x)); the backward pass reads v = x.
extern "C" __global__ void gelu_fwd_f32(float* y, const float* x, int n) {
    for_each_elem(i, n) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * SQRT1_2));
}
extern "C" __global__ void gelu_bwd_f32(float* dx, const float* v, const float* dy, int n) {
    for_each_elem(i, n) dx[i] = dy[i] * (gelu_grad(v[i]));
}
