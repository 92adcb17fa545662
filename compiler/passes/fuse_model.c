/* fuse_model.c - whole-model fusion: marks the module so the code generator emits the whole
 * model as ONE cooperative kernel (compiler/codegen/cg_cuda.c), its instructions grouped in
 * phases separated by grid-wide syncs, and the runtime launches that kernel instead of one
 * kernel per instruction (runtime/exec.c; it falls back to the per-instruction kernels,
 * which stay in the cubin, where a cooperative launch is unavailable).  Exact by
 * construction: every phase runs the same device code as the separate kernels, and a phase
 * only reads values finished before the last sync.
 *
 * bg_ir_phases is the one definition of the phases: the IR printer shows them and the plan
 * (plan.c) computes the same grouping from buffers.  Instructions of parameters alone
 * (bg_ir_prep) are no phase: they run once when the parameters are bound. */
#include "bg.h"

#include <stdlib.h>

void bg_ir_prep(const BgModule *m, bool *prep) {
    for (int i = 0; i < m->ninsts; i++) {
        const BgInst *in = &m->insts[i];
        bool p = in->op != BG_OP_INPUT && in->op != BG_OP_GRAPH && in->op != BG_OP_OUTPUT &&
                 (in->type.kind == BG_TY_F32 || in->type.kind == BG_TY_B1);
        for (int d = 0; d < in->type.rank && p; d++) p = in->type.dim[d] >= 0;
        for (int k = 0; k < in->nargs && p; k++)
            if (in->args[k] != BG_NONE) p = in->args[k] < (BgRef)i && prep[in->args[k]];
        prep[i] = p;
    }
}

int bg_ir_phases(const BgModule *m, int *phase) {
    bool *prep = calloc((size_t)m->ninsts + 1, sizeof *prep);
    if (!prep) abort();
    bg_ir_prep(m, prep);
    int cur = -1;
    for (int i = 0; i < m->ninsts; i++) {
        const BgInst *in = &m->insts[i];
        phase[i] = -1;
        if ((bg_op_info(in->op)->flags & BG_OPF_LEAF) || in->op == BG_OP_OUTPUT || prep[i]) continue;
        bool dep = false;
        for (int k = 0; k < in->nargs; k++)
            if (in->args[k] != BG_NONE && in->args[k] < (BgRef)i && phase[in->args[k]] == cur &&
                cur >= 0)
                dep = true;
        if (cur < 0 || dep) cur++;
        phase[i] = cur;
    }
    free(prep);
    return cur + 1;
}

bool bg_pass_fuse_model(BgModule *m, BgDiagSink *d) {
    (void)d;
    m->fused = true;
    return true;
}
