/* test_pass_differential.c - every pass is exact: for every example (examples/ and
 * examples/citeseer/) and every pass test model, the CPU interpreter must give bit-identical outputs on the lowered IR, after each
 * single pass, after the default pipeline (so fold-threshold, fuse-batchnorm, fuse-add and
 * fuse-bin run on every example and on tests/passes/<pass>/), and after the whole pass
 * table in order (the default pipeline with the passes not in it yet, fuse-mm-spmm, at their
 * places; bg_full_table in difftest.h).  Inputs are random: a
 * graph with awkward features (N = 67, isolated nodes, one high-degree node), random
 * features with exact zeros and negative zeros, and random weights (written to a temporary
 * safetensors file).
 * Compiled with fp_strict: fp-order then records seq everywhere, so every pass is exact; the
 * default (non-strict) orders are checked against these by test_fp_order.c. */
#include "reference.h"
#include "bgtest.h"
#include "difftest.h"

#include <dirent.h>
#include <math.h>

static void check_model(const char *path, BgGraph *g, int *fused) {
    static const char *const no_passes[1] = {NULL};
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgCompileOpts lowered = {no_passes, 0, NULL, NULL, true}; /* fp-strict: the exact passes */
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
    const char *full[64];
    int nfull = bg_full_table(full, 64);
    for (int p = -1; p <= np; p++) { /* -1: the default pipeline; np: the whole table */
        const char *name[1] = {p >= 0 && p < np ? t[p].name : NULL};
        BgCompileOpts o = {p < 0 ? NULL : p < np ? name : full, p < 0 ? 0 : p < np ? 1 : nfull, NULL, NULL, true}; /* fp-strict: the exact passes */
        BgModule *m = bg_compile_file(a, path, &o, &d);
        BgInterpResult r;
        memset(&r, 0, sizeof r);
        bool ok = m && diff_run(m, g, &feat, wpath, &r) && diff_same(&ref, &r);
        if (!ok)
            fprintf(stderr, "%s: outputs differ after %s\n", path,
                    p < 0 ? "the default pipeline" : p < np ? t[p].name : "the whole pass table");
        CHECK(ok);
        if (m && p == np) *fused += bg_count_op(m, BG_OP_BSPMM_MM) > 0;
        bg_interp_result_free(&r);
    }
    bg_interp_result_free(&ref);
    bg_tensor_free(&feat);
out:
    bg_diag_free(&d);
    bg_arena_free(a);
}

static void check_dir(const char *dir, BgGraph *g, int *count, int *fused) {
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
        check_model(p, g, fused);
        (*count)++;
    }
}

/* fold-threshold then fuse-bin: the thresholded bin becomes the producer's epilogue (the
 * golden tests run one pass each, so the pair is checked here), and the default pipeline
 * leaves examples/gcn_bin.bgnn with no batchnorm and no scl before a bin. */
static void check_structure(const char *src) {
    static const char *const text =
        "model p\ninput X : f32[N, 40]\nparam W : b1[40, 33] = \"w\"\nparam b : f32[33] = \"b\"\n"
        "param mu : f32[33] = \"mu\"\nparam var : f32[33] = \"var\"\n"
        "t = bmm.FBF(X, W)\nu = add.FFF(t, b)\nv = batchnorm(u, mu, var)\ny = bin(v)\noutput y\n";
    static const char *const pair[2] = {"fold-threshold", "fuse-bin"};
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgCompileOpts o = {pair, 2, NULL, NULL, true}; /* fp-strict: the exact passes */
    BgModule *m = bg_compile_text(a, "pair.bgnn", text, strlen(text), &o, &d);
    CHECK(m != NULL);
    char *ir = m ? bg_ir_print(m) : NULL;
    CHECK(ir && strstr(ir, "= bmm.FBB %0, %1 epilogue(threshold %") && strstr(ir, "threshold chain(add %2; batchnorm %3, %4 eps=1e-05)"));
    CHECK(ir && !strstr(ir, "= bin ") && !strstr(ir, "= add.") && !strstr(ir, "= batchnorm"));
    free(ir);
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/gcn_bin.bgnn", src);
    m = bg_compile_file(a, path, NULL, &d);
    CHECK(m != NULL);
    for (int i = 0; m && i < m->ninsts; i++) {
        const BgInst *in = &m->insts[i];
        CHECK(in->op != BG_OP_BATCHNORM && in->op != BG_OP_SCL && in->op != BG_OP_ADD);
        if (in->op == BG_OP_BIN) CHECK(m->insts[in->args[0]].op != BG_OP_SCL);
    }
    /* the whole table: layer 2 (bmm.BBF 64 -> 7, then bspmm.FBF) is one bspmm_mm, layer 1 stays */
    const char *full[64];
    int nfull = bg_full_table(full, 64);
    BgCompileOpts fo = {full, nfull, NULL, NULL, true}; /* fp-strict: the exact passes */
    m = bg_compile_file(a, path, &fo, &d);
    CHECK(m != NULL);
    ir = m ? bg_ir_print(m) : NULL;
    CHECK(ir && strstr(ir, "= bspmm_mm.BBF.FBF %1, %9, %6 mm(scl none, %10) epilogue(add %7; log_softmax) fp=seq : f32[N,7]"));
    CHECK(m && bg_count_op(m, BG_OP_BSPMM_MM) == 1 && bg_count_op(m, BG_OP_BMM) == 1 && bg_count_op(m, BG_OP_BSPMM) == 1);
    free(ir);
    bg_diag_free(&d);
    bg_arena_free(a);
}

