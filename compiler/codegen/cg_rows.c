/* cg_rows.c - the row groups' kernels (plan.h, "Row groups"): one kernel runs a run of
 * row-local launches, block y taking tiles of rows y, y + gridDim.y, ... and running every
 * launch of the group on the tile, __syncthreads between phases.
 *
 * The same template calls as the per-graph kernel (bg_cg_emit_call, plain): grid.x is 1, so
 * each template's grid-stride loop covers exactly the `rows` it is given, and every argument
 * of N rows starts at the tile's first row r0 (bg_cg_arg_expr; a group of graph rows: every
 * argument of G rows at the tile's first graph g, n being ngraphs).  A launch of the group
 * reads earlier launches' outputs at its own rows only (bg_plan_rowgroup_launch_ok), all
 * written by this block before the barrier that ends their phase (bg_plan_phases: a launch
 * that reads a buffer written in the current phase starts the next), so the group's result is
 * the separate launches' bit for bit.  The first launch may be a gather (a bspmm or readout):
 * it reads its activation at any row, written by an earlier kernel and by no launch of the
 * group (bg_plan_rowgroup_ok), so tiles need no order between them there either.  An absmean
 * with a batchnorm prologue gets its table of inverses (own: the plan admits narrow ones). 
 * A launch with a sparse variant runs it over the tile's rows of the features' CSR (the
 * kernel's last parameter; bgnn::csr_tile), in index order.  Tiles share no rows and the
 * calls' shared memory is per warp (bin_center_csr, the bit aggregation's stage, a sparse
 * standardize's rows where the group has no other shared memory: std_stage_ok) or ends with
 * its own barrier (absmean's table), so a tile needs no barrier after its last launch, except
 * where a bin_csr's block-wide table of zero bits would be rewritten by the next tile's call
 * while a warp still reads it.  A small float product (a classifier head: cg_cuda.c ff_tile)
 * runs as bmm_ff_tile, its weights and the tile's rows staged in shared memory (barriers of
 * its own).  A group whose members templates/warp_rows.cuh has takes the
 * warp-rows form instead (cg_warp_rows.c): a warp a row through every launch, no barrier. */
#include "cg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Group g's sparse standardize (a standardize of the features over their CSR), when it has
 * exactly one; else -1. */
static int sparse_std_of(const BgModule *m, const BgPlan *p, const BgPlanRowGroup *g) {
    int std = -1;
    for (int i = g->first; g->csr >= 0 && i < g->first + g->count; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (l->prep || bg_plan_sparse_tpr(p, l) <= 0 || m->insts[l->inst].op != BG_OP_STANDARDIZE) continue;
        if (std >= 0) return -1; /* two: left alone */
        std = i;
    }
    return std;
}

/* May group g's sparse standardize (of the features' CSR) take its rows through shared memory
 * (templates/rowwise.cuh standardize_csr's STAGE, 46 KB for 8 warps: Cora's 1,433 columns),
 * as in its own kernel?  Where the group's blocks are 256 threads, it has one (sparse_std_of),
 * and no other member declares shared memory: bin, relu, scl, add,
 * concat, log_softmax and dense standardize have none, an absmean only with a prologue (its
 * table), so the group kernel's static shared memory stays the stage's. */
static bool std_stage_ok(const BgModule *m, const BgPlan *p, const BgPlanRowGroup *g) {
    if (g->block != 256 || sparse_std_of(m, p, g) < 0) return false;
    for (int i = g->first; i < g->first + g->count; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (l->prep) continue;
        const BgInst *in = &m->insts[l->inst];
        const bool sparse = bg_plan_sparse_tpr(p, l) > 0;
        switch (in->op) {
        case BG_OP_STANDARDIZE: break;
        case BG_OP_BIN: if (sparse) return false; break; /* bin_csr: a block-wide table */
        case BG_OP_ABSMEAN: if (in->npro) return false; break;
        case BG_OP_RELU: case BG_OP_SCL: case BG_OP_ADD: case BG_OP_CONCAT: case BG_OP_LOG_SOFTMAX: break;
        default: return false;
        }
    }
    return true;
}

/* The launches of group g that the group's sparse standardize (std) computes as well: a plain
 * bin (no threshold) and an absmean (no prologue, lanes(32)) of its output (templates/rowwise.cuh
 * StdRowOut: the same operations on the stored row's values, still in the warp's registers, so
 * the same bits, without reading the row again).  *bin and *am: those launches, or -1; false
 * when the group has neither (or no such standardize). */
