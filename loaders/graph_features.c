/* graph_features.c - the features of a graph that its best schedule depends on (docs/tuning.md):
 * size, degree moments and skew, hubs, isolated rows, the spread of neighbour ids, and the
 * batch shape; and the coarse key the tuning database files records under, so that one graph,
 * or one of about its size and degrees, finds the schedule measured for it. */
#include "loaders.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void bg_graph_features(const BgGraph *g, BgGraphFeatures *f) {
    memset(f, 0, sizeof *f);
    f->n = g->n;
    f->nnz = g->nnz;
    f->ngraphs = g->graph_ptr ? g->ngraphs : 1;
    if (g->n <= 0) return;
    double s1 = 0, s2 = 0, s3 = 0, span = 0;
    int64_t dmax = 0, hubs = 0, iso = 0;
    for (int64_t i = 0; i < g->n; i++) {
        const int64_t d = g->rowptr[i + 1] - g->rowptr[i];
        s1 += (double)d;
        s2 += (double)d * (double)d;
        if (d > dmax) dmax = d;
        hubs += d > BG_GRAPH_HUB_DEGREE;
        iso += d == 0;
        for (int64_t e = g->rowptr[i]; e < g->rowptr[i + 1]; e++) span += fabs((double)g->col[e] - (double)i);
    }
    const double n = (double)g->n, mean = s1 / n;
    const double var = s2 / n - mean * mean > 0 ? s2 / n - mean * mean : 0;
    for (int64_t i = 0; i < g->n; i++) {
        const double z = (double)(g->rowptr[i + 1] - g->rowptr[i]) - mean;
        s3 += z * z * z;
    }
    f->deg_mean = mean;
    f->deg_std = sqrt(var);
    f->deg_max = dmax;
    f->deg_cv = mean > 0 ? f->deg_std / mean : 0;
    f->deg_skew = var > 0 ? (s3 / n) / (var * sqrt(var)) : 0;
    f->hub_frac = (double)hubs / n;
    f->iso_frac = (double)iso / n;
    f->span = g->nnz > 0 ? span / (double)g->nnz / n : 0;
    f->nodes_per_graph = n / (double)f->ngraphs;
}

/* x rounded to the nearest multiple of 1/q. */
static double quant(double x, double q) { return floor(x * q + 0.5) / q; }

void bg_graph_key(const BgGraphFeatures *f, char *buf, size_t len) {
    const double ln = f->n > 0 ? log2((double)f->n) : 0, ld = log2(1.0 + f->deg_mean);
    const double lx = log2(1.0 + (double)f->deg_max), lg = log2((double)(f->ngraphs > 0 ? f->ngraphs : 1));
    snprintf(buf, len, "n=%.1f d=%.1f dmax=%.0f g=%.0f", quant(ln, 2), quant(ld, 2), quant(lx, 1), quant(lg, 1));
}
