/* stats.c - what a plan costs per run (bgnnc --stats): kernels, launches, grid-wide syncs,
 * device buffers, and the bytes each launch must move at least (every operand buffer read
 * once, the output written once), as a formula in N (nodes), E (graph entries, self loops
 * counted per graph declaration) and G (graphs), and evaluated for given sizes.  This is the
 * compulsory traffic: the floor the kernels are measured against; with the launch floor of
 * each execution form on a reference GPU, the estimated floor of a run; and from the device
 * memory, the largest graph an H100 / H200 holds at the sizes' entries per node (the table of
 * devices below).  bg_plan_stats_json: the same numbers as JSON (coefficients of 1, N, E, G and
 * their value at the sizes). */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of a buffer as coefficients of (1, N, E, G). */
typedef struct {
    double c, n, e, g;
} Cost;

static Cost buf_cost(const BgPlan *p, const BgPlanBuf *b, int64_t n_self) {
    double per_row = (double)b->width * (double)bg_plan_elem_size(b->kind);
    Cost k = {0, 0, 0, 0};
    switch (b->rows.kind) {
    case BG_ROWS_CONST: k.c = per_row * (double)b->rows.value; break;
    case BG_ROWS_N: k.n = per_row; break;
    case BG_ROWS_N1: k.n = per_row; k.c = per_row; break;
    case BG_ROWS_G: k.g = per_row; break;
    case BG_ROWS_G1: k.g = per_row; k.c = per_row; break;
    case BG_ROWS_ITEMS:  /* about one item per row (rows longer than the chunk add a few) */
    case BG_ROWS_ITEMS1:
    case BG_ROWS_SPLITS: /* split rows: at most N / chunk; counted as N / 2048 */
        if (b->rows.kind == BG_ROWS_SPLITS) k.n = per_row / 2048.0, k.c = per_row;
        else k.n = per_row, k.c = b->rows.kind == BG_ROWS_ITEMS1 ? per_row : 0;
        break;
    case BG_ROWS_SLOTS1: /* 8 entries a slot: about one a row, the last slot's padding and 7 a hub */
        k.n = per_row, k.c = 9 * per_row;
        break;
    case BG_ROWS_NNZ:
        k.e = per_row;
        /* a graph with self loops has up to N more entries */
        if (b->rows.graph >= 0 && b->rows.graph < p->ngraphs && p->graphs[b->rows.graph].self_loops)
            k.n = per_row * (double)n_self;
        break;
    }
    return k;
}

/* A B1T buffer's popcount trailer (plan.h; its rows are a constant). */
static double b1t_trailer(const BgPlanBuf *b) {
    return b->rows.kind == BG_ROWS_CONST ? (double)bg_plan_buf_trailer_bytes(b, b->rows.value) : 0.0;
}

/* The compulsory bytes of one launch: every buffer it reads or writes, once (a B1T weight's
 * popcounts only for the wgmma product, the launch with smem, which reads them). */
static Cost launch_cost(const BgPlan *p, const BgPlanLaunch *l) {
    Cost k = {0, 0, 0, 0};
    for (int a = 0; a < l->nargs; a++) {
        Cost b = buf_cost(p, &p->bufs[l->args[a]], 1);
        k.c += b.c; k.n += b.n; k.e += b.e; k.g += b.g;
        if (l->smem) k.c += b1t_trailer(&p->bufs[l->args[a]]);
    }
    return k;
}

static double eval(Cost k, int64_t n, int64_t e, int64_t g) {
    return k.c + k.n * (double)n + k.e * (double)e + k.g * (double)g;
}

static void fmt_cost(BgStrBuf *s, Cost k) {
    bool any = false;
    if (k.n) { bg_sb_printf(s, "%.0f*N", k.n); any = true; }
    if (k.e) { bg_sb_printf(s, "%s%.0f*E", any ? " + " : "", k.e); any = true; }
    if (k.g) { bg_sb_printf(s, "%s%.0f*G", any ? " + " : "", k.g); any = true; }
    if (k.c || !any) bg_sb_printf(s, "%s%.0f", any ? " + " : "", k.c);
}

