/* bind.c - binding a plan's leaves on the device and allocating a run (runtime/rt.h).
 *
 * Binding describes the plan's leaves as BgLeafSpecs (the GRAPH entries first, in plan order,
 * then one INPUT / PARAM / PARAM_SCALE spec per leaf buffer with the buffer's type as used)
 * and binds them with bg_leaves_bind (loaders/leaves.c), as the CPU reference does, so GPU
 * and CPU report the same messages for the same bad weights or data.  Then every buffer is
 * allocated for the bound N, NNZ and G (one cuMemAlloc each; empty buffers get a NULL
 * pointer) and the leaves are copied up in the plan's layouts (B1T weights transposed here),
 * sparse input features also as their CSR block (plan.h bg_features_csr); the run's options
 * (BGNN_* environment) and its kernel choices (the features product's variant, the per-graph
 * kernel) are taken here, and the prep launches run once (exec.c).  Any failure frees
 * everything allocated so far; out of device memory says how much was asked. */
#include "rt.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the plan's leaves ------------------------------------------------------------------ */
static const BgLeafSpec *decl_of(const BgLeafSpec *decl, int ndecl, int inst, BgLeafKind kind) {
    if (!decl || inst < 0 || inst >= ndecl || decl[inst].kind != kind) return NULL;
    return &decl[inst];
}

int bg_plan_leaf_specs(const BgPlan *p, const BgLeafSpec *decl, int ndecl, BgLeafSpec *spec,
                       int *buf_leaf) {
    int n = 0;
    for (int gi = 0; gi < p->ngraphs; gi++) {
        BgLeafSpec *s = &spec[n++];
        memset(s, 0, sizeof *s);
        s->kind = BG_LEAF_GRAPH;
        s->self_loops = p->graphs[gi].self_loops;
        s->norm = p->graphs[gi].norm;
        const BgLeafSpec *ds = decl_of(decl, ndecl, p->graphs[gi].inst, BG_LEAF_GRAPH);
        if (ds) {
            s->src = ds->src;
            s->loc = ds->loc;
        }
    }
    for (int b = 0; b < p->nbufs; b++) {
        const BgPlanBuf *pb = &p->bufs[b];
        buf_leaf[b] = -1;
        BgLeafSpec s;
        memset(&s, 0, sizeof s);
        s.dtype = BG_DT_F32;
        switch (pb->role) {
        case BG_ROLE_INPUT:
            s.kind = BG_LEAF_INPUT;
            s.rank = 2;
            s.dim[0] = BG_DIM_N;
            s.dim[1] = pb->cols;
            break;
        case BG_ROLE_PARAM:
            s.kind = BG_LEAF_PARAM;
            s.rank = 2;
            if (pb->kind == BG_BUF_B1T) { /* W[K, M] stored as [M][K bits] */
                s.dtype = BG_DT_B1;
                s.dim[0] = pb->cols;
                s.dim[1] = pb->rows.value;
            } else {
                s.dtype = pb->kind == BG_BUF_B1 ? BG_DT_B1 : BG_DT_F32;
                s.rank = pb->rank;
                s.dim[0] = pb->dim[0];
                s.dim[1] = pb->dim[1];
            }
            break;
        case BG_ROLE_PARAM_SCALE:
            s.kind = BG_LEAF_PARAM_SCALE;
            s.rank = 1;
            s.dim[0] = pb->rank == 1 ? pb->dim[0] : pb->rows.value;
            break;
        default:
            continue;
        }
        s.name = pb->name;
        s.transposed = pb->transposed;
        const BgLeafSpec *ds = decl_of(decl, ndecl, pb->inst, s.kind);
        if (ds) {
            s.src = ds->src;
            s.loc = ds->loc;
            s.file = ds->file; /* npy(...) sources: the plan has no file */
        }
        buf_leaf[b] = n;
        spec[n++] = s;
    }
    return n;
}

