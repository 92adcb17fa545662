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
 * Runs dce at the end (the chain ops it made dead).
 *
 * Linear: use counts are kept up to date (ir_uses.h); identical tables are found through a
 * hash; new tables wait in a side list with their place ("before original instruction g, after
 * the tables already put there") and the module is rebuilt once at the end, instead of one
 * insertion (moving and renumbering everything after it) per table. */
#include "bg.h"
#include "hashtab.h"
#include "ir_uses.h"

#include <stdlib.h>
#include <string.h>

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
        if (m->insts[x->args[0]].type.kind != BG_TY_F32 || x->args[1] != BG_NONE || x->args[2] == BG_NONE) return false;
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

typedef struct Fold {
    BgModule *m;
    int n0;          /* instructions before the pass; refs >= n0 are new tables, n0 + k = tab[k] */
    int *uses;       /* use counts by ref, new tables included */
    BgInst *tab;     /* the new tables, in the order made (malloc'd) */
    int *gap;        /* tab[k] goes before original instruction gap[k], after the tables made
                      * there before it */
    int ntab, cap;
    BgHashTab tables; /* table_hash -> ref, for every table before the walk's position */
} Fold;

static const BgInst *inst_of(const Fold *f, BgRef r) {
    return (int)r < f->n0 ? &f->m->insts[r] : &f->tab[r - (BgRef)f->n0];
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

/* Equal under same_table => equal hashes. */
static uint64_t table_hash(const BgInst *t) {
    uint64_t h = bg_hash_mix((uint64_t)t->nargs, (uint64_t)t->nsteps);
    h = bg_hash_mix(h, (uint64_t)t->type.kind * 4u + (uint64_t)t->type.rank);
    h = bg_hash_mix(bg_hash_mix(h, (uint64_t)t->type.dim[0]), (uint64_t)t->type.dim[1]);
    for (int k = 0; k < t->nargs; k++) h = bg_hash_mix(h, t->args[k]);
    for (int s = 0; s < t->nsteps; s++) {
        float e = t->steps[s].eps;
        if (e == 0.0f) e = 0.0f; /* -0 == +0 */
        uint32_t u;
        memcpy(&u, &e, sizeof u);
        h = bg_hash_mix(bg_hash_mix(h, t->steps[s].kind), u);
    }
    return h;
}

/* Does ref a come before ref b in the module as it will be (a table made in gap g comes
 * before original instruction g, tables of one gap in the order made)? */
static bool before(const Fold *f, BgRef a, BgRef b) {
    long ga = (int)a < f->n0 ? (long)a : f->gap[a - (BgRef)f->n0];
    long gb = (int)b < f->n0 ? (long)b : f->gap[b - (BgRef)f->n0];
    if (ga != gb) return ga < gb;
    if (((int)a < f->n0) != ((int)b < f->n0)) return (int)b < f->n0; /* the table first */
    return a < b;
}

/* The first table identical to t before the terminal, or BG_NONE. */
static BgRef find_table(const Fold *f, const BgInst *t, uint64_t h) {
    BgRef best = BG_NONE;
    size_t it = 0;
    for (int32_t r; (r = bg_htab_next(&f->tables, h, &it)) >= 0;)
        if (same_table(inst_of(f, (BgRef)r), t) && (best == BG_NONE || before(f, (BgRef)r, best))) best = (BgRef)r;
    return best;
}

/* Adds table t in gap g: after the original instruction of its last operand (the tables after
 * it, and original tables there, stay in front: tables in the order made), before terminal i. */
static BgRef add_table(Fold *f, const BgInst *t, uint64_t h, int i) {
    int g = 0;
    for (int k = 0; k < t->nargs; k++)
        if (t->args[k] != BG_NONE && (int)t->args[k] + 1 > g) g = (int)t->args[k] + 1;
    while (g < i && f->m->insts[g].op == BG_OP_THRESHOLD) g++;
    if (f->ntab == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 16;
        BgInst *nt = bg_xmalloc(sizeof *nt * (size_t)f->cap);
        int *ng = bg_xmalloc(sizeof *ng * (size_t)f->cap);
        if (f->ntab) {
            memcpy(nt, f->tab, sizeof *nt * (size_t)f->ntab);
            memcpy(ng, f->gap, sizeof *ng * (size_t)f->ntab);
        }
        free(f->tab);
        free(f->gap);
        f->tab = nt;
        f->gap = ng;
    }
    f->tab[f->ntab] = *t;
    f->gap[f->ntab] = g;
    BgRef r = (BgRef)(f->n0 + f->ntab++);
    bg_uses_take(f->uses, t);
    bg_htab_put(&f->tables, h, (int32_t)r);
    return r;
}

/* Folds the chain ending at terminal i. */
static void fold(Fold *f, int i) {
    BgModule *m = f->m;
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
        return;
    }
    BgRef ops[BG_MAX_STEPS]; /* the chain ops (they die) */
    int nops = 0;
    for (;;) {
        BgStep st;
        BgRef sl[4];
        const BgInst *x = inst_of(f, v);
        if (f->uses[v] != 1 || !as_step(m, x, &st, sl) || !prepend(&c, st, sl)) break;
        ops[nops++] = v;
        v = x->args[0];
    }
    if (c.nsteps == 0) {
        const BgInst *x = inst_of(f, v);
        if (in->op == BG_OP_BIN && x->op == BG_OP_STANDARDIZE && x->attrs.eps > 0.0f && f->uses[v] == 1) {
            bg_uses_drop(f->uses, in);
            in->op = BG_OP_BIN_CENTER; /* bin(fl((x - mu) / positive)) = bin(x - mu) */
            in->args[0] = x->args[0];
            bg_uses_take(f->uses, in);
        }
        return;
    }
    BgInst t = {0}, b = {0};
    for (int k = 0; k < BG_MAX_ARGS; k++) t.args[k] = b.args[k] = BG_NONE;
    t.op = BG_OP_THRESHOLD;
    t.type = bg_type_make(BG_TY_F32, 2, 2, in->type.dim[1]);
    t.loc = in->loc;
    for (int s = 0; s < c.nsteps; s++)
        bg_inst_add_step(&t, (BgStepKind)c.steps[s].kind, c.steps[s].eps, c.slots[s]);
    uint64_t h = table_hash(&t);
    BgRef tr = find_table(f, &t, h); /* an identical table already made */
    if (tr == BG_NONE) tr = add_table(f, &t, h, i);
    for (int k = 0; k < nops; k++) { /* dead now: their operands no longer count as uses */
        BgInst *x = &m->insts[ops[k]];
        bg_uses_drop(f->uses, x);
        x->nargs = x->nsteps = 0;
    }
    b.op = BG_OP_BIN; /* the terminal becomes the compare */
    b.type = in->type;
    b.type.kind = BG_TY_B1;
    b.loc = in->loc;
    b.args[0] = v;
    b.nargs = 1;
    bg_inst_add_step(&b, BG_STEP_THRESHOLD, 0.0f, &tr);
    bg_uses_drop(f->uses, in);
    *in = b;
    bg_uses_take(f->uses, in);
}

/* Puts the new tables in their places and renumbers every operand, in one pass (in place,
 * from the back, when the array has room). */
static void place_tables(Fold *f) {
    BgModule *m = f->m;
    int n0 = f->n0, total = n0 + f->ntab;
    int *first = bg_xcalloc((size_t)n0 + 2, sizeof(int)); /* tables of gaps < g: first[g] */
    for (int k = 0; k < f->ntab; k++) first[f->gap[k] + 1]++;
    for (int g = 0; g <= n0; g++) first[g + 1] += first[g];
    int *fill = bg_xcalloc((size_t)n0 + 1, sizeof(int));
    BgRef *map = bg_xmalloc(sizeof(BgRef) * (size_t)total + 1);
    for (int o = 0; o < n0; o++) map[o] = (BgRef)(o + first[o + 1]); /* after its gap's tables */
    for (int k = 0; k < f->ntab; k++) { /* gap g's tables, in the order made, before original g */
        int g = f->gap[k];
        map[n0 + k] = (BgRef)(g + first[g] + fill[g]++);
    }
    BgInst *out = m->insts;
    if (m->cap < total) {
        m->cap = 2 * total;
        out = bg_arena_alloc(m->arena, sizeof(BgInst) * (size_t)m->cap);
    }
    for (int o = n0 - 1; o >= 0; o--) out[map[o]] = m->insts[o]; /* map[o] >= o: back to front */
    for (int k = 0; k < f->ntab; k++) out[map[n0 + k]] = f->tab[k];
    for (int i = 0; i < total; i++)
        for (int k = 0; k < out[i].nargs; k++)
            if (out[i].args[k] != BG_NONE) out[i].args[k] = map[out[i].args[k]];
    m->insts = out;
    m->ninsts = total;
    free(map);
    free(fill);
    free(first);
}

bool bg_pass_fold_threshold(BgModule *m, BgDiagSink *d) {
    Fold f;
    memset(&f, 0, sizeof f);
    f.m = m;
    f.n0 = m->ninsts;
    f.uses = bg_uses_count(m, 2 * m->ninsts);
    for (int i = 0; i < f.n0; i++) {
        if (m->insts[i].op == BG_OP_THRESHOLD) bg_htab_put(&f.tables, table_hash(&m->insts[i]), i);
        fold(&f, i);
    }
    if (f.ntab) place_tables(&f);
    free(f.tab);
    free(f.gap);
    bg_htab_free(&f.tables);
    return bg_pass_dce(m, d);
}
