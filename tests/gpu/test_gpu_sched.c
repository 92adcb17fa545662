/* test_gpu_sched.c - every point of every schedule space gives the CPU reference's bits
 * (issue 17, docs/tuning.md): for each example model with random weights, on awkward synthetic
 * graphs (N = 67 with isolated nodes and dense features; N = 6000 with a hub of degree 5000 and
 * 2% dense features, so that the features product's sparse variant runs), every tunable
 * instruction runs every point of bg_sched_space (threads per block, blocks per SM, the fast
 * aggregation's chunk and grouping, the features kernel, method, path) with the other
 * instructions at their defaults, and every value the plan keeps is compared with the
 * interpreter's (b1 bit for bit, f32 within 1e-5: the same comparison as test_gpu_examples).
 * A point that changes the code (method, path) is compiled again; the others are applied to the
 * loaded plan (bg_gpu_model_resched).  The CUDA graph of separate kernels runs (BGNN_EXEC=graph,
 * BGNN_BATCH_KERNEL=layers): the fused and per-graph kernels take no schedule.
 * BGNN_GPU_TEST_QUICK=1: N = 67 only, and at most 40 points an instruction (every code-level
 * point among them).  BGNN_GPU_TEST_ONLY=a.bgnn,b.bgnn: only these examples.  Exit 77 without a GPU. */
#include "bgtest.h"
#include "gpu_run_compare.h"
#include "synth_graph.h"
#include "driver.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static void dump(BgDiagSink *d) {
    char *t = bg_diag_render(d);
    if (t && *t) fprintf(stderr, "%s", t);
    free(t);
}

static bool has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct Graph {
    BgGraph g;
    BgTensor x;
    const char *what;
    BgBindings b;
    BgInterpResult res;
    BgTensor *all;
    bool ok;
} Graph;

static int64_t points_run, points_bad;

/* Runs gm (m's current schedule) on gr and compares with the interpreter's values. */
static void check_point(BgGpu *g, BgGpuModel *gm, BgModule *m, const char *weights, Graph *gr, const char *model,
                        const char *what) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgGpuRun run;
    bool ok = bg_gpu_run_bind(g, gm, m, &gr->g, &gr->x, 0, weights, &run, NULL, &d) &&
              bg_gpu_run_launch(g, gm, &run, NULL, &d);
    CHECK(ok);
    if (ok) {
        double maxerr = 0;
        int nvals = 0;
        char w[400];
        snprintf(w, sizeof w, "%s, %s", gr->what, what);
        int bad = bg_gpu_compare_run(g, gm, m, &run, gr->all, &gr->res, model, w, &maxerr, &nvals);
        points_bad += bad != 0;
        bg_gpu_run_free(g, &run);
    } else {
        fprintf(stderr, "  %s on %s, %s: cannot run\n", model, gr->what, what);
        dump(&d);
        points_bad++;
    }
    points_run++;
    bg_diag_free(&d);
}

static bool load(BgGpu *g, BgModule *m, const char *name, BgGpuModel *gm, BgDiagSink *d) {
    unsigned char *cub = NULL;
    size_t len = 0;
    bg_gpu_model_free(g, gm);
    memset(gm, 0, sizeof *gm);
    bool ok = bg_jit_cubin(m, g->arch, &g->nv, NULL, &cub, &len, NULL, d) && bg_gpu_model_load(g, cub, len, name, gm, d);
    free(cub);
    return ok;
}

