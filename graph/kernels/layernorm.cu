// Layer normalization of each row of x [rows, cols] (graph.LayerNorm and
// graph.Normalize): with μ the row's mean (0 unless center), σ² its biased
// variance about μ and r = 1/sqrt(σ² + eps),
//
//	x̂ = (x - μ)·r,   y = g ⊙ x̂ + b
//
// Row kernels: launch any grid, blocks of a power of two threads up to
// MAX_BLOCK.
#include "common.cuh"

// layernorm_fwd_f32 writes y and each row's μ and r (for the backward pass);
// b may be null. It reads a row twice: μ and σ² in one pass (Welford's, each
// thread's merged by block_welford; Σ x² alone unless center), then y.
extern "C" __global__ void layernorm_fwd_f32(float* y, float* mean, float* rstd, const float* x, const float* g,
                                             const float* b, int rows, int cols, float eps, int center) {
    __shared__ float s[3 * MAX_BLOCK];
    for_each_row(r, rows) {
        long long o = (long long)r * cols;
        float mu = 0, var;
        if (center) {
            float n = 0, m = 0, m2 = 0;
            for_each_col(j, cols) {
                float v = x[o + j], d = v - m;
                n += 1;
                m += d / n;
                m2 += d * (v - m);
            }
            float bm2;
            block_welford(n, m, m2, s, &mu, &bm2);
            var = bm2 / cols;
        } else {
            float sq = 0;
            for_each_col(j, cols) sq += x[o + j] * x[o + j];
            var = block_sum(sq, s) / cols;
        }
        float rs = 1.0f / sqrtf(var + eps);
        for_each_col(j, cols) y[o + j] = g[j] * (x[o + j] - mu) * rs + (b ? b[j] : 0.0f);
        if (threadIdx.x == 0) {
            mean[r] = mu;
            rstd[r] = rs;
        }
    }
}

// layernorm_bwd_f32 writes dx = r·(d - mean(d) - x̂·mean(d ⊙ x̂)) with
// d = g ⊙ dy, the mean(d) term only when centered.
extern "C" __global__ void layernorm_bwd_f32(float* dx, const float* dy, const float* x, const float* g,
                                             const float* mean, const float* rstd, int rows, int cols, int center) {
    __shared__ float s[MAX_BLOCK];
    for_each_row(r, rows) {
        long long o = (long long)r * cols;
        float mu = mean[r], rs = rstd[r], sd = 0, sdx = 0;
        for_each_col(j, cols) {
            float d = g[j] * dy[o + j];
            sd += d;
            sdx += d * (x[o + j] - mu) * rs;
        }
        float md = center ? block_sum(sd, s) / cols : 0.0f;
        float mdx = block_sum(sdx, s) / cols;
        for_each_col(j, cols) {
            float xh = (x[o + j] - mu) * rs;
            dx[o + j] = rs * (g[j] * dy[o + j] - md - xh * mdx);
        }
    }
}

// layernorm_bwd_params_f32 writes dg = Σ_rows dy ⊙ x̂ and db = Σ_rows dy (db
// may be null), one thread per column, summing in double: launch any grid
// and block.
extern "C" __global__ void layernorm_bwd_params_f32(float* dg, float* db, const float* dy, const float* x,
                                                    const float* mean, const float* rstd, int rows, int cols) {
    for_each_elem(j, cols) {
        double sg = 0, sb = 0;
        for (int r = 0; r < rows; r++) {
            long long o = (long long)r * cols + j;
            sg += dy[o] * (x[o] - mean[r]) * rstd[r];
            sb += dy[o];
        }
        dg[j] = (float)sg;
        if (db) db[j] = (float)sb;
    }
}
