/* exec.c - running a plan on the device.
 *
 * Binding describes the plan's leaves as BgLeafSpecs (the GRAPH entries first, in plan order,
 * then one INPUT / PARAM / PARAM_SCALE spec per leaf buffer with the buffer's type as used)
 * and binds them with bg_leaves_bind (loaders/leaves.c), as the CPU reference does, so GPU
 * and CPU report the same messages for the same bad weights or data.  Then every buffer is
 * allocated for the bound N, NNZ and G (one cuMemAlloc each; empty buffers get a NULL
 * pointer) and the leaves are copied up in the plan's layouts (B1T weights transposed here).
 * Launches follow the plan's calling convention exactly (plan.h).  Any failure frees
 * everything allocated so far; out of device memory says how much was asked. */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t resolve_dim(int64_t dim, int64_t n, int64_t ngraphs) {
    return dim == BG_DIM_N ? n : dim == BG_DIM_G ? ngraphs : dim;
}

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

/* Host bytes for a leaf buffer; *tmp set when they were made here (B1T, graph_ptr). */
static const void *leaf_bytes(const BgPlan *p, const BgPlanBuf *pb, const BgBoundLeaves *bd,
                              int leaf, int64_t n, int64_t group_min_rows, size_t *len, void **tmp) {
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
        /* bits of W[K, M] -> [M][ceil(K/32)] */
        int64_t k = t->dim[0], mm = t->dim[1], w = (k + 31) / 32;
        uint32_t *o = bg_xcalloc((size_t)(mm * w) + 1, 4);
        const uint32_t *s = t->data;
        for (int64_t r = 0; r < k; r++)
            for (int64_t c = 0; c < mm; c++)
                if (bg_bit_get(s, t->words_per_row, r, c)) o[c * w + r / 32] |= 1u << (r % 32);
        *tmp = o;
        *len = (size_t)(mm * w) * 4;
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

/* BGNN_EXEC, BGNN_COOP_GRID, BGNN_FEATURES_KERNEL, BGNN_BATCH_KERNEL, BGNN_BLOCKS_THREADS,
 * BGNN_ROW_GROUPS, BGNN_PDL, BGNN_ROWGROUP_TILE and BGNN_SCHED_GROUP_MIN_ROWS (environment) into the
 * instance. */
static bool exec_options(BgGpuRun *r, BgDiagSink *d) {
    r->mode = BG_EXEC_AUTO;
    const char *e = getenv("BGNN_EXEC");
    if (e && *e && !bg_exec_mode_parse(e, &r->mode)) {
        bg_diag_error(d, BG_E_OPTION, "BGNN_EXEC='%.40s': expected auto, coop, graph or launches", e);
        return false;
    }
    const char *gs = getenv("BGNN_COOP_GRID");
    if (gs && *gs) {
        char *end = NULL;
        long long v = strtoll(gs, &end, 10);
        if (!end || *end || v < 1 || v > (1LL << 31) - 1) {
            bg_diag_error(d, BG_E_OPTION, "BGNN_COOP_GRID='%.40s': expected a block count from 1 to 2^31-1", gs);
            return false;
        }
        r->coop_grid_request = v;
    }
    static const char *const fks[] = {"auto", "rows", "tiled", "sparse"}, *const bks[] = {"auto", "layers", "graphs"};
    if (!env_choice("BGNN_FEATURES_KERNEL", fks, 4, &r->features_kernel, d) ||
        !env_choice("BGNN_BATCH_KERNEL", bks, 3, &r->batch_kernel, d))
        return false;
    const char *bt = getenv("BGNN_BLOCKS_THREADS");
    if (bt && *bt) {
        char *end = NULL;
        long long v = strtoll(bt, &end, 10);
        if (!end || *end || v < 32 || v > 1024 || v % 32) {
            bg_diag_error(d, BG_E_OPTION, "BGNN_BLOCKS_THREADS='%.40s': expected a multiple of 32 from 32 to 1024", bt);
            return false;
        }
        r->blocks_threads = (int)v;
    }
    static const char *const rgs[] = {"auto", "on", "off"};
    if (!env_choice("BGNN_ROW_GROUPS", rgs, 3, &r->row_groups, d) || !env_choice("BGNN_PDL", rgs, 3, &r->pdl, d))
        return false;
    const char *rt = getenv("BGNN_ROWGROUP_TILE");
    if (rt && *rt) {
        char *end = NULL;
        long long v = strtoll(rt, &end, 10);
        if (!end || *end || v < 8 || v > BG_PLAN_ROWGROUP_TILE_MAX || v % 8) {
            bg_diag_error(d, BG_E_OPTION, "BGNN_ROWGROUP_TILE='%.40s': expected a multiple of 8 from 8 to %d", rt,
                          BG_PLAN_ROWGROUP_TILE_MAX);
            return false;
        }
        r->rowgroup_tile = (int)v;
    }
    r->sched_group_min_rows = BG_PLAN_GROUP_MIN_ROWS;
    const char *sg = getenv("BGNN_SCHED_GROUP_MIN_ROWS");
    if (sg && *sg) {
        char *end = NULL;
        long long v = strtoll(sg, &end, 10);
        if (!end || *end || v < 0) {
            bg_diag_error(d, BG_E_OPTION, "BGNN_SCHED_GROUP_MIN_ROWS='%.40s': expected a row count >= 0 (0: never group)", sg);
            return false;
        }
        r->sched_group_min_rows = v;
    }
    return true;
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
        size_t es = bg_plan_elem_size(pb->kind);
        if (rows < 0 || pb->width < 0 || (pb->width && (uint64_t)rows > (UINT64_MAX / 8) / (uint64_t)pb->width)) {
            bg_diag_error(d, BG_E_LIMIT, "buffer %d ('%s') of %lld x %lld elements is too large", b,
                          pb->name ? pb->name : bg_plan_role_name(pb->role), (long long)rows,
                          (long long)pb->width);
            goto fail;
        }
        size_t bytes = (size_t)rows * (size_t)pb->width * es;
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
        const void *src = leaf_bytes(p, pb, bd, bd->buf_leaf ? bd->buf_leaf[b] : -1, out->n, out->sched_group_min_rows,
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

static bool launch_prep(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgDiagSink *d);

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
        if (ok && !launch_prep(g, gm, out, d)) {
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

/* ---- launches ---------------------------------------------------------------------------- */
static bool launch_one(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, int i, BgCUstream stream, bool pdl,
                       BgDiagSink *d);
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

/* One launch of fn, grid (gx, gy), on stream.  pdl: with programmatic stream serialization (a
 * kernel of a run after its first, where pdl_on), which may then begin while the one before it
 * ends (its bgnn::pdl_enter waits for that one to finish: templates/bgnn_common.cuh); in a
 * captured graph this is a programmatic edge. */
static BgCUresult launch_kernel(BgGpu *g, BgCUfunction fn, unsigned gx, unsigned gy, unsigned block, BgCUstream stream,
                                void **pv, bool pdl) {
    if (!pdl) return g->cu.cuLaunchKernel(fn, gx, gy, 1, block, 1, 1, 0, stream, pv, NULL);
    BgCUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = BG_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at.value.programmatic_stream_serialization_allowed = 1;
    BgCUlaunchConfig c = {gx, gy, 1, block, 1, 1, 0, stream, &at, 1};
    return g->cu.cuLaunchKernelEx(&c, fn, pv, NULL);
}

/* Row group gi's kernel (plan.h) in place of its launches: grid (1, Y), tiles of node rows (n
 * = the graph's nodes) or of graph rows (n = the batch's graphs). */
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
    unsigned gy = tiles < 65535 ? (unsigned)tiles : 65535u;
    void **pv = model_params(p, r, &nn, &tile, &bar);
    if (rg->csr >= 0) pv[3 + p->nbufs] = &r->csr[rg->csr]; /* the features' CSR, last */
    BgCUresult res = launch_kernel(g, gm->rowgroup_fn[gi], 1, gy, (unsigned)rg->block, stream, pv, pdl);
    free(pv);
    if (res == BG_CUDA_SUCCESS) return true;
    char what[160];
    snprintf(what, sizeof what, "launching %s (%u blocks of %d, tiles of %lld rows)", rg->kernel, gy, rg->block, tile);
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
    if (r->used == BG_EXEC_BLOCKS) return p->rowgroups[gi].rows != BG_ROWS_N;
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
    for (int i = 0, gi = 0; i < p->nlaunches; i++) {
        while (gi < p->nrowgroups && p->rowgroups[gi].first < i) gi++;
        if (gi < p->nrowgroups && p->rowgroups[gi].first == i && use_rowgroup(gm, r, gi)) {
            if (!launch_rowgroup(g, gm, r, gi, stream, pdl && after, d)) return false;
            after = true;
            i += p->rowgroups[gi].count - 1;
            continue;
        }
        if (p->launches[i].prep) continue;
        if (!launch_one(g, gm, r, i, stream, pdl && after, d)) return false;
        after = true;
    }
    return true;
}

/* The prep launches (plan.h: of parameters alone), once, right after the leaves are uploaded;
 * finished before this returns, and so is binding's zeroing of buffers (cuMemsetD32 runs on
 * the legacy stream, which a run on a non-blocking stream would not wait for). */
static bool launch_prep(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, BgDiagSink *d) {
    for (int i = 0; i < gm->plan->nlaunches; i++)
        if (gm->plan->launches[i].prep && !launch_one(g, gm, r, i, NULL, false, d)) return false;
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

/* Launch i of the plan alone: grid = ceil(rows * threads_per_row / block), clamped (the
 * kernels grid-stride over the rest); skipped when there is nothing to do. */
static bool launch_one(BgGpu *g, const BgGpuModel *gm, BgGpuRun *r, int i, BgCUstream stream, bool pdl,
                       BgDiagSink *d) {
    const BgPlanLaunch *L = &gm->plan->launches[i];
    const bool alt = r->use_alt && r->use_alt[i] && gm->alt_fn && gm->alt_fn[i];
    const bool sparse = !alt && r->use_sparse && r->use_sparse[i] && gm->sparse_fn && gm->sparse_fn[i];
    const int64_t rows = bg_plan_rows(L->rows, r->n, r->ngraphs, r->gsz);
    const int64_t tpr = alt ? L->alt_tpr : sparse ? bg_plan_sparse_tpr_rows(gm->plan, L, rows) : L->threads_per_row;
    int64_t th = rows * tpr;
    if (th <= 0) return true;
    const int bs = gm->max_block && L->block_size > gm->max_block[i] ? gm->max_block[i] : L->block_size;
    int64_t grid = (th + bs - 1) / bs;
    if (grid > (1 << 30)) grid = 1 << 30;
    if (L->grid_per_sm > 0 && grid > (int64_t)L->grid_per_sm * g->nsm) grid = (int64_t)L->grid_per_sm * g->nsm;
    long long nn = r->n, ng = r->ngraphs;
    BgCUdeviceptr a[BG_PLAN_MAX_ARGS];
    void *pv[2 + BG_PLAN_MAX_ARGS] = {&nn, &ng};
    for (int k = 0; k < L->nargs; k++) {
        a[k] = sparse && k == 1 ? r->csr[L->args[1]] : r->ptr[L->args[k]];
        pv[2 + k] = &a[k];
    }
    BgCUfunction fn = alt ? gm->alt_fn[i] : sparse ? gm->sparse_fn[i] : gm->fn[i];
    /* the one-wave variant (plan.h) where the grid is one wave of it, at the block size its wave
     * was computed for (a schedule retuned in place, api/jit.c bg_gpu_model_resched, may have
     * changed the launch's) */
    const bool wave = !alt && !sparse && gm->wave_fn && gm->wave_fn[i] && bg_plan_launch_wave(L) &&
                      bs == L->block_size && grid <= gm->wave_grid_max[i];
    if (wave) fn = gm->wave_fn[i];
    BgCUresult res = launch_kernel(g, fn, (unsigned)grid, 1, (unsigned)bs, stream, pv, pdl);
    if (res == BG_CUDA_SUCCESS) return true;
    char what[200];
    snprintf(what, sizeof what, "launching %s%s (%lld blocks of %d)", alt ? L->alt : L->kernel,
             sparse ? BG_PLAN_SPARSE_SUFFIX : wave ? BG_PLAN_WAVE_SUFFIX : "", (long long)grid, bs);
    return bg_cuda_check(&g->cu, res, what, d);
}

static bool enqueue(const Timed *w, BgCUstream stream) {
    if (w->launch >= 0) return launch_one(w->g, w->gm, w->r, w->launch, stream, false, w->d);
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
