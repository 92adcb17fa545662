/* cg_stage.c - the per-graph kernel's constant tables in shared memory: the parameter tables
 * its launches read at column c (epilogue and prologue tables, threshold tables, a bias; not
 * weight matrices: BG_CG_STAGE_MAX_TABLE) are copied once, at the kernel's start, into
 * `__shared__ float st<buf>[...]`, and every launch then names st<buf> for them.  Each graph's
 * rows then read them at shared-memory latency, not an L2 round trip a launch (H200: PROTEINS
 * GIN bin, 1024 graphs, 463 -> 412 us).  Only buffers that hold parameters alone are staged
 * (prep launches, run at binding, write the others), so the copy is the same for every graph.
 * A row group's own kernel keeps them in memory: there the copy's round trip and barrier at
 * the start of each block cost more than they save (H200: MUTAG GIN bin 26.8 -> 28.1 us,
 * ENZYMES GCN bin 48.0 -> 50.4 us).
 *
 * The graph stage (plan.h, bg_plan_graph_stage), for each graph in turn: its CSR copied into
 * shared memory (gs_rowptr from 0, gs_col as node ids from 0) when the graph has at most
 * BG_PLAN_GSTAGE_ROWS nodes and BG_PLAN_GSTAGE_EDGES edges (gfit), and the b1 results its
 * aggregations gather held there too (gsx<buf>, bg_plan_graph_staged_buf).  cg_blocks.c emits
 * each launch that uses it twice, for gfit with these names (bg_cg_shared_names) and for a
 * larger graph with the batch's arrays: one selected pointer per operand instead cost registers
 * (64 a thread at 1,024 threads: it spilled) and made every load generic.  H200, per-graph
 * kernel on 1,024 graphs: ENZYMES GIN bin 99.9 -> 90.8 us, PROTEINS 365 -> 357, NCI1 81.5 ->
 * 82.2, a lone MUTAG graph unchanged.
 *
 * The copy has no barrier of its own: the kernel loads the block's first graph's rows first,
 * then copies (cp.async, waited for just before the first barrier), so that the two round trips
 * overlap, and the launches before the first graph's first barrier read the tables from memory
 * (cg_blocks.c).  The batchnorm inverses of the
 * warp rows' absmeans, 1 / sqrt(var + eps) by the prologue's own inv(), are computed in that
 * copy (si<launch>), once a block instead of in every warp of every group.  A staged graph's
 * CSR is copied in one loop, its rowptr and col loads side by side.  H200, a lone MUTAG
 * graph with the staged gather (warp_rows.cuh wr_bspmm_bits_gs): GIN bin 13.6 -> 12.4 us. */
#include "cg_internal.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>

/* Buffer b holds parameters only: a PARAM / PARAM_SCALE, or a prep launch's result (a
 * threshold table, a folded batchnorm), so it is the same all through a run. */
static bool param_only(const BgPlan *p, int b) {
    return p->bufs[b].role == BG_ROLE_PARAM || p->bufs[b].role == BG_ROLE_PARAM_SCALE || bg_plan_prep_output(p, b);
}

/* Is argument k of launch l a table to stage: f32 of constant rows, parameters only, not a
 * gather's graph operand or a bit product's weight words? */
static bool stageable(const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, int k) {
    const BgInst *in = &m->insts[l->inst];
    const int b = l->args[k];
    if (k < 1 || b < 0 || b >= p->nbufs) return false;
    if (p->bufs[b].rows.kind != BG_ROWS_CONST || p->bufs[b].kind != BG_BUF_F32 || !param_only(p, b)) return false;
    if ((in->op == BG_OP_BSPMM || in->op == BG_OP_READOUT || in->op == BG_OP_BSPMM_MM) &&
        k < bg_cg_step_first_arg(in, l->nargs))
        return false;
    return !(in->op == BG_OP_BMM && in->prec[0] == 'B' && k == 2);
}

static long long elems_of(const BgPlan *p, int b) { return (long long)(p->bufs[b].rows.value * p->bufs[b].width); }

