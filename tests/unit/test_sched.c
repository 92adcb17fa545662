/* test_sched.c - the schedule space without a GPU (docs/tuning.md; compiler/codegen/sched.c):
 * for every example model, every point of every tunable instruction's space is valid, round-
 * trips through its text (bg_sched_str / bg_sched_parse), builds a plan whose launch and graph
 * carry it (block, grid, fb, chunk, group) and whose manifest reads back to the same text; the
 * tuning database's record for an op key and Cora's graph key sets the instruction's point
 * (bg_sched_apply_db, as bgnnc run and bgnn_session_prepare do) and shows in the IR dump; a
 * record this compiler cannot use is one warning and leaves the default; Cora's graph key is
 * the one the H200 tuning runs filed (docs/logs/tune_planetoid_h200_2026-11-26.log).  The learned
 * predictor's file (plan/sched_model.c): a hand-written model predicts by its trees and sets
 * gcn_bin's aggregation; each kind of damage is one warning and an empty model; a model that
 * tools/train_predictor.py trained (BGNN_SCHED_MODEL_FILE, CI's Python stage) loads without a
 * warning and gives every example a plan. */
#include "bgtest.h"
#include "codegen.h"
#include "sched_model.h"
#include "tune_db.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The launch of instruction i in p, or NULL. */
static const BgPlanLaunch *launch_of(const BgPlan *p, int i) {
    for (int k = 0; k < p->nlaunches; k++)
        if (p->launches[k].inst == i && !p->launches[k].prep) return &p->launches[k];
    return NULL;
}

static void check_model(const char *path, int64_t *npoints) {
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgModule *m = bg_compile_file(a, path, NULL, &d);
    CHECK(m != NULL);
    if (!m) {
        bg_arena_free(a);
        bg_diag_free(&d);
        return;
    }
    for (int i = 0; i < m->ninsts; i++) {
        BgInst *in = &m->insts[i];
        const int n = bg_sched_space(m, in, 90, NULL, 0);
        CHECK((n > 0) == bg_sched_tunable(m, in));
        if (n == 0) continue;
        BgSchedPoint *pts = bg_xcalloc((size_t)n + 1, sizeof *pts);
        CHECK_EQ_INT(bg_sched_space(m, in, 90, pts, n), n);
        const BgSchedPoint def = bg_sched_point(in);
        CHECK(bg_sched_eq(&pts[0], &def));
        for (int p = 0; p < n; p++) {
            char txt[128], err[200];
            BgSchedPoint back;
            bg_sched_str(&pts[p], txt, sizeof txt);
            CHECK(bg_sched_valid(m, in, &pts[p], err, sizeof err));
            CHECK(bg_sched_parse(txt, &back, err, sizeof err) && bg_sched_eq(&back, &pts[p]));
            for (int q = 0; q < p && p < 64; q++) CHECK(!bg_sched_eq(&pts[q], &pts[p])); /* no point twice */
            /* a sample of the points through the plan and the manifest */
            if (p % 37 && p != n - 1) continue;
            bg_sched_set(in, &pts[p]);
            BgArena *pa = bg_arena_new();
            BgPlan *plan = bg_plan_build(m, "sm_90", pa, &d);
            CHECK(plan != NULL);
            const BgPlanLaunch *l = plan ? launch_of(plan, i) : NULL;
            CHECK(l != NULL);
            if (l) {
                const BgSched *s = &pts[p].s;
                CHECK_EQ_INT(l->block_size, s->block ? s->block : 256);
                /* no grid in the schedule: the tensor-core product's own cap (plan.h) */
                const bool tc = in->op == BG_OP_BMM && l->nargs >= 3 &&
                                bg_plan_bmm_tc(m, in, plan->bufs[l->args[2]].kind == BG_BUF_B1T, 90);
                CHECK_EQ_INT(l->grid_per_sm, s->grid ? s->grid : tc ? BG_PLAN_TC_GRID_PER_SM : 0);
                if (l->alt) CHECK_EQ_INT(l->fb, s->fb);
                if (bg_plan_bspmm_fast(m, in)) {
                    int g = -1;
                    for (int k = 0; k < plan->ngraphs; k++)
                        if (plan->graphs[k].inst == (int)in->args[0]) g = k;
                    CHECK(g >= 0);
                    if (g >= 0) {
                        CHECK_EQ_INT(plan->graphs[g].chunk, s->chunk ? s->chunk : BG_PLAN_BSPMM_CHUNK);
                        CHECK_EQ_INT(plan->graphs[g].group, s->group);
                    }
                }
                char *text = bg_manifest_write(plan);
                BgArena *ra = bg_arena_new();
                BgPlan *rp = bg_manifest_read(text, strlen(text), "test", ra, &d);
                CHECK(rp != NULL);
                char *again = rp ? bg_manifest_write(rp) : NULL;
                CHECK(again && strcmp(again, text) == 0);
                free(again);
                free(text);
                bg_arena_free(ra);
            }
            bg_arena_free(pa);
            bg_sched_set(in, &def);
        }
        *npoints += n;
        free(pts);
    }
    if (d.nerrors) {
        char *t = bg_diag_render(&d);
        fprintf(stderr, "%s: %s", path, t ? t : "");
        free(t);
    }
    CHECK_EQ_INT(d.nerrors, 0);
    bg_diag_free(&d);
    bg_arena_free(a);
}

