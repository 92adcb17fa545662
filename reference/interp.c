/* interp.c - the CPU reference interpreter: runs a verified module over bound leaves.
 *
 * Walks the instructions in definition order (a valid execution order), computes each
 * value with ref_ops.c, checks it against the instruction's type (N and G resolved from the
 * bindings) and collects the OUTPUT values.  Its results are the oracle for every GPU test. */
#include "reference.h"


#include <stdlib.h>
#include <string.h>

static bool tensor_copy(const BgTensor *s, BgTensor *d) {
    if (!s->data) return false;
    if (!bg_tensor_alloc(d, s->dtype, s->rank, s->dim[0], s->rank == 2 ? s->dim[1] : 0))
        return false;
    memcpy(d->data, s->data, bg_tensor_bytes(s));
    return true;
}

static int64_t resolve_dim(int64_t dim, const BgBindings *b) {
    if (dim == BG_DIM_N) return b->n;
    if (dim == BG_DIM_G) return b->ngraphs;
    return dim;
}

/* Does the computed tensor match the IR type? */
static bool type_matches(const BgType *ty, const BgTensor *t, const BgBindings *b) {
    BgDType want;
    if (ty->kind == BG_TY_F32) want = BG_DT_F32;
    else if (ty->kind == BG_TY_B1) want = BG_DT_B1;
    else return false;
    if (t->dtype != want || t->rank != ty->rank) return false;
    for (int k = 0; k < ty->rank; k++)
        if (t->dim[k] != resolve_dim(ty->dim[k], b)) return false;
    return true;
}

static const BgTensor *operand(const BgInst *in, int k, const BgTensor *vals) {
    if (k >= in->nargs || in->args[k] == BG_NONE) return NULL;
    return &vals[in->args[k]];
}

static bool operand_ok(const BgInst *in, int k, const BgTensor *vals, int ninsts, bool optional) {
    if (k >= in->nargs || in->args[k] == BG_NONE) return optional;
    return (int)in->args[k] < ninsts && vals[in->args[k]].data != NULL;
}

static const BgAdj *adj_operand(const BgInst *in, int k, const BgModule *m, const BgBindings *b) {
    if (k >= in->nargs || in->args[k] == BG_NONE || (int)in->args[k] >= m->ninsts) return NULL;
    if (m->insts[in->args[k]].op != BG_OP_GRAPH || !b->adj) return NULL;
    const BgAdj *a = &b->adj[in->args[k]];
    return a->rowptr ? a : NULL;
}

/* Steps [s0, s1) of in on the float value *t, in order, with the unfused ops' ref_ops
 * functions; then, for a B value (b1), the bit by the sign rule unless a last threshold step
 * gave it.  *t is replaced; on failure it is freed. */
static bool run_steps(const BgInst *in, int s0, int s1, const BgTensor *vals, bool b1, BgTensor *t) {
    BgTensor u = {0};
    bool ok = true;
    for (int s = s0; ok && s < s1; s++) {
        int a = bg_inst_step_arg(in, s);
        switch ((BgStepKind)in->steps[s].kind) {
        case BG_STEP_SCL: ok = bg_ref_scl(t, operand(in, a, vals), operand(in, a + 1, vals), &u); break;
        case BG_STEP_ADD: ok = bg_ref_add("FFF", t, operand(in, a, vals), &u); break;
        case BG_STEP_RELU: ok = bg_ref_relu(t, &u); break;
        case BG_STEP_THRESHOLD: ok = bg_ref_bin_threshold(t, operand(in, a, vals), &u); break;
        case BG_STEP_LOG_SOFTMAX: /* the row tail, last: rows of at most 32 columns, seq */
            ok = bg_ref_log_softmax(t, (BgFpOrder){BG_FP_SEQ, false, 0, 0, 0}, &u);
            break;
        case BG_STEP_CENTER: ok = bg_ref_center(t, operand(in, a, vals), operand(in, a + 1, vals), &u); break;
        case BG_STEP_ADD_SCL: { /* the scl's float, then the add (the unfused ops, in order) */
            BgTensor sv = {0};
            ok = bg_ref_scl(operand(in, a, vals), operand(in, a + 1, vals), operand(in, a + 2, vals), &sv) &&
                 bg_ref_add("FFF", t, &sv, &u);
            bg_tensor_free(&sv);
            break;
        }
        default: ok = false; break;
        }
        bg_tensor_free(t);
        *t = u;
        memset(&u, 0, sizeof u);
    }
    if (ok && b1 && t->dtype == BG_DT_F32) { /* the sign rule */
        ok = bg_ref_bin(t, &u);
        bg_tensor_free(t);
        *t = u;
    }
    if (!ok) bg_tensor_free(t);
    return ok;
}

