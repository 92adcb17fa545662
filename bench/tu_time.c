/* tu_time.c - graph-classification throughput of one bgnn model over a TU dataset, batch after
 * batch, through the public C API (bench/tu_bench.py runs it; bench/run_tu_bench.sh builds it).
 *
 *   tu_time MODEL.bgnn --data DIR (--weights W.safetensors | --random-weights SEED)
 *           [--batch B] [--graphs FROM:TO] [--repeat R] [--warmup W] [--latency-repeat L]
 *           [--max-batches K] [--logits FILE] [--target gpu|cpu]
 *
 * DIR is a TU data directory (graph.mtx: the block-diagonal graph, graph_ptr.npy,
 * features.npy, graph_labels.npy).  Graphs FROM..TO-1 (default all) are cut into batches of B
 * consecutive graphs (B = 0: one batch of them all; the last batch may be short).  Every batch
 * gets its own session, prepared before any timing: its graph (bgnn_session_set_graph_csr: the
 * batch's rows renumbered from 0, its graph_ptr) and, on the GPU, its features in place
 * (bgnn_session_set_features_device into one device buffer holding every batch's rows, each
 * slice 256-byte aligned, uploaded once).  Rebinding one session per batch would free and
 * reallocate every device buffer and upload graph and weights each time: that measures binding,
 * not inference.  The batch kernel is whatever $BGNN_BATCH_KERNEL (auto|layers|graphs) makes the
 * runtime choose at binding; it is echoed in the result.
 *
 * Timing (GPU): one untimed sweep (each session's first run: the runtime's exec-mode choice and
 * CUDA-graph capture), W more untimed sweeps, then R timed sweeps.  A sweep enqueues
 * bgnn_session_run of every session, in order, on one stream between two CUDA events, so it
 * includes the host's enqueue cost between batches but no host-device copy and no binding;
 * graphs/s = graphs / median sweep time.  --max-batches K sweeps the first K batches only
 * (graphs/s over those).  Latency: bgnn_session_time(L) (one warm-up, L runs between CUDA events,
 * the median) of the batch with the median node count.  CPU: the same with the wall clock.
 * Memory: the drop of the driver's free memory (cuMemGetInfo, 2 MiB granularity) from before the
 * feature upload to after the timed sweeps, over all sessions; bench/tu_bench.py adds the exact
 * plan figure of the largest batch's session from `bgnnc --stats` (its sizes are printed here).
 * Accuracy: argmax of each session's output 0 against graph_labels.npy; --logits writes every
 * graph's output rows (float32, [graphs, C], raw) for comparing batch paths bit for bit.
 * Prints one line: RESULT {json}.
 *
 * Build (bench/run_tu_bench.sh): cc -O2 -std=c11 -Iinclude -I<product header dirs,
 * bench/product_lib.sh> bench/tu_time.c BUILD/libbgnn.a -ldl -lm -lpthread [-lz] */
#define _POSIX_C_SOURCE 200809L
#include <bgnn/bgnn.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loaders.h"

static bgnn_context *ctx;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "tu_time: %s: %s\n", what, detail ? detail : "");
    printf("RESULT {\"error\": \"%s\"}\n", what);
    exit(1);
}
#define CK(call, what)                                                                         \
    do {                                                                                       \
        bgnn_status s_ = (call);                                                               \
        if (s_ != BGNN_OK) {                                                                   \
            fprintf(stderr, "%s\n", ctx ? bgnn_context_last_error(ctx) : "");                  \
            fail(what, bgnn_status_string(s_));                                                \
        }                                                                                      \
    } while (0)

/* ---- the CUDA driver (dlopen: bgnn's API stays untouched) ----------------------------- */
static struct {
    int (*memgetinfo)(size_t *, size_t *);
    int (*memalloc)(uint64_t *, size_t);
    int (*memfree)(uint64_t);
    int (*htod)(uint64_t, const void *, size_t);
    int (*stream_create)(void **, unsigned);
    int (*stream_sync)(void *);
    int (*event_create)(void **, unsigned);
    int (*event_record)(void *, void *);
    int (*event_sync)(void *);
    int (*event_elapsed)(float *, void *, void *);
} cu;
static int cuda_init(int device) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) return 0;
    int (*devget)(int *, int) = (int (*)(int *, int))dlsym(h, "cuDeviceGet");
    int (*retain)(void **, int) = (int (*)(void **, int))dlsym(h, "cuDevicePrimaryCtxRetain");
    int (*setcur)(void *) = (int (*)(void *))dlsym(h, "cuCtxSetCurrent");
