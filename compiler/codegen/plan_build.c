/* plan_build.c - builds the GPU execution plan of a module (plan/plan.h): one device
 * buffer per IR value that needs storage (leaves only when some kernel reads them), the
 * graph arrays the kernels read, one launch per computing instruction in IR order, and the
 * outputs.  The launch shapes here must match the kernels cg_cuda.c instantiates. */
#include "codegen.h"

#include <stdio.h>
#include <string.h>

#define BLOCK 256

typedef struct PlanCtx {
    const BgModule *m;
    BgArena *a;
    BgDiagSink *d;
    BgPlan *p;
    int cap_bufs, cap_launches, cap_outputs;
    int *val_buf;   /* per inst: buffer holding the value (canonical layout), or -1 */
    int *wt_buf;    /* per inst: B1T buffer of a b1 value, or -1 */
    int *graph_of;  /* per inst: graph table index of a GRAPH, or -1 */
    int (*garr_buf)[BG_GARR_COUNT]; /* per graph table entry: buffer of each shared array, or -1 */
    int gptr_buf;
    int sm; /* the target's compute capability (90 for sm_90), 0 unknown */
    bool *prep; /* per instruction: of parameters alone (bg_ir_prep) */
    bool *sched_set; /* per graph table entry: a fast aggregation set its work items */
} PlanCtx;

bool bg_plan_bspmm_fast(const BgModule *m, const BgInst *in) {
    if (in->op != BG_OP_BSPMM || in->prec[0] != 'B' || in->prec[1] != 'B' || in->nsteps != 0) return false;
    const BgInst *g = &m->insts[in->args[0]];
    return g->attrs.norm == BG_NORM_NONE || g->attrs.norm == BG_NORM_MEAN;
}

bool bg_plan_bspmm_bits(const BgModule *m, const BgInst *in) {
    return in->op == BG_OP_BSPMM && in->prec[0] == 'B' && !bg_plan_bspmm_fast(m, in);
}

bool bg_plan_bspmm_rows(const BgModule *m, const BgInst *in) {
    (void)m;
    return in->op == BG_OP_BSPMM && in->prec[0] == 'F' && in->type.rank == 2 && in->type.dim[1] >= 1 &&
           in->type.dim[1] <= BG_PLAN_ROWS_MAX_COLS;
}

bool bg_plan_bspmm_wide(const BgModule *m, const BgInst *in) {
    (void)m;
    return in->op == BG_OP_BSPMM && strcmp(in->prec, "FBF") == 0 && in->type.rank == 2 &&
           in->type.dim[1] >= BG_PLAN_WIDE_MIN_COLS;
}

/* The tiled FB kernel's form: a bmm of float activations by weights as stored (not
 * transposed), its prologue a batchnorm or none, and a split-k order that folds at the
 * kernel's 64-k staging boundaries (FBT_KC), so chunks of multiples of 64 k. */
static bool fbt_form(const BgInst *in, bool weight_transposed) {
    return in->op == BG_OP_BMM && in->prec[0] == 'F' && !weight_transposed &&
           (!in->npro || in->steps[0].kind == BG_STEP_BATCHNORM) &&
           (in->attrs.fp.kind != BG_FP_SPLITK || in->attrs.fp.chunk % 64 == 0);
}

bool bg_plan_bmm_fb_tiled(const BgInst *in, bool weight_transposed) {
    /* b1 weights and no epilogue steps (matmul.cuh has them) */
    return fbt_form(in, weight_transposed) && in->prec[1] == 'B' && in->nsteps == in->npro;
}

bool bg_plan_bmm_fb_tiled_kernel(const BgModule *m, const BgInst *in, bool weight_transposed) {
    if (bg_plan_bmm_fb_tiled(in, weight_transposed)) return true;
    /* with epilogue steps (the same functor the generic product applies to each output),
     * after no prologue or one batchnorm; or f32 weights in the order seq+fma (the kernel's
     * fma by the staged weight is matmul.cuh's FMA step), with or without steps */
    if (!fbt_form(in, weight_transposed) || in->npro > 1) return false;
    if (in->prec[1] == 'F') /* wide enough for its 64 x 64 tiles (a classifier head stays generic) */
        return in->attrs.fp.kind == BG_FP_SEQ && in->attrs.fp.fma && bg_inst_bmm_k(m, in) >= BG_PLAN_FBT_FF_MIN_K &&
               in->type.rank == 2 && in->type.dim[1] >= BG_PLAN_FBT_FF_MIN_M;
    return in->prec[1] == 'B' && in->nsteps > in->npro;
}

bool bg_plan_row_csr(const BgModule *m, const BgInst *in) {
    if (in->nargs < 1 || in->args[0] == BG_NONE || (int)in->args[0] >= m->ninsts) return false;
    const BgInst *x = &m->insts[in->args[0]];
    if (x->op != BG_OP_INPUT || x->type.kind != BG_TY_F32 || x->type.rank != 2 || x->type.dim[1] < 1) return false;
    if (x->type.dim[1] > BG_PLAN_ROW_CSR_MAX_COLS) return false;
    if (in->op == BG_OP_STANDARDIZE) { /* lanes(32) from registers */
        const BgFpOrder fp = bg_inst_fp(m, in);
        return fp.kind == BG_FP_LANES && fp.split == 32 && x->type.dim[1] >= 2 &&
               x->type.dim[1] <= BG_PLAN_ROW_CSR_REGS_MAX && in->nsteps == 0 && in->npro == 0;
    }
    if (in->npro) return false;
    if (in->op == BG_OP_ROW_MEAN || in->op == BG_OP_BIN_CENTER) return in->nsteps == 0;
    /* a bin: no step, or the threshold compare of fold-threshold */
    return in->op == BG_OP_BIN && (in->nsteps == 0 || (in->nsteps == 1 && in->steps[0].kind == BG_STEP_THRESHOLD));
}

bool bg_plan_bmm_fb_rows(const BgModule *m, const BgInst *in, bool weight_transposed) {
    /* the features themselves in seq order (fp-order gives them seq): templates/bmm_fb_rows.cuh */
    return bg_bmm_reads_input(m, in) && !weight_transposed && bg_inst_fp(m, in).kind == BG_FP_SEQ &&
           !bg_inst_fp(m, in).fma;
}

