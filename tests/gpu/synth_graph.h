/* synth_graph.h - the GPU tests' synthetic graphs and batches (random, with isolated nodes,
 * empty graphs, 1-node graphs and a hub), built with bg_graph_from_coo. */
#ifndef BG_SYNTH_GRAPH_H
#define BG_SYNTH_GRAPH_H
#include "bgtest.h"
#include "bg.h"
#include "loaders.h"

/* A random symmetric graph: about deg edges per node, every 7th node isolated; hub > 0
 * connects node 0 to `hub` others.  batched: graph_ptr cuts it into graphs of 1..9 nodes (one
 * empty; with a hub, the first graph is nodes 0..hub); diagonal: edges only inside each graph
 * (a block-diagonal batch: 1-node graphs, graphs without edges, and with a hub one graph of
 * hub + 1 nodes among tiny ones), else anywhere. */
static inline void synth_graph(int64_t n, int deg, int64_t hub, bool batched, bool diagonal,
                               unsigned long long seed, BgGraph *g) {
    int64_t cap = n * deg * 2 + hub * 2 + 1;
    int64_t *gp = bg_xcalloc((size_t)n + 3, 8), ng = 0;
    if (batched) {
        int64_t at = 0;
        while (at < n) {
            int64_t sz = ng == 1 ? 0 : ng == 0 && hub ? hub + 1 : 1 + (int64_t)(bg_test_rand(&seed) % 9);
            if (at + sz > n) sz = n - at;
            at += sz;
            gp[++ng] = at;
        }
        if (ng == 1) gp[++ng] = n; /* make sure an empty graph exists */
    }
    BgCoo c = {n, n, 0, bg_xcalloc((size_t)cap, 8), bg_xcalloc((size_t)cap, 8), NULL};
    for (int64_t i = 0, gi = 0; i < n && n > 1; i++) {
        while (batched && diagonal && gp[gi + 1] <= i) gi++;
        const int64_t lo = batched && diagonal ? gp[gi] : 0, span = batched && diagonal ? gp[gi + 1] - lo : n;
        if (i % 7 == 3) continue;
        for (int k = 0; k < deg / 2 + 1; k++) {
            int64_t j = lo + (int64_t)(bg_test_rand(&seed) % (unsigned long long)span);
            if (j % 7 == 3 || j == i) continue;
            c.row[c.nnz] = i, c.col[c.nnz++] = j;
            c.row[c.nnz] = j, c.col[c.nnz++] = i;
        }
    }
    for (int64_t j = 1; j <= hub && j < n; j++) {
        c.row[c.nnz] = 0, c.col[c.nnz++] = j;
        c.row[c.nnz] = j, c.col[c.nnz++] = 0;
    }
    BgDiagSink d;
    bg_diag_init(&d);
    if (!bg_graph_from_coo(&c, "synthetic", g, &d)) {
        char *t = bg_diag_render(&d);
        fprintf(stderr, "%s", t ? t : "");
        free(t);
    }
    bg_diag_free(&d);
    bg_coo_free(&c);
    if (batched) {
        g->graph_ptr = gp;
        g->ngraphs = ng;
    } else {
        free(gp);
        g->ngraphs = 1;
    }
}

#endif