int main(void) {
    BgDiagSink d;
    bg_diag_init(&d);
    setenv("BGNN_EXEC", "graph", 1);
    setenv("BGNN_BATCH_KERNEL", "layers", 1);
    BgGpu g;
    if (!bg_gpu_open(&g, 0, &d)) {
        int code = d.n ? d.items[0].code : 0;
        dump(&d);
        bg_diag_free(&d);
        if (code == BG_E_NO_DEVICE) bg_test_skip("no CUDA device");
        CHECK(!"bg_gpu_open failed for a reason other than a missing device");
        return bg_test_finish();
    }
    if (!bg_nvrtc_load(&g.nv, &d)) {
        bg_gpu_close(&g);
        bg_test_skip("NVRTC cannot be loaded");
    }
    const bool quick = getenv("BGNN_GPU_TEST_QUICK") && strcmp(getenv("BGNN_GPU_TEST_QUICK"), "0") != 0;
    printf("device %s (%s), %d SMs%s\n", g.name, g.arch, g.nsm, quick ? ", quick mode" : "");
    char tmpdir[512];
    snprintf(tmpdir, sizeof tmpdir, "%s/test_gpu_sched.%ld", bg_test_tmpdir(), (long)getpid());
    mkdir(tmpdir, 0755);
    const char *srcdir = getenv("BGNN_SOURCE_DIR") ? getenv("BGNN_SOURCE_DIR") : ".";
    char exdir[600];
    snprintf(exdir, sizeof exdir, "%s/examples", srcdir);
    DIR *dir = opendir(exdir);
    CHECK(dir != NULL);
    char *names[64];
    int nnames = 0;
    const char *only = getenv("BGNN_GPU_TEST_ONLY");
    char onlybuf[1024], key[300];
    snprintf(onlybuf, sizeof onlybuf, ",%s,", only ? only : "");
    for (struct dirent *e; dir && (e = readdir(dir)) && nnames < 64;) {
        snprintf(key, sizeof key, ",%s,", e->d_name);
        if (has_suffix(e->d_name, ".bgnn") && (!only || strstr(onlybuf, key))) names[nnames++] = strdup(e->d_name);
    }
    if (dir) closedir(dir);
    qsort(names, (size_t)nnames, sizeof names[0], cmp_str);

    for (int i = 0; i < nnames; i++) {
        char mpath[800], wpath[800];
        snprintf(mpath, sizeof mpath, "%s/%s", exdir, names[i]);
        snprintf(wpath, sizeof wpath, "%s/%s.safetensors", tmpdir, names[i]);
        BgArena *a = bg_arena_new();
        BgCompileOpts lo = {0};
        static const char *const none[1] = {NULL};
        lo.passes = none;
        BgModule *lowered = bg_compile_file(a, mpath, &lo, &d);
        BgModule *m = bg_compile_file(a, mpath, NULL, &d);
        BgGpuModel gm;
        memset(&gm, 0, sizeof gm);
        bool ok = lowered && m && bg_gen_weights(lowered, 3, wpath, NULL, &d) && load(&g, m, names[i], &gm, &d);
        CHECK(ok);
        if (!ok) {
            fprintf(stderr, "%s: cannot compile or load\n", names[i]);
            dump(&d);
            bg_diag_free(&d);
            bg_diag_init(&d);
            bg_arena_free(a);
            continue;
        }
        const bool batched = gm.plan->uses_graph_ptr;
        int64_t f = 0;
        for (int k = 0; k < m->ninsts; k++)
            if (m->insts[k].op == BG_OP_INPUT) f = m->insts[k].type.dim[1];
        Graph gr[2];
        memset(gr, 0, sizeof gr);
        const int ngr = quick ? 1 : 2;
        for (int k = 0; k < ngr; k++) {
            const int64_t n = k ? 6000 : 67, hub = k ? 5000 : 0;
            synth_graph(n, 4, hub, batched, batched, 500 + (unsigned long long)k, &gr[k].g);
            bg_tensor_alloc(&gr[k].x, BG_DT_F32, 2, n, f);
            unsigned long long s = 91 + (unsigned long long)k;
            float *x = gr[k].x.data;
            for (int64_t q = 0; q < n * f; q++) { /* graph 1: 2% nonzero (the sparse variant) */
                float v = bg_test_randf(&s);
                x[q] = k == 0 || bg_test_rand(&s) % 50 == 0 ? v * (q % 3 ? 1.0f : 4.0f) : 0.0f;
            }
            gr[k].what = k ? "N=6000 hub, 2% features" : "N=67, dense features";
            gr[k].ok = bg_bind(m, &gr[k].g, &gr[k].x, wpath, &gr[k].b, &d) &&
                       bg_interp_run(m, &gr[k].b, &gr[k].res, &gr[k].all, &d);
            CHECK(gr[k].ok);
        }
        int ntun = 0;
        int64_t before = points_run;
        for (int k = 0; k < m->ninsts; k++) {
            BgInst *in = &m->insts[k];
            if (!bg_sched_tunable(m, in)) continue;
            ntun++;
            const BgSchedPoint def = bg_sched_point(in);
            int np = bg_sched_space(m, in, g.sm, NULL, 0);
            BgSchedPoint *pts = bg_xcalloc((size_t)np + 1, sizeof *pts);
            bg_sched_space(m, in, g.sm, pts, np);
            BgSchedPoint code = def; /* the code gm holds */
            int stride = quick && np > 40 ? np / 40 : 1;
            for (int p = 0; p < np; p++) {
                const bool code_point = pts[p].method != def.method || pts[p].path != def.path;
                /* quick: every stride-th point, and each code-level point's first */
                if (stride > 1 && p % stride && !(code_point && (pts[p].method != code.method || pts[p].path != code.path)))
                    continue;
                bg_sched_set(in, &pts[p]);
                if (pts[p].method != code.method || pts[p].path != code.path) {
                    if (!load(&g, m, names[i], &gm, &d)) {
                        CHECK(!"compile a code-level point");
                        dump(&d);
                        break;
                    }
                    code = pts[p];
                } else if (!bg_gpu_model_resched(&gm, m, g.arch, &d)) {
                    CHECK(!"resched");
                    dump(&d);
                    break;
                }
                char txt[128], what[200];
                bg_sched_str(&pts[p], txt, sizeof txt);
                snprintf(what, sizeof what, "%%%d sched(%s)", k, txt);
                for (int q = 0; q < ngr; q++)
                    if (gr[q].ok) check_point(&g, &gm, m, wpath, &gr[q], names[i], what);
            }
            bg_sched_set(in, &def);
            if (code.method != def.method || code.path != def.path) CHECK(load(&g, m, names[i], &gm, &d));
            else CHECK(bg_gpu_model_resched(&gm, m, g.arch, &d));
            free(pts);
        }
        printf("%s: %d tunable instructions, %lld runs compared\n", names[i], ntun, (long long)(points_run - before));
        for (int k = 0; k < ngr; k++) {
            if (gr[k].all) bg_interp_values_free(m, gr[k].all);
            bg_interp_result_free(&gr[k].res);
            bg_bindings_free(&gr[k].b);
            bg_tensor_free(&gr[k].x);
            bg_graph_free(&gr[k].g);
        }
        bg_gpu_model_free(&g, &gm);
        bg_arena_free(a);
        free(names[i]);
    }
    CHECK(nnames >= (only ? 1 : 5));
    printf("%lld schedule points run, %lld differ from the CPU reference\n", (long long)points_run, (long long)points_bad);
    CHECK(points_bad == 0);
    if (d.nerrors) dump(&d);
    bg_gpu_close(&g);
    bg_diag_free(&d);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return bg_test_finish();
}
