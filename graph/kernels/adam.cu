// Kernels over many tensors at once (graph.Adam, graph.GradSums): one launch
// for all of a model's parameters, each block of the grid's row y working on
// tensor y of a table of tensor_entry, and the blocks of a row striding
// over its elements. Launch a grid of (any, tensors) blocks of any threads.
#include "common.cuh"

// tensor_entry is one tensor of a table: the host writes it as eight 64-bit
// words (graph/adam.go). p and g are the tensor and its gradient (or the sum
// and the gradient added to it, or the tensor and its bfloat16 copy bf16),
// m and v Adam's moments, n the elements, decay 1 where AdamW decays the
// tensor.
struct tensor_entry {
    float* p;
    const float* g;
    float* m;
    float* v;
    long long n;
    long long decay;
    unsigned short* bf16;
    long long unused;
};

// for_each_tensor_elem runs i over the elements of the grid row's tensor t.
#define for_each_tensor_elem(i, t)                                             \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;       \
         i < (t).n; i += (long long)blockDim.x * gridDim.x)

// adam_multi_f32 is the Adam and AdamW update (graph.AdamStep) of the
// tensors of table t in place, from their gradients. Its constants are read
// from device memory, so that a recorded launch serves every step: k =
// {β1, β2, ε, step, rc2, scale, keep}, with the bias corrections folded in
// by the host, step = lr/(1-β1^t) and rc2 = 1/sqrt(1-β2^t), and keep = 1 -
// lr·λ for the tensors that decay (1 for the others):
//
//	θ ·= keep,   g' = scale·g
//	m = β1·m + (1-β1)·g',   v = β2·v + (1-β2)·g'²
//	θ -= step·m / (sqrt(v)·rc2 + ε)
//
// A tensor with a bfloat16 copy (bf16 not null) gets the new θ rounded there.
extern "C" __global__ void adam_multi_f32(const tensor_entry* t, const float* k) {
    const tensor_entry e = t[blockIdx.y];
    float b1 = k[0], b2 = k[1], eps = k[2], step = k[3], rc2 = k[4], scale = k[5];
    float keep = e.decay ? k[6] : 1.0f;
    for_each_tensor_elem(i, e) {
        float gi = scale * e.g[i];
        float mi = b1 * e.m[i] + (1 - b1) * gi;
        float vi = b2 * e.v[i] + (1 - b2) * gi * gi;
        e.m[i] = mi;
        e.v[i] = vi;
        float p = e.p[i] * keep - step * mi / (sqrtf(vi) * rc2 + eps);
        e.p[i] = p;
        if (e.bf16) e.bf16[i] = round_bf16(p);
    }
}

// axpy_multi_f32: p += a·g for every tensor of t (gradients, times their
// batch's tokens, added to a step's sums of gradients).
extern "C" __global__ void axpy_multi_f32(const tensor_entry* t, float a) {
    const tensor_entry e = t[blockIdx.y];
    for_each_tensor_elem(i, e) e.p[i] += a * e.g[i];
}

// fill_multi_f32: p = 0 for every tensor of t.
extern "C" __global__ void fill_multi_f32(const tensor_entry* t) {
    const tensor_entry e = t[blockIdx.y];
    for_each_tensor_elem(i, e) e.p[i] = 0.0f;
}

// to_bf16_multi rounds every tensor p of t to bfloat16, into bf16.
extern "C" __global__ void to_bf16_multi(const tensor_entry* t) {
    const tensor_entry e = t[blockIdx.y];
    for_each_tensor_elem(i, e) e.bf16[i] = round_bf16(e.p[i]);
}

// sum_squares_multi_f32 writes part[y·threads + j] = Σ g[i]² over the
// elements i of tensor y of t that thread j of its row of the grid strides,
// summed in double: one partial per thread, so that for a fixed launch the
// bits depend on nothing but the gradients.
extern "C" __global__ void sum_squares_multi_f32(float* part, const tensor_entry* t) {
    const tensor_entry e = t[blockIdx.y];
    double s = 0;
    for_each_tensor_elem(i, e) s += (double)e.g[i] * e.g[i];
    long long threads = (long long)gridDim.x * blockDim.x;
    part[blockIdx.y * threads + (long long)blockIdx.x * blockDim.x + threadIdx.x] = (float)s;
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
