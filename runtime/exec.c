/* exec.c - running a bound plan on the device (runtime/rt.h): its launches follow the plan's
 * calling convention exactly (plan.h), in one of the execution modes (the fused cooperative
 * kernel, a CUDA graph of the separate kernels, the kernels one by one, the per-graph kernel;
 * auto times them on the first run), with each launch's kernel variant (alternative, sparse,
 * one-wave) and programmatic dependent launch; then the outputs read back, and the timers
 * (bg_gpu_run_time, bg_gpu_run_profile).  Binding and allocation: bind.c. */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- launches ---------------------------------------------------------------------------- */
static bool launch_one(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, int i, BgCUstream stream, bool pdl,
                       bool *ran, BgDiagSink *d);
static void **model_params(const BgPlan *p, BgGpuRun *r, long long *nn, long long *ng, BgCUdeviceptr *bar);

int64_t bg_gpu_rowgroup_tile(int64_t n, int nsm) {
    const int64_t per = 8 * (int64_t)(nsm > 0 ? nsm : 1); /* about 8 tiles an SM */
    int64_t tile = 8 * ((n + 8 * per - 1) / (8 * per));
    return tile < 8 ? 8 : tile > BG_PLAN_ROWGROUP_TILE_MAX ? BG_PLAN_ROWGROUP_TILE_MAX : tile;
}

int64_t bg_gpu_rowgroup_graph_tile(const BgPlan *p, int gi) {
    const BgPlanRowGroup *g = &p->rowgroups[gi];
    if (g->warp) return g->block / 32 > 0 ? g->block / 32 : 1; /* a graph a warp */
    int64_t wmax = 1;
    for (int i = g->first; i < g->first + g->count; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (!l->prep && l->nargs > 0 && p->bufs[l->args[0]].cols > wmax) wmax = p->bufs[l->args[0]].cols;
    }
    const int64_t tile = g->block / wmax;
    return tile < 1 ? 1 : tile;
}

/* Does this instance launch with programmatic stream serialization (rt.h pdl)?  Only kernels
 * that wait for the kernel before them (gm->pdl_kernels) may be launched so. */
static bool pdl_on(const BgGpu *g, const BgGpuModel *gm, const BgGpuRun *r) {
    if (!gm->pdl_kernels || r->pdl == 2) return false;
    return r->pdl == 1 || (g->sm >= 90 && g->cu.driver_version >= BG_CUDA_PDL_DRIVER);
}

/* One launch of fn, grid (gx, gy), smem bytes of dynamic shared memory, on stream.  pdl: with programmatic stream serialization (a
 * kernel of a run after its first, where pdl_on), which may then begin while the one before it
 * ends (its bgnn::pdl_enter waits for that one to finish: templates/bgnn_common.cuh); in a
 * captured graph this is a programmatic edge. */
static BgCUresult launch_kernel(BgGpu *g, BgCUfunction fn, unsigned gx, unsigned gy, unsigned block, unsigned smem,
                                BgCUstream stream, void **pv, bool pdl) {
    if (!pdl) return g->cu.cuLaunchKernel(fn, gx, gy, 1, block, 1, 1, smem, stream, pv, NULL);
    BgCUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = BG_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at.value.programmatic_stream_serialization_allowed = 1;
    BgCUlaunchConfig c = {gx, gy, 1, block, 1, 1, smem, stream, &at, 1};
    return g->cu.cuLaunchKernelEx(&c, fn, pv, NULL);
}

/* A launch's grid of `grid` blocks clamped: at most 2^30, and at most its grid= blocks an SM
 * (its kernel grid-strides over the rest). */
static int64_t grid_clamp(const BgGpu *g, const BgPlanLaunch *L, int64_t grid) {
    if (grid > (1 << 30)) grid = 1 << 30;
    const int64_t sms = g->nsm > 0 ? g->nsm : 1; /* (a device that did not say) */
    if (L->grid_per_sm > 0 && grid > (int64_t)L->grid_per_sm * sms) grid = (int64_t)L->grid_per_sm * sms;
    return grid;
}

/* Row group gi's kernel (plan.h) in place of its launches: grid (1, Y), tiles of node rows (n
 * = the graph's nodes) or of graph rows (n = the batch's graphs); in the wide form grid (X, 1),
 * its aggregation's (a block a row, at most its grid= blocks an SM). */
