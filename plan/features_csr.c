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
    /* range[2 rows] | rowptr[rows + 1] | order[rows] | a pad word (entries 8-byte aligned) |
     * entries[2 nnz] (column, value bits) */
    const size_t head = 4 * (size_t)rows + 2, n = head + 2 * (size_t)nnz;
    uint32_t *h = calloc(n, sizeof *h);
    uint32_t *start = calloc((size_t)width + 2, sizeof *start);
    if (!h || !start) {
        free(h);
        free(start);
        return NULL;
    }
    uint32_t *range = h, *rp = h + 2 * rows, *order = rp + rows + 1, *ent = h + head, e = 0;
    for (int64_t r = 0; r < rows; r++) {
        rp[r] = e;
        for (int64_t k = 0; k < width; k++) {
            const float v = x[r * width + k];
            if (!stored(v)) continue; /* +0 only: -0 is kept (bin_csr) */
            if (e == nnz) { /* more nonzeros than the caller counted */
                free(h);
                free(start);
                return NULL;
            }
            ent[2 * e] = (uint32_t)k;
            memcpy(&ent[2 * e + 1], &v, sizeof v);
            e++;
        }
    }
    rp[rows] = e;
    if (e != nnz) {
        free(h);
        free(start);
        return NULL;
    }
    /* order: a counting sort of the rows by nonzeros, descending, stable */
    for (int64_t r = 0; r < rows; r++) start[width - (rp[r + 1] - rp[r]) + 1]++;
    for (int64_t c = 1; c <= width + 1; c++) start[c] += start[c - 1];
    for (int64_t r = 0; r < rows; r++) order[start[width - (rp[r + 1] - rp[r])]++] = (uint32_t)r;
    free(start);
    /* range: row order[p]'s entries, so that a kernel taking the rows in order reads them beside
     * order[p] rather than after it */
    for (int64_t p = 0; p < rows; p++) {
        range[2 * p] = rp[order[p]];
        range[2 * p + 1] = rp[order[p] + 1];
    }
    *words = n;
    return h;
}
