/* module.c - devices and compiled models.
 *
 * A BgGpu is one device: the dlopen'ed driver, its primary context (retained, made current
 * on every entry from the API), and a lazily loaded NVRTC.  A model reaches the device one
 * way only, as a cubin with its manifest embedded: the JIT produces that cubin (codegen,
 * then the disk cache or NVRTC) and the AOT path reads it from a file; either way the plan
 * is read back from the cubin's own manifest, so a cached or shipped cubin always runs with
 * the plan it was built with.  Architecture rule: a cubin for sm_XY runs on a device sm_XZ
 * with Z >= Y (same major); an arch-specific sm_XYa only on sm_XY. */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- devices ------------------------------------------------------------------------- */
bool bg_gpu_open(BgGpu *g, int ordinal, BgDiagSink *d) {
    memset(g, 0, sizeof *g);
    if (!bg_cuda_load(&g->cu, d)) return false;
    BgCuda *cu = &g->cu;
    if (ordinal < 0 || ordinal >= cu->device_count) {
        bg_diag_error(d, BG_E_NO_DEVICE, "CUDA device %d does not exist (this machine has %d)",
                      ordinal, cu->device_count);
        bg_cuda_unload(cu);
        return false;
    }
    g->ordinal = ordinal;
    if (!bg_cuda_check(cu, cu->cuDeviceGet(&g->dev, ordinal), "cuDeviceGet", d) ||
        !bg_cuda_device_arch(cu, g->dev, &g->sm, d) ||
        !bg_cuda_check(cu, cu->cuDeviceGetAttribute(&g->nsm, BG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g->dev),
                       "cuDeviceGetAttribute", d) ||
        !bg_cuda_check(cu, cu->cuDeviceGetName(g->name, (int)sizeof g->name, g->dev), "cuDeviceGetName", d)) {
        bg_cuda_unload(cu);
        return false;
    }
    snprintf(g->arch, sizeof g->arch, "sm_%d", g->sm);
    if (!bg_cuda_check(cu, cu->cuDevicePrimaryCtxRetain(&g->ctx, g->dev), "cuDevicePrimaryCtxRetain", d)) {
        g->ctx = NULL;
        bg_cuda_unload(cu);
        return false;
    }
    if (!bg_gpu_make_current(g, d)) {
        bg_gpu_close(g);
        return false;
    }
    return true;
}

bool bg_gpu_make_current(BgGpu *g, BgDiagSink *d) {
    return bg_cuda_check(&g->cu, g->cu.cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent", d);
}

void bg_gpu_close(BgGpu *g) {
    if (!g) return;
    if (g->nv.lib) bg_nvrtc_unload(&g->nv);
    if (g->ctx) g->cu.cuDevicePrimaryCtxRelease(g->dev);
    if (g->cu.lib) bg_cuda_unload(&g->cu);
    memset(g, 0, sizeof *g);
}

const char *bg_gpu_default_arch(char buf[16], const char *fallback) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgCuda cu;
    snprintf(buf, 16, "%s", fallback);
    if (bg_cuda_load(&cu, &d)) {
        BgCUdevice dev;
        int sm = 0;
        if (cu.device_count > 0 && cu.cuDeviceGet(&dev, 0) == BG_CUDA_SUCCESS &&
            bg_cuda_device_arch(&cu, dev, &sm, &d))
            snprintf(buf, 16, "sm_%d", sm);
        bg_cuda_unload(&cu);
    }
    bg_diag_free(&d);
    return buf;
}

/* ---- JIT ----------------------------------------------------------------------------- */
bool bg_jit_cubin(const BgModule *m, const char *arch, const BgNvrtc *nv, const char *cache_dir,
                  unsigned char **cubin, size_t *len, BgJitInfo *info, BgDiagSink *d) {
    BgJitInfo local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    *cubin = NULL;
    *len = 0;
    int sm;
    if (!bg_nvrtc_parse_arch(arch, &sm)) {
        bg_diag_error(d, BG_E_ARCH, "malformed GPU architecture '%s' (expected sm_XX, e.g. sm_90)",
                      arch ? arch : "(none)");
        return false;
    }
    BgNvrtc own;
    memset(&own, 0, sizeof own);
    if (!nv) {
        if (!bg_nvrtc_load(&own, d)) return false;
        nv = &own;
    }
    bool ok = false;
    double t0 = now_ms();
    char *src = bg_codegen_cuda(m, arch, d);
    int nh = 0;
    BgNvrtcHeader *hdr = NULL;
    char *opts = NULL;
    info->codegen_ms = now_ms() - t0;
    if (!src) goto done;
    hdr = bg_codegen_templates(&nh);
    BgNvrtcReq req = {.source = src, .name = m->name ? m->name : "model", .headers = hdr,
                      .nheaders = nh, .arch = arch, .nv = nv};
    opts = bg_nvrtc_options_canon(&req);
    char ver[32];
    snprintf(ver, sizeof ver, "%d.%d", nv->major, nv->minor);
    bg_cache_key(src, opts, arch, ver, info->key);
    bool use_cache = cache_dir && *cache_dir && !bg_cache_disabled();
    if (use_cache) {
        BgCacheStatus st = BG_CACHE_MISS;
        if (bg_cache_load(cache_dir, info->key, cubin, len, &st)) {
            info->cache_hit = true;
            ok = true;
            goto done;
        }
        info->cache_corrupt = st == BG_CACHE_CORRUPT;
    }
    t0 = now_ms();
    BgNvrtcResult res;
    ok = bg_nvrtc_compile(&req, &res, d);
    info->nvrtc_ms = now_ms() - t0;
    if (ok) {
        *cubin = res.cubin;
        *len = res.cubin_len;
        res.cubin = NULL;
        if (use_cache) bg_cache_store(cache_dir, info->key, *cubin, *len, 0, d); /* warns only */
    }
    bg_nvrtc_result_free(&res);
done:
    free(opts);
    free(hdr);
    free(src);
    if (nv == &own) bg_nvrtc_unload(&own);
    return ok;
}

