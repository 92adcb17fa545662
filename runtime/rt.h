/* rt.h - the runtime's internal layer between the top layer (api/: the public API, the JIT)
 * and the GPU infrastructure (gpu.h), running plans (plan/plan.h).  It includes no compiler
 * or reference header: a plan and its leaves arrive as plan/loaders types.  bgnnc and the
 * tests use it directly (through api/driver.h); api.c is a thin, checked wrapper over it.
 *
 *   elf_manifest.c  the manifest bytes inside a cubin (ELF parsing, no GPU needed)
 *   module.c        a device (BgGpu); cubin loading into a BgGpuModel (plan + CUmodule + one
 *                   CUfunction per launch)
 *   bind.c          a bound instance (BgGpuRun): the plan's leaves bound, every plan buffer
 *                   allocated for the bound N / NNZ / G, leaves uploaded, the run's options
 *   exec.c          its launches in plan order (execution modes, kernel variants), outputs
 *                   read back, the timers
 *
 * Ownership as in base.h: every *_free / *_close accepts a zeroed or failed object. */
#ifndef BG_RT_H
#define BG_RT_H

#include "gpu.h"
#include "loaders.h"
#include "plan.h"

/* ===== elf_manifest.c ================================================================ */
/* Finds bgnn_manifest / bgnn_manifest_len (or bgnnc_*) in .symtab and returns a pointer
 * into img and the length.  what names the file in messages.  E_FORMAT: not a 64-bit LE
 * ELF or a corrupt section table; E_MANIFEST: no manifest, or a symbol out of bounds. */
bool bg_elf_find_manifest(const unsigned char *img, size_t len, const char *what,
                          const unsigned char **bytes, size_t *n, BgDiagSink *d);
/* The plan embedded in a cubin: ELF lookup, format version check ("bgnn-manifest 2"),
 * bg_manifest_read, bgnn version check.  Plan in arena a.  No GPU needed. */
BgPlan *bg_cubin_plan(const unsigned char *img, size_t len, const char *what, BgArena *a,
                      BgDiagSink *d);

/* ===== module.c: devices and compiled models ======================================== */
typedef struct BgGpu {
    BgCuda cu;
    BgNvrtc nv;           /* loaded on first JIT (nv.lib != NULL) */
    BgCUdevice dev;
    BgCUcontext ctx;      /* the device's primary context (retained) */
    int ordinal;
    int sm;               /* 90 */
    int nsm;
    char arch[16];        /* "sm_90" */
    char name[128];
} BgGpu;

/* Loads the driver, retains device ordinal's primary context and makes it current.
 * E_NO_DEVICE / E_DRIVER_OLD / E_CUDA as bg_cuda_load; E_NO_DEVICE for a bad ordinal. */
bool bg_gpu_open(BgGpu *g, int ordinal, BgDiagSink *d);
void bg_gpu_close(BgGpu *g);
bool bg_gpu_make_current(BgGpu *g, BgDiagSink *d);
/* The arch of device 0 when a driver and a device are present, else fallback. */
const char *bg_gpu_default_arch(char buf[16], const char *fallback);

typedef struct BgGpuModel {
    BgArena *arena;       /* owns plan */
    BgPlan *plan;
    BgCUmodule mod;
    BgCUfunction *fn;     /* per launch */
    BgCUfunction *alt_fn; /* per launch: its alternative kernel (plan.h BgPlanLaunch.alt), or NULL */
    BgCUfunction *sparse_fn; /* per launch: its sparse variant (plan.h), or NULL (none, or a cubin
                                from before variants existed); args[1] is the features it reads */
    BgCUfunction fused_fn;   /* the one-kernel form (plan->fused), else NULL */
    int fused_grid_max;      /* co-resident blocks of fused_fn on this device (occupancy x
                                SMs); 0 when it cannot be launched cooperatively here */
    BgCUfunction blocks_fn;  /* the per-graph kernel (plan->blocks), else NULL */
    BgCUfunction *rowgroup_fn; /* per row group of the plan (plan.h): its kernel */
    bool pdl_kernels;        /* the cubin's per-launch and row group kernels open with
                                bgnn::pdl_enter (its bgnn_pdl_enter symbol; not in cubins of
                                bgnn before it): exec.c may launch them programmatically */
    BgCUfunction *wave_fn;   /* per launch: its one-wave variant (plan.h BG_PLAN_WAVE_SUFFIX), or NULL */
    int *wave_grid_max;      /* per launch with wave_fn: the blocks of it the device holds at
                                once (occupancy x SMs); exec.c runs it for a grid of at most these */
    int *max_block;          /* per launch: the most threads a block of each of its kernels
                                can have (their registers); a plan's larger block_size (a
                                schedule, docs/tuning.md) runs as this many */
    int *slots_graph;        /* per launch: the graph whose SLOTS work list it reads
                                (bg_plan_launch_slots_graph, found once at load), or -1;
                                NULL in a model not made by bg_gpu_model_load: looked up per launch */
} BgGpuModel;

