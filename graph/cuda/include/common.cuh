// Helpers shared by the kernels. The same source builds with nvcc for the GPU
// and with g++ for the simulated device (see sim.h), so it uses only what both
// have: no warp shuffles, no extern __shared__, and every thread of a block
// reaches every __syncthreads.
#ifndef COMMON_CUH
#define COMMON_CUH

// MAX_BLOCK is the most threads a block may have; block_sum and block_max
// need blockDim.x a power of two no larger.
#define MAX_BLOCK 1024

// for_each_elem runs i over [0, n) spread over the whole grid.
#define for_each_elem(i, n)                                                    \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;       \
         i < (long long)(n); i += (long long)blockDim.x * gridDim.x)

// for_each_row runs r over [0, rows) with one block per row at a time.
#define for_each_row(r, rows) for (int r = blockIdx.x; r < (rows); r += gridDim.x)

// for_each_col runs j over [0, cols) spread over the block's threads.
#define for_each_col(j, cols) for (int j = threadIdx.x; j < (cols); j += blockDim.x)

// block_sum returns Σ v over the block's threads to all of them; s is the
// block's __shared__ scratch of MAX_BLOCK floats.
__device__ float block_sum(float v, float* s) {
    s[threadIdx.x] = v;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
        __syncthreads();
    }
    float r = s[0];
    __syncthreads();
    return r;
}

// block_max is block_sum with max for +.
__device__ float block_max(float v, float* s) {
    s[threadIdx.x] = v;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + h]);
        __syncthreads();
    }
    float r = s[0];
    __syncthreads();
    return r;
}

// online_add adds v to a running max *m and sum of exponentials *l = Σ
// e^(v_i - *m) (Milakov and Gimelshein, 2018: "Online normalizer calculation
// for softmax"), rescaling *l when the max grows; -Inf adds nothing, NaN
// makes *l NaN.
__device__ void online_add(float v, float* m, float* l) {
    if (v > *m) {
        *l = *l * expf(*m - v) + 1.0f;
        *m = v;
    } else if (v != -INFINITY) {
        *l += expf(v - *m);
    }
}

// block_welford merges each thread's count n, mean and sum of squared
// deviations m2 (Welford's) over the block's threads, and returns the
// block's mean and m2 to all of them (Chan et al., 1979); s is the block's
// __shared__ scratch of 3·MAX_BLOCK floats.
__device__ void block_welford(float n, float mean, float m2, float* s, float* bmean, float* bm2) {
    float* sn = s;
    float* smean = s + MAX_BLOCK;
    float* sm2 = s + 2 * MAX_BLOCK;
    sn[threadIdx.x] = n;
    smean[threadIdx.x] = mean;
    sm2[threadIdx.x] = m2;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) {
            float na = sn[threadIdx.x], nb = sn[threadIdx.x + h], nt = na + nb;
            if (nb > 0) {
                float d = smean[threadIdx.x + h] - smean[threadIdx.x];
                smean[threadIdx.x] += d * nb / nt;
                sm2[threadIdx.x] += sm2[threadIdx.x + h] + d * d * na * nb / nt;
                sn[threadIdx.x] = nt;
            }
        }
        __syncthreads();
    }
    *bmean = smean[0];
    *bm2 = sm2[0];
    __syncthreads();
}

// round_bf16 is x rounded to bfloat16 (nearest, ties to even; NaN stays NaN),
// stored as its upper 16 bits, the form cuBLAS takes.
__device__ unsigned short round_bf16(float x) {
    unsigned u = __float_as_uint(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

#endif
