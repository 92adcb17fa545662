/* test_gpu_examples.c - every example model on the GPU against the CPU interpreter.
 *
 * For each .bgnn in examples/ with random weights (bgnnc gen-weights semantics, seed 1) on Cora
 * (MUTAG for mutag_gcn_bin.bgnn; $BGNN_DATA_DIR), and on awkward synthetic graphs (N = 1, 5,
 * 33, 67, 1000 with isolated nodes, and a hub of degree 5000) with random features: JIT the
 * model, run it on a non-default stream, and compare EVERY value buffer the plan keeps (each
 * TEMP buffer holds one IR value) and every output with bg_interp_run's values: b1 bit for
 * bit including the zero padding bits, f32 within 1e-5 relative (max error reported).
 * Then: the AOT path (cubin file -> plan from its manifest) gives the same outputs; a
 * cubin for another architecture is E_ARCH; a buffer too large for the device fails with
 * "out of device memory" and leaves nothing allocated; the public API with device-resident
 * features matches the host path.
 * BGNN_GPU_TEST_QUICK=1 (compute-sanitizer runs): synthetic graphs only, no OOM check;
 * BGNN_GPU_TEST_ONLY=a.bgnn,b.bgnn: only these examples.  Exit 77 without
 * a GPU. */
#include "bgtest.h"
#include "gpu_run_compare.h"
#include "synth_graph.h"
#include "bgnn/bgnn.h"
#include "driver.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[512];
static double worst_f32;

static void dump(BgDiagSink *d) {
    char *t = bg_diag_render(d);
    if (t && *t) fprintf(stderr, "%s", t);
    free(t);
}


typedef struct Case {
    const char *model_path;   /* the name, for messages */
    const char *file;         /* the path */
    BgModule *m;
    const char *weights;
    BgGpuModel *gm;
} Case;

/* One model on one graph: GPU vs interpreter, every kept value.  diagonal: the graph is a
 * block-diagonal batch (no edge between two graphs), which the per-graph kernel can run. */
