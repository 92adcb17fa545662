/* ir_verify.c - structural checks of the IR, run after lowering and after every pass.
 * A failure is a bgnn bug (E9002), never a user error: sema reports user errors first.
 * Checks: arity, operands defined before use, optional operands only where allowed, and
 * the typing rule of every op (kinds, precisions, shapes) and of the fused steps, as
 * docs/ir.md states it (section 4; a bspmm_mm: section 4.2). */
#include "bg.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const BgModule *m;
    BgDiagSink *d;
    int i;
    bool ok;
} V;

static void fail(V *v, const char *what) {
    if (!v->ok) return; /* one message per instruction */
    v->ok = false;
    const BgInst *in = &v->m->insts[v->i];
    bg_diag_at(v->d, BG_SEV_ERROR, BG_E_VERIFY, v->m->src, in->loc, "IR verifier: %%%d (%s): %s",
               v->i, bg_op_info(in->op)->name, what);
}

static const BgType *arg(V *v, int k) {
    const BgInst *in = &v->m->insts[v->i];
    BgRef r = in->args[k];
    return r == BG_NONE ? NULL : &v->m->insts[r].type;
}

static bool is_kind(const BgType *t, BgTyKind k, int rank) { return t && t->kind == k && t->rank == rank; }
static BgTyKind kind_of(char p) { return p == 'B' ? BG_TY_B1 : BG_TY_F32; }
static bool prec_ok(const char *p) {
    if (strlen(p) != 3) return false;
    for (int i = 0; i < 3; i++)
        if (p[i] != 'F' && p[i] != 'B') return false;
    return true;
}

/* May step slot j of a step of kind k be none? */
static bool slot_optional(BgStepKind k, int j) {
    return k == BG_STEP_SCL || (k == BG_STEP_BATCHNORM && j >= 2) || (k == BG_STEP_ADD_SCL && j >= 1);
}

static bool is_vec(const BgType *t, int64_t n) { return is_kind(t, BG_TY_F32, 1) && t->dim[0] == n; }

