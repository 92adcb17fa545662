/* fuse_mm_spmm.c - a BMM followed by a BSPMM as one op, the paper's high-level form of a
 * graph convolution: y = A (x W) without storing x W.
 *
 *     t = bmm.PQX(x, W) [epilogue(s_1; ...)]          t read only by the bspmm
 *     y = bspmm.XYZ(A, t) [epilogue(e_1; ...)]
 * becomes, in the bspmm's place (every operand it reads precedes the bspmm),
 *     y = bspmm_mm.PQX.XYZ(A, x, W) [mm(s_1; ...)] [epilogue(e_1; ...)]
 * and the bmm is deleted.  The aggregation recomputes row t_j of the product (with the bmm's
 * steps) for every neighbour j instead of reading a stored [N,M] tensor.  Row j of the product
 * is a function of row j of x (and of row j of a row-indexed step operand) alone, computed by
 * the same operations either way, so the aggregation consumes the very floats or bits the
 * unfused pair stores: exact (docs/semantics.md, section 7).  An output counts as a use, so a
 * product that is also a model output is never fused (it must be stored anyway).
 *
 * Cost rule (docs/ir.md, section 5).  Fused, t_j is computed once per edge instead of once per
 * node, so the pass fires only where that is cheap and the gathered row shrinks:
 *   - the product is a popcount product: P = Q = B (so no prologue), and W is a `param` (a
 *     constant the kernel reads as B1T, ceil(K/32) words per output column);
 *   - recomputing t_j costs at most MM_SPMM_MAX_WORDS popcount words: M * ceil(K/32) <= 64;
 *   - the row gathered per edge, ceil(K/32) words of x_j, is no larger than the row of t it
 *     replaces: M floats (X = F) or ceil(M/32) words (X = B);
 *   - the fused op keeps to BG_FUSE_MAX_OPERANDS operands and the step limits.
 * examples/gcn_bin.bgnn's second layer (bmm.BBF 64 -> 7 with its scale, then bspmm.FBF over the
 * sym adjacency) fuses: 7 * 2 = 14 words per edge, 2 words gathered instead of 7 floats.  Its
 * first layer (bmm.FBB) is not a popcount product and stays.
 *
 * In the default pipeline after fuse-bin (the bmm's scale and the bspmm's bias and bin must
 * already be steps, so that the two are adjacent) and before fuse-model; the GPU kernel is
 * templates/mm_spmm.cuh (cg_cuda.c, BG_OP_BSPMM_MM).  Use counts are kept up to date as it
 * fuses (ir_uses.h): linear. */
#include "bg.h"
#include "ir_uses.h"

#define MM_SPMM_MAX_WORDS 64 /* popcount words recomputed per edge */

static int64_t words_of(int64_t bits) { return (bits + 31) / 32; }

/* The cost rule for the product p (a bmm) feeding an aggregation (bg.h). */
bool bg_mm_spmm_cheap(const BgModule *m, const BgInst *p) {
    if (p->prec[0] != 'B' || p->prec[1] != 'B' || p->npro) return false;
    const BgInst *w = &m->insts[p->args[1]];
    if (w->op != BG_OP_PARAM || w->type.rank != 2) return false;
    int64_t k = w->type.dim[0], cols = w->type.dim[1];
    if (k < 1 || cols < 1) return false;
    int64_t kw = words_of(k), trow = p->prec[2] == 'B' ? words_of(cols) : cols;
    return cols * kw <= MM_SPMM_MAX_WORDS && kw <= trow;
}

/* The fused instruction of aggregation a over product p, in *f; false at the limits. */
static bool fuse(const BgInst *a, const BgInst *p, BgInst *f) {
    int pb = bg_inst_nbase(p), ab = bg_inst_nbase(a);
    int nargs = 3 + (p->nargs - pb) + (a->nargs - ab), nsteps = p->nsteps + a->nsteps;
    if (nargs > BG_MAX_ARGS || nsteps > BG_MAX_STEPS) return false;
    *f = *a; /* type, letters, method, provenance: the aggregation's */
    f->op = BG_OP_BSPMM_MM;
    f->args[0] = a->args[0];
    f->args[1] = p->args[0];
    f->args[2] = p->args[1];
    int k = 3;
    for (int j = pb; j < p->nargs; j++) f->args[k++] = p->args[j]; /* mm steps' slots */
    for (int j = ab; j < a->nargs; j++) f->args[k++] = a->args[j]; /* epilogue's slots */
    for (; k < BG_MAX_ARGS; k++) f->args[k] = BG_NONE;
    f->nargs = nargs;
    for (int s = 0; s < p->nsteps; s++) f->steps[s] = p->steps[s];
    for (int s = 0; s < a->nsteps; s++) f->steps[p->nsteps + s] = a->steps[s];
    f->npro = p->nsteps;
    f->nsteps = (uint8_t)nsteps;
    return bg_inst_noperands(f) <= BG_FUSE_MAX_OPERANDS;
}

bool bg_pass_fuse_mm_spmm(BgModule *m, BgDiagSink *d) {
    (void)d;
    bool *keep = bg_ir_keep_new(m);
    int *uses = bg_uses_count(m, m->ninsts);
    bool changed = false;
    for (int i = 0; i < m->ninsts; i++) {
        BgInst *a = &m->insts[i];
        if (a->op != BG_OP_BSPMM || a->npro || bg_inst_nbase(a) != 2) continue;
        BgRef t = a->args[1];
        BgInst *p = &m->insts[t];
        if (p->op != BG_OP_BMM || p->prec[2] != a->prec[0] || uses[t] != 1 || !bg_mm_spmm_cheap(m, p))
            continue;
        BgInst f;
        if (!fuse(a, p, &f)) continue;
        bg_uses_drop(uses, a);
        bg_uses_drop(uses, p);
        *a = f;
        bg_uses_take(uses, a);
        keep[t] = false;
        p->nargs = 0; /* dead */
        p->nsteps = p->npro = 0;
        changed = true;
    }
    if (changed) bg_ir_compact(m, keep);
    return true;
}