static BgRowExpr rows_of_dim(int64_t d) {
    BgRowExpr e = {BG_ROWS_CONST, 0, -1};
    if (d == BG_DIM_N) e.kind = BG_ROWS_N;
    else if (d == BG_DIM_G) e.kind = BG_ROWS_G;
    else e.value = d;
    return e;
}

static int new_buf(PlanCtx *c, BgPlanBuf b) {
    BgPlan *p = c->p;
    if (p->nbufs == c->cap_bufs) {
        int nc = c->cap_bufs ? 2 * c->cap_bufs : 16;
        BgPlanBuf *nb = bg_arena_alloc(c->a, sizeof *nb * (size_t)nc);
        if (p->nbufs) memcpy(nb, p->bufs, sizeof *nb * (size_t)p->nbufs);
        p->bufs = nb;
        c->cap_bufs = nc;
    }
    p->bufs[p->nbufs] = b;
    return p->nbufs++;
}

/* The (rows, cols) a kernel sees for a value: rank 2 as is; rank 1 with a constant length
 * D is one row of D columns (the host layout of bg.h); rank 1 of N or G entries is N (G)
 * rows of one column (the same bytes for f32; b1 vectors of N bits are not planned). */
static void kshape(BgType t, BgRowExpr *rows, int64_t *cols) {
    if (t.rank == 2) {
        *rows = rows_of_dim(t.dim[0]);
        *cols = t.dim[1];
    } else if (t.rank == 1 && t.dim[0] < 0) {
        *rows = rows_of_dim(t.dim[0]);
        *cols = 1;
    } else {
        *rows = rows_of_dim(1);
        *cols = t.rank == 1 ? t.dim[0] : 1;
    }
}

/* A buffer for the value of inst r in its canonical layout (f32 or b1). */
static BgPlanBuf value_buf(const BgInst *in, int r) {
    BgPlanBuf b;
    memset(&b, 0, sizeof b);
    b.kind = in->type.kind == BG_TY_B1 ? BG_BUF_B1 : BG_BUF_F32;
    b.rank = in->type.rank;
    b.dim[0] = in->type.dim[0];
    b.dim[1] = in->type.dim[1];
    kshape(in->type, &b.rows, &b.cols);
    b.width = b.kind == BG_BUF_B1 ? (b.cols + 31) / 32 : b.cols;
    b.graph = -1;
    b.inst = r;
    switch (in->op) {
    case BG_OP_INPUT: b.role = BG_ROLE_INPUT; break;
    case BG_OP_PARAM: b.role = BG_ROLE_PARAM; break;
    case BG_OP_PARAM_SCALE: b.role = BG_ROLE_PARAM_SCALE; break;
    default: b.role = BG_ROLE_TEMP; break;
    }
    if (b.role != BG_ROLE_TEMP) {
        b.name = in->attrs.name;
        b.transposed = in->attrs.transposed;
    }
    return b;
}

static int use_value(PlanCtx *c, BgRef r) {
    if (c->val_buf[r] < 0) c->val_buf[r] = new_buf(c, value_buf(&c->m->insts[r], (int)r));
    return c->val_buf[r];
}

/* The B1T buffer of a b1 PARAM [K,M]. */
static int use_wt(PlanCtx *c, BgRef r) {
    if (c->wt_buf[r] < 0) {
        const BgInst *in = &c->m->insts[r];
        BgPlanBuf b = value_buf(in, (int)r);
        b.kind = BG_BUF_B1T;
        b.rows = rows_of_dim(in->type.dim[1]);
        b.cols = in->type.dim[0];
        b.width = (b.cols + 31) / 32;
        c->wt_buf[r] = new_buf(c, b);
    }
    return c->wt_buf[r];
}

static int use_garr(PlanCtx *c, BgRef adj, BgGraphArr ga) {
    int g = c->graph_of[adj];
    /* graphs of one pattern (the same self loops: bg_adj_build) share their rowptr and col:
     * one copy on the device, and one CSR for the per-graph kernel's graph stage (plan.c; GCN's
     * normalised and 0/1 adjacencies) */
    for (int h = 0; c->garr_buf[g][ga] < 0 && (ga == BG_GARR_ROWPTR || ga == BG_GARR_COL) && h < c->p->ngraphs; h++)
        if (h != g && c->garr_buf[h][ga] >= 0 && c->p->graphs[h].self_loops == c->p->graphs[g].self_loops)
            c->garr_buf[g][ga] = c->garr_buf[h][ga];
    if (c->garr_buf[g][ga] < 0) {
        BgPlanBuf b;
        memset(&b, 0, sizeof b);
        b.role = BG_ROLE_GRAPH;
        b.graph = g;
        b.garr = ga;
        b.cols = b.width = 1;
        b.inst = (int)adj;
        switch (ga) {
        case BG_GARR_ROWPTR: b.kind = BG_BUF_I64; b.rows.kind = BG_ROWS_N1; break;
        case BG_GARR_COL: b.kind = BG_BUF_I32; b.rows.kind = BG_ROWS_NNZ; break;
        case BG_GARR_W: b.kind = BG_BUF_F32; b.rows.kind = BG_ROWS_NNZ; break;
        case BG_GARR_ITEMS: b.kind = BG_BUF_I32; b.rows.kind = BG_ROWS_ITEMS1; b.cols = b.width = 4; break;
        case BG_GARR_ORDER: b.kind = BG_BUF_I32; b.rows.kind = BG_ROWS_N1; b.cols = b.width = 4; break;
        case BG_GARR_SLOTS: b.kind = BG_BUF_I32; b.rows.kind = BG_ROWS_SLOTS1; b.cols = b.width = 4; break;
        default: b.kind = BG_BUF_F32; b.rows.kind = BG_ROWS_N; break;
        }
        b.rows.graph = b.rows.kind == BG_ROWS_NNZ || b.rows.kind == BG_ROWS_ITEMS1 || b.rows.kind == BG_ROWS_SLOTS1 ? g : -1;
        c->garr_buf[g][ga] = new_buf(c, b);
    }
    return c->garr_buf[g][ga];
}