/* Reads the plan from the cubin (bg_cubin_plan), checks its arch against the device
 * (E_ARCH), loads it and resolves every launch's kernel. */
bool bg_gpu_model_load(BgGpu *g, const unsigned char *cubin, size_t len, const char *what,
                       BgGpuModel *out, BgDiagSink *d);
void bg_gpu_model_free(BgGpu *g, BgGpuModel *m);

/* ===== bind.c, exec.c: bound instances ================================================ */
/* How a bound instance runs its plan (BGNN_EXEC=auto|coop|graph|launches overrides auto):
 *   COOP      the fused kernel, one cooperative launch (plan->fused only);
 *   GRAPH     the per-launch kernels captured once into a CUDA graph, one graph launch;
 *   LAUNCHES  the per-launch kernels, one cuLaunchKernel each.
 * AUTO chooses by measurement: on its first run an instance times AUTO_TRIALS runs of COOP
 * and of GRAPH (CUDA events, median) and keeps the faster for every later run (auto_ms
 * records both); without a fused kernel it is GRAPH.  If the device refuses the cooperative grid (too large,
 * not supported), AUTO falls back to GRAPH for this and every later run of the instance and
 * says why in coop_refused; an explicit COOP reports the refusal as an error instead.
 * BLOCKS (not a BGNN_EXEC value) is the per-graph kernel, which a batch of small graphs runs
 * instead of all of these (use_blocks, chosen at binding; BGNN_BATCH_KERNEL). */
typedef enum { BG_EXEC_AUTO, BG_EXEC_COOP, BG_EXEC_GRAPH, BG_EXEC_LAUNCHES, BG_EXEC_BLOCKS } BgExecMode;
#define BG_AUTO_TRIALS 15
const char *bg_exec_mode_name(BgExecMode m);
/* Parses "auto", "coop", "graph", "launches"; false for anything else. */
bool bg_exec_mode_parse(const char *s, BgExecMode *out);

