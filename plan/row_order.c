/* row_order.c - the work lists of a graph's rows by their edges, most first, with the first
 * edge of each, so that a warp learns its row and its range in one 16-byte load, warps of one
 * block take rows of similar length, and the longest rows start first: the bit aggregation's
 * (templates/spmm_bits.cuh, the graph array ORDER) and bspmm_mm's in blocks' slots with its
 * hub rows first (templates/mm_spmm.cuh, the graph array SLOTS).  Pure functions of the row
 * pointer (layouts in plan.h, bg_plan_row_order and bg_plan_mm_slots); the runtime uploads
 * them at binding. */
#include "plan.h"

#include <stdint.h>
#include <stdlib.h>

int64_t bg_plan_bits_split_min(int64_t nnz) {
    const int64_t m = nnz / 8192;
    return m > 2048 ? m : 2048;
}

/* The longest row's edges, or -1 when n or a row's edges do not fit int32. */
static int64_t longest_row(const int64_t *rowptr, int64_t n) {
    if (n < 0 || n >= INT32_MAX) return -1;
    int64_t maxlen = 0;
    for (int64_t r = 0; r < n; r++) {
        int64_t len = rowptr[r + 1] - rowptr[r];
        if (len < 0 || len > INT32_MAX) return -1;
        if (len > maxlen) maxlen = len;
    }
    return maxlen;
}

/* The rows by edges, most first, ties by index (a stable counting sort), into rank[0..n). */
static bool rows_by_edges(const int64_t *rowptr, int64_t n, int64_t maxlen, int64_t *rank) {
    int64_t *start = calloc((size_t)maxlen + 2, sizeof *start);
    if (!start) return false;
    for (int64_t r = 0; r < n; r++) start[maxlen - (rowptr[r + 1] - rowptr[r]) + 1]++;
    for (int64_t k = 1; k <= maxlen + 1; k++) start[k] += start[k - 1];
    for (int64_t r = 0; r < n; r++) rank[start[maxlen - (rowptr[r + 1] - rowptr[r])]++] = r;
    free(start);
    return true;
}

/* A work-list entry {row (or -1 - row), edges, first edge low, high}. */
static void put_entry(int32_t *it, int64_t row, const int64_t *rowptr, int64_t r) {
    const int64_t beg = rowptr[r];
    it[0] = (int32_t)row;
    it[1] = (int32_t)(rowptr[r + 1] - beg);
    it[2] = (int32_t)(uint32_t)((uint64_t)beg & 0xffffffffu);
    it[3] = (int32_t)(uint32_t)((uint64_t)beg >> 32);
}

bool bg_plan_row_order(const int64_t *rowptr, int64_t n, int64_t split_min, int32_t *out) {
    const int64_t maxlen = longest_row(rowptr, n);
    if (maxlen < 0) return false;
    int64_t *rank = malloc(((size_t)n + 1) * sizeof *rank);
    if (!rank || !rows_by_edges(rowptr, n, maxlen, rank)) {
        free(rank);
        return false;
    }
    int64_t hubs = 0, longer = 0, slot_hubs = 0;
    for (int64_t k = 0; k < n; k++) {
        const int64_t r = rank[k];
        put_entry(out + 4 * (1 + k), r, rowptr, r);
        hubs += rowptr[r + 1] - rowptr[r] >= split_min;
        longer += rowptr[r + 1] - rowptr[r] > BG_PLAN_LONG_ROW_EDGES;
        slot_hubs += rowptr[r + 1] - rowptr[r] >= BG_FP_SLOTS_HUB_MIN;
    }
    free(rank);
    out[0] = (int32_t)hubs;
    out[1] = (int32_t)longer;
    out[2] = (int32_t)slot_hubs;
    out[3] = 0;
    return true;
}

int64_t bg_plan_mm_hub_min(int64_t n, int64_t nnz) {
    const int64_t mean = n > 0 ? (nnz + n - 1) / n : 0;
    const int64_t floor = n <= BG_PLAN_MM_HUB_ROWS ? BG_PLAN_MM_HUB_MIN : bg_plan_bits_split_min(nnz);
    return 4 * mean > floor ? 4 * mean : floor;
}

int64_t bg_plan_mm_slots(const int64_t *rowptr, int64_t n, int64_t hub_min, int32_t *out) {
    const int64_t maxlen = longest_row(rowptr, n);
    if (maxlen < 0) return -1;
    int64_t hubs = 0;
    if (hub_min > 0)
        for (int64_t r = 0; r < n; r++) hubs += rowptr[r + 1] - rowptr[r] > hub_min;
    const int64_t slots = hubs + (n - hubs + 7) / 8;
    if (slots > (INT32_MAX - 1) / 8) return -1;
    if (!out) return slots;
    int64_t *rank = malloc(((size_t)n + 1) * sizeof *rank);
    if (!rank || !rows_by_edges(rowptr, n, maxlen, rank)) {
        free(rank);
        return -1;
    }
    out[0] = (int32_t)slots;
    out[1] = (int32_t)hubs;
    out[2] = out[3] = 0;
    for (int64_t k = 0; k < hubs; k++) /* the hubs: one a slot, in each of its 8 entries */
        for (int w = 0; w < 8; w++) put_entry(out + 4 * (1 + 8 * k + w), -1 - rank[k], rowptr, rank[k]);
    int32_t *rest = out + 4 * (1 + 8 * hubs); /* then 8 rows a slot */
    for (int64_t k = hubs; k < n; k++) put_entry(rest + 4 * (k - hubs), rank[k], rowptr, rank[k]);
    for (int64_t k = n - hubs; k < 8 * (slots - hubs); k++) { /* the last slot's padding */
        int32_t *it = rest + 4 * k;
        it[0] = 0;
        it[1] = -1;
        it[2] = it[3] = 0;
    }
    free(rank);
    return slots;
}
