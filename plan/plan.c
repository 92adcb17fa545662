/* plan.c - the plan's run-time arithmetic and names: row counts of buffers and launches
 * (bg_plan_rows), the fast aggregation's work schedule (bg_plan_schedule), the phases of the
 * fused kernel, element sizes, and the names the manifest and messages use.  Shared by the
 * code generator and the runtime (plan.h). */
#include "plan.h"

#include <string.h>

int64_t bg_plan_rows(BgRowExpr e, int64_t n, int64_t ngraphs, const BgPlanGraphSize *gs) {
    switch (e.kind) {
    case BG_ROWS_CONST: return e.value;
    case BG_ROWS_N: return n;
    case BG_ROWS_N1: return n + 1;
    case BG_ROWS_G: return ngraphs;
    case BG_ROWS_G1: return ngraphs + 1;
    case BG_ROWS_NNZ: return gs ? gs[e.graph].nnz : 0;
    case BG_ROWS_ITEMS: return gs ? gs[e.graph].nitems : 0;
    case BG_ROWS_ITEMS1: return gs ? gs[e.graph].nitems + 1 : 1;
    case BG_ROWS_SPLITS: return gs && gs[e.graph].nsplit > 1 ? gs[e.graph].nsplit : 1;
    case BG_ROWS_SLOTS1: return gs ? 8 * gs[e.graph].nslots + 1 : 1;
    }
    return 0;
}

static void put_item(int32_t *items, int64_t k, int64_t a, int64_t b, int64_t c, int64_t d) {
    int32_t *it = items + 4 * (k + 1);
    it[0] = (int32_t)a;
    it[1] = (int32_t)b;
    it[2] = (int32_t)c;
    it[3] = (int32_t)d;
}

/* Whether the aligned block of BG_PLAN_GROUP rows starting at b (fewer at the end) becomes
 * one group item: grouping is on (0 < group_min_rows <= n) and every row has few edges. */
static bool small_block(const int64_t *rowptr, int64_t n, int64_t group_min_rows, int64_t b) {
    if (group_min_rows <= 0 || n < group_min_rows) return false;
    for (int64_t r = b; r < n && r < b + BG_PLAN_GROUP; r++)
        if (rowptr[r + 1] - rowptr[r] > BG_PLAN_GROUP_SMALL) return false;
    return true;
}

int64_t bg_plan_schedule(const int64_t *rowptr, int64_t n, int chunk, int64_t group_min_rows, int32_t *items,
                         int64_t *nsplit) {
    int64_t ni = 0, ns = 0;
    if (chunk < 1 || n > INT32_MAX) return -1;
    for (int64_t b = 0; b < n; b += BG_PLAN_GROUP) {
        if (small_block(rowptr, n, group_min_rows, b)) {
            if (items) put_item(items, ni, b, n - b < BG_PLAN_GROUP ? n - b : BG_PLAN_GROUP, 0, -1);
            ni++;
            continue;
        }
        for (int64_t i = b; i < n && i < b + BG_PLAN_GROUP; i++) {
            int64_t d = rowptr[i + 1] - rowptr[i];
            int64_t nk = d <= chunk ? 1 : (d + chunk - 1) / chunk;
            if (ni + nk >= INT32_MAX || nk > INT32_MAX) return -1;
            if (items)
                for (int64_t k = 0; k < nk; k++) put_item(items, ni + k, i, k, nk, nk > 1 ? ns : -1);
            ni += nk;
            ns += nk > 1;
        }
    }
    if (items) {
        items[0] = (int32_t)ni;
        items[1] = (int32_t)ns;
        items[2] = chunk;
        items[3] = 0;
    }
    *nsplit = ns;
    return ni;
}

int64_t bg_plan_graph_group_min_rows(const BgPlanGraph *g, int64_t runtime_min_rows) {
    return g->group > 0 ? 1 : g->group < 0 ? 0 : runtime_min_rows;
}

