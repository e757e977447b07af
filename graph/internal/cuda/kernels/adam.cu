// The Adam and AdamW update (trainer.Adam) of n parameters in place; launch
// any grid and block. With the bias corrections folded in by the host,
// step = lr/(1-β1^t) and rc2 = 1/sqrt(1-β2^t), and keep = 1 - lr·λ (1 for
// Adam or an undecayed parameter):
//
//	θ ·= keep,   g' = scale·g
//	m = β1·m + (1-β1)·g',   v = β2·v + (1-β2)·g'²
//	θ -= step·m / (sqrt(v)·rc2 + ε)
#include "common.cuh"

// adam_f32 updates theta, m and v from the gradient g.
extern "C" __global__ void adam_f32(float* theta, const float* g, float* m, float* v, int n, float b1, float b2,
                                    float eps, float step, float rc2, float scale, float keep) {
    for_each_elem(i, n) {
        float gi = scale * g[i];
        float mi = b1 * m[i] + (1 - b1) * gi;
        float vi = b2 * v[i] + (1 - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        theta[i] = theta[i] * keep - step * mi / (sqrtf(vi) * rc2 + eps);
    }
}