/* The largest table staged (floats): vectors and threshold tables, not a float product's
 * weight matrix.  Copying a classifier's 64 x 64 weights too (16 KB a block) made the copy
 * 8 dependent rounds for a lone graph and cut the blocks an SM holds on large batches (H200:
 * NCI1 GIN bin, 1024 graphs, 92 -> 111 us; MUTAG's lone graph no faster). */
#define BG_CG_STAGE_MAX_TABLE 1024

bool *bg_cg_stage_tables(const BgModule *m, const BgPlan *p, long long budget, int from) {
    bool *staged = bg_xcalloc((size_t)p->nbufs + 1, sizeof(bool));
    long long total = 0;
    int n = 0;
    for (int i = from; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        for (int k = 1; !l->prep && k < l->nargs; k++) {
            const int b = l->args[k];
            if (!stageable(m, p, l, k) || staged[b]) continue;
            const long long elems = elems_of(p, b);
            if (elems <= 0 || elems > BG_CG_STAGE_MAX_TABLE || total + elems > budget) continue; /* in launch order */
            staged[b] = true;
            total += elems;
            n++;
        }
    }
    if (!n) {
        free(staged);
        return NULL;
    }
    return staged;
}

/* Is launch i an absmean of a warp-rows group of node rows with a batchnorm prologue (whose
 * inverses wr_pro_inv would compute in every warp)? */
static bool warp_bn_absmean(const BgModule *m, const BgPlan *p, int i) {
    const BgPlanLaunch *l = &p->launches[i];
    const BgInst *in = &m->insts[l->inst];
    if (l->prep || in->op != BG_OP_ABSMEAN || !in->npro || in->steps[0].kind != BG_STEP_BATCHNORM) return false;
    for (int k = 0; k < p->nrowgroups; k++) {
        const BgPlanRowGroup *g = &p->rowgroups[k];
        if (g->warp && g->rows == BG_ROWS_N && i >= g->first && i < g->first + g->count) return true;
    }
    return false;
}

bool *bg_cg_stage_inverses(const BgModule *m, const BgPlan *p, int from) {
    bool *inv = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(bool));
    int n = 0;
    for (int i = from; i < p->nlaunches; i++) n += inv[i] = warp_bn_absmean(m, p, i);
    if (!n) {
        free(inv);
        return NULL;
    }
    return inv;
}

/* Columns of launch i's absmean input (the inverses' count). */
static long long inv_cols(const BgModule *m, const BgPlan *p, int i) {
    return (long long)m->insts[m->insts[p->launches[i].inst].args[0]].type.dim[1];
}

void bg_cg_stage_decls(BgEmit *e, const BgModule *m, const BgPlan *p, const bool *staged, const bool *invs) {
    if (staged) {
        bg_emit_line(e, "// constant tables staged in shared memory (cg_stage.c): every graph's rows read them there");
        for (int b = 0; b < p->nbufs; b++)
            if (staged[b]) bg_emit_line(e, "__shared__ float st%d[%lld];", b, elems_of(p, b));
    }
    for (int i = 0; invs && i < p->nlaunches; i++)
        if (invs[i]) bg_emit_line(e, "__shared__ float si%d[%lld]; // launch %d's batchnorm inverses", i, inv_cols(m, p, i), i);
}

