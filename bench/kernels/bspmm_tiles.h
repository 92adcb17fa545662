/* bspmm_tiles.h - host side of the tensor-core aggregation (bench/kernels/bspmm_bb_tc.cuh): the
 * tile format built from a CSR, and a reverse Cuthill-McKee renumbering that gathers a
 * graph's edges near the diagonal (fewer, denser tiles).  C11, header-only (static
 * inline functions), also compiled as C++ by bench/agg_tc_bench.cu.  Not used by the product.
 *
 * bgt_build: row block rb = rows 16 rb .. 16 rb + 15, column tile kt = nodes 256 kt .. + 255;
 * for each row block the column tiles holding an edge, ascending (rbptr, tcol), and each
 * tile's 16 x 256 bits in m16n8k256 A-fragment order: word 4 lane + k of the tile, lane = 4 g + q,
 * k = 2 which + hi holds row 8 hi + g, word 4 which + q (bit b = column 256 kt + 32 (4 which
 * + q) + b).  Columns need not be sorted; a repeated edge (a bit set twice) is refused, since
 * the kernel counts each bit once.  Cost: O(nnz + ntiles log) time, 512 bytes a tile.
 *
 * bgt_rcm: perm[new] = old, reverse Cuthill-McKee (per connected component from an unvisited
 * node of least degree; neighbours in increasing degree, then id), on the pattern as given
 * (symmetric graphs give the textbook ordering).  bgt_permute: the CSR of the renumbered graph
 * (row r = old row perm[r], columns renamed and ascending). */
#ifndef BGNN_BENCH_BSPMM_TILES_H
#define BGNN_BENCH_BSPMM_TILES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct BgTiles {
    int64_t n, nrb, ntiles, nbits; /* nodes, row blocks, stored tiles, edges (bits set) */
    int32_t *rbptr;                /* nrb + 1 */
    int32_t *tcol;                 /* ntiles */
    uint32_t *tiles;               /* 128 words a tile */
} BgTiles;

static inline void bgt_free(BgTiles *t) {
    free(t->rbptr);
    free(t->tcol);
    free(t->tiles);
    memset(t, 0, sizeof *t);
}

static inline int bgt__cmp_i32(const void *a, const void *b) {
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The distinct column tiles of row block rb into list (sorted); returns their count.  mark[kt]
 * holds the last row block that listed kt. */
static inline int64_t bgt__list(int64_t rb, int64_t n, const int64_t *rowptr, const int32_t *col, int64_t *mark,
                         int32_t *list) {
    int64_t m = 0;
    const int64_t r1 = 16 * rb + 16 < n ? 16 * rb + 16 : n;
    for (int64_t i = 16 * rb; i < r1; i++)
        for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++) {
            const int32_t kt = col[e] / 256;
            if (mark[kt] != rb) {
                mark[kt] = rb;
                list[m++] = kt;
            }
        }
    qsort(list, (size_t)m, sizeof *list, bgt__cmp_i32);
    return m;
}

