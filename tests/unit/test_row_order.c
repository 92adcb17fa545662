/* test_row_order.c - the work lists of rows by edges (plan.h): the bit aggregation's
 * (bg_plan_row_order, which templates/spmm_bits.cuh reads as the graph array ORDER): the
 * header's hub count, every row once, by edges descending with ties by index, each entry's edge
 * count and first edge (both halves of 64-bit offsets), and the runtime's split threshold; and
 * bspmm_mm's in blocks' slots (bg_plan_mm_slots, templates/mm_spmm.cuh's SLOTS): the header,
 * each hub row in all 8 entries of its own slot, then 8 rows a slot in the same order, the
 * padding, the slot count and the runtime's hub threshold.  Awkward graphs (no rows, empty rows,
 * one long row, all rows equal, first edges past 2^32) and refusals (a row longer than int32). */
#include "bgtest.h"
#include "plan.h"

#include <stdint.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_u32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Builds the list of rowptr[0 .. n] and checks it. */
static void check_list(const int64_t *rowptr, int64_t n, int64_t split_min) {
    int32_t *o = calloc((size_t)(n + 1) * 4, sizeof *o);
    CHECK(bg_plan_row_order(rowptr, n, split_min, o));
    int64_t hubs = 0, longer = 0, slot_hubs = 0;
    for (int64_t r = 0; r < n; r++) {
        hubs += rowptr[r + 1] - rowptr[r] >= split_min;
        longer += rowptr[r + 1] - rowptr[r] > BG_PLAN_LONG_ROW_EDGES;
        slot_hubs += rowptr[r + 1] - rowptr[r] >= BG_FP_SLOTS_HUB_MIN;
    }
    CHECK_EQ_INT(o[0], hubs);
    CHECK_EQ_INT(o[1], longer); /* the wide aggregation's long rows lead the list (templates/spmm.cuh) */
    for (int64_t k = 0; k < n; k++) CHECK((o[4 * (1 + k) + 1] > BG_PLAN_LONG_ROW_EDGES) == (k < longer));
    /* the order slots' 4-warp rows lead it too (templates/spmm_bits.cuh bspmm_bits_rows_slots) */
    CHECK_EQ_INT(o[2], slot_hubs);
    for (int64_t k = 0; k < n; k++) CHECK((o[4 * (1 + k) + 1] >= BG_FP_SLOTS_HUB_MIN) == (k < slot_hubs));
    CHECK(o[3] == 0);
    char *seen = calloc((size_t)n + 1, 1);
    int bad = 0;
    for (int64_t k = 0; k < n; k++) {
        const int32_t *it = o + 4 * (1 + k);
        const int64_t r = it[0];
        if (r < 0 || r >= n || seen[r]) {
            bad++;
            continue;
        }
        seen[r] = 1;
        const int64_t beg = (int64_t)(((uint64_t)(uint32_t)it[3] << 32) | (uint32_t)it[2]);
        bad += beg != rowptr[r] || it[1] != rowptr[r + 1] - rowptr[r];
        bad += (k < hubs) != (it[1] >= split_min); /* the hubs are the list's first entries */
        if (k > 0) {
            const int32_t *pv = o + 4 * k;
            bad += pv[1] < it[1] || (pv[1] == it[1] && pv[0] > it[0]);
        }
    }
    CHECK_EQ_INT(bad, 0);
    free(seen);
    free(o);
}

/* Builds bspmm_mm's slot list of rowptr[0 .. n] and checks it against the row order. */
static void check_slots(const int64_t *rowptr, int64_t n, int64_t hub_min) {
    int64_t hubs = 0;
    for (int64_t r = 0; hub_min > 0 && r < n; r++) hubs += rowptr[r + 1] - rowptr[r] > hub_min;
    const int64_t ns = bg_plan_mm_slots(rowptr, n, hub_min, NULL);
    CHECK_EQ_INT(ns, hubs + (n - hubs + 7) / 8);
    int32_t *o = calloc((size_t)(8 * ns + 1) * 4, sizeof *o), *ord = calloc((size_t)(n + 1) * 4, sizeof *ord);
    CHECK_EQ_INT(bg_plan_mm_slots(rowptr, n, hub_min, o), ns);
    CHECK(bg_plan_row_order(rowptr, n, 2048, ord));
    CHECK(o[0] == ns && o[1] == hubs && o[2] == 0 && o[3] == 0);
    int bad = 0;
    for (int64_t k = 0; k < hubs; k++) /* a hub: the k-th row by edges, -1 - row in all 8 entries */
        for (int w = 0; w < 8; w++) {
            const int32_t *it = o + 4 * (1 + 8 * k + w), *want = ord + 4 * (1 + k);
            bad += it[0] != -1 - want[0] || it[1] != want[1] || it[2] != want[2] || it[3] != want[3];
            bad += it[1] <= hub_min;
        }
    for (int64_t k = hubs; k < hubs + 8 * (ns - hubs); k++) { /* then the rows in order, then padding */
        const int32_t *it = o + 4 * (1 + 8 * hubs + (k - hubs));
        if (k < n) {
            const int32_t *want = ord + 4 * (1 + k);
            bad += it[0] != want[0] || it[1] != want[1] || it[2] != want[2] || it[3] != want[3];
            bad += hub_min > 0 && it[1] > hub_min;
        } else {
            bad += it[0] != 0 || it[1] != -1 || it[2] != 0 || it[3] != 0;
        }
    }
    CHECK_EQ_INT(bad, 0);
    free(o);
    free(ord);
}

