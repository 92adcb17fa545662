/* codegen.h - the code generator: a verified module -> its GPU plan (plan_build.c, the plan
 * format in plan/plan.h) and one CUDA C++ translation unit with the manifest embedded
 * (cg_cuda.c, text helpers in emit.h).  Sits on the IR (bg.h) and the plan; includes no
 * runtime header: the runtime compiles and runs what this emits. */
#ifndef BG_CODEGEN_H
#define BG_CODEGEN_H

#include "bg.h"
#include "plan.h"

/* plan_build.c: builds the plan of a verified module for GPU architecture arch ("sm_90"; NULL:
 * the module's, else sm_90) (arena-allocated).  NULL with an error (E_INTERNAL, or E_LIMIT
 * for a model too large) when the module cannot be planned. */
BgPlan *bg_plan_build(const BgModule *m, const char *arch, BgArena *a, BgDiagSink *d);
/* Widest row (columns) of a value a warp holds in registers in the warp-rows form:
 * warp_rows.cuh WR_WORDS_MAX words. */
#define BG_WARP_ROWS_COLS_MAX 256
/* Most weight words a lane holds there for one product (ceil(M / 32) x ceil(K / 32)): 64 x 64
 * takes 4. */
#define BG_WARP_ROWS_WEIGHT_REGS 16
/* Whether a BSPMM instruction runs the fast aggregation (templates/bspmm_fast.cuh): a B
 * activation over an adjacency B with unit column factors (norm none or mean), no fused
 * steps.  Its launch: rows = ITEMS(g), one warp per item; args out, ROWPTR, COL, ROWF, x,
 * ITEMS, PARTIAL, DONE. */
bool bg_plan_bspmm_fast(const BgModule *m, const BgInst *in);
/* Whether a BMM instruction runs the tiled FB kernel (templates/bmm_fb_tiled.cuh: F
 * activations, canonical b1 weights): its launch has 12 threads per row per output tile of 64
 * (32 when M <= 32), about 21 rows a block. */
bool bg_plan_bmm_fb_tiled(const BgInst *in, bool weight_transposed);
/* Whether a BMM's own kernel is the tiled FB kernel: bg_plan_bmm_fb_tiled, or the same
 * product with epilogue steps (Reddit-sized gcn_bin's 128 -> 41 bmm.FBF after aggregate-first:
 * 0.56 ms as one thread an output), or a bmm.FF* in the order seq+fma (its f32 weights staged
 * as they are; Reddit-sized gcn_fp32's 602 -> 128 product took 6.7 ms a thread an output).  A row group takes only the first kind's products whole
 * (plan_build.c row_group_member), so its membership does not move. */
bool bg_plan_bmm_fb_tiled_kernel(const BgModule *m, const BgInst *in, bool weight_transposed);
/* A bmm.FF* on the tiled kernel: K and M at least these (Reddit-sized gcn_fp32's 128 -> 41
 * product: 13.16 -> 12.81 ms end to end on an H200 at K >= 128, docs/performance.md). */
#define BG_PLAN_FBT_FF_MIN_K 128
#define BG_PLAN_FBT_FF_MIN_M 32
/* Whether a BSPMM runs the warp-per-row kernel of bit activations with float factors
 * (templates/spmm_bits.cuh): every bspmm.B?? the fast aggregation does not take (a weighted
 * or sym adjacency, or fused steps). */
bool bg_plan_bspmm_bits(const BgModule *m, const BgInst *in);
/* Whether a BSPMM of float activations runs a warp a row (templates/spmm.cuh spmm_warp_rows,
 * at most BG_PLAN_ROWS_MAX_COLS outputs, four a lane) in its own kernel, over the graph's SLOTS
 * list (plan.h): every bspmm.F?? of at most that many columns.  The per-graph, row-group and
 * fused kernels run the same sum a thread an element (the same bits). */
bool bg_plan_bspmm_rows(const BgModule *m, const BgInst *in);
#define BG_PLAN_ROWS_MAX_COLS 128
/* Whether a BSPMM aggregates wide float rows in its own kernel by templates/spmm.cuh
 * bspmm_wide_adjb: bspmm.FBF of at least BG_PLAN_WIDE_MIN_COLS columns (plan.h).  Its launch
 * also reads the graph's ORDER (its long rows) and has bg_plan_wide_threads_per_row threads a
 * row; the fused kernel runs the same sum a thread an element (the same bits). */