int64_t bg_plan_fbt_threads_per_row(int64_t cols, int64_t tpt) {
    return tpt * (cols <= 32 ? (cols + 31) / 32 : (cols + 63) / 64);
}

int64_t bg_plan_fb_csr_lanes(int64_t cols) {
    int64_t g = 2;
    while (g < 32 && g * 8 < cols) g *= 2;
    return g;
}

int64_t bg_plan_fb_csr_lanes_rows(int64_t cols, int64_t rows) {
    const int64_t g = bg_plan_fb_csr_lanes(cols);
    return g < 32 && rows < BG_PLAN_FB_CSR_WIDE / g ? 2 * g : g;
}

int64_t bg_plan_bmm_tc_threads_per_row(int64_t cols) {
    if (cols < 1) cols = 1;
    /* TcSmallShape's tiles up to 128 columns (the kernel takes TcShape's where those are as
     * many as the SMs, on fewer blocks), TcShape's 128 x 256 above */
    const int64_t bm = cols > 128 ? 128 : cols > 64 ? 32 : cols > 32 ? 64 : 128;
    const int64_t bn = cols > 128 ? 256 : cols > 64 ? 128 : cols > 32 ? 64 : 16 * ((cols + 15) / 16);
    return (256 * ((cols + bn - 1) / bn) + bm - 1) / bm;
}

int bg_plan_wgs_tile_cols(int64_t cols) { /* wgmma_b1.cuh WgShape<M>::BN */
    return cols > 128 ? 256 : cols > 64 ? 128 : cols > 32 ? 64 : cols > 16 ? 32 : cols > 8 ? 16 : 8;
}

int64_t bg_plan_wgs_threads_per_row(int64_t cols) {
    if (cols < 1) cols = 1;
    const int64_t bn = bg_plan_wgs_tile_cols(cols);
    /* a block a row and column tile: at least as many blocks as tiles whatever the rows (3 a
     * 128-row tile's row gave 85 blocks to 2708 x 1024's 88 tiles); grid_per_sm clamps it */
    return BG_PLAN_WGS_BLOCK * ((cols + bn - 1) / bn);
}

int bg_plan_wgs_smem(int64_t cols) { /* bmm_bb_wgs.cuh WgsShape<M>::BYTES */
    const int bn = bg_plan_wgs_tile_cols(cols < 1 ? 1 : cols), rb = bn < 64 ? 64 : bn;
    const int stage = (128 + rb) * 64, ones = BG_PLAN_WGS_STAGES * stage, cnt = ones + 256;
    const int bars = cnt + 4 * 4 * (128 + rb);
    return bars + 16 * BG_PLAN_WGS_STAGES + 1024;
}

bool bg_plan_prep_output(const BgPlan *p, int b) {
    for (int i = 0; i < p->nlaunches; i++)
        if (p->launches[i].prep && p->launches[i].args[0] == b) return true;
    return false;
}

bool bg_plan_has_smem(const BgPlan *p) {
    for (int i = 0; i < p->nlaunches; i++)
        if (p->launches[i].smem > 0) return true;
    return false;
}

bool bg_plan_blocks_ok(const BgPlan *p) {
    if (!p->uses_graph_ptr || p->nlaunches == 0 || p->nbufs > BG_PLAN_FUSED_MAX_BUFS) return false;
    if (bg_plan_has_smem(p)) return false; /* its own blocks and shared memory (the wgmma product) */
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        BgRowKind k = l->rows.kind;
        if (!l->prep && k != BG_ROWS_N && k != BG_ROWS_G && k != BG_ROWS_ITEMS) return false;
    }
    return true;
}

