/* test_gpu_batches.c - batches of small graphs on the GPU against the CPU reference, through
 * the per-graph kernel (plan.h, "The per-graph kernel") and through the separate launches.
 *
 * Models: random models with graph-level outputs (gen_model.h bg_gen_batch_model: readouts by
 * sum / mean / max of node-level F values, each read by a linear FFF or BBF classifier, relu,
 * log_softmax and a bin; the node-level part mixes every op and fused form the generator
 * makes), random weights.  Batches (block-diagonal, edges inside graphs only): 300 graphs of
 * 0..9 nodes (empty graphs, 1-node graphs, graphs without edges); the same with one graph of
 * 5,001 nodes and a hub of degree 5,000 among them; one graph of 1 node; 70,000 graphs of 1 node
 * (more than the 65,535 blocks of one launch: blocks take several graphs in turn).  Then the
 * six MUTAG graph classifiers of examples/tu (GIN and GCN, fp32 / full / bin; random weights)
 * on the same batches and on MUTAG itself ($BGNN_DATA_DIR), and tests/gpu/warp_rows_awkward.bgnn
 * (row groups in the warp-rows form at awkward widths).
 * Per (model, batch): auto's choice is checked (the per-graph kernel up to
 * BG_PLAN_BLOCKS_MAX_NODES nodes a graph), then the per-graph kernel and the CUDA graph of
 * separate launches each run with temporaries filled with 0xff first, and every kept value and
 * output is compared with bg_interp_run's (gpu_run_compare.h: b1 bit for bit, f32 within
 * 1e-5 relative).  Exit 77 without a GPU.  BGNN_GPU_TEST_QUICK=1 (compute-sanitizer runs):
 * 4 random models, the two bin classifiers, no 70,000-graph batch; BGNN_BATCHES_MODELS=N: N random
 * models (default 16, at most 20). */
#include "gpu_run_compare.h"
#include "synth_graph.h"
#include "../unit/gen_model.h"

#include <sys/stat.h>
#include <unistd.h>

static void dump(BgDiagSink *d) {
    char *t = bg_diag_render(d);
    if (t && *t) fprintf(stderr, "%s", t);
    free(t);
}

static int64_t input_width(const BgModule *m) {
    for (int i = 0; i < m->ninsts; i++)
        if (m->insts[i].op == BG_OP_INPUT) return m->insts[i].type.dim[1];
    return 0;
}

/* n graphs of one node each, no edges. */
static void singletons(int64_t n, BgGraph *g) {
    BgCoo c = {n, n, 0, bg_xcalloc(1, 8), bg_xcalloc(1, 8), NULL};
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(bg_graph_from_coo(&c, "singletons", g, &d));
    bg_diag_free(&d);
    bg_coo_free(&c);
    g->graph_ptr = bg_xcalloc((size_t)n + 1, 8);
    for (int64_t k = 0; k <= n; k++) g->graph_ptr[k] = k;
    g->ngraphs = n;
}