bool bg_plan_bspmm_wide(const BgModule *m, const BgInst *in);
/* Whether a bin, a bin.center, a rowmean or a standardize reads the model's input features
 * (args[0] an f32 INPUT) in a form whose sparse variant over their CSR exists (plan.h
 * BG_PLAN_SPARSE_ROW_TPR; templates/bin_ops.cuh bin_csr: no step or a threshold; rowwise.cuh
 * rowmean_csr and bin_center_csr: no step; at most BG_PLAN_ROW_CSR_MAX_COLS columns;
 * standardize_csr: no step, the order lanes(32), 2 to BG_PLAN_ROW_CSR_REGS_MAX columns).  The code generator then
 * emits that variant (its launch also passes bg_plan_launch_row_csr). */
bool bg_plan_row_csr(const BgModule *m, const BgInst *in);
/* Whether a BMM instruction runs the row kernel of the input features
 * (templates/bmm_fb_rows.cuh: a bmm.FB* of an INPUT, seq order, a warp a row, zero features
 * skipped; bg_bmm_reads_input).  It comes before the tiled kernel's check. */
bool bg_plan_bmm_fb_rows(const BgModule *m, const BgInst *in, bool weight_transposed);
/* Whether a BMM instruction runs on the bit tensor cores (templates/bmm_bb_tc.cuh): a bmm.BB*
 * with its b1 weight transposed (B1T), on sm >= 80, with path tc, or path auto and K >=
 * BG_PLAN_TC_MIN_K (bench/bmm_tc_bench.cu: from K = 512 up the tensor cores win on every
 * example shape; at K = 64 the popcount kernel does).  Its launch: about one block per output
 * tile (bg_plan_bmm_tc_threads_per_row). */
#define BG_PLAN_TC_MIN_K 512
bool bg_plan_bmm_tc(const BgModule *m, const BgInst *in, bool weight_transposed, int sm);
/* Whether a BMM instruction runs on the warpgroup tensor cores (templates/bmm_bb_wgs.cuh: a
 * producer warpgroup feeding two wgmma warpgroups; sm_90, compiled for sm_90a, which the plan
 * then records as its arch): a bmm.BB* with its b1 weight transposed, K a multiple of 128, on
 * sm_90, with path wgmma, or path auto and K >= BG_PLAN_WGS_MIN_K and M >= BG_PLAN_WGS_MIN_M
 * (bench/bmm_tc_bench.cu, H200, docs/performance.md "The plan's rule for the wgmma product":
 * faster than the mma.sync kernel, BBF and BBB, on every measured shape from K = 512 and M =
 * 256 up, 2,708 to 232,965 rows, 1.1-2.2x; at K = M = 256 BBF is slower, at 128 both are, so
 * those keep bg_plan_bmm_tc; M < 256 was not measured).  Its launch: plan.h BG_PLAN_WGS_BLOCK threads, dynamic shared memory
 * (BgPlanLaunch.smem), at most a block an SM; never in the fused, per-graph or row-group
 * kernels.  bg_plan_bmm_tc is false where this is true; path wgmma off sm_90 is tc. */
#define BG_PLAN_WGS_MIN_K 512
#define BG_PLAN_WGS_MIN_M 256
bool bg_plan_bmm_wgs(const BgModule *m, const BgInst *in, bool weight_transposed, int sm);

/* sched.c: the schedule space (docs/tuning.md). */
/* A point of an instruction's schedule space: its BgSched and the code-level attributes. */
typedef struct BgSchedPoint {
    BgSched s;
    BgMethod method; /* BSPMM with b1 activations */
    BgBmmPath path;  /* bmm.BB* */
} BgSchedPoint;
/* Has in a schedule space (a launch whose spread over the GPU may be chosen)? */
bool bg_sched_tunable(const BgModule *m, const BgInst *in);
/* Is s the plan's default (every field zero)?  Are two points the same? */
bool bg_sched_is_default(const BgSched *s);
bool bg_sched_eq(const BgSchedPoint *a, const BgSchedPoint *b);
/* The instruction's current point. */
BgSchedPoint bg_sched_point(const BgInst *in);
/* Sets the instruction's point (its attributes). */
void bg_sched_set(BgInst *in, const BgSchedPoint *pt);
/* The points of in's space for a GPU of compute capability sm, the current one first;
 * writes at most max into out (out may be NULL) and returns the count. */