/* A scratch array of graph adj that the runtime zeroes once, its own (never shared): one fast
 * aggregation launch's split-row buffers (PARTIAL [SPLITS][width], DONE, rows SPLITS), or a row
 * group's counters in the wide form (DONE [N], rows N). */
static int scratch_buf(PlanCtx *c, BgRef adj, BgGraphArr ga, int64_t width, BgRowKind rows) {
    BgPlanBuf b;
    memset(&b, 0, sizeof b);
    b.role = BG_ROLE_GRAPH;
    b.graph = c->graph_of[adj];
    b.garr = ga;
    b.kind = BG_BUF_I32;
    b.cols = b.width = width;
    b.rows.kind = rows;
    b.rows.graph = rows == BG_ROWS_SPLITS ? b.graph : -1;
    b.inst = (int)adj;
    return new_buf(c, b);
}

static int use_gptr(PlanCtx *c) {
    if (c->gptr_buf < 0) {
        BgPlanBuf b;
        memset(&b, 0, sizeof b);
        b.kind = BG_BUF_I64;
        b.role = BG_ROLE_GRAPH_PTR;
        b.rows.kind = BG_ROWS_G1;
        b.rows.graph = -1;
        b.cols = b.width = 1;
        b.graph = -1;
        b.inst = -1;
        c->gptr_buf = new_buf(c, b);
        c->p->uses_graph_ptr = true;
    }
    return c->gptr_buf;
}

static BgPlanLaunch *new_launch(PlanCtx *c, int r) {
    BgPlan *p = c->p;
    if (p->nlaunches == c->cap_launches) {
        int nc = c->cap_launches ? 2 * c->cap_launches : 16;
        BgPlanLaunch *nl = bg_arena_alloc(c->a, sizeof *nl * (size_t)nc);
        if (p->nlaunches) memcpy(nl, p->launches, sizeof *nl * (size_t)p->nlaunches);
        p->launches = nl;
        c->cap_launches = nc;
    }
    BgPlanLaunch *l = &p->launches[p->nlaunches++];
    memset(l, 0, sizeof *l);
    const BgInst *in = &c->m->insts[r];
    l->inst = r;
    l->op = bg_op_info(in->op)->name;
    l->fp = bg_inst_fp(c->m, in);
    l->prep = c->prep[r];
    char opname[32];
    size_t k = 0;
    for (const char *s = l->op; *s && k + 1 < sizeof opname; s++) opname[k++] = *s == '.' ? '_' : *s;
    opname[k] = 0;
    l->kernel = bg_arena_printf(c->a, "bgnn_k%d_%s", r, opname);
    l->block_size = BLOCK;
    int64_t cols;
    kshape(in->type, &l->rows, &cols);
    return l;
}

static void arg(BgPlanLaunch *l, int b) {
    if (l->nargs < BG_PLAN_MAX_ARGS) l->args[l->nargs] = b;
    l->nargs++; /* checked against BG_PLAN_MAX_ARGS by the caller */
}

/* Threads per row for an output of `cols` columns: one per element for f32, one warp
 * per 32-bit output word for b1. */
static int tpr_for(BgTyKind k, int64_t cols) {
    if (k == BG_TY_B1) {
        int64_t w = (cols + 31) / 32;
        return (int)(w > 0 ? 32 * w : 32);
    }
    return (int)(cols > 0 ? cols : 1);
}

static bool is_b1_param(const BgModule *m, BgRef r) {
    return m->insts[r].op == BG_OP_PARAM && m->insts[r].type.kind == BG_TY_B1;
}

bool bg_plan_bmm_wgs(const BgModule *m, const BgInst *in, bool weight_transposed, int sm) {
    if (in->op != BG_OP_BMM || in->prec[0] != 'B' || in->prec[1] != 'B' || !weight_transposed || sm != 90)
        return false;
    const BgType *x = &m->insts[in->args[0]].type;
    if (x->rank != 2 || x->dim[1] < 128 || x->dim[1] % 128 != 0 || in->type.rank != 2) return false;
    if (in->attrs.path != BG_BMM_PATH_AUTO) return in->attrs.path == BG_BMM_PATH_WGMMA;
    return x->dim[1] >= BG_PLAN_WGS_MIN_K && in->type.dim[1] >= BG_PLAN_WGS_MIN_M;
}

bool bg_plan_bmm_tc(const BgModule *m, const BgInst *in, bool weight_transposed, int sm) {
    if (in->op != BG_OP_BMM || in->prec[0] != 'B' || in->prec[1] != 'B' || !weight_transposed || sm < 80)
        return false;
    if (bg_plan_bmm_wgs(m, in, weight_transposed, sm)) return false;
    /* path wgmma off sm_90: mma.sync's tensor cores */
    if (in->attrs.path != BG_BMM_PATH_AUTO) return in->attrs.path == BG_BMM_PATH_TC || in->attrs.path == BG_BMM_PATH_WGMMA;
    const BgType *x = &m->insts[in->args[0]].type;
    return x->rank == 2 && x->dim[1] >= BG_PLAN_TC_MIN_K;
}

/* The instruction's schedule (sched.c, docs/tuning.md) into its launch: threads per block,
 * blocks per SM, the features product's kernel, and the graph's work items for the fast
 * aggregation (one schedule a graph: two fast aggregations of a graph must agree). */
static bool apply_sched(PlanCtx *c, int i, BgPlanLaunch *l) {
    const BgInst *in = &c->m->insts[i];
    const BgSchedPoint pt = bg_sched_point(in);
    char why[160];
    if (!bg_sched_valid(c->m, in, &pt, why, sizeof why)) {
        char txt[128];
        bg_sched_str(&pt, txt, sizeof txt);
        bg_diag_error(c->d, BG_E_BAD_ATTR, "schedule '%s' of %%%d (%s): %s", txt, i, bg_op_info(in->op)->name, why);
        return false;
    }
    const BgSched *s = &in->attrs.sched;
    if (s->block) l->block_size = s->block;
    l->grid_per_sm = s->grid;
    if (l->alt) l->fb = s->fb;
    if (bg_plan_bspmm_fast(c->m, in)) {
        BgPlanGraph *g = &c->p->graphs[c->graph_of[in->args[0]]];
        const int chunk = s->chunk ? s->chunk : BG_PLAN_BSPMM_CHUNK;
        if (c->sched_set[c->graph_of[in->args[0]]] && (g->chunk != chunk || g->group != s->group)) {
            bg_diag_error(c->d, BG_E_BAD_ATTR,
                          "schedule of %%%d: the fast aggregations over graph %%%u ask for different work items "
                          "(chunk %d group %d, and chunk %d group %d)", i, in->args[0], g->chunk, g->group, chunk, s->group);
            return false;
        }
        c->sched_set[c->graph_of[in->args[0]]] = true;
        g->chunk = chunk;
        g->group = s->group;
    }
    return true;
}

