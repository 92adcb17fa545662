/* test_random_models.c - 150 random valid models (gen_model.h): each must compile, and the
 * CPU interpreter must give bit-identical outputs on the lowered IR, after every single pass
 * and after the default pipeline, on a random awkward graph with random inputs and weights.
 * A failing model is written to $BGNN_TEST_TMP/random_model_<seed>.bgnn for replay. */
#include "bg.h"
#include "bgtest.h"
#include "difftest.h"
#include "gen_model.h"

static BgModule *compile_text(BgArena *a, const char *name, const char *text, const char *const *passes,
                              int npasses, bool lowered) {
    static const char *const none[1] = {NULL};
    BgDiagSink d;
    bg_diag_init(&d);
    BgCompileOpts o = {lowered ? none : passes, lowered ? 0 : npasses, NULL, NULL};
    BgModule *m = bg_compile_text(a, name, text, strlen(text), &o, &d);
    if (!m) {
        char *s = bg_diag_render(&d);
        fprintf(stderr, "%s\n%s", text, s);
        free(s);
    }
    bg_diag_free(&d);
    return m;
}

int main(void) {
    unsigned long long s = 99;
    BgGraph g;
    random_graph(&g, 67, &s);
    int nmodels = getenv("BGNN_RANDOM_MODELS") ? atoi(getenv("BGNN_RANDOM_MODELS")) : 150;
    int np, checked = 0;
    const BgPass *t = bg_pass_table(&np);
    char *text = malloc(1 << 16);
    char wpath[4096];
    snprintf(wpath, sizeof wpath, "%s/random_model_weights.safetensors", bg_test_tmpdir());
    for (int k = 0; k < nmodels; k++) {
        bg_gen_model((unsigned long long)k, text, 1 << 16);
        BgArena *a = bg_arena_new();
        char name[64];
        snprintf(name, sizeof name, "random%d.bgnn", k);
        BgModule *m0 = compile_text(a, name, text, NULL, 0, true);
        CHECK(m0 != NULL);
        bool ok = m0 != NULL;
        BgTensor feat = {0};
        BgInterpResult ref;
        memset(&ref, 0, sizeof ref);
        if (ok) {
            ok = write_weights(m0, wpath, (unsigned long long)k + 1);
            int64_t width = m0->insts[0].op == BG_OP_INPUT ? m0->insts[0].type.dim[1] : 0;
            for (int i = 0; i < m0->ninsts; i++)
                if (m0->insts[i].op == BG_OP_INPUT) width = m0->insts[i].type.dim[1];
            bg_tensor_alloc(&feat, BG_DT_F32, 2, g.n, width);
            unsigned long long fs = (unsigned long long)k * 31 + 5;
            for (int64_t i = 0; i < g.n * width; i++) ((float *)feat.data)[i] = rnd_value(&fs) * 2.0f;
            ok = ok && diff_run(m0, &g, &feat, wpath, &ref);
        }
        for (int p = -1; ok && p < np; p++) {
            const char *pn[1] = {p >= 0 ? t[p].name : NULL};
            BgModule *m = compile_text(a, name, text, p >= 0 ? pn : NULL, p >= 0 ? 1 : 0, false);
            BgInterpResult r;
            memset(&r, 0, sizeof r);
            bool same = m && diff_run(m, &g, &feat, wpath, &r) && diff_same(&ref, &r);
            if (!same) fprintf(stderr, "random model %d: outputs differ after %s\n", k, p >= 0 ? t[p].name : "the default pipeline");
            ok = same;
            bg_interp_result_free(&r);
        }
        CHECK(ok);
        if (!ok) {
            char path[4096];
            snprintf(path, sizeof path, "%s/random_model_%d.bgnn", bg_test_tmpdir(), k);
            FILE *f = fopen(path, "w");
            if (f) { fputs(text, f); fclose(f); }
            fprintf(stderr, "model written to %s\n", path);
        } else {
            checked++;
        }
        bg_interp_result_free(&ref);
        bg_tensor_free(&feat);
        bg_arena_free(a);
    }
    printf("%d of %d random models identical through every pass\n", checked, nmodels);
    free(text);
    bg_graph_free(&g);
    return bg_test_finish();
}
