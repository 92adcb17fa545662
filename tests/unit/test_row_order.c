/* test_row_order.c - the bit aggregation's work list (plan.h bg_plan_row_order, which
 * templates/spmm_bits.cuh reads as the graph array ORDER): the header's hub count, every row
 * once, by edges descending with ties by index, each entry's edge count and first edge (both
 * halves of 64-bit offsets), and the runtime's split threshold; awkward graphs (no rows, empty
 * rows, one long row, all rows equal, first edges past 2^32) and refusals (a row longer than
 * int32). */
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
    int64_t hubs = 0;
    for (int64_t r = 0; r < n; r++) hubs += rowptr[r + 1] - rowptr[r] >= split_min;
    CHECK_EQ_INT(o[0], hubs);
    CHECK(o[1] == 0 && o[2] == 0 && o[3] == 0);
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

/* n rows of random lengths up to maxlen (some empty), first edge at base */
static void random_case(int64_t n, uint32_t maxlen, int64_t base, int64_t split_min) {
    int64_t *rp = calloc((size_t)n + 1, sizeof *rp);
    rp[0] = base;
    for (int64_t r = 0; r < n; r++) rp[r + 1] = rp[r] + (next_u32() % 5 == 0 ? 0 : next_u32() % (maxlen + 1));
    check_list(rp, n, split_min);
    free(rp);
}

int main(void) {
    random_case(0, 5, 0, 2048); /* no rows */
    random_case(1, 0, 0, 2048);
    random_case(5, 3, 0, 2);
    random_case(67, 40, 0, 30);
    random_case(2708, 168, 0, 2048); /* Cora-like: no hubs */
    random_case(1001, 5000, 0, 2048);
    random_case(33, 100, ((int64_t)1 << 32) - 50, 64); /* first edges on both sides of 2^32 */
    for (int t = 0; t < 20; t++) random_case(1 + next_u32() % 500, next_u32() % 3000, 0, 1 + next_u32() % 2500);
    { /* one long row among short ones; equal rows keep index order */
        int64_t rp[7] = {0, 1, 2, 10002, 10003, 10004, 10005};
        check_list(rp, 6, 2048);
        int32_t o[7 * 4];
        CHECK(bg_plan_row_order(rp, 6, 2048, o));
        CHECK_EQ_INT(o[0], 1);
        CHECK_EQ_INT(o[4], 2);
        const int want[6] = {2, 0, 1, 3, 4, 5};
        for (int k = 0; k < 6; k++) CHECK_EQ_INT(o[4 * (1 + k)], want[k]);
    }
    { /* a row longer than int32 is refused and the list left alone */
        int64_t rp[3] = {0, 5, 5 + (int64_t)INT32_MAX + 1};
        int32_t o[3 * 4] = {7};
        CHECK(!bg_plan_row_order(rp, 2, 2048, o));
        CHECK_EQ_INT(o[0], 7);
    }
    /* the runtime's threshold */
    CHECK_EQ_INT(bg_plan_bits_split_min(0), 2048);
    CHECK_EQ_INT(bg_plan_bits_split_min(10556), 2048);
    CHECK_EQ_INT(bg_plan_bits_split_min(114646484), 114646484 / 8192);
    return bg_test_finish();
}