/* One model on one batch: auto's choice, then each path against the interpreter. */
static void run_batch(BgGpu *g, BgGpuModel *gm, const BgModule *m, const char *weights, BgGraph *graph,
                      const char *what, BgCUstream stream) {
    BgDiagSink d;
    bg_diag_init(&d);
    const BgPlan *p = gm->plan;
    int64_t f = input_width(m), n = graph->n, largest = 0;
    for (int64_t k = 0; k < graph->ngraphs; k++)
        if (graph->graph_ptr[k + 1] - graph->graph_ptr[k] > largest) largest = graph->graph_ptr[k + 1] - graph->graph_ptr[k];
    BgTensor ft;
    bg_tensor_alloc(&ft, BG_DT_F32, 2, n, f);
    unsigned long long s = 99 + (unsigned long long)n;
    float *x = ft.data;
    for (int64_t q = 0; q < n * f; q++) x[q] = bg_test_randf(&s) * (q % 3 ? 1.0f : 4.0f);
    BgGpuRun run;
    BgBindings b;
    memset(&b, 0, sizeof b);
    BgInterpResult res;
    memset(&res, 0, sizeof res);
    BgTensor *all = NULL;
    bool bound = bg_gpu_run_bind(g, gm, m, graph, &ft, 0, weights, &run, NULL, &d);
    bool cpu = bg_bind(m, graph, &ft, weights, &b, &d) && bg_interp_run(m, &b, &res, &all, &d);
    CHECK(bound);
    CHECK(cpu);
    if (bound) CHECK(run.use_blocks == (largest <= BG_PLAN_BLOCKS_MAX_NODES));
    if (bound) CHECK(run.blocks_pending == run.use_blocks); /* auto measures on the first run */
    /* the per-graph kernel, the CUDA graph of launches, then auto's measured choice */
    static const char *const names[] = {"blocks", "graph", "auto"};
    const bool pending = bound && run.blocks_pending;
    for (int mi = 0; mi < 3 && bound && cpu; mi++) {
        for (int k = 0; k < p->nbufs; k++)
            if (p->bufs[k].role == BG_ROLE_TEMP && run.bytes[k] && !bg_plan_prep_output(p, k))
                CHECK(g->cu.cuMemsetD8_v2(run.ptr[k], 0xff, run.bytes[k]) == BG_CUDA_SUCCESS);
        /* the poison is written on the legacy stream, which the run's non-blocking stream does
         * not wait for: without this it may land after the run (seen under ctest -j3) */
        CHECK(g->cu.cuCtxSynchronize() == BG_CUDA_SUCCESS);
        run.use_blocks = mi == 0;
        run.blocks_pending = mi == 2 && pending;
        run.mode = mi == 2 ? BG_EXEC_AUTO : BG_EXEC_GRAPH;
        bool ok = bg_gpu_run_launch(g, gm, &run, stream, &d) &&
                  g->cu.cuStreamSynchronize(stream) == BG_CUDA_SUCCESS;
        CHECK(ok);
        if (mi < 2) CHECK(!ok || run.used == (mi == 0 ? BG_EXEC_BLOCKS : BG_EXEC_GRAPH));
        else CHECK(!ok || !pending || (run.used == BG_EXEC_BLOCKS) == (run.blocks_ms[0] <= run.blocks_ms[1]));
        int nvals = 0, nbad = 0;
        double maxerr = 0;
        if (ok) nbad = bg_gpu_compare_run(g, gm, m, &run, all, &res, p->model, what, &maxerr, &nvals);
        printf("  %-12s %-34s %-6s %2d values compared, %d differ, max f32 rel err %.2g\n", p->model, what, names[mi],
               nvals, nbad, maxerr);
    }
    if (d.nerrors) dump(&d);
    bg_interp_values_free(m, all);
    bg_interp_result_free(&res);
    bg_bindings_free(&b);
    if (bound) bg_gpu_run_free(g, &run);
    bg_tensor_free(&ft);
    bg_diag_free(&d);
}

/* The batches every model runs on (NULL: left out). */
typedef struct Batches {
    BgGraph *tiny, *mixed, *one, *many, *mutag;
} Batches;

/* One model (text of len bytes, or the file at name when text is NULL) with random weights
 * (seed) in wpath: compiled, loaded and run on every batch.  Returns whether it has the
 * per-graph kernel (it must). */