/* The estimated floor of a run (issue 15): the launch floor of the plan's execution forms plus
 * its compulsory bytes at the DRAM bandwidth of a reference GPU of the plan's architecture.
 * Only sm_90 has one, with the figures measured on this project's H100 SXM (docs/performance.md:
 * an empty launch about 4.5 us, each further node of a CUDA graph 0.78 us, a grid-wide sync
 * 1.1 us; 3.35 TB/s).  The dependent-load chains inside each phase and instruction issue come
 * on top: a floor, not a prediction. */
typedef struct {
    const char *arch, *gpu;
    double bytes_per_s, launch_us, node_us, sync_us;
} FloorRef;
static const FloorRef *floor_ref(const char *arch) {
    static const FloorRef refs[] = {{"sm_90", "H100 SXM", 3.35e12, 4.5, 0.78, 1.1}};
    for (size_t i = 0; arch && i < sizeof refs / sizeof refs[0]; i++)
        if (strncmp(arch, refs[i].arch, 5) == 0) return &refs[i]; /* sm_90 and sm_90a */
    return NULL;
}
typedef struct {
    double bytes_us, graph_us, fused_us, blocks_us; /* fused_us / blocks_us: < 0 when the plan has none;
                                                     * graph_us, blocks_us with their runs' bytes */
} Floor;
static Floor plan_floor(const FloorRef *r, const BgPlan *p, int nkernels, int nsyncs, double bytes,
                        double graph_bytes, double blocks_bytes) {
    Floor f;
    f.bytes_us = bytes / r->bytes_per_s * 1e6;
    f.graph_us = (nkernels > 0 ? r->launch_us + r->node_us * (double)(nkernels - 1) : 0.0) +
                 graph_bytes / r->bytes_per_s * 1e6;
    f.fused_us = p->fused ? r->launch_us + r->sync_us * (double)nsyncs + f.bytes_us : -1.0;
    f.blocks_us = p->blocks ? r->launch_us + blocks_bytes / r->bytes_per_s * 1e6 : -1.0;
    return f;
}

/* The largest graph one device holds for a plan (issue 14, "on paper"): its buffers (the
 * device memory line: graph arrays, inputs, parameters, every intermediate) at the sizes' graph
 * entries per node and graph count, in the memory a device leaves after its CUDA context.
 * H100: cuMemGetInfo's free bytes with a context on this project's H100 80GB HBM3
 * (docs/logs/gpu_examples_h100_2026-11-25_final.log: 84,458,799,104 of 85,017,493,504); H200:
 * about 139 GiB, the figure the project's device tool gives for its H200s (the H100's "about
 * 78 GiB" there is the measured free bytes above), not measured here.  Not counted: the features' CSR
 * the runtime adds where they are sparse (8 bytes a stored value and about 8 a row) and the
 * cubin (well under a MB). */
typedef struct {
    const char *key, *gpu;
    double bytes;
} DeviceMem;
static const DeviceMem device_mems[] = {{"h100_80gb", "H100 80GB", 84458799104.0},
                                        {"h200_141gb", "H200 141GB (about 139 GiB free)", 139.0 * 1073741824.0}};
enum { N_DEVICE_MEMS = (int)(sizeof device_mems / sizeof device_mems[0]) };
static double capacity_nodes(Cost mem, double per_node_entries, int64_t g, double bytes) {
    const double per = mem.n + mem.e * per_node_entries, room = bytes - mem.c - mem.g * (double)g;
    return per > 0 && room > 0 ? (double)(int64_t)(room / per) : 0.0;
}
static double entries_per_node(int64_t n, int64_t e) {
    return n > 0 ? (double)e / (double)n : 0.0;
}

/* Launches of parameters alone (run once at binding; plan.h). */
static int n_prep(const BgPlan *p) {
    int k = 0;
    for (int i = 0; i < p->nlaunches; i++) k += p->launches[i].prep;
    return k;
}

