/* cg_blocks.c - the per-graph kernel (plan.h, "The per-graph kernel"): one thread block runs
 * the whole model for one graph of a batch at a time, __syncthreads between phases, no grid-wide
 * barrier.
 *
 * The same template calls as the per-launch kernels (bg_cg_emit_call), on a grid of one block
 * in x (the graph is blockIdx.y), so every template's grid-stride loop covers exactly the rows
 * it is given.  Each call gets the graph's rows only: `rows` is the graph's node count (or 1
 * for a graph-level value) and every argument indexed by the output row starts at the graph's
 * first row (pointer + r0 * width).  Arguments read at other rows keep their base pointer:
 * an aggregation's activation (and, for bspmm_mm, its product's per-neighbour step operands)
 * and column factors, read at neighbour j, a global node id in the same graph; the column
 * indices and edge weights, at global edge positions (rowptr + r0 gives them); a readout's
 * activation, at node ids r0 .. r1 (readout_nodes: the graph's rows, which the kernel holds).
 * Where it stages tables, a lone graph (ngraphs == 1) is rows 0 .. n without a graph_ptr load.
 * Graphs own disjoint rows, so one graph's
 * last phase and the next one's first need no barrier between them.  A row group of node rows
 * in the warp-rows form (cg_warp_rows.c) runs in that form here too, over the graph's rows: a
 * block barrier before and after it, none between its launches.  With the graph stage
 * (cg_stage.c) a graph that fits is copied into shared memory first, and each launch or warp
 * group that reads or writes the stage is emitted twice, `if (gfit) { shared } else { batch
 * arrays }`; a barrier then also ends each graph (the next one's copy overwrites the stage). */
#include "cg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shared memory (32-bit words) for a bspmm_mm's product staged per graph: 16 KB, e.g. 64
 * nodes of 64 floats (larger graphs run the fused form), small enough for 8 blocks an SM. */
#define BG_CG_BLOCKS_STAGE 4096
/* Shared memory (32-bit words) for the staged parameter tables (cg_stage.c): 16 KB, 8 KB with
 * a staged product.  The templates' own static shared memory comes on top (the bit
 * aggregation's per-warp stage, 9 KB; bspmm_mm's tiles, about 11 KB), so the kernel stays
 * under the 48 KB of static shared memory at most: 16 + 8 + 9 + 11.3 = 44.3 KB. */
#define BG_CG_BLOCKS_TABLES 4096

/* Number of fused-step operands of steps [0, s1) (none slots are not arguments). */
static int step_operands(const BgInst *in, int s1) {
    int n = 0;
    for (int s = 0; s < s1; s++) {
        int a = bg_inst_step_arg(in, s);
        for (int j = 0; j < bg_step_slots((BgStepKind)in->steps[s].kind); j++) n += in->args[a + j] != BG_NONE;
    }
    return n;
}

bool bg_cg_gathered(const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, int k) {
    const BgInst *in = &m->insts[l->inst];
    const BgPlanBuf *b = &p->bufs[l->args[k]];
    if (b->role == BG_ROLE_GRAPH) return b->garr != BG_GARR_ROWPTR && b->garr != BG_GARR_ROWF;
    switch (in->op) {
    case BG_OP_READOUT: return k == 1;
    case BG_OP_BSPMM: {
        bool fast = bg_plan_bspmm_fast(m, in), adjf = in->prec[1] == 'F';
        return k == (fast || adjf ? 4 : 5);
    }
    case BG_OP_BSPMM_MM: {
        int ix = in->prec[1] == 'F' ? 4 : 5, first = bg_cg_step_first_arg(in, l->nargs);
        return k == ix || (k >= first && k < first + step_operands(in, in->npro));
    }
    default: return false;
    }
}

