/* cg_cuda.c - IR -> one CUDA C++ translation unit (bg_codegen_cuda).
 *
 * The unit #includes the kernel templates it needs (the templates/ .cuh files, handed to NVRTC as
 * headers by name, see bg_codegen_templates), then has one thin extern "C" __global__
 * wrapper per plan launch (named, shaped and argument-ordered exactly as the plan says,
 * calling convention in plan.h) instantiating a template with the launch's compile-time
 * constants, and finally the manifest (manifest.c) as a __device__ byte array, so a cubin
 * carries its own plan.  The text is byte-for-byte deterministic for a given module. */
#include "emit.h"
#include "codegen.h"
#include "cg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *name; const char *text; } BgTemplate;
extern const BgTemplate bg_templates[];

BgCodeHeader *bg_codegen_templates(int *n) {
    int k = 0;
    while (bg_templates[k].name) k++;
    BgCodeHeader *h = bg_xcalloc((size_t)k + 1, sizeof *h);
    for (int i = 0; i < k; i++) {
        h[i].name = bg_templates[i].name;
        h[i].text = bg_templates[i].text;
    }
    *n = k;
    return h;
}

BgPlan *bg_codegen_plan(const BgModule *m, const char *arch, BgArena *a, BgDiagSink *d) {
    return bg_plan_build(m, arch, a, d);
}

/* ---- helpers ------------------------------------------------------------------------ */

const char *bg_cg_ctype(BgBufKind k) {
    switch (k) {
    case BG_BUF_F32: return "float";
    case BG_BUF_B1:
    case BG_BUF_B1T: return "unsigned";
    case BG_BUF_I64: return "long long";
    case BG_BUF_I32: return "int";
    }
    return "void";
}

/* Columns a kernel sees for a value (plan.c's kshape). */
int64_t bg_cg_kcols(BgType t) {
    if (t.rank == 2) return t.dim[1];
    if (t.rank == 1 && t.dim[0] >= 0) return t.dim[0];
    return 1;
}
static bool krow_vector(BgType t) { return t.rank == 1 && t.dim[0] >= 0; }

static char letter(BgType t) { return t.kind == BG_TY_B1 ? 'B' : 'F'; }