static bool test_model(BgGpu *g, const char *name, const char *text, size_t len, const char *wpath,
                       unsigned long long seed, const Batches *bs, BgCUstream stream) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgArena *a = bg_arena_new();
    BgCompileOpts lo = {0};
    static const char *const none[1] = {NULL};
    lo.passes = none;
    BgModule *lowered = text ? bg_compile_text(a, name, text, len, &lo, &d) : bg_compile_file(a, name, &lo, &d);
    BgModule *m = text ? bg_compile_text(a, name, text, len, NULL, &d) : bg_compile_file(a, name, NULL, &d);
    unsigned char *cub = NULL;
    size_t clen = 0;
    BgGpuModel gm;
    memset(&gm, 0, sizeof gm);
    BgJitInfo ji;
    bool ok = lowered && m && bg_gen_weights(lowered, seed, wpath, NULL, &d) &&
              bg_jit_cubin(m, g->arch, &g->nv, NULL, &cub, &clen, &ji, &d) &&
              bg_gpu_model_load(g, cub, clen, name, &gm, &d);
    free(cub);
    CHECK(ok);
    bool blocks = ok && gm.plan->blocks && gm.blocks_fn;
    if (!ok) {
        fprintf(stderr, "model %s:\n%s\n", name, text ? text : "");
        dump(&d);
    } else {
        CHECK(blocks);
        printf("%s: %d launches, nvrtc %.0f ms\n", gm.plan->model, gm.plan->nlaunches, ji.nvrtc_ms);
        run_batch(g, &gm, m, wpath, bs->tiny, "300 graphs of 0..9 nodes", stream);
        run_batch(g, &gm, m, wpath, bs->mixed, "tiny graphs + one of 5001 (hub)", stream);
        run_batch(g, &gm, m, wpath, bs->one, "one graph of 1 node", stream);
        if (bs->many) run_batch(g, &gm, m, wpath, bs->many, "70000 graphs of 1 node", stream);
        if (bs->mutag && input_width(m) == 7) run_batch(g, &gm, m, wpath, bs->mutag, "MUTAG", stream);
    }
    bg_gpu_model_free(g, &gm);
    bg_arena_free(a);
    unlink(wpath);
    bg_diag_free(&d);
    return blocks;
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
    const bool have_nvrtc = bg_nvrtc_load(&g.nv, &d);
    CHECK(have_nvrtc);
    const bool quick = getenv("BGNN_GPU_TEST_QUICK") != NULL;
    int nmodels = quick ? 4 : 16;
    if (getenv("BGNN_BATCHES_MODELS")) nmodels = atoi(getenv("BGNN_BATCHES_MODELS"));
    char tmpdir[512];
    snprintf(tmpdir, sizeof tmpdir, "%s/test_gpu_batches.%ld", bg_test_tmpdir(), (long)getpid());
    mkdir(tmpdir, 0755);
    BgCUstream stream = NULL;
    CHECK(bg_cuda_check(&g.cu, g.cu.cuStreamCreate(&stream, BG_CU_STREAM_NON_BLOCKING), "cuStreamCreate", &d));
    BgGraph tiny, mixed, one, many;
    synth_graph(1200, 4, 0, true, true, 5, &tiny);
    synth_graph(6200, 4, 5000, true, true, 6, &mixed);
    singletons(1, &one);
    singletons(quick ? 1 : 70000, &many);
    BgDataset mutag;
    memset(&mutag, 0, sizeof mutag);
    char dpath[700];
    snprintf(dpath, sizeof dpath, "%s/mutag", bg_default_data_root());
    const bool have_mutag = bg_dataset_load(dpath, &mutag, &d);
    if (!have_mutag) {
        printf("[note] MUTAG missing under %s: the real batch is left out\n", bg_default_data_root());
        bg_diag_free(&d);
        bg_diag_init(&d);
    }
    /* seeds 17, 33, 52, 55 make a fused product + aggregation (bspmm_mm), which the per-graph
     * kernel stages in shared memory (cg_blocks.c) */
    static const int seeds[] = {17, 33, 1, 2, 52, 55, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    if (nmodels > (int)(sizeof seeds / sizeof seeds[0])) nmodels = (int)(sizeof seeds / sizeof seeds[0]);
    Batches bs = {&tiny, &mixed, &one, quick ? NULL : &many, have_mutag ? &mutag.graph : NULL};
    int with_blocks = 0, ntested = 0;
    for (int si = 0; si < nmodels && have_nvrtc; si++) {
        char text[16384], wpath[600];
        size_t len = bg_gen_batch_model((unsigned long long)seeds[si], text, sizeof text);
        snprintf(wpath, sizeof wpath, "%s/w%d.safetensors", tmpdir, seeds[si]);
        with_blocks += test_model(&g, "batch.bgnn", text, len, wpath, (unsigned long long)seeds[si], &bs, stream);
        ntested++;
    }
    /* the graph classifiers of examples/tu (random weights), MUTAG's */
    static const char *const tu[] = {"gin_fp32", "gin_full", "gin_bin", "gcn_fp32", "gcn_full", "gcn_bin"};
    for (size_t k = quick ? 2 : 0; k < sizeof tu / sizeof tu[0] && have_nvrtc; k += quick ? 3 : 1) { /* quick: the bin ones */
        char path[700], wpath[600];
        snprintf(path, sizeof path, "%s/examples/tu/%s_mutag.bgnn",
                 getenv("BGNN_SOURCE_DIR") ? getenv("BGNN_SOURCE_DIR") : ".", tu[k]);
        snprintf(wpath, sizeof wpath, "%s/%s.safetensors", tmpdir, tu[k]);
        with_blocks += test_model(&g, path, NULL, 0, wpath, 1, &bs, stream);
        ntested++;
    }
    /* warp rows at awkward widths (tests/gpu/warp_rows_awkward.bgnn: rows of 200, 40 and 20
     * columns, a normalised adjacency, an aggregation into bits, a max readout; random weights) */
    if (have_nvrtc) {
        char path[700], wpath[600];
        snprintf(path, sizeof path, "%s/tests/gpu/warp_rows_awkward.bgnn",
                 getenv("BGNN_SOURCE_DIR") ? getenv("BGNN_SOURCE_DIR") : ".");
        snprintf(wpath, sizeof wpath, "%s/warp_rows_awkward.safetensors", tmpdir);
        with_blocks += test_model(&g, path, NULL, 0, wpath, 2, &bs, stream);
        ntested++;
    }
    printf("%d of %d models had the per-graph kernel\n", with_blocks, ntested);
    bg_dataset_free(&mutag);
    bg_graph_free(&tiny);
    bg_graph_free(&mixed);
    bg_graph_free(&one);
    bg_graph_free(&many);
    if (stream) g.cu.cuStreamDestroy(stream);
    rmdir(tmpdir);
    bg_gpu_close(&g);
    bg_diag_free(&d);
    return bg_test_finish();
}