void bg_cg_arg_expr(char *out, size_t cap, const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, int k,
                    bool rowlocal) {
    int b = l->args[k];
    const BgPlanBuf *pb = &p->bufs[b];
    const bool at_others = bg_cg_gathered(m, p, l, k); /* graph arrays: by what they are, always */
    if (pb->role == BG_ROLE_GRAPH ? at_others : !rowlocal && at_others) {
        snprintf(out, cap, "b%d", b);
        return;
    }
    switch (pb->rows.kind) {
    case BG_ROWS_N:
    case BG_ROWS_N1: snprintf(out, cap, "(b%d + r0 * %lldLL)", b, (long long)pb->width); break;
    case BG_ROWS_G:
    case BG_ROWS_G1: snprintf(out, cap, "(b%d + g * %lldLL)", b, (long long)pb->width); break;
    default: snprintf(out, cap, "b%d", b); break;
    }
}

/* A bspmm_mm (fuse-mm-spmm: the product recomputed for every neighbour, a warp a row, the
 * terms of 8 outputs at a time) as the unfused pair when the graph's product fits the block's
 * shared memory: the product, its mm steps at each row (row-local operands), stored as the
 * unfused bmm would store it, then the plain aggregation over it - bit for bit the fused
 * value (mm_spmm.cuh).  Opens "if (fits) { ... } else {"; the caller emits the fused call and
 * the closing brace. */
static void emit_staged_mm_spmm(BgEmit *e, const BgModule *m, const BgPlan *p, const BgPlanLaunch *l,
                                const char *const *nm) {
    const BgInst *in = &m->insts[l->inst];
    const BgInst *g = &m->insts[in->args[0]];
    const bool adjf = in->prec[1] == 'F';
    const int ix = adjf ? 4 : 5;
    char pq[4];
    bg_inst_mm_prec(m, in, pq);
    const bool wt = p->bufs[l->args[ix + 1]].kind == BG_BUF_B1T;
    const long long K = (long long)bg_cg_kcols(m->insts[in->args[1]].type), C = (long long)bg_cg_kcols(in->type);
    const char X = in->prec[0];
    const long long tw = X == 'B' ? (C + 31) / 32 : C; /* t's row in 32-bit elements */
    char rl[BG_PLAN_MAX_ARGS][48];
    const char *nml[BG_PLAN_MAX_ARGS];
    for (int k = 0; k < l->nargs; k++) {
        bg_cg_arg_expr(rl[k], sizeof rl[k], m, p, l, k, true);
        nml[k] = rl[k];
    }
    int k = bg_cg_step_first_arg(in, l->nargs);
    BgStrBuf em = {0}, epi = {0};
    bg_cg_steps_range(&em, m, in, 0, in->npro, nml, &k);
    bg_cg_steps_range(&epi, m, in, in->npro, in->nsteps, nm, &k);
    char *ems = bg_sb_take(&em), *epis = bg_sb_take(&epi);
    bg_emit_line(e, "if (rows * %lldLL <= BGNN_BLOCKS_STAGE) { // the product of this graph, staged in shared memory", tw);
    bg_emit_indent(e, 1);
    bg_emit_line(e, "bgnn::bmm<'%c', '%c', '%c', %lld, %lld, %s, 0, false>(rows, (void *)bgnn_stage, %s, %s, bgnn::ProNone{}, %s);",
                 pq[0], pq[1], X, K, C, wt ? "true" : "false", nml[ix], nml[ix + 1], ems);
    bg_emit_line(e, "__syncthreads();");
    bg_emit_line(e, "const void *t = (const char *)bgnn_stage - r0 * %lldLL * 4; // row j of t at node id j", tw);
    if (adjf) {
        bg_emit_line(e, "bgnn::bspmm_adjf<'%c', '%c', %lld>(rows, %s, %s, %s, %s, t, %s);", X, in->prec[2], C, nm[0],
                     nm[1], nm[2], nm[3], epis);
    } else {
        bool unit = g->attrs.norm == BG_NORM_NONE || g->attrs.norm == BG_NORM_MEAN;
        bg_emit_line(e, "bgnn::bspmm_adjb<'%c', '%c', %lld, %s, %d>(rows, %s, %s, %s, %s, %s, t, %s);", X, in->prec[2],
                     C, unit ? "true" : "false", (int)in->attrs.method, nm[0], nm[1], nm[2], nm[3], nm[4], epis);
    }
    bg_emit_line(e, "__syncthreads(); // the stage is free again");
    bg_emit_indent(e, -1);
    bg_emit_line(e, "} else {");
    bg_emit_indent(e, 1);
    free(ems);
    free(epis);
}