typedef struct BgGpuRun {
    BgExecMode mode;      /* requested (from BGNN_EXEC at bind time; default AUTO) */
    BgExecMode used;      /* what the last launch used */
    long long coop_grid;  /* blocks of the last cooperative launch */
    long long coop_grid_request; /* BGNN_COOP_GRID (tests): ask for this many blocks */
    long long sched_group_min_rows; /* BGNN_SCHED_GROUP_MIN_ROWS: group small rows of the fast
                                     * aggregation's schedule on graphs this large (0: never;
                                     * default BG_PLAN_GROUP_MIN_ROWS, plan.h) */
    long long mm_hub_min; /* BGNN_MM_HUB_MIN: bspmm_mm's hub rows have more edges than this (0:
                           * no hub slots; default -1: bg_plan_mm_hub_min of each graph) */
    char coop_refused[320]; /* why the device refused the cooperative launch ("" if not) */
    BgExecMode auto_choice; /* AUTO: what the measurement chose (AUTO = not measured yet) */
    double auto_ms[2];    /* AUTO: median ms of COOP and of GRAPH in that measurement */
    BgCUdeviceptr bar;    /* the fused kernel's barrier word */
    BgCUstream cap_stream; /* GRAPH and the per-graph kernel's graph: the capture stream */
    BgCUgraph graph;
    BgCUgraphExec graph_exec;
    BgCUgraph blocks_graph; /* the per-graph kernel's launch, captured the same way (a graph
                             * node starts sooner than a plain launch: about 3.0 against 5.1
                             * us on an H200, docs/performance.md) */
    BgCUgraphExec blocks_graph_exec;
    int blocks_plain;       /* runs of the per-graph kernel left to launch plainly before its
                             * capture: 1 after the input pointer changed (exec_input.c) */
    int nbufs;
    BgCUdeviceptr *ptr;   /* per plan buffer (0 for an empty one) */
    size_t *bytes;
    bool *borrowed;       /* not ours to free (caller's device features) */
    int64_t n, ngraphs;
    int64_t largest_graph; /* the most nodes of one graph of the bound batch (n without one) */
    BgPlanGraphSize *gsz; /* per plan graph: entries and schedule sizes */
    BgCUstream last_stream;
    BgCUevent ev[2];
    int features_kernel;  /* BGNN_FEATURES_KERNEL: 0 auto (by the features' density), 1 rows,
                           * 2 tiled, 3 sparse */
    bool *use_alt;        /* per launch: run its alternative kernel (plan.h BgPlanLaunch.alt: the
                           * bound features are dense, or on the device only); chosen at binding */
    BgCUdeviceptr *csr;   /* per plan buffer: its features as CSR for the sparse variants (plan.h),
                           * built at binding when they are sparse; 0 for none */
    bool *use_sparse;     /* per launch: run its sparse variant over csr[args[1]] */
    int batch_kernel;     /* BGNN_BATCH_KERNEL: 0 auto, 1 layers (the launches), 2 graphs (per-graph kernel) */
    bool use_blocks;      /* every run is one launch of the per-graph kernel (plan.h): a block-
                           * diagonal batch whose largest graph has at most
                           * BG_PLAN_BLOCKS_MAX_NODES nodes where auto measured it faster than
                           * the separate launches (blocks_pending), or batch_kernel 2 */
    char blocks_why[160]; /* why a batched plan with the kernel does not use it ("" if it does) */
    bool blocks_pending;  /* auto: use_blocks is to be measured on the first run (blocks_choose:
                           * the faster of the per-graph kernel and the separate launches) */
    double blocks_ms[2];  /* that measurement: medians of the per-graph kernel, the launches */
    int blocks_threads;   /* BGNN_BLOCKS_THREADS: the per-graph kernel's block (0: by the batch) */
    int blocks_threads_used; /* the block of its last launch */
    int row_groups;       /* BGNN_ROW_GROUPS: 0 auto (on graphs of at most
                           * BG_PLAN_ROWGROUP_MAX_NODES nodes; a group of graph rows on batches
                           * whose graphs have at most BG_PLAN_ROWGROUP_GRAPH_MAX_NODES nodes),
                           * 1 on, 2 off: whether the
                           * launches and graph modes run a row group's kernel (plan.h) in place
                           * of its launches */
    int pdl;              /* BGNN_PDL: 0 auto (on sm_90 and newer with a CUDA 12.3 driver), 1 on,
                           * 2 off: launch each kernel of a run after its first with programmatic
                           * stream serialization (exec.c launch_kernel), where the cubin's
                           * kernels wait for it (BgGpuModel.pdl_kernels) */
    int rowgroup_tile;    /* BGNN_ROWGROUP_TILE: rows (or graphs) a block takes at once (0: by
                           * the graph, bg_gpu_rowgroup_tile, or by the group's widest graph
                           * row, bg_gpu_rowgroup_graph_tile) */
} BgGpuRun;
/* The rows a block of a row group's kernel takes at once on a graph of n nodes and a device
 * of nsm SMs: the smallest multiple of 8 that leaves about 8 tiles an SM, from 8 to
 * BG_PLAN_ROWGROUP_TILE_MAX (Cora's 2,708 rows on 132 SMs: 8, 339 blocks). */
int64_t bg_gpu_rowgroup_tile(int64_t n, int nsm);
/* The graphs a block of a group of graph rows (plan.h) takes at once: one output of the
 * group's widest graph-level row a thread (block / widest, at least 1; GIN's readout of 64
 * columns and 256 threads: 4), so that each phase is one short chain a thread, as in the
 * launches' own kernels; in the warp-rows form a graph a warp (block / 32). */
int64_t bg_gpu_rowgroup_graph_tile(const BgPlan *p, int gi);
/* Kernels one run of the CUDA-graph or launches mode launches: the non-prep launches, a row
 * group's kernel in place of its launches where this instance runs them. */
int bg_gpu_run_kernels(const BgGpuModel *gm, const BgGpuRun *r);
/* Is buffer b's value in memory after the instance's last run (r->used)?  False only for a
 * result bg_plan_buf_kept leaves out whose warp-rows group ran in that form: in the per-graph
 * kernel a group of node rows, in the separate launches a group whose kernel ran (a graph-row
 * group keeps the memory form in the per-graph kernel; the fused kernel writes every value);
 * and, after the per-graph kernel, for a b1 result its graph stage holds in shared memory
 * (bg_plan_graph_staged_buf: written to memory only for graphs too large to stage) and for
 * a graph-row value it holds there (bg_plan_graph_row_staged: never written to memory). */
bool bg_gpu_run_buf_in_memory(const BgGpuModel *gm, const BgGpuRun *r, int b);