/* ---- allocation and upload -------------------------------------------------------------- */
static void free_bufs(BgGpu *g, BgGpuRun *r) {
    for (int b = 0; b < r->nbufs; b++) {
        if (r->ptr[b] && !r->borrowed[b]) g->cu.cuMemFree_v2(r->ptr[b]);
        r->ptr[b] = 0;
        if (r->csr && r->csr[b]) g->cu.cuMemFree_v2(r->csr[b]);
        if (r->csr) r->csr[b] = 0;
    }
}

void bg_gpu_run_free(BgGpu *g, BgGpuRun *r) {
    if (!r) return;
    if (g && g->cu.lib) {
        if (r->ptr) free_bufs(g, r);
        if (r->bar) g->cu.cuMemFree_v2(r->bar);
        if (r->graph_exec) g->cu.cuGraphExecDestroy(r->graph_exec);
        if (r->graph) g->cu.cuGraphDestroy(r->graph);
        if (r->blocks_graph_exec) g->cu.cuGraphExecDestroy(r->blocks_graph_exec);
        if (r->blocks_graph) g->cu.cuGraphDestroy(r->blocks_graph);
        if (r->cap_stream) g->cu.cuStreamDestroy(r->cap_stream);
        for (int i = 0; i < 2; i++)
            if (r->ev[i]) g->cu.cuEventDestroy(r->ev[i]);
    }
    free(r->ptr);
    free(r->bytes);
    free(r->borrowed);
    free(r->gsz);
    free(r->use_alt);
    free(r->csr);
    free(r->use_sparse);
    memset(r, 0, sizeof *r);
}

/* bspmm_mm's hub_min on graph adj: BGNN_MM_HUB_MIN, else the plan's (plan.h). */
static int64_t mm_hub_min(const BgGpuRun *r, const BgAdj *adj) {
    return r->mm_hub_min >= 0 ? r->mm_hub_min : bg_plan_mm_hub_min(adj->n, adj->nnz);
}

