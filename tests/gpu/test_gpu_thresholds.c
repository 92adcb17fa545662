/* test_gpu_thresholds.c - the bit of a value by a threshold table on the GPU (templates/
 * epilogue.cuh thr_bit and thr_bit_pre, the signed key order) against the CPU reference
 * (reference/ref_ops.c bg_ref_bin_threshold, the unsigned key order) on awkward floats: every
 * pair of the special values (+-0, +-inf, NaNs of both signs and several payloads, the
 * smallest and largest denormals and normals, +-1, the table's "never" boundary), with each
 * flip entry (0, -0, 1, NaN), and random values and thresholds, half of them close to each
 * other.  The kernel is compiled with NVRTC from the embedded templates whether or not a
 * device exists (that much runs in CI); without a GPU the test then exits 77 (skip). */
#include "bgtest.h"
#include "codegen.h"
#include "gpu.h"
#include "ref_ops.h"

#include <string.h>

#define NV 4096    /* values */
#define NTHR 1024  /* thresholds, each with the four flip entries: NT table columns */
#define NT (4 * NTHR)

static const char *src =
    "#include \"epilogue.cuh\"\n"
    "#define NT 4096\n"
    "extern \"C\" __global__ void thr_bits(unsigned char *out, const float *v, const float *t, int nv) {\n"
    "    const long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (k >= (long long)nv * NT) return;\n"
    "    const int r = (int)(k / NT), c = (int)(k % NT);\n"
    "    const unsigned a = bgnn::thr_bit<NT>(t, c, v[r]);\n"
    "    const unsigned b = bgnn::thr_bit_pre(t[c], t[NT + c], v[r]);\n"
    "    out[k] = (unsigned char)(a | b << 1);\n"
    "}\n";

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static uint32_t rnd(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 11);
}

static const uint32_t specials[] = {
    0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,             /* +-0, +-inf */
    0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu, /* NaNs (0x7fc00000: "never") */
    0xffffffffu, 0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu, /* denormals */
    0x00800000u, 0x80800000u, 0x7f7fffffu, 0xff7fffffu,             /* smallest, largest normals */
    0x3f800000u, 0xbf800000u, 0x3f800001u, 0xbf7fffffu,             /* +-1 and neighbours */
};
#define NSPECIAL ((int)(sizeof specials / sizeof *specials))

int main(void) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgNvrtc nv;
    if (!bg_nvrtc_load(&nv, &d)) {
        bg_diag_free(&d);
        bg_test_skip("libnvrtc cannot be loaded");
    }
    BgCuda cu;
    const bool dev_ok = bg_cuda_load(&cu, &d);
    BgCUdevice dev = 0;
    int sm = 90;
    if (dev_ok && !(bg_cuda_check(&cu, cu.cuDeviceGet(&dev, 0), "cuDeviceGet", &d) &&
                    bg_cuda_device_arch(&cu, dev, &sm, &d)))
        CHECK(!"no architecture for device 0");
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%d", sm);
    int nh = 0;
    BgNvrtcHeader *h = bg_codegen_templates(&nh);
    BgNvrtcReq req = {.source = src, .name = "thresholds", .headers = h, .nheaders = nh, .arch = arch, .nv = &nv};
    BgNvrtcResult res;
    CHECK(bg_nvrtc_compile(&req, &res, &d) && res.cubin);
    free(h);
    printf("thr_bits compiled for %s: %zu bytes of cubin\n", arch, res.cubin ? res.cubin_len : (size_t)0);
    if (!dev_ok || !res.cubin) {
        const int fails = bg_test_finish();
        bg_nvrtc_result_free(&res);
        bg_diag_free(&d);
        if (fails) return fails;
        bg_test_skip("no CUDA device (the kernel compiled)");
    }

    /* the values and the table ([2][NT]: thresholds, then flips) */
    static float v[NV], t[2 * NT];
    uint64_t s = 0x9e3779b97f4a7c15ull;
    float thr[NTHR];
    for (int j = 0; j < NTHR; j++)
        thr[j] = j < NSPECIAL ? from_bits(specials[j]) : from_bits(rnd(&s));
    for (int i = 0; i < NV; i++) {
        if (i < NSPECIAL) v[i] = from_bits(specials[i]);
        else if (i % 2) v[i] = from_bits(rnd(&s));
        else { /* a threshold's bits with the low ones changed: the same sign and exponent */
            uint32_t u;
            const float tj = thr[rnd(&s) % NTHR];
            memcpy(&u, &tj, sizeof u);
            v[i] = from_bits((u & 0xffff0000u) | (rnd(&s) & 0xffffu));
        }
    }
    const float flips[4] = {0.0f, -0.0f, 1.0f, from_bits(0x7fc00000u)};
    for (int c = 0; c < NT; c++) {
        t[c] = thr[c / 4];
        t[NT + c] = flips[c % 4];
    }

    BgCUcontext ctx = NULL;