/* Are the operands of in (steps included) computed?  A graph has no tensor value. */
static bool operands_ready(const BgModule *m, const BgInst *in, const BgTensor *vals) {
    for (int k = 0; k < in->nargs; k++) {
        BgRef r = in->args[k];
        if (r != BG_NONE && ((int)r >= m->ninsts || (m->insts[r].op != BG_OP_GRAPH && !vals[r].data))) return false;
    }
    return true;
}

/* bspmm_mm.PQX.XYZ(A, x, W) mm(s...) epilogue(e...) (fuse-mm-spmm; docs/semantics.md, section
 * 7) computed as the pair it replaces, with the same ref_ops functions in the same order:
 * t = bmm.PQX(x, W) with the mm steps (as that bmm's epilogue), then bspmm.XYZ(A, t) with the
 * epilogue.  The GPU kernel recomputes row t_j for every neighbour j instead of storing t;
 * every row of t is a function of row j of x (and of row-indexed step operands) alone, so
 * both read the same values. */
static bool eval_bspmm_mm(const BgModule *m, const BgBindings *b, const BgInst *in, const BgTensor *vals,
                          BgTensor *y) {
    const BgAdj *adj = adj_operand(in, 0, m, b);
    if (!adj || bg_inst_nbase(in) != 3 || !operands_ready(m, in, vals)) return false;
    char pm[4], pa[4];
    bg_inst_mm_prec(m, in, pm);
    memcpy(pa, in->prec, sizeof pa);
    if (in->npro) pm[2] = 'F';              /* the mm steps' input */
    if (in->nsteps > in->npro) pa[2] = 'F'; /* the epilogue's input */
    BgTensor t = {0};
    bool ok = bg_ref_bmm(pm, operand(in, 1, vals), operand(in, 2, vals), &t) &&
              run_steps(in, 0, in->npro, vals, in->prec[0] == 'B', &t);
    ok = ok && bg_ref_bspmm(pa, adj, &t, y, in->attrs.method) &&
         run_steps(in, in->npro, in->nsteps, vals, in->type.kind == BG_TY_B1, y);
    bg_tensor_free(&t);
    return ok;
}

/* An instruction with fused steps (docs/semantics.md, section 7), computed as the unfused ops
 * it stands for, with the same ref_ops functions: the prologue's batchnorm on operand 0, the
 * op with a float result, each epilogue step in order, then the bit (by the sign, or by the
 * threshold table of a last threshold step) for a B result. */
