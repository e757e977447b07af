// Embedding lookup of n ids in a [vocab, dim] table; launch any grid and
// block. The host checks ids before a batch reaches the device; an id
// outside [0, vocab) still reads nothing outside the table: its row of y is
// NaN, and it adds no gradient.
#include "common.cuh"

// embed_fwd_f32 is graph.Embed: y[i, :] = scale·table[ids[i], :].
extern "C" __global__ void embed_fwd_f32(float* y, const float* table, const int* ids, int n, int dim, int vocab,
                                         float scale) {
    for_each_elem(e, (long long)n * dim) {
        int id = ids[e / dim];
        y[e] = id >= 0 && id < vocab ? scale * table[(long long)id * dim + e % dim] : NAN;
    }
}

// embed_bwd_f32: dtable[ids[i], :] += scale·dy[i, :] (atomically: ids
// repeat; dtable zeroed first, as by fill_f32).
extern "C" __global__ void embed_bwd_f32(float* dtable, const float* dy, const int* ids, int n, int dim, int vocab,
                                         float scale) {
    for_each_elem(e, (long long)n * dim) {
        int id = ids[e / dim];
        if (id >= 0 && id < vocab) atomicAdd(&dtable[(long long)id * dim + e % dim], scale * dy[e]);
    }
}
