/* cg_warp_rows.c - the warp-rows form of a row group's kernel (templates/warp_rows.cuh): the
 * block's warps take the tile's rows one at a time, and a warp runs its row through every
 * launch of the group, each value in registers (an F row as a float a lane and 32-column word,
 * a B row as its words in every lane, an absmean as a float).
 *
 * A group takes this form when the plan says so (BgPlanRowGroup.warp, set by plan_build.c: no
 * sparse variant, every member an op warp_rows.cuh has on rows of at most 256 columns; a
 * group of graph rows, a readout and the classifier after it, holds a graph's row a warp).
 * The values are the separate launches' bit for bit: each call does its op's template's float
 * operations in their order.
 *
 * A launch's main operand (args[1]; a gather's activation comes from memory) is the register
 * value when an earlier member computed it, else it is loaded at row r; so is an earlier
 * member's per-row value (an absmean) read as a factor, passed as a RowVal.  A member's result
 * is also stored, then __syncwarp, when anything reads it from memory (bg_plan_buf_kept: a
 * launch outside the group, a member as a gathered or table operand, or the model's
 * outputs).  Row r of the tile is the templates' row r (arguments from
 * bg_cg_arg_expr, offset to the tile's first row r0, or graph g), so the epilogue functors read
 * their operands as the memory form's calls do.  In the per-graph kernel the members read the constant tables
 * it staged in shared memory (cg_stage.c); a group's own kernel reads them from memory.  Prologue tables (a batchnorm's inverses) and product weights are
 * read once per warp, before the tile loop.  The per-graph kernel (cg_blocks.c) runs a group
 * of node rows in the same form over a graph's rows (r0 .. r1 - 1), with a block barrier
 * before and after it, not between its launches. */
#include "cg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An F or B value of N rows (cols set), or an f32[N] (cols 0). */
static void value_cols(BgType t, int64_t *cols) { *cols = t.rank == 2 ? t.dim[1] : 0; }

/* The C type of a value's register array / scalar. */
static const char *reg_type(const BgType t) { return t.kind == BG_TY_B1 ? "bgnn::u32" : "float"; }

/* Launch l's arguments for the warp-rows form: bg_cg_range_args, then a staged table's name
 * (cg_stage.c) where l reads it at column c. */
static void member_args(const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, const BgCgShared *sh, BgCgArgs *a) {
    bg_cg_range_args(m, p, l, a);
    bg_cg_shared_names(m, p, l, sh, a);
}

/* The main operand of launch i: "v<buf>" when a member computed it, else loaded as "x<i>". */
static void main_operand(BgEmit *e, const BgModule *m, const BgPlanLaunch *l, int i, const char *nm1,
                         const bool *in_regs, char *out, size_t cap) {
    const BgInst *in = &m->insts[l->inst];
    const int b = l->args[1];
    if (in_regs[b]) {
        snprintf(out, cap, "v%d", b);
        return;
    }
    const BgType *t0 = &m->insts[in->args[0]].type;
    const long long ci = (long long)t0->dim[1];
    snprintf(out, cap, "x%d", i);
    bg_emit_line(e, "%s x%d[bgnn::WrWords<%lld>::n];", reg_type(*t0), i, ci);
    bg_emit_line(e, "bgnn::wr_load_%c<%lld>(%s%s, r, x%d);", t0->kind == BG_TY_B1 ? 'b' : 'f', ci,
                 t0->kind == BG_TY_B1 ? "(const bgnn::u32 *)" : "", nm1, i);
}