bool bg_plan_rowgroup_launch_ok(const BgPlan *p, const BgPlanLaunch *l, BgRowKind kind) {
    if (kind != BG_ROWS_N && kind != BG_ROWS_G) return false;
    if (l->prep || l->rows.kind != kind || !l->op || (l->alt && bg_plan_sparse_tpr(p, l) <= 0)) return false;
    if (l->smem) return false; /* its own blocks and shared memory (the wgmma product) */
    if (kind == BG_ROWS_G && l->alt) return false; /* sparse variants read the features' rows */
    static const char *const gathers[] = {"bspmm", "bspmm_mm", "readout"};
    for (size_t k = 0; k < sizeof gathers / sizeof gathers[0]; k++)
        if (strcmp(l->op, gathers[k]) == 0) return false;
    for (int k = 0; k < l->nargs; k++) {
        const BgPlanBuf *b = &p->bufs[l->args[k]];
        if (b->role == BG_ROLE_GRAPH || b->role == BG_ROLE_GRAPH_PTR) return false;
        if (b->rows.kind != kind && b->rows.kind != BG_ROWS_CONST) return false;
    }
    return true;
}

bool bg_plan_rowgroup_lead_ok(const BgPlan *p, const BgPlanLaunch *l, BgRowKind kind) {
    if (l->prep || l->alt || l->smem || !l->op || l->nargs < 1) return false;
    const BgPlanBuf *y = &p->bufs[l->args[0]];
    if (y->role != BG_ROLE_TEMP || y->rows.kind != kind) return false;
    if (kind == BG_ROWS_N)
        return strcmp(l->op, "bspmm") == 0 && (l->rows.kind == BG_ROWS_N || l->rows.kind == BG_ROWS_ITEMS);
    return kind == BG_ROWS_G && strcmp(l->op, "readout") == 0 && l->rows.kind == BG_ROWS_G;
}

bool bg_plan_rowgroup_ok(const BgPlan *p, int first, int count, BgRowKind kind, int *bad) {
    int members = 0, lead = -1;
    *bad = -1;
    for (int j = first; j < first + count; j++) {
        const BgPlanLaunch *l = &p->launches[j];
        if (l->prep) continue;
        *bad = j;
        if (members == 0 && bg_plan_rowgroup_lead_ok(p, l, kind)) {
            lead = j;
        } else if (!bg_plan_rowgroup_launch_ok(p, l, kind)) {
            return false;
        } else if (lead >= 0) {
            for (int k = 1; k < p->launches[lead].nargs; k++)
                if (p->launches[lead].args[k] == l->args[0]) return false; /* it writes what the gather reads */
        }
        members++;
    }
    *bad = -1;
    return members >= 2;
}

int bg_plan_rowgroup_members(const BgPlan *p, const BgPlanRowGroup *g) {
    int k = 0;
    for (int i = g->first; i < g->first + g->count; i++) k += !p->launches[i].prep;
    return k;
}

bool bg_plan_row_value(const BgPlan *p, int b) {
    return b >= 0 && b < p->nbufs && p->bufs[b].rank == 1 && p->bufs[b].kind == BG_BUF_F32 &&
           p->bufs[b].rows.kind == BG_ROWS_N;
}

int bg_plan_warp_group_of(const BgPlan *p, int b) {
    for (int i = 0; i < p->nrowgroups; i++) {
        const BgPlanRowGroup *q = &p->rowgroups[i];
        if (q->wide && p->launches[q->first].args[0] == b) return i; /* the wide form's aggregation */
        for (int j = q->first; q->warp && j < q->first + q->count; j++)
            if (!p->launches[j].prep && p->launches[j].args[0] == b) return i;
    }
    return -1;
}