/* Host bytes for a leaf buffer; *tmp set when they were made here (B1T, graph_ptr). */
static const void *leaf_bytes(const BgPlan *p, const BgPlanBuf *pb, const BgBoundLeaves *bd,
                              int leaf, int64_t n, const BgGpuRun *run, size_t *len, void **tmp) {
    const int64_t group_min_rows = run->sched_group_min_rows;
    *tmp = NULL;
    switch (pb->role) {
    case BG_ROLE_INPUT:
    case BG_ROLE_PARAM:
    case BG_ROLE_PARAM_SCALE: {
        if (leaf < 0) return NULL;
        const BgTensor *t = &bd->val[leaf];
        if (!t->data) return NULL;
        if (pb->kind != BG_BUF_B1T) {
            *len = bg_tensor_bytes(t);
            return t->data;
        }
        /* bits of W[K, M] -> [M][ceil(K/32)], then each row's popcount (plan.h B1T) */
        int64_t k = t->dim[0], mm = t->dim[1], w = (k + 31) / 32;
        uint32_t *o = bg_xcalloc((size_t)(mm * (w + 1)) + 1, 4);
        const uint32_t *s = t->data;
        for (int64_t r = 0; r < k; r++)
            for (int64_t c = 0; c < mm; c++)
                if (bg_bit_get(s, t->words_per_row, r, c)) {
                    o[c * w + r / 32] |= 1u << (r % 32);
                    o[mm * w + c]++;
                }
        *tmp = o;
        *len = (size_t)(mm * (w + 1)) * 4;
        return o;
    }
    case BG_ROLE_GRAPH: {
        if (pb->graph < 0 || pb->graph >= p->ngraphs) return NULL;
        const BgAdj *adj = &bd->adj[pb->graph];
        switch (pb->garr) {
        case BG_GARR_ROWPTR: *len = (size_t)(adj->n + 1) * 8; return adj->rowptr;
        case BG_GARR_COL: *len = (size_t)adj->nnz * 4; return adj->col;
        case BG_GARR_ROWF: *len = (size_t)adj->n * 4; return adj->rowf;
        case BG_GARR_COLF: *len = (size_t)adj->n * 4; return adj->colf;
        case BG_GARR_W: *len = (size_t)adj->nnz * 4; return adj->w;
        case BG_GARR_ITEMS: { /* the schedule of the fast aggregation (plan.h), as the plan's graph asks */
            const BgPlanGraph *pg = &p->graphs[pb->graph];
            const int64_t gmr = bg_plan_graph_group_min_rows(pg, group_min_rows);
            int64_t ns = 0, ni = bg_plan_schedule(adj->rowptr, adj->n, pg->chunk, gmr, NULL, &ns);
            if (ni < 0) return NULL;
            int32_t *it = bg_xcalloc((size_t)(ni + 1) * 4, sizeof *it);
            bg_plan_schedule(adj->rowptr, adj->n, pg->chunk, gmr, it, &ns);
            *tmp = it;
            *len = (size_t)(ni + 1) * 16;
            return it;
        }
        case BG_GARR_ORDER: { /* the bit aggregation's rows by length (plan.h) */
            int32_t *o = bg_xcalloc((size_t)(adj->n + 1) * 4, sizeof *o);
            if (!bg_plan_row_order(adj->rowptr, adj->n, bg_plan_bits_split_min(adj->nnz), o)) {
                free(o);
                return NULL;
            }
            *tmp = o;
            *len = (size_t)(adj->n + 1) * 16;
            return o;
        }
        case BG_GARR_SLOTS: { /* bspmm_mm's rows in blocks' slots (plan.h), as many as counted at allocation */
            const int64_t ns = run->gsz[pb->graph].nslots;
            if (ns < 0) return NULL;
            int32_t *sl = bg_xcalloc((size_t)(8 * ns + 1) * 4, sizeof *sl);
            if (bg_plan_mm_slots(adj->rowptr, adj->n, mm_hub_min(run, adj), sl) != ns) {
                free(sl);
                return NULL;
            }
            *tmp = sl;
            *len = (size_t)(8 * ns + 1) * 16;
            return sl;
        }
        case BG_GARR_PARTIAL:
        case BG_GARR_DONE: /* zeroed on the device instead (bg_gpu_run_alloc) */
            return NULL;
        }
        return NULL;
    }
    case BG_ROLE_GRAPH_PTR: {
        const BgGraph *gr = bd->graph;
        if (gr && gr->graph_ptr) {
            *len = (size_t)(gr->ngraphs + 1) * 8;
            return gr->graph_ptr;
        }
        int64_t *gp = bg_xmalloc(16);
        gp[0] = 0;
        gp[1] = n;
        *tmp = gp;
        *len = 16;
        return gp;
    }
    case BG_ROLE_TEMP:
        break;
    }
    return NULL;
}

/* ---- execution modes ------------------------------------------------------------------ */
const char *bg_exec_mode_name(BgExecMode m) {
    static const char *const names[] = {"auto", "coop", "graph", "launches", "blocks"};
    return (unsigned)m < 5 ? names[m] : "?";
}

bool bg_exec_mode_parse(const char *s, BgExecMode *out) {
    for (int i = 0; i < 4; i++)
        if (s && strcmp(s, bg_exec_mode_name((BgExecMode)i)) == 0) {
            *out = (BgExecMode)i;
            return true;
        }
    return false;
}

/* Environment variable `name` as the index of one of three words (unset or empty: 0). */
static bool env_choice(const char *name, const char *const *words, int nwords, int *out, BgDiagSink *d) {
    const char *v = getenv(name);
    if (!v || !*v) return true;
    char list[160] = "";
    for (int i = 0; i < nwords; i++) {
        if (strcmp(v, words[i]) == 0) {
            *out = i;
            return true;
        }
        size_t at = strlen(list);
        snprintf(list + at, sizeof list - at, "%s%s", i == 0 ? "" : i + 1 < nwords ? ", " : " or ", words[i]);
    }
    bg_diag_error(d, BG_E_OPTION, "%s='%.40s': expected %s", name, v, list);
    return false;
}

/* Environment variable name as an integer from lo to hi, a multiple of step, into *out (left
 * alone when unset or empty); otherwise an error "NAME='value': expected EXPECT". */
