/* driver.h - the top layer's internal header: what joins the compiler, the CPU reference and
 * the runtime.  The public API (api.c), the CLI (cli/bgnnc.c) and the tests use it; nothing
 * below api/ includes it.
 *
 *   jit.c          a module -> a cubin (codegen, then the disk cache or NVRTC)
 *   gpu_bind.c     binding a plan's leaves with the model's source at hand (notes, npy files)
 *   gen_weights.c  random weights with `bgnnc gen-weights` semantics */
#ifndef BG_DRIVER_H
#define BG_DRIVER_H

#include "codegen.h"
#include "reference.h"
#include "rt.h"

/* ===== jit.c ========================================================================== */
/* Device-free JIT: codegen for arch, then the disk cache (cache_dir NULL or disabled: no
 * cache) or NVRTC.  nv may be NULL (loaded for this call).  *cubin malloc'd.
 * info (optional): whether the cache hit, and whether a corrupt entry was replaced. */
typedef struct BgJitInfo {
    bool cache_hit;
    bool cache_corrupt;   /* an entry existed but failed its checks; it was rebuilt */
    char key[65];
    double codegen_ms, nvrtc_ms;
} BgJitInfo;
bool bg_jit_cubin(const BgModule *m, const char *arch, const BgNvrtc *nv, const char *cache_dir,
                  unsigned char **cubin, size_t *len, BgJitInfo *info, BgDiagSink *d);

/* A loaded model takes m's launch-level schedule (codegen/sched.c: block, grid, fb, each graph's
 * work items) without new code: m must be the module gm was compiled from, its method and path
 * unchanged (they change the code: compile again).  An instance bound before must be bound
 * again.  false (error in d) when m's plan cannot be built or has other kernels. */
bool bg_gpu_model_resched(BgGpuModel *gm, const BgModule *m, const char *arch, BgDiagSink *d);

/* ===== gpu_bind.c ===================================================================== */
/* bg_gpu_run_bind_leaves (rt.h) with the leaf declarations of `real`, the module the plan
 * came from (NULL when unknown, e.g. a cubin without its source): gives source notes and
 * npy(...) file names. */
bool bg_gpu_run_bind(BgGpu *g, const BgGpuModel *gm, const BgModule *real, BgGraph *graph,
                     const BgTensor *features, BgCUdeviceptr features_dev, const char *weights,
                     BgGpuRun *out, bool *oom, BgDiagSink *d);
/* The same with named weights from memory (wmem, as bg_bind_mem) instead of a file. */
bool bg_gpu_run_bind_mem(BgGpu *g, const BgGpuModel *gm, const BgModule *real, BgGraph *graph,
                         const BgTensor *features, BgCUdeviceptr features_dev, const char *weights,
                         const BgSafetensors *wmem, BgGpuRun *out, bool *oom, BgDiagSink *d);

/* ===== gen_weights.c ================================================================= */
/* Random weights for every PARAM of a lowered module (compile with passes = none), in the
 * exact sequence of `bgnnc gen-weights --seed S`; written atomically as safetensors. */
bool bg_gen_weights(const BgModule *lowered, unsigned long long seed, const char *path,
                    int *ntensors, BgDiagSink *d);

#endif /* BG_DRIVER_H */
