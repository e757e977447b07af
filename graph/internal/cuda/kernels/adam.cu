// The Adam and AdamW update (trainer.Adam) of n parameters in place; launch
// any grid and block. With the bias corrections folded in by the host,
// step = lr/(1-β1^t) and rc2 = 1/sqrt(1-β2^t), and keep = 1 - lr·λ (1 for
// Adam or an undecayed parameter):
//
//	θ ·= keep,   g' = scale·g
//	m = β1·m + (1-β1)·g',   v = β2·v + (1-β2)·g'²
//	θ -= step·m / (sqrt(v)·rc2 + ε)
//
// And what the trainer needs before it on a device (graph.GradSums): the sum
// of a step's gradients and the sum of their squares for clipping.
#include "common.cuh"

// adam_f32 updates theta, m and v from the gradient g.
extern "C" __global__ void adam_f32(float* theta, const float* g, float* m, float* v, int n, float b1, float b2,
                                    float eps, float step, float rc2, float scale, float keep) {
    for_each_elem(i, n) {
        float gi = scale * g[i];
        float mi = b1 * m[i] + (1 - b1) * gi;
        float vi = b2 * v[i] + (1 - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        theta[i] = theta[i] * keep - step * mi / (sqrtf(vi) * rc2 + eps);
    }
}

// axpy_f32: y += a·x (a gradient, times its batch's tokens, added to the
// step's sum of gradients).
extern "C" __global__ void axpy_f32(float* y, const float* x, float a, int n) {
    for_each_elem(i, n) y[i] += a * x[i];
}

// sum_squares_f32 writes part[t] = Σ x[i]² over the elements i that thread t
// of the grid strides, summed in double: one partial per thread of the grid,
// so that for a fixed launch the bits depend on nothing but x.
extern "C" __global__ void sum_squares_f32(float* part, const float* x, int n) {
    double s = 0;
    for_each_elem(i, n) s += (double)x[i] * x[i];
    part[(long long)blockIdx.x * blockDim.x + threadIdx.x] = (float)s;
}

// sum_f32 writes s[0] = Σ x in a fixed order: one block of a power of two
// threads, each summing a stride in double, then block_sum.
extern "C" __global__ void sum_f32(float* s, const float* x, int n) {
    __shared__ float sh[MAX_BLOCK];
    if (blockIdx.x != 0) return;
    double t = 0;
    for_each_col(i, n) t += x[i];
    float r = block_sum((float)t, sh);
    if (threadIdx.x == 0) s[0] = r;
}
