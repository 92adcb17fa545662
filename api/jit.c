/* jit.c - the JIT: a module -> a cubin for one architecture.  Code generation
 * (compiler/codegen), then the on-disk cache (runtime/cache.c, keyed by the generated source,
 * NVRTC's canonical options, the arch, the NVRTC and bgnn versions) or NVRTC
 * (runtime/nvrtc.c).  It joins the compiler and the runtime, so it lives above both. */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bool bg_jit_cubin(const BgModule *m, const char *arch, const BgNvrtc *nv, const char *cache_dir,
                  unsigned char **cubin, size_t *len, BgJitInfo *info, BgDiagSink *d) {
    BgJitInfo local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    *cubin = NULL;
    *len = 0;
    int sm;
    if (!bg_arch_parse(arch, &sm)) {
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
    char carch[16]; /* the plan's: sm_90a where it has a wgmma product */
    char *src = bg_codegen_cuda_arch(m, arch, carch, sizeof carch, d);
    if (src) arch = carch;
    int nh = 0;
    BgCodeHeader *hdr = NULL;
    char *opts = NULL;
    info->codegen_ms = now_ms() - t0;
    if (!src) goto done;
    hdr = bg_codegen_templates(&nh);
    BgNvrtcReq req = {.source = src, .name = m->name ? m->name : "model", .headers = hdr,
                      .nheaders = nh, .arch = arch, .nv = nv};
    opts = bg_nvrtc_options_canon(&req);
    char ver[32];
    snprintf(ver, sizeof ver, "%d.%d", nv->major, nv->minor);
    /* the float semantics are part of the key (the source's manifest records them too): a
     * strict and a default compile never share an entry */
    char *kopts = bg_xmalloc(strlen(opts) + 32);
    snprintf(kopts, strlen(opts) + 32, "%s%s", opts, m->fp_strict ? " --bgnn-fp-strict" : "");
    bg_cache_key(src, kopts, arch, ver, info->key);
    free(kopts);
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

bool bg_gpu_model_resched(BgGpuModel *gm, const BgModule *m, const char *arch, BgDiagSink *d) {
    BgArena *a = bg_arena_new();
    BgPlan *p = bg_codegen_plan(m, arch, a, d);
    bool ok = p != NULL;
    if (ok && (p->nlaunches != gm->plan->nlaunches || p->ngraphs != gm->plan->ngraphs)) {
        bg_diag_error(d, BG_E_INTERNAL, "resched: the module's plan has other launches than the loaded one");
        ok = false;
    }
    for (int i = 0; ok && i < p->nlaunches; i++) {
        BgPlanLaunch *l = &gm->plan->launches[i];
        if (strcmp(l->kernel, p->launches[i].kernel) != 0) {
            bg_diag_error(d, BG_E_INTERNAL, "resched: launch %d is %s here, %s loaded", i, p->launches[i].kernel,
                          l->kernel);
            ok = false;
            break;
        }
        l->block_size = p->launches[i].block_size;
        l->grid_per_sm = p->launches[i].grid_per_sm;
        l->fb = p->launches[i].fb;
    }
    for (int i = 0; ok && i < p->ngraphs; i++) {
        gm->plan->graphs[i].chunk = p->graphs[i].chunk;
        gm->plan->graphs[i].group = p->graphs[i].group;
    }
    bg_arena_free(a);
    return ok;
}
