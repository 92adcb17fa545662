/* row_order.c - the bit aggregation's work list (templates/spmm_bits.cuh, the graph array
 * ORDER): a graph's rows by their edges, most first, with the first edge of each, so that a
 * warp learns its row and its range in one 16-byte load, warps of one block take rows of
 * similar length, and the longest rows start first.  A pure function of the row pointer
 * (layout in plan.h, bg_plan_row_order); the runtime uploads it at binding. */
#include "plan.h"

#include <stdint.h>
#include <stdlib.h>

int64_t bg_plan_bits_split_min(int64_t nnz) {
    const int64_t m = nnz / 8192;
    return m > 2048 ? m : 2048;
}

bool bg_plan_row_order(const int64_t *rowptr, int64_t n, int64_t split_min, int32_t *out) {
    if (n < 0 || n >= INT32_MAX) return false;
    int64_t maxlen = 0;
    for (int64_t r = 0; r < n; r++) {
        int64_t len = rowptr[r + 1] - rowptr[r];
        if (len < 0 || len > INT32_MAX) return false;
        if (len > maxlen) maxlen = len;
    }
    /* a counting sort by edges, descending, stable (ties by index) */
    int64_t *start = calloc((size_t)maxlen + 2, sizeof *start);
    if (!start) return false;
    for (int64_t r = 0; r < n; r++) start[maxlen - (rowptr[r + 1] - rowptr[r]) + 1]++;
    for (int64_t k = 1; k <= maxlen + 1; k++) start[k] += start[k - 1];
    int64_t hubs = 0;
    for (int64_t r = 0; r < n; r++) {
        const int64_t beg = rowptr[r], len = rowptr[r + 1] - beg;
        int32_t *it = out + 4 * (1 + start[maxlen - len]++);
        it[0] = (int32_t)r;
        it[1] = (int32_t)len;
        it[2] = (int32_t)(uint32_t)((uint64_t)beg & 0xffffffffu);
        it[3] = (int32_t)(uint32_t)((uint64_t)beg >> 32);
        hubs += len >= split_min;
    }
    free(start);
    out[0] = (int32_t)hubs;
    out[1] = out[2] = out[3] = 0;
    return true;
}