/* The verifier refuses malformed steps (each case mutates a good module). */
static bool verifies(BgModule *m) {
    BgDiagSink d;
    bg_diag_init(&d);
    bool ok = bg_ir_verify(m, &d);
    if (!ok) CHECK(d.n > 0 && d.items[0].code == BG_E_VERIFY);
    bg_diag_free(&d);
    return ok;
}

static void check_verifier(void) {
    static const char *const text =
        "model p\ninput X : f32[N, 8]\nparam W : b1[8, 8] = \"w\"\nparam b : f32[8] = \"b\"\n"
        "param mu : f32[8] = \"mu\"\nparam var : f32[8] = \"var\"\n"
        "t = bmm.FBF(X, W)\nu = add.FFF(t, b)\nv = batchnorm(u, mu, var)\ny = bin(v)\noutput y\n";
    static const char *const pair[2] = {"fold-threshold", "fuse-bin"};
    for (int c = 0; c < 7; c++) {
        BgArena *a = bg_arena_new();
        BgDiagSink d;
        bg_diag_init(&d);
        BgCompileOpts o = {pair, 2, NULL, NULL, true}; /* fp-strict: the exact passes */
        BgModule *m = bg_compile_text(a, "v.bgnn", text, strlen(text), &o, &d);
        CHECK(m != NULL);
        bg_diag_free(&d);
        if (!m) continue;
        int thr = -1, mm = -1;
        for (int i = 0; i < m->ninsts; i++) {
            if (m->insts[i].op == BG_OP_THRESHOLD) thr = i;
            if (m->insts[i].op == BG_OP_BMM) mm = i;
        }
        CHECK(thr >= 0 && mm >= 0 && verifies(m));
        BgInst *b = &m->insts[mm], *t = &m->insts[thr];
        BgRef none[4] = {BG_NONE, BG_NONE, BG_NONE, BG_NONE}, bn[4] = {t->args[1], t->args[2], BG_NONE, BG_NONE};
        switch (c) {
        case 0: b->prec[2] = 'F'; b->type.kind = BG_TY_F32; break;           /* threshold on an F result */
        case 1: CHECK(bg_inst_add_step(b, BG_STEP_RELU, 0, none)); break;      /* threshold not last */
        case 2: b->args[2] = b->args[1]; break;                               /* not a threshold table */
        case 3: CHECK(bg_inst_add_step(t, BG_STEP_SCL, 0, none)); break;      /* scl without factors */
        case 4: t->steps[0].kind = BG_STEP_THRESHOLD; break;                  /* not a chain step */
        case 5: /* one batchnorm prologue verifies, a second does not */
            CHECK(bg_inst_add_prologue(b, BG_STEP_BATCHNORM, 1e-5f, bn) && verifies(m));
            CHECK(bg_inst_add_prologue(b, BG_STEP_BATCHNORM, 1e-5f, bn));
            break;
        default: b->nargs--; break;                                           /* slots do not add up */
        }
        CHECK(!verifies(m));
        bg_arena_free(a);
    }
}