bool bg_plan_rowgroup_wide_ok(const BgPlan *p, const BgPlanRowGroup *g) {
    if (g->counters < 0 || g->counters >= p->nbufs || g->rows != BG_ROWS_N || g->csr >= 0 || g->warp ||
        g->block != 256)
        return false;
    const BgPlanLaunch *a = &p->launches[g->first];
    if (a->prep || !a->op || strcmp(a->op, "bspmm") != 0 || a->nargs != 7 || a->rows.kind != BG_ROWS_N ||
        a->block_size != 256 || a->threads_per_row != 256)
        return false;
    const BgPlanBuf *y = &p->bufs[a->args[0]], *rp = &p->bufs[a->args[1]], *x = &p->bufs[a->args[5]],
                    *cnt = &p->bufs[g->counters];
    if (y->kind != BG_BUF_F32 || y->rows.kind != BG_ROWS_N || !bg_plan_wide_outs_cols(y->cols) || y->width != y->cols ||
        x->kind != BG_BUF_F32 || x->rows.kind != BG_ROWS_N || x->width != y->cols || rp->role != BG_ROLE_GRAPH ||
        rp->garr != BG_GARR_ROWPTR)
        return false;
    static const BgGraphArr garr[7] = {0, BG_GARR_ROWPTR, BG_GARR_COL, BG_GARR_ROWF, BG_GARR_COLF, 0, BG_GARR_ORDER};
    for (int k = 1; k < 7; k++) /* the aggregation's arrays, all of its graph */
        if (k != 5 && (p->bufs[a->args[k]].role != BG_ROLE_GRAPH || p->bufs[a->args[k]].garr != garr[k] ||
                       p->bufs[a->args[k]].graph != rp->graph))
            return false;
    if (cnt->role != BG_ROLE_GRAPH || cnt->garr != BG_GARR_DONE || cnt->rows.kind != BG_ROWS_N || cnt->graph != rp->graph)
        return false;
    int bins = 0, ams = 0;
    for (int i = g->first + 1; i < g->first + g->count; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (l->prep) continue;
        if (!l->op || l->nargs != 2 || l->args[1] != a->args[0] || l->rows.kind != BG_ROWS_N) return false;
        const BgPlanBuf *o = &p->bufs[l->args[0]];
        if (o->rows.kind != BG_ROWS_N) return false;
        if (strcmp(l->op, "bin") == 0 && o->kind == BG_BUF_B1 && o->cols == y->cols && o->width == (y->cols + 31) / 32)
            bins++;
        else if (strcmp(l->op, "absmean") == 0 && o->kind == BG_BUF_F32 && o->width == 1 && l->fp.kind == BG_FP_LANES &&
                 l->fp.split == 256)
            ams++;
        else return false;
    }
    return bins <= 1 && ams <= 1;
}

bool bg_plan_buf_kept(const BgPlan *p, int b) {
    if (b < 0 || b >= p->nbufs) return true;
    const int gi = bg_plan_warp_group_of(p, b);
    return bg_plan_buf_kept_in(p, gi < 0 ? NULL : &p->rowgroups[gi], b);
}

bool bg_plan_buf_kept_in(const BgPlan *p, const BgPlanRowGroup *g, int b) {
    if (!g || b < 0 || b >= p->nbufs || p->bufs[b].role != BG_ROLE_TEMP) return true;
    for (int q = 0; q < p->noutputs; q++)
        if (p->outputs[q].buf == b) return true;
    for (int j = 0; j < p->nlaunches; j++) {
        const BgPlanLaunch *l = &p->launches[j];
        const bool member = j >= g->first && j < g->first + g->count && !l->prep;
        const bool gather = l->op && (strcmp(l->op, "bspmm") == 0 || strcmp(l->op, "readout") == 0); /* at other rows */
        /* a member reads b in registers: as its main operand, or as a per-row factor (f32[N]) */
        for (int k = 1; k < l->nargs; k++)
            if (l->args[k] == b && (!member || gather || (k != 1 && !bg_plan_row_value(p, b)))) return true;
    }
    return false;
}

bool bg_plan_graph_stage(const BgPlan *p, int *rowptr, int *col) {
    int rp = -1, cl = -1;
    if (!p->blocks) return false;
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (l->prep) continue;
        const bool agg = l->op && strcmp(l->op, "bspmm") == 0;
        if (l->op && strcmp(l->op, "bspmm_mm") == 0) return false;
        for (int k = 1; k < l->nargs; k++) {
            const BgPlanBuf *b = l->args[k] >= 0 ? &p->bufs[l->args[k]] : NULL;
            if (!b || b->role != BG_ROLE_GRAPH) continue;
            if (!agg) return false;
            switch (b->garr) {
            case BG_GARR_ROWPTR:
                if (rp >= 0 && rp != l->args[k]) return false;
                rp = l->args[k];
                break;
            case BG_GARR_COL:
                if (cl >= 0 && cl != l->args[k]) return false;
                cl = l->args[k];
                break;
            default: break; /* factors and weights; the schedule's arrays go unused in the kernel */
            }
        }
    }
    if (rp < 0 || cl < 0) return false;
    if (rowptr) *rowptr = rp;
    if (col) *col = cl;
    return true;
}

