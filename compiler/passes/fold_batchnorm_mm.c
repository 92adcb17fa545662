/* fold_batchnorm_mm.c - a batchnorm of the model's input features folded into the binary
 * product that reads it (docs/semantics.md, section 2.3; issue: sparse input features).
 *
 *   y = bmm.FB?(batchnorm(X, mean, var[, gamma, beta]) {eps}, W)        X an input
 * becomes
 *   s = batchnorm.scale(var[, gamma]) {eps}         s_k = inv_k [* gamma_k]      f32[K]
 *   c = batchnorm.shift(W, mean, s[, beta])         c_o = sum_k v(W[k,o]) (beta_k - mean_k s_k)
 *   t = bmm.FBF(X, W) prologue(scl none, s)         sum_k v(W[k,o]) fl(x_k s_k)
 *   y = add.FF?(t, c)
 * so the product reads the raw features: a zero feature contributes nothing (the row kernel,
 * templates/bmm_fb_rows.cuh, skips it: bag-of-words features are 1-5% nonzero), s and c depend
 * on parameters alone, and fold-threshold turns add + bin into a threshold compare.
 *
 * It changes rounding (the batchnorm is no longer applied element by element), so it is not
 * exact: like fp-order it is off under --fp-strict, and tests/unit/test_fp_order.c checks it
 * against the strict reference (floats within the rounding bound, sign flips counted).
 * Runs after split-batchnorm (each reader has its own copy) and before fold-threshold. */
#include "bg.h"

static bool foldable(const BgModule *m, const BgInst *mm) {
    if (mm->op != BG_OP_BMM || mm->prec[0] != 'F' || mm->prec[1] != 'B' || mm->nsteps || mm->nargs != 2) return false;
    BgRef b = mm->args[0];
    if (b == BG_NONE || mm->args[1] == b) return false;
    const BgInst *bn = &m->insts[b];
    if (bn->op != BG_OP_BATCHNORM || bn->nsteps || bn->args[0] == BG_NONE) return false;
    if (m->insts[bn->args[0]].op != BG_OP_INPUT || m->insts[mm->args[1]].type.kind != BG_TY_B1) return false;
    return bg_ir_use_count(m, b) == 1; /* the product is the batchnorm's only reader */
}

/* Rewrites the product at j; returns the index of the instruction that now defines y. */
static int fold(BgModule *m, int j) {
    BgInst mm = m->insts[j];
    const BgInst bn = m->insts[mm.args[0]];
    BgRef x = bn.args[0], mean = bn.args[1], var = bn.args[2];
    BgRef gamma = bn.nargs > 3 ? bn.args[3] : BG_NONE, beta = bn.nargs > 4 ? bn.args[4] : BG_NONE;
    BgRef w = mm.args[1];
    int64_t K = m->insts[w].type.dim[0], M = m->insts[w].type.dim[1];
    BgType vk = bg_type_make(BG_TY_F32, 1, K, 0), vm = bg_type_make(BG_TY_F32, 1, M, 0);

    BgInst s = {0};
    s.op = BG_OP_BN_SCALE;
    s.type = vk;
    s.args[0] = var;
    s.args[1] = gamma;
    s.nargs = gamma != BG_NONE ? 2 : 1;
    s.attrs.eps = bn.attrs.eps;
    s.loc = bn.loc;
    BgRef rs = bg_ir_insert(m, j, &s);

    BgInst c = {0};
    c.op = BG_OP_BN_SHIFT;
    c.type = vm;
    c.args[0] = w;
    c.args[1] = mean;
    c.args[2] = rs;
    c.args[3] = beta;
    c.nargs = beta != BG_NONE ? 4 : 3;
    c.loc = bn.loc;
    BgRef rc = bg_ir_insert(m, j + 1, &c);

    BgRef rt = (BgRef)(j + 2);
    BgInst *t = &m->insts[rt];
    const BgRef sl[2] = {BG_NONE, rs};
    t->args[0] = x;
    bg_inst_add_prologue(t, BG_STEP_SCL, 0.0f, sl); /* 2 operands + 2 slots: always fits */
    char z = t->prec[2];
    t->prec[2] = 'F';
    t->type.kind = BG_TY_F32;

    BgInst a = {0};
    a.op = BG_OP_ADD;
    snprintf(a.prec, sizeof a.prec, "FF%c", z);
    a.type = mm.type;
    a.args[0] = rt;
    a.args[1] = rc;
    a.nargs = 2;
    a.loc = mm.loc;
    BgRef ra = bg_ir_insert(m, j + 3, &a);
    for (int i = (int)ra + 1; i < m->ninsts; i++)
        for (int k = 0; k < m->insts[i].nargs; k++)
            if (m->insts[i].args[k] == rt) m->insts[i].args[k] = ra;
    return (int)ra;
}

bool bg_pass_fold_batchnorm_mm(BgModule *m, BgDiagSink *d) {
    (void)d;
    if (m->fp_strict) return true;
    for (int j = 0; j < m->ninsts; j++)
        if (foldable(m, &m->insts[j])) j = fold(m, j);
    return true;
}
