// Dropout masks drawn on the device, bit for bit the CPU's (graph's
// dropoutMask): block b of MASK_BLOCK words comes from Go's math/rand/v2 PCG
// seeded with (seed, b), each 64-bit draw giving two 32-bit uniforms u, an
// element kept (its bit set) when u ≥ threshold = p·2³².
#include "common.cuh"

// MASK_BLOCK is graph's maskBlock: the words of a mask drawn from one generator.
#define MASK_BLOCK 64

// pcg_uint64 is Go's PCG.Uint64: the 128-bit LCG step (hi, lo) = (hi, lo)·mul
// + inc mod 2¹²⁸, then the DXSM output of the new state.
__device__ unsigned long long pcg_uint64(unsigned long long* hi, unsigned long long* lo) {
    const unsigned long long mulHi = 2549297995355413924ULL, mulLo = 4865540595714422341ULL;
    const unsigned long long incHi = 6364136223846793005ULL, incLo = 1442695040888963407ULL;
    unsigned long long h = __umul64hi(*lo, mulLo) + *hi * mulLo + *lo * mulHi;
    unsigned long long l = *lo * mulLo + incLo;
    h += incHi + (l < incLo);
    *hi = h;
    *lo = l;
    h ^= h >> 32;
    h *= 0xda942042e4dd58b5ULL;
    h ^= h >> 48;
    return h * (l | 1);
}

// mask_keep is 1 when the low 32 bits of u are ≥ t: the borrow of u - t is
// 1 exactly when they are not.
__device__ unsigned long long mask_keep(unsigned long long u, unsigned long long t) {
    return 1 ^ ((u & 0xffffffffULL) - t) >> 63;
}

// dropout_mask writes the (n+63)/64 words of the mask of n elements drawn
// from the run's seed, seed[0] (read from device memory, so that a
// recorded launch draws each run's mask): bit i&63 of word i>>6 is 1 where
// element i is kept. One thread per block of MASK_BLOCK words; launch as an
// elementwise kernel over the blocks.
extern "C" __global__ void dropout_mask(unsigned long long* mask, const unsigned long long* seed,
                                        unsigned long long threshold, int n) {
    long long words = ((long long)n + 63) / 64;
    for_each_elem(b, (words + MASK_BLOCK - 1) / MASK_BLOCK) {
        unsigned long long hi = seed[0], lo = b;
        long long end = b * MASK_BLOCK + MASK_BLOCK < words ? b * MASK_BLOCK + MASK_BLOCK : words;
        for (long long w = b * MASK_BLOCK; w < end; w++) {
            unsigned long long word = 0;
            for (int j = 0; j < 64 && w * 64 + j < n; j += 2) {
                unsigned long long u = pcg_uint64(&hi, &lo);
                word |= mask_keep(u, threshold) << j;
                if (w * 64 + j + 1 < n) word |= mask_keep(u >> 32, threshold) << (j + 1);
            }
            mask[w] = word;
        }
    }
}
