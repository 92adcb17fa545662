/* bgnn_time.c - times one bgnn model through the public C API (bench/models_bench.py runs it).
 *
 *   bgnn_time MODEL.bgnn|MODEL.cubin (--data DIR | --csr FILE) [--features-random F] [--seed S]
 *             [--weights W.safetensors | --random-weights SEED] [--repeat N] [--target gpu|cpu]
 *   bgnn_time --gen-rmat FILE [--nodes N] [--edges M] [--seed S]
 *
 * Timing mode: compiles MODEL (JIT, through the disk cache; a .cubin from `bgnnc MODEL.bgnn -o
 * MODEL.cubin`, e.g. with other --passes, is loaded as it is), binds the graph (a data directory,
 * or a CSR file written by --gen-rmat / models_bench.py), the features (the directory's
 * features.npy, or deterministic random values in [-1, 1) with --features-random F), the
 * weights (trained, or bgnn_model_write_random_weights), prepares, runs once, reads the test
 * accuracy when the directory has labels, then bgnn_session_time(repeat): one warm-up run and
 * `repeat` runs between CUDA events, the median.  Device memory is the drop of the driver's
 * free-memory count (cuMemGetInfo through a dlopen'ed libcuda, 2 MiB granularity) from before
 * prepare to after the timed runs: the graph, features, weights and every intermediate buffer
 * of the session (not the CUDA context or the loaded module).
 * Prints one line: RESULT {json}.
 *
 * CSR file: int64 n, int64 nnz, int64 rowptr[n + 1], int32 col[nnz] (little endian).
 * --gen-rmat writes the Reddit-sized R-MAT graph of bench/rmat.h (seed 42, n 232965,
 * stream 90.5M edges -> ~114.6M directed edges, symmetric, no self loops, rows sorted,
 * duplicates merged), built by rmat_graph (bench/rmat.c) on all cores.
 *
 * Build (bench/run_models.sh): cc -O2 -std=c11 -fopenmp -Iinclude -I<the product
 * header directories, bench/product_lib.sh> bench/bgnn_time.c bench/rmat.c BUILD/libbgnn.a
 * -ldl -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#include <bgnn/bgnn.h>

#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rmat.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void die(const char *what, bgnn_context *c, bgnn_status s) {
    fprintf(stderr, "bgnn_time: %s: %s\n%s\n", what, bgnn_status_string(s),
            c ? bgnn_context_last_error(c) : "");
    printf("RESULT {\"error\": \"%s: %s\"}\n", what, bgnn_status_string(s));
    exit(1);
}
#define CK(call, what)                                                                         \
    do {                                                                                       \
        bgnn_status s_ = (call);                                                               \
        if (s_ != BGNN_OK) die(what, ctx, s_);                                                 \
    } while (0)

/* ---- device memory through libcuda (dlopen; the API stays untouched) ------------------ */
typedef int (*pfn_memgetinfo)(size_t *, size_t *);
typedef int (*pfn_devget)(int *, int);
typedef int (*pfn_retain)(void **, int);
typedef int (*pfn_setcur)(void *);
static pfn_memgetinfo g_memgetinfo;
static void mem_init(int device) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    g_memgetinfo = (pfn_memgetinfo)dlsym(h, "cuMemGetInfo_v2");
    /* make the device's primary context (the one bgnn uses) current on this thread */
    pfn_devget devget = (pfn_devget)dlsym(h, "cuDeviceGet");
    pfn_retain retain = (pfn_retain)dlsym(h, "cuDevicePrimaryCtxRetain");
    pfn_setcur setcur = (pfn_setcur)dlsym(h, "cuCtxSetCurrent");
    int dev = 0;
    void *ctx = NULL;
    if (devget && retain && setcur && devget(&dev, device) == 0 && retain(&ctx, dev) == 0)
        setcur(ctx);
}
/* Free device memory in bytes, or -1 (the primary context is current on this thread). */
static long long mem_free(void) {
    size_t f = 0, t = 0;
    if (!g_memgetinfo || g_memgetinfo(&f, &t) != 0) return -1;
    return (long long)f;
}

