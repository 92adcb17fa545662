/* fold_standardize_mm.c - a standardize of the model's input features folded into the binary
 * product that reads it (docs/semantics.md, section 2.3; the inductive models' first layer).
 *
 *   y = bmm.FBB(standardize(X) {eps}, W)          X an input f32[N,K], W b1[K,M], eps > 0
 * becomes
 *   mu = rowmean(X)                               f32[N]: each row's mean
 *   s  = signsum(W)                               f32[M]: s_o = sum_k v(W[k,o]), an integer
 *   y  = bmm.FBB(X, W) epilogue(center mu, s)     bit = !signbit(fl(t - fl(mu_r * s_o)))
 * Per row, standardize is (x - mu) / (sd + eps) with sd + eps > 0, so the sign of
 * sum_k v(W[k,o]) (x_k - mu) / (sd + eps) is that of sum_k v(W[k,o]) x_k - mu s_o: the product
 * reads the raw features, whose zeros cost nothing (bag-of-words features are 1-5% nonzero:
 * the sparse variants over their CSR, templates/bmm_fb_csr.cuh and rowwise.cuh rowmean_csr),
 * where it read a dense standardized matrix (Cora: 2708 x 1433, a split-k product of 53 us).
 *
 * It changes rounding (the terms are no longer standardized one by one), so it is not exact:
 * like fp-order it is off under --fp-strict, and tests/unit/test_fp_order.c checks it against
 * the strict reference (differences within a rounding bound, flips counted).  That bound grows
 * with sum_k |x_k|, not with the centred sum_k |x_k - mu|: for features far from zero next to
 * their spread (|mu| >> sd, say values near 1e6 that differ by about 1) the folded sign is
 * noise wherever the centred sum is small, so such inputs want --fp-strict (or centring before
 * the model); bag-of-words features (mu about 0.01, sd about 0.1) are far from that.
 * Only a B result: a float result would need the division by sd + eps as well.
 * When every reader of the standardize is such a product, a bin or an absmean (no steps), the
 * bins become bin.center x and the absmeans absmean(x) prologue(standardize): both exact (a
 * positive divisor keeps the sign; the prologue is standardize's own operations in the warp
 * that sums the row, templates/rowwise.cuh absmean_std), and the standardize is left dead
 * (sage_bin's and saint_bin's first layer never write the standardized features).  Otherwise
 * only the products fold and the standardize stays for the others (a bin.center and an
 * absmean_std cost about a standardize each: no gain while it is computed anyway).
 * Runs after fuse-bin (the product then gives the bits itself) and before fp-order, which
 * gives the product the raw features' order and a row's sums one order whatever reads them;
 * dce removes what died. */
#include "bg.h"

#include <math.h>

static bool foldable(const BgModule *m, const BgInst *mm) {
    if (mm->op != BG_OP_BMM || mm->prec[0] != 'F' || mm->prec[1] != 'B' || mm->prec[2] != 'B' || mm->nsteps ||
        mm->nargs != 2)
        return false;
    BgRef s = mm->args[0], w = mm->args[1];
    if (s == BG_NONE || w == BG_NONE || s == w) return false;
    const BgInst *st = &m->insts[s];
    if (st->op != BG_OP_STANDARDIZE || st->nsteps || st->args[0] == BG_NONE || !(st->attrs.eps > 0.0f) ||
        !isfinite(st->attrs.eps)) /* an infinite divisor makes every standardized term a zero */
        return false;
    const BgInst *x = &m->insts[st->args[0]];
    const BgType *wt = &m->insts[w].type;
    return x->op == BG_OP_INPUT && x->type.kind == BG_TY_F32 && x->type.rank == 2 && wt->kind == BG_TY_B1 &&
           wt->rank == 2 && wt->dim[0] >= 1 && wt->dim[1] >= 1;
}

/* Rewrites the product at j; returns its new index. */
static int fold(BgModule *m, int j) {
    const BgInst mm = m->insts[j];
    const BgInst st = m->insts[mm.args[0]];
    BgRef x = st.args[0], w = mm.args[1];
    const BgType *xt = &m->insts[x].type;

    BgInst mu = {0};
    mu.op = BG_OP_ROW_MEAN;
    mu.type = bg_type_make(BG_TY_F32, 1, xt->dim[0], 0);
    mu.args[0] = x;
    mu.nargs = 1;
    mu.loc = st.loc;
    BgRef rmu = bg_ir_insert(m, j, &mu);

    BgInst s = {0};
    s.op = BG_OP_SIGN_SUM;
    s.type = bg_type_make(BG_TY_F32, 1, m->insts[w].type.dim[1], 0);
    s.args[0] = w;
    s.nargs = 1;
    s.loc = mm.loc;
    BgRef rs = bg_ir_insert(m, j + 1, &s);

    BgInst *t = &m->insts[j + 2];
    const BgRef sl[2] = {rmu, rs};
    t->args[0] = x;
    t->attrs.fp = (BgFpOrder){0}; /* fp-order chooses the raw features' order */
    bg_inst_add_step(t, BG_STEP_CENTER, 0.0f, sl); /* 2 operands + 2 slots: always fits */
    return j + 2;
}

/* Can instruction r, a reader of the standardize s, read its input instead (exactly, or as a
 * folded product)? */
static bool reader_folds(const BgModule *m, const BgInst *r, BgRef s) {
    if ((r->op == BG_OP_BIN || r->op == BG_OP_ABSMEAN) && !r->nsteps && r->nargs == 1 && r->args[0] == s) return true;
    return foldable(m, r) && r->args[0] == s && r->args[1] != s;
}

/* The bins and absmeans of standardize s when every reader of s folds (see above). */
static void fold_readers(BgModule *m, BgRef s) {
    const BgInst *st = &m->insts[s];
    if (st->op != BG_OP_STANDARDIZE || st->nsteps || st->args[0] == BG_NONE || !(st->attrs.eps > 0.0f) ||
        !isfinite(st->attrs.eps))
        return;
    const BgInst *x = &m->insts[st->args[0]];
    if (x->op != BG_OP_INPUT || x->type.kind != BG_TY_F32 || x->type.rank != 2) return;
    for (int i = (int)s + 1; i < m->ninsts; i++)
        for (int k = 0; k < m->insts[i].nargs; k++)
            if (m->insts[i].args[k] == s && !reader_folds(m, &m->insts[i], s)) return;
    const BgRef xr = st->args[0];
    const float eps = st->attrs.eps;
    for (int i = (int)s + 1; i < m->ninsts; i++) {
        BgInst *r = &m->insts[i];
        if (r->op == BG_OP_BIN && r->args[0] == s) {
            r->op = BG_OP_BIN_CENTER; /* bin(fl((x - mu) / positive)) = bin(x - mu) */
            r->args[0] = xr;
        } else if (r->op == BG_OP_ABSMEAN && r->args[0] == s) {
            BgInst f = *r;
            if (!bg_inst_add_prologue(&f, BG_STEP_STANDARDIZE, eps, NULL)) continue; /* no slots: fits */
            f.args[0] = xr;
            *r = f;
        }
    }
}

bool bg_pass_fold_standardize_mm(BgModule *m, BgDiagSink *d) {
    (void)d;
    if (m->fp_strict) return true;
    for (int s = 0; s < m->ninsts; s++) fold_readers(m, (BgRef)s);
    for (int j = 0; j < m->ninsts; j++)
        if (foldable(m, &m->insts[j])) j = fold(m, j);
    return true;
}
