/* test_nvrtc.c - NVRTC through dlopen (no GPU needed): a kernel including a header passed
 * by name compiles to an ELF cubin for sm_80 and sm_90; a broken kernel gives
 * E_NVRTC_COMPILE with the log, and $BGNN_DUMP_DIR receives the numbered source and the
 * log; sm_10 gives E_ARCH.  Skipped (77) when libnvrtc cannot be loaded. */
#include "bgtest.h"
#include "gpu.h"

#include <sys/stat.h>
#include <unistd.h>

static const char *hdr_text =
    "#pragma once\n"
    "__device__ __forceinline__ float bg_twice(float x) { return x * 2.0f; }\n";

static const char *good_src =
    "#include \"bg_test.cuh\"\n"
    "extern \"C\" __global__ void scale(float *y, const float *x, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = bg_twice(x[i]) + 1.0f;\n"
    "}\n";

static const char *bad_src =
    "extern \"C\" __global__ void broken(float *y) {\n"
    "    y[0] = undeclared_thing;\n"
    "}\n";

static int has_code(const BgDiagSink *d, int code) {
    for (int i = 0; i < d->n; i++)
        if (d->items[i].code == code) return 1;
    return 0;
}

static const char *msg_of(const BgDiagSink *d, int code) {
    for (int i = 0; i < d->n; i++)
        if (d->items[i].code == code) return d->items[i].msg;
    return NULL;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    size_t got = fread(p, 1, (size_t)n, f);
    p[got] = '\0';
    fclose(f);
    return p;
}

