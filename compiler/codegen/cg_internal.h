/* cg_internal.h - what the parts of the CUDA code generator share (cg_cuda.c: the per-launch
 * kernels, the fused kernel and the translation unit; cg_blocks.c: the per-graph kernel;
 * cg_rows.c: the row groups' kernels; cg_warp_rows.c: their warp-rows form).
 * Not part of codegen.h's interface. */
#ifndef BG_CG_INTERNAL_H
#define BG_CG_INTERNAL_H

#include "codegen.h"
#include "emit.h"

/* The IR printout split at its newlines: lines[k] is where line k starts (malloc'd; one more
 * entry than newlines), so that finding an instruction's line does not rescan the text. */
typedef struct IrLines {
    const char **lines;
    int n;
} IrLines;
IrLines bg_cg_ir_lines(const char *ir);
/* Line i+1 of the IR printout (instruction i) for a // comment (malloc'd), or NULL. */
char *bg_cg_ir_line(const IrLines *ir, int i);

/* The C type of a buffer kind's elements. */
const char *bg_cg_ctype(BgBufKind k);
/* Position of a launch's first fused-step operand among its nlaunch_args arguments. */
int bg_cg_step_first_arg(const BgInst *in, int nlaunch_args);
/* A value's columns as a kernel sees them (plan.c's kshape). */
int64_t bg_cg_kcols(BgType t);
/* The functor expression of fused steps [s0, s1) of in (epilogue.cuh) appended to b; *k is
 * the argument position of step s0's first operand (advanced past the steps' operands). */
void bg_cg_steps_range(BgStrBuf *b, const BgModule *m, const BgInst *in, int s0, int s1, const char *const *nm,
                       int *k);
/* The argument name of a per-row factor held in a register by the warp-rows form (v<buf>, as
 * epilogue.cuh's RowVal), and whether an argument name is one: the steps' functor type then
 * names RowVal as its row factor's type. */
#define BG_CG_ROWVAL "bgnn::RowVal"
bool bg_cg_is_rowval(const char *name);
/* The prologue functor of in (bgnn::ProNone{} without one) appended to b; *k as above. */
void bg_cg_pro_expr(BgStrBuf *b, const BgInst *in, const char *const *nm, int *k);
/* ", PRO, EPI" (with_pro) or ", EPI" arguments of launch l's call with fused steps ("" without
 * steps; malloc'd). */
char *bg_cg_step_args(const BgModule *m, const BgInst *in, const BgPlanLaunch *l, const char *const *nm,
                      bool with_pro);
/* Opens launch i's block in a one-kernel form: "{ // phase P, launch i: file:line:col  IR", indented. */
void bg_cg_phase_open(BgEmit *e, const BgModule *m, const IrLines *ir, const char *src, const BgPlanLaunch *l,
                      int i, int phase);
/* Every plan buffer as a kernel parameter b<index> (computed ones neither const nor
 * __restrict__), then `extra` (a last parameter, or NULL), then ") {": the tail of the fused,
 * per-graph and row-group kernels' signatures. */
void bg_cg_buffer_params(BgEmit *e, const BgPlan *p, const char *extra);
/* The template call of launch l with its arguments named nm[k] and `rows` in scope.
 * plain (the per-graph kernel: no work schedule, any block size): the fast aggregation as the
 * plain row-by-row one, the tiled and tensor-core products as the generic one (matmul.cuh,
 * the same recorded order): the same bits.  own: the call may take static shared memory of
 * its own (absmean's table of batchnorm inverses): the whole of its kernel (a launch's own),
 * or a phase of a row group's kernel (the plan admits only narrow tables there), not of the
 * fused or per-graph one, whose static shared memory is every phase's at once. */
bool bg_cg_emit_call(BgEmit *e, const BgModule *m, const BgPlan *p, const BgPlanLaunch *l,
                     const char *const *nm, bool plain, bool own, BgDiagSink *d);
