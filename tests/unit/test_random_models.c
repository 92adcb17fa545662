/* test_random_models.c - 150 random valid models (gen_model.h): each must compile, and the
 * CPU interpreter must give bit-identical outputs on the lowered IR, after every single pass,
 * after the default pipeline and after the whole pass table in order (the default pipeline
 * with fuse-mm-spmm at its place), on a random awkward graph with random inputs and weights.
 * Every other model runs on "grid" data (features and weights from a few small values with
 * exact zeros and negative zeros: sums, biases and means coincide, so values land exactly
 * on a threshold and at -0 / +0).  The fusion passes must fire on a minimum share of the
 * models (counted below), and threshold tables are checked directly against the unfolded
 * chain at their boundaries and at special values.  A failing model is written to
 * $BGNN_TEST_TMP/random_model_<seed>.bgnn for replay.
 * Compiled with fp_strict: fp-order then records seq everywhere, so every pass is exact; the
 * default (non-strict) orders are checked against these by test_fp_order.c. */
#include "reference.h"
#include "bgtest.h"
#include "difftest.h"
#include "gen_model.h"

static BgModule *compile_text(BgArena *a, const char *name, const char *text, const char *const *passes,
                              int npasses, bool lowered) {
    static const char *const none[1] = {NULL};
    BgDiagSink d;
    bg_diag_init(&d);
    BgCompileOpts o = {lowered ? none : passes, lowered ? 0 : npasses, NULL, NULL, true}; /* fp-strict: the exact passes */
    BgModule *m = bg_compile_text(a, name, text, strlen(text), &o, &d);
    if (!m) {
        char *s = bg_diag_render(&d);
        fprintf(stderr, "%s\n%s", text, s);
        free(s);
    }
    bg_diag_free(&d);
    return m;
}

/* A value of the grid: 0, -0, +-0.25, +-0.5, +-1, +-1.5, +-2. */
static float grid_value(unsigned long long *s) {
    static const float v[] = {0.0f, -0.0f, 0.25f, -0.25f, 0.5f, -0.5f, 1.0f, -1.0f, 1.5f, -1.5f, 2.0f, -2.0f};
    return v[bg_test_rand(s) % 12];
}

static float grid_param_value(unsigned long long *s, bool is_var) {
    return is_var ? fabsf(grid_value(s)) : grid_value(s);
}

/* Grid weights for every PARAM of m (batchnorm variances >= 0), as stored. */
static bool write_grid_weights(const BgModule *m, const char *path, unsigned long long seed) {
    return write_weights_with(m, path, seed, grid_param_value);
}

/* ---- what the fusion passes did to one model ----------------------------------------- */
enum { F_THRESHOLD, F_CENTER, F_PROLOGUE, F_EPILOGUE, F_PRODUCER_THR, F_MM_SPMM, F_MM_STEPS, F_N };
static const char *const fired_name[F_N] = {"fold-threshold (threshold)", "fold-threshold (bin.center)",
                                             "fuse-batchnorm (prologue)", "fuse-add (epilogue)",
                                             "fuse-bin (threshold in a producer)", "fuse-mm-spmm (bspmm_mm)",
                                             "fuse-mm-spmm (with mm steps)"};

static void count_fired(const BgModule *m, bool *f) {
    for (int i = 0; i < m->ninsts; i++) {
        const BgInst *in = &m->insts[i];
        if (in->op == BG_OP_THRESHOLD) f[F_THRESHOLD] = true;
        if (in->op == BG_OP_BIN_CENTER) f[F_CENTER] = true;
        if (in->npro && in->op == BG_OP_BMM) f[F_PROLOGUE] = true;
        if (in->op == BG_OP_BSPMM_MM) f[F_MM_SPMM] = true;
        if (in->op == BG_OP_BSPMM_MM && in->npro) f[F_MM_STEPS] = true;
        for (int s = in->npro; s < in->nsteps; s++) {
            if (in->op != BG_OP_BIN && in->steps[s].kind == BG_STEP_THRESHOLD) f[F_PRODUCER_THR] = true;
            if (in->steps[s].kind != BG_STEP_THRESHOLD) f[F_EPILOGUE] = true;
        }
    }
}

/* Elements exactly +0 / -0 reaching a bin in the lowered model m0 (the ties the grid data is
 * for: a value exactly at a threshold). */
static void count_ties(const BgModule *m0, BgGraph *g, const BgTensor *feat, const char *wpath, long *pz,
                       long *nz) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgBindings b;
    memset(&b, 0, sizeof b);
    BgInterpResult r;
    BgTensor *vals = NULL;
    if (bg_bind(m0, g, feat, wpath, &b, &d) && bg_interp_run(m0, &b, &r, &vals, &d)) {
        for (int i = 0; i < m0->ninsts; i++) {
            const BgInst *in = &m0->insts[i];
            if (in->op != BG_OP_BIN) continue;
            const BgTensor *x = &vals[in->args[0]];
            if (x->dtype != BG_DT_F32) continue;
            for (int64_t k = 0; k < bg_tensor_rows(x) * bg_tensor_cols(x); k++) {
                float v = ((const float *)x->data)[k];
                if (v == 0.0f) *(signbit(v) ? nz : pz) += 1;
            }
        }
        bg_interp_result_free(&r);
        bg_interp_values_free(m0, vals);
    }
    bg_bindings_free(&b);
    bg_diag_free(&d);
}