/* ---- deterministic random features --------------------------------------------------- */
static float *random_features(int64_t n, int64_t f, uint64_t seed) {
    float *x = malloc(sizeof(float) * (size_t)(n * f));
    if (!x) return NULL;
    for (int64_t i = 0; i < n * f; i++) {
        uint64_t h = rmat_mix64(seed * 0x9E3779B97F4A7C15ull + (uint64_t)i);
        x[i] = (float)((double)(h >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
    return x;
}

/* ---- CSR files --------------------------------------------------------------------------- */
static int read_csr(const char *path, int64_t *n, int64_t **rowptr, int32_t **col) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return 0; }
    int64_t hdr[2];
    if (fread(hdr, sizeof hdr, 1, f) != 1 || hdr[0] <= 0 || hdr[1] < 0) { fclose(f); return 0; }
    *n = hdr[0];
    *rowptr = malloc(sizeof(int64_t) * (size_t)(hdr[0] + 1));
    *col = malloc(sizeof(int32_t) * (size_t)(hdr[1] ? hdr[1] : 1));
    int ok = *rowptr && *col &&
             fread(*rowptr, sizeof(int64_t), (size_t)(hdr[0] + 1), f) == (size_t)(hdr[0] + 1) &&
             fread(*col, sizeof(int32_t), (size_t)hdr[1], f) == (size_t)hdr[1] &&
             (*rowptr)[hdr[0]] == hdr[1];
    fclose(f);
    return ok;
}

/* ---- R-MAT generation (rmat.c: all cores) ------------------------------------------- */
static int gen_rmat(const char *path, int64_t n, int64_t M, uint64_t seed) {
    double t0 = now_ms();
    BgDiagSink d;
    bg_diag_init(&d);
    BgGraph g;
    if (!rmat_graph(n, M, seed, &g, &d)) {
        char *m = bg_diag_render(&d);
        fprintf(stderr, "bgnn_time: %s", m ? m : "R-MAT graph failed\n");
        free(m);
        bg_diag_free(&d);
        return 0;
    }
    bg_diag_free(&d);
    double gen_ms = now_ms() - t0;
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); bg_graph_free(&g); return 0; }
    int64_t hdr[2] = {n, g.nnz};
    int ok = fwrite(hdr, sizeof hdr, 1, f) == 1 &&
             fwrite(g.rowptr, sizeof(int64_t), (size_t)(n + 1), f) == (size_t)(n + 1) &&
             fwrite(g.col, sizeof(int32_t), (size_t)g.nnz, f) == (size_t)g.nnz;
    ok = (fclose(f) == 0) && ok;
    int64_t maxd = 0;
    for (int64_t r = 0; r < n; r++)
        if (g.rowptr[r + 1] - g.rowptr[r] > maxd) maxd = g.rowptr[r + 1] - g.rowptr[r];
    printf("RESULT {\"nodes\": %lld, \"edges\": %lld, \"stream\": %lld, \"max_degree\": %lld, "
           "\"threads\": %d, \"gen_ms\": %.1f}\n",
           (long long)n, (long long)g.nnz, (long long)M, (long long)maxd, omp_get_max_threads(), gen_ms);
    bg_graph_free(&g);
    return ok;
}