/* Largest K x C of a product whose own kernel is the tiled FB or the tensor-core one (plan.h:
 * a row group runs the generic product, matmul.cuh) that may join a row group: Cora's second
 * layers (64 x 7, 64 x 64) gain more from the launches saved than the generic product costs;
 * its first (1433 x 64 on tensor cores) lost 3 us in one (H100). */
#define ROWGROUP_MM_MAX (64 * 64)

/* Widest row of an absmean with a batchnorm prologue that may join a row group: the group
 * kernel gives it its table of inverses (templates/rowwise.cuh absmean TABLE, C floats of
 * static shared memory, cg_rows.c), as its own kernel has; per element they cost a division
 * and a square root each. */
#define ROWGROUP_ABSMEAN_TABLE_MAX 1024

/* May launch l (instruction i) join a row group?  Its op reads each row-indexed operand at its
 * own output row only, and the group's plain template call is no slower kernel than its own
 * (bg_cg_emit_call's plain: the generic product for the tiled and tensor-core ones) - beside
 * bg_plan_rowgroup_launch_ok. */
static bool row_group_member(const PlanCtx *c, const BgPlanLaunch *l, BgRowKind kind) {
    const BgModule *m = c->m;
    const BgInst *in = &m->insts[l->inst];
    switch (in->op) {
    case BG_OP_BMM: {
        const bool wt = c->p->bufs[l->args[2]].kind == BG_BUF_B1T;
        BgRowExpr rows;
        int64_t k, cols;
        kshape(m->insts[in->args[0]].type, &rows, &k);
        kshape(in->type, &rows, &cols);
        const int64_t kc = k * cols;
        if (!l->alt && (bg_plan_bmm_tc(m, in, wt, c->sm) || bg_plan_bmm_fb_tiled(in, wt)) && kc > ROWGROUP_MM_MAX)
            return false; /* (a product of the features runs its sparse variant in a group) */
        break;
    }
    case BG_OP_ABSMEAN: { /* a batchnorm prologue: its table of inverses (cg_rows.c), when small */
        BgRowExpr rows;
        int64_t cols;
        kshape(m->insts[in->args[0]].type, &rows, &cols);
        if (in->npro && in->steps[0].kind == BG_STEP_BATCHNORM && cols > ROWGROUP_ABSMEAN_TABLE_MAX) return false;
        break;
    }
    case BG_OP_BIN: case BG_OP_BIN_CENTER: case BG_OP_ROW_MEAN: case BG_OP_SCL: case BG_OP_ADD: case BG_OP_CONCAT:
    case BG_OP_RELU: case BG_OP_BATCHNORM: case BG_OP_STANDARDIZE: case BG_OP_LOG_SOFTMAX:
        break;
    default:
        return false;
    }
    /* a launch the plan gives a sparse variant runs it in a group (cg_rows.c): only where the
     * code generator has that variant's template call */
    if (!l->alt && bg_plan_launch_row_csr(c->p, l) && !bg_plan_row_csr(m, in)) return false;
    return bg_plan_rowgroup_launch_ok(c->p, l, kind);
}

/* May launch l open a row group of rows `kind` as its gather (plan.h)?  A readout over the
 * tile's graphs, or a bspmm of bit activations (bg_plan_bspmm_bits: a warp a row, the same
 * template as its own kernel but for the rows' order, which changes no bit).  Measured on an
 * H100 (docs/performance.md, "Row groups that open with a gather"): a group opened by the bit
 * aggregation gained (Cora saint_bin 59.6 -> 48.9 us, MUTAG to NCI1 GIN bin 11-22%); one
 * opened by a float aggregation (bspmm_adjb, a thread an output, over 8-row tiles) lost
 * (indgcn_full 79 -> 147 us, saint_full 68 -> 74), and so did one opened by the fast BBB
 * aggregation's plain form (the TU GCN models, 5-35%). */
static bool row_group_lead(const PlanCtx *c, const BgPlanLaunch *l, BgRowKind kind) {
    const BgInst *in = &c->m->insts[l->inst];
    if (in->op == BG_OP_BSPMM && (!bg_plan_bspmm_bits(c->m, in) || bg_plan_bspmm_fast(c->m, in))) return false;
    return (in->op == BG_OP_BSPMM || in->op == BG_OP_READOUT) && bg_plan_rowgroup_lead_ok(c->p, l, kind);
}

/* ---- the warp-rows form of a row group (plan.h; templates/warp_rows.cuh, cg_warp_rows.c) ---- */

/* An F or B value of `dim` rows (N or G) and 1 to BG_WARP_ROWS_COLS_MAX columns (cols), or an
 * f32[dim] (cols 0). */
static bool warp_row_value(BgType t, int64_t dim, int64_t *cols) {
    if (t.rank == 2 && t.dim[0] == dim && t.dim[1] >= 1 && t.dim[1] <= BG_WARP_ROWS_COLS_MAX) {
        *cols = t.dim[1];
        return true;
    }
    *cols = 0;
    return t.rank == 1 && t.dim[0] == dim && t.kind == BG_TY_F32;
}

/* May launch l, a member of a row group of rows `kind` (lead: its first), run in the warp-rows
 * form?  Node rows: a bit aggregation first; then bin, absmean in the order lanes(32) or seq
 * (a batchnorm prologue's operands of constant rows), bmm.BB{F,B} of transposed weights that
 * fit a lane's registers, scl, relu.  Graph rows: a readout first (of node rows); then
 * bmm.FF{F,B} in the order seq or split-k of f32 weights, log_softmax of at most 32 columns, scl, relu. */
