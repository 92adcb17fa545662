/* fuse_bin.c - BIN as an epilogue: X = op.??F(...); Y = BIN(X), where Y is X's only
 * consumer and op is BMM, BSPMM or ADD, becomes X = op.??B(...) and Y's uses read X.
 * Exact by definition: op.??B is bin(op.??F) (docs/semantics.md).  Dead code is removed
 * first so that a consumer nobody needs does not block the fusion. */
#include "bg.h"

bool bg_pass_dce(BgModule *m, BgDiagSink *d);

bool bg_pass_fuse_bin(BgModule *m, BgDiagSink *d) {
    bg_pass_dce(m, d); /* dead consumers must not count as uses */
    bool *keep = bg_arena_alloc(m->arena, sizeof(bool) * (size_t)(m->ninsts + 1));
    for (int i = 0; i < m->ninsts; i++) keep[i] = true;
    bool changed = false;
    for (int i = 0; i < m->ninsts; i++) {
        BgInst *in = &m->insts[i];
        if (in->op != BG_OP_BIN) continue;
        BgRef x = in->args[0];
        BgInst *p = &m->insts[x];
        if ((p->op != BG_OP_BMM && p->op != BG_OP_BSPMM && p->op != BG_OP_ADD) || p->prec[2] != 'F') continue;
        if (bg_ir_use_count(m, x) != 1) continue;
        p->prec[2] = 'B';
        p->type.kind = BG_TY_B1;
        for (int j = i + 1; j < m->ninsts; j++)
            for (int k = 0; k < m->insts[j].nargs; k++)
                if (m->insts[j].args[k] == (BgRef)i) m->insts[j].args[k] = x;
        keep[i] = false;
        changed = true;
    }
    if (changed) bg_ir_compact(m, keep);
    return true;
}