static bool launch_rowgroup(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, int gi, BgCUstream stream, bool pdl,
                            BgDiagSink *d) {
    const BgPlan *p = gm->plan;
    const BgPlanRowGroup *rg = &p->rowgroups[gi];
    const long long rows = rg->rows == BG_ROWS_G ? r->ngraphs : r->n; /* node or graph rows */
    if (rows <= 0) return true;
    long long nn = rows, tile = r->rowgroup_tile > 0         ? r->rowgroup_tile
                                : rg->rows == BG_ROWS_G ? bg_gpu_rowgroup_graph_tile(p, gi)
                                                        : bg_gpu_rowgroup_tile(rows, g->nsm);
    BgCUdeviceptr bar = r->bar;
    long long tiles = (nn + tile - 1) / tile;
    unsigned gx = 1, gy = tiles < 65535 ? (unsigned)tiles : 65535u;
    if (rg->wide) { /* the aggregation's own grid: its threads a row, any grid is correct */
        const BgPlanLaunch *a = &p->launches[rg->first];
        gx = (unsigned)grid_clamp(g, a, (rows * a->threads_per_row + rg->block - 1) / rg->block);
        gy = 1;
    }
    void **pv = model_params(p, r, &nn, &tile, &bar);
    if (rg->csr >= 0) pv[3 + p->nbufs] = &r->csr[rg->csr]; /* the features' CSR, last */
    BgCUresult res = launch_kernel(g, gm->rowgroup_fn[gi], gx, gy, (unsigned)rg->block, 0, stream, pv, pdl);
    free(pv);
    if (res == BG_CUDA_SUCCESS) return true;
    char what[160];
    snprintf(what, sizeof what, "launching %s (%u x %u blocks of %d, tiles of %lld rows)", rg->kernel, gx, gy, rg->block,
             tile);
    return bg_cuda_check(&g->cu, res, what, d);
}

/* Does this instance run row group gi's kernel (rt.h row_groups)?  One with sparse variants
 * only where the instance runs every one of them (the features' CSR is on the device). */
static bool use_rowgroup(const BgGpuModel *gm, const BgGpuRun *r, int gi) {
    const BgPlan *p = gm->plan;
    if (gi >= p->nrowgroups || !gm->rowgroup_fn || r->row_groups == 2) return false;
    if (r->row_groups != 1 && r->n > BG_PLAN_ROWGROUP_MAX_NODES) return false;
    const BgPlanRowGroup *g = &p->rowgroups[gi];
    if (r->row_groups != 1 && g->rows == BG_ROWS_G && r->largest_graph > BG_PLAN_ROWGROUP_GRAPH_MAX_NODES) return false;
    if (g->csr < 0) return true;
    if (!r->csr || !r->csr[g->csr]) return false;
    for (int i = g->first; i < g->first + g->count; i++)
        if (!p->launches[i].prep && bg_plan_sparse_tpr(p, &p->launches[i]) > 0 &&
            (!r->use_sparse || !r->use_sparse[i] || (r->use_alt && r->use_alt[i])))
            return false;
    return true;
}

bool bg_gpu_run_buf_in_memory(const BgGpuModel *gm, const BgGpuRun *r, int b) {
    const BgPlan *p = gm->plan;
    const int gi = bg_plan_warp_group_of(p, b);
    if (r->used == BG_EXEC_BLOCKS && (bg_plan_graph_staged_buf(p, b) || bg_plan_graph_row_staged(p, b)))
        return false; /* shared memory: staged graphs, graph rows */
    if (bg_plan_buf_kept(p, b) || gi < 0 || r->used == BG_EXEC_COOP) return true;
    if (r->used == BG_EXEC_BLOCKS) /* the per-graph kernel holds a node-row warp group's values in registers */
        return p->rowgroups[gi].wide || p->rowgroups[gi].rows != BG_ROWS_N;
    return !use_rowgroup(gm, r, gi);
}

int bg_gpu_run_kernels(const BgGpuModel *gm, const BgGpuRun *r) {
    const BgPlan *p = gm->plan;
    int k = 0;
    for (int i = 0; i < p->nlaunches; i++) k += !p->launches[i].prep;
    for (int i = 0; i < p->nrowgroups; i++)
        if (use_rowgroup(gm, r, i)) k -= bg_plan_rowgroup_members(p, &p->rowgroups[i]) - 1;
    return k;
}

