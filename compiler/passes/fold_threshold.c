/* fold_threshold.c - what sits between a value and its BIN becomes a threshold compare.
 *
 * bin(c_n(...c_1(v))), where every c_k is a per-channel monotone op of its first operand
 * (add.FFF of an f32[C] bias, scl with column factors only, batchnorm, relu) and each
 * intermediate value has that BIN as its only (transitive) consumer, becomes
 *     T = threshold chain(c_1; ...; c_n) : f32[2,C]      (inserted after its last operand)
 *     bin v epilogue(threshold T)
 * and the chain ops are deleted.  The terminal may also be an add.FFB of a bias (its add is
 * the last step).  bin(standardize(x)) with eps > 0 and no other use of the standardize
 * becomes bin.center x.  Exact: docs/semantics.md, section 7 (the chain is monotone per
 * channel, the threshold is the bisection of the same float operations; standardize divides
 * by a positive number).  fuse-bin then moves the compare into the producer's epilogue.
 * Runs dce at the end (the chain ops it made dead). */
#include "bg.h"

bool bg_pass_dce(BgModule *m, BgDiagSink *d);

typedef struct Chain {
    BgStep steps[BG_MAX_STEPS]; /* in execution order once complete; built backwards */
    BgRef slots[BG_MAX_STEPS][4];
    int nsteps, noperands;
} Chain;

static bool is_bias(const BgModule *m, BgRef r, int64_t cols) {
    const BgType *t = &m->insts[r].type;
    return t->kind == BG_TY_F32 && t->rank == 1 && t->dim[0] == cols;
}

/* The step instruction x stands for (its chain input is operand 0); false if none. */
static bool as_step(const BgModule *m, const BgInst *x, BgStep *st, BgRef sl[4]) {
    if (x->nsteps) return false;
    int64_t cols = x->type.dim[1];
    sl[0] = sl[1] = sl[2] = sl[3] = BG_NONE;
    st->eps = 0.0f;
    switch (x->op) {
    case BG_OP_ADD:
        if (x->prec[0] != 'F' || x->prec[2] != 'F' || !is_bias(m, x->args[1], cols)) return false;
        st->kind = BG_STEP_ADD;
        sl[0] = x->args[1];
        return true;
    case BG_OP_SCL:
        if (x->args[1] != BG_NONE || x->args[2] == BG_NONE) return false;
        st->kind = BG_STEP_SCL;
        sl[1] = x->args[2];
        return true;
    case BG_OP_BATCHNORM:
        st->kind = BG_STEP_BATCHNORM;
        st->eps = x->attrs.eps;
        for (int k = 1; k < x->nargs && k < 5; k++) sl[k - 1] = x->args[k];
        return true;
    case BG_OP_RELU:
        st->kind = BG_STEP_RELU;
        return true;
    default: return false;
    }
}

/* Prepends a step; false when the chain is full (the walk stops there). */
static bool prepend(Chain *c, BgStep st, const BgRef sl[4]) {
    int add = 0;
    for (int j = 0; j < 4; j++) add += sl[j] != BG_NONE;
    if (c->nsteps == BG_MAX_STEPS || c->noperands + add > BG_FUSE_MAX_OPERANDS) return false;
    for (int s = c->nsteps; s > 0; s--) {
        c->steps[s] = c->steps[s - 1];
        for (int j = 0; j < 4; j++) c->slots[s][j] = c->slots[s - 1][j];
    }
    c->steps[0] = st;
    for (int j = 0; j < 4; j++) c->slots[0][j] = sl[j];
    c->nsteps++;
    c->noperands += add;
    return true;
}

static bool same_table(const BgInst *x, const BgInst *t) {
    if (x->op != BG_OP_THRESHOLD || x->nargs != t->nargs || x->nsteps != t->nsteps || !bg_type_eq(x->type, t->type))
        return false;
    for (int k = 0; k < t->nargs; k++)
        if (x->args[k] != t->args[k]) return false;
    for (int s = 0; s < t->nsteps; s++)
        if (x->steps[s].kind != t->steps[s].kind || x->steps[s].eps != t->steps[s].eps) return false;
    return true;
}