/* Could b be held in shared memory (bg_plan_graph_staged_buf, before the budget)? */
static bool graph_stageable(const BgPlan *p, int b) {
    const BgPlanBuf *pb = &p->bufs[b];
    if (pb->role != BG_ROLE_TEMP || pb->kind != BG_BUF_B1 || pb->rank != 2 || pb->rows.kind != BG_ROWS_N ||
        pb->width < 1 || pb->width > 4 || !bg_plan_buf_kept(p, b))
        return false;
    for (int q = 0; q < p->noutputs; q++)
        if (p->outputs[q].buf == b) return false;
    bool read = false;
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        for (int k = 1; k < l->nargs; k++)
            if (l->args[k] == b) {
                if (l->prep || (l->op && strcmp(l->op, "readout") == 0)) return false;
                read = true;
            }
    }
    return read;
}

bool bg_plan_graph_row_staged(const BgPlan *p, int b) {
    if (!p->blocks || b < 0 || b >= p->nbufs) return false;
    const BgPlanBuf *pb = &p->bufs[b];
    if (pb->role != BG_ROLE_TEMP || (pb->kind != BG_BUF_F32 && pb->kind != BG_BUF_B1) || pb->rank != 2 ||
        pb->rows.kind != BG_ROWS_G || pb->width < 1)
        return false;
    for (int q = 0; q < p->noutputs; q++) /* a temporary of graph rows: no prep launch (parameters alone) reads it */
        if (p->outputs[q].buf == b) return false;
    long long words = 0;
    for (int q = 0; q <= b; q++) {
        const BgPlanBuf *o = &p->bufs[q];
        if (o->role == BG_ROLE_TEMP && o->rows.kind == BG_ROWS_G && o->rank == 2 && (o->kind == BG_BUF_F32 || o->kind == BG_BUF_B1))
            words += (long long)o->width;
    }
    return words <= BG_PLAN_GROW_WORDS;
}

bool bg_plan_graph_staged_buf(const BgPlan *p, int b) {
    if (b < 0 || b >= p->nbufs || !bg_plan_graph_stage(p, NULL, NULL) || !graph_stageable(p, b)) return false;
    long long words = 0;
    for (int q = 0; q <= b; q++)
        if (graph_stageable(p, q)) words += (long long)BG_PLAN_GSTAGE_ROWS * p->bufs[q].width;
    return words <= BG_PLAN_GSTAGE_WORDS;
}

int bg_plan_phases(const BgPlan *p, int *phase) {
    int cur = -1;
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        phase[i] = -1;
        if (l->prep) continue;
        bool dep = cur < 0;
        for (int k = 1; k < l->nargs && !dep; k++)
            for (int j = i - 1; j >= 0 && (phase[j] == cur || phase[j] < 0); j--)
                if (phase[j] == cur && p->launches[j].args[0] == l->args[k]) dep = true;
        if (dep) cur++;
        phase[i] = cur;
    }
    return cur + 1;
}

size_t bg_plan_elem_size(BgBufKind k) { return k == BG_BUF_I64 ? 8 : 4; }

size_t bg_plan_buf_trailer_bytes(const BgPlanBuf *b, int64_t rows) {
    return b->kind == BG_BUF_B1T && rows > 0 ? (size_t)rows * 4 : 0;
}

size_t bg_plan_buf_bytes(const BgPlanBuf *b, int64_t rows) {
    if (rows < 0) return 0;
    return (size_t)rows * (size_t)b->width * bg_plan_elem_size(b->kind) + bg_plan_buf_trailer_bytes(b, rows);
}

