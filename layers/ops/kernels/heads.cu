// The attention's heads split and merged (layers/ops.SplitHeads, MergeHeads); launch
// any grid and block.
#include "common.cuh"

// heads_f32 is ops.SplitHeads (split 1) or MergeHeads (split 0), each the
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