static bool env_int(const char *name, long long lo, long long hi, long long step, const char *expect, long long *out,
                    BgDiagSink *d) {
    const char *v = getenv(name);
    if (!v || !*v) return true;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (!end || *end || n < lo || n > hi || n % step) {
        bg_diag_error(d, BG_E_OPTION, "%s='%.40s': expected %s", name, v, expect);
        return false;
    }
    *out = n;
    return true;
}

/* BGNN_EXEC, BGNN_COOP_GRID, BGNN_FEATURES_KERNEL, BGNN_BATCH_KERNEL, BGNN_BLOCKS_THREADS,
 * BGNN_ROW_GROUPS, BGNN_PDL, BGNN_ROWGROUP_TILE, BGNN_SCHED_GROUP_MIN_ROWS and BGNN_MM_HUB_MIN
 * (environment) into the instance. */
static bool exec_options(BgGpuRun *r, BgDiagSink *d) {
    r->mode = BG_EXEC_AUTO;
    const char *e = getenv("BGNN_EXEC");
    if (e && *e && !bg_exec_mode_parse(e, &r->mode)) {
        bg_diag_error(d, BG_E_OPTION, "BGNN_EXEC='%.40s': expected auto, coop, graph or launches", e);
        return false;
    }
    if (!env_int("BGNN_COOP_GRID", 1, (1LL << 31) - 1, 1, "a block count from 1 to 2^31-1", &r->coop_grid_request, d))
        return false;
    static const char *const fks[] = {"auto", "rows", "tiled", "sparse"}, *const bks[] = {"auto", "layers", "graphs"};
    if (!env_choice("BGNN_FEATURES_KERNEL", fks, 4, &r->features_kernel, d) ||
        !env_choice("BGNN_BATCH_KERNEL", bks, 3, &r->batch_kernel, d))
        return false;
    long long bt = r->blocks_threads, rt = r->rowgroup_tile;
    if (!env_int("BGNN_BLOCKS_THREADS", 32, 1024, 32, "a multiple of 32 from 32 to 1024", &bt, d)) return false;
    r->blocks_threads = (int)bt;
    static const char *const rgs[] = {"auto", "on", "off"};
    if (!env_choice("BGNN_ROW_GROUPS", rgs, 3, &r->row_groups, d) || !env_choice("BGNN_PDL", rgs, 3, &r->pdl, d))
        return false;
    char tile[64];
    snprintf(tile, sizeof tile, "a multiple of 8 from 8 to %d", BG_PLAN_ROWGROUP_TILE_MAX);
    if (!env_int("BGNN_ROWGROUP_TILE", 8, BG_PLAN_ROWGROUP_TILE_MAX, 8, tile, &rt, d)) return false;
    r->rowgroup_tile = (int)rt;
    r->sched_group_min_rows = BG_PLAN_GROUP_MIN_ROWS;
    r->mm_hub_min = -1;
    return env_int("BGNN_SCHED_GROUP_MIN_ROWS", 0, LLONG_MAX, 1, "a row count >= 0 (0: never group)",
                   &r->sched_group_min_rows, d) &&
           env_int("BGNN_MM_HUB_MIN", 0, LLONG_MAX, 1, "an edge count >= 0 (0: no hub rows)", &r->mm_hub_min, d);
}

/* Does a launch with an alternative kernel (plan.h) read buffer b as its features (sparse_only:
 * one whose schedule asks for the sparse variant)? */
static bool alt_reads(const BgPlan *p, int b, bool sparse_only) {
    for (int i = 0; i < p->nlaunches; i++)
        if (p->launches[i].alt && p->launches[i].args[1] == b && (!sparse_only || p->launches[i].fb == BG_PLAN_FB_SPARSE))
            return true;
    return false;
}

/* Does a launch without an alternative, with a sparse variant in the cubin (a bin's of the
 * features: plan.h BG_PLAN_SPARSE_ROW_TPR), read buffer b as its features? */