static bool std_outs(const BgModule *m, const BgPlan *p, const BgPlanRowGroup *g, int *std, int *bin, int *am) {
    *bin = *am = -1;
    *std = sparse_std_of(m, p, g);
    if (*std < 0) return false;
    const int y = p->launches[*std].args[0];
    for (int i = *std + 1; i < g->first + g->count; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (l->prep || l->nargs < 2 || l->args[1] != y) continue;
        const BgInst *in = &m->insts[l->inst];
        if (in->op == BG_OP_BIN && in->nsteps == 0 && *bin < 0) *bin = i;
        if (in->op == BG_OP_ABSMEAN && in->npro == 0 && in->nsteps == 0 && *am < 0) {
            const BgFpOrder fp = bg_inst_fp(m, in);
            if (fp.kind == BG_FP_LANES && fp.split == 32) *am = i;
        }
    }
    return *bin >= 0 || *am >= 0;
}

/* Group g's sparse standardize (launch i) with the bin (launch bin) and absmean (am) of its
 * rows as well (std_outs), as bg_cg_emit_range_launch emits a launch. */
static bool emit_std_outs(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src, int i,
                          int phase, bool stage, int bin, int am) {
    const BgPlanLaunch *l = &p->launches[i];
    BgCgArgs a, ab, aa;
    bg_cg_phase_open(e, m, ir, src, l, i, phase);
    bg_cg_range_args(m, p, l, &a);
    if (bin >= 0) bg_cg_range_args(m, p, &p->launches[bin], &ab);
    if (am >= 0) bg_cg_range_args(m, p, &p->launches[am], &aa);
    bg_emit_line(e, "// with launch%s %s%s%s: the row's bin and absmean from the registers (rowwise.cuh StdRowOut)",
                 bin >= 0 && am >= 0 ? "es" : "", bin >= 0 ? p->launches[bin].kernel : "",
                 bin >= 0 && am >= 0 ? " and " : "", am >= 0 ? p->launches[am].kernel : "");
    const bool ok = bg_cg_emit_sparse_std(e, m, l, a.nm, "bgnn::csr_tile(csr, n, r0)", stage, bin >= 0 ? ab.nm[0] : NULL,
                                          am >= 0 ? aa.nm[0] : NULL);
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
    return ok;
}

/* Group g in the wide form (plan.h): the body of its kernel, the aggregation with the bin and
 * absmean of its rows (templates/spmm_wide_outs.cuh) over all n rows, on the aggregation's own
 * grid; like the aggregation's own kernel, it waits for the kernel before it at its end where
 * it runs beside that one. */
static bool emit_wide(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src,
                      const BgPlanRowGroup *g, const int *phase) {
    const BgPlanLaunch *l = &p->launches[g->first];
    int bin = -1, am = -1;
    for (int i = g->first + 1; i < g->first + g->count; i++) {
        if (p->launches[i].prep) continue;
        if (m->insts[p->launches[i].inst].op == BG_OP_BIN) bin = p->launches[i].args[0];
        else am = p->launches[i].args[0];
    }
    const bool keep = bg_plan_buf_kept_in(p, g, l->args[0]); /* y stored at every row */
    const bool beside = bg_plan_launch_beside_prev(p, g->first);
    if (!beside) bg_emit_line(e, "bgnn::pdl_enter();");
    bg_emit_line(e, "const long long rows = n;");
    bg_cg_phase_open(e, m, ir, src, l, g->first, phase[g->first]);
    for (int i = g->first + 1; i < g->first + g->count; i++)
        if (!p->launches[i].prep)
            bg_emit_line(e, "// with launch %d (%s): its rows from the registers", i, p->launches[i].kernel);
    char bits[16] = "nullptr", ams[16] = "nullptr";
    if (bin >= 0) snprintf(bits, sizeof bits, "b%d", bin);
    if (am >= 0) snprintf(ams, sizeof ams, "b%d", am);
    const int64_t C = p->bufs[l->args[0]].cols;
    bg_emit_line(e, "bgnn::bspmm_wide_adjb_outs<%lld, %d, %s>(rows, b%d, b%d, b%d, b%d, b%d, b%d, (const int4 *)b%d, %s, %s, "
                    "(unsigned *)b%d);",
                 (long long)C, BG_PLAN_LONG_ROW_EDGES, keep ? "true" : "false", l->args[0], l->args[1], l->args[2],
                 l->args[3], l->args[4], l->args[5], l->args[6], bits, ams, g->counters);
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
    if (beside) bg_emit_line(e, "bgnn::pdl_enter(); // at the end: this kernel reads and writes nothing of the one before it");
    return true;
}

