/* features_csr.c - the CSR block of input features that the sparse variant of a features
 * product reads (templates/bmm_fb_csr.cuh; plan.h bg_features_csr): built on the host by the
 * runtime when it uploads features with few nonzeros, and by the tests that check its layout. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

/* Whether the block stores v: every value but +0 (its bits all zero). */
static bool stored(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u != 0u;
}

uint64_t bg_features_csr_nnz(const float *x, size_t n) {
    uint64_t nz = 0;
    for (size_t i = 0; i < n; i++) nz += stored(x[i]);
    return nz;
}

uint32_t *bg_features_csr(const float *x, int64_t rows, int64_t width, uint64_t nnz, size_t *words) {
    *words = 0;
    if (rows < 0 || width < 0 || rows >= (int64_t)UINT32_MAX || width >= (int64_t)UINT32_MAX ||
        nnz > (uint64_t)UINT32_MAX - 64)
        return NULL;
    const size_t n = 2 * (size_t)rows + 1 + 2 * (size_t)nnz;
    uint32_t *h = calloc(n, sizeof *h);
    uint32_t *start = calloc((size_t)width + 2, sizeof *start);
    if (!h || !start) {
        free(h);
        free(start);
        return NULL;
    }
    uint32_t *col = h + rows + 1, e = 0;
    float *val = (float *)(col + nnz);
    uint32_t *order = (uint32_t *)(val + nnz);
    for (int64_t r = 0; r < rows; r++) {
        h[r] = e;
        for (int64_t k = 0; k < width; k++) {
            const float v = x[r * width + k];
            if (!stored(v)) continue; /* +0 only: -0 is kept (bin_csr) */
            if (e == nnz) { /* more nonzeros than the caller counted */
                free(h);
                free(start);
                return NULL;
            }
            col[e] = (uint32_t)k;
            val[e++] = v;
        }
    }
    h[rows] = e;
    if (e != nnz) {
        free(h);
        free(start);
        return NULL;
    }
    /* order: a counting sort of the rows by nonzeros, descending, stable */
    for (int64_t r = 0; r < rows; r++) start[width - (h[r + 1] - h[r]) + 1]++;
    for (int64_t c = 1; c <= width + 1; c++) start[c] += start[c - 1];
    for (int64_t r = 0; r < rows; r++) order[start[width - (h[r + 1] - h[r])]++] = (uint32_t)r;
    free(start);
    *words = n;
    return h;
}