static bool row_csr_reads(const BgPlan *p, const BgCUfunction *sparse_fn, int b) {
    for (int i = 0; sparse_fn && i < p->nlaunches; i++)
        if (!p->launches[i].alt && sparse_fn[i] && p->launches[i].nargs > 1 && p->launches[i].args[1] == b) return true;
    return false;
}

/* Features x [rows][width] (host, nnz of them other than +0: bg_features_csr_nnz) as the CSR block of the
 * sparse variants (plan.h bg_features_csr) on the device in *out.  *out = 0 when the offsets do
 * not fit 32 bits (the other kernels run). */
static bool upload_csr(BgGpu *g, const float *x, int64_t rows, int64_t width, uint64_t nnz, BgCUdeviceptr *out,
                       BgDiagSink *d) {
    *out = 0;
    size_t words = 0;
    uint32_t *h = bg_features_csr(x, rows, width, nnz, &words);
    if (!h) return true;
    bool ok = bg_cuda_check(&g->cu, g->cu.cuMemAlloc_v2(out, words * sizeof *h), "cuMemAlloc (CSR features)", d);
    if (ok) ok = bg_cuda_check(&g->cu, g->cu.cuMemcpyHtoD_v2(*out, h, words * sizeof *h), "cuMemcpyHtoD (CSR features)", d);
    if (!ok && *out) {
        g->cu.cuMemFree_v2(*out);
        *out = 0;
    }
    free(h);
    return ok;
}

/* The most nodes of one graph of the bound batch (n for a graph without graph_ptr). */
static int64_t largest_graph(const BgGraph *gr) {
    if (!gr) return 0;
    if (!gr->graph_ptr) return gr->n;
    int64_t largest = 0;
    for (int64_t k = 0; k < gr->ngraphs; k++)
        if (gr->graph_ptr[k + 1] - gr->graph_ptr[k] > largest) largest = gr->graph_ptr[k + 1] - gr->graph_ptr[k];
    return largest;
}

/* Whether the per-graph kernel can run this batch: a graph_ptr, and no edge between two of its
 * graphs. */
static bool block_diagonal(const BgGraph *gr) {
    if (!gr || !gr->graph_ptr) return false;
    for (int64_t k = 0; k < gr->ngraphs; k++) {
        const int64_t lo = gr->graph_ptr[k], hi = gr->graph_ptr[k + 1];
        for (int64_t e = gr->rowptr[lo]; e < gr->rowptr[hi]; e++)
            if (gr->col[e] < lo || gr->col[e] >= hi) return false;
    }
    return true;
}

/* use_blocks (see rt.h) for the bound graph (r->largest_graph set); false with an error when
 * BGNN_BATCH_KERNEL=graphs asks for what cannot be. */
static bool choose_blocks(const BgPlan *p, const BgGraph *gr, BgGpuRun *r, BgDiagSink *d) {
    const int64_t largest = r->largest_graph;
    const char *why = NULL;
    char buf[sizeof r->blocks_why];
    if (!p->blocks) why = "the model has no per-graph kernel";
    else if (!gr || !gr->graph_ptr) why = "the graph is not a batch (no graph_ptr)";
    else if (!block_diagonal(gr)) why = "the batch has edges between two of its graphs";
    else if (r->batch_kernel == 1) why = "BGNN_BATCH_KERNEL=layers";
    else if (r->batch_kernel == 0 && largest > BG_PLAN_BLOCKS_MAX_NODES) {
        snprintf(buf, sizeof buf, "its largest graph has %lld nodes (the per-graph kernel takes up to %d)",
                 (long long)largest, BG_PLAN_BLOCKS_MAX_NODES);
        why = buf;
    }
    if (why && r->batch_kernel == 2) {
        bg_diag_error(d, BG_E_OPTION, "BGNN_BATCH_KERNEL=graphs: %s", why);
        return false;
    }
    r->use_blocks = !why;
    r->blocks_pending = !why && r->batch_kernel == 0; /* auto: measured on the first run */
    snprintf(r->blocks_why, sizeof r->blocks_why, "%s", why && p->blocks ? why : "");
    return true;
}