void bg_cg_range_args(const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, BgCgArgs *a) {
    for (int k = 0; k < l->nargs; k++) {
        bg_cg_arg_expr(a->names[k], sizeof a->names[k], m, p, l, k, false);
        a->nm[k] = a->names[k];
    }
}

bool bg_cg_emit_range_launch(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src, int i,
                             int phase, const char *rows, const char *csr, bool own, const BgCgShared *sh,
                             BgDiagSink *d) {
    const BgPlanLaunch *l = &p->launches[i];
    BgCgArgs args;
    const char *const *nm = args.nm;
    bg_cg_phase_open(e, m, ir, src, l, i, phase);
    if (rows) bg_emit_line(e, "const long long rows = %s;", rows);
    bg_cg_range_args(m, p, l, &args);
    bg_cg_shared_names(m, p, l, sh, &args);
    const bool staged = m->insts[l->inst].op == BG_OP_BSPMM_MM;
    if (staged) emit_staged_mm_spmm(e, m, p, l, nm);
    bool ok = csr ? bg_cg_emit_sparse_call(e, m, l, nm, csr, false, own) : bg_cg_emit_call(e, m, p, l, nm, true, own, d);
    if (staged) {
        bg_emit_indent(e, -1);
        bg_emit_line(e, "}");
    }
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
    return ok;
}

/* A classifier's product in the per-graph kernel: a bmm.FF* of graph rows without a prologue,
 * in a split-k order (fp_order.c), spread over the block (templates/matmul.cuh bmm_ff_block:
 * a thread a chunk of an output, then the fold), its partials in bgnn_part<i>.  The floats of
 * that shared array (split x M, at most BG_CG_PART_MAX), or 0 for a launch that is not one. */
#define BG_CG_PART_MAX 2048
static long long graph_bmm_parts(const BgModule *m, const BgPlan *p, int i) {
    const BgPlanLaunch *l = &p->launches[i];
    const BgInst *in = &m->insts[l->inst];
    if (l->prep || in->op != BG_OP_BMM || in->prec[0] != 'F' || in->prec[1] != 'F' || in->npro ||
        l->rows.kind != BG_ROWS_G || p->bufs[l->args[2]].kind != BG_BUF_F32)
        return 0;
    const BgFpOrder fp = bg_inst_fp(m, in);
    const long long parts = (long long)fp.split * (long long)in->type.dim[1];
    return fp.kind == BG_FP_SPLITK && parts <= BG_CG_PART_MAX ? parts : 0;
}

/* Opens launch i's phase block and names its arguments as the per-graph kernel holds them. */
static void open_graph_launch(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src, int i,
                              int phase, const BgCgShared *sh, BgCgArgs *args) {
    const BgPlanLaunch *l = &p->launches[i];
    bg_cg_phase_open(e, m, ir, src, l, i, phase);
    bg_cg_range_args(m, p, l, args);
    bg_cg_shared_names(m, p, l, sh, args);
}

static void emit_graph_bmm(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src, int i,
                           int phase, const BgCgShared *sh) {
    const BgPlanLaunch *l = &p->launches[i];
    const BgInst *in = &m->insts[l->inst];
    BgCgArgs args;
    open_graph_launch(e, m, p, ir, src, i, phase, sh, &args);
    const BgFpOrder fp = bg_inst_fp(m, in);
    char *sa = bg_cg_step_args(m, in, l, args.nm, false);
    bg_emit_line(e, "bgnn::bmm_ff_block<'%c', %lld, %lld, %lld, %s>(%s, %s, %s, bgnn_part%d%s); // a thread a chunk of an output",
                 in->prec[2], (long long)m->insts[in->args[0]].type.dim[1], (long long)in->type.dim[1], (long long)fp.chunk,
                 fp.fma ? "true" : "false", args.nm[0], args.nm[1], args.nm[2], i, sa);
    free(sa);
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
}

/* A readout in the per-graph kernel: over the graph at hand's node rows, r0 .. r1 (or 0 ..
 * r1 - r0 where its input is held in the graph stage), which the kernel knows: no graph_ptr
 * load (templates/rowwise.cuh readout_nodes). */
