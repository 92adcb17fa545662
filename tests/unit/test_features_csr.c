/* test_features_csr.c - the CSR block of sparse input features (plan.h bg_features_csr, which
 * templates/bmm_fb_csr.cuh reads): every value other than +0 in row and column order (-0 and NaN
 * kept), the row pointers, `order` a permutation of the rows by nonzeros, most first, ties by
 * index, and `range` each ordered row's entries; awkward shapes (no rows, no columns, empty rows,
 * one dense row) and refusals (a wrong nonzero count). */
#include "bgtest.h"
#include "plan.h"

#include <stdint.h>

static uint64_t rng = 88172645463325252ull;
static uint32_t next_u32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Builds the block of x and checks it against x. */
static void check_block(const float *x, int64_t rows, int64_t width) {
    uint64_t nnz = 0;
    for (int64_t i = 0; i < rows * width; i++) nnz += !(x[i] == 0.0f && !signbit(x[i]));
    size_t words = 0;
    uint32_t *h = bg_features_csr(x, rows, width, nnz, &words);
    CHECK(h != NULL);
    if (!h) return;
    CHECK_EQ_INT(words, 4 * rows + 2 + 2 * (int64_t)nnz);
    const uint32_t *range = h, *rp = h + 2 * rows, *order = rp + rows + 1, *ent = h + 4 * rows + 2;
    CHECK_EQ_INT(rp[0], 0);
    CHECK_EQ_INT(rp[rows], nnz);
    int bad = 0;
    for (int64_t r = 0; r < rows; r++) {
        uint32_t e = rp[r];
        bad += rp[r] > rp[r + 1];
        for (int64_t k = 0; k < width; k++) {
            const float v = x[r * width + k];
            if (v == 0.0f && !signbit(v)) continue; /* +0 dropped, -0 kept */
            bad += e >= rp[r + 1] || ent[2 * e] != (uint32_t)k || memcmp(&ent[2 * e + 1], &v, sizeof v) != 0;
            e++;
        }
        bad += e != rp[r + 1];
    }
    CHECK_EQ_INT(bad, 0);
    /* order: a permutation, by nonzeros descending, ties by index ascending */
    char *seen = calloc((size_t)rows + 1, 1);
    int bad_order = 0;
    for (int64_t i = 0; i < rows; i++) {
        const uint32_t r = order[i];
        if (r >= (uint32_t)rows || seen[r]) {
            bad_order++;
            continue;
        }
        seen[r] = 1;
        if (i > 0) {
            const uint32_t q = order[i - 1];
            const uint32_t nq = rp[q + 1] - rp[q], nr = rp[r + 1] - rp[r];
            bad_order += nq < nr || (nq == nr && q > r);
        }
        /* range: row order[i]'s entries */
        bad_order += range[2 * i] != rp[r] || range[2 * i + 1] != rp[r + 1];
    }
    CHECK_EQ_INT(bad_order, 0);
    free(seen);
    /* a wrong count is refused, not overrun */
    size_t w2 = 1;
    CHECK(bg_features_csr(x, rows, width, nnz + 1, &w2) == NULL && w2 == 0);
    if (nnz > 0) CHECK(bg_features_csr(x, rows, width, nnz - 1, &w2) == NULL && w2 == 0);
    free(h);
}

/* rows x width features with about `pct` percent nonzeros, some -0, NaN and negative values */
static void random_case(int64_t rows, int64_t width, unsigned pct) {
    float *x = calloc((size_t)(rows * width) + 1, sizeof *x);
    for (int64_t i = 0; i < rows * width; i++) {
        const uint32_t u = next_u32();
        if (u % 100 >= pct) x[i] = (u & 1024) ? -0.0f : 0.0f;
        else x[i] = (u & 4096) ? NAN : (float)((int)(u % 7) - 3) * 0.25f + ((u % 7) == 3 ? 1.0f : 0.0f);
    }
    if (rows > 2) /* one dense row and one empty row */
        for (int64_t k = 0; k < width; k++) {
            x[1 * width + k] = 1.0f + (float)k;
            x[2 * width + k] = 0.0f;
        }
    check_block(x, rows, width);
    free(x);
}

int main(void) {
    random_case(0, 5, 10);     /* no rows */
    random_case(7, 0, 10);     /* no columns */
    random_case(1, 1, 100);
    random_case(3, 33, 30);
    random_case(67, 1433, 2);  /* Cora-like density, rows not a multiple of 4 or 32 */
    random_case(2708, 97, 10);
    random_case(1000, 500, 60);
    for (int t = 0; t < 20; t++) random_case(1 + next_u32() % 300, 1 + next_u32() % 200, 1 + next_u32() % 99);
    /* all rows the same length: order is the identity */
    {
        float x[4 * 3] = {1, 0, 2, 0, 3, 4, 5, 6, 0, 7, 0, 8};
        size_t words = 0;
        uint32_t *h = bg_features_csr(x, 4, 3, 8, &words);
        CHECK(h != NULL);
        if (h) {
            const uint32_t *order = h + 2 * 4 + 5;
            for (int i = 0; i < 4; i++) CHECK_EQ_INT(order[i], i);
            free(h);
        }
    }
    /* sizes past 32-bit offsets are refused */
    {
        size_t words = 7;
        float one = 1.0f;
        CHECK(bg_features_csr(&one, (int64_t)UINT32_MAX, 1, 1, &words) == NULL && words == 0);
    }
    return bg_test_finish();
}