bool bg_cg_emit_rowgroups(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src,
                          BgDiagSink *d) {
    int *phase = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(int));
    bg_plan_phases(p, phase);
    bool ok = true;
    for (int gi = 0; gi < p->nrowgroups && ok; gi++) {
        const BgPlanRowGroup *g = &p->rowgroups[gi];
        bg_emit_line(e, "%s", "");
        if (g->wide)
            bg_emit_line(e, "// Row group %d (plan.h), the wide form: launches %d..%d, a block a row (grid (X, 1), tile unused).",
                         gi, g->first, g->first + g->count - 1);
        else
            bg_emit_line(e, "// Row group %d (plan.h): launches %d..%d, tiles of `tile` %s rows a block (grid (1, Y)).", gi,
                         g->first, g->first + g->count - 1, g->rows == BG_ROWS_G ? "graph" : "node");
        bg_emit_line(e, "// Parameters as the fused kernel's, the tile in place of ngraphs (bar unused)%s.",
                     g->csr >= 0 ? ", then the features' CSR" : "");
        /* a group whose standardize stages its rows: 3 blocks an SM, as its own kernel (one wave
         * of Cora's 339 tiles; cg_cuda.c kernel_min_blocks) */
        const bool stage = std_stage_ok(m, p, g);
        /* the wide form: 4 blocks an SM, as the aggregation's own kernel (64 registers; at 80 the
         * group ran at 3 and Cora's indgcn_full took 67 us instead of 46, H200) */
        char bounds[32];
        snprintf(bounds, sizeof bounds, stage ? "%d, 3" : g->wide ? "%d, 4" : "%d", g->block);
        bg_emit_printf(e, "extern \"C\" __global__ void __launch_bounds__(%s) %s(long long n, long long tile,\n"
                          "        unsigned *__restrict__ bar",
                       bounds, g->kernel);
        bg_cg_buffer_params(e, p, g->csr >= 0 ? "const unsigned *__restrict__ csr" : NULL);
        bg_emit_indent(e, 1);
        bg_emit_line(e, "(void)bar;");
        if (g->wide) {
            bg_emit_line(e, "(void)tile;");
            ok = emit_wide(e, m, p, ir, src, g, phase);
            bg_emit_indent(e, -1);
            bg_emit_line(e, "}");
            continue;
        }
        bg_emit_line(e, "bgnn::pdl_enter();");
        if (g->warp) { /* a warp a row, values in registers (cg_warp_rows.c) */
            ok = bg_cg_emit_warp_rows(e, m, p, ir, src, g, phase, true, NULL, d);
            bg_emit_indent(e, -1);
            bg_emit_line(e, "}");
            continue;
        }
        /* the tile's first row: r0 of node rows, g of graph rows (bg_cg_arg_expr's offsets) */
        const char *t0 = g->rows == BG_ROWS_G ? "g" : "r0";
        int sstd, sbin, sam;
        const bool souts = std_outs(m, p, g, &sstd, &sbin, &sam);
        bg_emit_line(e, "for (long long %s = (long long)blockIdx.y * tile; %s < n; %s += (long long)gridDim.y * tile) {", t0,
                     t0, t0);
        bg_emit_indent(e, 1);
        bg_emit_line(e, "const long long rows = n - %s < tile ? n - %s : tile;", t0, t0);
        for (int i = g->first, last = -1; i < g->first + g->count && ok; i++) {
            if (p->launches[i].prep) continue; /* run once at binding */
            if (souts && (i == sbin || i == sam)) {
                bg_emit_line(e, "// launch %d (%s): written with launch %d's standardize", i, p->launches[i].kernel, sstd);
                continue;
            }
            if (last >= 0 && phase[i] != last) bg_emit_line(e, "__syncthreads();"); /* a phase reads none of its own */
            last = phase[i];
            if (souts && i == sstd) {
                ok = emit_std_outs(e, m, p, ir, src, i, phase[i], stage, sbin, sam);
                continue;
            }
            const bool sparse = g->csr >= 0 && bg_plan_sparse_tpr(p, &p->launches[i]) > 0;
            ok = bg_cg_emit_range_launch(e, m, p, ir, src, i, phase[i], NULL, sparse ? "bgnn::csr_tile(csr, n, r0)" : NULL,
                                         !sparse || stage, NULL, d);
        }
        bool block_table = false; /* a bin_csr (templates/bin_ops.cuh: zw, by the whole block) */
        for (int i = g->first; i < g->first + g->count; i++)
            block_table |= g->csr >= 0 && !p->launches[i].prep && strcmp(p->launches[i].op, "bin") == 0 &&
                           bg_plan_sparse_tpr(p, &p->launches[i]) > 0;
        if (block_table) bg_emit_line(e, "__syncthreads(); // bin_csr's table of zero bits is the block's");
        bg_emit_indent(e, -1);
        bg_emit_line(e, "}");
        bg_emit_indent(e, -1);
        bg_emit_line(e, "}");
    }
    free(phase);
    return ok;
}
