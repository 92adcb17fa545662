/* fuse_bin.c - BIN as an epilogue: X = op.??F(...); Y = BIN(X), where Y is X's only
 * consumer and op is BMM, BSPMM or ADD (with or without an epilogue), becomes
 * X = op.??B(...) and Y's uses read X.  A thresholded BIN (fold-threshold) brings its
 * threshold step along: op.??B(...) epilogue(...; threshold T).  Exact by definition:
 * op.??B is bin(op.??F), and a last threshold step is the thresholded bin of the value
 * (docs/semantics.md).  The fused instruction stays where X was, or moves to Y's place when
 * T is defined after X.  Dead code is removed first so that a consumer nobody needs does not
 * block the fusion.  Linear: use counts are kept up to date (ir_uses.h) and Y's uses are
 * redirected to X as the walk reaches them. */
#include "bg.h"
#include "ir_uses.h"

bool bg_pass_dce(BgModule *m, BgDiagSink *d);

bool bg_pass_fuse_bin(BgModule *m, BgDiagSink *d) {
    bg_pass_dce(m, d); /* dead consumers must not count as uses */
    bool *keep = bg_ir_keep_new(m);
    int *uses = bg_uses_count(m, m->ninsts);
    BgRef *fwd = bg_uses_forward_new(m);
    bool changed = false;
    for (int i = 0; i < m->ninsts; i++) {
        bg_uses_resolve(fwd, &m->insts[i]);
        BgInst *in = &m->insts[i];
        if (in->op != BG_OP_BIN) continue;
        BgRef x = in->args[0];
        BgInst *p = &m->insts[x];
        if ((p->op != BG_OP_BMM && p->op != BG_OP_BSPMM && p->op != BG_OP_ADD) || p->prec[2] != 'F') continue;
        if (uses[x] != 1) continue;
        BgInst f = *p;
        f.prec[2] = 'B';
        f.type.kind = BG_TY_B1;
        BgRef t = in->nsteps ? in->args[1] : BG_NONE; /* the threshold table */
        if (t != BG_NONE && (bg_inst_noperands(&f) + 1 > BG_FUSE_MAX_OPERANDS ||
                             !bg_inst_add_step(&f, BG_STEP_THRESHOLD, 0.0f, &t)))
            continue;
        changed = true;
        bg_uses_drop(uses, p);
        bg_uses_drop(uses, in); /* dead or replaced: its operands no longer count as uses */
        if (t == BG_NONE || t < x) { /* in place: Y's users read X */
            *p = f;
            bg_uses_take(uses, p);
            bg_uses_forward(fwd, uses, (BgRef)i, x);
            keep[i] = false;
            in->nargs = in->nsteps = 0;
        } else { /* T comes after X: the fused op takes Y's place */
            *in = f;
            bg_uses_take(uses, in);
            keep[x] = false;
            p->nargs = p->nsteps = p->npro = 0;
        }
    }
    if (changed) bg_ir_compact(m, keep);
    return true;
}
