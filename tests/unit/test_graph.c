/* test_graph.c - COO -> CSR (merge, sort, square check) and the adjacency factors of
 * docs/semantics.md section 3 on a hand-computed graph with an isolated node. */
#include "loaders.h"
#include "bgtest.h"

static void coo_set(BgCoo *c, int64_t n, int64_t m, int nnz, const int64_t *r, const int64_t *cl) {
    c->nrows = n;
    c->ncols = m;
    c->nnz = nnz;
    c->row = (int64_t *)r;
    c->col = (int64_t *)cl;
    c->val = NULL;
}

static void test_from_coo(void) {
    /* unsorted, duplicated, an empty row (1) */
    int64_t r[] = {2, 0, 2, 0, 2, 3, 0};
    int64_t c[] = {1, 3, 0, 3, 1, 3, 0};
    BgCoo coo;
    coo_set(&coo, 4, 4, 7, r, c);
    BgGraph g;
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(bg_graph_from_coo(&coo, "g.mtx", &g, &d));
    CHECK_EQ_INT(d.n, 0);
    CHECK_EQ_INT(g.n, 4);
    CHECK_EQ_INT(g.nnz, 5);
    int64_t rp[] = {0, 2, 2, 4, 5};
    int32_t cc[] = {0, 3, 0, 1, 3};
    for (int i = 0; i < 5; i++) CHECK_EQ_INT(g.rowptr[i], rp[i]);
    for (int i = 0; i < 5; i++) CHECK_EQ_INT(g.col[i], cc[i]);
    CHECK(g.ngraphs == 1 && g.graph_ptr == NULL);
    bg_graph_free(&g);

    /* a long row exercises the qsort path */
    enum { L = 100 };
    int64_t lr[2 * L], lc[2 * L];
    for (int i = 0; i < 2 * L; i++) {
        lr[i] = 1;
        lc[i] = (i * 37) % L;
    }
    coo_set(&coo, L, L, 2 * L, lr, lc);
    CHECK(bg_graph_from_coo(&coo, "long.mtx", &g, &d));
    CHECK_EQ_INT(g.nnz, L);
    bool sorted = true;
    for (int i = 0; i < L; i++) sorted &= g.col[i] == i;
    CHECK(sorted);
    CHECK(g.rowptr[1] == 0 && g.rowptr[2] == L && g.rowptr[L] == L);
    bg_graph_free(&g);

    /* not square: error naming the file */
    coo_set(&coo, 3, 4, 1, r, c);
    CHECK(!bg_graph_from_coo(&coo, "rect.mtx", &g, &d));
    CHECK(d.n == 1 && d.items[0].code == BG_E_DATA_SHAPE);
    CHECK_STR_CONTAINS(d.n ? d.items[0].msg : NULL, "rect.mtx: the adjacency matrix must be square, got 3 x 4");
    bg_diag_free(&d);

    /* empty graph */
    bg_diag_init(&d);
    coo_set(&coo, 0, 0, 0, r, c);
    CHECK(bg_graph_from_coo(&coo, "e.mtx", &g, &d));
    CHECK(g.n == 0 && g.nnz == 0 && g.rowptr[0] == 0);
    bg_graph_free(&g);
    bg_diag_free(&d);
}

/* Nodes 0..3: edges 0-1, 0-2 (both directions), a self loop on 1, node 3 isolated. */
static void hand_graph(BgGraph *g) {
    int64_t r[] = {0, 1, 0, 2, 1};
    int64_t c[] = {1, 0, 2, 0, 1};
    BgCoo coo;
    coo_set(&coo, 4, 4, 5, r, c);
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(bg_graph_from_coo(&coo, "hand", g, &d));
    bg_diag_free(&d);
}

