/* tensor.c - host tensors: f32, b1 (bit-packed, canonical layout in base.h), i32, i64. */
#include "base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t bg_tensor_rows(const BgTensor *t) { return t->rank == 2 ? t->dim[0] : 1; }
int64_t bg_tensor_cols(const BgTensor *t) { return t->rank == 2 ? t->dim[1] : t->dim[0]; }

size_t bg_tensor_bytes(const BgTensor *t) {
    int64_t rows = bg_tensor_rows(t), cols = bg_tensor_cols(t);
    switch (t->dtype) {
    case BG_DT_F32: case BG_DT_I32: return (size_t)(rows * cols) * 4;
    case BG_DT_I64: return (size_t)(rows * cols) * 8;
    case BG_DT_B1: return (size_t)(rows * t->words_per_row) * 4;
    }
    return 0;
}

bool bg_tensor_alloc(BgTensor *t, BgDType dt, int rank, int64_t d0, int64_t d1) {
    memset(t, 0, sizeof *t);
    if (d0 < 0 || d1 < 0 || rank < 1 || rank > 2) return false;
    t->dtype = dt;
    t->rank = rank;
    t->dim[0] = d0;
    t->dim[1] = rank == 2 ? d1 : 0;
    t->words_per_row = dt == BG_DT_B1 ? (bg_tensor_cols(t) + 31) / 32 : 0;
    size_t n = bg_tensor_bytes(t);
    t->data = calloc(n ? n : 1, 1);
    return t->data != NULL;
}

void bg_tensor_free(BgTensor *t) {
    if (!t) return;
    free(t->data);
    memset(t, 0, sizeof *t);
}

bool bg_tensor_to_bits(const BgTensor *x, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!x || !x->data || (x->dtype != BG_DT_F32 && x->dtype != BG_DT_B1)) return false;
    if (!bg_tensor_alloc(y, BG_DT_B1, x->rank, x->dim[0], x->rank == 2 ? x->dim[1] : 0)) {
        bg_tensor_free(y);
        return false;
    }
    if (x->dtype == BG_DT_B1) {
        memcpy(y->data, x->data, bg_tensor_bytes(x));
        return true;
    }
    int64_t rows = bg_tensor_rows(x), cols = bg_tensor_cols(x), wpr = y->words_per_row;
    const float *xs = x->data;
    uint32_t *ys = y->data;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t w = 0; w < wpr; w++) {
            uint32_t word = 0;
            int64_t c0 = w * 32, n = cols - c0 < 32 ? cols - c0 : 32;
            for (int64_t b = 0; b < n; b++) /* the bit rule: sign bit clear (docs/semantics.md) */
                word |= (signbit(xs[r * cols + c0 + b]) ? 0u : 1u) << b;
            ys[r * wpr + w] = word;
        }
    }
    return true;
}

static void dim_str(int64_t d, char *buf, size_t n) {
    if (d == BG_DIM_N) snprintf(buf, n, "N");
    else if (d == BG_DIM_G) snprintf(buf, n, "G");
    else snprintf(buf, n, "%lld", (long long)d);
}

char *bg_shape_str(const char *kind, int rank, const int64_t *dim, char *buf, size_t n) {
    char a[32], b[32];
    if (rank <= 0) {
        snprintf(buf, n, "%s", kind);
    } else if (rank == 1) {
        dim_str(dim[0], a, sizeof a);
        snprintf(buf, n, "%s[%s]", kind, a);
    } else {
        dim_str(dim[0], a, sizeof a);
        dim_str(dim[1], b, sizeof b);
        snprintf(buf, n, "%s[%s,%s]", kind, a, b);
    }
    return buf;
}
