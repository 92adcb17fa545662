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
 * calls' shared memory is per warp (bin_center_csr, the bit aggregation's stage) or ends with
 * its own barrier (absmean's table), so a tile needs no barrier after its last launch, except
 * where a bin_csr's block-wide table of zero bits would be rewritten by the next tile's call
 * while a warp still reads it.  A small float product (a classifier head: ff_tile) runs as
 * bmm_ff_tile, its weights and the tile's rows staged in shared memory (barriers of its own).
 * A group whose members templates/warp_rows.cuh has takes the
 * warp-rows form instead (cg_warp_rows.c): a warp a row through every launch, no barrier. */
#include "cg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* templates/matmul.cuh FF_TILE_W_MAX, FF_TILE_X_MAX (bmm_ff_tile_ok) */
#define CG_FF_TILE_W_MAX 4096
#define CG_FF_TILE_X_MAX 2048

/* Does launch l run as bmm_ff_tile (templates/matmul.cuh: w and the tile's x rows staged in
 * shared memory by the block, then a thread an output): a head, a bmm.FFF with float weights
 * of at least CG_FF_TILE_K_MIN rows and at most CG_FF_TILE_M_MAX outputs (a few threads a row,
 * each a long chain of dependent steps that would wait on a global load a step, while the rest
 * of the block waits at the next barrier), within the template's bounds.  The same float order
 * as bmm.  Wider products (GIN's 64 x 64 MLPs) keep bmm: a thread an output already keeps many
 * threads busy there, and were not measured staged. */
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

/* Launch i (ff_tile) in a row group: bmm_ff_tile over the tile's rows, in its phase's block. */
static void emit_ff_tile(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src, int i,
                         int phase) {
    const BgPlanLaunch *l = &p->launches[i];
    const BgInst *in = &m->insts[l->inst];
    BgCgArgs args;
    bg_cg_phase_open(e, m, ir, src, l, i, phase);
    bg_cg_range_args(m, p, l, &args);
    const BgFpOrder fp = bg_inst_fp(m, in);
    char *sa = bg_cg_step_args(m, in, l, args.nm, true);
    bg_emit_line(e, "bgnn::bmm_ff_tile<%lld, %lld, %lld, %s>(rows, %s, %s, %s%s); // w and x rows in shared memory",
                 (long long)bg_cg_kcols(m->insts[in->args[0]].type), (long long)bg_cg_kcols(in->type),
                 fp.kind == BG_FP_SPLITK ? (long long)fp.chunk : 0LL, fp.fma ? "true" : "false", args.nm[0],
                 args.nm[1], args.nm[2], sa);
    free(sa);
    bg_emit_indent(e, -1);
    bg_emit_line(e, "}");
}

bool bg_cg_emit_rowgroups(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src,
                          BgDiagSink *d) {
    int *phase = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(int));
    bg_plan_phases(p, phase);
    bool ok = true;
    for (int gi = 0; gi < p->nrowgroups && ok; gi++) {
        const BgPlanRowGroup *g = &p->rowgroups[gi];
        bg_emit_line(e, "%s", "");
        bg_emit_line(e, "// Row group %d (plan.h): launches %d..%d, tiles of `tile` %s rows a block (grid (1, Y)).", gi,
                     g->first, g->first + g->count - 1, g->rows == BG_ROWS_G ? "graph" : "node");
        bg_emit_line(e, "// Parameters as the fused kernel's, the tile in place of ngraphs (bar unused)%s.",
                     g->csr >= 0 ? ", then the features' CSR" : "");
        bg_emit_printf(e, "extern \"C\" __global__ void __launch_bounds__(%d) %s(long long n, long long tile,\n"
                          "        unsigned *__restrict__ bar",
                       g->block, g->kernel);
        bg_cg_buffer_params(e, p, g->csr >= 0 ? "const unsigned *__restrict__ csr" : NULL);
        bg_emit_indent(e, 1);
        bg_emit_line(e, "(void)bar;");
        bg_emit_line(e, "bgnn::pdl_enter();");
        if (g->warp) { /* a warp a row, values in registers (cg_warp_rows.c) */
            ok = bg_cg_emit_warp_rows(e, m, p, ir, src, g, phase, true, NULL, d);
            bg_emit_indent(e, -1);
            bg_emit_line(e, "}");
            continue;
        }
        /* the tile's first row: r0 of node rows, g of graph rows (bg_cg_arg_expr's offsets) */
        const char *t0 = g->rows == BG_ROWS_G ? "g" : "r0";
        bg_emit_line(e, "for (long long %s = (long long)blockIdx.y * tile; %s < n; %s += (long long)gridDim.y * tile) {", t0,
                     t0, t0);
        bg_emit_indent(e, 1);
        bg_emit_line(e, "const long long rows = n - %s < tile ? n - %s : tile;", t0, t0);
        for (int i = g->first, last = -1; i < g->first + g->count && ok; i++) {
            if (p->launches[i].prep) continue; /* run once at binding */
            if (last >= 0 && phase[i] != last) bg_emit_line(e, "__syncthreads();"); /* a phase reads none of its own */
            last = phase[i];
            if (ff_tile(m, p, &p->launches[i])) {
                emit_ff_tile(e, m, p, ir, src, i, phase[i]);
                continue;
            }
            const bool sparse = g->csr >= 0 && bg_plan_sparse_tpr(p, &p->launches[i]) > 0;
            ok = bg_cg_emit_range_launch(e, m, p, ir, src, i, phase[i], NULL, sparse ? "bgnn::csr_tile(csr, n, r0)" : NULL, true,
                                         NULL, d);
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