const char *bg_plan_kind_name(BgBufKind k) {
    static const char *const names[] = {"f32", "b1", "b1t", "i64", "i32"};
    return (unsigned)k < 5 ? names[k] : "?";
}
const char *bg_plan_role_name(BgBufRole r) {
    static const char *const names[] = {"temp", "input", "param", "param_scale", "graph",
                                        "graph_ptr"};
    return (unsigned)r < 6 ? names[r] : "?";
}
const char *bg_plan_garr_name(BgGraphArr g) {
    static const char *const names[BG_GARR_COUNT] = {"rowptr", "col",   "rowf",    "colf",
                                                     "w",      "items", "partial", "done",
                                                     "order",  "slots"};
    return (unsigned)g < BG_GARR_COUNT ? names[g] : "?";
}


bool bg_arch_parse(const char *arch, int *sm) {
    if (!arch || strncmp(arch, "sm_", 3) != 0) return false;
    const char *p = arch + 3;
    int v = 0, nd = 0;
    for (; *p >= '0' && *p <= '9'; p++, nd++) {
        if (nd >= 4) return false;
        v = v * 10 + (*p - '0');
    }
    if (nd < 2) return false;
    if ((*p == 'a' || *p == 'f') && p[1] == '\0') p++;
    if (*p != '\0') return false;
    *sm = v;
    return true;
}

bool bg_plan_scratch_buf(const BgPlanBuf *b) {
    return b->role == BG_ROLE_GRAPH && (b->garr == BG_GARR_PARTIAL || b->garr == BG_GARR_DONE);
}

/* Is launch i a member of a row group, other than the first launch of one in the wide form
 * (whose kernel runs at that launch's place)? */
static bool in_rowgroup(const BgPlan *p, int i) {
    for (int g = 0; g < p->nrowgroups; g++)
        if (i >= p->rowgroups[g].first && i < p->rowgroups[g].first + p->rowgroups[g].count)
            return !(p->rowgroups[g].wide && i == p->rowgroups[g].first);
    return false;
}

/* The row group in the wide form that launch i opens, or NULL. */
static const BgPlanRowGroup *wide_group_at(const BgPlan *p, int i) {
    for (int g = 0; g < p->nrowgroups; g++)
        if (p->rowgroups[g].wide && p->rowgroups[g].first == i) return &p->rowgroups[g];
    return NULL;
}

/* Does launch a write a buffer that launch b reads or writes (or b one that a reads)? */
static bool launches_conflict(const BgPlan *p, const BgPlanLaunch *a, const BgPlanLaunch *b) {
    for (int x = 0; x < a->nargs; x++)
        for (int y = 0; y < b->nargs; y++) {
            if (a->args[x] != b->args[y]) continue;
            const bool aw = x == 0 || bg_plan_scratch_buf(&p->bufs[a->args[x]]);
            const bool bw = y == 0 || bg_plan_scratch_buf(&p->bufs[b->args[y]]);
            if (aw || bw) return true;
        }
    return false;
}

bool bg_plan_launch_beside_prev(const BgPlan *p, int i) {
    if (i < 0 || i >= p->nlaunches || p->launches[i].prep || in_rowgroup(p, i)) return false;
    int j = i - 1;
    while (j >= 0 && p->launches[j].prep) j--;
    if (j < 0 || in_rowgroup(p, j)) return false;
    /* j itself beside the kernel before it would not have waited for that one when it let i
     * launch: i could read that one's output unfinished */
    if (bg_plan_launch_beside_prev(p, j)) return false;
    const BgPlanRowGroup *w = wide_group_at(p, i); /* its kernel: every launch of the group */
    for (int k = i; k < (w ? w->first + w->count : i + 1); k++)
        if (!p->launches[k].prep && launches_conflict(p, &p->launches[k], &p->launches[j])) return false;
    return true;
}