/* The plan's compute capability (90 for sm_90); 0 when unknown. */
static int plan_sm(const BgPlan *p) {
    int sm = 0;
    return p->arch && bg_arch_parse(p->arch, &sm) ? sm : 0;
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static unsigned f32_bits(float f) {
    unsigned u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The IR printout split at its newlines: lines[k] is where line k starts (malloc'd; one more
 * entry than newlines), so that finding an instruction's line does not rescan the text. */

IrLines bg_cg_ir_lines(const char *ir) {
    IrLines l = {NULL, 1};
    for (const char *s = ir; (s = strchr(s, '\n')) != NULL; s++) l.n++;
    l.lines = bg_xmalloc(sizeof(char *) * (size_t)l.n);
    l.lines[0] = ir;
    int k = 1;
    for (const char *s = ir; (s = strchr(s, '\n')) != NULL; s++) l.lines[k++] = s + 1;
    return l;
}

/* Line i+1 of the IR printout (instruction i) without its "; L:C" suffix, runs of
 * spaces collapsed, characters unsafe in a // comment replaced. */
char *bg_cg_ir_line(const IrLines *ir, int i) {
    if (i + 1 >= ir->n) return NULL;
    const char *s = ir->lines[i + 1];
    if (!*s) return NULL;
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    char *out = bg_xmalloc(n + 1);
    size_t o = 0;
    for (size_t k = 0; k < n; k++) {
        char c = s[k];
        if (c == ';' && k > 0 && s[k - 1] == ' ') break;
        if (c == ' ' && (o == 0 || out[o - 1] == ' ')) continue;
        if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f || c == '\\') c = '?';
        out[o++] = c;
    }
    while (o && out[o - 1] == ' ') o--;
    out[o] = 0;
    return out;
}

static void row_expr(BgEmit *e, BgRowExpr r) {
    switch (r.kind) {
    case BG_ROWS_N: bg_emit_line(e, "const long long rows = n;"); break;
    case BG_ROWS_N1: bg_emit_line(e, "const long long rows = n + 1;"); break;
    case BG_ROWS_G: bg_emit_line(e, "const long long rows = ngraphs;"); break;
    case BG_ROWS_G1: bg_emit_line(e, "const long long rows = ngraphs + 1;"); break;
    case BG_ROWS_ITEMS: /* the fast aggregation reads its item count from the schedule */
    case BG_ROWS_ITEMS1:
    case BG_ROWS_SPLITS:
    case BG_ROWS_SLOTS1:
    case BG_ROWS_NNZ: break;
    default: bg_emit_line(e, "const long long rows = %lldLL;", (long long)r.value); break;
    }
}

/* ---- fused steps (epilogue.cuh): functor expressions for emit_call -------------------- */

/* Launch argument index of the first step operand: the step operands (none slots skipped)
 * come last (plan.c). */
int bg_cg_step_first_arg(const BgInst *in, int nlaunch_args) {
    int n = 0;
    for (int k = bg_inst_nbase(in); k < in->nargs; k++) n += in->args[k] != BG_NONE;
    return nlaunch_args - n;
}

/* Slot j of step s: its wrapper parameter (nm[*k], advancing) or nullptr when none. */
static const char *slot_name(const BgInst *in, int s, int j, const char *const *nm, int *k) {
    return in->args[bg_inst_step_arg(in, s) + j] == BG_NONE ? "nullptr" : nm[(*k)++];
}
static const char *tf(bool b) { return b ? "true" : "false"; }

bool bg_cg_is_rowval(const char *name) { return strncmp(name, BG_CG_ROWVAL "{", strlen(BG_CG_ROWVAL) + 1) == 0; }

/* The prologue functor of in (bgnn::ProNone{} without one). */
void bg_cg_pro_expr(BgStrBuf *b, const BgInst *in, const char *const *nm, int *k) {
    if (!in->npro) {
        bg_sb_printf(b, "bgnn::ProNone{}");
        return;
    }
    if (in->steps[0].kind == BG_STEP_SCL) { /* a column scale (fold-batchnorm-mm): rows none */
        (void)slot_name(in, 0, 0, nm, k);
        bg_sb_printf(b, "bgnn::ProScl{%s}", slot_name(in, 0, 1, nm, k));
        return;
    }
    int a = bg_inst_step_arg(in, 0);
    bool hg = in->args[a + 2] != BG_NONE, hb = in->args[a + 3] != BG_NONE;
    const char *mean = slot_name(in, 0, 0, nm, k), *var = slot_name(in, 0, 1, nm, k);
    const char *g = slot_name(in, 0, 2, nm, k), *bt = slot_name(in, 0, 3, nm, k);
    bg_sb_printf(b, "bgnn::ProBn<0x%08xu, %s, %s>{%s, %s, %s, %s}", f32_bits(in->steps[0].eps), tf(hg), tf(hb),
                 mean, var, g, bt);
}

/* The epilogue functor of in's steps [s0, s1) (bgnn::EpEnd{} for none), or a threshold's
 * chain functor; C = the columns of in's result.  *k is the wrapper parameter of step s0's
 * first operand. */
void bg_cg_steps_range(BgStrBuf *b, const BgModule *m, const BgInst *in, int s0, int s1, const char *const *nm,
                        int *k) {
    BgStrBuf ty = {0}, ini = {0};
    bool chain = in->op == BG_OP_THRESHOLD, thr = false; /* thr: a last step ended the chain */
    int64_t C = bg_cg_kcols(in->type);
    int open = 0;
    bool rowval[BG_MAX_STEPS + 1] = {false}; /* open step j's row factor a RowVal: ", bgnn::RowVal>" */
    for (int s = s0; s < s1; s++) {
        int a = bg_inst_step_arg(in, s);
        switch ((BgStepKind)in->steps[s].kind) {
        case BG_STEP_SCL: {
            bool hr = in->args[a] != BG_NONE, hc = in->args[a + 1] != BG_NONE;
            const char *rf = slot_name(in, s, 0, nm, k), *cf = slot_name(in, s, 1, nm, k);
            if (chain) {
                bg_sb_printf(&ty, "bgnn::ChScl<");
                bg_sb_printf(&ini, "{%s, ", cf);
            } else {
                bg_sb_printf(&ty, "bgnn::EpScl<%s, %s, ", tf(hr), tf(hc));
                bg_sb_printf(&ini, "{%s, %s, ", rf, cf);
                rowval[open] = bg_cg_is_rowval(rf);
            }
            break;
        }
        case BG_STEP_ADD: {
            bool tensor = m->insts[in->args[a]].type.rank == 2;
            if (chain) bg_sb_printf(&ty, "bgnn::ChAdd<");
            else bg_sb_printf(&ty, "bgnn::EpAdd<%lld, %s, ", (long long)C, tf(tensor));
            bg_sb_printf(&ini, "{%s, ", slot_name(in, s, 0, nm, k));
            break;
        }
        case BG_STEP_RELU:
            bg_sb_printf(&ty, chain ? "bgnn::ChRelu<" : "bgnn::EpRelu<");
            bg_sb_printf(&ini, "{");
            break;
        case BG_STEP_CENTER: { /* never in a chain (ir_verify) */
            const char *rf = slot_name(in, s, 0, nm, k), *cf = slot_name(in, s, 1, nm, k);
            bg_sb_printf(&ty, "bgnn::EpCenter<");
            bg_sb_printf(&ini, "{%s, %s, ", rf, cf);
            rowval[open] = bg_cg_is_rowval(rf);
            break;
        }
        case BG_STEP_ADD_SCL: { /* never in a chain (ir_verify) */
            bool hr = in->args[a + 1] != BG_NONE, hc = in->args[a + 2] != BG_NONE;
            const char *x = slot_name(in, s, 0, nm, k);
            const char *rf = slot_name(in, s, 1, nm, k), *cf = slot_name(in, s, 2, nm, k);
            bg_sb_printf(&ty, "bgnn::EpAddScl<%lld, %s, %s, ", (long long)C, tf(hr), tf(hc));
            bg_sb_printf(&ini, "{(const bgnn::u32 *)%s, %s, %s, ", x, rf, cf);
            rowval[open] = bg_cg_is_rowval(rf);
            break;
        }
        case BG_STEP_BATCHNORM: {
            bool hg = in->args[a + 2] != BG_NONE, hb = in->args[a + 3] != BG_NONE;
            const char *mean = slot_name(in, s, 0, nm, k), *var = slot_name(in, s, 1, nm, k);
            const char *g = slot_name(in, s, 2, nm, k), *bt = slot_name(in, s, 3, nm, k);
            bg_sb_printf(&ty, "bgnn::ChBn<0x%08xu, %s, %s, ", f32_bits(in->steps[s].eps), tf(hg), tf(hb));
            bg_sb_printf(&ini, "{%s, %s, %s, %s, ", mean, var, g, bt);
            break;
        }
        case BG_STEP_THRESHOLD: /* always last */
            bg_sb_printf(&ty, "bgnn::EpThr<%lld>", (long long)C);
            bg_sb_printf(&ini, "{%s}", slot_name(in, s, 0, nm, k));
            thr = true;
            continue;
        case BG_STEP_LOG_SOFTMAX: /* always last: the row tail (mm_spmm.cuh applies it) */
            bg_sb_printf(&ty, "bgnn::EpLsm<%lld>", (long long)C);
            bg_sb_printf(&ini, "{}");
            thr = true;
            continue;
        default: break;
        }
        open++;
    }
    if (!thr) {
        bg_sb_printf(&ty, "%s", chain ? "bgnn::ChEnd" : "bgnn::EpEnd");
        bg_sb_printf(&ini, "{}");
    }
    for (int j = open - 1; j >= 0; j--) {
        bg_sb_printf(&ty, "%s>", rowval[j] ? ", bgnn::RowVal" : "");
        bg_sb_printf(&ini, "}");
    }
    char *t = bg_sb_take(&ty), *i = bg_sb_take(&ini);
    bg_sb_printf(b, "%s%s", t, i);
    free(t);
    free(i);
}

/* The epilogue functor of in's steps [npro, nsteps), or a threshold's chain functor. */
static void steps_expr(BgStrBuf *b, const BgModule *m, const BgInst *in, const char *const *nm, int *k) {
    bg_cg_steps_range(b, m, in, in->npro, in->nsteps, nm, k);
}

/* ", PRO, EPI" / ", EPI" arguments of a call with fused steps ("" without). */
char *bg_cg_step_args(const BgModule *m, const BgInst *in, const BgPlanLaunch *l, const char *const *nm,
                       bool with_pro) {
    BgStrBuf b = {0};
    bg_sb_printf(&b, "%s", "");
    if (in->nsteps && in->op != BG_OP_BSPMM_MM) { /* bspmm_mm: its own EM and EPI (emit_call) */
        int k = bg_cg_step_first_arg(in, l->nargs);
        if (with_pro) {
            bg_sb_printf(&b, ", ");
            bg_cg_pro_expr(&b, in, nm, &k);
        }
        bg_sb_printf(&b, ", ");
        steps_expr(&b, m, in, nm, &k);
    }
    return bg_sb_take(&b);
}

/* The LANES template argument of a float64 row sum (templates/rowwise.cuh): the lanes of its
 * recorded lanes(L) order, 0 for seq. */
static int row_lanes(const BgModule *m, const BgInst *in) {
    BgFpOrder fp = bg_inst_fp(m, in);
    return fp.kind == BG_FP_LANES ? (int)fp.split : 0;
}

/* templates/matmul.cuh FF_TILE_W_MAX, FF_TILE_X_MAX (bmm_ff_tile_ok) */
#define CG_FF_TILE_W_MAX 4096
#define CG_FF_TILE_X_MAX 2048
/* Does a bmm run as bmm_ff_tile in a row group's phase (templates/matmul.cuh: w and the tile's
 * x rows staged in shared memory by the block, then a thread an output): a head, a bmm.FFF
 * with float weights of at least CG_FF_TILE_K_MIN rows and at most CG_FF_TILE_M_MAX outputs (a
 * few threads a row, each a long chain of dependent steps that would wait on a global load a
 * step, while the rest of the block waits at the next barrier), within the template's bounds.
 * The same float order as bmm.  Wider products (GIN's 64 x 64 MLPs) keep bmm: a thread an
 * output already keeps many threads busy there, and were not measured staged. */
#define CG_FF_TILE_K_MIN 32
#define CG_FF_TILE_M_MAX 32
static bool ff_tile(const BgModule *m, const BgPlan *p, const BgPlanLaunch *l) {
    const BgInst *in = &m->insts[l->inst];
    if (l->prep || in->op != BG_OP_BMM || in->prec[0] != 'F' || in->prec[1] != 'F' || in->prec[2] != 'F' ||
        p->bufs[l->args[2]].kind != BG_BUF_F32)
        return false;
    const int64_t k = bg_cg_kcols(m->insts[in->args[0]].type), cols = bg_cg_kcols(in->type);
    return k >= CG_FF_TILE_K_MIN && cols > 0 && cols <= CG_FF_TILE_M_MAX && k * cols <= CG_FF_TILE_W_MAX &&
           (k | 1) <= CG_FF_TILE_X_MAX;
}

/* The template call of a launch; names[k] is the wrapper parameter of args[k]. */
bool bg_cg_emit_call(BgEmit *e, const BgModule *m, const BgPlan *p, const BgPlanLaunch *l,
                     const char *const *nm, bool plain, bool own, BgDiagSink *d) {
    const BgInst *in = &m->insts[l->inst];
    const BgType ty = in->type;
    int64_t C = bg_cg_kcols(ty);
    const BgType *t0 = in->nargs > 0 && in->args[0] != BG_NONE ? &m->insts[in->args[0]].type : NULL;
    char *sa = bg_cg_step_args(m, in, l, nm, in->op == BG_OP_BMM);
    bool ok = true;
    switch (in->op) {
    case BG_OP_BIN:
        bg_emit_line(e, "bgnn::bin<'%c', %lld>(rows, %s, %s%s);", letter(*t0), (long long)C, nm[0], nm[1], sa);
        break;
    case BG_OP_BIN_CENTER:
        bg_emit_line(e, "bgnn::bin_center<%lld, %d>(rows, %s, %s);", (long long)C, row_lanes(m, in), nm[0], nm[1]);
        break;
    case BG_OP_THRESHOLD: {
        BgStrBuf b = {0};
        int k = bg_cg_step_first_arg(in, l->nargs);
        steps_expr(&b, m, in, nm, &k);
        char *ch = bg_sb_take(&b);
        bg_emit_line(e, "bgnn::threshold<%lld>(rows, %s, %s);", (long long)C, nm[0], ch);
        free(ch);
        break;
    }
    case BG_OP_RELU:
        bg_emit_line(e, "bgnn::relu<%lld>(rows, %s, %s);", (long long)C, nm[0], nm[1]);
        break;
    case BG_OP_BN_SCALE: {
        bool hg = in->nargs > 1;
        bg_emit_line(e, "bgnn::bn_scale<%lld, 0x%08xu /* eps %g */, %s>(rows, %s, %s, %s);", (long long)C,
                     f32_bits(in->attrs.eps), (double)in->attrs.eps, tf(hg), nm[0], nm[1], hg ? nm[2] : "nullptr");
        break;
    }
    case BG_OP_BN_SHIFT: {
        bool hb = in->nargs > 3;
        bg_emit_line(e, "bgnn::bn_shift<%lld, %lld, %s>(rows, %s, %s, %s, %s, %s);", (long long)t0->dim[0],
                     (long long)C, tf(hb), nm[0], nm[1], nm[2], nm[3], hb ? nm[4] : "nullptr");
        break;
    }
    case BG_OP_ABSMEAN: {
        if (in->npro && in->steps[0].kind == BG_STEP_STANDARDIZE) { /* fold-standardize-mm */
            bg_emit_line(e, "bgnn::absmean_std<%lld, 0x%08xu /* eps %g */, %d>(rows, %s, %s);", (long long)bg_cg_kcols(*t0),
                         f32_bits(in->steps[0].eps), (double)in->steps[0].eps, row_lanes(m, in), nm[0], nm[1]);
            break;
        }
        /* its batchnorm prologue (dup-batchnorm, fuse-batchnorm) as the reduction reads x */
        BgStrBuf pb = {0};
        int k = bg_cg_step_first_arg(in, l->nargs);
        bg_cg_pro_expr(&pb, in, nm, &k);
        char *pe = bg_sb_take(&pb);
        bg_emit_line(e, "bgnn::absmean<%lld, %d, %s>(rows, %s, %s, %s);", (long long)bg_cg_kcols(*t0), row_lanes(m, in),
                     tf(own), nm[0], nm[1], pe);
        free(pe);
        break;
    }
    case BG_OP_ROW_MEAN:
        bg_emit_line(e, "bgnn::rowmean<%lld, %d>(rows, %s, %s);", (long long)bg_cg_kcols(*t0), row_lanes(m, in), nm[0],
                     nm[1]);
        break;
    case BG_OP_SIGN_SUM:
        bg_emit_line(e, "bgnn::sign_sum<%lld, %lld>(rows, %s, %s);", (long long)t0->dim[0], (long long)C, nm[0], nm[1]);
        break;
    case BG_OP_STANDARDIZE:
        bg_emit_line(e, "bgnn::standardize<%lld, 0x%08xu /* eps %g */, %d>(rows, %s, %s);", (long long)C,
                     f32_bits(in->attrs.eps), (double)in->attrs.eps, row_lanes(m, in), nm[0], nm[1]);
        break;
    case BG_OP_LOG_SOFTMAX: {
        char lanes[16] = ""; /* lanes(32), over more than 32 columns: a template argument only then */
        if (row_lanes(m, in)) snprintf(lanes, sizeof lanes, ", %d", row_lanes(m, in));
        bg_emit_line(e, "bgnn::log_softmax<%lld%s>(rows, %s, %s);", (long long)C, lanes, nm[0], nm[1]);
        break;
    }
    case BG_OP_SCL: {
        bool hr = in->args[1] != BG_NONE, hc = in->args[2] != BG_NONE;
        int k = 2;
        const char *rf = hr ? nm[k++] : "nullptr";
        const char *cf = hc ? nm[k++] : "nullptr";
        bg_emit_line(e, "bgnn::scl<'%c', %lld, %s, %s>(rows, %s, %s, %s, %s);", letter(*t0), (long long)C,
                     hr ? "true" : "false", hc ? "true" : "false", nm[0], nm[1], rf, cf);
        break;
    }
    case BG_OP_BATCHNORM: {
        bool hg = in->nargs > 3 && in->args[3] != BG_NONE;
        bool hb = in->nargs > 4 && in->args[4] != BG_NONE;
        int k = 4;
        const char *g = hg ? nm[k++] : "nullptr";
        const char *b = hb ? nm[k++] : "nullptr";
        bg_emit_line(e, "bgnn::batchnorm<%lld, 0x%08xu /* eps %g */, %s, %s>(rows, %s, %s, %s, %s, %s, %s);",
                     (long long)C, f32_bits(in->attrs.eps), (double)in->attrs.eps,
                     hg ? "true" : "false", hb ? "true" : "false", nm[0], nm[1], nm[2], nm[3], g, b);
        break;
    }
    case BG_OP_ADD: {
        const BgType *t1 = &m->insts[in->args[1]].type;
        bool bcast = !krow_vector(*t0) && krow_vector(*t1);
        bg_emit_line(e, "bgnn::add<'%c', '%c', %lld, %s>(rows, %s, %s, %s%s);", in->prec[0], in->prec[2],
                     (long long)C, bcast ? "true" : "false", nm[0], nm[1], nm[2], sa);
        break;
    }
    case BG_OP_BMM: {
        bool wt = p->bufs[l->args[2]].kind == BG_BUF_B1T;
        if (!plain && bg_plan_bmm_wgs(m, in, wt, plan_sm(p))) { /* warpgroup tensor cores (plan.c gives its shape) */
            bg_emit_line(e, "bgnn::bmm_bb_wgs_launch<'%c', %lld, %lld>(rows, %s, %s, %s%s);", in->prec[2],
                         (long long)bg_cg_kcols(*t0), (long long)C, nm[0], nm[1], nm[2], sa);
            bg_emit_line(e, "static_assert(bgnn::wgs_smem_bytes<%lld>() == %du, \"the plan's smem (plan.c bg_plan_wgs_smem)\");",
                         (long long)C, l->smem);
            break;
        }
        if (!plain && bg_plan_bmm_tc(m, in, wt, plan_sm(p))) { /* bit tensor cores (plan.c gives its shape) */
            bg_emit_line(e, "bgnn::bmm_bb_tc<'%c', %lld, %lld>(rows, %s, %s, %s%s);", in->prec[2],
                         (long long)bg_cg_kcols(*t0), (long long)C, nm[0], nm[1], nm[2], sa);
            break;
        }
        if (bg_plan_bmm_fb_rows(m, in, wt)) { /* the input features: a warp a row, zeros skipped */
            bg_emit_line(e, "bgnn::bmm_fb_rows<'%c', %lld, %lld>(rows, %s, %s, %s%s);", in->prec[2],
                         (long long)bg_cg_kcols(*t0), (long long)C, nm[0], nm[1], nm[2], sa);
            break;
        }
        /* the recorded float order (docs/semantics.md, section 2): the split-k chunk (0 = seq)
         * and, for the generic product, the fma flag; nothing for seq without fma */
        BgFpOrder fp = bg_inst_fp(m, in);
        long long spl = fp.kind == BG_FP_SPLITK ? (long long)fp.chunk : 0;
        if (plain && own && ff_tile(m, p, l)) { /* a row group's phase: every thread of the block calls it */
            bg_emit_line(e, "bgnn::bmm_ff_tile<%lld, %lld, %lld, %s>(rows, %s, %s, %s%s); // w and x rows in shared memory",
                         (long long)bg_cg_kcols(*t0), (long long)C, spl, fp.fma ? "true" : "false", nm[0], nm[1], nm[2], sa);
            break;
        }
        char fpt[64] = "";
        const bool tiled = !plain && bg_plan_bmm_fb_tiled_kernel(m, in, wt);
        if (tiled) { /* split-k (b1 weights); f32 weights: Y 'F' (seq+fma) */
            if (in->prec[1] == 'F') snprintf(fpt, sizeof fpt, ", 0, 'F'");
            else if (spl) snprintf(fpt, sizeof fpt, ", %lld", spl);
        } else if (spl || fp.fma) {
            snprintf(fpt, sizeof fpt, ", %lld, %s", spl, fp.fma ? "true" : "false");
        }
        if (tiled) { /* the tiled FB kernel (plan.c gives its shape) */
            /* its batchnorm prologue: BN 0 none, 1 mean/var, 2 + gamma, 3 + beta, 4 + both */
            int bn = 0, k = bg_cg_step_first_arg(in, l->nargs);
            const char *sl[4] = {"nullptr", "nullptr", "nullptr", "nullptr"};
            unsigned eps = 0u;
            if (in->npro) {
                int a = bg_inst_step_arg(in, 0);
                bool hg = in->args[a + 2] != BG_NONE, hb = in->args[a + 3] != BG_NONE;
                bn = hg && hb ? 4 : hb ? 3 : hg ? 2 : 1;
                for (int j = 0; j < 4; j++) sl[j] = slot_name(in, 0, j, nm, &k);
                eps = f32_bits(in->steps[0].eps);
            }
            BgStrBuf eb = {0};
            if (in->nsteps > in->npro) { /* its epilogue: the functor the generic product applies */
                bg_sb_printf(&eb, ", ");
                steps_expr(&eb, m, in, nm, &k);
            }
            char *epi = bg_sb_take(&eb);
            bg_emit_line(e, "bgnn::bmm_fb_tiled<'%c', %lld, %lld, %d, 0x%08xu%s>(rows, %s, %s, %s, %s, %s, %s, %s%s);",
                         in->prec[2], (long long)bg_cg_kcols(*t0), (long long)C, bn, eps, fpt, nm[0], nm[1], nm[2],
                         sl[0], sl[1], sl[2], sl[3], epi);
            free(epi);
            break;
        }
        bg_emit_line(e, "bgnn::bmm<'%c', '%c', '%c', %lld, %lld, %s%s>(rows, %s, %s, %s%s);", in->prec[0],
                     in->prec[1], in->prec[2], (long long)bg_cg_kcols(*t0), (long long)C,
                     wt ? "true" : "false", fpt, nm[0], nm[1], nm[2], sa);
        break;
    }
    case BG_OP_BSPMM: {
        const BgInst *g = &m->insts[in->args[0]];
        if (bg_plan_bspmm_fast(m, in) && plain) { /* the same sum, one row at a time (no colf: unit) */
            bg_emit_line(e, "bgnn::bspmm_adjb<'B', '%c', %lld, true, %d>(rows, %s, %s, %s, %s, nullptr, %s);", in->prec[2],
                         (long long)C, (int)in->attrs.method, nm[0], nm[1], nm[2], nm[3], nm[4]);
            break;
        }
        if (bg_plan_bspmm_fast(m, in)) { /* y, rowptr, col, rowf, x, items, partial, done */
            int method = in->attrs.method == BG_METHOD_AUTO ? (int)BG_METHOD_POPC2 : (int)in->attrs.method;
            bg_emit_line(e, "bgnn::bspmm_bb_csr<%lld, '%c', %d, false>(n, %s, %s, %s, %s, %s, (const int4 *)%s + 1, %s[0], %s[2], %s, (unsigned *)%s);",
                         (long long)C, in->prec[2], method, nm[1], nm[2], nm[3], nm[4], nm[0], nm[5], nm[5], nm[5],
                         nm[6], nm[7]);
            break;
        }
        if (bg_plan_bspmm_bits(m, in)) { /* bit activations: a warp a row (adjb: rowf, colf; adjf: w) */
            bool adjf = in->prec[1] == 'F';
            char order[64] = "nullptr"; /* the rows by length; index order in the per-graph kernel */
            if (!plain) snprintf(order, sizeof order, "(const int4 *)%s", adjf ? nm[5] : nm[6]);
            char slots[48] = ""; /* the order slots(S, T, H): its parameters */
            const BgFpOrder fp = bg_inst_fp(m, in);
            if (fp.kind == BG_FP_SLOTS) snprintf(slots, sizeof slots, ", %d, %d, %d", (int)fp.split, (int)fp.chunk, (int)fp.hub);
            bg_emit_line(e, "bgnn::bspmm_bits_rows<%s, '%c', %lld%s>(rows, %s, %s, %s, %s, %s, (const unsigned *)%s, %s%s);",
                         adjf ? "true" : "false", in->prec[2], (long long)C, slots, nm[0], nm[1], nm[2],
                         adjf ? "nullptr" : nm[3], adjf ? nm[3] : nm[4], adjf ? nm[4] : nm[5], order, sa);
            break;
        }
        if (bg_plan_bspmm_wide(m, in) && own && !plain) { /* wide rows: K outputs a thread, long rows staged */
            bg_emit_line(e, "bgnn::bspmm_wide_adjb<%lld, %d>(rows, %s, %s, %s, %s, %s, %s, (const int4 *)%s%s);", (long long)C,
                         BG_PLAN_LONG_ROW_EDGES, nm[0], nm[1], nm[2], nm[3], nm[4], nm[5], nm[6], sa);
            break;
        }
        if (bg_plan_bspmm_rows(m, in) && own && !plain) { /* a warp a row over the slots (spmm.cuh) */
            if (in->prec[1] == 'F')
                bg_emit_line(e, "bgnn::bspmm_rows_adjf<'%c', %lld>(rows, %s, %s, %s, %s, %s, (const int4 *)%s%s);",
                             in->prec[2], (long long)C, nm[0], nm[1], nm[2], nm[3], nm[4], nm[5], sa);
            else
                bg_emit_line(e, "bgnn::bspmm_rows_adjb<'%c', %lld>(rows, %s, %s, %s, %s, %s, %s, (const int4 *)%s%s);",
                             in->prec[2], (long long)C, nm[0], nm[1], nm[2], nm[3], nm[4], nm[5], nm[6], sa);
            break;
        }
        if (in->prec[1] == 'F') {
            bg_emit_line(e, "bgnn::bspmm_adjf<'%c', '%c', %lld>(rows, %s, %s, %s, %s, %s%s);", in->prec[0],
                         in->prec[2], (long long)C, nm[0], nm[1], nm[2], nm[3], nm[4], sa);
        } else {
            bool unit = g->attrs.norm == BG_NORM_NONE || g->attrs.norm == BG_NORM_MEAN;
            bg_emit_line(e, "bgnn::bspmm_adjb<'%c', '%c', %lld, %s, %d>(rows, %s, %s, %s, %s, %s, %s%s);",
                         in->prec[0], in->prec[2], (long long)C, unit ? "true" : "false",
                         (int)in->attrs.method, nm[0], nm[1], nm[2], nm[3], nm[4], nm[5], sa);
        }
        break;
    }
    case BG_OP_BSPMM_MM: {
        /* y, rowptr, col, rowf, colf (adjacency B) or w (F), x, W, then the step operands: the
         * product's mm steps [0, npro) (EM, at the neighbour row j), then the epilogue (EPI) */
        const BgInst *g = &m->insts[in->args[0]];
        bool adjf = in->prec[1] == 'F';
        int ix = adjf ? 4 : 5;
        char pq[4];
        bg_inst_mm_prec(m, in, pq);
        bool wt = p->bufs[l->args[ix + 1]].kind == BG_BUF_B1T;
        int64_t K = bg_cg_kcols(m->insts[in->args[1]].type);
        BgStrBuf em = {0}, epi = {0};
        int k = bg_cg_step_first_arg(in, l->nargs);
        bg_cg_steps_range(&em, m, in, 0, in->npro, nm, &k);
        bg_cg_steps_range(&epi, m, in, in->npro, in->nsteps, nm, &k);
        char *ems = bg_sb_take(&em), *epis = bg_sb_take(&epi);
        char lanes[16] = ""; /* lanes= of the schedule: a template argument only when set */
        if (in->attrs.sched.lanes) snprintf(lanes, sizeof lanes, ", %d", (int)in->attrs.sched.lanes);
        char slots[64] = "nullptr"; /* the rows in blocks' slots; index order in the per-graph kernel */
        if (!plain) snprintf(slots, sizeof slots, "(const int4 *)%s", nm[ix + 2]);
        if (adjf) {
            bg_emit_line(e, "bgnn::bspmm_mm_adjf<'%c', '%c', '%c', '%c', %lld, %lld, %s%s>(rows, %s, %s, %s, %s, %s, %s, %s, %s, %s);",
                         pq[0], pq[1], pq[2], in->prec[2], (long long)K, (long long)C, tf(wt), lanes, nm[0], nm[1],
                         nm[2], nm[3], nm[4], nm[5], slots, ems, epis);
        } else {
            bool unit = g->attrs.norm == BG_NORM_NONE || g->attrs.norm == BG_NORM_MEAN;
            bg_emit_line(e, "bgnn::bspmm_mm_adjb<'%c', '%c', '%c', '%c', %lld, %lld, %s, %s, %d%s>(rows, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s);",
                         pq[0], pq[1], pq[2], in->prec[2], (long long)K, (long long)C, tf(wt), tf(unit),
                         (int)in->attrs.method, lanes, nm[0], nm[1], nm[2], nm[3], nm[4], nm[5], nm[6], slots, ems, epis);
        }
        free(ems);
        free(epis);
        break;
    }
    case BG_OP_CONCAT: {
        bg_emit_printf(e, "const void *const xs[] = {");
        for (int k = 1; k < l->nargs; k++) bg_emit_printf(e, "%s%s", k > 1 ? ", " : "", nm[k]);
        bg_emit_printf(e, "};\n");
        bg_emit_printf(e, "bgnn::concat<'%c'", letter(ty));
        for (int k = 0; k < in->nargs; k++)
            bg_emit_printf(e, ", %lld", (long long)bg_cg_kcols(m->insts[in->args[k]].type));
        bg_emit_printf(e, ">(rows, %s, xs);\n", nm[0]);
        break;
    }
    case BG_OP_READOUT:
        bg_emit_line(e, "bgnn::readout<'%c', %lld, %d>(rows, %s, %s, %s);", letter(*t0), (long long)C,
                     (int)in->attrs.reduce, nm[0], nm[1], nm[2]);
        break;
    default:
        bg_diag_error(d, BG_E_INTERNAL, "codegen: no kernel template for '%s'", bg_op_info(in->op)->name);
        ok = false;
        break;
    }
    free(sa);
    return ok;
}

/* Wrapper parameter names by op and position (args[0] is always the output). */
static const char *param_base(const BgModule *m, const BgInst *in, int k, int nargs) {
    if (k == 0) return "y";
    int first = bg_cg_step_first_arg(in, nargs);
    if (k >= first) { /* a fused step's operand (plan.c: after the op's own, none skipped) */
        static const char *const names[BG_STEP_COUNT][4] = {
            {"srow", "scol"}, {"addend"}, {""}, {"thr"}, {"mean", "var", "gamma", "beta"}, {""}, {"mu", "csum"}, {""},
            {"sbits", "sbrow", "sbcol"}};
        for (int s = 0; s < in->nsteps; s++) {
            BgStepKind sk = (BgStepKind)in->steps[s].kind;
            for (int j = 0, a = bg_inst_step_arg(in, s); j < bg_step_slots(sk); j++)
                if (in->args[a + j] != BG_NONE && first++ == k) return names[sk][j];
        }
        return "p";
    }
    switch (in->op) {
    case BG_OP_BMM: return k == 1 ? "x" : "w";
    case BG_OP_BN_SCALE: return k == 1 ? "var" : "gamma";
    case BG_OP_SIGN_SUM: return "w";
    case BG_OP_BN_SHIFT: {
        static const char *const names[] = {"y", "w", "mean", "scale", "beta"};
        return k < 5 ? names[k] : "x";
    }
    case BG_OP_BSPMM: {
        static const char *const adjb[] = {"y", "rowptr", "col", "rowf", "colf", "x", "order"};
        static const char *const adjf[] = {"y", "rowptr", "col", "w", "x", "order"};
        static const char *const fast[] = {"y", "rowptr", "col", "rowf", "x", "items", "partial", "done"};
        if (bg_plan_bspmm_fast(m, in)) return k < 8 ? fast[k] : "x";
        const int nb = (in->prec[1] == 'F' ? 5 : 6); /* then the bits' order or the rows' slots */
        if (k == nb && (bg_plan_bspmm_bits(m, in) || bg_plan_bspmm_wide(m, in))) return "order";
        if (k == nb && bg_plan_bspmm_rows(m, in)) return "slots";
        if (in->prec[1] == 'F') return k < nb ? adjf[k] : "x";
        return k < nb ? adjb[k] : "x";
    }
    case BG_OP_BSPMM_MM: { /* "wm": the product's weight ("w" is the adjacency's edge weights) */
        static const char *const adjb[] = {"y", "rowptr", "col", "rowf", "colf", "x", "wm", "slots"};
        static const char *const adjf[] = {"y", "rowptr", "col", "w", "x", "wm", "slots"};
        if (in->prec[1] == 'F') return k < 7 ? adjf[k] : "x";
        return k < 8 ? adjb[k] : "x";
    }
    case BG_OP_ADD: return k == 1 ? "a" : "b";
    case BG_OP_SCL: {
        if (k == 1) return "x";
        bool hr = in->args[1] != BG_NONE;
        return (k == 2 && hr) ? "rowf" : "colf";
    }
    case BG_OP_BATCHNORM: {
        static const char *const bn[] = {"y", "x", "mean", "var", "gamma", "beta"};
        bool hg = in->nargs > 3 && in->args[3] != BG_NONE;
        if (k == 4 && !hg) return "beta";
        return k < 6 ? bn[k] : "x";
    }
    case BG_OP_READOUT: return k == 1 ? "x" : "graph_ptr";
    default: return "x";
    }
}

/* Whether launch l has a one-wave variant (plan.h BG_PLAN_WAVE_SUFFIX, bg_plan_launch_wave: a
 * bspmm_mm a warp a row in blocks of 256).  Without a minimum of blocks, NVRTC's code for Cora's gcn_bin one had 48
 * registers and kept 6 of W's 14 words on the stack, reloaded at every tile of edges (nvcc's
 * had 63 and none: NVRTC's PTX addresses shared memory through 64-bit registers).  At 5 blocks
 * an SM it has 48 and no stack, at 4 64 and none; in the same H200 runs (docs/performance.md)
 * the 64-register kernel was faster on Cora's and CiteSeer's one wave (Cora gcn_bin 16.7 ->
 * 16.0 us, indgcn_bin 17.4 -> 16.6) and slower on PubMed's 3.7 waves (43.5 -> 44.1), where
 * the 48-register one matched the base. */
static bool wave_variant(const BgModule *m, const BgPlanLaunch *l) {
    return m->insts[l->inst].op == BG_OP_BSPMM_MM && bg_plan_launch_wave(l);
}

/* The launch bounds' minimum of resident blocks for launch l's kernel (alt as below): 1 for the
 * wgmma product (a launch with smem: its setmaxnreg moves registers between the warpgroups of
 * one block, 384 threads, so ptxas must budget for one block an SM); 2 for a
 * kernel that is the tiled FB product alone without split-k (its dense alternative, or the
 * launch itself): its inner loop fits 128 registers, and 16 warps an SM hide the shared-memory
 * reads that 8 do not; 6 for the sparse variant of a product with alt (templates/bmm_fb_csr.cuh,
 * at most 40 registers: ptxas gave it 48 once its scan of the column scales kept 8 loads in
 * flight, and CiteSeer and PubMed gcn_bin ran 0.3 us faster at 40 (Cora level) in the same
 * H200 run, docs/performance.md); 5 for a launch with a one-wave variant (wave_variant) and 4
 * for that variant (alt 3); 3 for a standardize's kernels (dense and sparse: a warp a row,
 * 122 registers unbounded, so 2 blocks of 256 an SM and Cora's 339 blocks in 1.3 waves; at 3
 * blocks, 80 registers and 168 bytes of stack, one wave: sage_full's standardize of the
 * features 17.7 -> 13.4 us, sage_full 78.0 -> 76.5 us, indgcn_full 66.8 -> 65.1 us on an H200,
 * docs/performance.md); 0 (no minimum) for everything else, split-k's partial sums included. */
static int kernel_min_blocks(const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, int alt) {
    if (l->smem) return 1; /* the wgmma product: setmaxnreg shares one block's registers out */
    if (l->block_size != 256) return 0;
    if (alt == 3) return 4;
    const BgInst *in = &m->insts[l->inst];
    if (in->op == BG_OP_STANDARDIZE && alt != 1) return 3;
    if (alt == 2) return l->alt ? 6 : 0;
    if (alt == 1) return 2;
    if (wave_variant(m, l)) return 5;
    if (in->op != BG_OP_BMM || l->nargs < 3 || p->bufs[l->args[2]].kind == BG_BUF_B1T) return 0;
    if (!bg_plan_bmm_fb_tiled_kernel(m, in, false) || bg_plan_bmm_fb_rows(m, in, false)) return 0;
    return bg_inst_fp(m, in).kind == BG_FP_SPLITK ? 0 : 2;
}

/* The alternative of a bmm of the input features (plan.h, BgPlanLaunch.alt): the tiled FB
 * kernel with the launch's column-scale prologue (BN mode 5) or none and its epilogue, the
 * same seq order as bmm_fb_rows (zero terms added instead of skipped: the same bits). */
static bool emit_dense_alt(BgEmit *e, const BgModule *m, const BgPlanLaunch *l, const char *const *nm) {
    const BgInst *in = &m->insts[l->inst];
    const BgType *t0 = &m->insts[in->args[0]].type;
    int k = bg_cg_step_first_arg(in, l->nargs);
    const char *scale = "nullptr";
    if (in->npro) { /* scl none, s */
        (void)slot_name(in, 0, 0, nm, &k);
        scale = slot_name(in, 0, 1, nm, &k);
    }
    BgStrBuf b = {0};
    bg_cg_steps_range(&b, m, in, in->npro, in->nsteps, nm, &k);
    char *epi = bg_sb_take(&b);
    bg_emit_line(e, "bgnn::bmm_fb_tiled<'%c', %lld, %lld, %d, 0x00000000u, 0>(rows, %s, %s, %s, %s, nullptr, nullptr, nullptr, %s);",
                 in->prec[2], (long long)bg_cg_kcols(*t0), (long long)bg_cg_kcols(in->type), in->npro ? 5 : 0, nm[0], nm[1], nm[2],
                 scale, epi);
    free(epi);
    return true;
}

bool bg_cg_emit_sparse_std(BgEmit *e, const BgModule *m, const BgPlanLaunch *l, const char *const *nm,
                           const char *csr, bool stage, const char *bits, const char *am) {
    const BgInst *in = &m->insts[l->inst];
    const long long kc = (long long)bg_cg_kcols(m->insts[in->args[0]].type);
    if (in->op != BG_OP_STANDARDIZE || (!l->alt && !bg_plan_row_csr(m, in))) return false;
    char out[320] = "";
    if (bits || am)
        snprintf(out, sizeof out, ", bgnn::StdRowOut<%lld>{%s, %s}", kc, bits ? bits : "nullptr", am ? am : "nullptr");
    bg_emit_line(e, "bgnn::standardize_csr<%lld, 0x%08xu /* eps %g */, %d%s>(rows, %s, %s%s);", kc,
                 f32_bits(in->attrs.eps), (double)in->attrs.eps, row_lanes(m, in), stage ? ", true" : "", nm[0], csr, out);
    return true;
}

bool bg_cg_emit_sparse_call(BgEmit *e, const BgModule *m, const BgPlanLaunch *l, const char *const *nm,
                            const char *csr, bool whole, bool own) {
    const BgInst *in = &m->insts[l->inst];
    const long long kc = (long long)bg_cg_kcols(m->insts[in->args[0]].type);
    if (!l->alt && !bg_plan_row_csr(m, in)) return false; /* no template of its form */
    if (in->op == BG_OP_BIN) {
        char *sa = bg_cg_step_args(m, in, l, nm, false);
        bg_emit_line(e, "bgnn::bin_csr<%lld>(rows, %s, %s%s);", kc, nm[0], csr, sa);
        free(sa);
        return true;
    }
    if (in->op == BG_OP_STANDARDIZE) /* STAGE in its own kernel of blocks of 256 */
        return bg_cg_emit_sparse_std(e, m, l, nm, csr, own && l->block_size == 256, NULL, NULL);
    if (in->op == BG_OP_ROW_MEAN || in->op == BG_OP_BIN_CENTER) {
        bg_emit_line(e, "bgnn::%s<%lld, %d>(rows, %s, %s);", in->op == BG_OP_ROW_MEAN ? "rowmean_csr" : "bin_center_csr",
                     kc, row_lanes(m, in), nm[0], csr);
        return true;
    }
    char *sa = bg_cg_step_args(m, in, l, nm, true);
    const long long cols = (long long)bg_cg_kcols(in->type);
    /* whole: the lanes a row by the launch's rows (bmm_fb_csr_rows; plan.h bg_plan_fb_csr_lanes_rows) */
    char wide[32] = "";
    if (whole) snprintf(wide, sizeof wide, ", %d", BG_PLAN_FB_CSR_WIDE);
    bg_emit_line(e, "bgnn::bmm_fb_csr%s<'%c', %lld, %lld, %lld%s>(rows, %s, %s, %s%s);", whole ? "_rows" : "", in->prec[2],
                 (long long)bg_cg_kcols(m->insts[in->args[0]].type), cols, (long long)bg_plan_fb_csr_lanes(cols), wide,
                 nm[0], csr, nm[2], sa);
    free(sa);
    return true;
}

/* A launch's own sparse variant: the call over the whole CSR block its args[1] points to, in a
 * kernel of its own (a standardize's rows through its shared memory; the fused and per-graph
 * kernels, whose phases share the block's shared memory, keep the register form). */
static bool emit_sparse_alt(BgEmit *e, const BgModule *m, const BgPlanLaunch *l, const char *const *nm) {
    char csr[96];
    snprintf(csr, sizeof csr, "bgnn::csr_rows(%s, rows)", nm[1]);
    return bg_cg_emit_sparse_call(e, m, l, nm, csr, true, true);
}

/* ---- the fused kernel (fuse-model; plan.h) ---------------------------------------------- */

void bg_cg_phase_open(BgEmit *e, const BgModule *m, const IrLines *ir, const char *src, const BgPlanLaunch *l,
                      int i, int phase) {
    int line = 0, col = 0;
    const BgInst *in = &m->insts[l->inst];
    if (m->src) bg_source_linecol(m->src, in->loc.off, &line, &col);
    char *irl = bg_cg_ir_line(ir, l->inst);
    bg_emit_line(e, "{ // phase %d, launch %d: %s:%d:%d  %s", phase, i, src, line, col, irl ? irl : "");
    free(irl);
    bg_emit_indent(e, 1);
}

void bg_cg_buffer_params(BgEmit *e, const BgPlan *p, const char *extra) {
    for (int b = 0; b < p->nbufs; b++) {
        const BgPlanBuf *pb = &p->bufs[b];
        if (pb->role == BG_ROLE_TEMP || bg_plan_scratch_buf(pb)) bg_emit_printf(e, ",\n        %s *b%d", bg_cg_ctype(pb->kind), b);
        else bg_emit_printf(e, ",\n        const %s *__restrict__ b%d", bg_cg_ctype(pb->kind), b);
    }
    if (extra) bg_emit_printf(e, ",\n        %s", extra);
    bg_emit_printf(e, ") {\n");
}

/* One kernel running every launch in order, phases separated by bgnn::grid_sync.  Every
 * plan buffer is a parameter b<index>; the computed (TEMP) ones are neither const nor
 * __restrict__, so no load of a value written earlier in the same kernel can go through the
 * non-coherent read-only cache. */
static bool emit_fused(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src,
                       BgDiagSink *d) {
    int *phase = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(int));
    int nph = bg_plan_phases(p, phase), nrun = 0;
    for (int i = 0; i < p->nlaunches; i++) nrun += !p->launches[i].prep;
    bg_emit_line(e, "%s", "");
    bg_emit_line(e, "// The whole model as one cooperative kernel (fuse-model): %d launches in %d phases,",
                 nrun, nph);
    const int csr = bg_plan_fused_csr(p);
    bg_emit_line(e, "// %d grid-wide syncs.  Parameters: n, ngraphs, the barrier word, then every buffer%s.",
                 nph > 0 ? nph - 1 : 0, csr >= 0 ? ", then the features' CSR (or nullptr)" : "");
    bg_emit_printf(e, "extern \"C\" __global__ void __launch_bounds__(%d) %s(long long n, long long ngraphs,\n"
                      "        unsigned *__restrict__ bar",
                   p->fused_block, p->fused_kernel);
    bg_cg_buffer_params(e, p, csr >= 0 ? "const unsigned *__restrict__ csr" : NULL);
    bg_emit_indent(e, 1);
    bg_emit_line(e, "(void)n;");
    bg_emit_line(e, "(void)ngraphs;");
    bool ok = true;
    char names[BG_PLAN_MAX_ARGS][16];
    const char *nm[BG_PLAN_MAX_ARGS];
    for (int i = 0, last = -1; i < p->nlaunches && ok; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (l->prep) continue; /* run once when the parameters are bound (its own kernel) */
        if (last >= 0 && phase[i] != last) bg_emit_line(e, "bgnn::grid_sync(bar);");
        last = phase[i];
        bg_cg_phase_open(e, m, ir, src, l, i, phase[i]);
        row_expr(e, l->rows);
        for (int k = 0; k < l->nargs; k++) {
            snprintf(names[k], sizeof names[k], "b%d", l->args[k]);
            nm[k] = names[k];
        }
        if (bg_plan_fused_csr_launch(p, l, csr)) {
            /* its sparse variant over the features' CSR when the runtime passes one (plan.h) */
            bg_emit_line(e, "if (csr) {");
            bg_emit_indent(e, 1);
            ok = bg_cg_emit_sparse_call(e, m, l, nm, "bgnn::csr_rows(csr, rows)", true, false);
            bg_emit_indent(e, -1);
            bg_emit_line(e, "} else {");
            bg_emit_indent(e, 1);
            ok = ok && bg_cg_emit_call(e, m, p, l, nm, false, false, d);
            bg_emit_indent(e, -1);
            bg_emit_line(e, "}");
        } else {
            ok = bg_cg_emit_call(e, m, p, l, nm, false, false, d);
        }
        bg_emit_indent(e, -1);
        bg_emit_line(e, "}");
    }
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
    free(phase);
    return ok;
}