/* The database path: a record sets the point; a bad one warns and leaves the default. */
static void check_db(const char *srcdir, const char *tmp) {
    char mpath[600], dbpath[700];
    snprintf(mpath, sizeof mpath, "%s/examples/gcn_bin.bgnn", srcdir);
    snprintf(dbpath, sizeof dbpath, "%s/test_sched.%ld.tune", tmp, (long)getpid());
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgModule *m = bg_compile_file(a, mpath, NULL, &d);
    CHECK(m != NULL);
    if (!m) return;
    int agg = -1, mm = -1;
    for (int i = 0; i < m->ninsts; i++) {
        if (m->insts[i].op == BG_OP_BSPMM) agg = i;
        if (m->insts[i].op == BG_OP_BSPMM_MM) mm = i;
    }
    CHECK(agg >= 0 && mm >= 0);
    if (agg < 0 || mm < 0) return;
    char opk[160], opm[160];
    bg_sched_op_key(m, &m->insts[agg], opk, sizeof opk);
    bg_sched_op_key(m, &m->insts[mm], opm, sizeof opm);
    CHECK(strcmp(opk, "bspmm.BBB fast k=64 c=64 norm=none loops=1 steps=0") == 0);
    const char *key = "n=11.5 d=2.5 dmax=7 g=0";
    BgTuneRecord recs[2] = {{opk, key, "block=64 chunk=512 group=never", 8.0, 9.0, 100},
                            {opm, key, "chunk=512", 5.0, 6.0, 100}}; /* not a bspmm_mm knob */
    CHECK(bg_tune_db_store(dbpath, recs, 2, "Test GPU", 90, &d));
    BgTuneDb *db = bg_tune_db_load(dbpath, &d);
    CHECK_EQ_INT(d.nerrors, 0);
    const int nwarn_before = d.n;
    CHECK_EQ_INT(bg_sched_apply_db(m, db, key, 90, &d), 1);
    CHECK_EQ_INT(d.n, nwarn_before + 1); /* the bspmm_mm record: one warning */
    CHECK_EQ_INT(d.nerrors, 0);
    CHECK_EQ_INT(m->insts[agg].attrs.sched.block, 64);
    CHECK_EQ_INT(m->insts[agg].attrs.sched.chunk, 512);
    CHECK_EQ_INT(m->insts[agg].attrs.sched.group, -1);
    CHECK(bg_sched_is_default(&m->insts[mm].attrs.sched));
    char *ir = bg_ir_print(m);
    CHECK(ir && strstr(ir, "sched(block=64 chunk=512 group=never)") != NULL);
    free(ir);
    /* another graph key: nothing applies */
    BgModule *m2 = bg_compile_file(a, mpath, NULL, &d);
    CHECK(m2 && bg_sched_apply_db(m2, db, "n=20.0 d=3.0 dmax=9 g=0", 90, &d) == 0);
    bg_tune_db_free(db);
    unlink(dbpath);
    char lock[800];
    snprintf(lock, sizeof lock, "%s.lock", dbpath);
    unlink(lock);
    bg_diag_free(&d);
    bg_arena_free(a);
}