/* The steps of in (docs/ir.md, section 4.1): which ops take which steps, and their operands. */
static void check_steps(V *v, int nbase) {
    const BgInst *in = &v->m->insts[v->i];
    const BgType *t = &in->type;
    bool chain = in->op == BG_OP_THRESHOLD;
    if (in->npro > in->nsteps) { fail(v, "more prologue steps than steps"); return; }
    if (chain) {
        if (in->nsteps < 1 || in->npro) { fail(v, "a threshold needs a chain of steps"); return; }
        if (!is_kind(t, BG_TY_F32, 2) || t->dim[0] != 2 || t->dim[1] < 0) { fail(v, "a threshold is f32[2,C]"); return; }
    } else if (in->nsteps) {
        /* an absmean takes a prologue and nothing else (its result is f32[R]) */
        bool pro_only = in->op == BG_OP_ABSMEAN && in->npro == in->nsteps;
        bool epi_ok = in->op == BG_OP_BMM || in->op == BG_OP_BSPMM || in->op == BG_OP_BSPMM_MM ||
                      in->op == BG_OP_ADD || in->op == BG_OP_BIN || pro_only;
        if (!epi_ok || (in->npro && in->op != BG_OP_BMM && in->op != BG_OP_BSPMM_MM && !pro_only)) { fail(v, "steps on an op that takes none"); return; }
        if (!pro_only && (t->rank != 2 || (t->kind != BG_TY_F32 && t->kind != BG_TY_B1))) { fail(v, "steps need a matrix result"); return; }
    }
    int64_t R = t->dim[0], C = t->dim[1];
    for (int s = 0; s < in->nsteps && v->ok; s++) {
        BgStepKind k = (BgStepKind)in->steps[s].kind;
        int a = bg_inst_step_arg(in, s);
        const BgType *o[4] = {NULL, NULL, NULL, NULL};
        for (int j = 0; j < bg_step_slots(k); j++) o[j] = arg(v, a + j);
        /* a bspmm_mm's mm steps [0, npro) are the epilogue of its product t (docs/ir.md,
         * section 4.2): epilogue steps on t, of the result's shape [N,M], t's kind prec[0] */
        bool pro = s < in->npro, mm = pro && in->op == BG_OP_BSPMM_MM;
        bool last = s == (mm ? in->npro : in->nsteps) - 1;
        bool b1 = mm ? in->prec[0] == 'B' : t->kind == BG_TY_B1;
        if (pro && !mm) {
            const BgType *x = nbase > 0 ? arg(v, 0) : NULL;
            bool xf = in->op == BG_OP_ABSMEAN ? x && x->kind == BG_TY_F32 : in->prec[0] == 'F';
            /* a bmm's prologue may also be a scl by column factors (fold-batchnorm-mm), an
             * absmean's a standardize of its rows (fold-standardize-mm) */
            bool scl = k == BG_STEP_SCL && in->op == BG_OP_BMM && !o[0] && o[1];
            bool std = k == BG_STEP_STANDARDIZE && in->op == BG_OP_ABSMEAN;
            if ((k != BG_STEP_BATCHNORM && !scl && !std) || in->npro != 1 || !xf || !x) { fail(v, "a prologue is one batchnorm (or, on a bmm, one scl by column factors; on an absmean, one standardize) of an F activation"); return; }
            if (std) {
                if (x->rank != 2 || !(in->steps[s].eps >= 0.0f)) fail(v, "a standardize prologue reads a matrix, with eps >= 0");
                continue;
            }
            int64_t K = x->dim[1];
            if (scl) {
                if (!is_vec(o[1], K)) fail(v, "a prologue's scl factors must be f32[K]");
                continue;
            }
            if (!is_vec(o[0], K) || !is_vec(o[1], K) || (o[2] && !is_vec(o[2], K)) || (o[3] && !is_vec(o[3], K)))
                fail(v, "a prologue's batchnorm statistics must be f32[K]");
            continue;
        }
        if (k == BG_STEP_LOG_SOFTMAX) { /* fuse-log-softmax: a row tail, held by one warp */
            const bool agg = in->op == BG_OP_BSPMM_MM || (in->op == BG_OP_BSPMM && in->prec[0] == 'B');
            if (chain || pro || !agg || s != in->nsteps - 1 || t->kind != BG_TY_F32 || C < 1 || C > BG_LSM_TAIL_MAX_COLS)
                fail(v, "a log_softmax step is the last epilogue step of a bspmm_mm's or a bit aggregation's (bspmm.B*) f32 result of 1 to 32 columns");
            continue;
        }
        if (chain && k != BG_STEP_SCL && k != BG_STEP_ADD && k != BG_STEP_BATCHNORM && k != BG_STEP_RELU) { fail(v, "a chain takes scl, add, batchnorm and relu"); return; }
        if (!chain && k != BG_STEP_SCL && k != BG_STEP_ADD && k != BG_STEP_RELU && k != BG_STEP_THRESHOLD &&
            ((k != BG_STEP_CENTER && k != BG_STEP_ADD_SCL) || mm)) { fail(v, mm ? "mm steps are scl, add, relu and threshold" : "an epilogue takes scl, add, relu, threshold, center and add_scl"); return; }
        if (in->op == BG_OP_BIN && (k != BG_STEP_THRESHOLD || in->nsteps != 1)) { fail(v, "a bin's only step is a threshold"); return; }
        switch (k) {
        case BG_STEP_SCL:
            if (chain ? (o[0] || !is_vec(o[1], C)) : (!o[0] && !o[1]))
                fail(v, chain ? "a chain's scl has column factors only" : "scl without factors");
            else if ((o[0] && !is_vec(o[0], R)) || (o[1] && !is_vec(o[1], C)))
                fail(v, "scl factors must be f32[R] and f32[C]");
            break;
        case BG_STEP_ADD:
            if (!is_vec(o[0], C) && (chain || !is_kind(o[0], BG_TY_F32, 2) || o[0]->dim[0] != R || o[0]->dim[1] != C))
                fail(v, chain ? "a chain adds an f32[C] vector" : "add takes an f32[C] vector or an f32[R,C] matrix");
            break;
        case BG_STEP_THRESHOLD: {
            BgRef tr = in->args[a];
            if (!last || !b1) fail(v, mm ? "a threshold is the last mm step of a B product" : "a threshold is the last step of a b1 result");
            else if (tr == BG_NONE || v->m->insts[tr].op != BG_OP_THRESHOLD || !is_kind(o[0], BG_TY_F32, 2) || o[0]->dim[0] != 2 || o[0]->dim[1] != C)
                fail(v, "a threshold step reads a threshold f32[2,C] of the result's columns");
            break;
        }
        case BG_STEP_BATCHNORM:
            if (!is_vec(o[0], C) || !is_vec(o[1], C) || (o[2] && !is_vec(o[2], C)) || (o[3] && !is_vec(o[3], C)))
                fail(v, "batchnorm statistics must be f32[C]");
            break;
        case BG_STEP_RELU: break;
        case BG_STEP_CENTER:
            if (!is_vec(o[0], R) || !is_vec(o[1], C)) fail(v, "center's factors must be f32[R] and f32[C]");
            break;
        case BG_STEP_ADD_SCL:
            if (!is_kind(o[0], BG_TY_B1, 2) || o[0]->dim[0] != R || o[0]->dim[1] != C)
                fail(v, "add_scl adds a scl of a b1[R,C] matrix");
            else if ((o[1] && !is_vec(o[1], R)) || (o[2] && !is_vec(o[2], C)))
                fail(v, "add_scl's factors must be f32[R] and f32[C]");
            break;
        default: fail(v, "invalid step"); break;
        }
    }
    if (!chain && in->op != BG_OP_BIN && in->nsteps > in->npro && v->ok) {
        /* an epilogue runs on the float value of the op: its precisions say F before the steps */
        bool thr = in->steps[in->nsteps - 1].kind == BG_STEP_THRESHOLD;
        if (thr && in->prec[2] != 'B') fail(v, "a threshold step needs a B result");
    }
}

