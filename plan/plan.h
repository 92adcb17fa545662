/* plan.h - the GPU execution plan of a module: the contract between code generation
 * (compiler/codegen: plan_build.c, and cg_cuda.c, which emits one kernel per launch) and
 * the runtime (which allocates the buffers, fills the leaves, launches the kernels in order
 * and reads the outputs back).  This layer (plan/) sits below both and knows neither.
 *
 * A BgPlan is flat and self-contained: it refers to no IR, so the runtime can run a cubin
 * from its embedded manifest alone (manifest.c writes and reads a plan as text).
 *
 * ---- Buffers ---------------------------------------------------------------------------
 * One device allocation per buffer; buffers never alias in this version (no liveness
 * sharing).  A buffer holds rows(buf) * width * elem_size(kind) bytes (a B1T buffer 4 more a
 * row: bg_plan_buf_bytes), rows evaluated from the run-time scalars (BgRowExpr).  Layouts:
 *   F32   float32 row-major [rows][width], width = cols.
 *         Rank-1 values: a constant length D is one row of D columns (f32[C] biases,
 *         f32[M] weight scales; the host layout of base.h); a length N or G is N (G) rows of
 *         one column (f32[N] activation scales; the same bytes).
 *   B1    bits, canonical host layout of base.h: [rows][width] uint32, width = ceil(cols/32),
 *         bit c%32 of word c/32 is feature c (1 = +1), padding bits 0.  Kernels that
 *         write B1 leave padding bits zero.
 *   B1T   a b1 PARAM W[K,M] used as the weight of a bmm.BB* (both popcount operands
 *         k-contiguous), stored transposed: [rows = M][width = ceil(K/32)] uint32,
 *         bit k%32 of word o*width + k/32 = W[k,o]; cols = K; padding bits 0; then the
 *         rows' popcounts, int32 [rows] (row o's set bits: the wgmma product's w counts,
 *         templates/bmm_bb_wgs.cuh bmm_bb_wgs_launch), so rows * (width + 1) words in all
 *         (bg_plan_buf_bytes).  Other b1 weights (bmm.FB*, computed b1 values) stay canonical B1.
 *   I64   int64 [rows] (width 1): graph rowptr, graph_ptr.
 *   I32   int32 [rows] (width 1): graph col; [rows][width] for the schedule arrays below.
 * A buffer with 0 rows (N = 0, G = 0, a graph without edges) needs no allocation; the
 * runtime still passes a valid (non-dangling or NULL) pointer; kernels never touch it.
 *
 * Roles (who fills a buffer):
 *   TEMP         written by one launch (the producer), read by later ones.
 *   INPUT        node features, uploaded by the runtime: name = the model-level input name
 *                (the `input NAME` of the model, e.g. "X"); f32 [N, cols].
 *   PARAM        a weight tensor, uploaded by the runtime: name = tensor name, transposed =
 *                stored [M,K] and used as [K,M] (the runtime transposes the stored floats
 *                first); rank/dim = the shape as used.  kind F32: the used floats row-major.
 *                kind B1: bits of the used [K,M] (bit = !signbit(w)), canonical layout.
 *                kind B1T: the same bits transposed as described above.  The same param
 *                may appear in two buffers (B1 and B1T) when used both ways.
 *   PARAM_SCALE  f32[M]: Bi-GCN's per-output-channel scale m_o = fl(sum_k |W[k,o]| (f64) / K)
 *                of the used float weights (bg_param_scale, loaders.h); name/transposed as PARAM.
 *   GRAPH        array `garr` of graph table entry `graph` (BgAdj of loaders.h built with that
 *                entry's self_loops/norm): ROWPTR i64[N+1], COL i32[NNZ(g)], ROWF f32[N],
 *                COLF f32[N], W f32[NNZ(g)].  Only the arrays some kernel reads are listed.
 *                Entries of one pattern (the same self loops) share one ROWPTR and one COL
 *                buffer, whose `graph` is the first of them (the arrays are equal).
 *                The fast binary aggregation (bg_plan_bspmm_fast, templates/bspmm_fast.cuh)
 *                also reads the graph's work schedule, built by the runtime from the row
 *                pointer with bg_plan_schedule (BG_PLAN_BSPMM_CHUNK edges per item at most):
 *                ITEMS i32 [ITEMS1(g)][4]: row 0 = {nitems, nsplit, chunk, 0}, then one
 *                {row, k, nk, slot} per item (slot -1 unless the row is split over nk > 1
 *                items), or a group item {first row, rows, 0, -1} (BG_PLAN_GROUP); and, one pair per launch (never shared: launches of one phase of
 *                the fused kernel may run at once), PARTIAL i32 [SPLITS(g)][C] and DONE i32
 *                [SPLITS(g)], zeroed by the runtime once after allocation (each launch
 *                leaves them zero again; a row group in the wide form has a DONE i32 [N] of
 *                its own, zeroed and left zero the same way, that no launch takes).  The bit aggregation with float factors
 *                (bg_plan_bspmm_bits, templates/spmm_bits.cuh) reads ORDER i32 [N+1][4], the
 *                rows by edges (bg_plan_row_order, built by the runtime at binding);
 *                bspmm_mm (templates/mm_spmm.cuh) and a bspmm of float activations (a warp a
 *                row, templates/spmm.cuh spmm_warp_rows) read SLOTS i32 [SLOTS1(g)][4], their
 *                rows in blocks' slots with the hub rows first (bg_plan_mm_slots, built at binding).
 *   GRAPH_PTR    i64[G+1]: graph g of the batch owns nodes graph_ptr[g]..graph_ptr[g+1]-1.
 *                For an unbatched graph the runtime passes {0, N} and ngraphs = 1.
 * Values that are model outputs are TEMP (or leaf) buffers referenced from `outputs`.
 *
 * ---- Kernel calling convention (every launch, no exceptions) ---------------------------
 *   extern "C" __global__ void bgnn_k<inst>_<op>(long long n, long long ngraphs,
 *                                                 T0 *arg0, T1 *arg1, ...);
 * n = number of nodes N, ngraphs = G (1 when unbatched), then one device pointer per entry
 * of BgPlanLaunch.args in order (arg0 is always the launch's output buffer `out`; the rest
 * are read-only).  Parameter sizes: 8, 8, then 8 per pointer (cuLaunchKernel params array).
 * Launch shape: total threads T = rows(launch) * threads_per_row; block = block_size
 * (x only); grid.x = ceil(T / block_size), which the runtime may clamp to any value >= 1
 * (kernels use grid-stride loops); when T == 0 the runtime skips the launch.  No dynamic
 * shared memory, except a launch with smem > 0 (BgPlanLaunch.smem: the wgmma product, 384
 * threads a block, tiles strided over min(grid, tiles, SMs) blocks; the others return).  threads_per_row and block_size are multiples of 32 for launches whose
 * output is B1 (one warp builds one output word with __ballot_sync), except the tiled FB
 * kernel (bg_plan_bmm_fb_tiled), which needs block_size 256 and grid-strides over tiles of
 * up to 32 rows x 64 outputs (32 when M <= 32), the rows per tile chosen from the grid at run
 * time (threads_per_row = 12 per output tile: about 21 rows a block).
 * Launches run in order on one stream; each reads only buffers written before it.  Prep
 * launches (BgPlanLaunch.prep) run once, in order, after the leaves are uploaded; every
 * inference runs the others.
 *
 * ---- The fused kernel (fuse-model) -------------------------------------------------------
 * When `fused`, the cubin also holds ONE kernel running every launch in order:
 *   extern "C" __global__ void bgnn_model(long long n, long long ngraphs, unsigned *bar,
 *                                         B0 *buf0, B1 *buf1, ...);   // every plan buffer
 * launched cooperatively (cuLaunchCooperativeKernel) with fused_block threads per block and
 * any grid of co-resident blocks >= 1 (the runtime sizes it from the occupancy of the loaded
 * cubin; the features' CSR after the buffers: bg_plan_fused_csr).  Launches are grouped in
 * phases (bg_plan_phases); a grid-wide barrier on the
 * 32-bit counter `bar` (a device word the runtime zeroes once per bound instance; it is
 * left reusable) separates phases.  Buffers of 0 bytes are passed as NULL.  The separate
 * per-launch kernels stay in the cubin: the runtime uses them where cooperative launch is
 * unavailable or the device refuses the grid.
 *
 * ---- The per-graph kernel (batches of small graphs) --------------------------------------
 * When `blocks` (a model with G-shaped values, i.e. a readout, whose every launch runs over
 * N, G or a graph's items: bg_plan_blocks_ok), the cubin also holds
 *   extern "C" __global__ void bgnn_graphs(long long n, long long ngraphs, unsigned *bar,
 *                                          B0 *buf0, B1 *buf1, ...);  // as the fused kernel
 * launched with grid (1, Y, 1), 1 <= Y <= 65535, and blocks_block threads: block y runs the
 * whole model (every non-prep launch in order, __syncthreads between phases; bar unused)
 * for graphs y, y + Y, ... one after the other, over that graph's rows only (node rows
 * graph_ptr[g] .. graph_ptr[g+1]-1, graph row g).  Valid only for a block-diagonal batch:
 * no edge between two graphs (the runtime checks before it uses the kernel).  The fast
 * aggregation runs as the plain one there (same bits); other kernels as in the plan.
 * Graph stage (bg_plan_graph_stage): when every aggregation reads one adjacency's plain CSR,
 * the kernel copies a graph of at most BG_PLAN_GSTAGE_ROWS nodes and BG_PLAN_GSTAGE_EDGES
 * edges into shared memory before its first phase (row offsets from 0, node ids from 0) and
 * the aggregations read it there; a larger graph reads the batch's CSR as before.  For such a
 * graph the b1 results the kernel's aggregations read (bg_plan_graph_staged_buf) are held in
 * shared memory too: they are not in memory after the run.  For a staged graph the kernel
 * also runs each fast aggregation of the staged adjacency and the bit product of its rows
 * after it (bmm.BB*) as a warp-rows pair of its own (codegen/cg_blocks.c), one phase: the
 * aggregation's value is then not in memory either, unless something else reads it
 * (bg_plan_buf_kept_in).  The plan's row groups do not hold such pairs.
 *
 * ---- Row groups (small graphs) ------------------------------------------------------------
 * A row group is a run of consecutive launches first .. first + count - 1 (at least two of them
 * not prep; a prep launch inside runs at binding as anywhere) that are row-local
 * (bg_plan_rowgroup_launch_ok): rows N (or, in a group of graph rows, G), no aggregation or
 * readout, every row-indexed argument read only at the launch's own output row.  Its first launch may instead be a gather
 * (bg_plan_rowgroup_lead_ok: a bspmm, run as its plain template over the tile's rows): it
 * reads its activation at any row, all written by earlier kernels, since no launch of the
 * group writes a buffer the gather reads (bg_plan_rowgroup_ok).  A group of graph rows (rows
 * G: a readout, then the graph-level launches after it, the classifier) tiles the batch's
 * graphs the same way, its kernel given n = ngraphs.  A launch with a sparse variant (a product, bin,
 * bin.center, rowmean or standardize of the input features, csr >= 0: all of the group's read
 * buffer csr) runs that variant over the features' CSR, the kernel's last parameter.  The cubin then also
 * holds
 *   extern "C" __global__ void bgnn_rows<first>(long long n, long long tile, unsigned *bar,
 *                                               B0 *buf0, B1 *buf1, ...,   // every buffer
 *                                               const unsigned *csr);      // only when csr >= 0
 * launched with grid (1, Y, 1), Y = min(ceil(n / tile), 65535), and `block` threads: block y
 * takes the tiles of rows [t tile, min(n, (t + 1) tile)) for t = y, y + Y, ... and runs the
 * group's launches on each in order, __syncthreads between them (bar unused), with the
 * per-graph kernel's template calls (a launch's rows are the tile's, every row-indexed
 * argument starts at the tile's first row).  One launch in place of `count`: on a small graph
 * each launch costs a few microseconds however little it computes.  tile is the runtime's
 * choice (rt.h): node rows a multiple of 8 from 8 to BG_PLAN_ROWGROUP_TILE_MAX, graph rows
 * block / the widest graph-level row (at least 1); the runtime runs the
 * group kernel in the launches and CUDA-graph modes on graphs of at most
 * BG_PLAN_ROWGROUP_MAX_NODES nodes (BGNN_ROW_GROUPS=on / off overrides), a group with csr >= 0
 * only where it runs every sparse variant of the group (sparse features): with dense features
 * (or features only on the device) such a group's launches run one by one (a dense twin of the
 * group's kernel would keep them together; none of the examples has such a group today).
 * A group with `warp` set (no csr; the code generator sets it where templates/warp_rows.cuh
 * has every member, plan_build.c) runs in the warp-rows form: the block's warps take the
 * tile's rows (node rows, or graphs) one at a time, and a warp runs its row through every
 * launch, the values in registers; a group of graph rows then takes tile = block / 32, a graph
 * a warp (bg_gpu_rowgroup_graph_tile).  Its members' results are then in memory only where
 * bg_plan_buf_kept says so: read by a launch outside the group, by a member other than as its
 * main operand (args[1]; a bspmm's or readout's activation is gathered) or a per-row factor
 * (an f32[N] such as an absmean, which the member takes from the register), or a model
 * output.  The others
 * exist in the separate launches, the fused and the per-graph kernels only.
 * A group with `wide` set (node rows, no csr, not warp) is a wide float
 * aggregation (bg_plan_bspmm_wide, 256 threads a row, blocks of 256) followed by a plain bin
 * and/or a plain absmean of its output in the order lanes(256) (nothing else): its kernel is
 * the aggregation with their rows as its epilogue (templates/spmm_wide_outs.cuh), launched
 * with the aggregation's own grid, (ceil(n * 256 / block), 1, 1), the same parameters as
 * any group's (tile unused).  Buffer `counters` (int32 [N], zeroed once when allocated, left
 * zero by every run) counts the finished slices of each long row.  The aggregation's output
 * is then in memory only where bg_plan_buf_kept says so (as in the warp-rows form), and
 * always at its long rows.  The group's kernel is at its first launch's place in the run, so
 * that launch may run beside the kernel before it (bg_plan_launch_beside_prev). */
