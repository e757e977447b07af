// graph's Add, Sub, Mul and Div (op 0, 1, 2, 3) of two operands broadcast
// to y's n elements, and their gradients; launch any grid and block. layout
// (BroadcastLayout on the Go side) is rank sizes of y, then rank strides of
// a and of b, in elements, 0 along the axes they broadcast over.
#include "common.cuh"

// bcast_offsets sets *ia and *ib to the elements of a and b under y's e.
__device__ void bcast_offsets(long long e, const int* layout, int rank, long long* ia, long long* ib) {
    *ia = 0;
    *ib = 0;
    for (int k = rank - 1; k >= 0; k--) {
        long long i = e % layout[k];
        e /= layout[k];
        *ia += i * layout[rank + k];
        *ib += i * layout[2 * rank + k];
    }
}

// bcast_f32 writes y = a op b.
extern "C" __global__ void bcast_f32(float* y, const float* a, const float* b, const int* layout, int rank, int n,
                                     int op) {
    for_each_elem(e, n) {
        long long ia, ib;
        bcast_offsets(e, layout, rank, &ia, &ib);
        float u = a[ia], v = b[ib];
        y[e] = op == 0 ? u + v : op == 1 ? u - v : op == 2 ? u * v : u / v;
    }
}

// bcast_bwd_f32 writes d, the gradient of operand which (0: a, 1: b) of m
// elements: each element sums, in double, over the n/m elements of y it
// reaches, the terms d(a+b) = dy; d(a-b) = dy, -dy; d(a·b) = dy·b, dy·a;
// d(a/b) = dy/b, -dy·a/b².
extern "C" __global__ void bcast_bwd_f32(float* d, const float* a, const float* b, const float* dy,
                                         const int* layout, int rank, int n, int m, int op, int which) {
    const int* st = layout + (which ? 2 : 1) * rank;
    for_each_elem(j, m) {
        double s = 0;
        for (long long q = 0; q < n / m; q++) {
            // y's element e under operand element j and the q-th
            // combination of the axes the operand broadcasts over.
            long long e = 0, jj = j, qq = q, size = 1;
            for (int k = rank - 1; k >= 0; k--) {
                long long i = 0;
                if (layout[k] > 1 && st[k] != 0) {
                    i = jj % layout[k];
                    jj /= layout[k];
                } else if (layout[k] > 1) {
                    i = qq % layout[k];
                    qq /= layout[k];
                }
                e += i * size;
                size *= layout[k];
            }
            long long ia, ib;
            bcast_offsets(e, layout, rank, &ia, &ib);
            float u = a[ia], v = b[ib], g = dy[e];
            if (op == 0) {
                s += g;
            } else if (op == 1) {
                s += which ? -g : g;
            } else if (op == 2) {
                s += which ? g * u : g * v;
            } else {
                s += which ? -g * u / (v * v) : g / v;
            }
        }
        d[j] = (float)s;
    }
}