/* Every plan launch of an inference (prep launches ran at binding), one kernel each, or a row
 * group's kernel for its launches. */
static bool launch_each(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream,
                        BgDiagSink *d) {
    const BgPlan *p = gm->plan;
    const bool pdl = pdl_on(g, gm, r);
    bool after = false; /* a kernel of this run went before (launch_kernel's pdl) */
    bool prev_ran = true; /* the launch before launched a kernel (launch_one skips empty ones) */
    for (int i = 0, gi = 0; i < p->nlaunches; i++) {
        while (gi < p->nrowgroups && p->rowgroups[gi].first < i) gi++;
        /* a kernel that waits for the one before it only at its end (plan.h
         * bg_plan_launch_beside_prev; the wide form's row-group kernel too, as its first
         * launch's) goes plainly after a skipped launch: programmatically it would run beside
         * the kernel before that one, which it may read */
        const bool plain = !prev_ran && bg_plan_launch_beside_prev(p, i);
        if (gi < p->nrowgroups && p->rowgroups[gi].first == i && use_rowgroup(gm, r, gi)) {
            if (!launch_rowgroup(g, gm, r, gi, stream, pdl && after && !plain, d)) return false;
            after = prev_ran = true;
            i += p->rowgroups[gi].count - 1;
            continue;
        }
        if (p->launches[i].prep) continue;
        if (!launch_one(g, gm, r, i, stream, pdl && after && !plain, &prev_ran, d)) return false;
        after = true;
    }
    return true;
}

/* The prep launches (plan.h: of parameters alone), once, right after the leaves are uploaded;
 * finished before this returns, and so is binding's zeroing of buffers (cuMemsetD32 runs on
 * the legacy stream, which a run on a non-blocking stream would not wait for). */
bool bg_gpu_run_prep(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgDiagSink *d) {
    for (int i = 0; i < gm->plan->nlaunches; i++)
        if (gm->plan->launches[i].prep && !launch_one(g, gm, r, i, NULL, false, NULL, d)) return false;
    return bg_cuda_check(&g->cu, g->cu.cuCtxSynchronize(), "preparing the parameters", d);
}

/* The parameters of the one-kernel forms (the fused and the per-graph kernel: n, ngraphs, the
 * barrier word, every buffer) pointing at *nn, *ng, *bar and r's buffers (free it). */
static void **model_params(const BgPlan *p, BgGpuRun *r, long long *nn, long long *ng, BgCUdeviceptr *bar) {
    void **pv = bg_xcalloc((size_t)p->nbufs + 4, sizeof *pv);
    pv[0] = nn;
    pv[1] = ng;
    pv[2] = bar;
    for (int b = 0; b < p->nbufs; b++) pv[3 + b] = &r->ptr[b];
    return pv;
}

/* The fused kernel's features CSR of buffer b (plan.h bg_plan_fused_csr, b >= 0): where the
 * separate launches run the first such product's sparse variant, else 0 (its first kernel). */
static BgCUdeviceptr fused_csr(const BgPlan *p, const BgGpuRun *r, int b) {
    if (!r->csr || !r->csr[b]) return 0;
    for (int i = 0; i < p->nlaunches; i++)
        if (bg_plan_fused_csr_launch(p, &p->launches[i], b))
            return r->use_sparse && r->use_sparse[i] && !(r->use_alt && r->use_alt[i]) ? r->csr[b] : 0;
    return 0;
}

/* The fused kernel in one cooperative launch.  Returns false with *refused set (and a
 * reason in r->coop_refused, nothing reported) when the device cannot take the grid;
 * false with a diagnostic on any other failure. */