/* Argument k of launch l as a kernel over a range of rows starting at r0 (the per-graph and
 * row-group kernels) passes it: a buffer of N or G rows from row r0 (or graph g), a gathered
 * one (read at other rows: an aggregation's activation, a readout's, graph arrays) and
 * constant-row ones from their start; rowlocal: as if no argument were gathered. */
void bg_cg_arg_expr(char *out, size_t cap, const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, int k,
                    bool rowlocal);
/* Every argument of launch l by bg_cg_arg_expr (not rowlocal): names[k] for args[k], nm[k]
 * pointing at it (the nm array the template calls take). */
typedef struct BgCgArgs {
    char names[BG_PLAN_MAX_ARGS][96];
    const char *nm[BG_PLAN_MAX_ARGS];
} BgCgArgs;
void bg_cg_range_args(const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, BgCgArgs *a);
/* Is argument k of launch l read at rows other than its output's (cg_blocks.c, at the top)? */
bool bg_cg_gathered(const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, int k);
/* What the per-graph kernel holds in shared memory, for its launches' names (NULL: a row
 * group's own kernel, nothing). */
typedef struct BgCgShared {
    const bool *tables; /* the staged parameter tables (cg_stage.c), per buffer; NULL: none */
    const bool *gbufs;  /* the graph stage's b1 results (bg_plan_graph_staged_buf), per buffer */
    bool graph;         /* the code for a staged graph (gfit): bg_cg_shared_names */
    const bool *invs;   /* the staged batchnorm inverses (si<launch>), per launch; NULL: none */
    const bool *grows;  /* the graph-row values held in shared memory (gr<buf>,
                         * bg_plan_graph_row_staged), per buffer; NULL: none */
} BgCgShared;
/* Launch l's names (bg_cg_range_args) with what sh holds in shared memory: st<buf> for the
 * staged tables (cg_stage.c), gr<buf> for a graph-row value; for a staged graph (sh->graph; plan.h,
 * bg_plan_graph_stage) its CSR in shared memory (gs_rowptr, gs_col: offsets and node ids from
 * 0), so what an aggregation reads at a neighbour or an edge starts at the graph's first row
 * (r0) or edge (e0), and the staged b1 results there too (gsx<buf>). */
void bg_cg_shared_names(const BgModule *m, const BgPlan *p, const BgPlanLaunch *l, const BgCgShared *sh, BgCgArgs *a);
/* The sparse variant's template call of launch l (plan.h: a bmm of the input features over
 * their CSR, templates/bmm_fb_csr.cuh; a bin's, bin.center's or rowmean's of them, a warp a
 * row) with the CSR view expression csr (bgnn::CsrRows: the whole block, or a row group's
 * tile) for the features.  whole: the view is the launch's every row, so a bmm takes its lanes a
 * row by the rows at run time (bmm_fb_csr_rows; plan.h bg_plan_fb_csr_lanes_rows); a tile keeps
 * bg_plan_fb_csr_lanes.  own: the launch's own kernel, whose shared memory no other phase
 * shares (a standardize's rows then go through it: rowwise.cuh standardize_csr's STAGE). */
bool bg_cg_emit_sparse_call(BgEmit *e, const BgModule *m, const BgPlanLaunch *l, const char *const *nm,
                            const char *csr, bool whole, bool own);
/* A standardize's sparse call (bg_cg_emit_sparse_call's) with its rows through shared memory
 * where stage (standardize_csr's STAGE), and with its row's bin and absmean written to the
 * expressions bits and am as well where not NULL (templates/rowwise.cuh StdRowOut: a row
 * group's bin and absmean of the standardize, cg_rows.c). */
bool bg_cg_emit_sparse_std(BgEmit *e, const BgModule *m, const BgPlanLaunch *l, const char *const *nm,
                           const char *csr, bool stage, const char *bits, const char *am);
