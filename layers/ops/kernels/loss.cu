// Label-smoothed cross-entropy (ops.SmoothedCrossEntropy and its Logits
// form) of x [rows, vocab], log-probabilities or, with logits, scores,
// against targets [rows]. Per row i with target t ≠ pad,
//
//	q = (1-ε)·onehot(t) + ε/vocab
//	stats[i] = (z, z - Σ_v q_v·x[i, v]),   z = logsumexp(x[i]) (0 unless logits)
//
// and stats[i] = (0, 0) for pad rows; the loss is the mean of stats[:, 1] over
// the rows that are not pad. A target outside [0, vocab) (the host checks
// them) makes its row's stats NaN. Row kernels: launch any grid, blocks of a
// power of two threads up to MAX_BLOCK.
#include "common.cuh"

// smoothed_ce_fwd_f32 writes stats [rows, 2].
extern "C" __global__ void smoothed_ce_fwd_f32(float* stats, const float* x, const int* targets, int rows, int vocab,
                                               float eps, int pad, int logits) {
    __shared__ float s[MAX_BLOCK];
    for_each_row(r, rows) {
        const float* xr = x + (long long)r * vocab;
        int t = targets[r];
        if (t == pad || t < 0 || t >= vocab) {
            if (threadIdx.x == 0) stats[2 * r] = stats[2 * r + 1] = t == pad ? 0.0f : NAN;
            continue;
        }
        float z = 0, sum = 0;
        if (logits) {
            float m = -INFINITY;
            for_each_col(j, vocab) m = fmaxf(m, xr[j]);
            m = block_max(m, s);
            for_each_col(j, vocab) sum += expf(xr[j] - m);
            z = m + logf(block_sum(sum, s));
            sum = 0;
        }
        for_each_col(j, vocab) sum += xr[j];
        sum = block_sum(sum, s);
        if (threadIdx.x == 0) {
            stats[2 * r] = z;
            stats[2 * r + 1] = z - (1 - eps) * xr[t] - eps / vocab * sum;
        }
    }
}

// smoothed_ce_bwd_f32 writes dx from dstats [rows, 2]: with s the row's
// softmax (logits only; e^(x - z) renormalized), dz, dl = dstats[i],
//
//	dx[i, v] = (dl + dz)·s_v - dl·q_v   (logits),   -dl·q_v   (otherwise)
extern "C" __global__ void smoothed_ce_bwd_f32(float* dx, const float* x, const int* targets, const float* stats,
                                               const float* dstats, int rows, int vocab, float eps, int pad,
                                               int logits) {
    __shared__ float s[MAX_BLOCK];
    for_each_row(r, rows) {
        long long o = (long long)r * vocab;
        int t = targets[r];
        if (t == pad || t < 0 || t >= vocab) {
            for_each_col(j, vocab) dx[o + j] = t == pad ? 0.0f : NAN;
            continue;
        }
        float dz = dstats[2 * r], dl = dstats[2 * r + 1], q = eps / vocab, scale = 0;
        if (logits) {
            float sum = 0;
            for_each_col(j, vocab) {
                dx[o + j] = expf(x[o + j] - stats[2 * r]);
                sum += dx[o + j];
            }
            scale = (dl + dz) / block_sum(sum, s);
        }
        for_each_col(j, vocab) {
            float p = logits ? scale * dx[o + j] : 0.0f;
            dx[o + j] = p - dl * q - (j == t ? dl * (1 - eps) : 0.0f);
        }
    }
}

// mean_loss_fwd_f32 writes l[0] = Σ stats[:, 1] / max(N, 1), N the rows
// whose target is not pad. One block of a power of two threads.
extern "C" __global__ void mean_loss_fwd_f32(float* l, const float* stats, const int* targets, int rows, int pad) {
    __shared__ float s[MAX_BLOCK];
    if (blockIdx.x != 0) return;
    float sum = 0, count = 0;
    for_each_col(i, rows) {
        sum += stats[2 * i + 1];
        count += targets[i] != pad;
    }
    sum = block_sum(sum, s);
    count = block_sum(count, s);
    if (threadIdx.x == 0) l[0] = sum / fmaxf(count, 1.0f);
}

// mean_loss_bwd_f32 writes dstats [rows, 2]: (0, dl/max(N, 1)) on rows whose
// target is not pad, (0, 0) on the others. One block as mean_loss_fwd_f32.
extern "C" __global__ void mean_loss_bwd_f32(float* dstats, const float* dl, const int* targets, int rows, int pad) {
    __shared__ float s[MAX_BLOCK];
    if (blockIdx.x != 0) return;
    float count = 0;
    for_each_col(i, rows) count += targets[i] != pad;
    float g = dl[0] / fmaxf(block_sum(count, s), 1.0f);
    for_each_col(i, rows) {
        dstats[2 * i] = 0;
        dstats[2 * i + 1] = targets[i] != pad ? g : 0.0f;
    }
}

// target_scores_f32 is ops.TargetScores: scores [rows, 2] = (log
// softmax(x_i)[t], 1 if t is the first index of the row's largest logit
// else 0) for each row i with target t ≠ pad, (0, 0) for pad rows, NaN for
// a target outside [0, vocab). Row kernel, as smoothed_ce_fwd_f32.
extern "C" __global__ void target_scores_f32(float* scores, const float* x, const int* targets, int rows, int vocab,
                                             int pad) {
    __shared__ float s[MAX_BLOCK];
    for_each_row(r, rows) {
        const float* xr = x + (long long)r * vocab;
        int t = targets[r];
        if (t == pad || t < 0 || t >= vocab) {
            if (threadIdx.x == 0) scores[2 * r] = scores[2 * r + 1] = t == pad ? 0.0f : NAN;
            continue;
        }
        float m = -INFINITY, sum = 0, first = -INFINITY;
        for_each_col(j, vocab) m = fmaxf(m, xr[j]);
        m = block_max(m, s);
        for_each_col(j, vocab) {
            sum += expf(xr[j] - m);
            if (xr[j] == m) first = fmaxf(first, -(float)j);
        }
        sum = block_sum(sum, s);
        first = -block_max(first, s);
        if (threadIdx.x == 0) {
            scores[2 * r] = xr[t] - (m + logf(sum));
            scores[2 * r + 1] = first == t ? 1.0f : 0.0f;
        }
    }
}
