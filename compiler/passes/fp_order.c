/* fp_order.c - the pass that chooses the order of every float reduction (docs/semantics.md,
 * section 2) and records it on the instruction (attrs.fp, printed `fp=...`).  It is the one
 * pass that may change rounding: tests/unit/test_fp_order.c compares the reference before
 * and after it (float outputs within 1e-5 of the row's magnitude, bits only near zero).
 *
 * Under --fp-strict (m->fp_strict) every reduction is SEQ without fma: today's semantics.
 * Otherwise it chooses only orders that both the CPU reference (ref_ops.c) and the CUDA
 * templates implement bit for bit:
 *   bmm.FF*            seq+fma: acc = fmaf(x', w, acc) in k order (templates/matmul.cuh);
 *                      of a graph's row (after a readout: a classifier), K >= 16:
 *                      splitk(ceil(K/8)x8)+fma, so that the per-graph kernel spreads the
 *                      row's product over its block (cg_blocks.c, matmul.cuh bmm_ff_block:
 *                      a lone MUTAG graph's 64 x 64 classifier was one chain of 64 fmas
 *                      and their loads);
 *   bmm.FB* of input   seq: the activation is a model input, raw or scaled by columns (the
 *                      features, often mostly zeros: the row kernel skips them);
 *   bmm.FB*, K > 256   splitk(ceil(K/256) x 256): chunks of BG_FP_SPLIT_CHUNK k, each summed
 *                      from +0, the partials folded left to right (templates/bmm_fb_tiled.cuh
 *                      folds at its 64-k staging boundaries; matmul.cuh's generic path);
 *   absmean, rowmean, standardize, bin.center over C > 32 columns
 *                      lanes(32): the float64 row sums of a warp's 32 lanes, each over every
 *                      32nd column, combined by the warp's butterfly (templates/rowwise.cuh);
 *                      in seq a row is one dependent chain of C adds (and as many shuffles);
 *   log_softmax over C > 32 columns
 *                      lanes(32): its float64 sum of exp(x - max) the same way (the maximum
 *                      stays the first in column order), a warp a row; in seq it ran a thread
 *                      a row (Reddit-sized models' 41 classes: 182 us for 233k rows, 12x the
 *                      bytes' time; a warp a row in column order through shuffles was no faster);
 *   absmean (plain) of a wide float aggregation (256 threads a row: absmean_of_wide)
 *                      lanes(256): the order of the aggregation's own threads, each holding
 *                      every 256th column of the row, so that the row group's wide form
 *                      computes it in the aggregation's epilogue from registers
 *                      (templates/spmm_wide_outs.cuh); in lanes(32) each lane's chain over
 *                      every 32nd column must first gather the row from all 8 warps;
 *   bspmm.B?* with a float sum (norm sym, or edge weights)
 *                      slots(S,16,4096) (bg_fp_slots_order): a row of more than 16 edges is
 *                      S chains of masked sums, a lane a word, 4 S from 4096 edges (a hub
 *                      row on a group of 4 warps), folded in a fixed tree; shorter rows seq
 *                      (templates/spmm_bits_slots.cuh).  The reference follows it
 *                      (ref_ops.c) and tests/unit/test_fp_order.c checks it; it takes the
 *                      Reddit-sized gcn_bin from 5.36 to 3.94 ms (H200, docs/performance.md)
 *                      for NVRTC 5.1 -> 7.2 s on that model (two pass instances: a row's
 *                      and the hub quarters');
 *   everything else    seq. */
#include "bg.h"
#include "codegen.h"

/* k per split-k chunk: a multiple of the tiled FB kernel's staging chunk (64), long enough
 * that the fold costs nothing (8 adds per thread per 256 k). */
#define BG_FP_SPLIT_CHUNK 256

/* k per split-k chunk of a graph row's bmm.FF*: a thread of the per-graph kernel takes one
 * chunk of one output (8 loads of x and of w, 8 fmas), the fold 8 adds for K = 64. */