static bool warp_rows_member(const PlanCtx *c, const BgPlanLaunch *l, BgRowKind kind, bool lead) {
    const BgModule *m = c->m;
    const BgInst *in = &m->insts[l->inst];
    const int64_t dim = kind == BG_ROWS_G ? BG_DIM_G : BG_DIM_N;
    int64_t cols, cin;
    if (!warp_row_value(in->type, dim, &cols)) return false;
    if (in->op == BG_OP_BSPMM) /* a gather: the group's first launch; not with a log_softmax tail */
        return lead && kind == BG_ROWS_N && cols > 0 && bg_plan_bspmm_bits(m, in) && !bg_plan_bspmm_fast(m, in) &&
               !(in->nsteps && in->steps[in->nsteps - 1].kind == BG_STEP_LOG_SOFTMAX);
    if (in->op == BG_OP_READOUT) /* of node rows, into the tile's graph rows */
        return lead && kind == BG_ROWS_G && cols > 0 && in->attrs.reduce <= 2 &&
               warp_row_value(m->insts[in->args[0]].type, BG_DIM_N, &cin) && cin == cols;
    if (lead || in->nargs < 1 || in->args[0] == BG_NONE || l->nargs < 2) return false;
    const BgType *t0 = &m->insts[in->args[0]].type;
    if (!warp_row_value(*t0, dim, &cin) || cin == 0) return false;
    switch (in->op) {
    case BG_OP_BIN: return cols == cin;
    case BG_OP_ABSMEAN: {
        if (cols != 0 || t0->kind != BG_TY_F32 || (in->npro && in->steps[0].kind == BG_STEP_STANDARDIZE)) return false;
        for (int k = 2; k < l->nargs; k++)
            if (c->p->bufs[l->args[k]].rows.kind != BG_ROWS_CONST) return false;
        const BgFpOrder fp = bg_inst_fp(m, in);
        return (fp.kind == BG_FP_LANES && fp.split == 32) || fp.kind == BG_FP_SEQ;
    }
    case BG_OP_BMM: {
        const BgPlanBuf *w = &c->p->bufs[l->args[2]];
        if (in->npro || cols == 0 || w->rows.kind != BG_ROWS_CONST) return false;
        if (in->prec[0] == 'F' && in->prec[1] == 'F') { /* an fma chain an output (a chunk's), k ascending */
            const BgFpOrder fp = bg_inst_fp(m, in);
            return kind == BG_ROWS_G && w->kind == BG_BUF_F32 && (fp.kind == BG_FP_SEQ || fp.kind == BG_FP_SPLITK);
        }
        if (in->prec[0] != 'B' || in->prec[1] != 'B') return false;
        return w->kind == BG_BUF_B1T && ((cols + 31) / 32) * ((cin + 31) / 32) <= BG_WARP_ROWS_WEIGHT_REGS;
    }
    case BG_OP_LOG_SOFTMAX: return cols == cin && cols <= 32;
    case BG_OP_SCL: return in->type.kind == BG_TY_F32 && cols == cin;
    case BG_OP_RELU: return in->type.kind == BG_TY_F32 && t0->kind == BG_TY_F32 && cols == cin;
    default: return false;
    }
}

/* Does group g take the warp-rows form: no sparse variant, every member one warp_rows_member
 * admits, and each member's result written by it alone (a value, a register)? */
static bool warp_rows_ok(const PlanCtx *c, const BgPlanRowGroup *g) {
    const BgPlan *p = c->p;
    if (g->csr >= 0) return false;
    bool lead = true;
    for (int i = g->first; i < g->first + g->count; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (l->prep) continue;
        if (!warp_rows_member(c, l, g->rows, lead)) return false;
        for (int j = 0; j < p->nlaunches; j++)
            if (j != i && p->launches[j].args[0] == l->args[0]) return false;
        lead = false;
    }
    return !lead;
}

/* The next row group of the plan: launches first .. first + count - 1 in kernel
 * bgnn_rows<first>, blocks of BLOCK, in the tiled form (not warp, not wide). */
static BgPlanRowGroup *new_group(PlanCtx *c, int first, int count, BgRowKind kind, int csr) {
    BgPlanRowGroup *g = &c->p->rowgroups[c->p->nrowgroups++];
    memset(g, 0, sizeof *g);
    g->first = first;
    g->count = count;
    char name[32];
    snprintf(name, sizeof name, "bgnn_rows%d", first);
    g->kernel = bg_arena_strdup(c->a, name);
    g->block = BLOCK;
    g->csr = csr;
    g->rows = kind;
    g->counters = -1;
    return g;
}

/* ---- the wide form of a row group (plan.h; templates/spmm_wide_outs.cuh) ---- */

/* May launch l open a row group in the wide form: a wide float aggregation (no epilogue step)
 * of 256 threads a row in blocks of 256, of the form's widths (bg_plan_wide_outs_cols)? */
static bool wide_lead(const PlanCtx *c, const BgPlanLaunch *l) {
    const BgInst *in = &c->m->insts[l->inst];
    if (l->prep || l->alt || !bg_plan_bspmm_wide(c->m, in) || in->nsteps || l->nargs != 7)
        return false;
    return l->block_size == 256 && l->threads_per_row == 256 && bg_plan_wide_outs_cols(in->type.dim[1]);
}

/* Is launch l a member the wide form's kernel computes for the aggregation writing buffer y: a
 * plain bin of y (no step: the sign), or a plain absmean of y in the order lanes(256) (the
 * order fp_order.c gives it)? */
static bool wide_member(const PlanCtx *c, const BgPlanLaunch *l, int y) {
    const BgInst *in = &c->m->insts[l->inst];
    if (l->prep || l->alt || l->nargs != 2 || l->args[1] != y || in->npro || in->nsteps) return false;
    if (in->op == BG_OP_BIN) return true;
    if (in->op != BG_OP_ABSMEAN) return false;
    const BgFpOrder fp = bg_inst_fp(c->m, in);
    return fp.kind == BG_FP_LANES && fp.split == 256;
}

/* The launches from `first` (a wide_lead) that a row group in the wide form would hold: the
 * aggregation, then its bin and absmean (one of each at most), prep launches between them;
 * returns the end (one past the last member), or first when no member follows. */