bool bg_plan_launch_lets_next(const BgPlan *p, int i) {
    if (i < 0 || i >= p->nlaunches || p->launches[i].prep) return false;
    int k = i + 1;
    while (k < p->nlaunches && p->launches[k].prep) k++;
    return k < p->nlaunches && bg_plan_launch_beside_prev(p, k);
}

bool bg_plan_launch_wave(const BgPlanLaunch *l) {
    return l->op && strcmp(l->op, "bspmm_mm") == 0 && l->block_size == BG_PLAN_WAVE_BLOCK && l->threads_per_row == 32 &&
           !l->prep;
}

int bg_plan_launch_slots_graph(const BgPlan *p, const BgPlanLaunch *l) {
    if (!l->op || (strcmp(l->op, "bspmm_mm") != 0 && strcmp(l->op, "bspmm") != 0)) return -1;
    for (int k = 1; k < l->nargs; k++) {
        const BgPlanBuf *b = &p->bufs[l->args[k]];
        if (b->role == BG_ROLE_GRAPH && b->garr == BG_GARR_SLOTS) return b->graph;
    }
    return -1;
}

int bg_plan_wide_threads_per_row(int64_t cols) {
    const int64_t k = (cols + 255) / 256;
    return k > 0 ? (int)(((cols + k - 1) / k + 31) / 32 * 32) : 32;
}

bool bg_plan_wide_outs_cols(int64_t cols) {
    return cols >= BG_PLAN_WIDE_MIN_COLS && cols <= BG_PLAN_WIDE_OUTS_MAX_COLS && bg_plan_wide_threads_per_row(cols) == 256;
}

int bg_plan_sparse_tpr(const BgPlan *p, const BgPlanLaunch *l) {
    if (l->alt) return (int)bg_plan_fb_csr_lanes(p->bufs[l->args[0]].cols);
    return bg_plan_launch_row_csr(p, l) ? BG_PLAN_SPARSE_ROW_TPR : 0;
}

int bg_plan_sparse_tpr_rows(const BgPlan *p, const BgPlanLaunch *l, int64_t rows) {
    if (l->alt) return (int)bg_plan_fb_csr_lanes_rows(p->bufs[l->args[0]].cols, rows);
    return bg_plan_sparse_tpr(p, l);
}

bool bg_plan_launch_row_csr(const BgPlan *p, const BgPlanLaunch *l) {
    if (l->alt || !l->op || l->nargs < 2) return false;
    const bool bin = strcmp(l->op, "bin") == 0 || strcmp(l->op, "bin.center") == 0, mean = strcmp(l->op, "rowmean") == 0;
    /* standardize: lanes(32) from registers, templates/rowwise.cuh standardize_csr */
    const bool std = strcmp(l->op, "standardize") == 0;
    if (!bin && !mean && !std) return false;
    const BgPlanBuf *x = &p->bufs[l->args[1]], *y = &p->bufs[l->args[0]];
    if (x->role != BG_ROLE_INPUT || x->kind != BG_BUF_F32 || x->width < 1 || x->width > BG_PLAN_ROW_CSR_MAX_COLS)
        return false;
    if (std)
        return l->nargs == 2 && l->fp.kind == BG_FP_LANES && l->fp.split == 32 && x->width >= 2 &&
               x->width <= BG_PLAN_ROW_CSR_REGS_MAX && y->kind == BG_BUF_F32 && y->width == x->width;
    return bin ? y->kind == BG_BUF_B1 && y->cols == x->width : y->kind == BG_BUF_F32 && y->width == 1;
}

bool bg_plan_fused_csr_launch(const BgPlan *p, const BgPlanLaunch *l, int b) {
    return b >= 0 && !l->prep && l->alt && l->nargs > 1 && l->args[1] == b && bg_plan_sparse_tpr(p, l) > 0;
}

int bg_plan_fused_csr(const BgPlan *p) {
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (l->nargs > 1 && p->bufs[l->args[1]].role == BG_ROLE_INPUT && bg_plan_fused_csr_launch(p, l, l->args[1]))
            return l->args[1];
    }
    return -1;
}