static void emit_graph_readout(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src, int i,
                               int phase, const BgCgShared *sh) {
    const BgPlanLaunch *l = &p->launches[i];
    const BgInst *in = &m->insts[l->inst];
    BgCgArgs args;
    open_graph_launch(e, m, p, ir, src, i, phase, sh, &args);
    /* (plan.c's graph_stageable holds no readout input in the stage today; were one held there,
     * its rows would count from 0, as bg_cg_shared_names names it) */
    const bool staged = sh && sh->graph && sh->gbufs && l->args[1] >= 0 && sh->gbufs[l->args[1]];
    const char xl = m->insts[in->args[0]].type.kind == BG_TY_B1 ? 'B' : 'F';
    bg_emit_line(e, "bgnn::readout_nodes<'%c', %lld, %d>(%s, %s, %s);", xl, (long long)in->type.dim[1],
                 (int)in->attrs.reduce, args.nm[0], args.nm[1], staged ? "0, r1 - r0" : "r0, r1");
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
}

/* The warp-rows group of node rows (BgPlanRowGroup.warp) whose first launch is i, or NULL.  A
 * group of graph rows keeps its launches here: one graph row a block, where a thread an output
 * is the shorter chain (GCN bin on NCI1, H100: 84.8 us a batch of 1024 against 87.4 in the
 * warp form, docs/performance.md). */
static const BgPlanRowGroup *warp_group_at(const BgPlan *p, int i) {
    for (int k = 0; k < p->nrowgroups; k++)
        if (p->rowgroups[k].warp && p->rowgroups[k].rows == BG_ROWS_N && p->rowgroups[k].first == i)
            return &p->rowgroups[k];
    return NULL;
}

/* A warp-rows pair the per-graph kernel forms itself (*pair, launches i .. j), for a staged
 * graph only: the fast aggregation (bspmm.BB* over a none / mean adjacency: plan_build.c
 * bg_plan_bspmm_fast) of the staged graph, then the bit product (bmm.BB*) of its rows.  A warp
 * takes a row through both (cg_warp_rows.c: wr_bspmm_bits_gs counting the ones, as its gather
 * does, then wr_bmm_bb), so the pair is one phase, with no barrier between; the aggregation's
 * row is stored only where something else reads it (bg_plan_buf_kept_in).  The plan keeps
 * the two apart: a row group's kernel led by the fast aggregation was 5-35% slower on large
 * graphs, and a graph past the stage (gfit false) runs them as two launches here too.  GCN bin
 * has two such pairs a graph. */
static bool staged_pair(const BgModule *m, const BgPlan *p, int rp, int cl, int i, BgPlanRowGroup *pair) {
    const BgPlanLaunch *l = &p->launches[i];
    const BgInst *in = &m->insts[l->inst];
    if (rp < 0 || l->prep || !bg_plan_bspmm_fast(m, in) || l->nargs < 5 || l->args[1] != rp || l->args[2] != cl ||
        in->type.rank != 2 || in->type.dim[1] < 1 || in->type.dim[1] > BG_WARP_ROWS_COLS_MAX)
        return false;
    int j = i + 1;
    while (j < p->nlaunches && p->launches[j].prep) j++;
    if (j >= p->nlaunches) return false;
    const BgPlanLaunch *lj = &p->launches[j];
    const BgInst *bj = &m->insts[lj->inst];
    if (bj->op != BG_OP_BMM || bj->prec[0] != 'B' || bj->prec[1] != 'B' || bj->npro || lj->rows.kind != BG_ROWS_N ||
        lj->nargs < 3 || lj->args[1] != l->args[0] || bj->type.rank != 2 || bg_plan_warp_group_of(p, lj->args[0]) >= 0)
        return false; /* (a product in a plan's warp group stays there) */
    const BgPlanBuf *w = &p->bufs[lj->args[2]];
    const long long cin = (long long)in->type.dim[1], cols = (long long)bj->type.dim[1];
    if (w->kind != BG_BUF_B1T || w->rows.kind != BG_ROWS_CONST || cols < 1 || cols > BG_WARP_ROWS_COLS_MAX ||
        ((cols + 31) / 32) * ((cin + 31) / 32) > BG_WARP_ROWS_WEIGHT_REGS)
        return false;
    *pair = (BgPlanRowGroup){.first = i, .count = j - i + 1, .rows = BG_ROWS_N, .kernel = NULL, .block = 0, .csr = -1,
                             .warp = true};
    return true;
}