#define CK(call) CHECK(bg_cuda_check(&cu, (call), #call, &d))
    CK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cu.cuCtxSetCurrent(ctx));
    BgCUmodule mod = NULL;
    BgCUfunction fn = NULL;
    CK(cu.cuModuleLoadData(&mod, res.cubin));
    bg_nvrtc_result_free(&res);
    CK(cu.cuModuleGetFunction(&fn, mod, "thr_bits"));
    const size_t pairs = (size_t)NV * NT;
    unsigned char *out = malloc(pairs);
    BgCUdeviceptr dout = 0, dv = 0, dt = 0;
    CK(cu.cuMemAlloc_v2(&dout, pairs));
    CK(cu.cuMemAlloc_v2(&dv, sizeof v));
    CK(cu.cuMemAlloc_v2(&dt, sizeof t));
    CK(cu.cuMemcpyHtoD_v2(dv, v, sizeof v));
    CK(cu.cuMemcpyHtoD_v2(dt, t, sizeof t));
    CK(cu.cuMemsetD8_v2(dout, 0xff, pairs));
    int n = NV;
    void *params[] = {&dout, &dv, &dt, &n};
    CK(cu.cuLaunchKernel(fn, (unsigned)((pairs + 255) / 256), 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    CK(cu.cuCtxSynchronize());
    CK(cu.cuMemcpyDtoH_v2(out, dout, pairs));

    /* the CPU reference, one value against every column at a time */
    BgTensor x = {0}, tab = {0};
    CHECK(bg_tensor_alloc(&x, BG_DT_F32, 2, 1, NT) && bg_tensor_alloc(&tab, BG_DT_F32, 2, 2, NT));
    memcpy(tab.data, t, sizeof t);
    long bad = 0, specials_checked = 0;
    for (int i = 0; i < NV && x.data && tab.data; i++) {
        for (int c = 0; c < NT; c++) ((float *)x.data)[c] = v[i];
        BgTensor y = {0};
        CHECK(bg_ref_bin_threshold(&x, &tab, &y));
        for (int c = 0; c < NT && y.data; c++) {
            const unsigned want = (unsigned)bg_bit_get(y.data, y.words_per_row, 0, c), got = out[(size_t)i * NT + c];
            if (got != (want | want << 1)) {
                if (bad < 8)
                    fprintf(stderr, "v = 0x%08x, threshold 0x%08x, flip %g: GPU thr_bit %u, thr_bit_pre %u, CPU %u\n",
                            (unsigned)((const uint32_t *)v)[i], (unsigned)((const uint32_t *)t)[c], (double)t[NT + c],
                            got & 1u, got >> 1, want);
                bad++;
            }
            specials_checked += i < NSPECIAL && c / 4 < NSPECIAL;
        }
        bg_tensor_free(&y);
    }
    bg_tensor_free(&x);
    bg_tensor_free(&tab);
    printf("%zu pairs (%ld of special values and flips), %ld differ\n", pairs, specials_checked, bad);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(specials_checked, (long)NSPECIAL * NSPECIAL * 4);
    free(out);
    CK(cu.cuMemFree_v2(dout));
    CK(cu.cuMemFree_v2(dv));
    CK(cu.cuMemFree_v2(dt));
    CK(cu.cuModuleUnload(mod));
    CK(cu.cuDevicePrimaryCtxRelease(dev));
    if (d.nerrors) {
        char *txt = bg_diag_render(&d);
        fprintf(stderr, "%s", txt);
        free(txt);
    }
    bg_diag_free(&d);
    bg_cuda_unload(&cu);
    return bg_test_finish();
}