static int wide_group_end(const PlanCtx *c, int first) {
    const BgPlan *p = c->p;
    const int y = p->launches[first].args[0];
    int end = first, bins = 0, ams = 0;
    for (int j = first + 1; j < p->nlaunches; j++) {
        const BgPlanLaunch *l = &p->launches[j];
        if (l->prep) continue;
        if (!wide_member(c, l, y)) break;
        const bool bin = c->m->insts[l->inst].op == BG_OP_BIN;
        if ((bin ? bins : ams) > 0) break;
        bins += bin;
        ams += !bin;
        end = j + 1;
    }
    return end;
}

/* The row groups (plan.h): maximal runs of at least two consecutive non-prep launches that
 * may join one (prep launches between them run at binding), the first maybe a gather, all of
 * node rows or all of graph rows (the first's), their sparse variants over one features
 * buffer's CSR, when the parameters of a kernel that takes every buffer fit. */
static void row_groups(PlanCtx *c) {
    BgPlan *p = c->p;
    if (p->nbufs > BG_PLAN_FUSED_MAX_BUFS) return;
    p->rowgroups = bg_arena_alloc(c->a, sizeof *p->rowgroups * (size_t)(p->nlaunches / 2 + 1));
    for (int i = 0; i < p->nlaunches;) {
        if (!p->launches[i].prep && wide_lead(c, &p->launches[i]) && p->nbufs < BG_PLAN_FUSED_MAX_BUFS) {
            const int end = wide_group_end(c, i);
            if (end > i) { /* its counters: a DONE array of the aggregation's graph, N rows */
                const BgRef adj = c->m->insts[p->launches[i].inst].args[0];
                const int counters = scratch_buf(c, adj, BG_GARR_DONE, 1, BG_ROWS_N);
                BgPlanRowGroup *g = new_group(c, i, end - i, BG_ROWS_N, -1);
                g->wide = true;
                g->counters = counters;
                i = end;
                continue;
            }
        }
        int first = -1, end = i, members = 0, csr = -1;
        BgRowKind kind = BG_ROWS_N;
        for (int j = i; j < p->nlaunches; j++) {
            const BgPlanLaunch *l = &p->launches[j];
            if (l->prep) continue;
            if (first < 0) kind = l->rows.kind == BG_ROWS_G ? BG_ROWS_G : BG_ROWS_N;
            if (!(first < 0 && row_group_lead(c, l, kind)) && !row_group_member(c, l, kind)) break;
            if (bg_plan_sparse_tpr(p, l) > 0) {
                if (csr >= 0 && l->args[1] != csr) break;
                csr = l->args[1];
            }
            if (first < 0) first = j;
            members++;
            end = j + 1;
        }
        int bad;
        if (members >= 2 && bg_plan_rowgroup_ok(p, first, end - first, kind, &bad)) {
            BgPlanRowGroup *g = new_group(c, first, end - first, kind, csr);
            g->warp = warp_rows_ok(c, g);
        }
        i = end > i ? end : i + 1;
    }
}