/* ---- cubins and their plans ------------------------------------------------------------ */
BgPlan *bg_cubin_plan(const unsigned char *img, size_t len, const char *what, BgArena *a,
                      BgDiagSink *d) {
    const unsigned char *mb;
    size_t mn;
    if (!bg_elf_find_manifest(img, len, what, &mb, &mn, d)) return NULL;
    static const char magic[] = "bgnn-manifest ";
    size_t ml = sizeof magic - 1;
    if (mn < ml || memcmp(mb, magic, ml) != 0) {
        bg_diag_error(d, BG_E_MANIFEST, "%s: the embedded manifest does not start with '%s'", what, magic);
        return NULL;
    }
    long v = 0;
    size_t i = ml;
    bool digits = false;
    while (i < mn && mb[i] >= '0' && mb[i] <= '9' && v < 1000000) {
        v = v * 10 + (mb[i++] - '0');
        digits = true;
    }
    if (!digits || v != BG_MANIFEST_VERSION) {
        bg_diag_error(d, BG_E_MANIFEST,
                      "%s: manifest version %ld; this bgnn %s reads version %d only (rebuild the "
                      "cubin with this bgnnc)",
                      what, digits ? v : -1L, BG_VERSION_STRING, BG_MANIFEST_VERSION);
        return NULL;
    }
    BgPlan *p = bg_manifest_read((const char *)mb, mn, what, a, d);
    if (!p) return NULL;
    if (p->version && strcmp(p->version, BG_VERSION_STRING) != 0) {
        bg_diag_error(d, BG_E_MANIFEST,
                      "%s: built by bgnn %s; this is bgnn %s (rebuild the cubin with this bgnnc)",
                      what, p->version, BG_VERSION_STRING);
        return NULL;
    }
    return p;
}

/* Can a cubin for `arch` run on device sm? */
static bool arch_runs_on(const char *arch, int dev_sm) {
    int sm;
    if (!bg_nvrtc_parse_arch(arch, &sm)) return false;
    bool specific = arch[strlen(arch) - 1] == 'a';
    if (specific) return sm == dev_sm;
    return sm / 10 == dev_sm / 10 && sm % 10 <= dev_sm % 10;
}

bool bg_gpu_model_load(BgGpu *g, const unsigned char *cubin, size_t len, const char *what,
                       BgGpuModel *out, BgDiagSink *d) {
    memset(out, 0, sizeof *out);
    out->arena = bg_arena_new();
    out->plan = bg_cubin_plan(cubin, len, what, out->arena, d);
    if (!out->plan) goto fail;
    const BgPlan *p = out->plan;
    if (p->arch && !arch_runs_on(p->arch, g->sm)) {
        bg_diag_error(d, BG_E_ARCH, "%s: built for %s, but %s is %s (rebuild with --arch=%s)", what,
                      p->arch, g->name, g->arch, g->arch);
        goto fail;
    }
    if (!bg_gpu_make_current(g, d)) goto fail;
    BgCUresult r = g->cu.cuModuleLoadData(&out->mod, cubin);
    if (r != BG_CUDA_SUCCESS) {
        out->mod = NULL;
        char nb[64];
        bg_diag_error(d, r == 209 /* NO_BINARY_FOR_GPU */ ? BG_E_ARCH : BG_E_CUDA,
                      "%s: the driver cannot load this cubin on %s (%s): %s", what, g->arch,
                      p->arch ? p->arch : "arch unknown", bg_cuda_error_name(&g->cu, r, nb, sizeof nb));
        goto fail;
    }
    out->fn = bg_xcalloc((size_t)p->nlaunches + 1, sizeof *out->fn);
    for (int i = 0; i < p->nlaunches; i++) {
        r = g->cu.cuModuleGetFunction(&out->fn[i], out->mod, p->launches[i].kernel);
        if (r != BG_CUDA_SUCCESS) {
            bg_diag_error(d, BG_E_MANIFEST, "%s: the manifest names kernel '%s', which the cubin lacks",
                          what, p->launches[i].kernel);
            goto fail;
        }
    }
    if (p->fused) {
        r = g->cu.cuModuleGetFunction(&out->fused_fn, out->mod, p->fused_kernel);
        if (r != BG_CUDA_SUCCESS) {
            out->fused_fn = NULL;
            bg_diag_error(d, BG_E_MANIFEST, "%s: the manifest names the fused kernel '%s', which the cubin lacks",
                          what, p->fused_kernel);
            goto fail;
        }
        /* How many blocks can be co-resident: the most a cooperative launch may ask for. */
        int coop = 0, per_sm = 0;
        if (g->cu.cuDeviceGetAttribute(&coop, BG_CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, g->dev) == BG_CUDA_SUCCESS &&
            coop &&
            g->cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, out->fused_fn, p->fused_block, 0) ==
                BG_CUDA_SUCCESS)
            out->fused_grid_max = per_sm * g->nsm;
    }
    return true;
fail:
    bg_gpu_model_free(g, out);
    return false;
}

void bg_gpu_model_free(BgGpu *g, BgGpuModel *m) {
    if (!m) return;
    if (m->mod && g && g->cu.lib) g->cu.cuModuleUnload(m->mod);
    free(m->fn);
    if (m->arena) bg_arena_free(m->arena);
    memset(m, 0, sizeof *m);
}