void bg_cg_stage_copy(BgEmit *e, const BgModule *m, const BgPlan *p, const bool *staged, const bool *invs) {
    long long most = 0;
    for (int b = 0; staged && b < p->nbufs; b++)
        if (staged[b] && elems_of(p, b) > most) most = elems_of(p, b);
    for (int i = 0; invs && i < p->nlaunches; i++)
        if (invs[i] && inv_cols(m, p, i) > most) most = inv_cols(m, p, i);
    if (!most) return;
    /* The tables by cp.async (bgnn::stage_async): no register holds a value and no thread waits
     * for its loads; each thread waits for its own copies just before the barrier after which
     * the block reads them (bgnn::stage_wait, emitted by cg_blocks.c).  Copied through
     * registers, the compiler split the conditional copies (t < 64) into about eight groups of
     * loads, each waiting for its stores: eight dependent L2 round trips on the block's first
     * warps before the first barrier (H200, a lone MUTAG graph, GIN bin 11.0 -> 10.6 us).  The
     * inverses' variances are loaded first, then the inverses computed: from a load of their own
     * after the copy, the three inverses of GIN bin were three dependent round trips in a row.
     * (Every table's value loaded into a register first made gcn_fp32_nci1's kernel spill at 64
     * registers.  A warp a piece of the copy, its loads before its stores, helped GIN's lone
     * graphs but cost GCN's; the inverses by the block's last threads with a lone graph's CSR
     * range from a kernel parameter helped MUTAG's lone graph only and cost 3-9% on batches:
     * docs/performance.md, 2026-11-29.) */
    bg_emit_line(e, "for (int t = threadIdx.x; t < %lld; t += blockDim.x) {", most);
    bg_emit_indent(e, 1);
    char **pes = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(char *));
    for (int i = 0; invs && i < p->nlaunches; i++) {
        if (!invs[i]) continue;
        const BgPlanLaunch *l = &p->launches[i];
        const BgInst *in = &m->insts[l->inst];
        BgCgArgs args;
        bg_cg_range_args(m, p, l, &args);
        BgStrBuf pb = {0};
        int k = bg_cg_step_first_arg(in, l->nargs);
        bg_cg_pro_expr(&pb, in, args.nm, &k);
        pes[i] = bg_sb_take(&pb);
        const long long c = inv_cols(m, p, i);
        if (c == most) bg_emit_line(e, "const float vi%d = %s.inv_load(t);", i, pes[i]);
        else bg_emit_line(e, "const float vi%d = t < %lld ? %s.inv_load(t) : 0.0f;", i, c, pes[i]);
    }
    for (int b = 0; staged && b < p->nbufs; b++) {
        if (!staged[b]) continue;
        if (elems_of(p, b) == most) bg_emit_line(e, "bgnn::stage_async(&st%d[t], &b%d[t]);", b, b);
        else bg_emit_line(e, "if (t < %lld) bgnn::stage_async(&st%d[t], &b%d[t]);", elems_of(p, b), b, b);
    }
    for (int i = 0; invs && i < p->nlaunches; i++) {
        if (!invs[i]) continue;
        const long long c = inv_cols(m, p, i);
        if (c == most) bg_emit_line(e, "si%d[t] = %s.inv_from(vi%d);", i, pes[i], i);
        else bg_emit_line(e, "if (t < %lld) si%d[t] = %s.inv_from(vi%d);", c, i, pes[i], i);
        free(pes[i]);
    }
    free(pes);
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
}

static void stage_names(const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, const bool *staged, BgCgArgs *a) {
    for (int k = 1; staged && k < l->nargs; k++)
        if (l->args[k] >= 0 && staged[l->args[k]] && stageable(m, p, l, k)) {
            snprintf(a->names[k], sizeof a->names[k], "st%d", l->args[k]);
            a->nm[k] = a->names[k];
        }
}

void bg_cg_shared_names(const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, const BgCgShared *sh, BgCgArgs *a) {
    if (!sh) return;
    stage_names(m, p, l, sh->tables, a);
    for (int k = 0; sh->grows && k < l->nargs; k++) /* the graph at hand's row: the whole array */
        if (l->args[k] >= 0 && sh->grows[l->args[k]]) {
            snprintf(a->names[k], sizeof a->names[k], "gr%d", l->args[k]);
            a->nm[k] = a->names[k];
        }
    if (!sh->graph) return;
    const bool agg = l->op && strcmp(l->op, "bspmm") == 0;
    for (int k = 0; k < l->nargs; k++) {
        const int b = l->args[k];
        if (b < 0) continue;
        const BgPlanBuf *pb = &p->bufs[b];
        char *out = a->names[k];
        const size_t cap = sizeof a->names[k];
        if (pb->role == BG_ROLE_GRAPH) {
            switch (pb->garr) {
            case BG_GARR_ROWPTR: snprintf(out, cap, "gs_rowptr"); break;
            case BG_GARR_COL: snprintf(out, cap, "gs_col"); break;
            case BG_GARR_COLF: snprintf(out, cap, "(b%d + r0)", b); break; /* at node j */
            case BG_GARR_W: snprintf(out, cap, "(b%d + e0)", b); break;    /* at edge e */
            default: continue; /* the row factors: at the output row */
            }
        } else if (sh->gbufs && sh->gbufs[b]) {
            snprintf(out, cap, "gsx%d", b);
        } else if (agg && bg_cg_gathered(m, p, l, k) && pb->rows.kind == BG_ROWS_N) {
            snprintf(out, cap, "(b%d + r0 * %lldLL)", b, (long long)pb->width);
        } else {
            continue;
        }
        a->nm[k] = out;
    }
}