/* ---- threshold tables against the unfolded chain --------------------------------------- */

static float special_param(unsigned long long *s, bool nonneg) {
    static const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -3.0f, 1e-40f, -1e-40f, 1e30f, -1e30f, 1e-30f, 7.0f};
    unsigned long long r = bg_test_rand(s) % 16;
    float x = r < 12 ? v[r] : bg_test_randf(s) * 4.0f;
    return nonneg ? fabsf(x) : x;
}

/* The unfolded chain on one row: steps as the ref ops, then bin; bit of column c. */
static int chain_bit(int nsteps, const BgStep *st, const BgTensor *const *sl, float *row, int64_t cols,
                     int64_t c, bool *nan) {
    BgTensor x = {0}, y = {0}, b = {0};
    bg_tensor_alloc(&x, BG_DT_F32, 2, 1, cols);
    memcpy(x.data, row, sizeof(float) * (size_t)cols);
    int k = 0;
    for (int s = 0; s < nsteps; s++) {
        switch ((BgStepKind)st[s].kind) {
        case BG_STEP_ADD: bg_ref_add("FFF", &x, sl[k], &y); break;
        case BG_STEP_SCL: bg_ref_scl(&x, NULL, sl[k + 1], &y); break;
        case BG_STEP_RELU: bg_ref_relu(&x, &y); break;
        default: bg_ref_batchnorm(&x, sl[k], sl[k + 1], sl[k + 2], sl[k + 3], st[s].eps, &y); break;
        }
        k += bg_step_slots((BgStepKind)st[s].kind);
        bg_tensor_free(&x);
        x = y;
        memset(&y, 0, sizeof y);
    }
    *nan = isnan(((float *)x.data)[c]);
    bg_ref_bin(&x, &b);
    int bit = bg_bit_get(b.data, b.words_per_row, 0, c);
    bg_tensor_free(&x);
    bg_tensor_free(&b);
    return bit;
}

