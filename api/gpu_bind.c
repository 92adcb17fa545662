/* gpu_bind.c - binds a plan's leaves for the GPU with the model's source at hand: the leaf
 * declarations of the IR (reference/bind.c's bg_leaf_spec_of) give the runtime's messages
 * their source notes and npy(...) file names (runtime/bind.c does the binding). */
#include "driver.h"

#include <stdlib.h>

bool bg_gpu_run_bind(BgGpu *g, const BgGpuModel *gm, const BgModule *real, BgGraph *graph,
                     const BgTensor *features, BgCUdeviceptr features_dev, const char *weights,
                     BgGpuRun *out, bool *oom, BgDiagSink *d) {
    return bg_gpu_run_bind_mem(g, gm, real, graph, features, features_dev, weights, NULL, out, oom, d);
}

bool bg_gpu_run_bind_mem(BgGpu *g, const BgGpuModel *gm, const BgModule *real, BgGraph *graph,
                         const BgTensor *features, BgCUdeviceptr features_dev, const char *weights,
                         const BgSafetensors *wmem, BgGpuRun *out, bool *oom, BgDiagSink *d) {
    BgLeafSpec *decl = NULL;
    int ndecl = 0;
    if (real) {
        ndecl = real->ninsts;
        decl = bg_xcalloc((size_t)ndecl + 1, sizeof *decl);
        for (int i = 0; i < ndecl; i++) decl[i] = bg_leaf_spec_of(real, &real->insts[i]);
    }
    bool ok = bg_gpu_run_bind_leaves(g, gm, decl, ndecl, graph, features, features_dev, weights,
                                     wmem, out, oom, d);
    free(decl);
    return ok;
}
