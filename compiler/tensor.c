/* tensor.c - host tensors: f32, b1 (bit-packed, canonical layout in bg.h), i32, i64. */
#include "bg.h"

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
