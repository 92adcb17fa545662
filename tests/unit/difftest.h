/* difftest.h - shared pieces of the differential tests: a random awkward graph, random
 * features and weights (exact zeros and negative zeros included), running a module through
 * the CPU interpreter, and bitwise comparison of outputs. */
#ifndef BG_DIFFTEST_H
#define BG_DIFFTEST_H
#include "reference.h"
#include "bgtest.h"

#include <math.h>

static void random_graph(BgGraph *g, int64_t n, unsigned long long *s) {
    BgCoo c = {n, n, 0, NULL, NULL, NULL};
    int64_t cap = n * 8 + 2 * n;
    c.row = calloc((size_t)cap, sizeof(int64_t));
    c.col = calloc((size_t)cap, sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) {
        if (i % 11 == 3) continue; /* isolated nodes */
        int deg = i == 5 ? (int)n - 1 : (int)(bg_test_rand(s) % 4);
        for (int k = 0; k < deg; k++) {
            int64_t j = i == 5 ? k + (k >= 5) : (int64_t)(bg_test_rand(s) % (unsigned long long)n);
            if (j == i || j % 11 == 3 || j >= n || c.nnz + 2 > cap) continue;
            c.row[c.nnz] = i; c.col[c.nnz++] = j;
            c.row[c.nnz] = j; c.col[c.nnz++] = i;
        }
    }
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(bg_graph_from_coo(&c, "random", g, &d));
    bg_diag_free(&d);
    free(c.row);
    free(c.col);
}

static float rnd_value(unsigned long long *s) {
    unsigned long long r = bg_test_rand(s);
    if (r % 13 == 0) return 0.0f;
    if (r % 17 == 0) return -0.0f;
    return bg_test_randf(s);
}

/* Weights for every PARAM of m, as stored (transposed when .T): value(s, is_var) gives each
 * element; is_var tells a batchnorm variance (which must stay non-negative). */
static bool write_weights_with(const BgModule *m, const char *path, unsigned long long seed,
                               float (*value)(unsigned long long *s, bool is_var)) {
    int n = 0;
    const char *names[64];
    const float *data[64];
    int rank[64];
    int64_t dims[64][4];
    float *bufs[64];
    for (int i = 0; i < m->ninsts && n < 64; i++) {
        const BgInst *in = &m->insts[i];
        if (in->op != BG_OP_PARAM) continue;
        bool dup = false;
        for (int k = 0; k < n; k++) dup |= strcmp(names[k], in->attrs.name) == 0;
        if (dup) continue;
        bool is_var = false;
        for (int j = i + 1; j < m->ninsts; j++)
            if (m->insts[j].op == BG_OP_BATCHNORM && m->insts[j].nargs > 2 && m->insts[j].args[2] == (BgRef)i) is_var = true;
        int64_t rows = in->type.dim[0], cols = in->type.rank == 2 ? in->type.dim[1] : 1;
        unsigned long long s = seed ^ (unsigned long long)(i * 7919 + 1);
        float *v = malloc(sizeof(float) * (size_t)(rows * cols));
        for (int64_t k = 0; k < rows * cols; k++) v[k] = value(&s, is_var);
        names[n] = in->attrs.name;
        data[n] = v;
        bufs[n] = v;
        rank[n] = in->type.rank;
        dims[n][0] = in->attrs.transposed ? cols : rows;
        dims[n][1] = in->attrs.transposed ? rows : cols;
        n++;
    }
    BgDiagSink d;
    bg_diag_init(&d);
    bool ok = bg_safetensors_save_f32(path, n, names, data, rank, (const int64_t(*)[4])dims, &d);
    bg_diag_free(&d);
    for (int k = 0; k < n; k++) free(bufs[k]);
    return ok;
}

static float rnd_param_value(unsigned long long *s, bool is_var) {
    return is_var ? 0.25f + fabsf(bg_test_randf(s)) : rnd_value(s);
}

/* Random weights for every PARAM of m (variances in [0.25, 1.25)). */
static bool write_weights(const BgModule *m, const char *path, unsigned long long seed) {
    return write_weights_with(m, path, seed, rnd_param_value);
}

/* Binds and runs m; vals (may be NULL) receives every instruction's value (bg_interp_run). */
static bool diff_run_values(const BgModule *m, BgGraph *g, const BgTensor *feat, const char *weights,
                            BgInterpResult *r, BgTensor **vals) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgBindings b;
    memset(&b, 0, sizeof b);
    bool ok = bg_bind(m, g, feat, weights, &b, &d) && bg_interp_run(m, &b, r, vals, &d);
    if (!ok) {
        char *s = bg_diag_render(&d);
        fprintf(stderr, "%s", s);
        free(s);
    }
    bg_bindings_free(&b);
    bg_diag_free(&d);
    return ok;
}

static bool diff_run(BgModule *m, BgGraph *g, const BgTensor *feat, const char *weights, BgInterpResult *r) {
    return diff_run_values(m, g, feat, weights, r, NULL);
}

static bool diff_same(const BgInterpResult *a, const BgInterpResult *b) {
    if (a->noutputs != b->noutputs) return false;
    for (int i = 0; i < a->noutputs; i++) {
        const BgTensor *x = &a->outputs[i], *y = &b->outputs[i];
        if (x->dtype != y->dtype || x->rank != y->rank || x->dim[0] != y->dim[0] || x->dim[1] != y->dim[1]) return false;
        if (memcmp(x->data, y->data, bg_tensor_bytes(x)) != 0) return false;
    }
    return true;
}

/* The whole pass table in order (names[0..n)): the default pipeline with the passes not in it
 * yet (fuse-mm-spmm) at the places the table lists them. */
static inline int bg_full_table(const char **names, int cap) {
    int np, n = 0;
    const BgPass *t = bg_pass_table(&np);
    for (int p = 0; p < np && n < cap; p++) names[n++] = t[p].name;
    return n;
}

/* Instructions of op `op` in m. */
static inline int bg_count_op(const BgModule *m, BgOp op) {
    int c = 0;
    for (int i = 0; i < m->ninsts; i++) c += m->insts[i].op == op;
    return c;
}

#endif
