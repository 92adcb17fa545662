/* graph.c - CSR graphs built from COO (duplicates merged, columns ascending) and the
 * adjacencies a GRAPH instruction denotes: optional self loops plus sym/mean/none factor
 * vectors and per-edge weights, exactly as docs/semantics.md section 3 defines them. */
#include "loaders.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static void sort_i32(int32_t *v, int64_t n) {
    if (n < 16) { /* insertion sort: most rows are short */
        for (int64_t i = 1; i < n; i++) {
            int32_t x = v[i];
            int64_t j = i;
            while (j > 0 && v[j - 1] > x) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
    } else {
        qsort(v, (size_t)n, sizeof *v, cmp_i32);
    }
}

bool bg_graph_from_coo(const BgCoo *c, const char *what, BgGraph *out, BgDiagSink *d) {
    if (c->nrows != c->ncols) {
        bg_diag_error(d, BG_E_DATA_SHAPE, "%s: the adjacency matrix must be square, got %lld x %lld", what,
                      (long long)c->nrows, (long long)c->ncols);
        return false;
    }
    int64_t n = c->nrows;
    if (n < 0 || n > INT32_MAX) {
        bg_diag_error(d, BG_E_LIMIT, "%s: %lld nodes over the limit of %d", what, (long long)n, INT32_MAX);
        return false;
    }
    for (int64_t e = 0; e < c->nnz; e++)
        if (c->row[e] < 0 || c->row[e] >= n || c->col[e] < 0 || c->col[e] >= n) {
            bg_diag_error(d, BG_E_FORMAT, "%s: entry %lld (%lld, %lld) out of range for %lld nodes", what,
                          (long long)e + 1, (long long)c->row[e] + 1, (long long)c->col[e] + 1, (long long)n);
            return false;
        }
    int64_t *rowptr = calloc((size_t)n + 1, sizeof(int64_t));
    int32_t *col = malloc((size_t)(c->nnz ? c->nnz : 1) * sizeof(int32_t));
    int64_t *fill = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!rowptr || !col || !fill) {
        free(rowptr);
        free(col);
        free(fill);
        bg_diag_error(d, BG_E_LIMIT, "%s: out of memory for %lld entries", what, (long long)c->nnz);
        return false;
    }
    /* Counting sort by row, then sort and de-duplicate each row in place. */
    for (int64_t e = 0; e < c->nnz; e++) rowptr[c->row[e] + 1]++;
    for (int64_t i = 0; i < n; i++) rowptr[i + 1] += rowptr[i];
    memcpy(fill, rowptr, (size_t)n * sizeof(int64_t));
    for (int64_t e = 0; e < c->nnz; e++) col[fill[c->row[e]]++] = (int32_t)c->col[e];
    int64_t w = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t b = rowptr[i], end = rowptr[i + 1];
        sort_i32(col + b, end - b);
        rowptr[i] = w;
        for (int64_t k = b; k < end; k++)
            if (k == b || col[k] != col[k - 1]) col[w++] = col[k];
    }
    rowptr[n] = w;
    free(fill);
    if (w < c->nnz && w > 0) {
        int32_t *shrunk = realloc(col, (size_t)w * sizeof(int32_t));
        if (shrunk) col = shrunk;
    }
    out->n = n;
    out->nnz = w;
    out->rowptr = rowptr;
    out->col = col;
    out->ngraphs = 1;
    out->graph_ptr = NULL;
    return true;
}

bool bg_adj_build(const BgGraph *g, bool self_loops, BgNorm norm, BgAdj *out) {
    int64_t n = g->n;
    int64_t extra = 0;
    if (self_loops)
        for (int64_t i = 0; i < n; i++) {
            bool has = false;
            for (int64_t k = g->rowptr[i]; k < g->rowptr[i + 1] && !has; k++) has = g->col[k] == i;
            extra += !has;
        }
    int64_t nnz = g->nnz + extra;
    BgAdj a;
    memset(&a, 0, sizeof a);
    a.rowptr = malloc(((size_t)n + 1) * sizeof(int64_t));
    a.col = malloc((size_t)(nnz ? nnz : 1) * sizeof(int32_t));
    a.rowf = malloc((size_t)(n ? n : 1) * sizeof(float));
    a.colf = malloc((size_t)(n ? n : 1) * sizeof(float));
    a.w = malloc((size_t)(nnz ? nnz : 1) * sizeof(float));
    if (!a.rowptr || !a.col || !a.rowf || !a.colf || !a.w) {
        bg_adj_free(&a);
        return false;
    }
    /* Pattern: the graph's row, with i inserted in order when self loops are asked for. */
    int64_t w = 0;
    a.rowptr[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        bool placed = !self_loops;
        for (int64_t k = g->rowptr[i]; k < g->rowptr[i + 1]; k++) {
            int32_t j = g->col[k];
            if (!placed && j >= i) {
                if (j != i) a.col[w++] = (int32_t)i;
                placed = true;
            }
            a.col[w++] = j;
        }
        if (!placed) a.col[w++] = (int32_t)i;
        a.rowptr[i + 1] = w;
    }
    /* Factors in float64, rounded once. */
    for (int64_t i = 0; i < n; i++) {
        int64_t deg = a.rowptr[i + 1] - a.rowptr[i];
        double r = 1.0, c = 1.0;
        /* Only the 1/d factors vanish for d = 0; norm none keeps 1, mean keeps c = 1. */
        if (norm == BG_NORM_SYM) r = c = deg ? 1.0 / sqrt((double)deg) : 0.0;
        else if (norm == BG_NORM_MEAN) r = deg ? 1.0 / (double)deg : 0.0;
        a.rowf[i] = (float)r;
        a.colf[i] = (float)c;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; k++) a.w[k] = a.rowf[i] * a.colf[a.col[k]];
    a.n = n;
    a.nnz = nnz;
    a.self_loops = self_loops;
    a.norm = norm;
    *out = a;
    return true;
}

void bg_graph_free(BgGraph *g) {
    if (!g) return;
    free(g->rowptr);
    free(g->col);
    free(g->graph_ptr);
    memset(g, 0, sizeof *g);
}

void bg_adj_free(BgAdj *a) {
    if (!a) return;
    free(a->rowptr);
    free(a->col);
    free(a->rowf);
    free(a->colf);
    free(a->w);
    memset(a, 0, sizeof *a);
}

const char *bg_norm_name(BgNorm n) {
    switch (n) {
    case BG_NORM_NONE: return "none";
    case BG_NORM_SYM: return "sym";
    case BG_NORM_MEAN: return "mean";
    }
    return "?";
}