static void run_case(BgGpu *g, const Case *cs, BgGraph *graph, const BgTensor *feat, const char *what,
                     bool diagonal, BgCUstream stream) {
    BgDiagSink d;
    bg_diag_init(&d);
    const BgPlan *p = cs->gm->plan;
    BgGpuRun run;
    BgBindings b;
    memset(&b, 0, sizeof b);
    BgInterpResult res;
    memset(&res, 0, sizeof res);
    BgTensor *all = NULL;
    bool bound = bg_gpu_run_bind(g, cs->gm, cs->m, graph, feat, 0, cs->weights, &run, NULL, &d);
    bool cpu = bg_bind(cs->m, graph, feat, cs->weights, &b, &d) &&
               bg_interp_run(cs->m, &b, &res, &all, &d);
    CHECK(bound);
    CHECK(cpu);
    /* auto takes the per-graph kernel for a block-diagonal batch of graphs up to
     * BG_PLAN_BLOCKS_MAX_NODES nodes, when the model has one */
    int64_t largest = 0;
    for (int64_t k = 0; graph->graph_ptr && k < graph->ngraphs; k++)
        if (graph->graph_ptr[k + 1] - graph->graph_ptr[k] > largest) largest = graph->graph_ptr[k + 1] - graph->graph_ptr[k];
    const bool blocks_fit = p->blocks && diagonal && graph->graph_ptr;
    if (bound) CHECK(run.use_blocks == (blocks_fit && largest <= BG_PLAN_BLOCKS_MAX_NODES));
    run.blocks_pending = false; /* each mode below is asked for explicitly */
    /* Every execution mode the model has: the fused cooperative kernel, a CUDA graph of the
     * separate kernels, the separate kernels launched one by one.  Temporaries are filled
     * with 0xff between modes, so each mode's results are its own (not the prep launches'
     * outputs: computed once at binding, like the parameters). */
    /* The 4th pass asks for a cooperative grid one block larger than the device holds: auto
     * mode must refuse it cleanly and run the separate kernels (a CUDA graph) instead.  The
     * 5th runs the per-graph kernel (forced also where auto would not take it: large graphs). */
    static const BgExecMode modes[] = {BG_EXEC_COOP, BG_EXEC_GRAPH, BG_EXEC_LAUNCHES, BG_EXEC_AUTO, BG_EXEC_BLOCKS};
    static const char *const mode_names[] = {"coop", "graph", "launches", "too-big", "blocks"};
    for (int mi = 0; mi < 5 && bound && cpu; mi++) {
    if ((mi == 0 || mi == 3) && !cs->gm->fused_fn) continue;
    if (mi == 4 && !blocks_fit) continue;
    run.use_blocks = mi == 4;
    /* BGNN_GPU_TEST_NO_COOP=1: racecheck serialises blocks, so a grid-wide barrier never
     * completes under it; the fused kernel's phases are the separate kernels' code. */
    if ((mi == 0 || mi == 3) && getenv("BGNN_GPU_TEST_NO_COOP")) continue;
    for (int k = 0; k < p->nbufs; k++)
        if (p->bufs[k].role == BG_ROLE_TEMP && run.bytes[k] && !bg_plan_prep_output(p, k))
            CHECK(g->cu.cuMemsetD8_v2(run.ptr[k], 0xff, run.bytes[k]) == BG_CUDA_SUCCESS);
    CHECK(g->cu.cuCtxSynchronize() == BG_CUDA_SUCCESS);
    run.mode = modes[mi];
    run.coop_refused[0] = 0;
    run.coop_grid_request = mi == 3 ? cs->gm->fused_grid_max + 1 : 0;
    run.pdl = mi == 2 ? 2 : 0; /* the launches mode plainly (BGNN_PDL=off), the CUDA graph (captured
                                * once, at mi 1) with programmatic launches (sm_90) */
    bool ok = bg_gpu_run_launch(g, cs->gm, &run, stream, &d);
    CHECK(ok);
    BgExecMode want = mi == 3 ? (run.n > 0 ? BG_EXEC_GRAPH : BG_EXEC_COOP) : modes[mi];
    CHECK(!ok || run.used == want);
    if (mi == 3 && run.n > 0) CHECK(strstr(run.coop_refused, "exceeds") != NULL);
    int nvals = 0, nbad = 0;
    double maxerr = 0;
    if (ok) nbad = bg_gpu_compare_run(g, cs->gm, cs->m, &run, all, &res, cs->model_path, what, &maxerr, &nvals);
    if (maxerr > worst_f32) worst_f32 = maxerr;
    printf("  %-28s %-22s %-8s %2d values compared, %d differ, max f32 rel err %.2g\n", cs->model_path, what,
           mode_names[mi], nvals, nbad, maxerr);
    }
    if (d.nerrors) dump(&d);
    bg_interp_values_free(cs->m, all);
    bg_interp_result_free(&res);
    bg_bindings_free(&b);
    bg_gpu_run_free(g, &run);
    bg_diag_free(&d);
}

static int64_t input_width(const BgModule *m) {
    for (int i = 0; i < m->ninsts; i++)
        if (m->insts[i].op == BG_OP_INPUT) return m->insts[i].type.dim[1];
    return 0;
}

