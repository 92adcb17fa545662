/* test_cuda_smoke.c - the GPU layer end to end on a real device: load the driver, compile a
 * kernel with NVRTC for the device's architecture (through the JIT cache), load and launch
 * it on a small buffer, copy back and check, time it with events, and run a cooperative
 * launch sized by the occupancy API.  Exits 77 (skip) without a GPU. */
#include "bgtest.h"
#include "gpu.h"

#include <unistd.h>

static const char *hdr_text =
    "#pragma once\n"
    "__device__ __forceinline__ float bg_affine(float x) { return x * 2.0f + 1.0f; }\n";

static const char *src =
    "#include \"bg_smoke.cuh\"\n"
    "extern \"C\" __global__ void affine(float *y, const float *x, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = bg_affine(x[i]);\n"
    "}\n"
    "extern \"C\" __global__ void count(unsigned *c) { atomicAdd(c, 1u); }\n";

#define CK(call) CHECK(bg_cuda_check(&cu, (call), #call, &d))

int main(void) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgCuda cu;
    if (!bg_cuda_load(&cu, &d)) {
        char *t = bg_diag_render(&d);
        int no_dev = d.n > 0 && (d.items[0].code == BG_E_NO_DEVICE);
        if (no_dev) {
            printf("%s", t);
            free(t);
            bg_diag_free(&d);
            bg_test_skip("no CUDA device");
        }
        fprintf(stderr, "%s", t);
        free(t);
        CHECK(!"bg_cuda_load failed for a reason other than a missing device");
        return bg_test_finish();
    }
    BgNvrtc nv;
    if (!bg_nvrtc_load(&nv, &d)) {
        bg_cuda_unload(&cu);
        bg_diag_free(&d);
        bg_test_skip("libnvrtc cannot be loaded");
    }
    BgCUdevice dev = 0;
    CK(cu.cuDeviceGet(&dev, 0));
    char name[256] = "";
    CK(cu.cuDeviceGetName(name, sizeof name, dev));
    int sm = 0;
    CHECK(bg_cuda_device_arch(&cu, dev, &sm, &d));
    int nsm = 0;
    CK(cu.cuDeviceGetAttribute(&nsm, BG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    printf("driver %d, %d device(s); device 0: %s, sm_%d, %d SMs; NVRTC %d.%d\n",
           cu.driver_version, cu.device_count, name, sm, nsm, nv.major, nv.minor);

    BgCUcontext ctx = NULL;
    CK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cu.cuCtxSetCurrent(ctx));
    BgCUcontext cur = NULL;
    CK(cu.cuCtxGetCurrent(&cur));
    CHECK(cur == ctx);

    /* compile, through the cache (a private directory) */
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%d", sm);
    BgNvrtcHeader hdr = {"bg_smoke.cuh", hdr_text};
    BgNvrtcReq req = {.source = src, .name = "smoke", .headers = &hdr, .nheaders = 1,
                      .arch = arch, .nv = &nv};
    char *opts = bg_nvrtc_options_canon(&req);
    char ver[32], key[65];
    snprintf(ver, sizeof ver, "%d.%d", nv.major, nv.minor);
    bg_cache_key(src, opts, arch, ver, key);
    free(opts);
    char cdir[512];
    snprintf(cdir, sizeof cdir, "%s/bgnn_smoke_cache.%ld", bg_test_tmpdir(), (long)getpid());
    unsigned char *cubin = NULL;
    size_t cubin_len = 0;
    BgCacheStatus st;
    CHECK(!bg_cache_load(cdir, key, &cubin, &cubin_len, &st));
    BgNvrtcResult res;
    CHECK(bg_nvrtc_compile(&req, &res, &d));
    if (!res.cubin) {
        char *t = bg_diag_render(&d);
        fprintf(stderr, "%s", t);
        free(t);
        return bg_test_finish();
    }
    CHECK(bg_cache_store(cdir, key, res.cubin, res.cubin_len, 0, &d));
    bg_nvrtc_result_free(&res);
    CHECK(bg_cache_load(cdir, key, &cubin, &cubin_len, &st));
    CHECK_EQ_INT(st, BG_CACHE_HIT);

    BgCUmodule mod = NULL;
    CK(cu.cuModuleLoadData(&mod, cubin));
    free(cubin);
    BgCUfunction fn = NULL, fcount = NULL;
    CK(cu.cuModuleGetFunction(&fn, mod, "affine"));
    CK(cu.cuModuleGetFunction(&fcount, mod, "count"));
    int regs = -1, maxthr = 0;
    CK(cu.cuFuncGetAttribute(&regs, BG_CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
    CK(cu.cuFuncGetAttribute(&maxthr, BG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn));
    CHECK(regs >= 0 && maxthr >= 256);

    size_t free_b = 0, total_b = 0;
    CK(cu.cuMemGetInfo_v2(&free_b, &total_b));
    CHECK(total_b > 0 && free_b <= total_b);

    enum { N = 1000 };
    float hx[N], hy[N];
    for (int i = 0; i < N; i++) hx[i] = (float)i * 0.5f - 100.0f;
    BgCUdeviceptr dx = 0, dy = 0, dc = 0;
    CK(cu.cuMemAlloc_v2(&dx, sizeof hx));
    CK(cu.cuMemAlloc_v2(&dy, sizeof hy));
    CK(cu.cuMemAlloc_v2(&dc, 4));
    CK(cu.cuMemsetD8_v2(dy, 0xff, sizeof hy));
    BgCUstream s = NULL;
    CK(cu.cuStreamCreate(&s, BG_CU_STREAM_NON_BLOCKING));
    BgCUevent e0 = NULL, e1 = NULL;
    CK(cu.cuEventCreate(&e0, BG_CU_EVENT_DEFAULT));
    CK(cu.cuEventCreate(&e1, BG_CU_EVENT_DEFAULT));
    CK(cu.cuMemcpyHtoDAsync_v2(dx, hx, sizeof hx, s));
    int n = N;
    void *params[] = {&dy, &dx, &n};
    CK(cu.cuEventRecord(e0, s));
    CK(cu.cuLaunchKernel(fn, (N + 127) / 128, 1, 1, 128, 1, 1, 0, s, params, NULL));
    CK(cu.cuEventRecord(e1, s));
    CK(cu.cuMemcpyDtoHAsync_v2(hy, dy, sizeof hy, s));
    CK(cu.cuStreamSynchronize(s));
    CK(cu.cuEventSynchronize(e1));
    float ms = -1.0f;
    CK(cu.cuEventElapsedTime(&ms, e0, e1));
    CHECK(ms >= 0.0f && ms < 10000.0f);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += hy[i] != hx[i] * 2.0f + 1.0f;
    CHECK_EQ_INT(bad, 0);
    printf("affine kernel: %d regs, %.3f ms\n", regs, (double)ms);

    /* synchronous copies and memset D32 */
    CK(cu.cuMemsetD32_v2(dy, 0x3f800000u, N)); /* 1.0f */
    CK(cu.cuCtxSynchronize());
    CK(cu.cuMemcpyDtoH_v2(hy, dy, sizeof hy));
    CHECK(hy[0] == 1.0f && hy[N - 1] == 1.0f);
    CK(cu.cuMemcpyHtoD_v2(dy, hx, sizeof hx));
    CK(cu.cuMemcpyDtoH_v2(hy, dy, sizeof hy));
    CHECK(memcmp(hx, hy, sizeof hx) == 0);

    /* cooperative launch, one full wave as the occupancy API sizes it */
    int coop = 0;
    CK(cu.cuDeviceGetAttribute(&coop, BG_CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev));
    if (coop) {
        int per_sm = 0;
        CK(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fcount, 256, 0));
        CHECK(per_sm > 0);
        unsigned blocks = (unsigned)(per_sm * nsm);
        CK(cu.cuMemsetD32_v2(dc, 0, 1));
        void *cp[] = {&dc};
        CK(cu.cuLaunchCooperativeKernel(fcount, blocks, 1, 1, 256, 1, 1, 0, s, cp));
        CK(cu.cuStreamSynchronize(s));
        unsigned got = 0;
        CK(cu.cuMemcpyDtoH_v2(&got, dc, 4));
        CHECK_EQ_INT(got, blocks * 256u);
    }

    /* a failing call becomes one E_CUDA diagnostic with the driver's name for it */
    {
        BgDiagSink d2;
        bg_diag_init(&d2);
        BgCUfunction nofn = NULL;
        CHECK(!bg_cuda_check(&cu, cu.cuModuleGetFunction(&nofn, mod, "no_such_kernel"),
                             "cuModuleGetFunction(no_such_kernel)", &d2));
        CHECK(d2.n == 1 && d2.items[0].code == BG_E_CUDA);
        if (d2.n) {
            CHECK_STR_CONTAINS(d2.items[0].msg, "CUDA_ERROR_NOT_FOUND");
            printf("%s\n", d2.items[0].msg);
        }
        bg_diag_free(&d2);
    }

    CK(cu.cuEventDestroy(e0));
    CK(cu.cuEventDestroy(e1));
    CK(cu.cuStreamDestroy(s));
    CK(cu.cuMemFree_v2(dx));
    CK(cu.cuMemFree_v2(dy));
    CK(cu.cuMemFree_v2(dc));
    CK(cu.cuModuleUnload(mod));
    CK(cu.cuDevicePrimaryCtxRelease(dev));
    CHECK_EQ_INT(d.nerrors, 0);
    if (d.nerrors) {
        char *t = bg_diag_render(&d);
        fprintf(stderr, "%s", t);
        free(t);
    }

    char path[700];
    snprintf(path, sizeof path, "%s/%s.cubin", cdir, key);
    unlink(path);
    rmdir(cdir);
    bg_nvrtc_unload(&nv);
    bg_cuda_unload(&cu);
    bg_diag_free(&d);
    return bg_test_finish();
}
