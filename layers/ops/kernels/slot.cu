// A key/value cache's slot set (layers/ops.SetSlot) and its gradients; launch
// any grid and block.
#include "common.cuh"

// set_slot_f32 is ops.SetSlot over a cache [lead, maxLen, d]: y = cache
// with position slot[0] replaced by x [lead, 1, d]; y may be the cache
// itself. A slot outside [0, maxLen) (the host checks it) makes y NaN.
extern "C" __global__ void set_slot_f32(float* y, const float* cache, const float* x, const int* slot, int lead,
                                        int maxLen, int d) {
    int t = slot[0];
    for_each_elem(e, (long long)lead * maxLen * d) {
        long long l = e / d / maxLen, u = e / d % maxLen;
        y[e] = t < 0 || t >= maxLen ? NAN : u == t ? x[l * d + e % d] : cache[e];
    }
}

// slot_grad_f32 is SetSlot's gradient from dy [lead, maxLen, d]: for the
// cache (cache 1), dy with position slot[0] zeroed, out [lead, maxLen, d];
// for x (cache 0), dy at that position, out [lead, 1, d].
extern "C" __global__ void slot_grad_f32(float* out, const float* dy, const int* slot, int lead, int maxLen, int d,
                                         int cache) {
    int t = slot[0];
    bool bad = t < 0 || t >= maxLen;
    if (cache) {
        for_each_elem(e, (long long)lead * maxLen * d) out[e] = bad ? NAN : e / d % maxLen == t ? 0.0f : dy[e];
    } else {
        for_each_elem(e, (long long)lead * d) out[e] = bad ? NAN : dy[(e / d * maxLen + t) * d + e % d];
    }
}