/* The recorded float order (docs/semantics.md, section 2): only on a float reduction; fma
 * only on a bmm.FF*; split-k only on a bmm with a float reduction, split = ceil(K / chunk);
 * lanes only on the float64 row sums (absmean, rowmean, standardize, bin.center, log_softmax),
 * 32 of them (256 on an absmean); slots only on a bspmm.B?? of a model without a readout, S
 * of its columns, H = BG_FP_SLOTS_HUB_MIN. */
static void check_fp(V *v) {
    const BgInst *in = &v->m->insts[v->i];
    BgFpOrder a = in->attrs.fp, fp = bg_inst_fp(v->m, in);
    if (fp.kind == BG_FP_NONE) {
        if ((a.kind != BG_FP_NONE && a.kind != BG_FP_SEQ) || a.fma) fail(v, "a float order on an instruction without a float reduction");
        return;
    }
    if (fp.kind != BG_FP_SEQ && fp.kind != BG_FP_SPLITK && fp.kind != BG_FP_LANES && fp.kind != BG_FP_SLOTS) {
        fail(v, "invalid float order");
        return;
    }
    if (fp.kind == BG_FP_SLOTS) {
        if (in->op != BG_OP_BSPMM || in->prec[0] != 'B' || fp.fma || in->type.rank != 2)
            fail(v, "slots is for an aggregation of bit activations (a bspmm.B) only");
        else if (fp.split != bg_fp_slots_for_cols(in->type.dim[1]))
            fail(v, "slots(S,...) needs S = 32 / min(8, words to a power of two) of the row's columns");
        else if (fp.hub != BG_FP_SLOTS_HUB_MIN || fp.chunk < 0 || fp.chunk >= fp.hub)
            fail(v, "slots(S,T,H) needs H = 4096 (the runtime's row list) and 0 <= T < H");
        else if (bg_ir_has_op(v->m, BG_OP_READOUT))
            fail(v, "slots is not for a model with a readout (its per-graph kernel sums in seq)");
        return;
    }
    if (fp.kind == BG_FP_LANES) {
        if ((!bg_op_row_sum(in->op) && in->op != BG_OP_LOG_SOFTMAX) || fp.fma || fp.chunk || !bg_fp_lanes_ok(fp.split))
            fail(v, "lanes(32) is for the row sums of absmean, rowmean, standardize, bin.center and log_softmax only");
        else if (fp.split != 32 && in->op != BG_OP_ABSMEAN)
            fail(v, "lanes(256) is for an absmean only");
        else if (in->op == BG_OP_LOG_SOFTMAX && !(in->type.rank == 2 && in->type.dim[1] > 32))
            fail(v, "lanes(32) on a log_softmax is for rows of more than 32 columns (a warp holds a narrower row a column a lane, in seq)");
        return;
    }
    bool bmm = in->op == BG_OP_BMM;
    if (fp.fma && !(bmm && in->prec[0] == 'F' && in->prec[1] == 'F')) { fail(v, "fma is for a bmm.FF* only"); return; }
    if (fp.kind == BG_FP_SEQ && (fp.split || fp.chunk)) { fail(v, "a seq order has no split"); return; }
    if (fp.kind == BG_FP_SPLITK) {
        int64_t k = bg_inst_bmm_k(v->m, in);
        if (!bmm) { fail(v, "split-k is for a bmm only"); return; }
        if (fp.chunk < 1 || fp.split < 2 || (int64_t)fp.split != (k + fp.chunk - 1) / fp.chunk)
            fail(v, "split-k needs split = ceil(K / chunk) >= 2");
    }
}