static void test_adj(void) {
    BgGraph g;
    hand_graph(&g);
    const float r3 = 0x1.279a74p-1f; /* fl(1/sqrt(3)) = 0.57735025882720947 */
    const float r2 = 0x1.6a09e6p-1f; /* fl(1/sqrt(2)) = 0.70710676908493042 */
    CHECK(r3 == (float)(1.0 / sqrt(3.0)) && r2 == (float)(1.0 / sqrt(2.0)));

    /* sym with self loops: rows {0,1,2} {0,1} {0,2} {3}; d = 3 2 2 1 */
    BgAdj a;
    CHECK(bg_adj_build(&g, true, BG_NORM_SYM, &a));
    CHECK_EQ_INT(a.n, 4);
    CHECK_EQ_INT(a.nnz, 8);
    int64_t rp[] = {0, 3, 5, 7, 8};
    int32_t cc[] = {0, 1, 2, 0, 1, 0, 2, 3};
    for (int i = 0; i < 5; i++) CHECK_EQ_INT(a.rowptr[i], rp[i]);
    for (int i = 0; i < 8; i++) CHECK_EQ_INT(a.col[i], cc[i]);
    CHECK(a.rowf[0] == r3 && a.rowf[1] == r2 && a.rowf[2] == r2 && a.rowf[3] == 1.0f);
    CHECK(memcmp(a.rowf, a.colf, 4 * sizeof(float)) == 0);
    /* w = fl(r_i * c_j): note fl(r2*r2) = 0.49999997 and fl(r3*r3) = 0.33333331, not 1/2, 1/3 */
    const float w33 = 0x1.555554p-2f, w32 = 0x1.a20bd6p-2f, w22 = 0x1.fffffep-2f;
    float want[8] = {w33, w32, w32, w32, w22, w32, w22, 1.0f};
    for (int i = 0; i < 8; i++) CHECK(a.w[i] == want[i]);
    CHECK(a.self_loops && a.norm == BG_NORM_SYM);
    bg_adj_free(&a);

    /* sym without self loops: rows {1,2} {0,1} {0} {}; d = 2 2 1 0 -> isolated r = c = 0 */
    CHECK(bg_adj_build(&g, false, BG_NORM_SYM, &a));
    CHECK_EQ_INT(a.nnz, 5);
    CHECK(a.rowf[0] == r2 && a.rowf[1] == r2 && a.rowf[2] == 1.0f && a.rowf[3] == 0.0f && a.colf[3] == 0.0f);
    CHECK(a.rowptr[3] == 5 && a.rowptr[4] == 5);
    float want2[5] = {w22, r2, w22, w22, r2};
    for (int i = 0; i < 5; i++) CHECK(a.w[i] == want2[i]);
    bg_adj_free(&a);

    /* mean with self loops: r = 1/d, c = 1 */
    CHECK(bg_adj_build(&g, true, BG_NORM_MEAN, &a));
    CHECK(a.rowf[0] == (float)(1.0 / 3.0) && a.rowf[1] == 0.5f && a.rowf[3] == 1.0f);
    CHECK(a.colf[0] == 1.0f && a.colf[2] == 1.0f);
    CHECK(a.w[0] == 0x1.555556p-2f && a.w[3] == 0.5f && a.w[7] == 1.0f);
    bg_adj_free(&a);

    /* mean without self loops: the isolated node gets r = 0 (1/d vanishes), c stays 1 */
    CHECK(bg_adj_build(&g, false, BG_NORM_MEAN, &a));
    CHECK(a.rowf[2] == 1.0f && a.rowf[3] == 0.0f && a.colf[3] == 1.0f && a.colf[0] == 1.0f);
    bg_adj_free(&a);

    /* none: factors are 1 whatever the degree */
    CHECK(bg_adj_build(&g, false, BG_NORM_NONE, &a));
    CHECK(a.rowf[3] == 1.0f && a.colf[3] == 1.0f);
    bg_adj_free(&a);

    /* none: all ones, pattern unchanged */
    CHECK(bg_adj_build(&g, false, BG_NORM_NONE, &a));
    CHECK_EQ_INT(a.nnz, g.nnz);
    bool ones = true;
    for (int64_t i = 0; i < a.nnz; i++) ones &= a.w[i] == 1.0f && a.col[i] == g.col[i];
    CHECK(ones);
    CHECK(a.rowf[0] == 1.0f && a.colf[1] == 1.0f);
    bg_adj_free(&a);

    CHECK(strcmp(bg_norm_name(BG_NORM_NONE), "none") == 0);
    CHECK(strcmp(bg_norm_name(BG_NORM_SYM), "sym") == 0);
    CHECK(strcmp(bg_norm_name(BG_NORM_MEAN), "mean") == 0);
    bg_graph_free(&g);
}

int main(void) {
    test_from_coo();
    test_adj();
    return bg_test_finish();
}