bool bg_gpu_run_alloc(BgGpu *g, const BgPlan *p, const BgCUfunction *sparse_fn, const BgBoundLeaves *bd,
                      BgCUdeviceptr features_dev, BgGpuRun *out, bool *oom, BgDiagSink *d) {
    double *density = NULL; /* per buffer: the nonzero fraction of an uploaded INPUT */
    memset(out, 0, sizeof *out);
    if (oom) *oom = false;
    out->nbufs = p->nbufs;
    out->ptr = bg_xcalloc((size_t)p->nbufs + 1, sizeof *out->ptr);
    out->bytes = bg_xcalloc((size_t)p->nbufs + 1, sizeof *out->bytes);
    out->borrowed = bg_xcalloc((size_t)p->nbufs + 1, sizeof *out->borrowed);
    out->gsz = bg_xcalloc((size_t)p->ngraphs + 1, sizeof *out->gsz);
    out->n = bd->graph ? bd->graph->n : 0;
    out->ngraphs = bd->graph && bd->graph->graph_ptr ? bd->graph->ngraphs : 1;
    out->largest_graph = largest_graph(bd->graph);
    if (!exec_options(out, d) || !choose_blocks(p, bd->graph, out, d)) goto fail;
    for (int gi = 0; gi < p->ngraphs; gi++) {
        const BgAdj *adj = &bd->adj[gi];
        out->gsz[gi].nnz = adj->nnz;
        out->gsz[gi].nitems = bg_plan_schedule(adj->rowptr, adj->n, p->graphs[gi].chunk,
                                               bg_plan_graph_group_min_rows(&p->graphs[gi], out->sched_group_min_rows),
                                               NULL, &out->gsz[gi].nsplit);
        if (out->gsz[gi].nitems < 0) {
            bg_diag_error(d, BG_E_LIMIT, "graph %d: %lld rows are too many for the aggregation schedule", gi,
                          (long long)adj->n);
            goto fail;
        }
    }
    for (int b = 0; b < p->nbufs; b++) { /* bspmm_mm's work lists: their slot counts */
        const BgPlanBuf *pb = &p->bufs[b];
        if (pb->role != BG_ROLE_GRAPH || pb->garr != BG_GARR_SLOTS) continue;
        const BgAdj *adj = &bd->adj[pb->graph];
        out->gsz[pb->graph].nslots = bg_plan_mm_slots(adj->rowptr, adj->n, mm_hub_min(out, adj), NULL);
        if (out->gsz[pb->graph].nslots < 0) {
            bg_diag_error(d, BG_E_LIMIT,
                          "graph %d: %lld rows, or a row of 2^31 edges or more, are too many for bspmm_mm's work list",
                          pb->graph, (long long)adj->n);
            goto fail;
        }
    }
    if (!bg_gpu_make_current(g, d)) goto fail;
    if (p->fused) {
        if (!bg_cuda_check(&g->cu, g->cu.cuMemAlloc_v2(&out->bar, 4), "cuMemAlloc (barrier word)", d) ||
            !bg_cuda_check(&g->cu, g->cu.cuMemsetD32_v2(out->bar, 0, 1), "cuMemsetD32 (barrier word)", d))
            goto fail;
    }

    size_t total = 0;
    for (int b = 0; b < p->nbufs; b++) {
        const BgPlanBuf *pb = &p->bufs[b];
        int64_t rows = bg_plan_rows(pb->rows, out->n, out->ngraphs, out->gsz);
        if (rows < 0 || pb->width < 0 || (pb->width && (uint64_t)rows > (UINT64_MAX / 8) / (uint64_t)pb->width)) {
            bg_diag_error(d, BG_E_LIMIT, "buffer %d ('%s') of %lld x %lld elements is too large", b,
                          pb->name ? pb->name : bg_plan_role_name(pb->role), (long long)rows,
                          (long long)pb->width);
            goto fail;
        }
        size_t bytes = bg_plan_buf_bytes(pb, rows);
        out->bytes[b] = bytes;
        if (bytes == 0) continue;
        if (pb->role == BG_ROLE_INPUT && features_dev) {
            out->ptr[b] = features_dev;
            out->borrowed[b] = true;
            continue;
        }
        BgCUresult r = g->cu.cuMemAlloc_v2(&out->ptr[b], bytes);
        if (r != BG_CUDA_SUCCESS) {
            out->ptr[b] = 0;
            size_t fb = 0, tb = 0;
            g->cu.cuMemGetInfo_v2(&fb, &tb);
            if (r == BG_CUDA_ERROR_OUT_OF_MEMORY) {
                if (oom) *oom = true;
                bg_diag_error(d, BG_E_CUDA,
                              "out of device memory: buffer %d (%s %s, %lld rows) needs %zu bytes "
                              "after %zu allocated; %s has %zu of %zu bytes free",
                              b, bg_plan_role_name(pb->role), pb->name ? pb->name : bg_plan_kind_name(pb->kind),
                              (long long)rows, bytes, total, g->name, fb, tb);
            } else {
                bg_cuda_check(&g->cu, r, "cuMemAlloc", d);
            }
            goto fail;
        }
        total += bytes;
    }

    density = bg_xcalloc((size_t)p->nbufs + 1, sizeof *density); /* of INPUT buffers uploaded */
    out->csr = bg_xcalloc((size_t)p->nbufs + 1, sizeof *out->csr);
    for (int b = 0; b < p->nbufs; b++) {
        const BgPlanBuf *pb = &p->bufs[b];
        if (pb->role == BG_ROLE_TEMP || out->bytes[b] == 0 || out->borrowed[b]) continue;
        if (pb->role == BG_ROLE_GRAPH && (pb->garr == BG_GARR_PARTIAL || pb->garr == BG_GARR_DONE)) {
            if (!bg_cuda_check(&g->cu, g->cu.cuMemsetD32_v2(out->ptr[b], 0, out->bytes[b] / 4),
                               "cuMemsetD32 (aggregation split buffers)", d))
                goto fail;
            continue;
        }
        size_t len = 0;
        void *tmp = NULL;
        const void *src = leaf_bytes(p, pb, bd, bd->buf_leaf ? bd->buf_leaf[b] : -1, out->n, out,
                                     &len, &tmp);
        if (!src || len != out->bytes[b]) {
            bg_diag_error(d, BG_E_INTERNAL,
                          "buffer %d (%s '%s'): the bound value has %zu bytes, the plan wants %zu",
                          b, bg_plan_role_name(pb->role), pb->name ? pb->name : "", src ? len : 0,
                          out->bytes[b]);
            free(tmp);
            goto fail;
        }
        bool ok = bg_cuda_check(&g->cu, g->cu.cuMemcpyHtoD_v2(out->ptr[b], src, len), "cuMemcpyHtoD", d);
        if (ok && pb->role == BG_ROLE_INPUT && pb->kind == BG_BUF_F32 &&
            (alt_reads(p, b, false) || row_csr_reads(p, sparse_fn, b))) {
            const uint64_t nnz = bg_features_csr_nnz(src, len / sizeof(float));
            density[b] = len ? (double)nnz / (double)(len / sizeof(float)) : 0.0;
            /* sparse features (or BGNN_FEATURES_KERNEL=sparse): their CSR for the sparse variants */
            if (out->features_kernel == 3 ||
                (out->features_kernel == 0 && (density[b] <= BG_PLAN_ROWS_MAX_DENSITY || alt_reads(p, b, true))))
                ok = upload_csr(g, src, bg_plan_rows(pb->rows, out->n, out->ngraphs, out->gsz), pb->width, nnz,
                                &out->csr[b], d);
        }
        free(tmp);
        if (!ok) goto fail;
    }
    /* The kernel of each launch with an alternative (plan.h): the tiled product when the
     * features it reads are dense (or only on the device), else the sparse variant over their
     * CSR (the row kernel where the cubin has none, or with BGNN_FEATURES_KERNEL=rows). */
    out->use_alt = bg_xcalloc((size_t)p->nlaunches + 1, sizeof *out->use_alt);
    out->use_sparse = bg_xcalloc((size_t)p->nlaunches + 1, sizeof *out->use_sparse);
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (!l->alt) { /* a bin's sparse variant: at most BG_PLAN_ROW_CSR_MAX_DENSITY nonzero */
            const int b = l->nargs > 1 ? l->args[1] : 0;
            out->use_sparse[i] = sparse_fn && sparse_fn[i] && l->nargs > 1 && out->csr[b] &&
                                 (out->features_kernel == 3 ||
                                  (out->features_kernel == 0 && density[b] <= BG_PLAN_ROW_CSR_MAX_DENSITY));
            continue;
        }
        int b = l->args[1];
        if (out->features_kernel == 3 && out->borrowed[b]) {
            bg_diag_error(d, BG_E_OPTION,
                          "BGNN_FEATURES_KERNEL=sparse: the features are on the device (not on the host to "
                          "make their CSR from)");
            goto fail;
        }
        /* BGNN_FEATURES_KERNEL first, then the launch's schedule (fb), then the density; the
         * sparse variant needs the features on the host (else the row kernel runs) */
        const int fk = out->features_kernel ? out->features_kernel : l->fb;
        out->use_alt[i] = fk == BG_PLAN_FB_TILED ||
                          (fk == BG_PLAN_FB_AUTO && (out->borrowed[b] || density[b] > BG_PLAN_ROWS_MAX_DENSITY));
        out->use_sparse[i] = !out->use_alt[i] && fk != BG_PLAN_FB_ROWS && out->csr[b];
    }
    free(density);
    return true;
