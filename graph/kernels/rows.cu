// Kernels that copy rows between a program's values; launch any grid and block.
#include "common.cuh"

// gather_rows_f32 is graph.CopyRows: y [rows, size] takes x's rows in the
// order from, y[r, k] = x[from[r], k], or x's first rows as they are when
// from is null.
extern "C" __global__ void gather_rows_f32(float* y, const float* x, const int* from, int rows, int size) {
    for_each_elem(e, (long long)rows * size) {
        long long r = e / size, k = e % size;
        y[e] = x[(from ? (long long)from[r] : r) * size + k];
    }
}