static bool has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* ---- extra checks on one model ------------------------------------------------------------ */
static void check_aot_and_arch(BgGpu *g, BgNvrtc *nv, const Case *cs, BgGraph *graph, const BgTensor *feat) {
    BgDiagSink d;
    bg_diag_init(&d);
    /* AOT: through a file, plan from the manifest only */
    unsigned char *cub = NULL;
    size_t len = 0;
    CHECK(bg_jit_cubin(cs->m, g->arch, nv, NULL, &cub, &len, NULL, &d));
    char path[700];
    snprintf(path, sizeof path, "%s/aot.cubin", tmpdir);
    CHECK(cub && bg_write_file_atomic(path, cub, len, &d));
    free(cub);
    bgnn_context_options o;
    bgnn_context_options_init(&o);
    o.target = BGNN_TARGET_GPU;
    bgnn_context *c = NULL;
    CHECK_EQ_INT(bgnn_context_create(&o, &c), BGNN_OK);
    bgnn_model *jm = NULL, *am = NULL;
    CHECK_EQ_INT(bgnn_model_compile_file(c, cs->file, &jm), BGNN_OK);
    CHECK_EQ_INT(bgnn_model_load_cubin(c, path, &am), BGNN_OK);
    if (!jm || !am) fprintf(stderr, "%s", bgnn_context_last_error(c));
    bgnn_session *s1 = NULL, *s2 = NULL;
    if (jm && am) {
        CHECK_EQ_INT(bgnn_session_create(jm, &s1), BGNN_OK);
        CHECK_EQ_INT(bgnn_session_create(am, &s2), BGNN_OK);
        int64_t n = graph->n, f = feat->dim[1];
        CHECK_EQ_INT(bgnn_session_set_graph_csr(s1, n, graph->rowptr, graph->col, 0, NULL), BGNN_OK);
        CHECK_EQ_INT(bgnn_session_set_graph_csr(s2, n, graph->rowptr, graph->col, 0, NULL), BGNN_OK);
        CHECK_EQ_INT(bgnn_session_set_features(s1, feat->data, n, f), BGNN_OK);
        /* device-resident features for the AOT session */
        BgCUdeviceptr dx = 0;
        size_t fb = (size_t)(n * f) * 4;
        CHECK(bg_cuda_check(&g->cu, g->cu.cuMemAlloc_v2(&dx, fb), "alloc", &d));
        CHECK(bg_cuda_check(&g->cu, g->cu.cuMemcpyHtoD_v2(dx, feat->data, fb), "copy", &d));
        CHECK_EQ_INT(bgnn_session_set_features_device(s2, (uint64_t)dx, n, f), BGNN_OK);
        CHECK_EQ_INT(bgnn_session_set_weights(s1, cs->weights), BGNN_OK);
        CHECK_EQ_INT(bgnn_session_set_weights(s2, cs->weights), BGNN_OK);
        CHECK_EQ_INT(bgnn_session_run(s1, NULL), BGNN_OK);
        CHECK_EQ_INT(bgnn_session_run(s2, NULL), BGNN_OK);
        bgnn_tensor_info ti = {.struct_size = sizeof ti};
        CHECK_EQ_INT(bgnn_session_output_info(s1, 0, &ti), BGNN_OK);
        void *o1 = bg_xcalloc(ti.bytes + 1, 1), *o2 = bg_xcalloc(ti.bytes + 1, 1);
        CHECK_EQ_INT(bgnn_session_read_output(s1, 0, o1, ti.bytes), BGNN_OK);
        CHECK_EQ_INT(bgnn_session_read_output(s2, 0, o2, ti.bytes), BGNN_OK);
        CHECK(memcmp(o1, o2, ti.bytes) == 0);
        uint64_t dp = 0;
        CHECK_EQ_INT(bgnn_session_output_device_ptr(s2, 0, &dp), BGNN_OK);
        CHECK(dp != 0);
        double med = 0;
        CHECK_EQ_INT(bgnn_session_time(s2, 5, NULL, &med), BGNN_OK);
        printf("  public API: JIT == AOT (device features), %s %.3f ms\n", cs->model_path, med);
        free(o1);
        free(o2);
        bgnn_session_destroy(s1);
        bgnn_session_destroy(s2);
        g->cu.cuMemFree_v2(dx);
    }
    bgnn_model_destroy(jm);
    bgnn_model_destroy(am);

    /* a cubin for another architecture */
    const char *other = g->sm / 10 == 8 ? "sm_90" : "sm_80";
    cub = NULL;
    CHECK(bg_jit_cubin(cs->m, other, nv, NULL, &cub, &len, NULL, &d));
    snprintf(path, sizeof path, "%s/other.cubin", tmpdir);
    CHECK(cub && bg_write_file_atomic(path, cub, len, &d));
    free(cub);
    bgnn_model *om = NULL;
    CHECK_EQ_INT(bgnn_model_load_cubin(c, path, &om), BGNN_ERR_ARCH);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "other.cubin: built for");
    printf("  %s", bgnn_context_last_error(c));
    /* a truncated cubin */
    if (truncate(path, 1000) == 0) {
        CHECK(bgnn_model_load_cubin(c, path, &om) != BGNN_OK);
        CHECK_STR_CONTAINS(bgnn_context_last_error(c), "other.cubin");
        printf("  %s", bgnn_context_last_error(c));
    }
    bgnn_context_destroy(c);
    CHECK_EQ_INT(d.nerrors, 0);
    dump(&d);
    bg_diag_free(&d);
}

