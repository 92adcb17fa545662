/* ref_fold.c - the CPU reference of the folds' own operations: batchnorm.scale and
 * batchnorm.shift (fold-batchnorm-mm), signsum and the center step (fold-standardize-mm)
 * (docs/semantics.md, section 2).  Float operations and order are the ones templates/fold.cuh
 * and epilogue.cuh (EpCenter) use. */
#include "ref_ops.h"

#include <math.h>
#include <string.h>

static bool vec_of(const BgTensor *t, int64_t n) {
    return t && t->dtype == BG_DT_F32 && t->rank == 1 && t->dim[0] == n && (n == 0 || t->data);
}

bool bg_ref_bn_scale(const BgTensor *var, const BgTensor *gamma, float eps, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!var || var->dtype != BG_DT_F32 || var->rank != 1) return false;
    int64_t k = var->dim[0];
    if (!vec_of(var, k) || (gamma && !vec_of(gamma, k))) return false;
    if (!bg_tensor_alloc(y, BG_DT_F32, 1, k, 0)) return false;
    const float *v = var->data, *g = gamma ? gamma->data : NULL;
    float *s = y->data;
    for (int64_t i = 0; i < k; i++) {
        float ve = v[i] + eps;
        float inv = 1.0f / sqrtf(ve); /* batchnorm's multiplier, bit for bit */
        s[i] = g ? inv * g[i] : inv;
    }
    return true;
}

bool bg_ref_bn_shift(const BgTensor *w, const BgTensor *mean, const BgTensor *scale, const BgTensor *beta,
                     BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!w || w->dtype != BG_DT_B1 || w->rank != 2) return false;
    int64_t k = w->dim[0], m = w->dim[1], wpr = (m + 31) / 32;
    if (!vec_of(mean, k) || !vec_of(scale, k) || (beta && !vec_of(beta, k))) return false;
    if (!bg_tensor_alloc(y, BG_DT_F32, 1, m, 0)) return false;
    const float *mu = mean->data, *s = scale->data, *b = beta ? beta->data : NULL;
    const uint32_t *ws = w->data;
    float *c = y->data;
    for (int64_t o = 0; o < m; o++) {
        float acc = 0.0f;
        for (int64_t i = 0; i < k; i++) {
            float ms = mu[i] * s[i];
            float t = b ? b[i] - ms : -ms;
            acc = acc + (bg_bit_get(ws, wpr, i, o) ? t : -t);
        }
        c[o] = acc;
    }
    return true;
}

bool bg_ref_signsum(const BgTensor *w, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!w || w->dtype != BG_DT_B1 || w->rank != 2) return false;
    int64_t k = w->dim[0], m = w->dim[1], wpr = (m + 31) / 32;
    if (!bg_tensor_alloc(y, BG_DT_F32, 1, m, 0)) return false;
    const uint32_t *ws = w->data;
    float *s = y->data;
    for (int64_t o = 0; o < m; o++) {
        int64_t ones = 0;
        for (int64_t i = 0; i < k; i++) ones += bg_bit_get(ws, wpr, i, o) ? 1 : 0;
        s[o] = (float)(2 * ones - k);
    }
    return true;
}

bool bg_ref_center(const BgTensor *x, const BgTensor *rows, const BgTensor *cols, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!x || x->dtype != BG_DT_F32 || x->rank != 2 || !vec_of(rows, x->dim[0]) || !vec_of(cols, x->dim[1]))
        return false;
    int64_t nr = x->dim[0], nc = x->dim[1];
    if (!bg_tensor_alloc(y, BG_DT_F32, 2, nr, nc)) return false;
    const float *xs = x->data, *rs = rows->data, *cs = cols->data;
    float *ys = y->data;
    for (int64_t r = 0; r < nr; r++)
        for (int64_t c = 0; c < nc; c++) {
            float p = rs[r] * cs[c];
            ys[r * nc + c] = xs[r * nc + c] - p;
        }
    return true;
}
