/* elim_scale_binarize.c - the paper's "SCL before BIN is redundant", made exact.
 * BIN(SCL(t, r, c)) -> BIN(t) when every factor is provably >= +0 (produced by ABSMEAN or
 * PARAM_SCALE).  Exact under the sign-bit rule (docs/semantics.md): an IEEE product carries
 * the XOR of its operands' signs even when it underflows or a factor is +0.  An SCL that
 * loses its last consumer is left to dce. */
#include "bg.h"

static bool nonnegative(const BgModule *m, BgRef r) {
    if (r == BG_NONE) return true;
    BgOp op = m->insts[r].op;
    return op == BG_OP_ABSMEAN || op == BG_OP_PARAM_SCALE;
}

bool bg_pass_elim_scale_binarize(BgModule *m, BgDiagSink *d) {
    (void)d;
    for (int i = 0; i < m->ninsts; i++) {
        BgInst *in = &m->insts[i];
        if (in->op != BG_OP_BIN || in->nsteps) continue; /* a thresholded bin compares v itself */
        BgInst *s = &m->insts[in->args[0]];
        if (s->op != BG_OP_SCL || m->insts[s->args[0]].type.kind != BG_TY_F32 || !nonnegative(m, s->args[1]) || !nonnegative(m, s->args[2])) continue;
        in->args[0] = s->args[0];
    }
    return true;
}
