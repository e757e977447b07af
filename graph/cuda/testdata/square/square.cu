// A user's device kernel, as a package of its own ships it
// (graph/cuda's Example): the square of every element and its gradient.
#include "common.cuh"

// square_fwd_f32: y = x².
extern "C" __global__ void square_fwd_f32(float* y, const float* x, int n) {
    for_each_elem(i, n) y[i] = x[i] * x[i];
}

// square_bwd_f32: dx = 2·x·dy.
extern "C" __global__ void square_bwd_f32(float* dx, const float* x, const float* dy, int n) {
    for_each_elem(i, n) dx[i] = 2 * x[i] * dy[i];
}