BgPlan *bg_plan_build(const BgModule *m, const char *arch, BgArena *a, BgDiagSink *d) {
    PlanCtx c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.a = a;
    c.d = d;
    c.p = bg_arena_alloc(a, sizeof *c.p);
    c.p->model = m->name ? m->name : "model";
    c.p->arch = bg_arena_strdup(a, arch ? arch : m->arch ? m->arch : "sm_90");
    if (!bg_arch_parse(c.p->arch, &c.sm)) c.sm = 0;
    c.p->version = BG_VERSION_STRING;
    c.p->fp_strict = m->fp_strict;
    c.gptr_buf = -1;
    int n = m->ninsts;
    c.val_buf = bg_arena_alloc(a, sizeof(int) * (size_t)(n + 1));
    c.wt_buf = bg_arena_alloc(a, sizeof(int) * (size_t)(n + 1));
    c.graph_of = bg_arena_alloc(a, sizeof(int) * (size_t)(n + 1));
    c.prep = bg_arena_alloc(a, sizeof(bool) * (size_t)(n + 1));
    bg_ir_prep(m, c.prep);
    int ng = 0;
    for (int i = 0; i < n; i++) {
        c.val_buf[i] = c.wt_buf[i] = c.graph_of[i] = -1;
        if (m->insts[i].op == BG_OP_GRAPH) c.graph_of[i] = ng++;
    }
    c.p->graphs = bg_arena_alloc(a, sizeof(BgPlanGraph) * (size_t)(ng + 1));
    c.garr_buf = bg_arena_alloc(a, sizeof *c.garr_buf * (size_t)(ng + 1));
    c.sched_set = bg_arena_alloc(a, sizeof(bool) * (size_t)(ng + 1));
    for (int i = 0; i < n; i++) {
        const BgInst *in = &m->insts[i];
        if (in->op != BG_OP_GRAPH) continue;
        int g = c.graph_of[i];
        c.p->graphs[g] = (BgPlanGraph){in->attrs.self_loops, in->attrs.norm, i, BG_PLAN_BSPMM_CHUNK, 0};
        for (int k = 0; k < BG_GARR_COUNT; k++) c.garr_buf[g][k] = -1;
    }
    c.p->ngraphs = ng;

    for (int i = 0; i < n; i++) {
        const BgInst *in = &m->insts[i];
        const BgOpInfo *info = bg_op_info(in->op);
        if (info->flags & BG_OPF_LEAF) continue;
        for (int k = 0; k < in->nargs; k++) {
            if (in->args[k] != BG_NONE && in->args[k] >= (BgRef)i) {
                bg_diag_error(d, BG_E_INTERNAL, "plan: instruction %%%d uses a later value", i);
                return NULL;
            }
        }
        if (in->op == BG_OP_OUTPUT) {
            BgPlan *p = c.p;
            if (p->noutputs == c.cap_outputs) {
                int nc = c.cap_outputs ? 2 * c.cap_outputs : 4;
                BgPlanOutput *no = bg_arena_alloc(a, sizeof *no * (size_t)nc);
                if (p->noutputs) memcpy(no, p->outputs, sizeof *no * (size_t)p->noutputs);
                p->outputs = no;
                c.cap_outputs = nc;
            }
            const BgInst *src = &m->insts[in->args[0]];
            if (src->type.kind != BG_TY_F32 && src->type.kind != BG_TY_B1) {
                bg_diag_error(d, BG_E_INTERNAL, "plan: output %%%d is not a tensor", i);
                return NULL;
            }
            BgPlanOutput *o = &p->outputs[p->noutputs++];
            o->name = in->attrs.name ? in->attrs.name : "output";
            o->buf = use_value(&c, in->args[0]);
            o->type = src->type.kind == BG_TY_B1 ? BG_DT_B1 : BG_DT_F32;
            o->rank = src->type.rank;
            o->dim[0] = src->type.dim[0];
            o->dim[1] = src->type.dim[1];
            continue;
        }
        if (in->type.kind != BG_TY_F32 && in->type.kind != BG_TY_B1) {
            bg_diag_error(d, BG_E_INTERNAL, "plan: %%%d (%s) defines no tensor", i, info->name);
            return NULL;
        }
        for (int k = -1; k < in->nargs; k++) {
            BgRef r = k < 0 ? (BgRef)i : in->args[k];
            if (r == BG_NONE) continue;
            BgType t = m->insts[r].type;
            if (t.kind == BG_TY_B1 && t.rank == 1 && t.dim[0] < 0) {
                bg_diag_error(d, BG_E_INTERNAL, "plan: %%%d: b1 vectors of N or G bits have no GPU layout", i);
                return NULL;
            }
        }
        int out = use_value(&c, (BgRef)i);
        BgRowExpr orows;
        int64_t cols;
        kshape(in->type, &orows, &cols);
        BgPlanLaunch *l = new_launch(&c, i);
        arg(l, out);
        BgRef a0 = in->args[0];
        bool tc = false, wgs = false; /* a tensor-core BB product: mma.sync, wgmma */
        switch (in->op) {
        case BG_OP_BIN: /* of F values a warp a row (bin_ops.cuh bin_rows); of bits one thread a bit */
            arg(l, use_value(&c, a0));
            l->threads_per_row = m->insts[a0].type.kind == BG_TY_F32 ? 32 : tpr_for(in->type.kind, cols);
            break;
        case BG_OP_RELU:
            arg(l, use_value(&c, a0));
            l->threads_per_row = tpr_for(in->type.kind, cols);
            break;
        case BG_OP_BIN_CENTER:
            /* one warp per row: the row's mean, then one ballot a word */
            arg(l, use_value(&c, a0));
            l->threads_per_row = 32;
            break;
        case BG_OP_THRESHOLD:
            /* its chain's operands follow (below); one thread per (row, channel) */
            l->threads_per_row = tpr_for(in->type.kind, cols);
            break;
        case BG_OP_ABSMEAN:
        case BG_OP_ROW_MEAN: {
            /* one warp per row of x (the output f32[R] may be laid out as one row) */
            int64_t xc;
            kshape(m->insts[a0].type, &l->rows, &xc);
            arg(l, use_value(&c, a0));
            l->threads_per_row = 32;
            break;
        }
        case BG_OP_STANDARDIZE: /* one warp per row (templates/rowwise.cuh) */
            arg(l, use_value(&c, a0));
            l->threads_per_row = 32;
            break;
        case BG_OP_LOG_SOFTMAX: /* one warp a row up to 32 columns or in lanes(32) (templates/rowwise.cuh) */
            arg(l, use_value(&c, a0));
            l->threads_per_row = (cols >= 1 && cols <= 32) || bg_inst_fp(m, in).kind == BG_FP_LANES ? 32 : 1;
            break;
        case BG_OP_SCL:
        case BG_OP_BATCHNORM:
        case BG_OP_BN_SCALE:
        case BG_OP_BN_SHIFT:
        case BG_OP_SIGN_SUM:
        case BG_OP_CONCAT:
            for (int k = 0; k < in->nargs; k++)
                if (in->args[k] != BG_NONE) arg(l, use_value(&c, in->args[k]));
            l->threads_per_row = tpr_for(in->type.kind, cols);
            break;
        case BG_OP_ADD:
            arg(l, use_value(&c, a0));
            arg(l, use_value(&c, in->args[1]));
            l->threads_per_row = tpr_for(in->type.kind, cols);
            break;
        case BG_OP_BMM: {
            arg(l, use_value(&c, a0));
            BgRef w = in->args[1];
            bool bb = in->prec[0] == 'B' && in->prec[1] == 'B';
            arg(l, bb && is_b1_param(m, w) ? use_wt(&c, w) : use_value(&c, w));
            l->threads_per_row = tpr_for(in->type.kind, cols);
            if (bg_plan_bmm_fb_rows(m, in, false)) { /* a warp a row; tiled for dense features */
                l->threads_per_row = 32;
                l->alt = bg_arena_printf(c.a, "%s_dense", l->kernel);
                l->alt_tpr = (int)bg_plan_fbt_threads_per_row(cols, BG_PLAN_FBT_TPT);
            }
            else if (bg_plan_bmm_fb_tiled_kernel(m, in, bb && is_b1_param(m, w))) /* about 21 rows a 256-thread block */
                l->threads_per_row = (int)bg_plan_fbt_threads_per_row(cols, BG_PLAN_FBT_TPT);
            tc = bg_plan_bmm_tc(m, in, bb && is_b1_param(m, w), c.sm);
            if (tc) /* about one block a tile */
                l->threads_per_row = (int)bg_plan_bmm_tc_threads_per_row(cols);
            wgs = bg_plan_bmm_wgs(m, in, bb && is_b1_param(m, w), c.sm);
            if (wgs) { /* a block a tile, at most one an SM (after the schedule, below) */
                l->threads_per_row = (int)bg_plan_wgs_threads_per_row(cols);
                l->smem = bg_plan_wgs_smem(cols);
                c.p->arch = "sm_90a"; /* wgmma and setmaxnreg: the arch-specific target */
            }
            break;
        }
        case BG_OP_BSPMM: {
            BgRef adj = in->args[0];
            if (c.graph_of[adj] < 0) {
                bg_diag_error(d, BG_E_INTERNAL, "plan: bspmm %%%d: operand is not a graph", i);
                return NULL;
            }
            arg(l, use_garr(&c, adj, BG_GARR_ROWPTR));
            arg(l, use_garr(&c, adj, BG_GARR_COL));
            if (bg_plan_bspmm_fast(m, in)) { /* one warp per schedule item */
                arg(l, use_garr(&c, adj, BG_GARR_ROWF));
                arg(l, use_value(&c, in->args[1]));
                arg(l, use_garr(&c, adj, BG_GARR_ITEMS));
                arg(l, scratch_buf(&c, adj, BG_GARR_PARTIAL, cols, BG_ROWS_SPLITS));
                arg(l, scratch_buf(&c, adj, BG_GARR_DONE, 1, BG_ROWS_SPLITS));
                l->rows.kind = BG_ROWS_ITEMS;
                l->rows.graph = c.graph_of[adj];
                l->threads_per_row = 32;
                break;
            }
            if (in->prec[1] == 'F') {
                arg(l, use_garr(&c, adj, BG_GARR_W));
            } else {
                arg(l, use_garr(&c, adj, BG_GARR_ROWF));
                arg(l, use_garr(&c, adj, BG_GARR_COLF));
            }
            arg(l, use_value(&c, in->args[1]));
            if (bg_plan_bspmm_bits(m, in) || bg_plan_bspmm_wide(m, in)) /* its rows by length; the long ones */
                arg(l, use_garr(&c, adj, BG_GARR_ORDER));
            if (bg_plan_bspmm_rows(m, in)) arg(l, use_garr(&c, adj, BG_GARR_SLOTS)); /* its rows in blocks' slots */
            l->threads_per_row = bg_plan_bspmm_bits(m, in) || bg_plan_bspmm_rows(m, in) ? 32
                                 : bg_plan_bspmm_wide(m, in)                          ? bg_plan_wide_threads_per_row(cols)
                                                                                      : tpr_for(in->type.kind, cols);
            break;
        }
        case BG_OP_BSPMM_MM: { /* y = A (x W) mm(steps): the product recomputed per neighbour, t never stored */
            BgRef adj = in->args[0], x = in->args[1], w = in->args[2];
            if (c.graph_of[adj] < 0) {
                bg_diag_error(d, BG_E_INTERNAL, "plan: bspmm_mm %%%d: operand is not a graph", i);
                return NULL;
            }
            if (cols > 64) { /* mm_spmm.cuh keeps at most 64 running sums per row (MSW_CMAX) */
                bg_diag_error(d, BG_E_INTERNAL, "plan: bspmm_mm %%%d: %lld outputs, the kernel takes at most 64", i,
                              (long long)cols);
                return NULL;
            }
            arg(l, use_garr(&c, adj, BG_GARR_ROWPTR));
            arg(l, use_garr(&c, adj, BG_GARR_COL));
            if (in->prec[1] == 'F') {
                arg(l, use_garr(&c, adj, BG_GARR_W));
            } else {
                arg(l, use_garr(&c, adj, BG_GARR_ROWF));
                arg(l, use_garr(&c, adj, BG_GARR_COLF));
            }
            arg(l, use_value(&c, x));
            bool bb = m->insts[x].type.kind == BG_TY_B1 && m->insts[w].type.kind == BG_TY_B1;
            arg(l, bb && is_b1_param(m, w) ? use_wt(&c, w) : use_value(&c, w));
            arg(l, use_garr(&c, adj, BG_GARR_SLOTS)); /* its rows in blocks' slots, hubs first */
            /* one warp per row (mm_spmm.cuh), or lanes= of them */
            l->threads_per_row = in->attrs.sched.lanes ? in->attrs.sched.lanes : 32;
            break;
        }
        case BG_OP_READOUT:
            arg(l, use_value(&c, a0));
            arg(l, use_gptr(&c));
            l->threads_per_row = tpr_for(BG_TY_F32, cols);
            break;
        default:
            bg_diag_error(d, BG_E_INTERNAL, "plan: no GPU kernel for '%s' (%%%d)", info->name, i);
            return NULL;
        }
        /* Fused steps read their operands after the op's own: the prologue's, then the
         * epilogue's (or a threshold's chain), none slots skipped (cg_cuda.c, emit_call). */
        for (int k = bg_inst_nbase(in); k < in->nargs; k++)
            if (in->args[k] != BG_NONE) arg(l, use_value(&c, in->args[k]));
        if (l->nargs > BG_PLAN_MAX_ARGS) {
            bg_diag_error(d, BG_E_LIMIT, "plan: %%%d has too many operands", i);
            return NULL;
        }
        if (!apply_sched(&c, i, l)) return NULL;
        /* the tensor-core product's blocks past TC_WAVES an SM return at once (bmm_bb_tc.cuh):
         * not launched */
        if (tc && !l->grid_per_sm) l->grid_per_sm = BG_PLAN_TC_GRID_PER_SM;
        /* mma.sync's product takes 256-thread blocks only: a schedule's block for path wgmma
         * (384, valid on sm_90) does not apply where wgmma falls back to it */
        if (tc) l->block_size = BLOCK;
        /* the wgmma product's blocks past min(grid, tiles, SMs) return at once: not launched */
        if (wgs) {
            l->block_size = BG_PLAN_WGS_BLOCK;
            if (!l->grid_per_sm) l->grid_per_sm = BG_PLAN_WGS_GRID_PER_SM;
        }
    }
    /* The one-kernel form, when fuse-model asked for it and its parameters fit (not beside a
     * launch with its own blocks and shared memory). */
    if (m->fused && !bg_plan_has_smem(c.p) && c.p->nlaunches > 0 && c.p->nbufs <= BG_PLAN_FUSED_MAX_BUFS) {
        c.p->fused = true;
        c.p->fused_kernel = "bgnn_model";
        c.p->fused_block = BLOCK;
    }
    /* The per-graph kernel, for batches of small graphs (plan.h). */
    if (bg_plan_blocks_ok(c.p)) {
        c.p->blocks = true;
        c.p->blocks_kernel = "bgnn_graphs";
        c.p->blocks_block = BG_PLAN_BLOCKS_BLOCK;
    }
    row_groups(&c);
    return c.p;
}
