/* aggregate_first.c - a graph convolution's aggregation moved before its product where that
 * gathers fewer bytes per edge: A (h W) -> (A h) W (docs/semantics.md, section 2.4).
 *
 *     t = bmm.BBF(h, W) [epilogue(scl none, m)]     h b1[N,K], W b1[K,M]; t read only here
 *     y = bspmm.F?Z(A, t) [epilogue(e...)]
 * becomes
 *     u = bspmm.B?F(A, h)                           f32[N,K]: sum over neighbours of +-c_j
 *     y = bmm.FBZ(u, W) epilogue(scl none, m; e...)
 * Per edge the aggregation gathers ceil(K/32) words of h instead of M floats of t: Reddit's
 * gcn_bin second layer (K = 128, M = 41) 16 bytes instead of 164.  A column scale commutes
 * with the aggregation (it multiplies column o of every row); a bias or a row-indexed step on
 * t would not, so the product may carry column scales only.
 *
 * It reassociates float sums (the neighbours' terms are summed per input column, then
 * combined by the product), so it changes rounding: off under --fp-strict, checked by
 * tests/unit/test_fp_order.c like fp-order and fold-batchnorm-mm.  Cost rule: it fires when
 * ceil(K/32) < M (fewer bytes gathered), fuse-mm-spmm would not fuse the pair (a fused
 * bspmm_mm also gathers only h's words, and stores no [N,K] intermediate) and the model has no
 * readout (its graphs are batches of small graphs, which the per-graph kernel runs with each
 * graph's product in shared memory: no gathers to save).  Placed after fuse-bin (the scale,
 * bias and bin are steps by then) and before fuse-mm-spmm.  In the default pipeline since the
 * bit aggregation (templates/spmm_bits.cuh) gathers 32 neighbours' rows a step: on the H100
 * the Reddit-sized gcn_bin's aggregation of bits takes 10.3 ms against 14.7 ms for the float
 * aggregation it replaces, end to end 11.5 against 16.6 ms (docs/performance.md; it was 18.4
 * ms with 4 rows a step). */
#include "bg.h"
#include "ir_uses.h"

#include <string.h>

/* The product's steps commute with the aggregation: column scales only. */
static bool column_scales_only(const BgInst *p) {
    if (p->npro) return false;
    for (int s = 0; s < p->nsteps; s++) {
        int a = bg_inst_step_arg(p, s);
        if (p->steps[s].kind != BG_STEP_SCL || p->args[a] != BG_NONE) return false;
    }
    return true;
}

bool bg_pass_aggregate_first(BgModule *m, BgDiagSink *d) {
    (void)d;
    if (m->fp_strict || bg_ir_has_op(m, BG_OP_READOUT)) return true;
    int *uses = bg_uses_count(m, m->ninsts);
    for (int i = 0; i < m->ninsts; i++) {
        BgInst *a = &m->insts[i];
        if (a->op != BG_OP_BSPMM || a->prec[0] != 'F' || a->npro || bg_inst_nbase(a) != 2) continue;
        BgRef t = a->args[1];
        const BgInst *p = &m->insts[t];
        if (p->op != BG_OP_BMM || strcmp(p->prec, "BBF") != 0 || uses[t] != 1 || !column_scales_only(p)) continue;
        const BgType *wt = &m->insts[p->args[1]].type;
        int64_t k = wt->dim[0], cols = wt->dim[1];
        if (k < 1 || cols < 1 || (k + 31) / 32 >= cols || bg_mm_spmm_cheap(m, p)) continue;
        int pb = bg_inst_nbase(p), ab = bg_inst_nbase(a);
        int nargs = 2 + (p->nargs - pb) + (a->nargs - ab), nsteps = p->nsteps + a->nsteps;
        if (nargs > BG_MAX_ARGS || nsteps > BG_MAX_STEPS) continue;

        BgInst u = {0};
        u.op = BG_OP_BSPMM;
        snprintf(u.prec, sizeof u.prec, "B%cF", a->prec[1]);
        u.type = bg_type_make(BG_TY_F32, 2, BG_DIM_N, k);
        u.args[0] = a->args[0];
        u.args[1] = p->args[0];
        u.nargs = 2;
        u.attrs.method = a->attrs.method;
        u.loc = a->loc;
        BgInst z = *a; /* type, provenance: the aggregation's */
        z.op = BG_OP_BMM;
        snprintf(z.prec, sizeof z.prec, "FB%c", a->prec[2]);
        z.attrs.method = BG_METHOD_AUTO;
        z.args[1] = p->args[1];
        int q = 2;
        for (int j = pb; j < p->nargs; j++) z.args[q++] = p->args[j];
        for (int j = ab; j < a->nargs; j++) z.args[q++] = a->args[j];
        for (; q < BG_MAX_ARGS; q++) z.args[q] = BG_NONE;
        z.nargs = nargs;
        for (int s = 0; s < p->nsteps; s++) z.steps[s] = p->steps[s];
        for (int s = 0; s < a->nsteps; s++) z.steps[p->nsteps + s] = a->steps[s];
        z.npro = 0;
        z.nsteps = (uint8_t)nsteps;
        if (bg_inst_noperands(&z) > BG_FUSE_MAX_OPERANDS) continue;

        BgRef ru = bg_ir_insert(m, i, &u); /* right before the aggregation: its operands precede it */
        z.args[0] = ru; /* z's other operands precede the aggregation, so they keep their numbers */
        m->insts[i + 1] = z;
        uses = bg_uses_count(m, m->ninsts); /* the module grew: recount (rare: once a layer) */
        i++;
    }
    return true;
}