int main(void) {
    BgNvrtc nv;
    BgDiagSink d;
    bg_diag_init(&d);
    if (!bg_nvrtc_load(&nv, &d)) {
        CHECK(has_code(&d, BG_E_NVRTC));
        bg_diag_free(&d);
        bg_test_skip("libnvrtc cannot be loaded");
    }
    printf("NVRTC %d.%d from %s, %d archs\n", nv.major, nv.minor, nv.lib_name, nv.narchs);
    CHECK(nv.major >= 12);
    int maj = 0, mnr = 0;
    CHECK(bg_nvrtc_version(&maj, &mnr));
    CHECK_EQ_INT(maj, nv.major);
    CHECK_EQ_INT(mnr, nv.minor);

    int sm = 0;
    CHECK(bg_arch_parse("sm_90", &sm) && sm == 90);
    CHECK(bg_arch_parse("sm_90a", &sm) && sm == 90);
    CHECK(bg_arch_parse("sm_120", &sm) && sm == 120);
    CHECK(!bg_arch_parse("compute_90", &sm));
    CHECK(!bg_arch_parse("sm_9", &sm));
    CHECK(!bg_arch_parse("sm_90x", &sm));
    CHECK(!bg_arch_parse(NULL, &sm));

    BgNvrtcHeader hdr = {"bg_test.cuh", hdr_text};
    const char *archs[] = {"sm_80", "sm_90"};
    for (int a = 0; a < 2; a++) {
        /* the second one loads its own NVRTC (req.nv == NULL) */
        BgNvrtcReq req = {.source = good_src, .name = "scale", .headers = &hdr,
                          .nheaders = 1, .arch = archs[a], .nv = a == 0 ? &nv : NULL};
        BgNvrtcResult res;
        bool ok = bg_nvrtc_compile(&req, &res, &d);
        CHECK(ok);
        CHECK_EQ_INT(d.nerrors, 0);
        CHECK(res.cubin != NULL && res.cubin_len > 4);
        if (res.cubin && res.cubin_len > 4) {
            CHECK(res.cubin[0] == 0x7f && res.cubin[1] == 'E' && res.cubin[2] == 'L' &&
                  res.cubin[3] == 'F');
            /* the kernel name is in the ELF's string table */
            int found = 0;
            for (size_t i = 0; i + 5 <= res.cubin_len && !found; i++)
                found = memcmp(res.cubin + i, "scale", 5) == 0;
            CHECK(found);
        }
        CHECK(res.log != NULL);
        bg_nvrtc_result_free(&res);
    }

    /* extra options are passed through (a bad one fails the compile) */
    {
        const char *extra[] = {"-DBG_EXTRA=1", "-lineinfo"};
        BgNvrtcReq req = {.source = "#if BG_EXTRA != 1\n#error no extra\n#endif\n"
                                    "extern \"C\" __global__ void k(int *p) { *p = 1; }\n",
                          .name = "extra", .arch = "sm_80", .extra = extra, .nextra = 2,
                          .nv = &nv};
        BgNvrtcResult res;
        CHECK(bg_nvrtc_compile(&req, &res, &d));
        bg_nvrtc_result_free(&res);
        CHECK_EQ_INT(d.nerrors, 0);
    }

    /* canonical options: fixed options first, then headers with their hashes */
    {
        const char *extra[] = {"-DX=1"};
        BgNvrtcReq req = {.source = good_src, .name = "scale", .headers = &hdr,
                          .nheaders = 1, .arch = "sm_90", .extra = extra, .nextra = 1};
        char *c1 = bg_nvrtc_options_canon(&req);
        CHECK_STR_CONTAINS(c1, "--gpu-architecture=sm_90\n-std=c++17\n--fmad=false\n"
                               "-default-device\n-DX=1\nheader bg_test.cuh ");
        BgNvrtcHeader hdr2 = {"bg_test.cuh", "#pragma once\n"};
        req.headers = &hdr2;
        char *c2 = bg_nvrtc_options_canon(&req);
        CHECK(strcmp(c1, c2) != 0);
        free(c1);
        free(c2);
    }

    /* a broken kernel: E_NVRTC_COMPILE with the log, and the dump */
    {
        char dumpdir[512];
        snprintf(dumpdir, sizeof dumpdir, "%s/bgnn_nvrtc_dump.%ld/sub", bg_test_tmpdir(),
                 (long)getpid());
        setenv("BGNN_DUMP_DIR", dumpdir, 1);
        BgNvrtcReq req = {.source = bad_src, .name = "broken/kernel", .arch = "sm_80",
                          .nv = &nv};
        BgNvrtcResult res;
        BgDiagSink d2;
        bg_diag_init(&d2);
        CHECK(!bg_nvrtc_compile(&req, &res, &d2));
        CHECK(res.cubin == NULL);
        CHECK_STR_CONTAINS(res.log, "error");
        CHECK_STR_CONTAINS(res.log, "undeclared_thing");
        CHECK(has_code(&d2, BG_E_NVRTC_COMPILE));
        CHECK_STR_CONTAINS(msg_of(&d2, BG_E_NVRTC_COMPILE), "error");
        CHECK_STR_CONTAINS(msg_of(&d2, BG_E_NVRTC_COMPILE), "broken/kernel");
        char path[700];
        snprintf(path, sizeof path, "%s/broken_kernel.cu", dumpdir);
        char *cu = slurp(path);
        CHECK(cu != NULL);
        CHECK_STR_CONTAINS(cu, "   1 | extern \"C\" __global__ void broken(float *y) {\n");
        CHECK_STR_CONTAINS(cu, "   2 |     y[0] = undeclared_thing;\n");
        CHECK_STR_CONTAINS(cu, "   3 | }\n");
        free(cu);
        unlink(path);
        snprintf(path, sizeof path, "%s/broken_kernel.log", dumpdir);
        char *log = slurp(path);
        CHECK_STR_CONTAINS(log, "undeclared_thing");
        free(log);
        unlink(path);
        rmdir(dumpdir);
        *strrchr(dumpdir, '/') = '\0';
        rmdir(dumpdir);
        /* the note points at the dump */
        int note = 0;
        for (int i = 0; i < d2.n; i++)
            note |= d2.items[i].sev == BG_SEV_NOTE && strstr(d2.items[i].msg, ".cu");
        CHECK(note);
        char *text = bg_diag_render(&d2);
        printf("%s", text);
        free(text);
        bg_nvrtc_result_free(&res);
        bg_diag_free(&d2);
        unsetenv("BGNN_DUMP_DIR");
    }

    /* unsupported and malformed architectures */
    if (nv.narchs > 0) {
        BgNvrtcReq req = {.source = good_src, .name = "scale", .headers = &hdr,
                          .nheaders = 1, .arch = "sm_10", .nv = &nv};
        BgNvrtcResult res;
        BgDiagSink d2;
        bg_diag_init(&d2);
        CHECK(!bg_nvrtc_compile(&req, &res, &d2));
        CHECK(has_code(&d2, BG_E_ARCH));
        CHECK_STR_CONTAINS(msg_of(&d2, BG_E_ARCH), "architecture sm_10 is not supported");
        char first[32];
        snprintf(first, sizeof first, "supported: sm_%d", nv.archs[0]);
        CHECK_STR_CONTAINS(msg_of(&d2, BG_E_ARCH), first);
        printf("%s\n", msg_of(&d2, BG_E_ARCH));
        bg_nvrtc_result_free(&res);
        bg_diag_free(&d2);
    }
    {
        BgNvrtcReq req = {.source = good_src, .name = "scale", .arch = "compute_90",
                          .nv = &nv};
        BgNvrtcResult res;
        BgDiagSink d2;
        bg_diag_init(&d2);
        CHECK(!bg_nvrtc_compile(&req, &res, &d2));
        CHECK(has_code(&d2, BG_E_ARCH));
        bg_nvrtc_result_free(&res);
        bg_diag_free(&d2);
    }

    bg_nvrtc_unload(&nv);
    CHECK(nv.lib == NULL);
    bg_diag_free(&d);
    return bg_test_finish();
}