/* Kernels of a CUDA-graph run on n nodes in g graphs: the non-prep launches, a row group's one
 * kernel in place of its launches where the runtime runs it by default (plan.h; a group of
 * graph rows taken as run when the graphs' mean size, ceil(n / g), is within its bound: the
 * runtime looks at the largest). */
static bool group_runs(const BgPlan *p, int i, int64_t n, int64_t g) {
    const int64_t mean = g > 0 ? (n + g - 1) / g : n;
    return n <= BG_PLAN_ROWGROUP_MAX_NODES &&
           (p->rowgroups[i].rows != BG_ROWS_G || mean <= BG_PLAN_ROWGROUP_GRAPH_MAX_NODES);
}
static int graph_kernels(const BgPlan *p, int64_t n, int64_t g) {
    int k = p->nlaunches - n_prep(p);
    for (int i = 0; i < p->nrowgroups; i++)
        if (group_runs(p, i, n, g)) k -= bg_plan_rowgroup_members(p, &p->rowgroups[i]) - 1;
    return k;
}

/* The compulsory bytes of a run on n nodes in g graphs: each launch's, except that a warp-rows
 * group or one in the wide form that runs there moves each buffer its members read and none of
 * them writes once (each such group, again), and each result it keeps (bg_plan_buf_kept) once: its other values never
 * leave registers (the wide form's aggregation: but for its long rows, not counted).  Such a group
 * runs in a CUDA-graph run where the runtime runs its kernel (plan.h; group_runs), and a
 * warp-rows group in the per-graph kernel (per_graph) where it is of node rows. */
static Cost run_cost(const BgPlan *p, int64_t n, int64_t g, bool per_graph) {
    Cost k = {0, 0, 0, 0};
    int *seen = bg_xcalloc((size_t)p->nbufs + 1, sizeof(int)); /* 1 + the group that moved it */
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        if (l->prep) continue;
        const BgPlanRowGroup *wg = NULL;
        for (int q = 0; q < p->nrowgroups; q++) {
            const BgPlanRowGroup *rg = &p->rowgroups[q];
            if (i < rg->first || i >= rg->first + rg->count) continue;
            if (rg->warp ? (per_graph ? rg->rows == BG_ROWS_N : group_runs(p, q, n, g))
                         : rg->wide && !per_graph && group_runs(p, q, n, g))
                wg = rg;
        }
        if (!wg) {
            Cost b = launch_cost(p, l);
            k.c += b.c; k.n += b.n; k.e += b.e; k.g += b.g;
            continue;
        }
        const int gid = 1 + (int)(wg - p->rowgroups);
        for (int a = 0; a < l->nargs; a++) {
            const int b = l->args[a];
            bool inside = false; /* written by a member */
            for (int j = wg->first; j < wg->first + wg->count; j++)
                inside |= !p->launches[j].prep && p->launches[j].args[0] == b;
            if (seen[b] == gid || (a == 0 ? !bg_plan_buf_kept(p, b) : inside)) continue;
            seen[b] = gid; /* once a group: another group moves it again */
            Cost c = buf_cost(p, &p->bufs[b], 1);
            k.c += c.c; k.n += c.n; k.e += c.e; k.g += c.g;
        }
    }
    free(seen);
    return k;
}