bool *bg_cg_graph_rows(BgEmit *e, const BgPlan *p) {
    bool *rows = bg_xcalloc((size_t)p->nbufs + 1, sizeof(bool));
    int n = 0;
    for (int b = 0; b < p->nbufs; b++)
        if ((rows[b] = bg_plan_graph_row_staged(p, b))) {
            if (!n++) bg_emit_line(e, "// graph-row values in shared memory (plan.h bg_plan_graph_row_staged): the graph at hand's row");
            bg_emit_line(e, "__shared__ %s gr%d[%lld]; // b%d's row", p->bufs[b].kind == BG_BUF_B1 ? "unsigned" : "float", b,
                         (long long)p->bufs[b].width, b);
        }
    if (!n) {
        free(rows);
        return NULL;
    }
    return rows;
}

bool *bg_cg_graph_stage_bufs(const BgPlan *p) {
    bool *gbufs = bg_xcalloc((size_t)p->nbufs + 1, sizeof(bool));
    for (int b = 0; b < p->nbufs; b++) gbufs[b] = bg_plan_graph_staged_buf(p, b);
    return gbufs;
}

void bg_cg_graph_stage_decls(BgEmit *e, const BgPlan *p, const bool *gbufs) {
    bg_emit_line(e, "// the graph stage (plan.h): a graph of at most %d nodes and %d edges in shared memory",
                 BG_PLAN_GSTAGE_ROWS, BG_PLAN_GSTAGE_EDGES);
    bg_emit_line(e, "__shared__ long long gs_rowptr[%d];", BG_PLAN_GSTAGE_ROWS + 1);
    bg_emit_line(e, "__shared__ int gs_col[%d];", BG_PLAN_GSTAGE_EDGES);
    for (int b = 0; b < p->nbufs; b++)
        if (gbufs[b])
            bg_emit_line(e, "__shared__ unsigned gsx%d[%lld]; // b%d's rows", b, (long long)BG_PLAN_GSTAGE_ROWS * p->bufs[b].width,
                         b);
}

void bg_cg_graph_stage_copy(BgEmit *e, int rowptr, int col) {
    bg_emit_line(e, "const long long e0 = b%d[r0], ne = b%d[r1] - e0;", rowptr, rowptr);
    bg_emit_line(e, "const bool gfit = r1 - r0 <= %dLL && ne <= %dLL;", BG_PLAN_GSTAGE_ROWS, BG_PLAN_GSTAGE_EDGES);
    bg_emit_line(e, "(void)e0;");
    bg_emit_line(e, "if (gfit) { // offsets from the graph's first edge, node ids from its first node");
    bg_emit_indent(e, 1);
    bg_emit_line(e, "for (long long t = threadIdx.x; t <= r1 - r0 || t < ne; t += blockDim.x) { // both loads, then the stores");
    bg_emit_indent(e, 1);
    bg_emit_line(e, "const long long rp = t <= r1 - r0 ? b%d[r0 + t] : 0;", rowptr);
    bg_emit_line(e, "const int c = t < ne ? b%d[e0 + t] : 0;", col);
    bg_emit_line(e, "if (t <= r1 - r0) gs_rowptr[t] = rp - e0;");
    bg_emit_line(e, "if (t < ne) gs_col[t] = c - (int)r0;");
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
}

bool bg_cg_uses_graph_stage(const BgPlan *p, const bool *gbufs, const BgPlanLaunch *l, int from) {
    for (int k = from; k < l->nargs; k++)
        if (l->args[k] >= 0 && (p->bufs[l->args[k]].role == BG_ROLE_GRAPH || gbufs[l->args[k]]))
            return true;
    return false;
}