/* Folds the chain ending at terminal i; returns true when it inserted a threshold before i
 * (so the terminal is now at i + 1). */
static bool fold(BgModule *m, int i) {
    BgInst *in = &m->insts[i];
    Chain c = {0};
    BgRef v;
    if (in->op == BG_OP_BIN && in->nsteps == 0) {
        v = in->args[0];
    } else if (in->op == BG_OP_ADD && in->nsteps == 0 && in->prec[0] == 'F' && in->prec[2] == 'B' &&
               is_bias(m, in->args[1], in->type.dim[1])) {
        BgStep st = {BG_STEP_ADD, 0.0f};
        BgRef sl[4] = {in->args[1], BG_NONE, BG_NONE, BG_NONE};
        prepend(&c, st, sl);
        v = in->args[0];
    } else {
        return false;
    }
    BgRef ops[BG_MAX_STEPS]; /* the chain ops (they die) */
    int nops = 0;
    for (;;) {
        BgStep st;
        BgRef sl[4];
        const BgInst *x = &m->insts[v];
        if (bg_ir_use_count(m, v) != 1 || !as_step(m, x, &st, sl) || !prepend(&c, st, sl)) break;
        ops[nops++] = v;
        v = x->args[0];
    }
    if (c.nsteps == 0) {
        const BgInst *x = &m->insts[v];
        if (in->op == BG_OP_BIN && x->op == BG_OP_STANDARDIZE && x->attrs.eps > 0.0f &&
            bg_ir_use_count(m, v) == 1) {
            in->op = BG_OP_BIN_CENTER; /* bin(fl((x - mu) / positive)) = bin(x - mu) */
            in->args[0] = x->args[0];
        }
        return false;
    }
    BgInst t = {0}, b = {0};
    for (int k = 0; k < BG_MAX_ARGS; k++) t.args[k] = b.args[k] = BG_NONE;
    t.op = BG_OP_THRESHOLD;
    t.type = bg_type_make(BG_TY_F32, 2, 2, in->type.dim[1]);
    t.loc = in->loc;
    int pos = 0;
    for (int s = 0; s < c.nsteps; s++)
        bg_inst_add_step(&t, (BgStepKind)c.steps[s].kind, c.steps[s].eps, c.slots[s]);
    for (int k = 0; k < t.nargs; k++)
        if (t.args[k] != BG_NONE && (int)t.args[k] + 1 > pos) pos = (int)t.args[k] + 1;
    BgRef tr = BG_NONE;
    for (int j = 0; j < i && tr == BG_NONE; j++) /* an identical table already made */
        if (same_table(&m->insts[j], &t)) tr = (BgRef)j;
    bool inserted = tr == BG_NONE;
    if (inserted) {
        while (pos < i && m->insts[pos].op == BG_OP_THRESHOLD) pos++; /* tables in the order made */
        tr = bg_ir_insert(m, pos, &t);
        if (v >= tr) v++;
        for (int k = 0; k < nops; k++)
            if (ops[k] >= tr) ops[k]++;
        i++;
    }
    for (int k = 0; k < nops; k++) /* dead now: their operands no longer count as uses */
        m->insts[ops[k]].nargs = m->insts[ops[k]].nsteps = 0;
    in = &m->insts[i];
    b.op = BG_OP_BIN; /* the terminal becomes the compare */
    b.type = in->type;
    b.type.kind = BG_TY_B1;
    b.loc = in->loc;
    b.args[0] = v;
    b.nargs = 1;
    bg_inst_add_step(&b, BG_STEP_THRESHOLD, 0.0f, &tr);
    *in = b;
    return inserted;
}

bool bg_pass_fold_threshold(BgModule *m, BgDiagSink *d) {
    for (int i = 0; i < m->ninsts; i++)
        if (fold(m, i)) i++;
    return bg_pass_dce(m, d);
}
