/* test_concurrency.c - two models run at once from two host threads, each with its own
 * context, session and CUDA stream, must give exactly the outputs each gives alone; and
 * repeated runs of one session are bit-identical.  Public API only for bgnn; the streams
 * are made with the CUDA driver (through bgnn's dlopen table, since the test has no CUDA
 * headers).  Exit 77 without a GPU or without the Cora dataset. */
#include <bgnn/bgnn.h>

#include "bgtest.h"
#include "gpu.h"

#include <pthread.h>

enum { RUNS = 25 };

typedef struct Job {
    const char *model;     /* examples/NAME.bgnn */
    char path[1024], weights[1024], data[1024];
    float *alone;          /* output 0 from a single-threaded run */
    size_t bytes;
    int mismatches, repeats_differ, failures;
} Job;

/* Compiles, binds and runs job->model; copies output 0 into *out (malloc'd). */
static int run_model(Job *j, void *stream, int runs, float **out, int *repeats_differ) {
    bgnn_context_options o;
    bgnn_context_options_init(&o);
    o.target = BGNN_TARGET_GPU;
    bgnn_context *c = NULL;
    bgnn_model *m = NULL;
    bgnn_session *s = NULL;
    float *first = NULL, *cur = NULL;
    int ok = 0;
    if (bgnn_context_create(&o, &c) != BGNN_OK) goto done;
    if (bgnn_model_compile_file(c, j->path, &m) != BGNN_OK) goto done;
    if (bgnn_session_create(m, &s) != BGNN_OK || bgnn_session_load_data(s, j->data) != BGNN_OK ||
        bgnn_session_set_weights(s, j->weights) != BGNN_OK || bgnn_session_prepare(s) != BGNN_OK)
        goto done;
    bgnn_tensor_info ti;
    memset(&ti, 0, sizeof ti);
    ti.struct_size = sizeof ti;
    if (bgnn_session_output_info(s, 0, &ti) != BGNN_OK) goto done;
    j->bytes = (size_t)ti.dim[0] * (size_t)(ti.rank == 2 ? ti.dim[1] : 1) * sizeof(float);
    first = malloc(j->bytes);
    cur = malloc(j->bytes);
    for (int r = 0; r < runs; r++) {
        if (bgnn_session_run(s, stream) != BGNN_OK) goto done;
        if (bgnn_session_read_output(s, 0, r ? cur : first, j->bytes) != BGNN_OK) goto done;
        if (r && memcmp(first, cur, j->bytes) != 0) (*repeats_differ)++;
    }
    ok = 1;
done:
    if (!ok && c) fprintf(stderr, "%s: %s\n", j->model, bgnn_context_last_error(c));
    free(cur);
    bgnn_session_destroy(s);
    bgnn_model_destroy(m);
    bgnn_context_destroy(c);
    if (ok) *out = first;
    else free(first);
    return ok;
}

static void *thread_main(void *arg) {
    Job *j = arg;
    BgCuda cu;
    BgDiagSink d;
    bg_diag_init(&d);
    BgCUcontext ctx = NULL;
    BgCUstream stream = NULL;
    BgCUdevice dev = 0;
    if (!bg_cuda_load(&cu, &d) || cu.cuDeviceGet(&dev, 0) || cu.cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cu.cuCtxSetCurrent(ctx) || cu.cuStreamCreate(&stream, 1 /* non-blocking */)) {
        j->failures++;
        bg_diag_free(&d);
        return NULL;
    }
    float *out = NULL;
    if (!run_model(j, (void *)stream, RUNS, &out, &j->repeats_differ)) j->failures++;
    else if (memcmp(out, j->alone, j->bytes) != 0) j->mismatches++;
    free(out);
    cu.cuStreamSynchronize(stream);
    cu.cuStreamDestroy(stream);
    cu.cuDevicePrimaryCtxRelease(dev);
    bg_cuda_unload(&cu);
    bg_diag_free(&d);
    return NULL;
}

int main(void) {
    const char *src = getenv("BGNN_SOURCE_DIR"), *root = getenv("BGNN_DATA_DIR");
    if (!src) bg_test_skip("BGNN_SOURCE_DIR not set (run through ctest)");
    BgCuda cu;
    BgDiagSink d;
    bg_diag_init(&d);
    if (!bg_cuda_load(&cu, &d)) bg_test_skip("no usable GPU");
    bg_cuda_unload(&cu);
    bg_diag_free(&d);
    Job jobs[2] = {{.model = "gcn_bin"}, {.model = "gcn_fp32"}};
    for (int i = 0; i < 2; i++) {
        snprintf(jobs[i].path, sizeof jobs[i].path, "%s/examples/%s.bgnn", src, jobs[i].model);
        snprintf(jobs[i].weights, sizeof jobs[i].weights, "%s/examples/weights/%s_cora.safetensors", src, jobs[i].model);
        snprintf(jobs[i].data, sizeof jobs[i].data, "%s/cora", root ? root : "../shared/data");
        FILE *f = fopen(jobs[i].weights, "rb");
        if (!f) bg_test_skip("trained weights missing");
        fclose(f);
        int differ = 0;
        if (!run_model(&jobs[i], NULL, 2, &jobs[i].alone, &differ)) bg_test_skip("Cora or the GPU path is unavailable");
    }
    pthread_t t[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, thread_main, &jobs[i]) == 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++) {
        printf("%s: concurrent run %s, %d runs %s\n", jobs[i].model,
               jobs[i].failures ? "FAILED" : jobs[i].mismatches ? "differs from the single-threaded run" : "identical to the single-threaded run",
               RUNS, jobs[i].repeats_differ ? "NOT bit-identical" : "bit-identical");
        CHECK_EQ_INT(jobs[i].failures, 0);
        CHECK_EQ_INT(jobs[i].mismatches, 0);
        CHECK_EQ_INT(jobs[i].repeats_differ, 0);
        free(jobs[i].alone);
    }
    return bg_test_finish();
}