/* The staged pairs of the per-graph kernel, found once: entry i is the pair whose first launch
 * is i (count 0: none); NULL without the graph stage.  A launch in a plan group opens none. */
static BgPlanRowGroup *staged_pairs(const BgModule *m, const BgPlan *p, bool gstage, int rp, int cl) {
    if (!gstage) return NULL;
    BgPlanRowGroup *pairs = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(BgPlanRowGroup));
    for (int i = 0; i < p->nlaunches; i++)
        if (!warp_group_at(p, i)) staged_pair(m, p, rp, cl, i, &pairs[i]);
    return pairs;
}

/* The warp-rows group the per-graph kernel runs from launch i: the plan's, or a staged pair
 * (pairs: staged_pairs), or NULL. */
static const BgPlanRowGroup *group_at(const BgPlan *p, const BgPlanRowGroup *pairs, int i) {
    const BgPlanRowGroup *wg = warp_group_at(p, i);
    return wg ? wg : pairs && pairs[i].count ? &pairs[i] : NULL;
}

/* Launch i (not prep; wg its warp group or NULL): does it read or write the graph stage
 * (*uses), read it (*reads)? */
static void stage_use(const BgPlan *p, const bool *gbufs, int i, const BgPlanRowGroup *wg, bool *reads, bool *uses) {
    const int end = wg ? wg->first + wg->count : i + 1;
    *reads = *uses = false;
    for (int j = i; gbufs && j < end; j++)
        if (!p->launches[j].prep) {
            *reads |= bg_cg_uses_graph_stage(p, gbufs, &p->launches[j], 1);
            *uses |= bg_cg_uses_graph_stage(p, gbufs, &p->launches[j], 0);
        }
}

/* Is there a barrier before launch i (wg its warp group), given the last launch's phase (-1:
 * none yet) and whether a barrier followed the graph stage's copy? */
static bool barrier_before(const int *phase, int i, const BgPlanRowGroup *wg, int last, bool reads, bool unsynced) {
    return (wg && last >= 0) || (!wg && last >= 0 && phase[i] != last) || (reads && unsynced);
}

/* A block barrier between phases of the graph loop.  The first one (!*ready) makes the staged
 * tables readable: where the kernel copies any (copied), each thread first waits for its own
 * cp.async copies of them (cg_stage.c). */
static void emit_phase_barrier(BgEmit *e, bool copied, bool *ready, bool *unsynced) {
    if (!*ready && copied) bg_emit_line(e, "bgnn::stage_wait(); // the staged tables, before the barrier after which they are read");
    bg_emit_line(e, "__syncthreads();");
    *unsynced = false;
    *ready = true;
}

/* The first launch after the graph loop's first barrier (p->nlaunches: none): the one the
 * staged tables are read from on (the launches before read them from memory). */
static int first_after_barrier(const BgPlan *p, const int *phase, bool gstage, const BgPlanRowGroup *pairs,
                               const bool *gbufs) {
    for (int i = 0, last = -1; i < p->nlaunches; i++) {
        if (p->launches[i].prep) continue;
        const BgPlanRowGroup *wg = group_at(p, pairs, i);
        bool reads, uses;
        stage_use(p, gbufs, i, wg, &reads, &uses);
        if (barrier_before(phase, i, wg, last, reads, gstage)) return i;
        if (wg) return wg->first + wg->count; /* a barrier after the group */
        last = phase[i];
    }
    return p->nlaunches;
}