#define BG_FP_GRAPH_CHUNK 8

/* Lanes of a row sum: one warp's; of a plain absmean of a wide aggregation, its block's. */
#define BG_FP_ROW_LANES 32
#define BG_FP_WIDE_LANES 256 /* bg_plan_wide_outs_cols: the aggregation's threads a row */

/* Is in a plain absmean (no prologue or step) of a wide float aggregation (no step either) of
 * the row group's wide form's widths (plan.h bg_plan_wide_outs_cols: 256 threads a row)? */
static bool absmean_of_wide(const BgModule *m, const BgInst *in) {
    if (in->op != BG_OP_ABSMEAN || in->npro || in->nsteps) return false;
    const BgInst *a = &m->insts[in->args[0]];
    return bg_plan_bspmm_wide(m, a) && !a->nsteps && bg_plan_wide_outs_cols(a->type.dim[1]);
}

bool bg_fp_slots_order(const BgModule *m, const BgInst *in, BgFpOrder *o) {
    if (in->op != BG_OP_BSPMM || in->prec[0] != 'B' || bg_inst_fp(m, in).kind == BG_FP_NONE ||
        bg_ir_has_op(m, BG_OP_READOUT) || in->type.rank != 2 || in->type.dim[1] < 1)
        return false;
    *o = (BgFpOrder){BG_FP_SLOTS, false, bg_fp_slots_for_cols(in->type.dim[1]), BG_FP_SLOTS_SEQ_MAX, BG_FP_SLOTS_HUB_MIN};
    return true;
}

static BgFpOrder choose(const BgModule *m, const BgInst *in) {
    BgFpOrder o = {BG_FP_SEQ, false, 0, 0, 0};
    if (m->fp_strict) return o;
    if (bg_op_row_sum(in->op) || in->op == BG_OP_LOG_SOFTMAX) {
        const BgType *t = &m->insts[in->args[0]].type;
        if (t->rank == 2 && t->dim[1] > BG_FP_ROW_LANES) {
            o.kind = BG_FP_LANES;
            o.split = absmean_of_wide(m, in) ? BG_FP_WIDE_LANES : BG_FP_ROW_LANES;
        }
        return o;
    }
    if (bg_fp_slots_order(m, in, &o)) return o;
    if (in->op != BG_OP_BMM || in->prec[0] != 'F') return o;
    if (in->prec[1] == 'F') {
        o.fma = true;
        const BgType *x = &m->insts[in->args[0]].type;
        const int64_t k = bg_inst_bmm_k(m, in);
        if (x->rank == 2 && x->dim[0] == BG_DIM_G && k >= 2 * BG_FP_GRAPH_CHUNK) {
            o.kind = BG_FP_SPLITK;
            o.chunk = BG_FP_GRAPH_CHUNK;
            o.split = (int32_t)((k + BG_FP_GRAPH_CHUNK - 1) / BG_FP_GRAPH_CHUNK);
        }
        return o;
    }
    /* the input features themselves (no prologue, or fold-batchnorm-mm's column scale): seq,
     * the order of the row kernel that skips zero features (templates/bmm_fb_rows.cuh) */
    if (bg_bmm_reads_input(m, in)) return o;
    int64_t k = bg_inst_bmm_k(m, in);
    if (k > BG_FP_SPLIT_CHUNK) {
        o.kind = BG_FP_SPLITK;
        o.chunk = BG_FP_SPLIT_CHUNK;
        o.split = (int32_t)((k + BG_FP_SPLIT_CHUNK - 1) / BG_FP_SPLIT_CHUNK);
    }
    return o;
}

bool bg_pass_fp_order(BgModule *m, BgDiagSink *d) {
    (void)d;
    for (int i = 0; i < m->ninsts; i++) {
        BgInst *in = &m->insts[i];
        BgFpOrder none = {0};
        in->attrs.fp = bg_inst_fp(m, in).kind == BG_FP_NONE ? none : choose(m, in);
    }
    return true;
}