static void check_oom(BgGpu *g, const Case *cs, BgGraph *graph, const BgTensor *feat) {
    BgDiagSink d;
    bg_diag_init(&d);
    const BgPlan *p = cs->gm->plan;
    BgPlan p2 = *p;
    p2.bufs = bg_xcalloc((size_t)p->nbufs, sizeof *p2.bufs);
    memcpy(p2.bufs, p->bufs, sizeof *p2.bufs * (size_t)p->nbufs);
    int victim = -1;
    for (int k = p->nbufs - 1; k >= 0 && victim < 0; k--)
        if (p->bufs[k].role == BG_ROLE_TEMP) victim = k;
    CHECK(victim >= 0);
    size_t fb0 = 0, tb = 0, fb1 = 0;
    g->cu.cuMemGetInfo_v2(&fb0, &tb);
    if (victim >= 0) {
        p2.bufs[victim].rows.kind = BG_ROWS_CONST;
        p2.bufs[victim].rows.value = (int64_t)(tb / 4 / (size_t)(p2.bufs[victim].width ? p2.bufs[victim].width : 1)) * 2;
        BgGpuModel gm2 = *cs->gm;
        gm2.plan = &p2;
        BgGpuRun run;
        bool oom = false;
        CHECK(!bg_gpu_run_bind(g, &gm2, cs->m, graph, feat, 0, cs->weights, &run, &oom, &d));
        CHECK(oom);
        CHECK(d.n > 0 && strstr(d.items[0].msg, "out of device memory") != NULL);
        if (d.n) printf("  %s\n", d.items[0].msg);
        /* everything given back: the free memory is the device's, which other processes (the
         * GPU tests run side by side) move too, so a shortfall is read again for up to 2 s */
        g->cu.cuMemGetInfo_v2(&fb1, &tb);
        for (int t = 0; t < 80 && fb1 + (4u << 20) < fb0; t++) {
            nanosleep(&(struct timespec){.tv_nsec = 25000000}, NULL);
            g->cu.cuMemGetInfo_v2(&fb1, &tb);
        }
        CHECK(fb1 + (4u << 20) >= fb0);
        printf("  device memory free before %zu, after %zu\n", fb0, fb1);
    }
    free(p2.bufs);
    bg_diag_free(&d);
}

/* The features product's sparse variant (templates/bmm_fb_csr.cuh) with a non-finite column
 * scale, against its row kernel on the GPU.  A zero feature of a column whose batchnorm scale
 * is +inf gives the term 0 * inf = NaN, which the row kernel adds and the CSR kernel, which
 * never sees the zeros, must account for (its scan of the scales, then NaN sums for every row
 * that lacks the column).  The CPU reference is no oracle here: a NaN's sign, so its bit, is
 * not specified (docs/semantics.md section 2; x86 makes negative NaNs, CUDA positive ones).  So
 * gcn_bin runs on Cora twice, with BGNN_FEATURES_KERNEL=rows and =sparse, the most frequent
 * feature column's running variance made -eps (scale 1 / sqrt(0) = +inf) and its running mean
 * -1 (so the folded shift's term for it, -(mean * s) v(w), is v(w) inf, the sign of the
 * features' term: Cora's features are >= 0).  A row holding the column then sums to +-inf by
 * each output's weight sign, one lacking it to NaN (bit 1: CUDA's NaN is positive); every
 * buffer of the two runs must hold the same bytes, and the product's bits must show both kinds
 * of row. */