static bool eval_fused(const BgModule *m, const BgBindings *b, int i, const BgTensor *vals,
                       BgTensor *y) {
    const BgInst *in = &m->insts[i];
    int nb = bg_inst_nbase(in);
    if (!operands_ready(m, in, vals)) return false;
    if (nb < 1 || (in->op != BG_OP_BIN && in->op != BG_OP_ABSMEAN && nb < 2)) return false;
    char prec[4];
    memcpy(prec, in->prec, sizeof prec);
    if (in->nsteps > in->npro && in->op != BG_OP_BIN) prec[2] = 'F'; /* the epilogue's input */
    BgTensor xn = {0}, t = {0};
    const BgTensor *x = operand(in, 0, vals);
    bool ok = true;
    if (in->npro && in->steps[0].kind == BG_STEP_SCL) { /* a bmm's column scale (fold-batchnorm-mm) */
        int a = bg_inst_step_arg(in, 0);
        ok = bg_ref_scl(x, operand(in, a, vals), operand(in, a + 1, vals), &xn);
        x = &xn;
    } else if (in->npro && in->steps[0].kind == BG_STEP_STANDARDIZE) { /* an absmean's (fuse-standardize) */
        ok = bg_ref_standardize(x, in->steps[0].eps, bg_inst_fp(m, in), &xn);
        x = &xn;
    } else if (in->npro) {
        int a = bg_inst_step_arg(in, 0);
        ok = bg_ref_batchnorm(x, operand(in, a, vals), operand(in, a + 1, vals), operand(in, a + 2, vals),
                              operand(in, a + 3, vals), in->steps[0].eps, &xn);
        x = &xn;
    }
    if (ok) {
        switch (in->op) {
        case BG_OP_BIN: ok = tensor_copy(x, &t); break;
        case BG_OP_ABSMEAN: ok = bg_ref_absmean(x, bg_inst_fp(m, in), &t); break;
        case BG_OP_BMM: ok = bg_ref_bmm_fp(prec, x, operand(in, 1, vals), bg_inst_fp(m, in), &t); break;
        case BG_OP_ADD: ok = bg_ref_add(prec, x, operand(in, 1, vals), &t); break;
        case BG_OP_BSPMM: {
            const BgAdj *adj = adj_operand(in, 0, m, b);
            ok = adj && bg_ref_bspmm_fp(prec, adj, operand(in, 1, vals), &t, in->attrs.method, bg_inst_fp(m, in));
            break;
        }
        default: ok = false; break;
        }
    }
    bg_tensor_free(&xn);
    if (!ok || !run_steps(in, in->npro, in->nsteps, vals, in->type.kind == BG_TY_B1, &t)) {
        bg_tensor_free(&t);
        return false;
    }
    *y = t;
    return true;
}