static bool launch_coop(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream,
                        bool *refused, BgDiagSink *d) {
    const BgPlan *p = gm->plan;
    *refused = false;
    long long need = 0;
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *L = &p->launches[i];
        if (L->prep) continue; /* not in the fused kernel */
        int64_t t = bg_plan_rows(L->rows, r->n, r->ngraphs, r->gsz) * (int64_t)L->threads_per_row;
        long long b = t > 0 ? (long long)((t + p->fused_block - 1) / p->fused_block) : 0;
        if (b > need) need = b;
    }
    if (need == 0) return true; /* nothing to compute (N = 0) */
    long long grid = need < gm->fused_grid_max ? need : gm->fused_grid_max;
    if (r->coop_grid_request > 0) grid = r->coop_grid_request;
    if (gm->fused_grid_max <= 0 || grid > gm->fused_grid_max) {
        if (gm->fused_grid_max <= 0)
            snprintf(r->coop_refused, sizeof r->coop_refused,
                     "%s cannot run %s cooperatively (no cooperative launch support, or no block fits)",
                     g->name, p->fused_kernel);
        else
            snprintf(r->coop_refused, sizeof r->coop_refused,
                     "a cooperative grid of %lld blocks exceeds the %d blocks of %d threads that %s holds at once",
                     grid, gm->fused_grid_max, p->fused_block, g->name);
        *refused = true;
        return false;
    }
    long long nn = r->n, ng = r->ngraphs;
    BgCUdeviceptr bar = r->bar;
    void **pv = model_params(p, r, &nn, &ng, &bar);
    const int csr_buf = bg_plan_fused_csr(p);
    BgCUdeviceptr csr = csr_buf >= 0 ? fused_csr(p, r, csr_buf) : 0;
    if (csr_buf >= 0) pv[3 + p->nbufs] = &csr; /* the features' CSR, last (plan.h) */
    BgCUresult res = g->cu.cuLaunchCooperativeKernel(gm->fused_fn, (unsigned)grid, 1, 1,
                                                     (unsigned)p->fused_block, 1, 1, 0, stream, pv);
    free(pv);
    if (res == BG_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE || res == BG_CUDA_ERROR_NOT_SUPPORTED) {
        char nb[64];
        snprintf(r->coop_refused, sizeof r->coop_refused, "%s refused the cooperative launch of %lld blocks (%s)",
                 g->name, grid, bg_cuda_error_name(&g->cu, res, nb, sizeof nb));
        *refused = true;
        return false;
    }
    char what[160];
    snprintf(what, sizeof what, "launching %s cooperatively (%lld blocks of %d)", p->fused_kernel, grid,
             p->fused_block);
    if (!bg_cuda_check(&g->cu, res, what, d)) return false;
    r->coop_grid = grid;
    return true;
}

static bool launch_blocks(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream, BgDiagSink *d);

/* The per-launch kernels (or, blocks, the per-graph kernel's one launch) captured once (on a
 * private stream) into a CUDA graph, then one graph launch per run.  The graph holds this
 * instance's buffer pointers and sizes. */