static void check_nonfinite_scale(BgGpu *g, const Case *cs, BgGraph *graph, const BgTensor *feat,
                                  BgCUstream stream) {
    BgDiagSink d;
    bg_diag_init(&d);
    const int64_t n = feat->dim[0], f = feat->dim[1];
    int64_t *cnt = bg_xcalloc((size_t)f, sizeof *cnt), top = 0;
    const float *x = feat->data;
    for (int64_t i = 0; i < n * f; i++) cnt[i % f] += x[i] != 0.0f;
    for (int64_t c = 1; c < f; c++)
        if (cnt[c] > cnt[top]) top = c;
    BgSafetensors st;
    memset(&st, 0, sizeof st);
    bool ok = bg_safetensors_load(cs->weights, &st, &d);
    float *var = NULL, *mean = NULL;
    for (int k = 0; ok && k < st.n; k++) {
        CHECK(st.t[k].dtype == BG_DT_F32); /* gen-weights writes floats only: saved back as they are */
        ok = st.t[k].dtype == BG_DT_F32;
        if (!strcmp(st.t[k].name, "bn.running_var") && st.t[k].numel == f) var = st.t[k].data;
        if (!strcmp(st.t[k].name, "bn.running_mean") && st.t[k].numel == f) mean = st.t[k].data;
    }
    CHECK(var && mean);
    ok = ok && var && mean;
    if (ok) { /* bound from memory below (bg_gpu_run_bind_mem) */
        var[top] = -1e-5f; /* the model's eps: var + eps = 0 */
        mean[top] = -1.0f;
    }
    const BgPlan *p = cs->gm->plan;
    int prod = -1; /* the features product: the launch with a sparse variant, and its output */
    for (int i = 0; i < p->nlaunches; i++)
        if (p->launches[i].alt) prod = i;
    CHECK(prod >= 0 && p->nbufs <= 64);
    const int out = prod >= 0 ? p->launches[prod].args[0] : -1;
    unsigned char *host[2][64] = {{0}};
    size_t bytes[64] = {0};
    const char *outer = getenv("BGNN_FEATURES_KERNEL"); /* restored after */
    char *keep = NULL;
    if (outer) {
        keep = bg_xcalloc(strlen(outer) + 1, 1);
        memcpy(keep, outer, strlen(outer));
    }
    for (int v = 0; v < 2 && ok && prod >= 0 && p->nbufs <= 64; v++) {
        setenv("BGNN_FEATURES_KERNEL", v ? "sparse" : "rows", 1);
        BgGpuRun run;
        bool bound = bg_gpu_run_bind_mem(g, cs->gm, cs->m, graph, feat, 0, NULL, &st, &run, NULL, &d);
        CHECK(bound);
        if (!bound) break;
        CHECK(!run.use_alt[prod] && run.use_sparse[prod] == (v == 1)); /* the row kernel, then the sparse variant */
        run.mode = BG_EXEC_GRAPH;
        CHECK(bg_gpu_run_launch(g, cs->gm, &run, stream, &d));
        CHECK(g->cu.cuCtxSynchronize() == BG_CUDA_SUCCESS);
        for (int k = 0; k < p->nbufs; k++) {
            if (p->bufs[k].role != BG_ROLE_TEMP || !run.bytes[k]) continue;
            bytes[k] = run.bytes[k];
            host[v][k] = bg_xcalloc(bytes[k], 1);
            CHECK(g->cu.cuMemcpyDtoH_v2(host[v][k], run.ptr[k], bytes[k]) == BG_CUDA_SUCCESS);
        }
        bg_gpu_run_free(g, &run);
    }
    if (keep) setenv("BGNN_FEATURES_KERNEL", keep, 1);
    else unsetenv("BGNN_FEATURES_KERNEL");
    free(keep);
    bg_safetensors_free(&st);
    /* the product's bits (b1, rows of whole words): rows of all ones (NaN) and rows of both bits (+-inf) */
    int64_t nan_rows = 0, inf_rows = 0;
    if (out >= 0 && host[1][out] && p->bufs[out].kind == BG_BUF_B1 && p->bufs[out].width > 0) {
        const int64_t wpr = p->bufs[out].width, cols = p->bufs[out].cols;
        const uint32_t *y = (const uint32_t *)host[1][out];
        for (int64_t r = 0; r < n && (r + 1) * wpr * 4 <= (int64_t)bytes[out]; r++) {
            bool ones = true, zeros = true;
            for (int64_t c = 0; c < cols; c++) {
                const bool bit = (y[r * wpr + c / 32] >> (c % 32)) & 1u;
                ones = ones && bit;
                zeros = zeros && !bit;
            }
            nan_rows += ones;
            inf_rows += !ones && !zeros;
        }
    }
    CHECK(nan_rows > 0 && inf_rows > 0);
    int ncmp = 0, ndiff = 0;
    for (int k = 0; k < 64; k++) {
        if (host[0][k] && host[1][k]) {
            ncmp++;
            if (memcmp(host[0][k], host[1][k], bytes[k]) != 0) {
                ndiff++;
                fprintf(stderr, "non-finite scale: buffer %d differs between the row kernel and the sparse variant\n", k);
            }
        }
        free(host[0][k]);
        free(host[1][k]);
    }
    CHECK(out >= 0 && bytes[out] > 0 && ndiff == 0); /* the product's output among those compared */
    printf("  non-finite scale (column %lld, in %lld of %lld rows): %d buffers, product rows NaN %lld, +-inf %lld; "
           "rows kernel == sparse variant: %s\n",
           (long long)top, (long long)cnt[top], (long long)n, ncmp, (long long)nan_rows, (long long)inf_rows,
           ndiff ? "NO" : "yes");
    if (d.nerrors) dump(&d);
    free(cnt);
    bg_diag_free(&d);
}