int bg_sched_space(const BgModule *m, const BgInst *in, int sm, BgSchedPoint *out, int max);
/* Is pt valid for in (a kernel that needs 256-thread blocks, knobs of other ops)?  When not,
 * writes why into why (may be NULL). */
bool bg_sched_valid(const BgModule *m, const BgInst *in, const BgSchedPoint *pt, char *why, size_t n);
/* The point as text, fields at their defaults left out ("default" when all are):
 * "block=128 grid=4 chunk=512 group=never fb=sparse method=popc2 path=tc". */
void bg_sched_str(const BgSchedPoint *pt, char *buf, size_t n);
/* Parses bg_sched_str's text; false (why in err) when malformed. */
bool bg_sched_parse(const char *text, BgSchedPoint *pt, char *err, size_t n);
/* The op key of a tunable instruction for the tuning database: what its kernels depend on
 * ("bspmm.BBB c=64 adj=none,loops fast", "bmm.FBB k=1433 m=64 input pro=scl"); no graph. */
void bg_sched_op_key(const BgModule *m, const BgInst *in, char *buf, size_t n);

/* Sets every tunable instruction's point from the tuning database's record for its op key and
 * graph_key (plan/tune_db.h); a record this compiler cannot use is a warning and the default.
 * Returns how many were set. */
struct BgTuneDb;
int bg_sched_apply_db(BgModule *m, const struct BgTuneDb *db, const char *graph_key, int sm, BgDiagSink *d);
/* Sets every tunable instruction's launch-level knobs that the learned predictor has a tree
 * for (plan/sched_model.h; x: bg_sched_model_features of the bound graph); a predicted point
 * the instruction cannot take leaves its default.  Returns how many were set.  Callers apply
 * the tuning database after it (a measured record wins). */
struct BgSchedModel;
int bg_sched_apply_model(BgModule *m, const struct BgSchedModel *model, const double *x);
/* The plan's own rules, for a bound graph of n rows in ngraphs graphs (<= 1: one graph) with
 * deg_mean entries a row: a bspmm_mm of at most 8 outputs still at its default point takes
 * lanes=16 on one graph of at least BG_SCHED_LANES_MIN_ROWS rows and at most
 * BG_SCHED_LANES_MAX_DEG entries a row on average, where a warp a row leaves most lanes idle over
 * several waves of warps (PubMed-size gcn_bin on an H200: 39.1 -> 37.3 us; on Cora and CiteSeer,
 * one wave, a warp a row stays faster: docs/performance.md).  Callers apply it first, then the
 * predictor and the tuning database over it.  dry: count without setting.  Returns how many. */
#define BG_SCHED_LANES_MIN_ROWS 16384
#define BG_SCHED_LANES_MAX_DEG 8.0
int bg_sched_apply_rules(BgModule *m, int64_t n, int64_t ngraphs, double deg_mean, bool dry);
/* "INST:SCHEDULE" (bgnnc --sched): sets instruction INST's point; an error (E_OPTION) when the
 * instruction has no schedule or the text is not a valid point for it. */
bool bg_sched_apply_text(BgModule *m, const char *spec, BgDiagSink *d);

/* cg_cuda.c: the generated translation unit for a module: deterministic text, one
 * specialised kernel per launch, provenance comments, the manifest embedded.  arch:
 * "sm_80", "sm_90", ...  malloc'd. */
char *bg_codegen_cuda(const BgModule *m, const char *arch, BgDiagSink *d);
/* The same, and the architecture to compile it for into compile_arch (n bytes, when not NULL):
 * the plan's, which is arch, or "sm_90a" where the plan has a wgmma product (bg_plan_bmm_wgs)
 * and arch is sm_90.  NVRTC must target that one. */
char *bg_codegen_cuda_arch(const BgModule *m, const char *arch, char *compile_arch, size_t n, BgDiagSink *d);
/* The embedded templates (the templates/ .cuh files) as headers, by file name (the generated
 * source #includes them by these names).  Returns a malloc'd array of *n entries (free it;
 * the strings are static), to hand to NVRTC with the source. */
BgCodeHeader *bg_codegen_templates(int *n);
/* The plan bg_codegen_cuda embeds, for a runtime that generates and compiles in-process
 * (arch recorded in the plan).  Same as bg_plan_build plus arch. */
BgPlan *bg_codegen_plan(const BgModule *m, const char *arch, BgArena *a, BgDiagSink *d);

#endif /* BG_CODEGEN_H */