static void check_inst(V *v) {
    const BgInst *in = &v->m->insts[v->i];
    const BgOpInfo *info = bg_op_info(in->op);
    const BgType *t = &in->type;
    if (in->nargs < 0 || in->nargs > BG_MAX_ARGS || in->nsteps > BG_MAX_STEPS) { fail(v, "too many operands or steps"); return; }
    for (int s = 0; s < in->nsteps; s++)
        if (in->steps[s].kind >= BG_STEP_COUNT) { fail(v, "invalid step"); return; }
    int nbase = bg_inst_nbase(in);
    if (nbase < info->min_args || nbase > info->max_args) { fail(v, "wrong number of operands"); return; }
    for (int k = 0; k < in->nargs; k++) {
        BgRef r = in->args[k];
        if (r == BG_NONE) {
            bool opt = in->op == BG_OP_SCL && k > 0;
            for (int s = 0; s < in->nsteps && !opt; s++) {
                int a = bg_inst_step_arg(in, s);
                BgStepKind sk = (BgStepKind)in->steps[s].kind;
                if (k >= a && k < a + bg_step_slots(sk)) opt = slot_optional(sk, k - a);
            }
            if (!opt) { fail(v, "missing operand"); return; }
            continue;
        }
        if ((int)r >= v->i) { fail(v, "operand used before its definition"); return; }
        if (v->m->insts[r].op == BG_OP_OUTPUT) { fail(v, "an output used as an operand"); return; }
    }
    if ((info->flags & BG_OPF_PREC) && !prec_ok(in->prec)) { fail(v, "missing or invalid precision letters"); return; }
    check_steps(v, nbase);
    if (!v->ok) return;
    check_fp(v);
    if (!v->ok) return;
    const BgType *a0 = nbase > 0 ? arg(v, 0) : NULL;
    const BgType *a1 = nbase > 1 ? arg(v, 1) : NULL;
    switch (in->op) {
    case BG_OP_GRAPH:
        if (t->kind != BG_TY_ADJ) fail(v, "a graph must have type adj");
        break;
    case BG_OP_INPUT:
        if (!is_kind(t, BG_TY_F32, 2) || t->dim[0] != BG_DIM_N) fail(v, "an input must be f32[N,C]");
        break;
    case BG_OP_PARAM:
        if ((t->kind != BG_TY_F32 && t->kind != BG_TY_B1) || t->rank < 1 || t->dim[0] < 0) fail(v, "bad parameter type");
        break;
    case BG_OP_PARAM_SCALE:
        if (!is_kind(t, BG_TY_F32, 1)) fail(v, "a parameter scale must be f32[M]");
        break;
    case BG_OP_BIN:
    case BG_OP_BIN_CENTER:
        if (!is_kind(a0, BG_TY_F32, 2) || !is_kind(t, BG_TY_B1, 2) || a0->dim[0] != t->dim[0] || a0->dim[1] != t->dim[1])
            fail(v, "bin maps f32[R,C] to b1[R,C]");
        break;
    case BG_OP_THRESHOLD: break; /* check_steps */
    case BG_OP_BN_SCALE: /* (var[, gamma]) -> f32[K] */
        if (!is_kind(a0, BG_TY_F32, 1) || (a1 && !bg_type_eq(*a1, *a0)) || !bg_type_eq(*t, *a0))
            fail(v, "batchnorm.scale maps f32[K] statistics to f32[K]");
        break;
    case BG_OP_BN_SHIFT: { /* (W b1[K,M], mean, scale[, beta] f32[K]) -> f32[M] */
        if (!is_kind(a0, BG_TY_B1, 2) || a0->dim[0] < 0 || a0->dim[1] < 0) { fail(v, "batchnorm.shift needs b1[K,M] weights"); break; }
        for (int k = 1; k < nbase && v->ok; k++)
            if (!is_vec(arg(v, k), a0->dim[0])) fail(v, "batchnorm.shift statistics must be f32[K]");
        if (v->ok && !is_vec(t, a0->dim[1])) fail(v, "batchnorm.shift gives f32[M]");
        break;
    }
    case BG_OP_ABSMEAN:
        if (!is_kind(a0, BG_TY_F32, 2) || !is_kind(t, BG_TY_F32, 1) || t->dim[0] != a0->dim[0])
            fail(v, "absmean maps f32[R,C] to f32[R]");
        break;
    case BG_OP_ROW_MEAN:
        if (!is_kind(a0, BG_TY_F32, 2) || !is_kind(t, BG_TY_F32, 1) || t->dim[0] != a0->dim[0])
            fail(v, "rowmean maps f32[R,C] to f32[R]");
        break;
    case BG_OP_SIGN_SUM:
        if (!is_kind(a0, BG_TY_B1, 2) || a0->dim[0] < 0 || a0->dim[1] < 0 || !is_vec(t, a0->dim[1]))
            fail(v, "signsum maps b1[K,M] weights to f32[M]");
        break;
    case BG_OP_SCL: {
        const BgType *r = arg(v, 1), *c = arg(v, 2);
        BgType tf = *a0;
        tf.kind = BG_TY_F32;
        if ((!is_kind(a0, BG_TY_F32, 2) && !is_kind(a0, BG_TY_B1, 2)) || !bg_type_eq(tf, *t))
            fail(v, "scl maps an f32 or b1 matrix to f32 of its shape");
        else if (r && (!is_kind(r, BG_TY_F32, 1) || r->dim[0] != t->dim[0])) fail(v, "row factors must be f32[R]");
        else if (c && (!is_kind(c, BG_TY_F32, 1) || c->dim[0] != t->dim[1])) fail(v, "column factors must be f32[C]");
        else if (!r && !c) fail(v, "scl without factors");
        break;
    }
    case BG_OP_BMM:
        if (!is_kind(a0, kind_of(in->prec[0]), 2) || !is_kind(a1, kind_of(in->prec[1]), 2)) fail(v, "operand precisions differ from the variant");
        else if (a0->dim[1] != a1->dim[0]) fail(v, "inner dimensions differ");
        else if (!is_kind(t, kind_of(in->prec[2]), 2) || t->dim[0] != a0->dim[0] || t->dim[1] != a1->dim[1]) fail(v, "bad result type");
        break;
    case BG_OP_BSPMM:
        if (!a0 || a0->kind != BG_TY_ADJ) fail(v, "first operand must be a graph");
        else if (!is_kind(a1, kind_of(in->prec[0]), 2) || a1->dim[0] != BG_DIM_N) fail(v, "activation must be [N,C] of the variant's precision");
        else if (!is_kind(t, kind_of(in->prec[2]), 2) || t->dim[0] != BG_DIM_N || t->dim[1] != a1->dim[1]) fail(v, "bad result type");
        break;
    case BG_OP_BSPMM_MM: { /* bspmm.XYZ(A, bmm.PQX(x, W) mm(...)): x [N,K], W [K,M] -> [N,M] */
        const BgType *w = nbase > 2 ? arg(v, 2) : NULL;
        bool xk = a1 && a1->rank == 2 && (a1->kind == BG_TY_F32 || a1->kind == BG_TY_B1);
        bool wk = w && w->rank == 2 && (w->kind == BG_TY_F32 || w->kind == BG_TY_B1);
        if (!a0 || a0->kind != BG_TY_ADJ) fail(v, "first operand must be a graph");
        else if (!xk || a1->dim[0] != BG_DIM_N) fail(v, "the product's activation must be [N,K]");
        else if (!wk) fail(v, "the product's weights must be a matrix");
        else if (a1->dim[1] != w->dim[0]) fail(v, "inner dimensions differ");
        else if (!is_kind(t, kind_of(in->prec[2]), 2) || t->dim[0] != BG_DIM_N || t->dim[1] != w->dim[1]) fail(v, "bad result type");
        break;
    }
    case BG_OP_ADD:
        if (in->prec[0] != in->prec[1]) fail(v, "mixed-precision add");
        else if (!a0 || !a1 || a0->kind != kind_of(in->prec[0]) || a1->kind != kind_of(in->prec[1])) fail(v, "operand precisions differ from the variant");
        else if (!bg_type_eq(*a0, *a1) && !(a1->rank == 1 && a0->rank == 2 && a1->dim[0] == a0->dim[1] && a1->kind == BG_TY_F32)) fail(v, "shapes differ");
        else if (t->kind != kind_of(in->prec[2]) || t->rank != a0->rank || t->dim[0] != a0->dim[0] || t->dim[1] != a0->dim[1]) fail(v, "bad result type");
        break;
    case BG_OP_CONCAT: {
        int64_t cols = 0;
        for (int k = 0; k < in->nargs; k++) {
            const BgType *ak = arg(v, k);
            if (!ak || ak->rank != 2 || ak->kind != t->kind || ak->dim[0] != t->dim[0]) { fail(v, "operands must match the result's kind and rows"); return; }
            cols += ak->dim[1];
        }
        if (t->rank != 2 || cols != t->dim[1]) fail(v, "columns do not add up");
        break;
    }
    case BG_OP_RELU:
    case BG_OP_LOG_SOFTMAX:
    case BG_OP_STANDARDIZE:
        if (!is_kind(a0, BG_TY_F32, 2) || !bg_type_eq(*a0, *t)) fail(v, "expects and keeps an f32 matrix");
        break;
    case BG_OP_BATCHNORM:
        if (!is_kind(a0, BG_TY_F32, 2) || !bg_type_eq(*a0, *t)) fail(v, "expects and keeps an f32 matrix");
        for (int k = 1; k < nbase && v->ok; k++) {
            const BgType *ak = arg(v, k);
            if (!is_kind(ak, BG_TY_F32, 1) || ak->dim[0] != t->dim[1]) fail(v, "statistics must be f32[C]");
        }
        break;
    case BG_OP_READOUT:
        if (!is_kind(a0, BG_TY_F32, 2) || a0->dim[0] != BG_DIM_N || !a1 || a1->kind != BG_TY_ADJ) fail(v, "readout takes f32[N,C] and a graph");
        else if (!is_kind(t, BG_TY_F32, 2) || t->dim[0] != BG_DIM_G || t->dim[1] != a0->dim[1]) fail(v, "readout gives f32[G,C]");
        break;
    case BG_OP_OUTPUT:
        if (!bg_type_eq(*a0, *t) || !in->attrs.name) fail(v, "an output has its operand's type and a name");
        break;
    case BG_OP_COUNT: fail(v, "invalid op"); break;
    }
}

bool bg_ir_verify(const BgModule *m, BgDiagSink *d) {
    bool ok = true;
    for (int i = 0; i < m->ninsts; i++) {
        V v = {m, d, i, true};
        if ((unsigned)m->insts[i].op >= BG_OP_COUNT) {
            fail(&v, "invalid op");
        } else {
            check_inst(&v);
        }
        ok &= v.ok;
    }
    return ok;
}
