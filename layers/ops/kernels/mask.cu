// Attention masks made from token ids (layers/ops.PaddingMask, CausalMask);
// launch any grid and block.
#include "common.cuh"

// ids_mask_f32 writes the additive mask of ids [batch, n] (int32): with
// causal, [batch, 1, n, n], -Inf where j > i or ids[b, j] = pad; else
// [batch, 1, 1, n], -Inf where ids[b, j] = pad; 0 elsewhere.
extern "C" __global__ void ids_mask_f32(float* m, const int* ids, int batch, int n, int pad, int causal) {
    long long rows = causal ? (long long)batch * n : batch;
    for_each_elem(e, rows * n) {
        long long r = e / n, j = e % n;
        long long b = causal ? r / n : r, i = causal ? r % n : n;
        m[e] = j > i || ids[b * n + j] == pad ? -INFINITY : 0.0f;
    }
}