/* false: out of memory, a column out of range, a repeated edge, or more than 2^31 - 1 tiles. */
static inline bool bgt_build(int64_t n, const int64_t *rowptr, const int32_t *col, BgTiles *out) {
    memset(out, 0, sizeof *out);
    const int64_t nrb = (n + 15) / 16, nkt = (n + 255) / 256;
    out->n = n;
    out->nrb = nrb;
    out->rbptr = (int32_t *)calloc((size_t)nrb + 1, sizeof(int32_t));
    int64_t *mark = (int64_t *)malloc(sizeof(int64_t) * (size_t)(nkt > 0 ? nkt : 1));
    int32_t *list = (int32_t *)malloc(sizeof(int32_t) * (size_t)(nkt > 0 ? nkt : 1));
    int32_t *slot = (int32_t *)malloc(sizeof(int32_t) * (size_t)(nkt > 0 ? nkt : 1));
    bool ok = out->rbptr && mark && list && slot;
    for (int64_t e = 0; ok && e < (n > 0 ? rowptr[n] : 0); e++) ok = col[e] >= 0 && col[e] < n;
    for (int64_t k = 0; ok && k < nkt; k++) mark[k] = -1;
    int64_t total = 0;
    for (int64_t rb = 0; ok && rb < nrb; rb++) {
        total += bgt__list(rb, n, rowptr, col, mark, list);
        ok = total <= INT32_MAX;
        if (ok) out->rbptr[rb + 1] = (int32_t)total;
    }
    if (ok) {
        out->ntiles = total;
        out->tcol = (int32_t *)malloc(sizeof(int32_t) * (size_t)(total > 0 ? total : 1));
        out->tiles = (uint32_t *)calloc((size_t)(total > 0 ? total : 1) * 128, sizeof(uint32_t));
        ok = out->tcol && out->tiles;
    }
    for (int64_t k = 0; ok && k < nkt; k++) mark[k] = -1;
    for (int64_t rb = 0; ok && rb < nrb; rb++) {
        const int64_t m = bgt__list(rb, n, rowptr, col, mark, list), t0 = out->rbptr[rb];
        for (int64_t k = 0; k < m; k++) {
            out->tcol[t0 + k] = list[k];
            slot[list[k]] = (int32_t)(t0 + k);
        }
        const int64_t r1 = 16 * rb + 16 < n ? 16 * rb + 16 : n;
        for (int64_t i = 16 * rb; ok && i < r1; i++) {
            const int rl = (int)(i - 16 * rb), g = rl % 8, hi = rl / 8;
            for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++) {
                const int32_t j = col[e], w = (j % 256) / 32;
                const int q = w % 4, which = w / 4;
                uint32_t *word = &out->tiles[(size_t)slot[j / 256] * 128 + 4 * (4 * g + q) + 2 * which + hi];
                const uint32_t bit = 1u << (j % 32);
                if (*word & bit) {
                    ok = false; /* a repeated edge */
                    break;
                }
                *word |= bit;
                out->nbits++;
            }
        }
    }
    free(mark);
    free(list);
    free(slot);
    if (!ok) bgt_free(out);
    return ok;
}

static const int64_t *bgt__deg_key; /* for qsort (single-threaded host use) */
static inline int bgt__cmp_deg(const void *a, const void *b) {
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    const int64_t dx = bgt__deg_key[x], dy = bgt__deg_key[y];
    if (dx != dy) return (dx > dy) - (dx < dy);
    return (x > y) - (x < y);
}

static inline bool bgt_rcm(int64_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm) {
    int64_t *deg = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    int32_t *byd = (int32_t *)malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    char *seen = (char *)calloc((size_t)(n > 0 ? n : 1), 1);
    if (!deg || !byd || !seen) {
        free(deg);
        free(byd);
        free(seen);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        deg[i] = rowptr[i + 1] - rowptr[i];
        byd[i] = (int32_t)i;
    }
    bgt__deg_key = deg;
    qsort(byd, (size_t)n, sizeof *byd, bgt__cmp_deg);
    int64_t head = 0, tail = 0; /* perm is the BFS queue */
    for (int64_t s = 0; s < n; s++) {
        if (seen[byd[s]]) continue;
        seen[byd[s]] = 1;
        perm[tail++] = byd[s];
        while (head < tail) {
            const int32_t u = perm[head++];
            const int64_t first = tail;
            for (int64_t e = rowptr[u]; e < rowptr[u + 1]; e++)
                if (!seen[col[e]]) {
                    seen[col[e]] = 1;
                    perm[tail++] = col[e];
                }
            qsort(perm + first, (size_t)(tail - first), sizeof *perm, bgt__cmp_deg);
        }
    }
    for (int64_t i = 0; i < n / 2; i++) { /* reverse */
        const int32_t t = perm[i];
        perm[i] = perm[n - 1 - i];
        perm[n - 1 - i] = t;
    }
    free(deg);
    free(byd);
    free(seen);
    return true;
}

/* rowptr2 (n + 1) and col2 (nnz) of the graph renumbered by perm (new -> old). */
static inline bool bgt_permute(int64_t n, const int64_t *rowptr, const int32_t *col, const int32_t *perm, int64_t *rowptr2,
                        int32_t *col2) {
    int32_t *inv = (int32_t *)malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    if (!inv) return false;
    for (int64_t r = 0; r < n; r++) inv[perm[r]] = (int32_t)r;
    rowptr2[0] = 0;
    for (int64_t r = 0; r < n; r++) {
        const int32_t o = perm[r];
        int64_t k = rowptr2[r];
        for (int64_t e = rowptr[o]; e < rowptr[o + 1]; e++) col2[k++] = inv[col[e]];
        qsort(col2 + rowptr2[r], (size_t)(k - rowptr2[r]), sizeof *col2, bgt__cmp_i32);
        rowptr2[r + 1] = k;
    }
    free(inv);
    return true;
}

#endif /* BGNN_BENCH_BSPMM_TILES_H */