char *bg_plan_stats(const BgPlan *p, int64_t n, int64_t e, int64_t g) {
    BgStrBuf s = {0};
    Cost total = {0, 0, 0, 0}, mem = {0, 0, 0, 0};
    for (int i = 0; i < p->nbufs; i++) {
        Cost k = buf_cost(p, &p->bufs[i], 1);
        mem.c += k.c + b1t_trailer(&p->bufs[i]); mem.n += k.n; mem.e += k.e; mem.g += k.g;
    }
    bg_sb_printf(&s, "model %s (%s)%s\n", p->model, p->arch ? p->arch : "no arch",
                 p->fp_strict ? ", --fp-strict" : "");
    int nprep = n_prep(p), nsyncs = 0;
    if (p->fused) {
        int *phase = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(int));
        int nph = bg_plan_phases(p, phase);
        free(phase);
        nsyncs = nph > 0 ? nph - 1 : 0;
        bg_sb_printf(&s, "kernels 1 fused (%s: %d phases; %d separate kernels kept as the fallback), "
                         "launches per run 1, grid-wide syncs %d, device buffers %d, graph tables %d\n",
                     p->fused_kernel, nph, p->nlaunches - nprep, nsyncs, p->nbufs, p->ngraphs);
    } else {
        bg_sb_printf(&s, "kernels %d, launches per run %d, grid-wide syncs 0, device buffers %d, graph tables %d\n",
                     p->nlaunches - nprep, p->nlaunches - nprep, p->nbufs, p->ngraphs);
    }
    if (p->blocks)
        bg_sb_printf(&s, "batches: per-graph kernel %s (a block of %d threads runs the whole model for one graph; "
                         "1 launch per run for a block-diagonal batch of graphs up to %d nodes)\n",
                     p->blocks_kernel, p->blocks_block, BG_PLAN_BLOCKS_MAX_NODES);
    if (p->nrowgroups) {
        bg_sb_printf(&s, "row groups: %d (", p->nrowgroups);
        for (int i = 0; i < p->nrowgroups; i++)
            bg_sb_printf(&s, "%s%s: %d launches%s", i ? ", " : "", p->rowgroups[i].kernel,
                         bg_plan_rowgroup_members(p, &p->rowgroups[i]),
                         p->rowgroups[i].wide ? " (wide: the aggregation's kernel)"
                         : p->rowgroups[i].csr >= 0 ? " (sparse features)"
                         : p->rowgroups[i].rows == BG_ROWS_G ? (p->rowgroups[i].warp ? " (graph rows, warp rows)" : " (graph rows)")
                         : p->rowgroups[i].warp ? " (warp rows)"
                                                : "");
        bg_sb_printf(&s, "), each one kernel over tiles of rows on graphs up to %d nodes (of graph rows: batches of "
                         "graphs up to %d nodes): %d kernels a CUDA-graph run at these sizes (with sparse features; "
                         "graph-row groups counted for graphs of N/G nodes, the runtime looks at the largest)\n",
                     BG_PLAN_ROWGROUP_MAX_NODES, BG_PLAN_ROWGROUP_GRAPH_MAX_NODES, graph_kernels(p, n, g));
    }
    if (nprep)
        bg_sb_printf(&s, "prep: %d launches of parameters alone, run once when the weights are bound (not per run)\n",
                     nprep);
    bg_sb_printf(&s, "sizes: N = %lld nodes, E = %lld graph entries (plus N self loops where declared), G = %lld\n",
                 (long long)n, (long long)e, (long long)g);
    bg_sb_printf(&s, "%-24s %-40s %12s  %s\n", "launch", "bytes moved (at least)", "at sizes", "float order");
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        Cost k = launch_cost(p, l);
        if (!l->prep) {
            total.c += k.c; total.n += k.n; total.e += k.e; total.g += k.g;
        }
        BgStrBuf f = {0};
        fmt_cost(&f, k);
        char *fs = bg_sb_take(&f);
        char fb[48];
        bg_sb_printf(&s, "%-24s %-40s %12.0f  %s%s\n", l->kernel, fs, eval(k, n, e, g),
                     bg_fp_order_str(l->fp, fb, sizeof fb), l->prep ? "  (prep)" : "");
        free(fs);
    }
    BgStrBuf f = {0};
    fmt_cost(&f, total);
    char *fs = bg_sb_take(&f);
    bg_sb_printf(&s, "%-24s %-40s %12.0f\n", "total per run", fs, eval(total, n, e, g));
    free(fs);
    fmt_cost(&f, mem);
    fs = bg_sb_take(&f);
    bg_sb_printf(&s, "%-24s %-40s %12.0f\n", "device memory", fs, eval(mem, n, e, g));
    free(fs);
    if (n > 0) { /* E/N is the sizes' density; without nodes there is none */
        const double epn = entries_per_node(n, e);
        bg_sb_printf(&s, "largest graph (these buffers at E/N = %.2f, G = %lld):", epn, (long long)g);
        for (int i = 0; i < N_DEVICE_MEMS; i++) {
            const double nmax = capacity_nodes(mem, epn, g, device_mems[i].bytes);
            bg_sb_printf(&s, "%s N = %.0f, E = %.0f on an %s", i ? ";" : "", nmax, nmax * epn, device_mems[i].gpu);
        }
        bg_sb_printf(&s, "\n");
    }
    const FloorRef *r = floor_ref(p->arch);
    if (r) {
        int nk = graph_kernels(p, n, g);
        const double gb = eval(run_cost(p, n, g, false), n, e, g), bb = eval(run_cost(p, n, g, true), n, e, g);
        Floor fl = plan_floor(r, p, nk, nsyncs, eval(total, n, e, g), gb, bb);
        bg_sb_printf(&s, "floor (reference %s: %.2f TB/s, an empty launch %.1f us, a further CUDA-graph node %.2f us, "
                         "a grid sync %.1f us): the bytes per run %.1f us;",
                     r->gpu, r->bytes_per_s / 1e12, r->launch_us, r->node_us, r->sync_us, fl.bytes_us);
        bg_sb_printf(&s, " CUDA graph of %d kernels %.1f us", nk, fl.graph_us);
        if (gb != eval(total, n, e, g))
            bg_sb_printf(&s, " (its bytes %.0f: the register values of the warp-rows and wide groups not counted)", gb);
        if (fl.fused_us >= 0) bg_sb_printf(&s, "; fused kernel (%d grid syncs) %.1f us", nsyncs, fl.fused_us);
        if (fl.blocks_us >= 0) bg_sb_printf(&s, "; per-graph kernel %.1f us", fl.blocks_us);
        if (fl.blocks_us >= 0 && bb != eval(total, n, e, g)) bg_sb_printf(&s, " (its bytes %.0f)", bb);
        bg_sb_printf(&s, "\n");
    } else {
        bg_sb_printf(&s, "floor: no reference GPU for %s (only sm_90 has measured launch and bandwidth figures)\n",
                     p->arch ? p->arch : "no arch");
    }
    return bg_sb_take(&s);
}

