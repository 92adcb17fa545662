/* test_pass_differential.c - every pass is exact: for every example and every pass test
 * model, the CPU interpreter must give bit-identical outputs on the lowered IR, after each
 * single pass, and after the default pipeline.  Inputs are random: a graph with awkward
 * features (N = 67, isolated nodes, one high-degree node), random features with exact zeros
 * and negative zeros, and random weights (written to a temporary safetensors file). */
#include "bg.h"
#include "bgtest.h"

#include <dirent.h>
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

/* Random weights for every PARAM of m, as stored (transposed when .T). */
static bool write_weights(const BgModule *m, const char *path, unsigned long long seed) {
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
        for (int64_t k = 0; k < rows * cols; k++) v[k] = is_var ? 0.25f + fabsf(bg_test_randf(&s)) : rnd_value(&s);
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

static bool run(BgModule *m, BgGraph *g, const BgTensor *feat, const char *weights, BgInterpResult *r) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgBindings b;
    memset(&b, 0, sizeof b);
    bool ok = bg_bind(m, g, feat, weights, &b, &d) && bg_interp_run(m, &b, r, NULL, &d);
    if (!ok) {
        char *s = bg_diag_render(&d);
        fprintf(stderr, "%s", s);
        free(s);
    }
    bg_bindings_free(&b);
    bg_diag_free(&d);
    return ok;
}

static bool same(const BgInterpResult *a, const BgInterpResult *b) {
    if (a->noutputs != b->noutputs) return false;
    for (int i = 0; i < a->noutputs; i++) {
        const BgTensor *x = &a->outputs[i], *y = &b->outputs[i];
        if (x->dtype != y->dtype || x->rank != y->rank || x->dim[0] != y->dim[0] || x->dim[1] != y->dim[1]) return false;
        if (memcmp(x->data, y->data, bg_tensor_bytes(x)) != 0) return false;
    }
    return true;
}

static void check_model(const char *path, BgGraph *g) {
    static const char *const no_passes[1] = {NULL};
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgCompileOpts lowered = {no_passes, 0, NULL, NULL};
    BgModule *m0 = bg_compile_file(a, path, &lowered, &d);
    CHECK(m0 != NULL);
    if (!m0) goto out;
    int64_t width = 0;
    for (int i = 0; i < m0->ninsts; i++)
        if (m0->insts[i].op == BG_OP_INPUT) width = m0->insts[i].type.dim[1];
    char wpath[4096];
    snprintf(wpath, sizeof wpath, "%s/pass_diff_weights.safetensors", bg_test_tmpdir());
    CHECK(write_weights(m0, wpath, 99));
    BgTensor feat;
    bg_tensor_alloc(&feat, BG_DT_F32, 2, g->n, width);
    unsigned long long s = 4242;
    for (int64_t k = 0; k < g->n * width; k++) ((float *)feat.data)[k] = rnd_value(&s) * 3.0f;
    BgInterpResult ref;
    memset(&ref, 0, sizeof ref);
    CHECK(run(m0, g, &feat, wpath, &ref));
    int np;
    const BgPass *t = bg_pass_table(&np);
    for (int p = -1; p < np; p++) {
        const char *name[1] = {p >= 0 ? t[p].name : NULL};
        BgCompileOpts o = {p >= 0 ? name : NULL, p >= 0 ? 1 : 0, NULL, NULL};
        BgModule *m = bg_compile_file(a, path, &o, &d);
        BgInterpResult r;
        memset(&r, 0, sizeof r);
        bool ok = m && run(m, g, &feat, wpath, &r) && same(&ref, &r);
        if (!ok) fprintf(stderr, "%s: outputs differ after %s\n", path, p >= 0 ? t[p].name : "the default pipeline");
        CHECK(ok);
        bg_interp_result_free(&r);
    }
    bg_interp_result_free(&ref);
    bg_tensor_free(&feat);
out:
    bg_diag_free(&d);
    bg_arena_free(a);
}

static void check_dir(const char *dir, BgGraph *g, int *count) {
    DIR *dd = opendir(dir);
    if (!dd) return;
    struct dirent *e;
    char names[64][256];
    int n = 0;
    while ((e = readdir(dd)) && n < 64) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".bgnn") == 0) snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(dd);
    for (int i = 0; i < n; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        check_model(p, g);
        (*count)++;
    }
}

int main(void) {
    const char *src = getenv("BGNN_SOURCE_DIR");
    if (!src) bg_test_skip("BGNN_SOURCE_DIR not set (run through ctest)");
    unsigned long long s = 7;
    BgGraph g;
    random_graph(&g, 67, &s);
    /* The batched example needs graph boundaries: three graphs, one empty. */
    g.ngraphs = 3;
    g.graph_ptr = malloc(sizeof(int64_t) * 4);
    g.graph_ptr[0] = 0; g.graph_ptr[1] = 30; g.graph_ptr[2] = 30; g.graph_ptr[3] = 67;
    int count = 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/examples", src);
    check_dir(dir, &g, &count);
    static const char *const pass_dirs[] = {"elim-scale-binarize", "fuse-bin", "dce", NULL};
    for (int i = 0; pass_dirs[i]; i++) {
        snprintf(dir, sizeof dir, "%s/tests/passes/%s", src, pass_dirs[i]);
        check_dir(dir, &g, &count);
    }
    printf("%d models checked\n", count);
    CHECK(count >= 10);
    bg_graph_free(&g);
    return bg_test_finish();
}
