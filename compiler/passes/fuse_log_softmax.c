/* fuse_log_softmax.c - log_softmax as the row tail of the aggregation before it:
 *
 *     y = bspmm_mm.PQX.XYF(A, x, W) [mm(...)] [epilogue(e_1; ...)]     y read only by z
 *     z = log_softmax(y)
 * becomes
 *     y = bspmm_mm.PQX.XYF(A, x, W) [mm(...)] epilogue(e_1; ...; log_softmax)
 * and z's uses read y; the same for a bspmm.B?F (the bit aggregation, templates/spmm_bits.cuh,
 * which a step keeps off the fast kernel: bg_plan_bspmm_bits).  Both kernels hold a row's C
 * outputs in one warp, lane c holding output c, so for C <= BG_LSM_TAIL_MAX_COLS (32) the warp applies
 * log_softmax to the row it has just computed - the warp log_softmax of templates/rowwise.cuh,
 * the same operations in the same order (maximum and float64 sum in column order) - instead of
 * storing the row for a separate launch to read back.  Exact by definition (the interpreter
 * runs the step as bg_ref_log_softmax on the op's result): one launch, one phase and one grid
 * barrier fewer, and the row is written once.
 *
 * Not in a model with a readout: such models run as batches of small graphs on the per-graph
 * kernel, whose staged product + aggregation (codegen/cg_blocks.c) stores rows element by
 * element.  In the default pipeline after fuse-mm-spmm (which makes the bspmm_mm) and before
 * fp-order and fuse-model.  Linear: use counts kept with ir_uses.h. */
#include "bg.h"
#include "ir_uses.h"

bool bg_pass_dce(BgModule *m, BgDiagSink *d);

bool bg_pass_fuse_log_softmax(BgModule *m, BgDiagSink *d) {
    if (bg_ir_has_op(m, BG_OP_READOUT)) return true;
    bg_pass_dce(m, d); /* dead consumers must not count as uses */
    bool *keep = bg_ir_keep_new(m);
    int *uses = bg_uses_count(m, m->ninsts);
    BgRef *fwd = bg_uses_forward_new(m);
    bool changed = false;
    for (int i = 0; i < m->ninsts; i++) {
        bg_uses_resolve(fwd, &m->insts[i]);
        BgInst *in = &m->insts[i];
        if (in->op != BG_OP_LOG_SOFTMAX) continue;
        BgRef x = in->args[0];
        BgInst *p = &m->insts[x];
        const bool bits = p->op == BG_OP_BSPMM && p->prec[0] == 'B'; /* spmm_bits.cuh */
        if ((p->op != BG_OP_BSPMM_MM && !bits) || p->type.kind != BG_TY_F32 || uses[x] != 1) continue;
        int64_t C = p->type.dim[1];
        if (C < 1 || C > BG_LSM_TAIL_MAX_COLS) continue;
        if (p->nsteps > p->npro && p->steps[p->nsteps - 1].kind == BG_STEP_LOG_SOFTMAX) continue;
        if (!bg_inst_add_step(p, BG_STEP_LOG_SOFTMAX, 0.0f, NULL)) continue;
        changed = true;
        bg_uses_drop(uses, in);
        bg_uses_forward(fwd, uses, (BgRef)i, x);
        keep[i] = false;
        in->nargs = in->nsteps = 0;
    }
    if (changed) bg_ir_compact(m, keep);
    return true;
}
