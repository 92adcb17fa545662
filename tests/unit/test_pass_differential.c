/* test_pass_differential.c - every pass is exact: for every example and every pass test
 * model, the CPU interpreter must give bit-identical outputs on the lowered IR, after each
 * single pass, and after the default pipeline.  Inputs are random: a graph with awkward
 * features (N = 67, isolated nodes, one high-degree node), random features with exact zeros
 * and negative zeros, and random weights (written to a temporary safetensors file). */
#include "bg.h"
#include "bgtest.h"
#include "difftest.h"

#include <dirent.h>
#include <math.h>

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
    CHECK(diff_run(m0, g, &feat, wpath, &ref));
    int np;
    const BgPass *t = bg_pass_table(&np);
    for (int p = -1; p < np; p++) {
        const char *name[1] = {p >= 0 ? t[p].name : NULL};
        BgCompileOpts o = {p >= 0 ? name : NULL, p >= 0 ? 1 : 0, NULL, NULL};
        BgModule *m = bg_compile_file(a, path, &o, &d);
        BgInterpResult r;
        memset(&r, 0, sizeof r);
        bool ok = m && diff_run(m, g, &feat, wpath, &r) && diff_same(&ref, &r);
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
        char p[8192];
        snprintf(p, sizeof p, "%.4000s/%.255s", dir, names[i]);
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
    static const char *const pass_dirs[] = {"cse", "elim-scale-binarize", "fuse-bin", "dce", NULL};
    for (int i = 0; pass_dirs[i]; i++) {
        snprintf(dir, sizeof dir, "%s/tests/passes/%s", src, pass_dirs[i]);
        check_dir(dir, &g, &count);
    }
    printf("%d models checked\n", count);
    CHECK(count >= 10);
    bg_graph_free(&g);
    return bg_test_finish();
}
