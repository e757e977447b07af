// Positions added to a batch of sequences (layers/ops.AddPositions) and their
// gradient; launch any grid and block.
#include "common.cuh"

// add_positions_f32 is ops.AddPositions: y = x + pe, the n elements of x
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