/* Launch i as a block of a kernel over a range of rows (the per-graph and row-group kernels):
 * "{ // phase ...", `const long long rows = <rows>;` unless rows is NULL (then in scope), its
 * arguments by bg_cg_arg_expr and its plain template call (a bspmm_mm's product staged in
 * shared memory where the range's product fits), "}"; csr: its sparse variant's call over
 * that CSR view (bg_cg_emit_sparse_call) instead.  own: as bg_cg_emit_call's (the row groups'
 * kernels give an absmean its table: the plan admits only narrow ones), or for the sparse call
 * as bg_cg_emit_sparse_call's (a row group whose other members have no shared memory).  staged: the tables
 * the per-graph kernel staged (bg_cg_stage_tables), read there, or NULL. */
bool bg_cg_emit_range_launch(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src, int i,
                             int phase, const char *rows, const char *csr, bool own, const BgCgShared *sh,
                             BgDiagSink *d);
/* cg_blocks.c: the per-graph kernel (plan.h) after the others. */
bool bg_cg_emit_blocks(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src,
                       BgDiagSink *d);

/* cg_rows.c: the row groups' kernels (plan.h), after the per-launch ones. */
bool bg_cg_emit_rowgroups(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src,
                          BgDiagSink *d);

/* cg_warp_rows.c: group g's launches in the warp-rows form (BgPlanRowGroup.warp;
 * templates/warp_rows.cuh: a warp takes a row through every launch of the group, its values
 * in registers): the tables read once, then the block's warps over the rows; tiles: the body
 * of the group's kernel (the tile loop: n, tile in scope), else a block of the per-graph
 * kernel over the graph's rows r0 .. r1 - 1 (in scope).  phase[] as bg_plan_phases gives it
 * (for the comments).  staged: the tables the per-graph kernel staged in shared memory at its
 * start (bg_cg_stage_tables), or NULL (a group's own kernel reads them from memory). */
bool bg_cg_emit_warp_rows(BgEmit *e, const BgModule *m, const BgPlan *p, const IrLines *ir, const char *src,
                          const BgPlanRowGroup *g, const int *phase, bool tiles, const BgCgShared *sh, BgDiagSink *d);
/* cg_stage.c: the per-graph kernel's shared copies of parameters, made once a block before
 * its graph loop (no barrier of their own) and read after the first graph's first barrier,
 * by the launches from `from` on (the first after it; those before read memory).  The tables
 * those launches (not prep) read at column c, in launch order as far as `budget` floats allow
 * (a malloc'd flag a buffer, or NULL when none is); the batchnorm inverses of their warp-rows
 * absmeans (si<i>: a malloc'd flag a launch, or NULL); their declarations; their block-wide
 * copy (no barrier). */
bool *bg_cg_stage_tables(const BgModule *m, const BgPlan *p, long long budget, int from);
bool *bg_cg_stage_inverses(const BgModule *m, const BgPlan *p, int from);
void bg_cg_stage_decls(BgEmit *e, const BgModule *m, const BgPlan *p, const bool *staged, const bool *invs);
void bg_cg_stage_copy(BgEmit *e, const BgModule *m, const BgPlan *p, const bool *staged, const bool *invs);
/* cg_stage.c: the graph stage of the per-graph kernel (plan.h, bg_plan_graph_stage): its b1
 * results, per buffer (bg_plan_graph_staged_buf, computed once; the caller frees it); its
 * shared arrays (before the graph loop); per graph, gfit and the copy of the graph's CSR
 * (rowptr, col: the adjacency's buffers); does launch l use it, in args[from..] (from 1: reads
 * it; from 0: reads or writes it)? */
bool *bg_cg_graph_stage_bufs(const BgPlan *p);
/* cg_stage.c: the graph-row values the per-graph kernel holds in shared memory
 * (bg_plan_graph_row_staged), declared (gr<buf>); per buffer, or NULL when none is. */
bool *bg_cg_graph_rows(BgEmit *e, const BgPlan *p);
void bg_cg_graph_stage_decls(BgEmit *e, const BgPlan *p, const bool *gbufs);
void bg_cg_graph_stage_copy(BgEmit *e, int rowptr, int col);
bool bg_cg_uses_graph_stage(const BgPlan *p, const bool *gbufs, const BgPlanLaunch *l, int from);

#endif /* BG_CG_INTERNAL_H */