static bool launch_graph(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream, bool blocks,
                         BgDiagSink *d) {
    BgCUgraph *gp = blocks ? &r->blocks_graph : &r->graph;
    BgCUgraphExec *xp = blocks ? &r->blocks_graph_exec : &r->graph_exec;
    if (!*xp) {
        if (!r->cap_stream &&
            !bg_cuda_check(&g->cu, g->cu.cuStreamCreate(&r->cap_stream, BG_CU_STREAM_NON_BLOCKING),
                           "cuStreamCreate (graph capture)", d)) {
            r->cap_stream = NULL;
            return false;
        }
        if (!bg_cuda_check(&g->cu, g->cu.cuStreamBeginCapture(r->cap_stream, BG_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                           "cuStreamBeginCapture", d))
            return false;
        bool ok = blocks ? launch_blocks(g, gm, r, r->cap_stream, d) : launch_each(g, gm, r, r->cap_stream, d);
        BgCUgraph graph = NULL;
        BgCUresult res = g->cu.cuStreamEndCapture(r->cap_stream, &graph);
        if (!ok) {
            if (res == BG_CUDA_SUCCESS && graph) g->cu.cuGraphDestroy(graph);
            return false;
        }
        if (!bg_cuda_check(&g->cu, res, "cuStreamEndCapture", d)) return false;
        if (!bg_cuda_check(&g->cu, g->cu.cuGraphInstantiateWithFlags(xp, graph, 0), "cuGraphInstantiateWithFlags",
                           d)) {
            g->cu.cuGraphDestroy(graph);
            *xp = NULL;
            return false;
        }
        *gp = graph;
    }
    return bg_cuda_check(&g->cu, g->cu.cuGraphLaunch(*xp, stream), "cuGraphLaunch", d);
}

struct Timed;
static bool time_median(const struct Timed *w, BgCUstream stream, int repeat, double *median_ms);
static bool auto_choose(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream, BgDiagSink *d);

/* The per-graph kernel: one block per graph, at most 65535 blocks (each then takes several
 * graphs in turn). */
static bool launch_blocks(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream, BgDiagSink *d) {
    const BgPlan *p = gm->plan;
    if (r->ngraphs <= 0) return true; /* no graphs: nothing to compute */
    long long nn = r->n, ng = r->ngraphs;
    BgCUdeviceptr bar = r->bar;
    void **pv = model_params(p, r, &nn, &ng, &bar);
    unsigned gy = ng < 65535 ? (unsigned)ng : 65535u;
    /* threads a block: about 1024 a SM over the batch's graphs, from 128 to 512 (a small batch
     * gets wider blocks, each graph's phases then take fewer rounds; a large one narrow blocks,
     * more of them resident).  H100, MUTAG's 188 graphs: 512 threads 60 us (GIN) / 22 us (GCN),
     * 1024 threads 90 / 25 us; NCI1's 4110: 128 threads 661 / 280 us, 512 threads 1008 / 317 us
     * (docs/performance.md).  A batch of at most one graph a SM gets at least a warp for each
     * node of its largest graph (a warp-rows group then takes one round), up to 1024: H200, MUTAG's graph 0
     * (17 nodes) alone, GIN 18.5 -> 16.1 us, GCN 17.0 -> 15.4 us at 1024 threads against 512.
     * BGNN_BLOCKS_THREADS overrides, up to the kernel's 1024. */
    long long bt = r->blocks_threads;
    if (bt <= 0) {
        const long long nsm = g->nsm > 0 ? g->nsm : 1;
        bt = (1024LL * nsm / ng + 31) / 32 * 32;
        bt = bt < 128 ? 128 : bt > 512 ? 512 : bt;
        const long long wide = 32LL * (r->largest_graph > 0 ? r->largest_graph : 1);
        if (ng <= nsm && wide > bt) bt = wide > 1024 ? 1024 : wide;
    }
    if (bt > p->blocks_block) bt = p->blocks_block;
    BgCUresult res = g->cu.cuLaunchKernel(gm->blocks_fn, 1, gy, 1, (unsigned)bt, 1, 1, 0, stream, pv, NULL);
    free(pv);
    r->blocks_threads_used = (int)bt;
    char what[160];
    snprintf(what, sizeof what, "launching %s (%u blocks of %lld)", p->blocks_kernel, gy, bt);
    return bg_cuda_check(&g->cu, res, what, d);
}

static bool blocks_choose(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream, BgDiagSink *d);

bool bg_gpu_run_launch(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream,
                       BgDiagSink *d) {
    r->last_stream = stream;
    if (r->blocks_pending && !blocks_choose(g, gm, r, stream, d)) return false;
    if (r->use_blocks && gm->blocks_fn) { /* in a CUDA graph of its one launch, but with BGNN_EXEC=launches */
        const bool plain = r->mode == BG_EXEC_LAUNCHES || r->blocks_plain > 0;
        if (!(plain ? launch_blocks(g, gm, r, stream, d) : launch_graph(g, gm, r, stream, true, d))) return false;
        if (r->blocks_plain > 0) r->blocks_plain--;
        r->used = BG_EXEC_BLOCKS;
        return true;
    }
    BgExecMode m = r->mode;
    if (m == BG_EXEC_AUTO && gm->fused_fn && !r->coop_refused[0] && r->auto_choice == BG_EXEC_AUTO &&
        !auto_choose(g, gm, r, stream, d))
        return false;
    if (m == BG_EXEC_AUTO)
        m = gm->fused_fn && !r->coop_refused[0] && r->auto_choice == BG_EXEC_COOP ? BG_EXEC_COOP : BG_EXEC_GRAPH;
    if (m == BG_EXEC_COOP) {
        if (!gm->fused_fn) {
            bg_diag_error(d, BG_E_OPTION, "BGNN_EXEC=coop: model %s has no fused kernel (compiled without fuse-model)",
                          gm->plan->model);
            return false;
        }
        bool refused = false;
        if (launch_coop(g, gm, r, stream, &refused, d)) {
            r->used = BG_EXEC_COOP;
            return true;
        }
        if (!refused) return false;
        if (r->mode == BG_EXEC_COOP) {
            bg_diag_error(d, BG_E_CUDA, "%s", r->coop_refused);
            return false;
        }
        m = BG_EXEC_GRAPH; /* AUTO: the same work as separate kernels, recorded in coop_refused */
    }
    bool ok = m == BG_EXEC_GRAPH ? launch_graph(g, gm, r, stream, false, d) : launch_each(g, gm, r, stream, d);
    if (ok) r->used = m;
    return ok;
}

static bool sync_last(BgGpu *g, BgGpuRun *r, BgDiagSink *d) {
    BgCUresult res = r->last_stream ? g->cu.cuStreamSynchronize(r->last_stream) : g->cu.cuCtxSynchronize();
    return bg_cuda_check(&g->cu, res, "synchronising after the launches", d);
}

static int64_t resolve_dim(int64_t dim, int64_t n, int64_t ngraphs) {
    return dim == BG_DIM_N ? n : dim == BG_DIM_G ? ngraphs : dim;
}

void bg_plan_output_shape(const BgPlan *p, int i, int64_t n, int64_t ngraphs, int *rank,
                          int64_t dim[2]) {
    const BgPlanOutput *o = &p->outputs[i];
    *rank = o->rank;
    dim[0] = resolve_dim(o->dim[0], n, ngraphs);
    dim[1] = o->rank == 2 ? resolve_dim(o->dim[1], n, ngraphs) : 0;
}

bool bg_gpu_run_read_buf(BgGpu *g, const BgPlan *p, BgGpuRun *r, int b, int rank,
                         const int64_t *dim, BgTensor *out, BgDiagSink *d) {
    memset(out, 0, sizeof *out);
    if (b < 0 || b >= p->nbufs || (p->bufs[b].kind != BG_BUF_F32 && p->bufs[b].kind != BG_BUF_B1)) {
        bg_diag_error(d, BG_E_INTERNAL, "buffer %d cannot be read as a tensor", b);
        return false;
    }
    BgDType dt = p->bufs[b].kind == BG_BUF_B1 ? BG_DT_B1 : BG_DT_F32;
    if (!bg_tensor_alloc(out, dt, rank, dim[0], rank == 2 ? dim[1] : 0)) {
        bg_diag_error(d, BG_E_LIMIT, "cannot allocate a host tensor for buffer %d", b);
        return false;
    }
    size_t want = bg_tensor_bytes(out);
    if (want != r->bytes[b]) {
        bg_diag_error(d, BG_E_INTERNAL, "buffer %d holds %zu bytes, its value needs %zu", b,
                      r->bytes[b], want);
        bg_tensor_free(out);
        return false;
    }
    if (!bg_gpu_make_current(g, d) || !sync_last(g, r, d)) {
        bg_tensor_free(out);
        return false;
    }
    if (want && !bg_cuda_check(&g->cu, g->cu.cuMemcpyDtoH_v2(out->data, r->ptr[b], want), "cuMemcpyDtoH", d)) {
        bg_tensor_free(out);
        return false;
    }
    return true;
}

bool bg_gpu_run_read_output(BgGpu *g, const BgPlan *p, BgGpuRun *r, int i, BgTensor *out,
                            BgDiagSink *d) {
    int rank;
    int64_t dim[2];
    bg_plan_output_shape(p, i, r->n, r->ngraphs, &rank, dim);
    return bg_gpu_run_read_buf(g, p, r, p->outputs[i].buf, rank, dim, out, d);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Work to time: enqueue one run of something on a stream. */
typedef struct Timed {
    BgGpu *g;
    const BgGpuModel *gm;
    BgGpuRun *r;
    int launch;          /* -1: the whole plan (bg_gpu_run_launch); else that launch alone */
    BgDiagSink *d;
    BgExecMode mode;     /* launch -1: run in this mode (AUTO: the instance's own) */
} Timed;

/* Launch i of the plan alone: grid = ceil(rows * threads_per_row / block) (a launch over a
 * work list SLOTS: at least its slots), clamped (the kernels grid-stride over the rest);
 * skipped when there is nothing to do.  ran (when not NULL): whether it launched a kernel. */
static bool launch_one(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, int i, BgCUstream stream, bool pdl,
                       bool *ran, BgDiagSink *d) {
    const BgPlanLaunch *L = &gm->plan->launches[i];
    const bool alt = r->use_alt && r->use_alt[i] && gm->alt_fn && gm->alt_fn[i];
    const bool sparse = !alt && r->use_sparse && r->use_sparse[i] && gm->sparse_fn && gm->sparse_fn[i];
    const int64_t rows = bg_plan_rows(L->rows, r->n, r->ngraphs, r->gsz);
    const int64_t tpr = alt ? L->alt_tpr : sparse ? bg_plan_sparse_tpr_rows(gm->plan, L, rows) : L->threads_per_row;
    const int64_t th = rows * tpr;
    if (ran) *ran = th > 0; /* nothing to do: no kernel */
    if (th <= 0) return true;
    const int bs = gm->max_block && L->block_size > gm->max_block[i] ? gm->max_block[i] : L->block_size;
    int64_t grid = (th + bs - 1) / bs;
    /* a bspmm_mm or a float aggregation over its work list: a block a slot (plan.h
     * bg_plan_mm_slots; lanes= ignores it) */
    const int sg = alt || sparse || tpr != 32 || bs != 256 ? -1
                   : gm->slots_graph                         ? gm->slots_graph[i] /* found at load */
                                                             : bg_plan_launch_slots_graph(gm->plan, L);
    if (sg >= 0 && r->gsz[sg].nslots > grid) grid = r->gsz[sg].nslots;
    grid = grid_clamp(g, L, grid);
    long long nn = r->n, ng = r->ngraphs;
    BgCUdeviceptr a[BG_PLAN_MAX_ARGS];
    void *pv[2 + BG_PLAN_MAX_ARGS] = {&nn, &ng};
    for (int k = 0; k < L->nargs; k++) {
        a[k] = sparse && k == 1 ? r->csr[L->args[1]] : r->ptr[L->args[k]];
        pv[2 + k] = &a[k];
    }
    BgCUfunction fn = alt ? gm->alt_fn[i] : sparse ? gm->sparse_fn[i] : gm->fn[i];
    /* the one-wave variant (plan.h) where the grid is one wave of it, at the block its wave was
     * sized for (a schedule retuned in place, api/jit.c bg_gpu_model_resched, may have changed
     * the launch's) */
    const bool wave = !alt && !sparse && gm->wave_fn && gm->wave_fn[i] && bs == BG_PLAN_WAVE_BLOCK &&
                      grid <= gm->wave_grid_max[i];
    if (wave) fn = gm->wave_fn[i];
    const unsigned smem = alt || sparse || wave ? 0u : (unsigned)L->smem; /* (only the launch's own kernel has it) */
    BgCUresult res = launch_kernel(g, fn, (unsigned)grid, 1, (unsigned)bs, smem, stream, pv, pdl);
    if (res == BG_CUDA_SUCCESS) return true;
    char what[200];
    snprintf(what, sizeof what, "launching %s%s (%lld blocks of %d)", alt ? L->alt : L->kernel,
             sparse ? BG_PLAN_SPARSE_SUFFIX : wave ? BG_PLAN_WAVE_SUFFIX : "", (long long)grid, bs);
    return bg_cuda_check(&g->cu, res, what, d);
}

static bool enqueue(const Timed *w, BgCUstream stream) {
    if (w->launch >= 0) return launch_one(w->g, w->gm, w->r, w->launch, stream, false, NULL, w->d);
    BgExecMode keep = w->r->mode;
    if (w->mode != BG_EXEC_AUTO) w->r->mode = w->mode;
    bool ok = bg_gpu_run_launch(w->g, w->gm, w->r, stream, w->d);
    w->r->mode = keep;
    return ok;
}

/* AUTO's measurement (see rt.h): the faster of the fused kernel and the CUDA graph.  A
 * refused cooperative launch ends it with GRAPH (the refusal is in coop_refused). */
static bool auto_choose(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream, BgDiagSink *d) {
    r->auto_choice = BG_EXEC_GRAPH; /* while measuring, and if the measurement fails */
    Timed graph = {g, gm, r, -1, d, BG_EXEC_GRAPH};
    if (!time_median(&graph, stream, BG_AUTO_TRIALS, &r->auto_ms[1])) return false;
    BgDiagSink quiet;
    bg_diag_init(&quiet);
    r->mode = BG_EXEC_COOP;
    bool refused = false;
    bool coop_ok = launch_coop(g, gm, r, stream, &refused, &quiet);
    r->mode = BG_EXEC_AUTO;
    bg_diag_free(&quiet);
    if (!coop_ok) {
        if (refused) return true; /* GRAPH; why is in coop_refused */
        return bg_cuda_check(&g->cu, g->cu.cuCtxSynchronize(), "cooperative launch", d);
    }
    Timed coop = {g, gm, r, -1, d, BG_EXEC_COOP};
    if (!time_median(&coop, stream, BG_AUTO_TRIALS, &r->auto_ms[0])) return false;
    r->auto_choice = r->auto_ms[0] <= r->auto_ms[1] ? BG_EXEC_COOP : BG_EXEC_GRAPH;
    return true;
}

/* Auto's choice for a batch the per-graph kernel can run (rt.h use_blocks): the faster of it
 * and the separate launches (as auto runs them), BG_AUTO_TRIALS runs each, medians in
 * blocks_ms.  On a failed measurement the separate launches stay. */
static bool blocks_choose(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream, BgDiagSink *d) {
    r->blocks_pending = false;
    r->use_blocks = false;
    Timed w = {g, gm, r, -1, d, BG_EXEC_AUTO};
    if (!time_median(&w, stream, BG_AUTO_TRIALS, &r->blocks_ms[1])) return false;
    r->use_blocks = true;
    if (!time_median(&w, stream, BG_AUTO_TRIALS, &r->blocks_ms[0])) {
        r->use_blocks = false;
        return false;
    }
    r->use_blocks = r->blocks_ms[0] <= r->blocks_ms[1];
    if (!r->use_blocks)
        snprintf(r->blocks_why, sizeof r->blocks_why, "auto measured it slower (%.1f us) than the separate launches (%.1f us)",
                 1000 * r->blocks_ms[0], 1000 * r->blocks_ms[1]);
    return true;
}

/* One warm-up, then `repeat` runs each between two CUDA events; the median in ms. */
static bool time_median(const struct Timed *w, BgCUstream stream, int repeat, double *median_ms) {
    BgGpu *g = w->g;
    BgGpuRun *r = w->r;
    *median_ms = 0;
    if (repeat < 1) repeat = 1;
    if (!bg_gpu_make_current(g, w->d)) return false;
    for (int i = 0; i < 2; i++)
        if (!r->ev[i] && !bg_cuda_check(&g->cu, g->cu.cuEventCreate(&r->ev[i], BG_CU_EVENT_DEFAULT),
                                        "cuEventCreate", w->d)) {
            r->ev[i] = NULL;
            return false;
        }
    if (!enqueue(w, stream)) return false;
    double *t = bg_xcalloc((size_t)repeat, sizeof(double));
    bool ok = true;
    for (int k = 0; k < repeat && ok; k++) {
        float ms = 0;
        ok = bg_cuda_check(&g->cu, g->cu.cuEventRecord(r->ev[0], stream), "cuEventRecord", w->d) &&
             enqueue(w, stream) &&
             bg_cuda_check(&g->cu, g->cu.cuEventRecord(r->ev[1], stream), "cuEventRecord", w->d) &&
             bg_cuda_check(&g->cu, g->cu.cuEventSynchronize(r->ev[1]), "cuEventSynchronize", w->d) &&
             bg_cuda_check(&g->cu, g->cu.cuEventElapsedTime(&ms, r->ev[0], r->ev[1]), "cuEventElapsedTime", w->d);
        t[k] = ms;
    }
    if (ok) {
        qsort(t, (size_t)repeat, sizeof(double), cmp_double);
        *median_ms = t[repeat / 2];
    }
    free(t);
    return ok;
}

bool bg_gpu_run_time(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream,
                     int repeat, double *median_ms, BgDiagSink *d) {
    Timed w = {g, gm, r, -1, d, BG_EXEC_AUTO};
    return time_median(&w, stream, repeat, median_ms);
}

bool bg_gpu_run_profile(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgCUstream stream, int repeat,
                        double *ms, BgDiagSink *d) {
    bool ok = true;
    for (int i = 0; i < gm->plan->nlaunches && ok; i++) {
        Timed w = {g, gm, r, i, d, BG_EXEC_AUTO};
        ok = time_median(&w, stream, repeat, &ms[i]);
    }
    return ok;
}