/* Computes instruction i into *y; false when operands are missing or do not fit. */
static bool eval(const BgModule *m, const BgBindings *b, int i, const BgTensor *vals,
                 BgTensor *y) {
    const BgInst *in = &m->insts[i];
    int n = m->ninsts;
    memset(y, 0, sizeof *y);
    if (in->op == BG_OP_BSPMM_MM) return eval_bspmm_mm(m, b, in, vals, y);
    if (in->nsteps && in->op != BG_OP_THRESHOLD) return eval_fused(m, b, i, vals, y);
    switch (in->op) {
    case BG_OP_GRAPH:
    case BG_OP_OUTPUT:
        return true; /* no tensor value */
    case BG_OP_INPUT:
    case BG_OP_PARAM:
    case BG_OP_PARAM_SCALE:
        return b->leaf && tensor_copy(&b->leaf[i], y);
    case BG_OP_BIN:
        return operand_ok(in, 0, vals, n, false) && bg_ref_bin(operand(in, 0, vals), y);
    case BG_OP_BIN_CENTER:
        return operand_ok(in, 0, vals, n, false) && bg_ref_bin_center(operand(in, 0, vals), bg_inst_fp(m, in), y);
    case BG_OP_THRESHOLD: {
        const BgTensor *slots[BG_MAX_ARGS];
        for (int k = 0; k < in->nargs; k++) {
            if (!operand_ok(in, k, vals, n, true)) return false;
            slots[k] = operand(in, k, vals);
        }
        return in->type.rank == 2 &&
               bg_ref_threshold(in->nsteps, in->steps, slots, in->type.dim[1], y);
    }
    case BG_OP_ABSMEAN:
        return operand_ok(in, 0, vals, n, false) && bg_ref_absmean(operand(in, 0, vals), bg_inst_fp(m, in), y);
    case BG_OP_ROW_MEAN:
        return operand_ok(in, 0, vals, n, false) && bg_ref_rowmean(operand(in, 0, vals), bg_inst_fp(m, in), y);
    case BG_OP_SIGN_SUM:
        return operand_ok(in, 0, vals, n, false) && bg_ref_signsum(operand(in, 0, vals), y);
    case BG_OP_BN_SCALE:
        return operand_ok(in, 0, vals, n, false) && operand_ok(in, 1, vals, n, true) &&
               bg_ref_bn_scale(operand(in, 0, vals), operand(in, 1, vals), in->attrs.eps, y);
    case BG_OP_BN_SHIFT:
        for (int k = 0; k < 3; k++)
            if (!operand_ok(in, k, vals, n, false)) return false;
        return operand_ok(in, 3, vals, n, true) &&
               bg_ref_bn_shift(operand(in, 0, vals), operand(in, 1, vals), operand(in, 2, vals),
                               operand(in, 3, vals), y);
    case BG_OP_SCL:
        return operand_ok(in, 0, vals, n, false) && operand_ok(in, 1, vals, n, true) &&
               operand_ok(in, 2, vals, n, true) &&
               bg_ref_scl(operand(in, 0, vals), operand(in, 1, vals), operand(in, 2, vals), y);
    case BG_OP_BMM:
        return operand_ok(in, 0, vals, n, false) && operand_ok(in, 1, vals, n, false) &&
               bg_ref_bmm_fp(in->prec, operand(in, 0, vals), operand(in, 1, vals), bg_inst_fp(m, in), y);
    case BG_OP_BSPMM: {
        const BgAdj *a = adj_operand(in, 0, m, b);
        return a && operand_ok(in, 1, vals, n, false) &&
               bg_ref_bspmm_fp(in->prec, a, operand(in, 1, vals), y, in->attrs.method, bg_inst_fp(m, in));
    }
    case BG_OP_ADD:
        return operand_ok(in, 0, vals, n, false) && operand_ok(in, 1, vals, n, false) &&
               bg_ref_add(in->prec, operand(in, 0, vals), operand(in, 1, vals), y);
    case BG_OP_CONCAT: {
        const BgTensor *xs[8];
        if (in->nargs < 1 || in->nargs > 8) return false;
        for (int k = 0; k < in->nargs; k++) {
            if (!operand_ok(in, k, vals, n, false)) return false;
            xs[k] = operand(in, k, vals);
        }
        return bg_ref_concat(in->nargs, xs, y);
    }
    case BG_OP_RELU:
        return operand_ok(in, 0, vals, n, false) && bg_ref_relu(operand(in, 0, vals), y);
    case BG_OP_BATCHNORM:
        for (int k = 0; k < 3; k++)
            if (!operand_ok(in, k, vals, n, false)) return false;
        if (!operand_ok(in, 3, vals, n, true) || !operand_ok(in, 4, vals, n, true)) return false;
        return bg_ref_batchnorm(operand(in, 0, vals), operand(in, 1, vals), operand(in, 2, vals),
                                operand(in, 3, vals), operand(in, 4, vals), in->attrs.eps, y);
    case BG_OP_STANDARDIZE:
        return operand_ok(in, 0, vals, n, false) &&
               bg_ref_standardize(operand(in, 0, vals), in->attrs.eps, bg_inst_fp(m, in), y);
    case BG_OP_LOG_SOFTMAX:
        return operand_ok(in, 0, vals, n, false) && bg_ref_log_softmax(operand(in, 0, vals), bg_inst_fp(m, in), y);
    case BG_OP_READOUT: {
        if (!operand_ok(in, 0, vals, n, false) || !adj_operand(in, 1, m, b)) return false;
        const int64_t *gp = b->graph ? b->graph->graph_ptr : NULL;
        int64_t ng = gp ? b->ngraphs : 1;
        return bg_ref_readout(operand(in, 0, vals), gp, ng, in->attrs.reduce, y);
    }
    case BG_OP_BSPMM_MM: /* eval_bspmm_mm, above */
    case BG_OP_COUNT:
        break;
    }
    return false;
}