/* tests/passes/<rel> compiled (fp-strict: the exact passes) with the passes given, into a new
 * arena *a (the caller frees it); NULL (a CHECK failed) when it does not compile. */
static BgModule *compile_case(const char *src, const char *rel, const char *const *passes, int npasses, BgArena **a) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/passes/%s", src, rel);
    *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgCompileOpts o = {passes, npasses, NULL, NULL, true};
    BgModule *m = bg_compile_file(*a, path, &o, &d);
    CHECK(m != NULL);
    bg_diag_free(&d);
    return m;
}

/* The verifier refuses malformed add_scl steps (each case mutates the first bspmm of
 * tests/passes/fuse-add/add_scl.bgnn after fuse-add: epilogue(add_scl h, none, e)). */
static void check_verifier_add_scl(const char *src) {
    static const char *const passes[1] = {"fuse-add"};
    for (int c = 0; c < 3; c++) {
        BgArena *a;
        BgModule *m = compile_case(src, "fuse-add/add_scl.bgnn", passes, 1, &a);
        int f = -1, x = -1; /* the first bspmm with an add_scl step; the input X (f32[N,40]) */
        for (int i = 0; m && i < m->ninsts; i++) {
            const BgInst *in = &m->insts[i];
            if (f < 0 && in->op == BG_OP_BSPMM && in->nsteps == 1 && in->steps[0].kind == BG_STEP_ADD_SCL) f = i;
            if (in->op == BG_OP_INPUT) x = i;
        }
        CHECK(f >= 0 && x >= 0 && verifies(m));
        if (f < 0 || x < 0) {
            bg_arena_free(a);
            continue;
        }
        BgInst *b = &m->insts[f];
        const int s0 = bg_inst_step_arg(b, 0);
        switch (c) {
        case 0: b->args[s0] = (BgRef)x; break;                  /* adds a scl of floats, not of bits */
        case 1: b->args[s0 + 1] = b->args[s0 + 2]; break;       /* row factors of the columns' length */
        default: b->args[s0] = BG_NONE; break;                  /* no matrix */
        }
        CHECK(!verifies(m));
        bg_arena_free(a);
    }
}

/* The verifier refuses malformed bspmm_mm instructions (each case mutates a good module: the
 * steps test model of tests/passes/fuse-mm-spmm, whose two bspmm_mm have mm steps ending in a
 * relu (F product) and in a threshold (B product)). */
static void check_verifier_mm_spmm(const char *src) {
    static const char *const passes[4] = {"fold-threshold", "fuse-add", "fuse-bin", "fuse-mm-spmm"};
    for (int c = 0; c < 9; c++) {
        BgArena *a;
        BgModule *m = compile_case(src, "fuse-mm-spmm/steps.bgnn", passes, 4, &a);
        if (!m) {
            bg_arena_free(a);
            continue;
        }
        int f = -1, b = -1; /* the F product's and the B product's bspmm_mm */
        for (int i = 0; i < m->ninsts; i++)
            if (m->insts[i].op == BG_OP_BSPMM_MM) *(m->insts[i].prec[0] == 'F' ? &f : &b) = i;
        CHECK(f >= 0 && b >= 0 && verifies(m));
        if (f < 0 || b < 0) {
            bg_arena_free(a);
            continue;
        }
        BgInst *F = &m->insts[f], *B = &m->insts[b];
        BgRef none[4] = {BG_NONE, BG_NONE, BG_NONE, BG_NONE};
        switch (c) {
        case 0: F->prec[2] = 'X'; break;                                  /* invalid letters */
        case 1: B->prec[0] = 'F'; break;                                  /* a threshold mm step on an F product */
        case 2: B->args[0] = B->args[1]; break;                           /* first operand not a graph */
        case 3: { BgRef t = F->args[1]; F->args[1] = F->args[2]; F->args[2] = t; break; } /* x and W swapped */
        case 4: F->type.dim[1]++; break;                                  /* result columns are not W's */
        case 5: { /* a batchnorm is no mm step */
            BgRef bn[4] = {F->args[4], F->args[4], BG_NONE, BG_NONE};
            CHECK(bg_inst_add_prologue(F, BG_STEP_BATCHNORM, 1e-5f, bn));
            break;
        }
        case 6: CHECK(bg_inst_add_step(B, BG_STEP_RELU, 0, none)); B->npro = B->nsteps; break; /* threshold not the last mm step */
        case 7: B->npro = (uint8_t)(B->nsteps + 1); break;                /* more mm steps than steps */
        default: F->nargs = 2; F->npro = F->nsteps = 0; break;            /* two operands */
        }
        CHECK(!verifies(m));
        bg_arena_free(a);
    }
}