bool bg_cg_emit_blocks(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src,
                       BgDiagSink *d) {
    int gptr = -1;
    for (int b = 0; b < p->nbufs; b++)
        if (p->bufs[b].role == BG_ROLE_GRAPH_PTR) gptr = b;
    if (gptr < 0) {
        bg_diag_error(d, BG_E_INTERNAL, "codegen: the per-graph kernel needs the batch's graph_ptr");
        return false;
    }
    int *phase = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(int));
    int nph = bg_plan_phases(p, phase);
    bg_emit_line(e, "%s", "");
    bg_emit_line(e, "// The per-graph kernel (plan.h): block y runs the whole model (%d phases) for graphs", nph);
    bg_emit_line(e, "// y, y + gridDim.y, ... over that graph's rows; grid.x is 1, so the templates' loops cover");
    bg_emit_line(e, "// exactly the rows they are given.  Parameters as the fused kernel's (bar unused).");
    bg_emit_line(e, "#define BGNN_BLOCKS_STAGE %d // 32-bit words of shared memory for a staged product", BG_CG_BLOCKS_STAGE);
    bg_emit_printf(e, "extern \"C\" __global__ void __launch_bounds__(%d) %s(long long n, long long ngraphs,\n"
                      "        unsigned *__restrict__ bar",
                   p->blocks_block, p->blocks_kernel);
    bg_cg_buffer_params(e, p, NULL);
    bg_emit_indent(e, 1);
    bg_emit_line(e, "(void)n;");
    bg_emit_line(e, "(void)bar;");
    bool mm_stage = false;
    for (int i = 0; i < p->nlaunches; i++) mm_stage |= m->insts[p->launches[i].inst].op == BG_OP_BSPMM_MM;
    if (mm_stage) bg_emit_line(e, "__shared__ __align__(16) unsigned bgnn_stage[BGNN_BLOCKS_STAGE];");
    for (int i = 0; i < p->nlaunches; i++) {
        const long long parts = graph_bmm_parts(m, p, i);
        if (parts) bg_emit_line(e, "__shared__ float bgnn_part%d[%lld]; // launch %d's partial sums", i, parts, i);
    }
    /* the parameter tables and the warp rows' batchnorm inverses, staged once for every graph
     * of the block (cg_stage.c), in what the staged product leaves */
    int rp = -1, cl = -1;
    const bool gstage = bg_plan_graph_stage(p, &rp, &cl);
    bool *gbufs = gstage ? bg_cg_graph_stage_bufs(p) : NULL;
    BgPlanRowGroup *pairs = staged_pairs(m, p, gstage, rp, cl);
    for (int i = 0; pairs && i < p->nlaunches; i++) /* a staged pair's aggregation nothing else reads: no shared array */
        if (pairs[i].count && !bg_plan_buf_kept_in(p, &pairs[i], p->launches[i].args[0])) gbufs[p->launches[i].args[0]] = false;
    const int from = first_after_barrier(p, phase, gstage, pairs, gbufs);
    bool *staged = bg_cg_stage_tables(m, p, (long long)(mm_stage ? BG_CG_BLOCKS_TABLES / 2 : BG_CG_BLOCKS_TABLES), from);
    bool *invs = bg_cg_stage_inverses(m, p, from);
    bg_cg_stage_decls(e, m, p, staged, invs);
    if (gstage) bg_cg_graph_stage_decls(e, p, gbufs);
    bool *grows = bg_cg_graph_rows(e, p);
    /* the copy before the graph loop, without a barrier of its own: the block's first graph's
     * rows are loaded first, so that their round trip and the tables' overlap, and the
     * launches before the first barrier read the tables from memory (copied inside the loop,
     * the per-graph kernel of gin_full_nci1 spilled) */
    const bool copy = staged || invs;
    if (copy) {
        /* a lone graph's rows are 0 .. n: no load, one round trip less (graph_ptr runs from 0
         * to n wherever it is bound: loaders/dataset.c and api/api.c check it, dataset_select.c
         * and graph_replicate.c build it so, runtime/bind.c makes {0, n} for a graph without one) */
        bg_emit_line(e, "const long long fr0 = ngraphs == 1 || blockIdx.y >= ngraphs ? 0 : b%d[blockIdx.y], "
                        "fr1 = ngraphs == 1 ? n : blockIdx.y < ngraphs ? b%d[blockIdx.y + 1] : 0;",
                     gptr, gptr);
        bg_cg_stage_copy(e, m, p, staged, invs);
    }
    bg_emit_line(e, "for (long long g = blockIdx.y; g < ngraphs; g += gridDim.y) {");
    bg_emit_indent(e, 1);
    if (copy) bg_emit_line(e, "const long long r0 = g == blockIdx.y ? fr0 : b%d[g], r1 = g == blockIdx.y ? fr1 : b%d[g + 1];", gptr, gptr);
    else bg_emit_line(e, "const long long r0 = b%d[g], r1 = b%d[g + 1];", gptr, gptr);
    bg_emit_line(e, "(void)r1;");
    if (gstage) bg_cg_graph_stage_copy(e, rp, cl);
    const BgCgShared early_global = {NULL, NULL, false, NULL, grows}, early_shared = {NULL, gbufs, true, NULL, grows};
    const BgCgShared late_global = {staged, NULL, false, invs, grows}, late_shared = {staged, gbufs, true, invs, grows};
    bool ready = false; /* a barrier since the copy: the staged tables may be read */
    bool ok = true, unsynced = gstage; /* unsynced: no barrier yet after the stage's copy */
    for (int i = 0, last = -1; i < p->nlaunches && ok; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (l->prep) continue; /* run once when the parameters are bound */
        const BgPlanRowGroup *wg = group_at(p, pairs, i);
        const bool own = wg && pairs && wg == &pairs[i]; /* the staged graph's pair; two launches for a graph past the stage */
        const int end = wg ? wg->first + wg->count : i + 1;
        bool reads, uses; /* reads the stage; reads or writes it */
        stage_use(p, gbufs, i, wg, &reads, &uses);
        if (barrier_before(phase, i, wg, last, reads, unsynced)) emit_phase_barrier(e, staged != NULL, &ready, &unsynced);
        const BgCgShared *global = ready ? &late_global : &early_global, *shared = ready ? &late_shared : &early_shared;
        /* the code twice where it uses the stage: for a staged graph, and for one that is not */
        for (int v = uses ? 0 : 1; v < 2 && ok; v++) {
            if (uses) bg_emit_line(e, v == 0 ? "if (gfit) { // the graph in shared memory" : "} else {");
            if (uses) bg_emit_indent(e, 1);
            const BgCgShared *sh = uses && v == 0 ? shared : global;
            if (own && v == 1) /* a graph past the stage: the pair as two launches, a barrier between */
                for (int k = wg->first; k < end && ok; k++) {
                    if (p->launches[k].prep) continue;
                    if (k > wg->first) bg_emit_line(e, "__syncthreads();");
                    ok = bg_cg_emit_range_launch(e, m, p, ir, src, k, phase[k], "r1 - r0", NULL, false, sh, d);
                }
            else if (wg) /* its launches a warp a row (cg_warp_rows.c): barriers before and after only */
                ok = bg_cg_emit_warp_rows(e, m, p, ir, src, wg, phase, false, sh, d);
            else if (graph_bmm_parts(m, p, i))
                emit_graph_bmm(e, m, p, ir, src, i, phase[i], sh);
            else if (m->insts[l->inst].op == BG_OP_READOUT && l->rows.kind == BG_ROWS_G)
                emit_graph_readout(e, m, p, ir, src, i, phase[i], sh);
            else
                ok = bg_cg_emit_range_launch(e, m, p, ir, src, i, phase[i], l->rows.kind == BG_ROWS_G ? "1" : "r1 - r0", NULL,
                                             false, sh, d);
            if (uses) bg_emit_indent(e, -1);
        }
        if (uses) bg_emit_line(e, "}");
        if (wg) {
            emit_phase_barrier(e, staged != NULL, &ready, &unsynced);
            last = -1;
            i = end - 1;
        } else {
            last = phase[i];
        }
    }
    if (gstage || grows) /* the next graph's copy and its graph rows overwrite shared memory */
        bg_emit_line(e, "if (g + gridDim.y < ngraphs) __syncthreads(); // the stage is free for the next graph");
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
    free(phase);
    free(staged);
    free(invs);
    free(pairs);
    free(gbufs);
    free(grows);
    return ok;
}