/* The plan's leaves as BgLeafSpecs (loaders.h): the GRAPH entries first, in plan order, then
 * one per INPUT / PARAM / PARAM_SCALE buffer with its type as used.  decl (optional; ndecl
 * entries indexed by IR instruction, e.g. from the model the plan came from) gives source
 * locations for notes and npy(...) file names.  spec needs ngraphs + nbufs entries;
 * buf_leaf[b] = the spec of buffer b, or -1.  Returns the number of specs. */
int bg_plan_leaf_specs(const BgPlan *p, const BgLeafSpec *decl, int ndecl, BgLeafSpec *spec,
                       int *buf_leaf);
/* Bound leaves of a plan: adj[g] for plan graph g, val[buf_leaf[b]] for leaf buffer b. */
typedef struct BgBoundLeaves {
    const BgGraph *graph;
    BgAdj *adj;
    BgTensor *val;
    int *buf_leaf;
} BgBoundLeaves;
/* Binds the plan's leaves (graph, features, weights; bg_leaves_bind semantics, the CPU
 * reference's messages), allocates every buffer, uploads the leaves and runs the prep launches
 * (plan.h: values of parameters alone), synchronously.  decl / ndecl as for
 * bg_plan_leaf_specs; features_dev != 0: the INPUT buffer is that caller-owned device array
 * (f32 [N, F] row-major) instead of a copy.  Out of device memory: E_CUDA "out of device
 * memory ...", everything freed, *oom set. */
bool bg_gpu_run_bind_leaves(BgGpu *g, const BgGpuModel *gm, const BgLeafSpec *decl, int ndecl,
                            BgGraph *graph, const BgTensor *features, BgCUdeviceptr features_dev,
                            const char *weights, const BgSafetensors *wmem, BgGpuRun *out,
                            bool *oom, BgDiagSink *d);
/* Points every INPUT buffer of a bound instance whose features are borrowed device memory at
 * dptr (same shape) without binding again; a captured CUDA graph is dropped (recaptured at
 * the next launch).  exec_input.c. */
void bg_gpu_run_set_input(BgGpu *g, const BgPlan *p, BgGpuRun *r, BgCUdeviceptr dptr);
/* The device pointer of the plan's (first) INPUT buffer, 0 when none.  exec_input.c. */
BgCUdeviceptr bg_gpu_run_input_ptr(const BgPlan *p, const BgGpuRun *r);
/* Allocates and uploads with the leaves already bound; sparse_fn (per launch, or NULL): the
 * sparse variants the cubin has (BgGpuModel.sparse_fn), whose launches get the features' CSR. */
bool bg_gpu_run_alloc(BgGpu *g, const BgPlan *p, const BgCUfunction *sparse_fn, const BgBoundLeaves *b,
                      BgCUdeviceptr features_dev, BgGpuRun *out, bool *oom, BgDiagSink *d);
/* Runs the plan's prep launches (values of parameters alone) once, synchronously: the last
 * step of binding (bind.c), launched as exec.c launches the others.  exec.c. */
bool bg_gpu_run_prep(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgDiagSink *d);
/* Enqueues every launch on stream (NULL = the legacy default stream). */
bool bg_gpu_run_launch(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream,
                       BgDiagSink *d);
/* Synchronises the last stream and copies buffer b (F32 or B1) into a host tensor in
 * canonical layout with the shape (rank, dims) given. */
bool bg_gpu_run_read_buf(BgGpu *g, const BgPlan *p, BgGpuRun *r, int b, int rank,
                         const int64_t *dim, BgTensor *out, BgDiagSink *d);
bool bg_gpu_run_read_output(BgGpu *g, const BgPlan *p, BgGpuRun *r, int i, BgTensor *out,
                            BgDiagSink *d);
/* Runs `repeat` times between CUDA events (after one warm-up run); median in ms. */
bool bg_gpu_run_time(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream,
                     int repeat, double *median_ms, BgDiagSink *d);
/* Each separate kernel alone between CUDA events, `repeat` times (bgnnc run --profile);
 * ms[i] = the median of launch i (0 for a launch with nothing to do). */
bool bg_gpu_run_profile(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream, int repeat,
                        double *ms, BgDiagSink *d);
void bg_gpu_run_free(BgGpu *g, BgGpuRun *r);
/* Shape of output i for the bound sizes. */
void bg_plan_output_shape(const BgPlan *p, int i, int64_t n, int64_t ngraphs, int *rank,
                          int64_t dim[2]);

#endif /* BG_RT_H */
