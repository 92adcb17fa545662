/* rmat.c - rmat_graph (rmat.h): the benchmark R-MAT graph as a CSR graph.
 *
 * 1. The endpoints of every edge of the stream, k split over the threads; the entries (u, v)
 *    and (v, u) of every edge with u != v counted per part of the rows (part p: rows u with
 *    u * P / n == p), then scattered into one COO per part, each thread at its own offsets.
 * 3. bg_graph_from_coo on every part at once: a square n x n graph whose rows outside the
 *    part are empty; then the parts' rows one after the other.
 * The result does not depend on the thread count: each row is built, sorted and merged by
 * bg_graph_from_coo from the same entries. */
#include "rmat.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int nthreads(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
static int thread_id(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}
static int team_size(void) { /* the threads a parallel region got: at most the P asked for */
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

bool rmat_graph(int64_t n, int64_t M, uint64_t seed, BgGraph *out, BgDiagSink *d) {
    memset(out, 0, sizeof *out);
    if (n <= 0 || n > INT32_MAX || M < 0) {
        bg_diag_error(d, BG_E_LIMIT, "R-MAT graph: %lld nodes, %lld edges", (long long)n, (long long)M);
        return false;
    }
    int scale = 0;
    while ((1ll << scale) < n) scale++;
    const int P = nthreads();
    uint32_t *eu = malloc(sizeof(uint32_t) * (size_t)(M ? M : 1));
    uint32_t *ev = malloc(sizeof(uint32_t) * (size_t)(M ? M : 1));
    int64_t *cnt = calloc((size_t)P * (size_t)P, sizeof(int64_t)); /* [thread][part] */
    BgCoo *coo = calloc((size_t)P, sizeof(BgCoo));
    BgGraph *g = calloc((size_t)P, sizeof(BgGraph));
    int *ok = calloc((size_t)P, sizeof(int));
    bool good = eu && ev && cnt && coo && g && ok;
    if (good) {
#pragma omp parallel num_threads(P)
        {
            const int t = thread_id(), T = team_size();
            const int64_t k0 = M * t / T, k1 = M * (t + 1) / T;
            int64_t *c = cnt + (int64_t)t * P;
            for (int64_t k = k0; k < k1; k++) { /* the endpoints; entries per part */
                rmat_edge(seed, (uint64_t)k, scale, (uint32_t)n, &eu[k], &ev[k]);
                if (eu[k] == ev[k]) continue;
                c[(int64_t)eu[k] * P / n]++;
                c[(int64_t)ev[k] * P / n]++;
            }
#pragma omp barrier
#pragma omp single
            for (int p = 0; p < P && good; p++) { /* part p: thread 0's entries, then 1's, ... */
                int64_t off = 0;
                for (int q = 0; q < P; q++) {
                    int64_t m = cnt[(int64_t)q * P + p];
                    cnt[(int64_t)q * P + p] = off;
                    off += m;
                }
                coo[p] = (BgCoo){n, n, off, malloc(sizeof(int64_t) * (size_t)(off ? off : 1)),
                                 malloc(sizeof(int64_t) * (size_t)(off ? off : 1)), NULL};
                good = coo[p].row && coo[p].col;
            }
            for (int64_t k = k0; k < k1 && good; k++) { /* the entries, at this thread's offsets */
                const int64_t u = eu[k], v = ev[k];
                if (u == v) continue;
                int64_t pu = u * P / n, pv = v * P / n, iu = c[pu]++, iv = c[pv]++;
                coo[pu].row[iu] = u;
                coo[pu].col[iu] = v;
                coo[pv].row[iv] = v;
                coo[pv].col[iv] = u;
            }
        }
    }
    free(eu);
    free(ev);
    free(cnt);
    BgDiagSink *pd = good ? calloc((size_t)P, sizeof(BgDiagSink)) : NULL;
    good = good && pd;
    if (good) {
#pragma omp parallel for num_threads(P) schedule(dynamic, 1)
        for (int p = 0; p < P; p++) {
            bg_diag_init(&pd[p]);
            ok[p] = bg_graph_from_coo(&coo[p], "R-MAT graph", &g[p], &pd[p]);
            bg_coo_free(&coo[p]);
        }
        for (int p = 0; p < P && good; p++) {
            if (!ok[p]) {
                char *m = bg_diag_render(&pd[p]);
                bg_diag_error(d, BG_E_LIMIT, "R-MAT graph, rows of part %d: %s", p, m ? m : "?");
                free(m);
                good = false;
            }
        }
        for (int p = 0; p < P; p++) bg_diag_free(&pd[p]);
    }
    free(pd);
    int64_t nnz = 0;
    for (int p = 0; p < P && good; p++) nnz += g[p].nnz;
    if (good) {
        out->rowptr = malloc(sizeof(int64_t) * (size_t)(n + 1));
        out->col = malloc(sizeof(int32_t) * (size_t)(nnz ? nnz : 1));
        good = out->rowptr && out->col;
    }
    if (good) {
        int64_t base = 0;
        for (int p = 0; p < P; p++) {
            const int64_t lo = (n * p + P - 1) / P, hi = (n * (p + 1) + P - 1) / P; /* u * P / n == p */
            for (int64_t i = lo; i < hi; i++) out->rowptr[i] = base + g[p].rowptr[i];
            memcpy(out->col + base, g[p].col, sizeof(int32_t) * (size_t)g[p].nnz);
            base += g[p].nnz;
        }
        out->rowptr[n] = base;
        out->n = n;
        out->nnz = nnz;
        out->ngraphs = 1;
    } else {
        if (d->nerrors == 0) bg_diag_error(d, BG_E_LIMIT, "R-MAT graph: out of memory");
        bg_graph_free(out);
    }
    if (coo)
        for (int p = 0; p < P; p++) bg_coo_free(&coo[p]);
    if (g)
        for (int p = 0; p < P; p++) bg_graph_free(&g[p]);
    free(coo);
    free(g);
    free(ok);
    return good;
}