/* Launch i's call(s) in the row loop: its result v<out>, stored when read from memory. */
static bool emit_member(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src,
                        const BgPlanRowGroup *g, int i, int phase, const BgCgShared *sh, bool *in_regs, BgDiagSink *d) {
    const BgPlanLaunch *l = &p->launches[i];
    const BgInst *in = &m->insts[l->inst];
    BgCgArgs args;
    const char *const *nm = args.nm;
    member_args(m, p, l, sh, &args);
    for (int k = 2; k < l->nargs; k++) /* an earlier member's per-row value (an absmean as a factor) */
        if (l->args[k] >= 0 && in_regs[l->args[k]] && bg_plan_row_value(p, l->args[k])) {
            snprintf(args.names[k], sizeof args.names[k], BG_CG_ROWVAL "{v%d}", l->args[k]);
            args.nm[k] = args.names[k];
        }
    const int ob = l->args[0];
    int64_t c = 0;
    value_cols(in->type, &c);
    if (c) bg_emit_line(e, "%s v%d[bgnn::WrWords<%lld>::n];", reg_type(in->type), ob, (long long)c);
    else bg_emit_line(e, "float v%d;", ob);
    bg_cg_phase_open(e, m, ir, src, l, i, phase);
    char *sa = bg_cg_step_args(m, in, l, nm, false);
    const char *epi = sa[0] ? sa + 2 : "bgnn::EpEnd{}"; /* ", EPI" */
    char x[32];
    bool ok = true;
    switch (in->op) {
    case BG_OP_BSPMM: {
        const bool adjf = in->prec[1] == 'F';
        /* over the graph stage its own gather: colf = 1 under norm none / mean, rowf under none */
        const BgNorm norm = m->insts[in->args[0]].attrs.norm;
        char units[32] = "";
        const bool gs = sh && sh->graph;
        /* the fast aggregation's launch (none / mean, no colf operand: rowptr, col, rowf, x) only
         * over the graph stage, where its sums are counts (cg_blocks.c forms that group) */
        const bool fast = bg_plan_bspmm_fast(m, in);
        if (fast && !gs) {
            bg_diag_error(d, BG_E_INTERNAL, "codegen: the fast aggregation in the warp-rows form needs the graph stage");
            ok = false;
            break;
        }
        if (gs) snprintf(units, sizeof units, "%s, %s, ", norm != BG_NORM_SYM ? "true" : "false", norm == BG_NORM_NONE ? "true" : "false");
        char slots[48] = ""; /* the order slots(S, T, H): its parameters (fp-order: never over the graph stage) */
        const BgFpOrder fp = bg_inst_fp(m, in);
        if (fp.kind == BG_FP_SLOTS) {
            if (gs) {
                bg_diag_error(d, BG_E_INTERNAL, "codegen: the order slots over the per-graph kernel's graph stage");
                ok = false;
                break;
            }
            snprintf(slots, sizeof slots, ", %d, %d, %d", (int)fp.split, (int)fp.chunk, (int)fp.hub);
        }
        bg_emit_line(e, "bgnn::wr_bspmm_bits%s<%s, %s%lld%s>(r, v%d, %s, %s, %s, %s, (const bgnn::u32 *)%s, %s);", gs ? "_gs" : "",
                     adjf ? "true" : "false", units, (long long)c, slots, ob, nm[1], nm[2], adjf ? "nullptr" : nm[3],
                     fast ? "nullptr" : adjf ? nm[3] : nm[4], fast || adjf ? nm[4] : nm[5], epi);
        break;
    }
    case BG_OP_READOUT:
        bg_emit_line(e, "bgnn::wr_readout<'%c', %lld, %d>(r, v%d, %s, %s);",
                     m->insts[in->args[0]].type.kind == BG_TY_B1 ? 'B' : 'F', (long long)c, (int)in->attrs.reduce, ob,
                     nm[1], nm[2]);
        break;
    case BG_OP_LOG_SOFTMAX:
        main_operand(e, m, l, i, nm[1], in_regs, x, sizeof x);
        bg_emit_line(e, "bgnn::wr_log_softmax<%lld>(v%d, %s);", (long long)c, ob, x);
        break;
    case BG_OP_BIN:
        main_operand(e, m, l, i, nm[1], in_regs, x, sizeof x);
        bg_emit_line(e, "bgnn::wr_bin<%lld>(r, v%d, %s, %s);", (long long)c, ob, x, epi);
        break;
    case BG_OP_ABSMEAN: {
        main_operand(e, m, l, i, nm[1], in_regs, x, sizeof x);
        const BgFpOrder fp = bg_inst_fp(m, in);
        bg_emit_line(e, "v%d = bgnn::wr_absmean<%lld, %d>(%s, pro%d, inv%d);", ob,
                     (long long)m->insts[in->args[0]].type.dim[1], fp.kind == BG_FP_LANES ? (int)fp.split : 0, x, i, i);
        break;
    }
    case BG_OP_BMM:
        main_operand(e, m, l, i, nm[1], in_regs, x, sizeof x);
        if (in->prec[0] == 'F') { /* FF: seq or split-k, with or without fma (plan_build.c) */
            const BgFpOrder fp = bg_inst_fp(m, in);
            bg_emit_line(e, "bgnn::wr_bmm_ff<%lld, %lld, %lld, %s>(r, v%d, %s, %s, %s);",
                         (long long)m->insts[in->args[0]].type.dim[1], (long long)c,
                         fp.kind == BG_FP_SPLITK ? (long long)fp.chunk : 0LL, fp.fma ? "true" : "false", ob, x, nm[2], epi);
        }
        else
            bg_emit_line(e, "bgnn::wr_bmm_bb<%lld, %lld>(r, v%d, %s, w%d, %s);",
                         (long long)m->insts[in->args[0]].type.dim[1], (long long)c, ob, x, i, epi);
        break;
    case BG_OP_SCL: {
        const bool hr = in->args[1] != BG_NONE, hc = in->args[2] != BG_NONE;
        int k = 2;
        const char *rf = hr ? nm[k++] : "nullptr";
        const char *cf = hc ? nm[k++] : "nullptr";
        main_operand(e, m, l, i, nm[1], in_regs, x, sizeof x);
        bg_emit_line(e, "bgnn::wr_scl<%lld, %s, %s>(r, v%d, %s, %s, %s);", (long long)c, hr ? "true" : "false",
                     hc ? "true" : "false", ob, x, rf, cf);
        break;
    }
    case BG_OP_RELU:
        main_operand(e, m, l, i, nm[1], in_regs, x, sizeof x);
        bg_emit_line(e, "bgnn::wr_relu<%lld>(v%d, %s);", (long long)c, ob, x);
        break;
    default: /* plan_build.c admits no other op */
        bg_diag_error(d, BG_E_INTERNAL, "codegen: no warp-rows form of '%s'", bg_op_info(in->op)->name);
        ok = false;
        break;
    }
    free(sa);
    if (ok && bg_plan_buf_kept_in(p, g, ob)) {
        if (!c) bg_emit_line(e, "bgnn::wr_store_s(%s, r, v%d);", nm[0], ob);
        else bg_emit_line(e, "bgnn::wr_store_%c<%lld>(%s%s, r, v%d);", in->type.kind == BG_TY_B1 ? 'b' : 'f',
                          (long long)c, in->type.kind == BG_TY_B1 ? "(bgnn::u32 *)" : "", nm[0], ob);
        bg_emit_line(e, "__syncwarp(); // read from memory by this warp's later launches or kernels after");
    }
    in_regs[ob] = true;
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
    return ok;
}

