/* gpu_compare.h - the GPU tests' comparison of a GPU result with the CPU reference:
 * b1 bit for bit (padding bits included), f32 within 1e-5 relative (with an absolute floor of
 * 1e-6 near zero; two NaNs agree).  Returns the mismatching elements (bits for b1), -1 for a
 * wrong type or size; *where = the first differing word / value (-1 if none); raises *maxerr. */
#ifndef BG_GPU_COMPARE_H
#define BG_GPU_COMPARE_H
#include "bg.h"

#include <math.h>
#include <stdint.h>

static inline int64_t bg_gpu_compare(const BgTensor *gpu, const BgTensor *ref, double *maxerr, int64_t *where) {
    *where = -1;
    if (gpu->dtype != ref->dtype || bg_tensor_bytes(gpu) != bg_tensor_bytes(ref)) return -1;
    int64_t bad = 0;
    size_t nw = bg_tensor_bytes(gpu) / 4;
    if (gpu->dtype == BG_DT_B1) {
        const uint32_t *a = gpu->data, *b = ref->data;
        for (size_t i = 0; i < nw; i++)
            if (a[i] != b[i]) {
                bad += __builtin_popcount(a[i] ^ b[i]);
                if (*where < 0) *where = (int64_t)i;
            }
        return bad;
    }
    const float *a = gpu->data, *b = ref->data;
    for (size_t i = 0; i < nw; i++) {
        if (a[i] != a[i] && b[i] != b[i]) continue; /* both NaN */
        double da = a[i], db = b[i];
        double err = da == db || fabs(da - db) < 1e-30 ? 0 : fabs(da - db) / fmax(fabs(da), fabs(db));
        if (err > *maxerr) *maxerr = err;
        if (!(err <= 1e-5) && fabs(da - db) > 1e-6) {
            if (*where < 0) *where = (int64_t)i;
            bad++;
        }
    }
    return bad;
}

#endif