/* The verifier refuses a log_softmax step anywhere but last in the epilogue of a bspmm_mm's
 * f32 result of 1 to 32 columns (each case mutates the tails test model of
 * tests/passes/fuse-log-softmax, whose 7-column bspmm_mm has the step). */
static void check_verifier_lsm(const char *src) {
    static const char *const passes[5] = {"fuse-add", "fuse-bin", "fuse-mm-spmm", "fuse-log-softmax", "dce"};
    for (int c = 0; c < 6; c++) {
        BgArena *a;
        BgModule *m = compile_case(src, "fuse-log-softmax/tails.bgnn", passes, 5, &a);
        int y = -1, w = -1, x2 = -1; /* the tailed bspmm_mm, the 40-column one, a bmm */
        for (int i = 0; m && i < m->ninsts; i++) {
            const BgInst *in = &m->insts[i];
            if (in->op == BG_OP_BSPMM_MM && in->nsteps && in->steps[in->nsteps - 1].kind == BG_STEP_LOG_SOFTMAX) y = i;
            if (in->op == BG_OP_BSPMM_MM && in->type.dim[1] == 40) w = i;
            if (in->op == BG_OP_BMM) x2 = i;
        }
        CHECK(y >= 0 && w >= 0 && x2 >= 0 && verifies(m));
        if (y < 0 || w < 0 || x2 < 0) {
            bg_arena_free(a);
            continue;
        }
        BgInst *Y = &m->insts[y];
        BgRef none[4] = {BG_NONE, BG_NONE, BG_NONE, BG_NONE};
        switch (c) {
        case 0: CHECK(bg_inst_add_step(Y, BG_STEP_RELU, 0, none)); break;                  /* not the last step */
        case 1: CHECK(bg_inst_add_step(&m->insts[w], BG_STEP_LOG_SOFTMAX, 0, none)); break; /* 40 columns */
        case 2: CHECK(bg_inst_add_step(&m->insts[x2], BG_STEP_LOG_SOFTMAX, 0, none)); break; /* not a bspmm_mm */
        case 3: Y->prec[2] = 'B'; Y->type.kind = BG_TY_B1; break;                          /* a b1 result */
        case 4: Y->npro = Y->nsteps; break;                                                 /* an mm step */
        default: CHECK(bg_inst_add_step(Y, BG_STEP_LOG_SOFTMAX, 0, none)); break;          /* twice */
        }
        CHECK(!verifies(m));
        bg_arena_free(a);
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
    int count = 0, fused_examples = 0, fused = 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/examples", src);
    check_dir(dir, &g, &count, &fused_examples);
    snprintf(dir, sizeof dir, "%s/examples/citeseer", src);
    check_dir(dir, &g, &count, &fused_examples);
    static const char *const pass_dirs[] = {"cse", "elim-scale-binarize", "fold-threshold", "fuse-batchnorm",
                                            "fuse-add", "fuse-bin", "fuse-mm-spmm", "dce", NULL};
    for (int i = 0; pass_dirs[i]; i++) {
        snprintf(dir, sizeof dir, "%s/tests/passes/%s", src, pass_dirs[i]);
        check_dir(dir, &g, &count, &fused);
    }
    check_structure(src);
    check_verifier();
    check_verifier_mm_spmm(src);
    check_verifier_add_scl(src);
    check_verifier_lsm(src);
    printf("%d models checked; the whole pass table made a bspmm_mm in %d examples and %d pass test models\n",
           count, fused_examples, fused);
    CHECK(count >= 10);
    CHECK(fused_examples >= 8 && fused >= 3); /* gcn_bin, its low-level form, gcn_full, indgcn_bin, ... */
    bg_graph_free(&g);
    return bg_test_finish();
}
