// Elementwise kernels over n float32 elements; launch any grid and block.
#include "common.cuh"

// add_f32: y = a + b.
extern "C" __global__ void add_f32(float* y, const float* a, const float* b, int n) {
    for_each_elem(i, n) y[i] = a[i] + b[i];
}

// mul_f32: y = a ⊙ b.
extern "C" __global__ void mul_f32(float* y, const float* a, const float* b, int n) {
    for_each_elem(i, n) y[i] = a[i] * b[i];
}

// scale_f32: y = s·x.
extern "C" __global__ void scale_f32(float* y, const float* x, float s, int n) {
    for_each_elem(i, n) y[i] = s * x[i];
}

// accumulate_f32: y += x (gradients summed into a buffer).
extern "C" __global__ void accumulate_f32(float* y, const float* x, int n) {
    for_each_elem(i, n) y[i] += x[i];
}

// relu_fwd_f32: y = max(x, 0).
extern "C" __global__ void relu_fwd_f32(float* y, const float* x, int n) {
    for_each_elem(i, n) y[i] = x[i] > 0 ? x[i] : 0.0f;
}

// relu_bwd_f32: dx = dy where x > 0, else 0.
extern "C" __global__ void relu_bwd_f32(float* dx, const float* x, const float* dy, int n) {
    for_each_elem(i, n) dx[i] = x[i] > 0 ? dy[i] : 0.0f;
}

// dropout_f32: y = s·x where bit i&63 of mask word i>>6 is set, else 0; the
// mask is the CPU's (graph.Dropout), and the kernel is its own gradient.
extern "C" __global__ void dropout_f32(float* y, const float* x, const unsigned long long* mask, float s, int n) {
    for_each_elem(i, n) y[i] = (mask[i >> 6] >> (i & 63)) & 1 ? x[i] * s : 0.0f;
}

// to_bf16: y = x rounded to bfloat16 (nearest, ties to even; NaN stays NaN),
// stored as its upper 16 bits, the form cuBLAS takes.
extern "C" __global__ void to_bf16(unsigned short* y, const float* x, int n) {
    for_each_elem(i, n) y[i] = round_bf16(x[i]);
}

// from_bf16: y = x widened from bfloat16 to float32 (exact).
extern "C" __global__ void from_bf16(float* y, const unsigned short* x, int n) {
    for_each_elem(i, n) y[i] = __uint_as_float((unsigned)x[i] << 16);
}

// fill_f32: y = v (say, 0 before a scatter-add).
extern "C" __global__ void fill_f32(float* y, float v, int n) {
    for_each_elem(i, n) y[i] = v;
}