fail:
    free(density);
    bg_gpu_run_free(g, out);
    return false;
}

bool bg_gpu_run_bind_leaves(BgGpu *g, const BgGpuModel *gm, const BgLeafSpec *decl, int ndecl,
                            BgGraph *graph, const BgTensor *features, BgCUdeviceptr features_dev,
                            const char *weights, const BgSafetensors *wmem, BgGpuRun *out,
                            bool *oom, BgDiagSink *d) {
    memset(out, 0, sizeof *out);
    if (oom) *oom = false;
    const BgPlan *p = gm->plan;
    size_t cap = (size_t)p->ngraphs + (size_t)p->nbufs + 1;
    BgLeafSpec *spec = bg_xcalloc(cap, sizeof *spec);
    BgBoundLeaves bd = {graph, bg_xcalloc(cap, sizeof(BgAdj)), bg_xcalloc(cap, sizeof(BgTensor)),
                        bg_xcalloc((size_t)p->nbufs + 1, sizeof(int))};
    int n = bg_plan_leaf_specs(p, decl, ndecl, spec, bd.buf_leaf);
    BgTensor placeholder;
    memset(&placeholder, 0, sizeof placeholder);
    bool ok = true;
    if (features_dev && features && !features->data) {
        /* binding checks shapes on host data; the device array itself is used as is */
        if (!bg_tensor_alloc(&placeholder, BG_DT_F32, 2, features->dim[0], features->dim[1])) {
            bg_diag_error(d, BG_E_LIMIT, "features of %lld x %lld floats are too large",
                          (long long)features->dim[0], (long long)features->dim[1]);
            ok = false;
        }
        features = &placeholder;
    }
    ok = ok && bg_leaves_bind(spec, n, graph, features, weights, wmem, bd.adj, bd.val, d);
    bg_tensor_free(&placeholder);
    if (ok) {
        ok = bg_gpu_run_alloc(g, p, gm->sparse_fn, &bd, features_dev, out, oom, d);
        if (ok && !bg_gpu_run_prep(g, gm, out, d)) {
            bg_gpu_run_free(g, out);
            ok = false;
        }
        for (int i = 0; i < n; i++) {
            if (bd.adj[i].rowptr) bg_adj_free(&bd.adj[i]);
            bg_tensor_free(&bd.val[i]);
        }
    }
    free(spec);
    free(bd.adj);
    free(bd.val);
    free(bd.buf_leaf);
    return ok;
}