int main(void) {
    BgDiagSink d;
    bg_diag_init(&d);
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
    bool quick = getenv("BGNN_GPU_TEST_QUICK") && strcmp(getenv("BGNN_GPU_TEST_QUICK"), "0") != 0;
    printf("device %s (%s), %d SMs%s\n", g.name, g.arch, g.nsm, quick ? ", quick mode" : "");
    snprintf(tmpdir, sizeof tmpdir, "%s/test_gpu_examples.%ld", bg_test_tmpdir(), (long)getpid());
    mkdir(tmpdir, 0755);
    const char *srcdir = getenv("BGNN_SOURCE_DIR") ? getenv("BGNN_SOURCE_DIR") : ".";
    char exdir[600];
    snprintf(exdir, sizeof exdir, "%s/examples", srcdir);
    DIR *dir = opendir(exdir);
    CHECK(dir != NULL);
    char *names[64];
    int nnames = 0;
    const char *only = getenv("BGNN_GPU_TEST_ONLY"); /* "a.bgnn,b.bgnn": just these */
    char onlybuf[1024], key[300];
    snprintf(onlybuf, sizeof onlybuf, ",%s,", only ? only : "");
    for (struct dirent *e; dir && (e = readdir(dir)) && nnames < 64;) {
        snprintf(key, sizeof key, ",%s,", e->d_name);
        if (has_suffix(e->d_name, ".bgnn") && (!only || strstr(onlybuf, key)))
            names[nnames++] = strdup(e->d_name);
    }
    if (dir) closedir(dir);
    qsort(names, (size_t)nnames, sizeof names[0], cmp_str);

    BgCUstream stream = NULL;
    CHECK(bg_cuda_check(&g.cu, g.cu.cuStreamCreate(&stream, BG_CU_STREAM_NON_BLOCKING), "cuStreamCreate", &d));
    const char *root = bg_default_data_root();
    BgDataset cora, mutag;
    memset(&cora, 0, sizeof cora);
    memset(&mutag, 0, sizeof mutag);
    char dpath[700];
    bool have_cora = false, have_mutag = false;
    if (!quick) {
        snprintf(dpath, sizeof dpath, "%s/cora", root);
        have_cora = bg_dataset_load(dpath, &cora, &d);
        snprintf(dpath, sizeof dpath, "%s/mutag", root);
        have_mutag = bg_dataset_load(dpath, &mutag, &d);
        if (!have_cora || !have_mutag) {
            printf("[note] datasets missing under %s: real-data comparisons skipped\n", root);
            dump(&d);
            bg_diag_free(&d);
            bg_diag_init(&d);
        }
    }
    bool extra_done = false, oom_done = false;
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
        bool ok = lowered && m && bg_gen_weights(lowered, 1, wpath, NULL, &d);
        unsigned char *cub = NULL;
        size_t len = 0;
        BgGpuModel gm;
        memset(&gm, 0, sizeof gm);
        BgJitInfo ji;
        ok = ok && bg_jit_cubin(m, g.arch, &g.nv, NULL, &cub, &len, &ji, &d) &&
             bg_gpu_model_load(&g, cub, len, names[i], &gm, &d);
        free(cub);
        CHECK(ok);
        CHECK(!ok || gm.pdl_kernels); /* its kernels wait for the one before (bgnn_pdl_enter) */
        if (!ok) {
            fprintf(stderr, "%s: cannot compile or load\n", names[i]);
            dump(&d);
            bg_diag_free(&d);
            bg_diag_init(&d);
            bg_gpu_model_free(&g, &gm);
            bg_arena_free(a);
            continue;
        }
        int nwave = 0; /* one-wave variants (plan.h BG_PLAN_WAVE_SUFFIX): every warp-a-row bspmm_mm of 256 threads a block has one */
        for (int l = 0; l < gm.plan->nlaunches; l++) {
            const BgPlanLaunch *L = &gm.plan->launches[l];
            const size_t kl = strlen(L->kernel);
            nwave += gm.wave_fn[l] != NULL;
            CHECK((gm.wave_fn[l] != NULL) == bg_plan_launch_wave(L));
            if (kl > 8 && !strcmp(L->kernel + kl - 8, "bspmm_mm") && L->block_size == 256 && L->threads_per_row == 32)
                CHECK(gm.wave_fn[l] && gm.wave_grid_max[l] >= g.nsm);
        }
        printf("%s: %d kernels (%d with a one-wave variant), %d buffers, nvrtc %.0f ms\n", names[i], gm.plan->nlaunches,
               nwave, gm.plan->nbufs, ji.nvrtc_ms);
        Case cs = {names[i], mpath, m, wpath, &gm};
        bool batched = gm.plan->uses_graph_ptr;
        BgDataset *ds = batched ? &mutag : &cora;
        if (!quick && (batched ? have_mutag : have_cora))
            run_case(&g, &cs, &ds->graph, &ds->features, batched ? "mutag" : "cora", batched, stream);
        if (!quick && have_cora && !strcmp(names[i], "gcn_bin.bgnn"))
            check_nonfinite_scale(&g, &cs, &cora.graph, &cora.features, stream);

        int64_t f = input_width(m);
        static const int64_t sizes[] = {1, 5, 33, 67, 1000, 6000};
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            int64_t n = sizes[k], hub = n == 6000 ? 5000 : 0;
            BgGraph sg;
            const bool diagonal = batched && n != 67; /* one batch with edges between its graphs */
            synth_graph(n, 4, hub, batched, diagonal, 1000 + (unsigned long long)k, &sg);
            BgTensor ft;
            bg_tensor_alloc(&ft, BG_DT_F32, 2, n, f);
            unsigned long long s = 77 + k;
            float *x = ft.data;
            for (int64_t q = 0; q < n * f; q++) x[q] = bg_test_randf(&s) * (q % 3 ? 1.0f : 4.0f);
            char what[64];
            snprintf(what, sizeof what, "synthetic N=%lld%s", (long long)n, hub ? " hub" : "");
            run_case(&g, &cs, &sg, &ft, what, diagonal, stream);
            if (k == 4 && !batched && !extra_done) {
                check_aot_and_arch(&g, &g.nv, &cs, &sg, &ft);
                extra_done = true;
            }
            if (k == 2 && !oom_done && !quick) { /* sanitizers report the failed cuMemAlloc */
                check_oom(&g, &cs, &sg, &ft);
                oom_done = true;
            }
            bg_tensor_free(&ft);
            bg_graph_free(&sg);
        }
        bg_gpu_model_free(&g, &gm);
        bg_arena_free(a);
        free(names[i]);
    }
    CHECK(nnames >= (only ? 1 : 5));
    printf("max f32 relative error over everything: %.3g\n", worst_f32);
    if (d.nerrors) dump(&d);
    if (stream) g.cu.cuStreamDestroy(stream);
    bg_dataset_free(&cora);
    bg_dataset_free(&mutag);
    bg_gpu_close(&g);
    bg_diag_free(&d);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return bg_test_finish();
}
