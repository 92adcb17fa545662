/* dataset_select.c - a loaded batch of graphs cut down to graphs FROM..TO-1 (bgnnc run --graphs):
 * their nodes renumbered from 0, the CSR, graph_ptr, features, node labels, splits and graph
 * labels sliced to them.  The batch must be block-diagonal at the cut: an edge from a kept
 * graph to a node outside them is an error naming the node, not a silently dropped edge. */
#include "loaders.h"

#include <stdlib.h>
#include <string.h>

bool bg_dataset_select_graphs(BgDataset *ds, int64_t from, int64_t to, BgDiagSink *d) {
    const char *dir = ds->dir ? ds->dir : "the dataset";
    BgGraph *g = &ds->graph;
    if (!g->graph_ptr) {
        bg_diag_error(d, BG_E_OPTION, "--graphs %lld:%lld: %s holds one graph (no graph_ptr.npy), not a batch",
                      (long long)from, (long long)to, dir);
        return false;
    }
    if (from < 0 || to <= from || to > g->ngraphs) {
        bg_diag_error(d, BG_E_OPTION, "--graphs %lld:%lld: expected 0 <= FROM < TO <= %lld (the graphs of %s)",
                      (long long)from, (long long)to, (long long)g->ngraphs, dir);
        return false;
    }
    const int64_t lo = g->graph_ptr[from], hi = g->graph_ptr[to], e0 = g->rowptr[lo], e1 = g->rowptr[hi];
    for (int64_t i = lo; i < hi; i++)
        for (int64_t e = g->rowptr[i]; e < g->rowptr[i + 1]; e++)
            if (g->col[e] < lo || g->col[e] >= hi) {
                bg_diag_error(d, BG_E_DATA_SHAPE,
                              "--graphs %lld:%lld: node %lld of %s has an edge to node %d, outside those graphs "
                              "(nodes %lld..%lld): the batch is not block-diagonal there",
                              (long long)from, (long long)to, (long long)i, dir, g->col[e], (long long)lo,
                              (long long)hi - 1);
                return false;
            }
    const int64_t n = hi - lo, nnz = e1 - e0, ng = to - from;
    BgGraph s = {n, nnz, bg_xmalloc(sizeof(int64_t) * (size_t)(n + 1)), bg_xmalloc(sizeof(int32_t) * (size_t)(nnz + 1)),
                 ng, bg_xmalloc(sizeof(int64_t) * (size_t)(ng + 1))};
    for (int64_t i = 0; i <= n; i++) s.rowptr[i] = g->rowptr[lo + i] - e0;
    for (int64_t e = 0; e < nnz; e++) s.col[e] = (int32_t)(g->col[e0 + e] - lo);
    for (int64_t k = 0; k <= ng; k++) s.graph_ptr[k] = g->graph_ptr[from + k] - lo;

    BgTensor f;
    memset(&f, 0, sizeof f);
    if (ds->features.data && ds->features.dim[0] > 0) {
        const int64_t cols = ds->features.dim[1];
        if (!bg_tensor_alloc(&f, BG_DT_F32, 2, n, cols)) {
            bg_diag_error(d, BG_E_LIMIT, "--graphs: %lld x %lld features are too large", (long long)n, (long long)cols);
            bg_graph_free(&s);
            return false;
        }
        memcpy(f.data, (const float *)ds->features.data + lo * cols, sizeof(float) * (size_t)(n * cols));
    }
    bg_graph_free(g);
    *g = s;
    bg_tensor_free(&ds->features);
    ds->features = f;
    if (ds->labels) memmove(ds->labels, ds->labels + lo, sizeof(int32_t) * (size_t)n);
    if (ds->graph_labels) memmove(ds->graph_labels, ds->graph_labels + from, sizeof(int32_t) * (size_t)ng);
    for (int k = 0; k < 3; k++) { /* node ids of the splits: the kept ones, renumbered */
        int64_t m = 0;
        for (int64_t i = 0; ds->split[k] && i < ds->nsplit[k]; i++)
            if (ds->split[k][i] >= lo && ds->split[k][i] < hi) ds->split[k][m++] = ds->split[k][i] - lo;
        ds->nsplit[k] = m;
    }
    return true;
}