#ifndef BG_PLAN_H
#define BG_PLAN_H

#include "loaders.h"

#define BG_MANIFEST_VERSION 15 /* 2: the float orders (fp-strict line, fp= per launch); 3: prep=;
                                 * 4: the blocks line (the per-graph kernel); 5: the schedule
                                 * (grid= fb= per launch, chunk= group= per graph); 6: the
                                 * sparse variants' CSR block ends with the rows' order and
                                 * they run bg_plan_fb_csr_lanes threads a row; 7: the graph
                                 * array order (the bit aggregation's rows by length); 8: the
                                 * row groups; 9: a standardize of the features has a sparse
                                 * variant; 10: a row group may open with a gather (bspmm,
                                 * readout), rows=n|g; 11: warp=0|1 per row group; 12: the
                                 * graph array slots (bspmm_mm's rows in blocks, hubs first),
                                 * rows slots1(g); 13: wide= per row group (the wide form's
                                 * counters), a graph array done of rows n; 14: smem= per
                                 * launch (dynamic shared memory), and a B1T buffer ends
                                 * with its rows' popcounts; 15: fp=slots(S,T,H) on a bit
                                 * aggregation with a float sum (an older reader refuses it) */

/* A row count evaluated at run time. */
typedef enum {
    BG_ROWS_CONST, /* value */
    BG_ROWS_N,     /* n */
    BG_ROWS_N1,    /* n + 1 */
    BG_ROWS_G,     /* ngraphs */
    BG_ROWS_G1,    /* ngraphs + 1 */
    BG_ROWS_NNZ,   /* number of entries of graph table entry `graph` (its rowptr[n]) */
    BG_ROWS_ITEMS, /* work items of graph `graph`'s schedule (bg_plan_schedule) */
    BG_ROWS_ITEMS1, /* items + 1 (the ITEMS array with its header row) */
    BG_ROWS_SPLITS, /* max(1, rows of graph `graph` split over several items) */
    BG_ROWS_SLOTS1, /* 8 * slots + 1 of graph `graph` (the SLOTS array: bg_plan_mm_slots) */
} BgRowKind;

typedef struct BgRowExpr {
    BgRowKind kind;
    int64_t value; /* CONST: the count (>= 0) */
    int graph;     /* NNZ, ITEMS, ITEMS1, SPLITS, SLOTS1: index into BgPlan.graphs */
} BgRowExpr;

typedef enum { BG_BUF_F32, BG_BUF_B1, BG_BUF_B1T, BG_BUF_I64, BG_BUF_I32 } BgBufKind;
typedef enum {
    BG_ROLE_TEMP,
    BG_ROLE_INPUT,
    BG_ROLE_PARAM,
    BG_ROLE_PARAM_SCALE,
    BG_ROLE_GRAPH,
    BG_ROLE_GRAPH_PTR,
} BgBufRole;
typedef enum {
    BG_GARR_ROWPTR,
    BG_GARR_COL,
    BG_GARR_ROWF,
    BG_GARR_COLF,
    BG_GARR_W,
    BG_GARR_ITEMS,   /* the schedule (see GRAPH above) */
    BG_GARR_PARTIAL, /* split-row partial sums of one launch, zeroed once */
    BG_GARR_DONE,    /* split-row counters of one launch (rows SPLITS), or the per-row counters of
                      * a row group in the wide form (rows N); zeroed once */
    BG_GARR_ORDER,   /* the rows by their edges, most first (bg_plan_row_order) */
    BG_GARR_SLOTS,   /* bspmm_mm's rows in blocks' slots, hub rows first (bg_plan_mm_slots) */
} BgGraphArr;
#define BG_GARR_COUNT 10

typedef struct BgPlanBuf {
    BgBufKind kind;
    BgBufRole role;
    BgRowExpr rows;
    int64_t cols;       /* logical columns: floats (F32), bits (B1), K bits (B1T), 1 (I64/I32) */
    int64_t width;      /* elements (float / uint32 word / int) per row in memory */
    const char *name;   /* INPUT, PARAM, PARAM_SCALE: as described above; else NULL */
    bool transposed;    /* PARAM, PARAM_SCALE */
    int rank;           /* every value buffer (also B1T): the IR value's shape as used ... */
    int64_t dim[2];     /* ... dims >= 0 or BG_DIM_N / BG_DIM_G; GRAPH, GRAPH_PTR: rank 0 */
    int graph;          /* GRAPH: index into BgPlan.graphs; else -1 */
    BgGraphArr garr;    /* GRAPH */
    int inst;           /* the IR value it holds (provenance only), or -1 */
} BgPlanBuf;

/* Arguments of one launch: the output, up to 5 graph arrays for an adjacency operand (rowptr,
 * col, rowf, colf and a work list: ORDER of the bit aggregation, SLOTS of bspmm_mm), and the
 * instruction's other operands, at most BG_FUSE_MAX_OPERANDS - 1 after fusion (compiler/bg.h). */
#define BG_PLAN_MAX_ARGS 13

typedef struct BgPlanLaunch {
    const char *kernel;   /* "bgnn_k9_bmm": the extern "C" symbol in the cubin */
    int inst;             /* the IR instruction it computes */
    const char *op;       /* op name, e.g. "bmm": which kernel variants the launch has
                           * (bg_plan_launch_row_csr, bg_plan_launch_wave) */
    BgRowExpr rows;       /* grid rows (see the calling convention above) */
    int threads_per_row;  /* >= 1 */
    int block_size;       /* threads per block, multiple of 32, <= 1024 */
    int nargs;            /* 1..BG_PLAN_MAX_ARGS */
    int args[BG_PLAN_MAX_ARGS]; /* buffer indices; args[0] = the output buffer */
    BgFpOrder fp;         /* the recorded order of its float reduction (docs/semantics.md,
                           * section 2; base.h); kind NONE when it does none */
    bool prep;            /* computed from parameters alone (a threshold table, a folded
                           * batchnorm): run once when the parameters are bound, never per
                           * inference; it reads only PARAM / PARAM_SCALE buffers and the
                           * outputs of earlier prep launches, and its rows are a constant */
    const char *alt;      /* a second kernel for this launch, or NULL: the same arguments and
                           * bit for bit the same result, run with alt_tpr threads per row; the
                           * runtime takes it when the input features it reads (args[1], an
                           * INPUT buffer) are dense: more than BG_PLAN_ROWS_MAX_DENSITY of them
                           * nonzero, or not on the host to count (a bmm of the features:
                           * templates/bmm_fb_rows.cuh, alternative bmm_fb_tiled.cuh).  The
                           * fused kernel runs the first, or the sparse variant over the CSR
                           * the runtime passes it (bg_plan_fused_csr; AUTO mode times it
                           * against the CUDA graph, which honours the choice).  A launch with alt also has
                           * a sparse variant, kernel BG_PLAN_SPARSE_SUFFIX: the first kernel's
                           * result over the features as CSR (templates/bmm_fb_csr.cuh), with
                           * its threads per row; the runtime builds the CSR when it uploads
                           * features with at most BG_PLAN_ROWS_MAX_DENSITY nonzero and passes
                           * it as args[1] */
    int alt_tpr;          /* alt's threads per row (0 without alt) */
    int grid_per_sm;      /* the schedule (docs/tuning.md): at most this many blocks per SM of
                           * the device (the kernels grid-stride over the rest); 0 = no cap */
    int fb;               /* BgPlanFb: the kernel of a launch with alt, chosen by the schedule;
                           * AUTO = by the features' density as described above */
    int smem;             /* dynamic shared memory a block, bytes (0: none; at most
                           * BG_PLAN_SMEM_MAX): the runtime raises the kernel's limit when it
                           * loads the cubin and launches with it.  Only the wgmma product has
                           * it (bg_plan_bmm_wgs) */
} BgPlanLaunch;

/* The most dynamic shared memory a launch may ask for: sm_90's 227 KB a block. */
#define BG_PLAN_SMEM_MAX 232448

/* Which kernel of a launch with alt runs (BgPlanLaunch.fb): the first (the row kernel), alt
 * (the tiled one) or the sparse variant over the features' CSR. */
typedef enum { BG_PLAN_FB_AUTO, BG_PLAN_FB_ROWS, BG_PLAN_FB_TILED, BG_PLAN_FB_SPARSE } BgPlanFb;

/* Above this fraction of nonzero input features the tiled product (a launch's alt) is faster
 * than the row kernel that skips zeros: on the H100, Reddit-sized dense features (602 a row,
 * 128 outputs) take 4.9 ms in the row kernel and 2.4 ms tiled, Cora's 1.3% 19 us and 48 us;
 * the row kernel's time grows with the nonzeros, the tiled one's does not. */
#define BG_PLAN_ROWS_MAX_DENSITY 0.4
/* The name suffix of a launch's sparse variant (BgPlanLaunch.alt). */
#define BG_PLAN_SPARSE_SUFFIX "_sparse"
/* The name suffix of a launch's one-wave variant: the launch's kernel and arguments again,
 * compiled for fewer resident blocks an SM, so with more registers a thread (the same code:
 * the same bits).  The runtime runs it instead of the launch's kernel when the launch's grid
 * fits one wave of it on the device (its occupancy times the SMs, runtime/module.c); a larger
 * grid keeps the kernel that holds more blocks an SM.  Launches with one: bg_plan_launch_wave
 * (the code generator's resource choice: cg_cuda.c kernel_min_blocks).  A cubin without it
 * runs the kernel as before. */
#define BG_PLAN_WAVE_SUFFIX "_wave"
/* A launch without alt may have a sparse variant too (the cubin has kernel
 * BG_PLAN_SPARSE_SUFFIX, bg_plan_launch_row_csr): a bin, a bin.center or a rowmean of the
 * input features (args[1]) over their CSR, a warp a row (templates/bin_ops.cuh bin_csr,
 * rowwise.cuh bin_center_csr and rowmean_csr), and in the order lanes(32) on rows of 2 to
 * BG_PLAN_ROW_CSR_REGS_MAX columns a standardize of them (rowwise.cuh standardize_csr: the
 * lanes' registers of the dense row rebuilt from the CSR, through shared memory in this
 * kernel).  An absmean of standardized features has none: measured slower than reading the
 * dense row (docs/performance.md).  The runtime runs it when at most
 * BG_PLAN_ROW_CSR_MAX_DENSITY of the features are nonzero (or BGNN_FEATURES_KERNEL=sparse): a
 * warp takes 32 of its row's entries a step where the dense kernel takes 32 columns, so the
 * bound is well below where the two cost the same (a bound from that, not a measurement). */
#define BG_PLAN_SPARSE_ROW_TPR 32
#define BG_PLAN_ROW_CSR_MAX_DENSITY 0.1
#define BG_PLAN_ROW_CSR_MAX_COLS 4096
#define BG_PLAN_ROW_CSR_REGS_MAX 2048 /* templates/rowwise.cuh LANES_REGS_MAX */

typedef struct BgPlanOutput {
    const char *name;     /* model output name */
    int buf;              /* the buffer holding it (F32 or B1, canonical layout) */
    BgDType type;         /* BG_DT_F32 or BG_DT_B1 */
    int rank;
    int64_t dim[2];       /* dims >= 0 or BG_DIM_N / BG_DIM_G */
} BgPlanOutput;

/* One entry per GRAPH instruction: the runtime builds bg_adj_build(graph, self_loops, norm). */
typedef struct BgPlanGraph {
    bool self_loops;
    BgNorm norm;
    int inst;
    int chunk;            /* its work schedule (bg_plan_schedule, the fast aggregation's
                           * tunable items, docs/tuning.md): edges per item, 32 ..
                           * BG_PLAN_BSPMM_CHUNK */
    int group;            /* group items of small rows: 0 = on graphs of at least the runtime's
                           * row threshold (BG_PLAN_GROUP_MIN_ROWS), 1 = always, -1 = never */
} BgPlanGraph;
/* The group_min_rows argument of bg_plan_schedule for graph g, given the runtime's threshold
 * for group = 0. */
int64_t bg_plan_graph_group_min_rows(const BgPlanGraph *g, int64_t runtime_min_rows);

/* A row group (see above). */
typedef struct BgPlanRowGroup {
    int first, count;     /* its launches */
    BgRowKind rows;       /* BG_ROWS_N: tiles of node rows; BG_ROWS_G: tiles of graph rows */
    const char *kernel;   /* "bgnn_rows<first>" */
    int block;            /* threads per block */
    int csr;              /* the INPUT buffer whose CSR its sparse variants read, or -1 */
    bool warp;            /* the warp-rows form (see above): a warp a row, values in registers */
    bool wide;            /* the wide form (see above): the aggregation with its rows' bin and absmean */
    int counters;         /* wide: its per-row counters (a GRAPH DONE buffer of N rows) */
} BgPlanRowGroup;
/* Largest tile (rows a block takes at once) of a row group's kernel. */
#define BG_PLAN_ROWGROUP_TILE_MAX 64
/* Largest graph (nodes) on which the runtime runs a row group's kernel by default: past it
 * the launches' own kernels (tiled products, tensor cores; plan.h's per-graph template calls
 * are the plain ones) matter more than the launches saved. */
#define BG_PLAN_ROWGROUP_MAX_NODES 65536
/* Largest graph of a batch (nodes) on which the runtime runs a group of graph rows by default:
 * a block takes a few graphs, and its classifier waits on its longest graph's readout, where
 * the readout's own kernel gives each (graph, column) a thread.  H100, batches of 1024: GCN
 * bin on PROTEINS (a graph of 620 nodes) lost 5 us (88 -> 93 us) with the group; MUTAG,
 * ENZYMES and NCI1 (28, 126 and 111 nodes at most) gained 0.5-1.3 us.  In the warp-rows form
 * (a graph a warp) PROTEINS lost too: GIN bin 119.4 -> 123.2 us, GCN bin 89.9 -> 93.8. */
#define BG_PLAN_ROWGROUP_GRAPH_MAX_NODES 256

typedef struct BgPlan {
    const char *model;    /* model name */
    const char *arch;     /* "sm_90" or NULL (set by the code generator / manifest) */
    const char *version;  /* bgnn version that made it (BG_VERSION_STRING) */
    BgPlanBuf *bufs;
    int nbufs;
    BgPlanLaunch *launches;
    int nlaunches;
    BgPlanOutput *outputs;
    int noutputs;
    BgPlanGraph *graphs;
    int ngraphs;
    bool uses_graph_ptr;  /* some launch reads GRAPH_PTR (the model has G-shaped values) */
    bool fused;           /* the cubin has the one-kernel form (see above) */
    const char *fused_kernel; /* "bgnn_model" when fused, else NULL */
    int fused_block;      /* threads per block of the fused kernel */
    bool blocks;          /* the cubin has the per-graph kernel (see above) */
    const char *blocks_kernel; /* "bgnn_graphs" when blocks, else NULL */
    int blocks_block;     /* its threads per block */
    bool fp_strict;       /* compiled with --fp-strict: every float reduction seq, no fma */
    BgPlanRowGroup *rowgroups; /* the row groups (see above), by first launch */
    int nrowgroups;
} BgPlan;

/* Has any launch of the plan dynamic shared memory (smem: the wgmma product)?  Such a plan has
 * no fused kernel, no per-graph kernel, and the launch joins no row group. */
bool bg_plan_has_smem(const BgPlan *p);
/* Can the plan have the per-graph kernel (see above)?  It reads GRAPH_PTR and every non-prep
 * launch has rows N, G or ITEMS (the fast aggregation's, run per graph as plain rows), and
 * none has dynamic shared memory (smem). */
bool bg_plan_blocks_ok(const BgPlan *p);
/* Largest graph (nodes) for which the runtime's auto choice takes the per-graph kernel; a
 * batch with a larger member runs the separate launches (BGNN_BATCH_KERNEL forces either). */
#define BG_PLAN_BLOCKS_MAX_NODES 1024
/* Threads of the per-graph kernel's block: a phase over a small graph (MUTAG's 18 nodes x 64
 * features) is then one or two rounds of the templates' loops, not five; the kernel's time is
 * that of one block's chain of phases. */
#define BG_PLAN_BLOCKS_BLOCK 1024

/* May launch l run in a row group of rows `kind` (BG_ROWS_N or BG_ROWS_G; see above)?  Not
 * prep, no dynamic shared memory (smem), rows kind, not bspmm, bspmm_mm or readout, every argument a non-graph buffer of rows
 * kind or a constant count, and, with an alternative kernel, a sparse variant
 * (bg_plan_sparse_tpr; rows N only).  The plan builder also requires the IR op to read its
 * row-indexed operands at its own row only; the manifest reader checks this much. */
bool bg_plan_rowgroup_launch_ok(const BgPlan *p, const BgPlanLaunch *l, BgRowKind kind);
/* May launch l open a row group of rows `kind` as its gather (see above)?  Not prep, no
 * alternative kernel, an output of rows kind; rows N: op bspmm with rows N (or its schedule's
 * work items: the group runs the plain template over the tile's rows, bit for bit the same
 * sums); rows G: op readout (over the tile's graphs, their nodes at any rows). */
bool bg_plan_rowgroup_lead_ok(const BgPlan *p, const BgPlanLaunch *l, BgRowKind kind);
/* Do the launches first .. first + count - 1 make a valid row group of rows `kind`: at least
 * two not prep, the first of them bg_plan_rowgroup_lead_ok or bg_plan_rowgroup_launch_ok, the
 * others bg_plan_rowgroup_launch_ok, and no launch after a gather writing a buffer it reads?
 * On failure *bad is the offending launch, or -1 when there are fewer than two. */
bool bg_plan_rowgroup_ok(const BgPlan *p, int first, int count, BgRowKind kind, int *bad);
/* Does row group g (its first, count, rows, csr, warp, block and counters set; wide or not) fit the wide
 * form (see above): a wide float aggregation of 256 threads a row in blocks of 256, then at
 * most one bin and one absmean (lanes(256)) of its output, nothing else, and `counters` a DONE graph array
 * of N rows of the aggregation's graph?  The IR-level conditions (a plain bin, an absmean
 * without prologue) are the code generator's (plan_build.c). */
bool bg_plan_rowgroup_wide_ok(const BgPlan *p, const BgPlanRowGroup *g);
/* The launches a row group's kernel runs: its launches that are not prep. */
int bg_plan_rowgroup_members(const BgPlan *p, const BgPlanRowGroup *g);
/* The per-graph kernel's graph stage (see "The per-graph kernel"): the largest graph it
 * stages, and the 32-bit words of shared memory its staged b1 results may take. */
#define BG_PLAN_GSTAGE_ROWS 128
#define BG_PLAN_GSTAGE_EDGES 512
#define BG_PLAN_GSTAGE_WORDS 2048
/* Does the per-graph kernel stage its graph's CSR?  Yes when p has the kernel, no bspmm_mm,
 * and every launch that reads a graph array is a bspmm, all of them over the row offsets and
 * column indices of one adjacency (*rowptr, *col: those buffers). */
bool bg_plan_graph_stage(const BgPlan *p, int *rowptr, int *col);
/* Is buffer b a b1 result the per-graph kernel holds in shared memory for a staged graph: a
 * temporary of N rows, at most 4 words wide, stored (bg_plan_buf_kept), not an output, read by
 * no readout; in buffer order while BG_PLAN_GSTAGE_WORDS allows? */
bool bg_plan_graph_staged_buf(const BgPlan *p, int b);
/* Is buffer b a graph-row value the per-graph kernel holds in shared memory, for every graph
 * (its one row of the graph at hand: a readout and the classifier after it, so that their
 * phases do not each read the last one's row back through L2): a temporary of G rows, f32 or
 * b1, not an output; in buffer order while
 * BG_PLAN_GROW_WORDS (32-bit words, a graph row's values together) allows?  Not in memory
 * after a run of the kernel. */
#define BG_PLAN_GROW_WORDS 1024
bool bg_plan_graph_row_staged(const BgPlan *p, int b);
/* Is buffer b's value in memory after a run in the CUDA-graph mode?  False only for the result
 * of a member of a warp-rows group that nothing reads from memory (see "Row groups"). */
bool bg_plan_buf_kept(const BgPlan *p, int b);
/* The same for a member of warp-rows group g (a plan group, or one the per-graph kernel forms
 * itself: codegen/cg_blocks.c) or the aggregation of group g in the wide form; g NULL: true. */
bool bg_plan_buf_kept_in(const BgPlan *p, const BgPlanRowGroup *g, int b);
/* The row group (index into rowgroups) that may hold buffer b in registers only: a warp-rows
 * group one of whose members (not prep) writes b, or a group in the wide form whose
 * aggregation does; or -1. */
int bg_plan_warp_group_of(const BgPlan *p, int b);
/* Is buffer b a per-row value (f32[N], rank 1: an absmean), which a warp-rows group member
 * reads at its own row from the register of the member that computed it (a RowVal)? */
bool bg_plan_row_value(const BgPlan *p, int b);

/* The fused kernel's features CSR: the INPUT buffer that the first non-prep product with an
 * alternative and a sparse variant (BgPlanLaunch.alt, bg_plan_sparse_tpr > 0) reads as args[1],
 * or -1.  When it is one, the fused kernel takes one more parameter after the buffers, `const
 * unsigned *csr`: that buffer's CSR block (bg_features_csr) or NULL.  Not NULL, every such
 * product reading that buffer runs its sparse variant over it in the fused kernel, as the
 * separate launches do (templates/bmm_fb_csr.cuh: no shared memory, which the fused kernel's
 * phases share; the other sparse variants, bin_csr's table among them, would not fit); NULL, its
 * first kernel.  The runtime passes the CSR where the separate launches run the variant. */
int bg_plan_fused_csr(const BgPlan *p);
/* Does launch l run its sparse variant over that CSR of buffer b in the fused kernel: not prep,
 * a product with alt and a sparse variant, reading b as args[1]?  (The code generator's and
 * the runtime's one test.) */
bool bg_plan_fused_csr_launch(const BgPlan *p, const BgPlanLaunch *l, int b);
/* Largest plan the fused kernel takes (its parameters: 24 + 8 per buffer bytes <= 4096). */
#define BG_PLAN_FUSED_MAX_BUFS 500

/* Sizes of one bound graph that row counts refer to. */
typedef struct BgPlanGraphSize {
    int64_t nnz;    /* entries (rowptr[n]) */
    int64_t nitems; /* schedule items (bg_plan_schedule) */
    int64_t nsplit; /* rows split over several items */
    int64_t nslots; /* bspmm_mm's block slots (bg_plan_mm_slots) */
} BgPlanGraphSize;

/* Longest run of edges one work item of the fast aggregation takes (its counters hold
 * counts < 4096: templates/bspmm_fast.cuh BSPMM_PLANES). */
#define BG_PLAN_BSPMM_CHUNK 2048
/* Group items (bspmm_fast.cuh): on graphs of at least BG_PLAN_GROUP_MIN_ROWS rows, an aligned
 * block of BG_PLAN_GROUP rows that all have at most BG_PLAN_GROUP_SMALL edges is one item whose
 * rows the warp's slots take side by side.  Measured (docs/performance.md, H200): PubMed's
 * bspmm.BBB 18.0 -> 11.1 us at C = 128, the degree-ordered Reddit-sized graph 666 -> 604 us;
 * Cora (2,708 rows) 8.0 -> 8.9 us, hence the size threshold (about 64 rows per SM). */
#define BG_PLAN_GROUP 8
#define BG_PLAN_GROUP_SMALL 64
#define BG_PLAN_GROUP_MIN_ROWS 8192

/* rows(e) for given scalars; gs[g] = sizes of graph g (may be NULL when no graph rows). */
int64_t bg_plan_rows(BgRowExpr e, int64_t n, int64_t ngraphs, const BgPlanGraphSize *gs);
/* The work schedule of a CSR row pointer (n rows): a row of d edges is max(1, ceil(d /
 * chunk)) items, or, when 0 < group_min_rows <= n, shares one group item {first row, rows,
 * 0, -1} with its aligned block (BG_PLAN_GROUP above; the runtime passes
 * BG_PLAN_GROUP_MIN_ROWS unless BGNN_SCHED_GROUP_MIN_ROWS says otherwise).  Returns the item count and sets *nsplit; with items != NULL also writes
 * the ITEMS array (4 * (count + 1) int32: header row, then the items; see GRAPH above).
 * -1 when a count does not fit the int32 fields. */
int64_t bg_plan_schedule(const int64_t *rowptr, int64_t n, int chunk, int64_t group_min_rows, int32_t *items,
                         int64_t *nsplit);
/* The bit aggregation's work list (templates/spmm_bits.cuh), the graph array ORDER: int32
 * [n + 1][4].  Entry 0 is {hubs, long rows, slot hubs, 0}; entry 1 + k is the k-th row by edges,
 * most first (ties by index): {row, edges, first edge (low 32 bits), first edge (high 32 bits)}.
 * The `hubs` rows of at least split_min edges come first: in the order seq the kernel gives
 * each of their 32-column words its own warp.  The `slot hubs` are the rows of at least
 * BG_FP_SLOTS_HUB_MIN edges, which in the order slots take 4 warps each (4 S slots,
 * templates/spmm_bits_slots.cuh).  The `long rows` are those of more than BG_PLAN_LONG_ROW_EDGES edges, which
 * the aggregation of wide float rows takes a block a column slice (templates/spmm.cuh
 * bspmm_wide_adjb, codegen.h bg_plan_bspmm_wide).  False (out untouched) when n or a row's edges
 * do not fit int32.  row_order.c, a pure function of the row pointer. */
#define BG_PLAN_LONG_ROW_EDGES 32 /* the code generator passes it to bspmm_wide_adjb as LONG */
/* The aggregation of wide float rows (bg_plan_bspmm_wide, at least BG_PLAN_WIDE_MIN_COLS
 * columns): its threads a row, about 256 (templates/spmm.cuh SwdShape: K = ceil(cols / 256)
 * outputs a thread, T = ceil(cols / K) rounded up to a warp). */
#define BG_PLAN_WIDE_MIN_COLS 256
/* Widest output of a row group in the wide form (templates/spmm_wide_outs.cuh: a thread's
 * outputs in registers, 16 at 4,096 columns, as the aggregation's own kernel). */
#define BG_PLAN_WIDE_OUTS_MAX_COLS 4096
int bg_plan_wide_threads_per_row(int64_t cols);
/* Does a wide float aggregation of `cols` columns fit the row group's wide form (and so its
 * absmean the order lanes(256)): BG_PLAN_WIDE_MIN_COLS .. BG_PLAN_WIDE_OUTS_MAX_COLS columns
 * on 256 threads a row (bg_plan_wide_threads_per_row)? */
bool bg_plan_wide_outs_cols(int64_t cols);
bool bg_plan_row_order(const int64_t *rowptr, int64_t n, int64_t split_min, int32_t *out);
/* The runtime's split_min for a graph of nnz entries: rows of at least max(2048, nnz / 8192)
 * edges.  A row's words split over warps cost each edge's column, factor and loop again per
 * word (about 37 warp instructions an edge at 128 columns, against 21.5 whole; H100), so only
 * rows long enough to outlast the kernel are split: a whole row's warp, one of about 10 sharing
 * a scheduler, takes about 215 cycles an edge, the kernel about nnz / 20 cycles, hence about
 * nnz / 4,000 edges, halved for margin (the Reddit-sized graph: 14,000, 1,000 rows). */
int64_t bg_plan_bits_split_min(int64_t nnz);
/* bspmm_mm's work list (templates/mm_spmm.cuh), the graph array SLOTS: int32 [8 * slots + 1][4].
 * Entry 0 is {slots, hubs, 0, 0}.  Slot s (entries 1 + 8 s .. 8 s + 8) is one 256-thread
 * block's work: a hub slot (s < hubs) holds one row of more than hub_min edges, taken by the
 * whole block (each of its 8 entries {-1 - row, edges, first edge low, high}: every warp learns
 * it from its own entry, so no barrier decides it); another slot holds up to 8 rows, one a warp
 * ({row, edges, first edge low, high}; {0, -1, 0, 0} pads the last slot).  Rows by edges, most
 * first (ties by index): the longest rows start first, a block's warps take rows of about the
 * same length.  hub_min <= 0: no hub slots.  slots = hubs + ceil((n - hubs) / 8).  Returns the
 * slot count (with out == NULL only that), -1 when n or a row's edges do not fit int32.
 * row_order.c, a pure function of the row pointer. */
int64_t bg_plan_mm_slots(const int64_t *rowptr, int64_t n, int64_t hub_min, int32_t *out);
/* The runtime's hub_min for bspmm_mm on a graph of n rows and nnz entries: rows of more than
 * max(BG_PLAN_MM_HUB_MIN, 4 ceil(nnz / n)) edges (more than one warp round of 32 edges, and
 * well above the mean: a block a row is no help where most rows are long) on graphs of at most
 * BG_PLAN_MM_HUB_ROWS rows, whose slots are about one wave of blocks, so that the longest row's
 * rounds are the kernel's time.  On larger graphs only rows long enough to outlast the kernel
 * (bg_plan_bits_split_min, at least 4 ceil(nnz / n)): there the blocks run in several waves, the
 * longest rows start first anyway, and a block a row of a few hundred edges only costs slots.
 * Measured (H200, docs/performance.md "bspmm_mm's rows in blocks' slots"): Cora gcn_bin 16.0
 * -> 14.6 us with its 12 rows of 37 to 169 edges as hub slots; PubMed (19,717 rows) 40.7 us
 * without hub slots, 41.1 with its 28 rows of more than 64 edges, 41.35 with its 268 of more
 * than 32. */
#define BG_PLAN_MM_HUB_MIN 32
#define BG_PLAN_MM_HUB_ROWS 8192
int64_t bg_plan_mm_hub_min(int64_t n, int64_t nnz);
/* The graph whose SLOTS list launch l reads (a bspmm_mm, or a bspmm of float activations), or -1. */
int bg_plan_launch_slots_graph(const BgPlan *p, const BgPlanLaunch *l);
/* Is buffer b written by a prep launch (computed once at binding, like a parameter)? */
bool bg_plan_prep_output(const BgPlan *p, int b);
/* Phase of every launch of the fused kernel: a launch starts a new phase when it reads a
 * buffer written in the current one.  phase[i] for launch i (-1 for a prep launch, which the
 * fused kernel leaves out); returns the phase count. */
int bg_plan_phases(const BgPlan *p, int *phase);
/* Threads per row of the tiled FB kernel's launch (templates/bmm_fb_tiled.cuh) for `cols`
 * outputs: tpt threads per output tile (one tile of 32 outputs when cols <= 32, else tiles of
 * 64).  The plan's tpt is BG_PLAN_FBT_TPT (about 21 rows a 256-thread block);
 * bench/bmm_bench.cu --fbt-tpr tries others. */
#define BG_PLAN_FBT_TPT 12
int64_t bg_plan_fbt_threads_per_row(int64_t cols, int64_t tpt);
/* Lanes a row of the sparse variant of a features product (templates/bmm_fb_csr.cuh) for `cols`
 * outputs: the power of two from 2 to 32 that gives each lane at most 8 outputs where it can
 * (Cora's 64 outputs: 8 lanes, 4 rows a warp). */
int64_t bg_plan_fb_csr_lanes(int64_t cols);
/* The lanes a row of a whole launch of that sparse variant over `rows` rows: twice
 * bg_plan_fb_csr_lanes (at most 32) when rows x those lanes is under BG_PLAN_FB_CSR_WIDE, that
 * is when the launch has fewer than 2,048 warps of rows (about 16 an SM of an H100): there the
 * product is short of warps, not of issue, and more lanes a row give more warps and a shorter
 * chain each (H200, docs/performance.md "The sparse features product, more lanes a row on small
 * graphs": Cora gcn_bin 6% faster at 16 lanes than 8, CiteSeer 6%; PubMed, 19,717 rows, 4%
 * slower).  The kernel (templates/bmm_fb_csr.cuh bmm_fb_csr_rows) and the runtime's grid
 * (bg_plan_sparse_tpr_rows) take the same rule; a row group's tile keeps bg_plan_fb_csr_lanes. */
#define BG_PLAN_FB_CSR_WIDE 65536
int64_t bg_plan_fb_csr_lanes_rows(int64_t cols, int64_t rows);
/* Whether launch l may have a sparse variant without alt (BG_PLAN_SPARSE_ROW_TPR): op bin,
 * bin.center or rowmean, args[1] an F32 INPUT of at most BG_PLAN_ROW_CSR_MAX_COLS columns,
 * args[0] its bits (bin, bin.center) or its f32[N] row means (rowmean); or op standardize of
 * two arguments in the order lanes(32) over 2 to BG_PLAN_ROW_CSR_REGS_MAX columns, args[0]
 * f32 of the features' width.  The
 * runtime looks for the kernel only then (plan.c). */
bool bg_plan_launch_row_csr(const BgPlan *p, const BgPlanLaunch *l);
/* Whether launch l has a one-wave variant (BG_PLAN_WAVE_SUFFIX): a bspmm_mm a warp a row in
 * blocks of BG_PLAN_WAVE_BLOCK (templates/mm_spmm.cuh mm_spmm_warp_rows).  The runtime sizes
 * the variant's wave at that block and runs it only at that block (a schedule retuned in
 * place, api/jit.c bg_gpu_model_resched, may change a launch's). */
#define BG_PLAN_WAVE_BLOCK 256
bool bg_plan_launch_wave(const BgPlanLaunch *l);
/* Buffers a kernel writes besides its output (args[0]): the split-row buffers of the fast
 * aggregation (the code generator declares them neither const nor __restrict__). */
bool bg_plan_scratch_buf(const BgPlanBuf *b);
/* Whether launch i's kernel may run beside the kernel before it in a run (programmatic
 * dependent launch, templates/bgnn_common.cuh pdl_trigger): the launch before it, j (the
 * previous one not run at binding), exists, neither is a member of a row group (so each is
 * always its own kernel, launched one after the other), j is not itself beside the one before
 * it (it has waited for that one when it lets i launch), and no buffer of one is written by
 * the other (the output, or a scratch buffer).  Kernel j then lets its dependents launch
 * once it has waited for its own predecessor, and kernel i waits for j at its end instead of
 * its start: i's reads see what j's predecessors wrote, and the kernel after i still sees
 * every kernel before it finished.  The runtime launches i plainly when j launched nothing. */
bool bg_plan_launch_beside_prev(const BgPlan *p, int i);
/* Whether the kernel after launch i's may run beside it (bg_plan_launch_beside_prev of the
 * next launch not run at binding). */
bool bg_plan_launch_lets_next(const BgPlan *p, int i);
/* The threads per row of launch l's sparse variant (kernel + BG_PLAN_SPARSE_SUFFIX, over the
 * features' CSR in args[1]), 0 when it has none: an alt launch's bg_plan_fb_csr_lanes of its
 * outputs, a bin's, a bin.center's or a rowmean's of the features (bg_plan_launch_row_csr)
 * BG_PLAN_SPARSE_ROW_TPR.  The one
 * place that says which launches have one (the runtime looks them up and launches them by it). */
int bg_plan_sparse_tpr(const BgPlan *p, const BgPlanLaunch *l);
/* The same for a launch of `rows` rows: an alt launch's bg_plan_fb_csr_lanes_rows. */
int bg_plan_sparse_tpr_rows(const BgPlan *p, const BgPlanLaunch *l, int64_t rows);
/* The CSR block of features x [rows][width] (row-major, nnz of them other than +0) that a
 * sparse variant reads in place of the dense features (templates/bmm_fb_csr.cuh, bin_ops.cuh
 * bin_csr), in 32-bit words: range[2 rows] (for p < rows, the first and past-the-last entry of
 * row order[p]), rowptr[rows + 1], order[rows] (the rows by their nonzeros, most first, ties by
 * index), one pad word, then the entries[2 nnz], each a column and its value's bits, a row's
 * columns ascending (the values other than +0: -0 kept, as a bit or a threshold compare tells it
 * from +0, and a NaN kept); 4 rows + 2 + 2 nnz words.  Every part's offset follows from rows alone
 * (templates/bgnn_common.cuh csr_rows): a kernel's first loads wait on no other load.  Returns it malloc'd
 * with its length in 32-bit words in *words, or NULL (*words 0) when the offsets do not fit 32
 * bits, nnz is not the count of nonzeros, or memory runs out.  features_csr.c. */
uint32_t *bg_features_csr(const float *x, int64_t rows, int64_t width, uint64_t nnz, size_t *words);
/* The values of x[0..n) that the CSR block stores: every one other than +0 (-0 and NaN count). */
uint64_t bg_features_csr_nnz(const float *x, size_t n);
/* Threads per row of the tensor-core BB product's launch (templates/bmm_bb_tc.cuh) for `cols`
 * outputs: about one 256-thread block per output tile of its smallest tiles (TcSmallShape up
 * to 128 columns: 32 x 128 from cols > 64, 64 x 64 from cols > 32, else 128 x 16 ceil(cols /
 * 16); TcShape's 128 x 256 from cols > 128).  The kernel uses at most BG_PLAN_TC_GRID_PER_SM
 * blocks an SM (its TC_WAVES; the launch's grid_per_sm, where no schedule sets one). */
#define BG_PLAN_TC_GRID_PER_SM 2

int64_t bg_plan_bmm_tc_threads_per_row(int64_t cols);
/* The wgmma BB product's launch (templates/bmm_bb_wgs.cuh, bg_plan_bmm_wgs): blocks of
 * BG_PLAN_WGS_BLOCK threads (two consumer warpgroups and a producer), at most one an SM
 * (BG_PLAN_WGS_GRID_PER_SM: its shared block is most of an SM's), each striding over tiles of
 * 128 rows x bg_plan_wgs_tile_cols(cols) columns; bg_plan_wgs_threads_per_row gives a block
 * a row and column tile before the clamp (so never fewer blocks than tiles: the kernel uses
 * min(grid, tiles, SMs)); bg_plan_wgs_smem its dynamic shared memory (the template's
 * wgs_smem_bytes<M>(), which the generated code checks by a static_assert). */
#define BG_PLAN_WGS_BLOCK 384
#define BG_PLAN_WGS_GRID_PER_SM 1
#define BG_PLAN_WGS_STAGES 6 /* the template's WGP_NS */
int bg_plan_wgs_tile_cols(int64_t cols);
int64_t bg_plan_wgs_threads_per_row(int64_t cols);
int bg_plan_wgs_smem(int64_t cols);
/* Bytes per element of a buffer kind (4 or 8). */
size_t bg_plan_elem_size(BgBufKind k);
/* Bytes of buffer b at `rows` rows: rows * width * elem_size, and bg_plan_buf_trailer_bytes
 * (a B1T buffer's row popcounts, 4 bytes a row; 0 for other kinds).  0 when rows < 0. */
size_t bg_plan_buf_bytes(const BgPlanBuf *b, int64_t rows);
size_t bg_plan_buf_trailer_bytes(const BgPlanBuf *b, int64_t rows);
/* stats.c: kernels, launches, buffers and the compulsory bytes per launch as a formula in
 * N, E (graph entries) and G, evaluated at the given sizes (bgnnc --stats); malloc'd. */
char *bg_plan_stats(const BgPlan *p, int64_t n, int64_t e, int64_t g);
/* The same as a JSON object (bgnnc --stats --json); malloc'd. */
char *bg_plan_stats_json(const BgPlan *p, int64_t n, int64_t e, int64_t g);
/* Names for text (manifest, debugging): "f32", "b1", "b1t", "i64", "i32"; "temp", "input",
 * "param", "param_scale", "graph", "graph_ptr"; "rowptr", "col", "rowf", "colf", "w". */
const char *bg_plan_kind_name(BgBufKind k);
const char *bg_plan_role_name(BgBufRole r);
const char *bg_plan_garr_name(BgGraphArr g);

/* manifest.c: the plan as versioned line-based text (first line "bgnn-manifest 1").
 * bg_manifest_write: malloc'd NUL-terminated text (everything comes from the plan, so
 * write(read(text)) == text).  bg_manifest_read: parses and validates
 * (hostile input); errors are E_MANIFEST "WHAT: manifest line L: ..."; NULL on error. */
char *bg_manifest_write(const BgPlan *p);
BgPlan *bg_manifest_read(const char *text, size_t len, const char *what, BgArena *a,
                         BgDiagSink *d);


/* A header the generated CUDA #includes (an embedded template), handed to NVRTC with it. */
typedef struct BgCodeHeader {
    const char *name;     /* as #included, e.g. "bgnn_common.cuh" */
    const char *text;
} BgCodeHeader;
/* Parses "sm_90" / "sm_90a" into 90; false when malformed. */
bool bg_arch_parse(const char *arch, int *sm);

#endif /* BG_PLAN_H */