static void check_thresholds(int trials) {
    unsigned long long s = 2024;
    int checked = 0, bad = 0;
    for (int t = 0; t < trials; t++) {
        int64_t cols = 1 + (int64_t)(bg_test_rand(&s) % 4);
        int nsteps = 1 + (int)(bg_test_rand(&s) % 4), k = 0;
        bool huge = t % 2 == 1; /* odd trials: regular parameters only (finite, non-zero factors) */
        BgStep st[8];
        BgTensor vec[16];
        const BgTensor *sl[16];
        memset(vec, 0, sizeof vec);
        for (int q = 0; q < nsteps; q++) {
            st[q].kind = (uint8_t)(bg_test_rand(&s) % 4); /* SCL, ADD, RELU, THRESHOLD -> BATCHNORM */
            if (st[q].kind == BG_STEP_THRESHOLD) st[q].kind = BG_STEP_BATCHNORM;
            st[q].eps = bg_test_rand(&s) % 2 ? 1e-5f : 0.25f;
            int ns = bg_step_slots((BgStepKind)st[q].kind);
            for (int j = 0; j < ns; j++, k++) {
                bool present = !(st[q].kind == BG_STEP_SCL && j == 0) &&
                               !(st[q].kind == BG_STEP_BATCHNORM && j >= 2 && bg_test_rand(&s) % 2);
                sl[k] = NULL;
                if (!present) continue;
                bg_tensor_alloc(&vec[k], BG_DT_F32, 1, cols, 0);
                for (int64_t c = 0; c < cols; c++) {
                    bool var = st[q].kind == BG_STEP_BATCHNORM && j == 1;
                    float p = special_param(&s, var);
                    if (!huge && (p == 0.0f || fabsf(p) > 1e20f || fabsf(p) < 1e-20f)) p = var ? 0.75f : -0.75f;
                    ((float *)vec[k].data)[c] = p;
                }
                sl[k] = &vec[k];
            }
        }
        BgTensor tab;
        CHECK(bg_ref_threshold(nsteps, st, sl, cols, &tab));
        for (int64_t c = 0; c < cols; c++) {
            float bnd = ((float *)tab.data)[c];
            float vs[32] = {0.0f, -0.0f, INFINITY, -INFINITY, 1e-45f, -1e-45f, 1.0f, -1.0f, 3e38f, -3e38f,
                            bnd, nextafterf(bnd, -INFINITY), nextafterf(bnd, INFINITY), 0.25f, -0.75f};
            int nv = 15;
            for (; nv < 32; nv++) vs[nv] = bg_test_randf(&s) * (nv % 2 ? 1e3f : 1.0f);
            for (int i = 0; i < nv; i++) {
                if (isnan(vs[i])) continue;
                float row[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                row[c] = vs[i];
                bool nan;
                int want = chain_bit(nsteps, st, sl, row, cols, c, &nan);
                BgTensor x = {0}, y = {0};
                bg_tensor_alloc(&x, BG_DT_F32, 2, 1, cols);
                memcpy(x.data, row, sizeof(float) * (size_t)cols);
                CHECK(bg_ref_bin_threshold(&x, &tab, &y));
                int got = bg_bit_get(y.data, y.words_per_row, 0, c);
                if (!nan) {
                    checked++;
                    if (got != want) {
                        bad++;
                        if (bad < 5)
                            fprintf(stderr, "threshold trial %d channel %lld: v = %a gives %d, the chain %d\n", t,
                                    (long long)c, (double)vs[i], got, want);
                    }
                }
                bg_tensor_free(&x);
                bg_tensor_free(&y);
            }
        }
        bg_tensor_free(&tab);
        for (int q = 0; q < 16; q++) bg_tensor_free(&vec[q]);
    }
    printf("threshold tables: %d compares against the unfolded chain, %d wrong\n", checked, bad);
    CHECK(bad == 0);
    CHECK(checked > trials);
}

int main(void) {
    unsigned long long s = 99;
    BgGraph g;
    random_graph(&g, 67, &s);
    int nmodels = getenv("BGNN_RANDOM_MODELS") ? atoi(getenv("BGNN_RANDOM_MODELS")) : 150;
    int np, checked = 0, fired[F_N] = {0};
    long ties_pos = 0, ties_neg = 0;
    const BgPass *t = bg_pass_table(&np);
    const char *full[64];
    int nfull = bg_full_table(full, 64);
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
        bool ok = m0 != NULL, grid = k % 2 == 1, f[F_N] = {false};
        BgTensor feat = {0};
        BgInterpResult ref;
        memset(&ref, 0, sizeof ref);
        if (ok) {
            ok = grid ? write_grid_weights(m0, wpath, (unsigned long long)k + 1)
                      : write_weights(m0, wpath, (unsigned long long)k + 1);
            int64_t width = 0;
            for (int i = 0; i < m0->ninsts; i++)
                if (m0->insts[i].op == BG_OP_INPUT) width = m0->insts[i].type.dim[1];
            bg_tensor_alloc(&feat, BG_DT_F32, 2, g.n, width);
            unsigned long long fs = (unsigned long long)k * 31 + 5;
            for (int64_t i = 0; i < g.n * width; i++)
                ((float *)feat.data)[i] = grid ? grid_value(&fs) : rnd_value(&fs) * 2.0f;
            ok = ok && diff_run(m0, &g, &feat, wpath, &ref);
            if (ok && grid) count_ties(m0, &g, &feat, wpath, &ties_pos, &ties_neg);
        }
        for (int p = -1; ok && p <= np; p++) { /* -1: the default pipeline; np: the whole table */
            const char *pn[1] = {p >= 0 && p < np ? t[p].name : NULL};
            BgModule *m = compile_text(a, name, text, p < 0 ? NULL : p < np ? pn : full, p < 0 ? 0 : p < np ? 1 : nfull,
                                       false);
            BgInterpResult r;
            memset(&r, 0, sizeof r);
            bool same = m && diff_run(m, &g, &feat, wpath, &r) && diff_same(&ref, &r);
            if (!same)
                fprintf(stderr, "random model %d: outputs differ after %s\n", k,
                        p < 0 ? "the default pipeline" : p < np ? t[p].name : "the whole pass table");
            if (m) count_fired(m, f);
            ok = same;
            bg_interp_result_free(&r);
        }
        CHECK(ok);
        if (!ok) {
            char path[4096];
            snprintf(path, sizeof path, "%s/random_model_%d.bgnn", bg_test_tmpdir(), k);
            FILE *fp = fopen(path, "w");
            if (fp) { fputs(text, fp); fclose(fp); }
            fprintf(stderr, "model written to %s\n", path);
        } else {
            checked++;
            for (int q = 0; q < F_N; q++) fired[q] += f[q];
        }
        bg_interp_result_free(&ref);
        bg_tensor_free(&feat);
        bg_arena_free(a);
    }
    printf("%d of %d random models identical through every pass\n", checked, nmodels);
    /* Each fusion must fire on a fair share of the models (the generator makes its pattern). */
    static const int per150[F_N] = {40, 6, 12, 40, 20, 12, 6};
    for (int q = 0; q < F_N; q++) {
        int want = per150[q] * nmodels / 150;
        printf("  %-36s fired in %3d models (at least %d)\n", fired_name[q], fired[q], want);
        CHECK(fired[q] >= want);
    }
    printf("  grid data: %ld values +0 and %ld values -0 reach a bin\n", ties_pos, ties_neg);
    CHECK(ties_pos > 0 && ties_neg > 0);
    check_thresholds(2000);
    free(text);
    bg_graph_free(&g);
    return bg_test_finish();
}