#define SYM(f, name) *(void **)&cu.f = dlsym(h, name)
    SYM(memgetinfo, "cuMemGetInfo_v2");
    SYM(memalloc, "cuMemAlloc_v2");
    SYM(memfree, "cuMemFree_v2");
    SYM(htod, "cuMemcpyHtoD_v2");
    SYM(stream_create, "cuStreamCreate");
    SYM(stream_sync, "cuStreamSynchronize");
    SYM(event_create, "cuEventCreate");
    SYM(event_record, "cuEventRecord");
    SYM(event_sync, "cuEventSynchronize");
    SYM(event_elapsed, "cuEventElapsedTime");
#undef SYM
    int dev = 0;
    void *pctx = NULL; /* the device's primary context: the one bgnn uses */
    return devget && retain && setcur && cu.memgetinfo && cu.memalloc && cu.htod && cu.stream_create &&
           cu.event_create && cu.event_record && cu.event_sync && cu.event_elapsed && cu.stream_sync &&
           devget(&dev, device) == 0 && retain(&pctx, dev) == 0 && setcur(pctx) == 0;
}
static long long mem_free(void) {
    size_t f = 0, t = 0;
    return cu.memgetinfo && cu.memgetinfo(&f, &t) == 0 ? (long long)f : -1;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage(void) {
    fprintf(stderr, "usage: tu_time MODEL.bgnn --data DIR (--weights W | --random-weights SEED) [--batch B]\n"
                    "               [--graphs FROM:TO] [--repeat R] [--warmup W] [--latency-repeat L]\n"
                    "               [--max-batches K] [--logits FILE] [--target gpu|cpu]\n");
    exit(2);
}

typedef struct Batch {
    int64_t g0, g1, n0, n, nnz; /* graphs g0..g1-1, nodes n0..n0+n-1, nnz graph entries */
    bgnn_session *s;
} Batch;

int main(int argc, char **argv) {
    const char *model = NULL, *data = NULL, *weights = NULL, *logits = NULL, *target = "gpu";
    long long batch = 1, from = 0, to = -1, repeat = 20, warmup = 2, lat_repeat = 200, max_batches = 0,
              rand_w = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--data") && more) data = argv[++i];
        else if (!strcmp(a, "--weights") && more) weights = argv[++i];
        else if (!strcmp(a, "--random-weights") && more) rand_w = atoll(argv[++i]);
        else if (!strcmp(a, "--batch") && more) batch = atoll(argv[++i]);
        else if (!strcmp(a, "--graphs") && more) {
            if (sscanf(argv[++i], "%lld:%lld", &from, &to) != 2) usage();
        } else if (!strcmp(a, "--repeat") && more) repeat = atoll(argv[++i]);
        else if (!strcmp(a, "--warmup") && more) warmup = atoll(argv[++i]);
        else if (!strcmp(a, "--latency-repeat") && more) lat_repeat = atoll(argv[++i]);
        else if (!strcmp(a, "--max-batches") && more) max_batches = atoll(argv[++i]);
        else if (!strcmp(a, "--logits") && more) logits = argv[++i];
        else if (!strcmp(a, "--target") && more) target = argv[++i];
        else if (a[0] != '-' && !model) model = a;
        else usage();
    }
    if (!model || !data || (!weights && rand_w < 0) || repeat < 1 || batch < 0 || warmup < 0) usage();

    /* the dataset (the product's loader, linked from libbgnn.a) */
    double t0 = now_ms();
    BgDiagSink d;
    bg_diag_init(&d);
    BgDataset ds;
    if (!bg_dataset_load(data, &ds, &d)) fail("load data", bg_diag_render(&d));
    bg_diag_free(&d);
    const BgGraph *G = &ds.graph;
    if (!G->graph_ptr || !ds.features.data) fail("load data", "no graph_ptr.npy or features.npy");
    int64_t F = ds.features.dim[1];
    if (to < 0) to = G->ngraphs;
    if (from < 0 || to > G->ngraphs || from >= to) fail("--graphs", "range outside the dataset");
    double load_ms = now_ms() - t0;

    bgnn_context_options o;
    bgnn_context_options_init(&o);
    o.target = !strcmp(target, "cpu") ? BGNN_TARGET_CPU : BGNN_TARGET_GPU;
    CK(bgnn_context_create(&o, &ctx), "context");
    int gpu = bgnn_context_target(ctx) == BGNN_TARGET_GPU;
    if (gpu && !cuda_init(o.device)) fail("libcuda", "cannot load the driver entry points");
    t0 = now_ms();
    bgnn_model *m = NULL;
    CK(bgnn_model_compile_file(ctx, model, &m), "compile");
    bgnn_model_info mi = {.struct_size = sizeof mi};
    CK(bgnn_model_get_info(m, &mi), "model info");
    double compile_ms = now_ms() - t0;
    char wpath[4096];
    if (!weights) {
        snprintf(wpath, sizeof wpath, "%s/tu_time_w_%d.safetensors", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                 (int)getpid());
        CK(bgnn_model_write_random_weights(m, (uint64_t)rand_w, wpath), "random weights");
        weights = wpath;
    }

    /* batches */
    int64_t ng = to - from, B = batch ? batch : ng;
    int64_t nb = (ng + B - 1) / B;
    if (max_batches > 0 && nb > max_batches) nb = max_batches;
    Batch *bs = calloc((size_t)nb, sizeof *bs);
    size_t *foff = calloc((size_t)nb + 1, sizeof *foff); /* byte offsets of the feature slices */
    if (!bs || !foff) fail("out of host memory", NULL);
    int64_t big = 0, ngt = 0;
    for (int64_t b = 0; b < nb; b++) {
        Batch *x = &bs[b];
        x->g0 = from + b * B;
        x->g1 = x->g0 + B < to ? x->g0 + B : to;
        x->n0 = G->graph_ptr[x->g0];
        x->n = G->graph_ptr[x->g1] - x->n0;
        x->nnz = G->rowptr[x->n0 + x->n] - G->rowptr[x->n0];
        if (x->n > bs[big].n) big = b;
        ngt += x->g1 - x->g0;
        foff[b + 1] = foff[b] + (((size_t)x->n * (size_t)F * sizeof(float) + 255) & ~(size_t)255);
    }

    /* features on the device, once (GPU): every batch's rows at an aligned offset */
    long long free0 = gpu ? mem_free() : -1;
    uint64_t fdev = 0;
    if (gpu) {
        char *stage = calloc(1, foff[nb] ? foff[nb] : 1);
        if (!stage) fail("out of host memory", NULL);
        for (int64_t b = 0; b < nb; b++)
            memcpy(stage + foff[b], (const float *)ds.features.data + bs[b].n0 * F,
                   (size_t)bs[b].n * (size_t)F * sizeof(float));
        if (cu.memalloc(&fdev, foff[nb] ? foff[nb] : 256) || cu.htod(fdev, stage, foff[nb]))
            fail("features", "cuMemAlloc / cuMemcpyHtoD failed");
        free(stage);
    }

    /* one prepared session per batch */
    t0 = now_ms();
    int64_t *rowptr = malloc(sizeof(int64_t) * (size_t)(bs[big].n + 1));
    int64_t *gptr = malloc(sizeof(int64_t) * (size_t)(B + 1));
    if (!rowptr || !gptr) fail("out of host memory", NULL);
    for (int64_t b = 0; b < nb; b++) {
        Batch *x = &bs[b];
        int64_t e0 = G->rowptr[x->n0];
        for (int64_t r = 0; r <= x->n; r++) rowptr[r] = G->rowptr[x->n0 + r] - e0;
        int32_t *col = malloc(sizeof(int32_t) * (size_t)(x->nnz ? x->nnz : 1));
        if (!col) fail("out of host memory", NULL);
        for (int64_t e = 0; e < x->nnz; e++) col[e] = G->col[e0 + e] - (int32_t)x->n0;
        for (int64_t g = x->g0; g <= x->g1; g++) gptr[g - x->g0] = G->graph_ptr[g] - x->n0;
        CK(bgnn_session_create(m, &x->s), "session");
        CK(bgnn_session_set_graph_csr(x->s, x->n, rowptr, col, x->g1 - x->g0, gptr), "set graph");
        free(col);
        if (gpu)
            CK(bgnn_session_set_features_device(x->s, fdev + foff[b], x->n, F), "set features");
        else
            CK(bgnn_session_set_features(x->s, (const float *)ds.features.data + x->n0 * F, x->n, F), "set features");
        CK(bgnn_session_set_weights(x->s, weights), "set weights");
        CK(bgnn_session_prepare(x->s), "prepare");
    }
    free(rowptr);
    free(gptr);
    double prepare_ms = now_ms() - t0;

    /* sweeps */
    void *stream = NULL, *ev[2] = {NULL, NULL};
    if (gpu && (cu.stream_create(&stream, 0) || cu.event_create(&ev[0], 0) || cu.event_create(&ev[1], 0)))
        fail("stream / events", "cuStreamCreate / cuEventCreate failed");
    double first_ms = 0, *t = calloc((size_t)repeat, sizeof(double));
    if (!t) fail("out of host memory", NULL);
    for (long long k = -1 - warmup; k < repeat; k++) {
        double h0 = now_ms();
        if (gpu) cu.event_record(ev[0], stream);
        for (int64_t b = 0; b < nb; b++) CK(bgnn_session_run(bs[b].s, stream), "run");
        if (gpu) {
            cu.event_record(ev[1], stream);
            if (cu.event_sync(ev[1])) fail("run", "cuEventSynchronize failed");
        }
        float ms = 0;
        if (gpu) cu.event_elapsed(&ms, ev[0], ev[1]);
        double wall = now_ms() - h0;
        if (k == -1 - warmup) first_ms = wall;
        if (k >= 0) t[k] = gpu ? ms : wall;
    }
    qsort(t, (size_t)repeat, sizeof(double), cmp_double);
    double sweep_ms = t[repeat / 2], sweep_min_ms = t[0];
    long long free1 = gpu ? mem_free() : -1;

    /* accuracy and logits */
    int64_t correct = 0, C = 0;
    float *out = NULL;
    FILE *lf = logits ? fopen(logits, "wb") : NULL;
    if (logits && !lf) fail("--logits", logits);
    for (int64_t b = 0; b < nb; b++) {
        bgnn_tensor_info ti = {.struct_size = sizeof ti};
        CK(bgnn_session_output_info(bs[b].s, 0, &ti), "output info");
        if (ti.dtype != BGNN_F32 || ti.rank != 2 || ti.dim[0] != bs[b].g1 - bs[b].g0)
            fail("output", "output 0 is not f32[graphs, C]");
        C = ti.dim[1];
        out = realloc(out, ti.bytes);
        if (!out) fail("out of host memory", NULL);
        CK(bgnn_session_read_output(bs[b].s, 0, out, ti.bytes), "read output");
        for (int64_t g = 0; g < ti.dim[0]; g++) {
            int64_t am = 0;
            for (int64_t c = 1; c < C; c++)
                if (out[g * C + c] > out[g * C + am]) am = c;
            correct += ds.graph_labels && am == ds.graph_labels[bs[b].g0 + g];
        }
        if (lf && fwrite(out, 1, ti.bytes, lf) != ti.bytes) fail("--logits", "write failed");
    }
    if (lf && fclose(lf)) fail("--logits", "close failed");
    free(out);

    /* latency of the batch with the median node count */
    int64_t *order = malloc(sizeof(int64_t) * (size_t)nb);
    for (int64_t b = 0; b < nb; b++) order[b] = b;
    for (int64_t i = 1; i < nb; i++) /* insertion sort by node count (stable, small nb typical) */
        for (int64_t j = i; j > 0 && bs[order[j - 1]].n > bs[order[j]].n; j--) {
            int64_t tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    Batch *lb = &bs[order[nb / 2]];
    free(order);
    double lat_ms = -1;
    if (lat_repeat > 0) CK(bgnn_session_time(lb->s, (int)lat_repeat, stream, &lat_ms), "latency");

    long long mem = (free0 >= 0 && free1 >= 0) ? free0 - free1 : -1;
    const char *bk = getenv("BGNN_BATCH_KERNEL");
    printf("RESULT {\"model\": \"%s\", \"device\": \"%s\", \"batch_kernel\": \"%s\", \"batch\": %lld, "
           "\"graphs\": %lld, \"batches\": %lld, \"classes\": %lld, \"accuracy\": %.4f, "
           "\"sweep_ms\": %.6f, \"sweep_min_ms\": %.6f, \"graphs_per_s\": %.1f, \"repeat\": %lld, "
           "\"first_sweep_ms\": %.3f, \"latency_ms\": %.6f, \"latency_batch\": {\"graphs\": %lld, \"nodes\": %lld, "
           "\"edges\": %lld}, \"largest_batch\": {\"graphs\": %lld, \"nodes\": %lld, \"edges\": %lld}, "
           "\"mem_all_sessions_bytes\": %lld, \"features_device_bytes\": %llu, \"compile_ms\": %.1f, "
           "\"cache_hit\": %d, \"nkernels\": %d, \"load_ms\": %.1f, \"prepare_ms\": %.1f}\n",
           mi.name, bgnn_context_device_name(ctx), bk ? bk : "", (long long)batch, (long long)ngt,
           (long long)nb, (long long)C, ds.graph_labels ? 100.0 * (double)correct / (double)ngt : -1.0, sweep_ms,
           sweep_min_ms, 1e3 * (double)ngt / sweep_ms, repeat, first_ms, lat_ms, (long long)(lb->g1 - lb->g0),
           (long long)lb->n, (long long)lb->nnz, (long long)(bs[big].g1 - bs[big].g0), (long long)bs[big].n,
           (long long)bs[big].nnz, mem, (unsigned long long)(gpu ? foff[nb] : 0), compile_ms, mi.cache_hit, mi.nkernels,
           load_ms, prepare_ms);
    for (int64_t b = 0; b < nb; b++) bgnn_session_destroy(bs[b].s);
    if (fdev) cu.memfree(fdev);
    if (weights == wpath) remove(wpath);
    free(bs);
    free(foff);
    free(t);
    bg_dataset_free(&ds);
    bgnn_model_destroy(m);
    bgnn_context_destroy(ctx);
    return 0;
}