/* Cora's graph key (the graph key bgnnc run computes after loading the data). */
static void check_graph_key(void) {
    char dir[700];
    snprintf(dir, sizeof dir, "%s/cora", bg_default_data_root());
    BgDiagSink d;
    bg_diag_init(&d);
    BgDataset ds;
    memset(&ds, 0, sizeof ds);
    if (!bg_dataset_load_graph(dir, NULL, &ds, &d)) {
        printf("[note] no Cora under %s: graph key check skipped\n", bg_default_data_root());
        bg_diag_free(&d);
        return;
    }
    BgGraphFeatures f;
    bg_graph_features(&ds.graph, &f);
    char key[96];
    bg_graph_key(&f, key, sizeof key);
    CHECK(strcmp(key, "n=11.5 d=2.5 dmax=7 g=0") == 0);
    CHECK_EQ_INT(f.n, 2708);
    CHECK_EQ_INT(f.deg_max, 168);
    CHECK_EQ_INT(f.nnz, 10556);
    bg_dataset_free(&ds);
    bg_diag_free(&d);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void check_predictor(const char *srcdir, const char *tmp) {
    char path[700], mpath[600];
    snprintf(path, sizeof path, "%s/test_sched.%ld.model", tmp, (long)getpid());
    snprintf(mpath, sizeof mpath, "%s/examples/gcn_bin.bgnn", srcdir);
    BgDiagSink d;
    bg_diag_init(&d);
    write_text(path, "bgnn-sched-model 1\n# gpu: Test GPU; graphs 2; records 9\n"
                     "tree bspmm.BBB fast\tblock\t3\nnode 0 0 12 1 2\nleaf 1 64\nleaf 2 128\n"
                     "tree bspmm.BBB fast\tchunk\t1\nleaf 0 512\n"
                     "tree bspmm_mm.BBF mm_spmm\tchunk\t1\nleaf 0 512\n"); /* not a bspmm_mm knob */
    BgSchedModel *sm = bg_sched_model_load(path, &d);
    CHECK_EQ_INT(d.n, 0);
    CHECK_EQ_INT(bg_sched_model_ntrees(sm), 3);
    double x[BG_SCHED_MODEL_NFEAT] = {11.4, 13.4, 3.9, 1.3, 7.4, 10, 0.001, 0.3};
    int v = 0;
    CHECK(bg_sched_model_predict(sm, "bspmm.BBB fast", "block", x, &v) && v == 64);
    x[0] = 13;
    CHECK(bg_sched_model_predict(sm, "bspmm.BBB fast", "block", x, &v) && v == 128);
    CHECK(!bg_sched_model_predict(sm, "bspmm.BBB fast", "grid", x, &v));
    CHECK(!bg_sched_model_predict(sm, "bmm.FBB fb_rows", "block", x, &v));
    x[0] = 11.4;
    BgArena *a = bg_arena_new();
    BgModule *m = bg_compile_file(a, mpath, NULL, &d);
    CHECK(m != NULL);
    if (m) {
        CHECK_EQ_INT(bg_sched_apply_model(m, sm, x), 1); /* the aggregation; bspmm_mm's point is invalid */
        int agg = -1;
        for (int i = 0; i < m->ninsts; i++)
            if (m->insts[i].op == BG_OP_BSPMM) agg = i;
        CHECK(agg >= 0 && m->insts[agg].attrs.sched.block == 64 && m->insts[agg].attrs.sched.chunk == 512);
        BgArena *pa = bg_arena_new();
        CHECK(bg_plan_build(m, "sm_90", pa, &d) != NULL);
        bg_arena_free(pa);
    }
    bg_sched_model_free(sm);
    /* a boosted regression: two trees over the point features; the candidates ranked by
     * init + rate x the leaves.  Tree 1 splits on log2 lanes (feature 15): lanes 8 -> -1, else
     * +1; tree 2 on log2 block (10): block <= 128 -> -0.5, else 0.  So lanes=8 block=128 (-1.5)
     * before lanes=8 (-1), then block=128 (0.5), then the default (1) */
    write_text(path, "bgnn-sched-model 2\n"
                     "regress bspmm_mm.FBF mm_spmm\t4\t2\t1\t0.25\t0\n"
                     "range 0 20 0 30 0 100 0 10 0 20 -50 200 0 1 0 1 0 20 0 20\n"
                     "point 0 0 0 0 0 0\npoint 128 0 0 0 0 0\npoint 0 0 0 0 0 8\npoint 128 0 0 0 0 8\n"
                     "rtree 3\nnode 0 15 3.5 1 2\nvalue 1 -1\nvalue 2 1\n"
                     "rtree 3\nnode 0 10 7.5 1 2\nvalue 1 -0.5\nvalue 2 0\n");
    sm = bg_sched_model_load(path, &d);
    CHECK_EQ_INT(d.n, 0);
    CHECK_EQ_INT(bg_sched_model_ntrees(sm), 2);
    {
        int rk[8][BG_SCHED_MODEL_NKNOBS];
        CHECK_EQ_INT(bg_sched_model_ranked(sm, "bspmm_mm.FBF mm_spmm", x, rk, 8), 4);
        CHECK(rk[0][0] == 128 && rk[0][5] == 8 && rk[1][0] == 0 && rk[1][5] == 8);
        CHECK(rk[2][0] == 128 && rk[2][5] == 0 && rk[3][0] == 0 && rk[3][5] == 0);
        CHECK_EQ_INT(bg_sched_model_ranked(sm, "bspmm_mm.FBF mm_spmm", x, rk, 2), 2);
        CHECK_EQ_INT(bg_sched_model_ranked(sm, "bspmm.BBB fast", x, rk, 8), 0);
        double far[BG_SCHED_MODEL_NFEAT];
        memcpy(far, x, sizeof far);
        far[3] = 11; /* cv of the degree beyond the range: the default first */
        CHECK_EQ_INT(bg_sched_model_ranked(sm, "bspmm_mm.FBF mm_spmm", far, rk, 8), 4);
        CHECK(rk[0][0] == 0 && rk[0][5] == 0 && rk[1][0] == 128 && rk[1][5] == 8);
        double pf[BG_SCHED_MODEL_NPFEAT];
        const int kn[BG_SCHED_MODEL_NKNOBS] = {128, 4, 0, 1, 0, 8};
        bg_sched_model_point_features(x, kn, pf);
        CHECK(pf[10] == 7 && pf[11] == 2 && pf[12] == 11 && pf[13] == 1 && pf[14] == 0 && pf[15] == 3);
        CHECK(pf[16] == x[0] + 3 - 7 - 2);
        BgArena *ra = bg_arena_new();
        BgModule *rm = bg_compile_file(ra, mpath, NULL, &d);
        CHECK(rm != NULL);
        if (rm) {
            CHECK_EQ_INT(bg_sched_apply_model(rm, sm, x), 1); /* gcn_bin's bspmm_mm */
            for (int i = 0; i < rm->ninsts; i++)
                if (rm->insts[i].op == BG_OP_BSPMM_MM)
                    CHECK(rm->insts[i].attrs.sched.block == 128 && rm->insts[i].attrs.sched.lanes == 8);
        }
        bg_arena_free(ra);
    }
    bg_sched_model_free(sm);
    /* damage: one warning each, no trees */
    static const char *const bad[] = {
        "bgnn-sched-model 3\n",
        "bgnn-sched-model 1\ntree f x\tblock\t2\nnode 0 0 1 0 1\nleaf 1 64\n", /* a child before its parent */
        "bgnn-sched-model 1\ntree f x\tspeed\t1\nleaf 0 64\n",                  /* no such knob */
        "bgnn-sched-model 1\ntree f x\tblock\t2\nleaf 0 64\n",                  /* a node missing */
        "bgnn-sched-model 1\ntree f x\tblock\t1\nleaf 0 64",                     /* no final newline */
        "bgnn-sched-model 1\ntree f x\tblock\t3\nnode 0 10 1 1 2\nleaf 1 1\nleaf 2 2\n", /* feature 10 */
        "bgnn-sched-model 1\ntree f x\tblock\t1\nleaf 0 99999\n",               /* value out of range */
        "bgnn-sched-model 1\nregress f x\t1\t1\t0.1\t0\t0\nrange 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1\npoint 0 0 0 0 0 0\nrtree 1\nvalue 0 1\n", /* v1 */
        "bgnn-sched-model 2\nregress f x\t2\t1\t0.1\t0\t0\nrange 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1\npoint 0 0 0 0 0 0\nrtree 1\nvalue 0 1\n", /* a point short */
        "bgnn-sched-model 2\nregress f x\t1\t1\t0.1\t0\t0\nrange 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1\npoint 0 0 0 0 0 7\nrtree 1\nvalue 0 1\n", /* lanes 7 */
        "bgnn-sched-model 2\nregress f x\t1\t2\t0.1\t0\t0\nrange 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1\npoint 0 0 0 0 0 0\nrtree 1\nvalue 0 1\n", /* a tree short */
        "bgnn-sched-model 2\nregress f x\t1\t1\t0.1\t0\t0\nrange 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1\npoint 0 0 0 0 0 0\nrtree 3\nnode 0 17 1 1 2\n"
        "value 1 0\nvalue 2 1\n",                                                    /* feature 17 */
        "bgnn-sched-model 2\nregress f x\t1\t1\t0.1\t0\t0\npoint 0 0 0 0 0 0\nrtree 1\nvalue 0 1\n", /* no range */
        "bgnn-sched-model 2\nregress f x\t1\t1\t0.1\t0\t0\nrange 0 1\npoint 0 0 0 0 0 0\nrtree 1\nvalue 0 1\n",
        "bgnn-sched-model 2\nregress f x\t1\t1\t0.1\t0\t-1\nrange 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1\n"
        "point 0 0 0 0 0 0\nrtree 1\nvalue 0 1\n", /* a negative margin */
        "bgnn-sched-model 2\nregress f x\t1\t1\tnan\t0\t0\nrange 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1\npoint 0 0 0 0 0 0\nrtree 1\nvalue 0 1\n", /* rate */
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        write_text(path, bad[k]);
        BgDiagSink w;
        bg_diag_init(&w);
        BgSchedModel *b = bg_sched_model_load(path, &w);
        CHECK(b != NULL);
        CHECK_EQ_INT(w.n, 1);
        CHECK_EQ_INT(w.nerrors, 0);
        CHECK_EQ_INT(bg_sched_model_ntrees(b), 0);
        if (w.n != 1) fprintf(stderr, "damaged model %zu: %d diagnostics\n", k, w.n);
        bg_sched_model_free(b);
        bg_diag_free(&w);
    }
    unlink(path);
    BgSchedModel *none = bg_sched_model_load(path, &d); /* missing: empty, no warning */
    CHECK(none && bg_sched_model_ntrees(none) == 0);
    bg_sched_model_free(none);
    /* the built-in models (plan/models/): every one parses; BGNN_SCHED_MODEL=builtin gives an
     * H100 the repository's, a GPU without one none; by default a GPU gets its own model file
     * when there is one, else none */
    {
        char *name = NULL;
        BgSchedModel *h = bg_sched_model_builtin("NVIDIA H100 80GB HBM3", 90, &name);
        CHECK(bg_sched_model_ntrees(h) > 0);
        CHECK(name && strcmp(name, "built-in NVIDIA_H100_80GB_HBM3_sm90.model") == 0);
        free(name);
        bg_sched_model_free(h);
        BgSchedModel *u = bg_sched_model_builtin("Imaginary GPU 9000", 90, &name);
        CHECK(u && bg_sched_model_ntrees(u) == 0 && name == NULL);
        bg_sched_model_free(u);
        char tdir[600];
        snprintf(tdir, sizeof tdir, "%s/sched_tune_dir", getenv("BGNN_TEST_TMP") ? getenv("BGNN_TEST_TMP") : "/tmp");
        mkdir(tdir, 0755);
        setenv("BGNN_TUNE_DIR", tdir, 1);
        char *own = bg_sched_model_path(NULL, "NVIDIA H200", 90);
        unlink(own);
        BgSchedModel *g0 = bg_sched_model_for_gpu(NULL, "NVIDIA H200", 90, &name, &d); /* no built-in one */
        CHECK(bg_sched_model_ntrees(g0) == 0 && name == NULL);
        bg_sched_model_free(g0);
        char *hown = bg_sched_model_path(NULL, "NVIDIA H100 80GB HBM3", 90);
        unlink(hown);
        free(hown);
        g0 = bg_sched_model_for_gpu(NULL, "NVIDIA H100 80GB HBM3", 90, &name, &d); /* the built-in one by default */
        CHECK(bg_sched_model_ntrees(g0) > 0 && name && strncmp(name, "built-in ", 9) == 0);
        free(name);
        bg_sched_model_free(g0);
        g0 = bg_sched_model_for_gpu("off", "NVIDIA H100 80GB HBM3", 90, &name, &d);
        CHECK(bg_sched_model_ntrees(g0) == 0 && name == NULL);
        bg_sched_model_free(g0);
        BgSchedModel *g1 = bg_sched_model_for_gpu("builtin", "NVIDIA H100 80GB HBM3", 90, &name, &d);
        CHECK(bg_sched_model_ntrees(g1) > 0 && name && strncmp(name, "built-in ", 9) == 0);
        free(name);
        bg_sched_model_free(g1);
        write_text(own, "bgnn-sched-model 1\ntree bspmm.BBB fast\tblock\t1\nleaf 0 64\n");
        BgSchedModel *g2 = bg_sched_model_for_gpu(NULL, "NVIDIA H200", 90, &name, &d);
        CHECK(bg_sched_model_ntrees(g2) == 1 && name && strcmp(name, own) == 0);
        free(name);
        bg_sched_model_free(g2);
        unlink(own);
        free(own);
        unsetenv("BGNN_TUNE_DIR");
    }
    /* a trained model (CI: tools/train_predictor.py on the H100 records) */
    const char *trained = getenv("BGNN_SCHED_MODEL_FILE");
    if (trained && *trained) {
        BgSchedModel *t = bg_sched_model_load(trained, &d);
        CHECK(bg_sched_model_ntrees(t) > 0);
        int napplied = 0;
        DIR *dir = NULL;
        char exdir[700];
        snprintf(exdir, sizeof exdir, "%s/examples", srcdir);
        dir = opendir(exdir);
        for (struct dirent *e; dir && (e = readdir(dir));) {
            size_t l = strlen(e->d_name);
            if (l < 6 || strcmp(e->d_name + l - 5, ".bgnn") != 0) continue;
            char p2[1000];
            snprintf(p2, sizeof p2, "%s/%s", exdir, e->d_name);
            BgModule *em = bg_compile_file(a, p2, NULL, &d);
            CHECK(em != NULL);
            if (!em) continue;
            napplied += bg_sched_apply_model(em, t, x);
            BgArena *pa = bg_arena_new();
            CHECK(bg_plan_build(em, "sm_90", pa, &d) != NULL);
            bg_arena_free(pa);
        }
        if (dir) closedir(dir);
        printf("trained model %s: %d trees, %d instructions of the examples set\n", trained, bg_sched_model_ntrees(t),
               napplied);
        CHECK(napplied > 0);
        /* the C walk gives the trainer's predictions: every case it wrote with --expect */
        const char *expect = getenv("BGNN_SCHED_EXPECT_FILE");
        FILE *ef = expect && *expect ? fopen(expect, "r") : NULL;
        CHECK(!expect || !*expect || ef);
        int ncases = 0, nsame = 0;
        char line[1024];
        while (ef && fgets(line, sizeof line, ef)) {
            char *save = NULL, *fam = strtok_r(line, "\t\n", &save);
            double xe[BG_SCHED_MODEL_NFEAT];
            int want[BG_SCHED_MODEL_NKNOBS];
            bool ok = fam != NULL;
            for (int k = 0; ok && k < BG_SCHED_MODEL_NFEAT; k++) {
                char *f = strtok_r(NULL, "\t\n", &save);
                ok = f != NULL;
                if (ok) xe[k] = strtod(f, NULL);
            }
            for (int k = 0; ok && k < BG_SCHED_MODEL_NKNOBS; k++) {
                char *f = strtok_r(NULL, "\t\n", &save);
                ok = f != NULL;
                if (ok) want[k] = atoi(f);
            }
            CHECK(ok);
            if (!ok) continue;
            bool same = true;
            int first[1][BG_SCHED_MODEL_NKNOBS];
            const bool regress = bg_sched_model_ranked(t, fam, xe, first, 1) == 1;
            for (int k = 0; k < BG_SCHED_MODEL_NKNOBS; k++) {
                int got = 0;
                if (regress) got = first[0][k];
                else if (!bg_sched_model_predict(t, fam, bg_sched_model_knobs[k], xe, &got)) got = 0;
                same &= got == want[k];
            }
            ncases++;
            nsame += same;
        }
        if (ef) {
            fclose(ef);
            printf("trained model: %d of %d cases predicted as tools/train_predictor.py predicts them\n", nsame, ncases);
            CHECK(ncases > 0);
            CHECK_EQ_INT(nsame, ncases);
        }
        bg_sched_model_free(t);
    }
    CHECK_EQ_INT(d.nerrors, 0);
    CHECK_EQ_INT(d.n, 0);
    bg_arena_free(a);
    bg_diag_free(&d);
}

/* The plan's rules (bg_sched_apply_rules): gcn_bin's bspmm_mm (7 outputs) takes lanes=16 on one
 * graph of PubMed's size and degree (19,717 rows, 5.5 entries a row), and not on Cora's 2,708
 * rows, a batch of graphs, a graph of 20 entries a row, or where a schedule is already set (the
 * aggregation, a bspmm, never); dry counts without setting; the plan built after it runs the
 * bspmm_mm at 16 lanes a row. */
static void check_rules(const char *srcdir) {
    char mpath[600];
    snprintf(mpath, sizeof mpath, "%s/examples/gcn_bin.bgnn", srcdir);
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgModule *m = bg_compile_file(a, mpath, NULL, &d);
    CHECK(m != NULL);
    if (!m) {
        bg_diag_free(&d);
        bg_arena_free(a);
        return;
    }
    int mm = -1;
    for (int i = 0; i < m->ninsts; i++)
        if (m->insts[i].op == BG_OP_BSPMM_MM) mm = i;
    CHECK(mm >= 0);
    if (mm < 0) return;
    CHECK_EQ_INT(bg_sched_apply_rules(m, 2708, 1, 4.9, false), 0); /* Cora: one wave of warps */
    CHECK_EQ_INT(bg_sched_apply_rules(m, 19717, 188, 5.5, false), 0); /* a batch of graphs */
    CHECK_EQ_INT(bg_sched_apply_rules(m, 19717, 1, 20.0, false), 0); /* long rows */
    CHECK_EQ_INT(bg_sched_apply_rules(m, 19717, 1, 5.5, true), 1); /* dry: counted, not set */
    CHECK(bg_sched_is_default(&m->insts[mm].attrs.sched));
    CHECK_EQ_INT(bg_sched_apply_rules(m, 19717, 1, 5.5, false), 1); /* PubMed */
    CHECK_EQ_INT(m->insts[mm].attrs.sched.lanes, 16);
    for (int i = 0; i < m->ninsts; i++)
        if (i != mm) CHECK(bg_sched_is_default(&m->insts[i].attrs.sched));
    CHECK_EQ_INT(bg_sched_apply_rules(m, 19717, 1, 5.5, false), 0); /* already set: left alone */
    BgPlan *p = bg_plan_build(m, "sm_90", a, &d);
    CHECK(p != NULL);
    const BgPlanLaunch *l = p ? launch_of(p, mm) : NULL;
    CHECK(l != NULL && l->threads_per_row == 16);
    /* a schedule set by hand (bgnnc --sched) is not replaced */
    BgModule *m2 = bg_compile_file(a, mpath, NULL, &d);
    CHECK(m2 != NULL);
    if (m2) {
        char spec[64];
        snprintf(spec, sizeof spec, "%d:block=128", mm);
        CHECK(bg_sched_apply_text(m2, spec, &d));
        CHECK_EQ_INT(bg_sched_apply_rules(m2, 19717, 1, 5.5, false), 0);
        CHECK_EQ_INT(m2->insts[mm].attrs.sched.lanes, 0);
    }
    CHECK_EQ_INT(d.nerrors, 0);
    bg_diag_free(&d);
    bg_arena_free(a);
}

int main(void) {
    const char *srcdir = getenv("BGNN_SOURCE_DIR") ? getenv("BGNN_SOURCE_DIR") : ".";
    char exdir[600];
    snprintf(exdir, sizeof exdir, "%s/examples", srcdir);
    DIR *dir = opendir(exdir);
    CHECK(dir != NULL);
    char *names[64];
    int nn = 0;
    for (struct dirent *e; dir && (e = readdir(dir)) && nn < 64;) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".bgnn") == 0) names[nn++] = strdup(e->d_name);
    }
    if (dir) closedir(dir);
    qsort(names, (size_t)nn, sizeof *names, cmp_str);
    int64_t npoints = 0;
    for (int i = 0; i < nn; i++) {
        char p[800];
        snprintf(p, sizeof p, "%s/%s", exdir, names[i]);
        check_model(p, &npoints);
        free(names[i]);
    }
    printf("%d examples, %lld schedule points\n", nn, (long long)npoints);
    CHECK(nn >= 5 && npoints > 1000);
    check_db(srcdir, bg_test_tmpdir());
    check_graph_key();
    check_rules(srcdir);
    check_predictor(srcdir, bg_test_tmpdir());
    return bg_test_finish();
}