/* Before the tile loop: launch i's tables a warp reads once (a prologue's inverses, a
 * product's weight words), from operands of constant rows. */
static void emit_prelude(BgEmit *e, const BgModule *m, const BgPlan *p, int i, const BgCgShared *sh) {
    const BgPlanLaunch *l = &p->launches[i];
    const BgInst *in = &m->insts[l->inst];
    BgCgArgs args;
    const char *const *nm = args.nm;
    member_args(m, p, l, sh, &args);
    const long long ci = in->nargs > 0 && in->args[0] != BG_NONE ? (long long)m->insts[in->args[0]].type.dim[1] : 0;
    if (in->op == BG_OP_ABSMEAN) {
        BgStrBuf pb = {0};
        int k = bg_cg_step_first_arg(in, l->nargs);
        bg_cg_pro_expr(&pb, in, nm, &k);
        char *pe = bg_sb_take(&pb);
        bg_emit_line(e, "const auto pro%d = %s; // launch %d's prologue", i, pe, i);
        bg_emit_line(e, "float inv%d[bgnn::WrWords<%lld>::n];", i, ci);
        if (sh && sh->invs && sh->invs[i]) /* computed once a block (cg_stage.c) */
            bg_emit_line(e, "bgnn::wr_load_f<%lld>(si%d, 0, inv%d); // the staged inverses", ci, i, i);
        else
            bg_emit_line(e, "bgnn::wr_pro_inv<%lld>(pro%d, inv%d);", ci, i, i);
        free(pe);
    } else if (in->op == BG_OP_BMM && in->prec[0] == 'B') {
        const long long c = (long long)in->type.dim[1];
        bg_emit_line(e, "bgnn::WrBbWeights<%lld, %lld> w%d; // launch %d's weights", ci, c, i, i);
        bg_emit_line(e, "bgnn::wr_bb_weights<%lld, %lld>((const bgnn::u32 *)%s, w%d);", ci, c, nm[2], i);
    }
}

bool bg_cg_emit_warp_rows(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src,
                          const BgPlanRowGroup *g, const int *phase, bool tiles, const BgCgShared *sh, BgDiagSink *d) {
    bg_emit_line(e, "// warp rows (cg_warp_rows.c): a warp takes a row through every launch, its values in registers");
    if (!tiles) { /* the per-graph kernel: the group's tables read in a block of their own */
        bg_emit_line(e, "{ // launches %d..%d", g->first, g->first + g->count - 1);
        bg_emit_indent(e, 1);
    }
    for (int i = g->first; i < g->first + g->count; i++)
        if (!p->launches[i].prep) emit_prelude(e, m, p, i, sh);
    const char *t0 = g->rows == BG_ROWS_G ? "g" : "r0"; /* the tile's first row (bg_cg_arg_expr's offsets) */
    if (tiles) {
        bg_emit_line(e, "for (long long %s = (long long)blockIdx.y * tile; %s < n; %s += (long long)gridDim.y * tile) {", t0,
                     t0, t0);
        bg_emit_indent(e, 1);
        bg_emit_line(e, "const long long rows = n - %s < tile ? n - %s : tile;", t0, t0);
    } else { /* the per-graph kernel: the graph's node rows, or its one graph row */
        bg_emit_line(e, "const long long rows = %s;", g->rows == BG_ROWS_G ? "1" : "r1 - r0");
    }
    bg_emit_line(e, "for (long long r = threadIdx.x >> 5; r < rows; r += blockDim.x >> 5) {");
    bg_emit_indent(e, 1);
    bool *in_regs = bg_xcalloc((size_t)p->nbufs + 1, sizeof(bool));
    bool ok = true;
    for (int i = g->first; i < g->first + g->count && ok; i++)
        if (!p->launches[i].prep) ok = emit_member(e, m, p, ir, src, g, i, phase[i], sh, in_regs, d);
    free(in_regs);
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
    return ok;
}
