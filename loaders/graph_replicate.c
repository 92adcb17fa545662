/* graph_replicate.c - K requests over one graph (bgnnc run --requests,
 * bgnn_session_set_requests): the graph as K disjoint copies, and the features K times.  Copy r
 * holds nodes r N .. r N + N - 1, its edges shifted by r N, and graphs r G .. r G + G - 1
 * (graph_ptr shifted likewise; a graph without graph_ptr is one graph, G = 1, so its K copies
 * are a batch).  Every op of a model is row-local or reduces within one graph of the batch, so
 * each copy's rows of every output are, bit for bit, what the graph alone gives with that
 * copy's features. */
#include "loaders.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool bg_graph_replicate(const BgGraph *g, int64_t k, BgGraph *out, BgDiagSink *d) {
    if (k < 1 || (g->n > 0 && k > ((int64_t)INT32_MAX + 1) / g->n) ||
        (g->nnz > 0 && k > INT64_MAX / 8 / g->nnz)) {
        bg_diag_error(d, BG_E_LIMIT, "%lld copies of a graph of %lld nodes: %s", (long long)k, (long long)g->n,
                      k < 1 ? "expected at least 1" : "more than 2^31 nodes");
        return false;
    }
    /* a graph without graph_ptr is one graph: its copies become a batch of k */
    const bool batch = g->graph_ptr || k > 1;
    const int64_t n = g->n * k, nnz = g->nnz * k, ng1 = g->graph_ptr ? g->ngraphs : 1, ng = ng1 * k;
    BgGraph r = {n, nnz, bg_xmalloc(sizeof(int64_t) * (size_t)(n + 1)), bg_xmalloc(sizeof(int32_t) * (size_t)(nnz + 1)),
                 batch ? ng : 1, batch ? bg_xmalloc(sizeof(int64_t) * (size_t)(ng + 1)) : NULL};
    for (int64_t c = 0; c < k; c++) {
        const int64_t n0 = c * g->n, e0 = c * g->nnz;
        for (int64_t i = 0; i < g->n; i++) r.rowptr[n0 + i] = e0 + g->rowptr[i];
        for (int64_t e = 0; e < g->nnz; e++) r.col[e0 + e] = (int32_t)(n0 + g->col[e]);
        for (int64_t q = 0; batch && q < ng1; q++) r.graph_ptr[c * ng1 + q] = n0 + (g->graph_ptr ? g->graph_ptr[q] : 0);
    }
    r.rowptr[n] = nnz;
    if (r.graph_ptr) r.graph_ptr[ng] = n;
    *out = r;
    return true;
}

/* t's rows k times one after another (the features of k requests). */
static bool tensor_replicate_rows(const BgTensor *t, int64_t k, BgTensor *out, BgDiagSink *d) {
    const int64_t rows = t->rank > 0 ? t->dim[0] : 1, cols = t->rank > 1 ? t->dim[1] : 1;
    if (k < 1 || t->dtype != BG_DT_F32 || t->rank < 1 || t->rank > 2 || (rows > 0 && k > INT64_MAX / 8 / rows / (cols ? cols : 1))) {
        bg_diag_error(d, BG_E_LIMIT, "%lld copies of a %lld x %lld tensor: %s", (long long)k, (long long)rows,
                      (long long)cols, k < 1 ? "expected at least 1" : "not a float matrix, or too large");
        return false;
    }
    if (!bg_tensor_alloc(out, BG_DT_F32, t->rank, rows * k, cols)) {
        bg_diag_error(d, BG_E_LIMIT, "%lld copies of a %lld x %lld tensor: out of memory", (long long)k, (long long)rows,
                      (long long)cols);
        return false;
    }
    const size_t bytes = bg_tensor_bytes(t);
    for (int64_t c = 0; c < k; c++) memcpy((char *)out->data + (size_t)c * bytes, t->data, bytes);
    return true;
}

/* Labels k times (or NULL). */
static void labels_replicate(int32_t **labels, int64_t n, int64_t k) {
    if (!*labels) return;
    int32_t *l = bg_xmalloc(sizeof(int32_t) * (size_t)(n * k + 1));
    for (int64_t c = 0; c < k; c++) memcpy(l + c * n, *labels, sizeof(int32_t) * (size_t)n);
    free(*labels);
    *labels = l;
}

bool bg_dataset_replicate(BgDataset *ds, int64_t k, BgDiagSink *d) {
    if (k == 1) return true;
    BgGraph g;
    BgTensor f;
    memset(&f, 0, sizeof f);
    if (!bg_graph_replicate(&ds->graph, k, &g, d)) return false;
    if (ds->features.data && ds->features.dim[0] > 0 && !tensor_replicate_rows(&ds->features, k, &f, d)) {
        bg_graph_free(&g);
        return false;
    }
    labels_replicate(&ds->labels, ds->graph.n, k);
    labels_replicate(&ds->graph_labels, ds->graph.graph_ptr ? ds->graph.ngraphs : 1, k);
    bg_graph_free(&ds->graph);
    ds->graph = g;
    if (f.data) {
        bg_tensor_free(&ds->features);
        ds->features = f;
    }
    return true; /* the splits keep naming the first copy's nodes */
}