/* n rows of random lengths up to maxlen (some empty), first edge at base */
static void random_case(int64_t n, uint32_t maxlen, int64_t base, int64_t split_min) {
    int64_t *rp = calloc((size_t)n + 1, sizeof *rp);
    rp[0] = base;
    for (int64_t r = 0; r < n; r++) rp[r + 1] = rp[r] + (next_u32() % 5 == 0 ? 0 : next_u32() % (maxlen + 1));
    check_list(rp, n, split_min);
    check_slots(rp, n, split_min % 3 == 0 ? 0 : split_min / 2);
    check_slots(rp, n, bg_plan_mm_hub_min(n, rp[n] - rp[0]));
    free(rp);
}

int main(void) {
    random_case(0, 5, 0, 2048); /* no rows */
    random_case(1, 0, 0, 2048);
    random_case(5, 3, 0, 2);
    random_case(67, 40, 0, 30);
    random_case(2708, 168, 0, 2048); /* Cora-like: no hubs */
    random_case(1001, 5000, 0, 2048);
    random_case(300, 9000, 0, 2048); /* many rows of at least BG_FP_SLOTS_HUB_MIN (4096) edges */
    random_case(33, 100, ((int64_t)1 << 32) - 50, 64); /* first edges on both sides of 2^32 */
    for (int t = 0; t < 20; t++) random_case(1 + next_u32() % 500, next_u32() % 3000, 0, 1 + next_u32() % 2500);
    { /* one long row among short ones; equal rows keep index order */
        int64_t rp[7] = {0, 1, 2, 10002, 10003, 10004, 10005};
        check_list(rp, 6, 2048);
        int32_t o[7 * 4];
        CHECK(bg_plan_row_order(rp, 6, 2048, o));
        CHECK_EQ_INT(o[0], 1);
        CHECK_EQ_INT(o[2], 1); /* the 10,000-edge row: 4 warps in the order slots */
        CHECK_EQ_INT(o[4], 2);
        const int want[6] = {2, 0, 1, 3, 4, 5};
        for (int k = 0; k < 6; k++) CHECK_EQ_INT(o[4 * (1 + k)], want[k]);
    }
    { /* the long rows' count: more than BG_PLAN_LONG_ROW_EDGES (32) edges, not 32 itself */
        int64_t rp[4] = {0, 32, 65, 66};
        check_list(rp, 3, 2048);
        int32_t o[4 * 4];
        CHECK(bg_plan_row_order(rp, 3, 2048, o));
        CHECK_EQ_INT(o[1], 1);
        CHECK_EQ_INT(o[4], 1);
    }
    { /* a row longer than int32 is refused and the list left alone */
        int64_t rp[3] = {0, 5, 5 + (int64_t)INT32_MAX + 1};
        int32_t o[3 * 4] = {7};
        CHECK(!bg_plan_row_order(rp, 2, 2048, o));
        CHECK_EQ_INT(o[0], 7);
        CHECK_EQ_INT(bg_plan_mm_slots(rp, 2, 32, NULL), -1);
        CHECK_EQ_INT(bg_plan_mm_slots(rp, 2, 32, o), -1);
        CHECK_EQ_INT(o[0], 7);
    }
    { /* Cora's shape: one row of 169 edges and 3 of 66 to 79 among short rows; hub_min 32 */
        int64_t rp[11] = {0};
        const int len[10] = {3, 169, 2, 66, 1, 79, 4, 75, 0, 5};
        for (int r = 0; r < 10; r++) rp[r + 1] = rp[r] + len[r];
        check_slots(rp, 10, 32);
        int32_t o[(8 * 5 + 1) * 4];
        CHECK_EQ_INT(bg_plan_mm_slots(rp, 10, 32, o), 4 + 1); /* 4 hubs, then 6 rows in one slot */
        const int hub_rows[4] = {1, 5, 7, 3}, rest[6] = {9, 6, 0, 2, 4, 8};
        for (int k = 0; k < 4; k++) CHECK_EQ_INT(o[4 * (1 + 8 * k + 7)], -1 - hub_rows[k]);
        for (int k = 0; k < 6; k++) CHECK_EQ_INT(o[4 * (1 + 32 + k)], rest[k]);
        CHECK_EQ_INT(o[4 * (1 + 32 + 6) + 1], -1);
        CHECK_EQ_INT(bg_plan_mm_slots(rp, 10, 0, NULL), 2); /* no hub slots: ceil(10 / 8) */
    }
    /* the runtime's threshold */
    CHECK_EQ_INT(bg_plan_bits_split_min(0), 2048);
    CHECK_EQ_INT(bg_plan_bits_split_min(10556), 2048);
    CHECK_EQ_INT(bg_plan_bits_split_min(114646484), 114646484 / 8192);
    CHECK_EQ_INT(bg_plan_mm_hub_min(2708, 13264), 32); /* Cora: mean 5 edges a row */
    CHECK_EQ_INT(bg_plan_mm_hub_min(0, 0), 32);
    CHECK_EQ_INT(bg_plan_mm_hub_min(8192, 8192 * 20), 80);
    CHECK_EQ_INT(bg_plan_mm_hub_min(19717, 108365), 2048);                    /* PubMed: no hub slots */
    CHECK_EQ_INT(bg_plan_mm_hub_min(232965, 114848857), 114848857 / 8192);    /* the Reddit-sized graph */
    CHECK_EQ_INT(bg_plan_mm_hub_min(100000, 100000LL * 4000), 100000LL * 4000 / 8192); /* long rows everywhere */
    CHECK_EQ_INT(bg_plan_mm_hub_min(8000, 8000LL * 100), 400);                /* a small graph of long rows */
    return bg_test_finish();
}