bool bg_interp_run(const BgModule *m, const BgBindings *b, BgInterpResult *out,
                   BgTensor **all_values, BgDiagSink *d) {
    memset(out, 0, sizeof *out);
    if (all_values) *all_values = NULL;
    int n = m->ninsts;
    BgTensor *vals = bg_xcalloc((size_t)n + 1, sizeof(BgTensor));
    int *last = bg_xcalloc((size_t)n + 1, sizeof(int));
    int nout = 0;
    for (int i = 0; i < n; i++) {
        last[i] = i;
        if (m->insts[i].op == BG_OP_OUTPUT) nout++;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < m->insts[i].nargs; k++) {
            BgRef r = m->insts[i].args[k];
            if (r != BG_NONE && (int)r < n && last[r] < i) last[r] = i;
        }
    out->names = bg_xcalloc((size_t)nout + 1, sizeof(const char *));
    out->outputs = bg_xcalloc((size_t)nout + 1, sizeof(BgTensor));

    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        const BgInst *in = &m->insts[i];
        const char *opname = (unsigned)in->op < BG_OP_COUNT ? bg_op_info(in->op)->name : "?";
        bool good = true;
        for (int k = 0; k < in->nargs; k++)
            if (in->args[k] != BG_NONE && (int)in->args[k] >= i) good = false;
        if (good && in->op == BG_OP_GRAPH) good = b->adj && b->adj[i].rowptr != NULL;
        if (good) good = eval(m, b, i, vals, &vals[i]);
        if (!good) {
            bg_diag_at(d, BG_SEV_ERROR, BG_E_INTERNAL, m->src, in->loc,
                       "interpreter: instruction %%%d (%s) could not be computed: its operands "
                       "are missing or do not fit",
                       i, opname);
            ok = false;
            break;
        }
        if (in->op == BG_OP_OUTPUT) {
            const BgTensor *src = operand(in, 0, vals);
            BgTensor *dst = &out->outputs[out->noutputs];
            if (!src || !src->data || !tensor_copy(src, dst)) {
                bg_diag_at(d, BG_SEV_ERROR, BG_E_INTERNAL, m->src, in->loc,
                           "interpreter: output %%%d has no value", i);
                ok = false;
                break;
            }
            out->names[out->noutputs] =
                in->attrs.name ? in->attrs.name : bg_arena_printf(m->arena, "output%d", out->noutputs);
            out->noutputs++;
        } else if (in->op != BG_OP_GRAPH && !type_matches(&in->type, &vals[i], b)) {
            char buf[64];
            bg_diag_at(d, BG_SEV_ERROR, BG_E_INTERNAL, m->src, in->loc,
                       "interpreter: instruction %%%d (%s) computed a value that does not match "
                       "its type %s",
                       i, opname, bg_type_str(in->type, buf, sizeof buf));
            ok = false;
            break;
        }
        if (!all_values) {
            for (int k = 0; k < in->nargs; k++) {
                BgRef r = in->args[k];
                if (r != BG_NONE && (int)r < n && last[r] == i) bg_tensor_free(&vals[r]);
            }
            if (last[i] == i) bg_tensor_free(&vals[i]);
        }
    }
    free(last);
    if (!ok) {
        bg_interp_values_free(m, vals);
        bg_interp_result_free(out);
        return false;
    }
    if (all_values) *all_values = vals;
    else bg_interp_values_free(m, vals);
    return true;
}

void bg_interp_result_free(BgInterpResult *r) {
    if (!r) return;
    for (int i = 0; i < r->noutputs; i++) bg_tensor_free(&r->outputs[i]);
    free(r->outputs);
    free((void *)r->names);
    memset(r, 0, sizeof *r);
}

void bg_interp_values_free(const BgModule *m, BgTensor *values) {
    if (!values) return;
    for (int i = 0; i < m->ninsts; i++) bg_tensor_free(&values[i]);
    free(values);
}
