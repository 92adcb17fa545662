/* module.c - devices and compiled models.
 *
 * A BgGpu is one device: the dlopen'ed driver, its primary context (retained, made current
 * on every entry from the API), and a lazily loaded NVRTC.  A model reaches the device one
 * way only, as a cubin with its manifest embedded: the JIT (api/jit.c: codegen, then the
 * disk cache or NVRTC) produces that cubin and the AOT path reads it from a file; either way the plan
 * is read back from the cubin's own manifest, so a cached or shipped cubin always runs with
 * the plan it was built with.  Architecture rule: a cubin for sm_XY runs on a device sm_XZ
 * with Z >= Y (same major); an arch-specific sm_XYa only on sm_XY. */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (!bg_arch_parse(arch, &sm)) return false;
    bool specific = arch[strlen(arch) - 1] == 'a';
    if (specific) return sm == dev_sm;
    return sm / 10 == dev_sm / 10 && sm % 10 <= dev_sm % 10;
}

/* Kernel `kernel` + suffix of a loaded module (a launch's variant, plan.h), or NULL where the
 * cubin has none (one compiled before that variant existed). */
static BgCUfunction variant_fn(BgGpu *g, BgCUmodule mod, const char *kernel, const char *suffix) {
    const size_t nlen = strlen(kernel) + strlen(suffix) + 1;
    char *name = bg_xcalloc(nlen, 1);
    snprintf(name, nlen, "%s%s", kernel, suffix);
    BgCUfunction fn = NULL;
    if (g->cu.cuModuleGetFunction(&fn, mod, name) != BG_CUDA_SUCCESS) fn = NULL;
    free(name);
    return fn;
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
    out->alt_fn = bg_xcalloc((size_t)p->nlaunches + 1, sizeof *out->alt_fn);
    out->sparse_fn = bg_xcalloc((size_t)p->nlaunches + 1, sizeof *out->sparse_fn);
    out->wave_fn = bg_xcalloc((size_t)p->nlaunches + 1, sizeof *out->wave_fn);
    out->wave_grid_max = bg_xcalloc((size_t)p->nlaunches + 1, sizeof *out->wave_grid_max);
    for (int i = 0; i < p->nlaunches; i++) {
        /* its sparse and one-wave variants, where the plan says it has them and the cubin does */
        if (bg_plan_sparse_tpr(p, &p->launches[i]) > 0)
            out->sparse_fn[i] = variant_fn(g, out->mod, p->launches[i].kernel, BG_PLAN_SPARSE_SUFFIX);
        if (bg_plan_launch_wave(&p->launches[i]))
            out->wave_fn[i] = variant_fn(g, out->mod, p->launches[i].kernel, BG_PLAN_WAVE_SUFFIX);
        for (int alt = 0; alt < 2; alt++) {
            const char *name = alt ? p->launches[i].alt : p->launches[i].kernel;
            if (!name) continue;
            r = g->cu.cuModuleGetFunction(alt ? &out->alt_fn[i] : &out->fn[i], out->mod, name);
            if (r != BG_CUDA_SUCCESS) {
                bg_diag_error(d, BG_E_MANIFEST, "%s: the manifest names kernel '%s', which the cubin lacks", what,
                              name);
                goto fail;
            }
        }
        /* a launch with dynamic shared memory past the default 48 KB: its kernel's limit raised */
        const int smem = p->launches[i].smem;
        if (smem > 48 * 1024 &&
            (r = g->cu.cuFuncSetAttribute(out->fn[i], BG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem)) !=
                BG_CUDA_SUCCESS) {
            char nb[64];
            bg_diag_error(d, BG_E_MANIFEST, "%s: kernel '%s' needs %d bytes of shared memory a block, which %s refuses (%s)",
                          what, p->launches[i].kernel, smem, g->name, bg_cuda_error_name(&g->cu, r, nb, sizeof nb));
            goto fail;
        }
    }
    /* each launch's largest block: the fewest threads any of its kernels takes (their registers);
     * first, one wave of a launch's one-wave variant at BG_PLAN_WAVE_BLOCK (exec.c launch_one
     * runs it only at that block), or no variant where that cannot be had */
    out->max_block = bg_xcalloc((size_t)p->nlaunches + 1, sizeof *out->max_block);
    out->slots_graph = bg_xcalloc((size_t)p->nlaunches + 1, sizeof *out->slots_graph);
    for (int i = 0; i < p->nlaunches; i++) {
        out->slots_graph[i] = bg_plan_launch_slots_graph(p, &p->launches[i]);
        int per_sm = 0;
        if (out->wave_fn[i] &&
            (g->cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, out->wave_fn[i], BG_PLAN_WAVE_BLOCK, 0) !=
                 BG_CUDA_SUCCESS ||
             per_sm <= 0))
            out->wave_fn[i] = NULL;
        else if (out->wave_fn[i])
            out->wave_grid_max[i] = per_sm * g->nsm;
        const BgCUfunction fns[4] = {out->fn[i], out->alt_fn[i], out->sparse_fn[i], out->wave_fn[i]};
        int mb = 1024;
        for (int k = 0; k < 4; k++) {
            int v = 0;
            if (fns[k] && g->cu.cuFuncGetAttribute(&v, BG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fns[k]) ==
                              BG_CUDA_SUCCESS && v > 0 && v < mb)
                mb = v;
        }
        out->max_block[i] = mb / 32 * 32 > 0 ? mb / 32 * 32 : 32;
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
    if (p->blocks) {
        r = g->cu.cuModuleGetFunction(&out->blocks_fn, out->mod, p->blocks_kernel);
        if (r != BG_CUDA_SUCCESS) {
            out->blocks_fn = NULL;
            bg_diag_error(d, BG_E_MANIFEST, "%s: the manifest names the per-graph kernel '%s', which the cubin lacks",
                          what, p->blocks_kernel);
            goto fail;
        }
    }
    BgCUdeviceptr marker = 0;
    size_t marker_bytes = 0;
    out->pdl_kernels = g->cu.cuModuleGetGlobal(&marker, &marker_bytes, out->mod, "bgnn_pdl_enter") == BG_CUDA_SUCCESS;
    out->rowgroup_fn = bg_xcalloc((size_t)p->nrowgroups + 1, sizeof *out->rowgroup_fn);
    for (int i = 0; i < p->nrowgroups; i++)
        if (g->cu.cuModuleGetFunction(&out->rowgroup_fn[i], out->mod, p->rowgroups[i].kernel) != BG_CUDA_SUCCESS) {
            bg_diag_error(d, BG_E_MANIFEST, "%s: the manifest names the row group kernel '%s', which the cubin lacks",
                          what, p->rowgroups[i].kernel);
            goto fail;
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
    free(m->alt_fn);
    free(m->sparse_fn);
    free(m->wave_fn);
    free(m->wave_grid_max);
    free(m->max_block);
    free(m->slots_graph);
    free(m->rowgroup_fn);
    if (m->arena) bg_arena_free(m->arena);
    memset(m, 0, sizeof *m);
}