/* ---- the translation unit ---------------------------------------------------------- */

char *bg_codegen_cuda(const BgModule *m, const char *arch, BgDiagSink *d) {
    return bg_codegen_cuda_arch(m, arch, NULL, 0, d);
}

char *bg_codegen_cuda_arch(const BgModule *m, const char *arch, char *compile_arch, size_t n, BgDiagSink *d) {
    int sm;
    const char *use_arch = arch ? arch : m->arch ? m->arch : "sm_90";
    if (!bg_arch_parse(use_arch, &sm) || sm < 70) {
        bg_diag_error(d, BG_E_ARCH, "unsupported GPU architecture '%s' (expected sm_70 or newer, e.g. sm_90)",
                      use_arch);
        return NULL;
    }
    BgArena *a = bg_arena_new();
    BgPlan *p = bg_codegen_plan(m, use_arch, a, d);
    if (!p) {
        bg_arena_free(a);
        return NULL;
    }
    if (compile_arch && n) snprintf(compile_arch, n, "%s", p->arch);
    char *manifest = bg_manifest_write(p);
    char *ir_text = bg_ir_print(m);
    IrLines irl_index = bg_cg_ir_lines(ir_text), *ir = &irl_index;
    const char *src = m->src && m->src->name ? base_name(m->src->name) : "<module>";

    /* Which template families the launches use. */
    bool fam[6] = {false, false, false, false, false, false}; /* bin_ops, elementwise, matmul, rowwise, spmm, epilogue */
    for (int i = 0; i < p->nlaunches; i++) {
        switch (m->insts[p->launches[i].inst].op) {
        case BG_OP_BIN: case BG_OP_CONCAT: fam[0] = true; break;
        case BG_OP_SCL: case BG_OP_ADD: case BG_OP_RELU: case BG_OP_BATCHNORM: fam[1] = true; break;
        case BG_OP_BMM: fam[2] = true; break;
        case BG_OP_ABSMEAN: case BG_OP_STANDARDIZE: case BG_OP_LOG_SOFTMAX: case BG_OP_READOUT: fam[3] = true; break;
        case BG_OP_BIN_CENTER: case BG_OP_ROW_MEAN: fam[3] = true; break;
        case BG_OP_BSPMM: fam[4] = true; break;
        case BG_OP_THRESHOLD: fam[5] = true; break;
        default: break;
        }
    }
    static const char *const fam_hdr[6] = {"bin_ops.cuh", "elementwise.cuh", "matmul.cuh", "rowwise.cuh", "spmm.cuh",
                                           "epilogue.cuh"};
    bool fb_tiled = false, bb_tc = false, bb_wgs = false, fb_rows = false, fold = false;
    for (int i = 0; i < p->nlaunches; i++) {
        const BgInst *in = &m->insts[p->launches[i].inst];
        if (in->op == BG_OP_BN_SCALE || in->op == BG_OP_BN_SHIFT || in->op == BG_OP_SIGN_SUM) fold = true;
        if (in->op != BG_OP_BMM) continue;
        const bool wt = p->bufs[p->launches[i].args[2]].kind == BG_BUF_B1T;
        if (bg_plan_bmm_fb_rows(m, in, wt)) fb_rows = true;
        if (bg_plan_bmm_fb_tiled_kernel(m, in, wt) || p->launches[i].alt) fb_tiled = true;
        if (bg_plan_bmm_tc(m, in, wt, plan_sm(p))) bb_tc = true;
        if (bg_plan_bmm_wgs(m, in, wt, plan_sm(p))) bb_wgs = true;
    }

    BgEmit e;
    bg_emit_init(&e);
    bg_emit_line(&e, "// Generated by bgnn %s from %s (model %s) for %s. Do not edit.", BG_VERSION_STRING,
                 src, p->model, p->arch);
    bg_emit_line(&e, "// %d kernels.  Calling convention (plan/plan.h): every kernel takes", p->nlaunches);
    bg_emit_line(&e, "// (long long n, long long ngraphs, out, in...) and grid-strides over rows * threads_per_row.");
    bg_emit_line(&e, "#include \"bgnn_common.cuh\"");
    for (int k = 0; k < 6; k++)
        if (fam[k]) bg_emit_line(&e, "#include \"%s\"", fam_hdr[k]);
    if (fb_tiled) bg_emit_line(&e, "#include \"bmm_fb_tiled.cuh\"");
    if (bb_tc) bg_emit_line(&e, "#include \"bmm_bb_tc.cuh\""); /* includes bmm_fb_tiled.cuh (its shared block) */
    if (bb_wgs) bg_emit_line(&e, "#include \"bmm_bb_wgs.cuh\"");
    if (fb_rows) bg_emit_line(&e, "#include \"bmm_fb_rows.cuh\"");
    if (fb_rows) bg_emit_line(&e, "#include \"bmm_fb_csr.cuh\"");
    for (int i = 0; i < p->nlaunches; i++)
        if (bg_plan_bspmm_bits(m, &m->insts[p->launches[i].inst])) {
            bg_emit_line(&e, "#include \"spmm_bits.cuh\"");
            break;
        }
    if (fold) bg_emit_line(&e, "#include \"fold.cuh\"");
    for (int i = 0; i < p->nrowgroups; i++)
        if (p->rowgroups[i].warp) {
            bg_emit_line(&e, "#include \"warp_rows.cuh\"");
            break;
        }
    for (int i = 0; i < p->nrowgroups; i++)
        if (p->rowgroups[i].wide) {
            bg_emit_line(&e, "#include \"spmm_wide_outs.cuh\"");
            break;
        }
    for (int i = 0; i < p->nlaunches; i++)
        if (bg_plan_bspmm_fast(m, &m->insts[p->launches[i].inst])) {
            bg_emit_line(&e, "#include \"bspmm_fast.cuh\"");
            break;
        }
    for (int i = 0; i < p->nlaunches; i++)
        if (m->insts[p->launches[i].inst].op == BG_OP_BSPMM_MM) { /* includes matmul.cuh, epilogue.cuh */
            bg_emit_line(&e, "#include \"mm_spmm.cuh\"");
            if (p->blocks && !fam[4]) bg_emit_line(&e, "#include \"spmm.cuh\""); /* its staged form (cg_blocks.c) */
            break;
        }

    bool ok = true;
    for (int i = 0; i < p->nlaunches && ok; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        const BgInst *in = &m->insts[l->inst];
        bg_emit_line(&e, "%s", "");
        int line = 0, col = 0;
        if (m->src) bg_source_linecol(m->src, in->loc.off, &line, &col);
        char *irl = bg_cg_ir_line(ir, l->inst);
        bg_emit_line(&e, "// %s:%d:%d  %s", src, line, col, irl ? irl : "");
        free(irl);
        char rows[32];
        if (l->rows.kind == BG_ROWS_N) snprintf(rows, sizeof rows, "N");
        else if (l->rows.kind == BG_ROWS_G) snprintf(rows, sizeof rows, "G");
        else if (l->rows.kind == BG_ROWS_ITEMS) snprintf(rows, sizeof rows, "items(%d)", l->rows.graph);
        else snprintf(rows, sizeof rows, "%lld", (long long)l->rows.value);
        bg_emit_line(&e, "// launch %d: rows %s, %d threads per row, block %d", i, rows,
                     l->threads_per_row, l->block_size);
        /* the launch's kernel, then its alternative and its sparse variant (plan.h): an alt
         * launch has both, a bin of the features (bg_plan_row_csr) the variant; then its
         * one-wave variant (alt 3, plan.h BG_PLAN_WAVE_SUFFIX) */
        const bool row_csr = !l->alt && bg_plan_row_csr(m, in) && bg_plan_launch_row_csr(p, l);
        for (int alt = 0; alt < 4 && ok; alt++) {
            if ((alt == 1 && !l->alt) || (alt == 2 && !l->alt && !row_csr) || (alt == 3 && !wave_variant(m, l)))
                continue;
            if (alt == 3)
                bg_emit_line(&e, "// launch %d's one-wave variant: the same code at %d blocks an SM, run when the grid fits one wave",
                             i, kernel_min_blocks(m, p, l, 3));
            if (alt == 1)
                bg_emit_line(&e, "// launch %d's alternative for dense features: %d threads per row", i, l->alt_tpr);
            if (alt == 2) { /* an alt's bmm_fb_csr_rows: more lanes on few rows (plan.h bg_plan_fb_csr_lanes_rows) */
                const int tpr = bg_plan_sparse_tpr(p, l), few = bg_plan_sparse_tpr_rows(p, l, 0);
                if (few != tpr)
                    bg_emit_line(&e, "// launch %d's variant for sparse features (CSR): %d threads per row, %d below %d rows", i,
                                 tpr, few, BG_PLAN_FB_CSR_WIDE / tpr);
                else
                    bg_emit_line(&e, "// launch %d's variant for sparse features (CSR): %d threads per row", i, tpr);
            }
            BgNames names;
            bg_names_init(&names, a);
            bg_names_unique(&names, "n");
            bg_names_unique(&names, "ngraphs");
            bg_names_unique(&names, "rows");
            bg_names_unique(&names, "xs");
            const char *nm[BG_PLAN_MAX_ARGS];
            const int minb = kernel_min_blocks(m, p, l, alt);
            char bounds[32];
            snprintf(bounds, sizeof bounds, minb ? "%d, %d" : "%d", l->block_size, minb);
            bg_emit_printf(&e, "extern \"C\" __global__ void __launch_bounds__(%s) %s%s(long long n, long long ngraphs",
                           bounds, alt == 1 ? l->alt : l->kernel,
                           alt == 2 ? BG_PLAN_SPARSE_SUFFIX : alt == 3 ? BG_PLAN_WAVE_SUFFIX : "");
            for (int k = 0; k < l->nargs; k++) {
                nm[k] = bg_names_unique(&names, param_base(m, in, k, l->nargs));
                const BgPlanBuf *b = &p->bufs[l->args[k]];
                bg_emit_printf(&e, ",\n        %s%s *__restrict__ %s", k && !bg_plan_scratch_buf(b) ? "const " : "",
                               bg_cg_ctype(b->kind), nm[k]);
            }
            bg_emit_printf(&e, ") {\n");
            bg_emit_indent(&e, 1);
            row_expr(&e, l->rows);
            bg_emit_line(&e, "(void)n;");
            bg_emit_line(&e, "(void)ngraphs;");
            /* beside the kernel before it: its wait at its end (plan.h bg_plan_launch_beside_prev) */
            const bool beside = bg_plan_launch_beside_prev(p, i);
            if (!beside) bg_emit_line(&e, "bgnn::pdl_enter();");
            if (bg_plan_launch_lets_next(p, i)) bg_emit_line(&e, "bgnn::pdl_trigger(); // the next kernel runs beside this one");
            ok = alt == 1 ? emit_dense_alt(&e, m, l, nm)
                 : alt == 2 ? emit_sparse_alt(&e, m, l, nm)
                            : bg_cg_emit_call(&e, m, p, l, nm, false, true, d);
            if (beside) bg_emit_line(&e, "bgnn::pdl_enter(); // at the end: this kernel reads and writes nothing of the one before it");
            bg_emit_indent(&e, -1);
            bg_emit_line(&e, "}");
        }
    }

    if (ok && p->fused) ok = emit_fused(&e, m, p, ir, src, d);
    if (ok && p->blocks) ok = bg_cg_emit_blocks(&e, m, p, ir, src, d);
    if (ok && p->nrowgroups) ok = bg_cg_emit_rowgroups(&e, m, p, ir, src, d);

    if (ok) {
        size_t mlen = strlen(manifest);
        bg_emit_line(&e, "%s", "");
        bg_emit_line(&e, "// Every per-launch and row group kernel opens with bgnn::pdl_enter (templates/bgnn_common.cuh),");
        bg_emit_line(&e, "// so the runtime may launch them with programmatic stream serialization (runtime/module.c).");
        bg_emit_line(&e, "extern \"C\" __device__ const int bgnn_pdl_enter = 1;");
        bg_emit_line(&e, "%s", "");
        bg_emit_line(&e, "// The manifest (plan/manifest.c), %zu bytes.", mlen);
        bg_emit_line(&e, "extern \"C\" __device__ const unsigned long long bgnn_manifest_len = %zuULL;", mlen);
        bg_emit_line(&e, "extern \"C\" __device__ const unsigned char bgnn_manifest[%zu] = {", mlen + 1);
        bg_emit_indent(&e, 1);
        for (size_t i = 0; i <= mlen; i += 16) {
            char buf[16 * 6 + 4];
            size_t o = 0;
            for (size_t k = i; k < i + 16 && k <= mlen; k++)
                o += (size_t)snprintf(buf + o, sizeof buf - o, "%s0x%02x,", k > i ? " " : "",
                                      (unsigned char)manifest[k]);
            bg_emit_line(&e, "%s", buf);
        }
        bg_emit_indent(&e, -1);
        bg_emit_line(&e, "};");
    }
    free(irl_index.lines);
    free(ir_text);
    free(manifest);
    bg_arena_free(a);
    if (!ok) {
        bg_emit_free(&e);
        return NULL;
    }
    return bg_emit_take(&e);
}
