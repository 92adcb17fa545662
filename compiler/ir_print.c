/* ir_print.c - the textual IR dump (bgnnc --emit=ir, --print-after=PASS).
 * The format is a contract: golden tests diff it, so it is deterministic (values are
 * instruction indices, no addresses) and every line ends with the model source position
 * the instruction came from.  docs/ir.md describes it. */
#include "bg.h"
#include "codegen.h" /* bg_sched_str */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef BgStrBuf Out;
#define put bg_sb_printf

static const char *method_name(BgMethod m) {
    switch (m) {
    case BG_METHOD_IFELSE: return "ifelse";
    case BG_METHOD_ANDNOT: return "andnot";
    case BG_METHOD_POPC2: return "popc2";
    default: return "auto";
    }
}

static const char *reduce_name(BgReduce r) {
    return r == BG_RED_SUM ? "sum" : r == BG_RED_MEAN ? "mean" : "max";
}

static void put_ref(Out *o, BgRef r, bool first) {
    if (r == BG_NONE) put(o, "%snone", first ? "" : ", ");
    else put(o, "%s%%%u", first ? "" : ", ", r);
}

/* Steps [s0, s1) as "(name a, b; name c eps=...)" after " WORD". */
static void put_steps(Out *o, const BgInst *in, const char *word, int s0, int s1) {
    if (s0 >= s1) return;
    put(o, " %s(", word);
    for (int s = s0; s < s1; s++) {
        BgStepKind k = (BgStepKind)in->steps[s].kind;
        int a = bg_inst_step_arg(in, s), n = bg_step_slots(k);
        if (k == BG_STEP_BATCHNORM)
            while (n > 2 && in->args[a + n - 1] == BG_NONE) n--; /* absent gamma / beta */
        put(o, "%s%s", s > s0 ? "; " : "", bg_step_name(k));
        for (int j = 0; j < n; j++) {
            if (j == 0) put(o, " ");
            put_ref(o, in->args[a + j], j == 0);
        }
        if (k == BG_STEP_BATCHNORM || k == BG_STEP_STANDARDIZE) put(o, " eps=%g", (double)in->steps[s].eps);
    }
    put(o, ")");
}

char *bg_ir_print(const BgModule *m) {
    Out o = {0};
    put(&o, "model %s", m->name);
    if (m->arch) put(&o, " target=\"%s\"", m->arch);
    int *phase = bg_xcalloc((size_t)m->ninsts + 1, sizeof(int));
    int nphases = bg_ir_phases(m, phase);
    bool *prep = bg_xcalloc((size_t)m->ninsts + 1, sizeof(bool));
    bg_ir_prep(m, prep); /* computed once, when the parameters are bound */
    if (m->fused)
        put(&o, "    ; fused: 1 kernel launch, %d phases, %d grid syncs", nphases,
            nphases > 0 ? nphases - 1 : 0);
    put(&o, "\n");
    for (int i = 0; i < m->ninsts; i++) {
        const BgInst *in = &m->insts[i];
        const BgOpInfo *info = bg_op_info(in->op);
        char ty[64];
        bg_type_str(in->type, ty, sizeof ty);
        if (in->op == BG_OP_OUTPUT) put(&o, "      output");
        else put(&o, "%%%-4d = %s", i, info->name);
        if (in->op == BG_OP_BSPMM_MM) { /* the product's letters, then the aggregation's */
            char pq[4];
            bg_inst_mm_prec(m, in, pq);
            put(&o, ".%s", pq);
        }
        if (in->prec[0]) put(&o, ".%s", in->prec);
        int nbase = bg_inst_nbase(in);
        for (int k = 0; k < nbase; k++) {
            if (in->args[k] == BG_NONE) put(&o, "%s none", k ? "," : "");
            else put(&o, "%s %%%u", k ? "," : "", in->args[k]);
        }
        if (in->op == BG_OP_THRESHOLD) {
            put_steps(&o, in, "chain", 0, in->nsteps);
        } else {
            put_steps(&o, in, in->op == BG_OP_BSPMM_MM ? "mm" : "prologue", 0, in->npro);
            put_steps(&o, in, "epilogue", in->npro, in->nsteps);
        }
        const BgAttrs *a = &in->attrs;
        switch (in->op) {
        case BG_OP_GRAPH:
            put(&o, " self_loops=%s norm=%s", a->self_loops ? "true" : "false", bg_norm_name(a->norm));
            break;
        case BG_OP_INPUT: put(&o, " \"%s\" file=\"%s\"", a->name, a->file); break;
        case BG_OP_PARAM:
        case BG_OP_PARAM_SCALE:
            if (a->file) put(&o, " npy(\"%s\")", a->file);
            else put(&o, " \"%s\"", a->name);
            if (a->transposed) put(&o, ".T");
            break;
        case BG_OP_BSPMM:
        case BG_OP_BSPMM_MM:
            if (a->method != BG_METHOD_AUTO) put(&o, " method=%s", method_name(a->method));
            break;
        case BG_OP_BMM:
            if (a->path != BG_BMM_PATH_AUTO) put(&o, " path=%s", a->path == BG_BMM_PATH_TC ? "tc" : a->path == BG_BMM_PATH_WGMMA ? "wgmma" : "popc");
            break;
        case BG_OP_BATCHNORM:
        case BG_OP_BN_SCALE:
        case BG_OP_STANDARDIZE: put(&o, " eps=%g", (double)a->eps); break;
        case BG_OP_READOUT: put(&o, " op=%s", reduce_name(a->reduce)); break;
        case BG_OP_OUTPUT: put(&o, " \"%s\"", a->name); break;
        default: break;
        }
        if (!bg_sched_is_default(&a->sched)) { /* a tuned schedule (docs/tuning.md) */
            BgSchedPoint sp = {a->sched, BG_METHOD_AUTO, BG_BMM_PATH_AUTO};
            char sb[128];
            bg_sched_str(&sp, sb, sizeof sb);
            put(&o, " sched(%s)", sb);
        }
        BgFpOrder fp = bg_inst_fp(m, in);
        if (fp.kind != BG_FP_NONE) {
            char fb[48];
            put(&o, " fp=%s", bg_fp_order_str(fp, fb, sizeof fb));
        }
        put(&o, " : %s", ty);
        if (m->src) {
            int line, col;
            bg_source_linecol(m->src, in->loc.off, &line, &col);
            put(&o, "    ; %d:%d", line, col);
        }
        if (m->fused && phase[i] >= 0) put(&o, "%s phase %d", m->src ? "" : "    ;", phase[i]);
        if (prep[i] && !(info->flags & BG_OPF_LEAF)) put(&o, "%s prep", m->src ? "" : "    ;");
        put(&o, "\n");
    }
    free(phase);
    free(prep);
    return bg_sb_take(&o);
}
