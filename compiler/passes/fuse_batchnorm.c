/* fuse_batchnorm.c - an inference batchnorm as the input prologue of the BMM (or the
 * absmean) that reads it.
 *
 * Y = batchnorm(X, mean, var[, gamma, beta]) {eps} whose only consumer is a bmm.F??(Y, W)
 * (Y its activation operand, no prologue yet), or an absmean(Y), becomes
 *     bmm.F??(X, W) prologue(batchnorm mean, var[, gamma, beta] eps=EPS)
 *     absmean(X) prologue(batchnorm mean, var[, gamma, beta] eps=EPS)
 * and the batchnorm is deleted: every element is normalised as the product reads it, with
 * batchnorm's float operations in batchnorm's order (fl(fl(x - mean) * inv) [* gamma]
 * [+ beta], inv = fl(1 / fl(sqrt(fl(var + eps))))), so the value is the same bit for bit and
 * the normalised matrix is never stored (docs/semantics.md, section 7).
 *
 * Linear: the uses of every value are counted once, up front.  A fusion at batchnorm i only
 * edits operands naming values before i (and i itself), so the counts and users of the later
 * batchnorms stay exact. */
#include "bg.h"
#include "ir_uses.h"

bool bg_pass_fuse_batchnorm(BgModule *m, BgDiagSink *d) {
    (void)d;
    bool *keep = bg_arena_alloc(m->arena, sizeof(bool) * (size_t)(m->ninsts + 1));
    int *uses = bg_uses_count(m, m->ninsts);
    int *user = bg_arena_alloc(m->arena, sizeof(int) * (size_t)(m->ninsts + 1)); /* last user */
    for (int i = 0; i < m->ninsts; i++)
        for (int k = 0; k < m->insts[i].nargs; k++)
            if (m->insts[i].args[k] != BG_NONE) user[m->insts[i].args[k]] = i;
    bool changed = false;
    for (int i = 0; i < m->ninsts; i++) {
        keep[i] = true;
        BgInst *bn = &m->insts[i];
        if (bn->op != BG_OP_BATCHNORM || bn->nsteps) continue;
        if (uses[i] != 1) continue; /* the only instruction using it */
        int j = user[i];
        BgInst *mm = &m->insts[j];
        bool bmm = mm->op == BG_OP_BMM && mm->prec[0] == 'F' && !mm->npro && mm->args[1] != (BgRef)i;
        bool absmean = mm->op == BG_OP_ABSMEAN && !mm->nsteps && bn->type.rank == 2;
        if ((!bmm && !absmean) || mm->args[0] != (BgRef)i) continue;
        BgRef sl[4] = {bn->args[1], bn->args[2], bn->nargs > 3 ? bn->args[3] : BG_NONE,
                       bn->nargs > 4 ? bn->args[4] : BG_NONE};
        int gained = 0;
        for (int k = 0; k < 4; k++) gained += sl[k] != BG_NONE;
        BgInst f = *mm;
        if (bg_inst_noperands(&f) + gained > BG_FUSE_MAX_OPERANDS ||
            !bg_inst_add_prologue(&f, BG_STEP_BATCHNORM, bn->attrs.eps, sl))
            continue;
        f.args[0] = bn->args[0]; /* the batchnorm's operands all precede it, so the bmm */
        *mm = f;
        bn->nargs = 0; /* dead */
        keep[i] = false;
        changed = true;
    }
    if (changed) bg_ir_compact(m, keep);
    return true;
}