static void usage(void) {
    fprintf(stderr,
            "usage: bgnn_time MODEL.bgnn (--data DIR | --csr FILE) [--features-random F] [--seed S]\n"
            "                 [--weights W | --random-weights SEED] [--repeat N] [--target gpu|cpu]\n"
            "       bgnn_time --gen-rmat FILE [--nodes N] [--edges M] [--seed S]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *model = NULL, *data = NULL, *csr = NULL, *weights = NULL, *gen = NULL;
    const char *target = "gpu";
    long long feat_random = 0, rand_w = -1, repeat = 1000, nodes = 232965, edges = 90500000;
    unsigned long long seed = 42;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--data") && more) data = argv[++i];
        else if (!strcmp(a, "--csr") && more) csr = argv[++i];
        else if (!strcmp(a, "--weights") && more) weights = argv[++i];
        else if (!strcmp(a, "--random-weights") && more) rand_w = atoll(argv[++i]);
        else if (!strcmp(a, "--features-random") && more) feat_random = atoll(argv[++i]);
        else if (!strcmp(a, "--repeat") && more) repeat = atoll(argv[++i]);
        else if (!strcmp(a, "--target") && more) target = argv[++i];
        else if (!strcmp(a, "--seed") && more) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--gen-rmat") && more) gen = argv[++i];
        else if (!strcmp(a, "--nodes") && more) nodes = atoll(argv[++i]);
        else if (!strcmp(a, "--edges") && more) edges = atoll(argv[++i]);
        else if (a[0] != '-' && !model) model = a;
        else usage();
    }
    if (gen) return gen_rmat(gen, nodes, edges, seed) ? 0 : 1;
    if (!model || (!data && !csr) || (!weights && rand_w < 0) || repeat < 1) usage();

    bgnn_context *ctx = NULL;
    bgnn_context_options o;
    bgnn_context_options_init(&o);
    o.target = !strcmp(target, "cpu") ? BGNN_TARGET_CPU : BGNN_TARGET_GPU;
    CK(bgnn_context_create(&o, &ctx), "context");
    int gpu = bgnn_context_target(ctx) == BGNN_TARGET_GPU;
    if (gpu) mem_init(o.device);

    double t0 = now_ms();
    bgnn_model *m = NULL;
    size_t ml = strlen(model);
    if (ml > 6 && !strcmp(model + ml - 6, ".cubin")) CK(bgnn_model_load_cubin(ctx, model, &m), "load cubin");
    else CK(bgnn_model_compile_file(ctx, model, &m), "compile");
    bgnn_model_info mi = {.struct_size = sizeof mi};
    CK(bgnn_model_get_info(m, &mi), "model info");
    double compile_ms = now_ms() - t0;

    char wpath[4096];
    if (!weights) {
        snprintf(wpath, sizeof wpath, "%s/bgnn_time_w_%d.safetensors",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
        CK(bgnn_model_write_random_weights(m, (uint64_t)rand_w, wpath), "random weights");
        weights = wpath;
    }

    bgnn_session *s = NULL;
    CK(bgnn_session_create(m, &s), "session");
    int64_t n = 0;
    if (data) {
        CK(bgnn_session_load_data(s, data), "load data");
    } else {
        int64_t *rowptr = NULL;
        int32_t *col = NULL;
        if (!read_csr(csr, &n, &rowptr, &col)) {
            fprintf(stderr, "bgnn_time: cannot read CSR file %s\n", csr);
            printf("RESULT {\"error\": \"csr file\"}\n");
            return 1;
        }
        CK(bgnn_session_set_graph_csr(s, n, rowptr, col, 0, NULL), "set graph");
        free(rowptr);
        free(col);
    }
    if (feat_random > 0) {
        if (!n) { /* nodes of a data directory: from graph.mtx's header */
            char p[4096];
            snprintf(p, sizeof p, "%s/graph.mtx", data);
            FILE *f = fopen(p, "r");
            char line[512];
            while (f && fgets(line, sizeof line, f))
                if (line[0] != '%') { n = atoll(line); break; }
            if (f) fclose(f);
        }
        float *x = random_features(n, feat_random, seed);
        if (!x) die("features: out of host memory", ctx, BGNN_ERR_NOMEM);
        CK(bgnn_session_set_features(s, x, n, feat_random), "set features");
        free(x);
    }
    CK(bgnn_session_set_weights(s, weights), "set weights");

    long long free0 = gpu ? mem_free() : -1;
    t0 = now_ms();
    CK(bgnn_session_prepare(s), "prepare");
    double prepare_ms = now_ms() - t0;
    long long free1 = gpu ? mem_free() : -1;
    CK(bgnn_session_run(s, NULL), "run");
    double acc = -1;
    if (data) {
        bgnn_status st = bgnn_session_accuracy(s, 0, "test", &acc);
        if (st != BGNN_OK) acc = -1;
    }
    double med = 0;
    t0 = now_ms();
    CK(bgnn_session_time(s, (int)repeat, NULL, &med), "time");
    double time_wall_ms = now_ms() - t0;
    long long free2 = gpu ? mem_free() : -1;
    long long lowest = free1 < free2 ? free1 : free2;
    long long mem = (free0 >= 0 && lowest >= 0) ? free0 - lowest : -1;
    if (weights == wpath) remove(wpath);

    printf("RESULT {\"model\": \"%s\", \"device\": \"%s\", \"test_acc\": %.4f, \"median_ms\": %.6f, "
           "\"repeat\": %lld, \"mem_bytes\": %lld, \"mem_after_prepare_bytes\": %lld, "
           "\"compile_ms\": %.1f, \"cache_hit\": %d, \"nkernels\": %d, \"prepare_ms\": %.1f, "
           "\"time_wall_ms\": %.1f}\n",
           mi.name, bgnn_context_device_name(ctx), acc, med, repeat, mem,
           (free0 >= 0 && free1 >= 0) ? free0 - free1 : -1LL, compile_ms, mi.cache_hit,
           mi.nkernels, prepare_ms, time_wall_ms);
    bgnn_session_destroy(s);
    bgnn_model_destroy(m);
    bgnn_context_destroy(ctx);
    return 0;
}