/* ---- the same as JSON (bgnnc --stats --json) --------------------------------------------- */
static void json_cost(BgJson *j, const char *key, Cost k, int64_t n, int64_t e, int64_t g) {
    bg_json_object(j, key);
    bg_json_number(j, "const", k.c);
    bg_json_number(j, "per_node", k.n);
    bg_json_number(j, "per_edge", k.e);
    bg_json_number(j, "per_graph", k.g);
    bg_json_number(j, "at_sizes", eval(k, n, e, g));
    bg_json_end_object(j);
}

char *bg_plan_stats_json(const BgPlan *p, int64_t n, int64_t e, int64_t g) {
    BgJson j;
    bg_json_init(&j);
    Cost total = {0, 0, 0, 0}, mem = {0, 0, 0, 0};
    for (int i = 0; i < p->nbufs; i++) {
        Cost k = buf_cost(p, &p->bufs[i], 1);
        mem.c += k.c + b1t_trailer(&p->bufs[i]); mem.n += k.n; mem.e += k.e; mem.g += k.g;
    }
    int nph = 0;
    if (p->fused) {
        int *phase = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(int));
        nph = bg_plan_phases(p, phase);
        free(phase);
    }
    bg_json_object(&j, NULL);
    bg_json_string(&j, "model", p->model);
    bg_json_string(&j, "arch", p->arch);
    bg_json_bool(&j, "fused", p->fused);
    bg_json_bool(&j, "fp_strict", p->fp_strict);
    if (p->fused) {
        bg_json_string(&j, "fused_kernel", p->fused_kernel);
        bg_json_int(&j, "phases", nph);
    }
    if (p->blocks) bg_json_string(&j, "blocks_kernel", p->blocks_kernel);
    bg_json_array(&j, "row_groups");
    for (int i = 0; i < p->nrowgroups; i++) {
        bg_json_object(&j, NULL);
        bg_json_string(&j, "kernel", p->rowgroups[i].kernel);
        bg_json_int(&j, "first", p->rowgroups[i].first);
        bg_json_int(&j, "count", p->rowgroups[i].count);
        bg_json_int(&j, "launches", bg_plan_rowgroup_members(p, &p->rowgroups[i]));
        bg_json_int(&j, "csr", p->rowgroups[i].csr);
        bg_json_string(&j, "rows", p->rowgroups[i].rows == BG_ROWS_G ? "graphs" : "nodes");
        bg_json_bool(&j, "warp", p->rowgroups[i].warp);
        bg_json_bool(&j, "wide", p->rowgroups[i].wide);
        bg_json_end_object(&j);
    }
    bg_json_end_array(&j);
    bg_json_int(&j, "graph_kernels", graph_kernels(p, n, g));
    bg_json_int(&j, "kernels", p->nlaunches - n_prep(p));
    bg_json_int(&j, "prep_launches", n_prep(p));
    bg_json_int(&j, "launches_per_run", p->fused ? 1 : p->nlaunches - n_prep(p));
    bg_json_int(&j, "grid_syncs", p->fused && nph > 0 ? nph - 1 : 0);
    bg_json_int(&j, "device_buffers", p->nbufs);
    bg_json_int(&j, "graph_tables", p->ngraphs);
    bg_json_object(&j, "sizes");
    bg_json_int(&j, "nodes", (long long)n);
    bg_json_int(&j, "edges", (long long)e);
    bg_json_int(&j, "graphs", (long long)g);
    bg_json_end_object(&j);
    bg_json_array(&j, "launches");
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        Cost k = launch_cost(p, l);
        if (!l->prep) {
            total.c += k.c; total.n += k.n; total.e += k.e; total.g += k.g;
        }
        bg_json_object(&j, NULL);
        bg_json_string(&j, "kernel", l->kernel);
        bg_json_bool(&j, "prep", l->prep);
        char fb[48];
        bg_json_string(&j, "fp", bg_fp_order_str(l->fp, fb, sizeof fb));
        json_cost(&j, "bytes_moved", k, n, e, g);
        bg_json_end_object(&j);
    }
    bg_json_end_array(&j);
    json_cost(&j, "bytes_moved_per_run", total, n, e, g);
    json_cost(&j, "device_memory", mem, n, e, g);
    if (n > 0) { /* as the text report: only at sizes with nodes */
        const double epn = entries_per_node(n, e);
        bg_json_object(&j, "largest_graph");
        bg_json_number(&j, "entries_per_node", epn);
        for (int i = 0; i < N_DEVICE_MEMS; i++) {
            bg_json_object(&j, device_mems[i].key);
            bg_json_string(&j, "gpu", device_mems[i].gpu);
            bg_json_number(&j, "free_bytes", device_mems[i].bytes);
            bg_json_number(&j, "nodes", capacity_nodes(mem, epn, g, device_mems[i].bytes));
            bg_json_end_object(&j);
        }
        bg_json_end_object(&j);
    }
    const FloorRef *r = floor_ref(p->arch);
    if (r) {
        int nsyncs = p->fused && nph > 0 ? nph - 1 : 0;
        const double gb = eval(run_cost(p, n, g, false), n, e, g), bb = eval(run_cost(p, n, g, true), n, e, g);
        Floor fl = plan_floor(r, p, graph_kernels(p, n, g), nsyncs, eval(total, n, e, g), gb, bb);
        bg_json_number(&j, "cuda_graph_bytes", gb);
        if (p->blocks) bg_json_number(&j, "per_graph_kernel_bytes", bb);
        bg_json_object(&j, "floor_us");
        bg_json_string(&j, "reference_gpu", r->gpu);
        bg_json_number(&j, "bytes", fl.bytes_us);
        bg_json_number(&j, "cuda_graph", fl.graph_us);
        if (fl.fused_us >= 0) bg_json_number(&j, "fused_kernel", fl.fused_us);
        if (fl.blocks_us >= 0) bg_json_number(&j, "per_graph_kernel", fl.blocks_us);
        bg_json_end_object(&j);
    }
    bg_json_end_object(&j);
    return bg_json_take(&j);
}
