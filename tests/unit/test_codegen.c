/* test_codegen.c - the CUDA code generator without a GPU: for every example model the
 * plan builds, the generated CUDA is deterministic, the manifest round-trips
 * (write -> read -> write is identical) and the unit compiles with NVRTC for sm_80 and
 * sm_90 with the embedded templates as headers.  Hostile manifests (truncated at every
 * byte of every line, wrong version, bad indices, unknown lines, overlong lines, bad
 * numbers and strings) are refused with E_MANIFEST naming the file and line.
 * Exit 77 (skip) when NVRTC cannot be loaded and everything else passed. */
#include "bgtest.h"
#include "codegen.h"
#include "gpu.h"

#include <dirent.h>

static int has_code(const BgDiagSink *d, int code) {
    for (int i = 0; i < d->n; i++)
        if (d->items[i].code == code) return 1;
    return 0;
}

static const char *first_msg(const BgDiagSink *d) { return d->n ? d->items[0].msg : ""; }

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Reads a manifest that must be refused; returns the message (static copy). */
static const char *refuse(const char *text, size_t len) {
    static char msg[1024];
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgPlan *p = bg_manifest_read(text, len, "model.cubin", a, &d);
    CHECK(p == NULL);
    CHECK(has_code(&d, BG_E_MANIFEST));
    snprintf(msg, sizeof msg, "%s", first_msg(&d));
    if (p) fprintf(stderr, "accepted hostile manifest:\n%.*s\n", (int)len, text);
    bg_diag_free(&d);
    bg_arena_free(a);
    return msg;
}

/* text with line `line` (1-based) replaced by repl. */
static char *replace_line(const char *text, int line, const char *repl) {
    const char *s = text;
    for (int k = 1; k < line; k++) s = strchr(s, '\n') + 1;
    const char *e = strchr(s, '\n');
    size_t n = strlen(text) + strlen(repl) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(s - text), text, repl, e);
    return out;
}

static int find_line(const char *text, const char *prefix) {
    int line = 1;
    for (const char *s = text; *s; line++) {
        if (strncmp(s, prefix, strlen(prefix)) == 0) return line;
        s = strchr(s, '\n');
        if (!s) break;
        s++;
    }
    return -1;
}

/* indgcn_full's manifest (its first row group in the wide form): wide= must name the group's
 * counters, a DONE graph array of N rows, and only a group that fits the form may have one. */
static void hostile_wide(const char *good, const BgPlan *p) {
    CHECK(p->nrowgroups >= 2 && p->rowgroups[0].wide && !p->rowgroups[1].wide);
    if (p->nrowgroups < 2) return;
    char want[64], line[256];
    snprintf(want, sizeof want, " wide=%d", p->rowgroups[0].counters);
    const int r0 = find_line(good, "rowgroup 0 "), r1 = find_line(good, "rowgroup 1 ");
    CHECK(r0 > 0 && r1 > 0);
    const BgPlanRowGroup *g = &p->rowgroups[0], *h = &p->rowgroups[1];
    /* the aggregation's output in place of the counters */
    snprintf(line, sizeof line, "rowgroup 0 kernel=%s first=%d count=%d block=256 csr=-1 rows=n warp=0 wide=%d", g->kernel,
             g->first, g->count, p->launches[g->first].args[0]);
    char *t = replace_line(good, r0, line);
    CHECK_STR_CONTAINS(refuse(t, strlen(t)), "do not fit the wide form");
    free(t);
    /* the aggregation alone with a launch the form does not compute (the group ends one later) */
    snprintf(line, sizeof line, "rowgroup 0 kernel=%s first=%d count=%d block=256 csr=-1 rows=n warp=0 wide=%d", g->kernel,
             g->first, g->count + 1, g->counters);
    t = replace_line(good, r0, line);
    CHECK(strstr(refuse(t, strlen(t)), "row group 0") != NULL);
    free(t);
    /* the group no longer in the wide form: its counters belong to no one */
    snprintf(line, sizeof line, "rowgroup 0 kernel=%s first=%d count=%d block=256 csr=-1 rows=n warp=0 wide=-1", g->kernel,
             g->first, g->count);
    t = replace_line(good, r0, line);
    CHECK_STR_CONTAINS(refuse(t, strlen(t)), "done array of N rows");
    free(t);
    /* a group of another form given the counters */
    snprintf(line, sizeof line, "rowgroup 1 kernel=%s first=%d count=%d block=256 csr=-1 rows=n warp=%d wide=%d", h->kernel,
             h->first, h->count, h->warp ? 1 : 0, g->counters);
    t = replace_line(good, r1, line);
    CHECK_STR_CONTAINS(refuse(t, strlen(t)), "row group 1: wide=");
    free(t);
    CHECK(strstr(good, want) != NULL);
}

static void hostile(const char *good) {
    size_t len = strlen(good);
    /* Truncated anywhere (at every byte: every line boundary and inside every line). */
    for (size_t cut = 0; cut < len; cut++) refuse(good, cut);
    /* Trailing garbage after end. */
    {
        char *t = malloc(len + 16);
        snprintf(t, len + 16, "%sextra\n", good);
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "after 'end'");
        free(t);
    }
    /* Wrong version: the message names both. */
    {
        char *t = replace_line(good, 1, "bgnn-manifest 1");
        const char *msg = refuse(t, strlen(t));
        CHECK_STR_CONTAINS(msg, "model.cubin: manifest line 1");
        CHECK_STR_CONTAINS(msg, "version 1");
        char want[32];
        snprintf(want, sizeof want, "version %d", BG_MANIFEST_VERSION);
        CHECK_STR_CONTAINS(msg, want);
        free(t);
        /* the per-graph kernel only for a plan that can have one (a readout, rows N / G) */
        t = replace_line(good, find_line(good, "blocks "), "blocks 1 kernel=bgnn_graphs block=1024");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "per-graph kernel");
        free(t);
        t = replace_line(good, find_line(good, "blocks "), "blocks 0 kernel=bgnn_graphs block=0");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "per-graph kernel");
        free(t);
        /* row groups: only launches that may join one, inside the plan, at least two */
        const int rg = find_line(good, "rowgroups ");
        CHECK(rg > 0);
        t = replace_line(good, rg, "rowgroups 1\nrowgroup 0 kernel=bgnn_rows0 first=2 count=2 block=256 csr=6 rows=n warp=0 wide=-1");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "cannot run in a row group"); /* gcn_bin: the bmm, then a bspmm */
        free(t);
        /* an aggregation may open a group, not follow its first launch: the bspmm, then the bspmm_mm */
        t = replace_line(good, rg, "rowgroups 1\nrowgroup 0 kernel=bgnn_rows0 first=3 count=2 block=256 csr=-1 rows=n warp=0 wide=-1");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "launch 4 cannot run in a row group");
        free(t);
        t = replace_line(good, rg, "rowgroups 1\nrowgroup 0 kernel=bgnn_rows0 first=3 count=2 block=256 csr=-1 rows=q warp=0 wide=-1");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "expected n or g");
        free(t);
        t = replace_line(good, rg, "rowgroups 1\nrowgroup 0 kernel=bgnn_rows0 first=2 count=2 block=256 csr=-1 rows=g warp=0 wide=-1");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "cannot run in a row group"); /* node rows, not graph rows */
        free(t);
        t = replace_line(good, rg, "rowgroups 1\nrowgroup 0 kernel=bgnn_rows0 first=60 count=2 block=256 csr=-1 rows=n warp=0 wide=-1");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "runs past");
        free(t);
        t = replace_line(good, rg, "rowgroups 1\nrowgroup 0 kernel=bgnn_rows0 first=0 count=1 block=256 csr=-1 rows=n warp=0 wide=-1");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "count");
        free(t);
        t = replace_line(good, rg, "rowgroups 1\nrowgroup 0 kernel=bgnn_rows0 first=2 count=2 block=256 csr=0 rows=n warp=0 wide=-1");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "not an input buffer");
        free(t);
        t = replace_line(good, rg, "rowgroups 1\nrowgroup 0 kernel=bgnn_rows0 first=0 count=2 block=100 csr=-1 rows=n warp=0 wide=-1");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "row group");
        free(t);
        /* the warp-rows form: no sparse variant */
        t = replace_line(good, rg, "rowgroups 1\nrowgroup 0 kernel=bgnn_rows0 first=2 count=2 block=256 csr=6 rows=n warp=1 wide=-1");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "warp=1 with csr=6");
        free(t);
        t = replace_line(good, rg, "rowgroups 1\nrowgroup 0 kernel=bgnn_rows0 first=3 count=2 block=256 csr=-1 rows=n warp=2 wide=-1");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "warp");
        free(t);
        t = replace_line(good, 1, "ELF");
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "not a bgnn manifest");
        free(t);
    }
    /* A launch referring to a buffer that does not exist. */
    {
        int ln = find_line(good, "launch 0 ");
        CHECK(ln > 0);
        const char *s = good;
        for (int k = 1; k < ln; k++) s = strchr(s, '\n') + 1;
        const char *e = strchr(s, '\n');
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)(e - s), s);
        char *args = strstr(line, "args=");
        CHECK(args != NULL);
        /* the float order, after the arguments: malformed, then kept after each bad args= */
        char fpf[64] = "";
        char *fpp = strstr(line, " fp=");
        CHECK(fpp != NULL);
        if (fpp) {
            snprintf(fpf, sizeof fpf, "%s", fpp);
            static const char *const badfp[] = {" fp=", " fp=seq+", " fp=splitk(1x256)", " fp=splitk(2x0)",
                                                " fp=splitk(02x64)", " fp=splitk(2x64", " fp=SEQ", " fp=seq fma"};
            for (size_t b = 0; b < sizeof badfp / sizeof *badfp; b++) {
                char bl[4096];
                snprintf(bl, sizeof bl, "%.*s%s", (int)(fpp - line), line, badfp[b]);
                char *t = replace_line(good, ln, bl);
                refuse(t, strlen(t));
                free(t);
            }
            int fl = find_line(good, "fp-strict ");
            CHECK(fl == 5);
            char *t = replace_line(good, fl, "fp-strict yes");
            CHECK_STR_CONTAINS(refuse(t, strlen(t)), "fp-strict must be true or false");
            free(t);
        }
        if (args) {
            strcpy(args, "args=42");
            strcat(args, fpf);
            char *t = replace_line(good, ln, line);
            const char *msg = refuse(t, strlen(t));
            char want[128];
            snprintf(want, sizeof want, "model.cubin: manifest line %d: launch refers to buffer 42 of", ln);
            CHECK_STR_CONTAINS(msg, want);
            free(t);
            strcpy(args, "args=-1");
            strcat(args, fpf);
            t = replace_line(good, ln, line);
            refuse(t, strlen(t));
            free(t);
            strcpy(args, "args=99999999999999999999999");
            strcat(args, fpf);
            t = replace_line(good, ln, line);
            refuse(t, strlen(t));
            free(t);
            strcpy(args, "args=0,0");
            strcat(args, fpf);
            t = replace_line(good, ln, line);
            refuse(t, strlen(t));
            free(t);
        }
    }
    /* Unknown and malformed lines anywhere. */
    int nlines = 0;
    for (const char *s = good; *s; s++) nlines += *s == '\n';
    const char *bad[] = {"hello world", "", " ", "buffer 0", "launch 0 kernel=x", "end",
                         "graphs 99999", "buffers -1", "outputs 1x"};
    for (int ln = 1; ln <= nlines; ln++)
        for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
            char *t = replace_line(good, ln, bad[k]);
            if (strcmp(t, good) != 0) refuse(t, strlen(t));
            free(t);
        }
    /* An overlong line. */
    {
        char *big = malloc(10000);
        memset(big, 'a', 9999);
        big[9999] = 0;
        char *t = replace_line(good, 3, big);
        CHECK_STR_CONTAINS(refuse(t, strlen(t)), "longer than");
        free(t);
        free(big);
    }
    /* A NUL byte inside. */
    {
        char *t = malloc(len + 1);
        memcpy(t, good, len + 1);
        t[5] = 0;
        refuse(t, len);
        free(t);
    }
    /* Field-level damage on the first buffer line: bad kind, role, rows, strings. */
    {
        int ln = find_line(good, "buffer 0 ");
        const char *repl[] = {
            "buffer 0 kind=f64 role=temp rows=N cols=1 width=1 shape=N name=- transposed=false graph=-1 garr=- inst=0",
            "buffer 0 kind=f32 role=boss rows=N cols=1 width=1 shape=N name=- transposed=false graph=-1 garr=- inst=0",
            "buffer 0 kind=f32 role=temp rows=M cols=1 width=1 shape=N name=- transposed=false graph=-1 garr=- inst=0",
            "buffer 0 kind=f32 role=temp rows=N cols=1 width=2 shape=N name=- transposed=false graph=-1 garr=- inst=0",
            "buffer 0 kind=f32 role=input rows=N cols=1 width=1 shape=N name=\"X transposed=false graph=-1 garr=- inst=0",
            "buffer 0 kind=f32 role=input rows=N cols=1 width=1 shape=N name=\"\\x00\" transposed=false graph=-1 garr=- inst=0",
            "buffer 0 kind=f32 role=temp rows=nnz(7) cols=1 width=1 shape=N name=- transposed=false graph=-1 garr=- inst=0",
            "buffer 0 kind=f32 role=temp rows=N cols=1 width=1 shape=N,1,1 name=- transposed=false graph=-1 garr=- inst=0",
            "buffer 0 kind=f32 role=temp rows=N cols=1 width=1 shape=N name=- transposed=maybe graph=-1 garr=- inst=0",
            "buffer 0 kind=f32 role=temp rows=N cols=01 width=1 shape=N name=- transposed=false graph=-1 garr=- inst=0",
            "buffer 0 kind=f32 role=temp rows=N cols=1 width=1 shape=N name=- transposed=false graph=-1 garr=- inst=0 more=1",
            "buffer 0  kind=f32 role=temp rows=N cols=1 width=1 shape=N name=- transposed=false graph=-1 garr=- inst=0",
            "buffer 0 kind=f32 role=graph rows=N cols=1 width=1 shape=- name=- transposed=false graph=9 garr=rowf inst=0",
        };
        for (size_t k = 0; k < sizeof repl / sizeof *repl; k++) {
            char *t = replace_line(good, ln, repl[k]);
            const char *msg = refuse(t, strlen(t));
            char want[64];
            snprintf(want, sizeof want, "manifest line %d:", ln);
            CHECK_STR_CONTAINS(msg, want);
            free(t);
        }
    }
}

static void one_example(const char *dir, const char *file, const BgNvrtc *nv, bool *did_hostile) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgModule *m = bg_compile_file(a, path, NULL, &d);
    CHECK(m != NULL);
    if (!m) {
        char *r = bg_diag_render(&d);
        fprintf(stderr, "%s: %s\n", file, r);
        free(r);
        goto out;
    }
    BgPlan *p = bg_plan_build(m, NULL, a, &d);
    CHECK(p != NULL);
    if (!p) goto out;
    CHECK(p->nlaunches > 0);
    CHECK(p->noutputs > 0);
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        CHECK(l->nargs >= 1 && p->bufs[l->args[0]].role == BG_ROLE_TEMP);
        CHECK(l->block_size % 32 == 0 && l->threads_per_row >= 1);
        /* one warp per b1 output word, except the tiled FB kernel (a block per 32 x 64 tile) and
         * the tensor-core BB product (a block per tile of up to 256 x 256) */
        const bool wt = l->nargs > 2 && p->bufs[l->args[2]].kind == BG_BUF_B1T;
        if (bg_plan_bmm_tc(m, &m->insts[l->inst], wt, 90))
            CHECK(l->threads_per_row == bg_plan_bmm_tc_threads_per_row(m->insts[l->inst].type.dim[1]));
        else if (p->bufs[l->args[0]].kind == BG_BUF_B1 && !bg_plan_bmm_fb_tiled(&m->insts[l->inst], wt))
            CHECK(l->threads_per_row % 32 == 0);
        if (bg_plan_bmm_fb_tiled(&m->insts[l->inst], false)) CHECK(l->block_size == 256);
        for (int k = 1; k < l->nargs; k++) CHECK(l->args[k] >= 0 && l->args[k] < p->nbufs);
    }

    /* The per-graph kernel exactly for the models with a readout (mutag_gcn_bin here). */
    CHECK(p->blocks == p->uses_graph_ptr);
    CHECK(!p->blocks || (p->blocks_block == BG_PLAN_BLOCKS_BLOCK && strcmp(p->blocks_kernel, "bgnn_graphs") == 0));

    /* Row groups (plan.h): runs of at least two consecutive launches that may join one, in
     * order, disjoint; a gather only as the first (a bit aggregation, or a readout opening a
     * group of graph rows; none written by the group's other launches), never a bspmm_mm.
     * Which launches, per example: a bit aggregation and the row-local chain after it
     * (sage_bin's second layer: the aggregation, standardize, the two products, the bin, the
     * absmean); mutag_gcn_bin's readout and classifier; not the first layer's products of
     * 1433 x 64 (their own kernels are faster than the group's generic product), nor the
     * float or fast BBB aggregations (slower in a group). */
    for (int gi = 0, next = 0; gi < p->nrowgroups; gi++) {
        const BgPlanRowGroup *g = &p->rowgroups[gi];
        int bad;
        CHECK(g->count >= 2 && g->first >= next && g->first + g->count <= p->nlaunches);
        CHECK(!p->launches[g->first].prep && bg_plan_rowgroup_members(p, g) >= 2);
        CHECK(bg_plan_rowgroup_ok(p, g->first, g->count, g->rows, &bad) && bad == -1);
        CHECK(g->rows == BG_ROWS_N || (g->rows == BG_ROWS_G && g->csr < 0));
        for (int i = g->first; i < g->first + g->count; i++) {
            const BgPlanLaunch *l = &p->launches[i];
            if (l->prep) continue;
            CHECK(i == g->first ? bg_plan_rowgroup_lead_ok(p, l, g->rows) || bg_plan_rowgroup_launch_ok(p, l, g->rows)
                                : bg_plan_rowgroup_launch_ok(p, l, g->rows));
            CHECK(strcmp(l->op, "bspmm_mm") != 0 && (i == g->first || strcmp(l->op, "bspmm") != 0));
            if (strcmp(l->op, "bspmm") == 0) /* the bit aggregation, or the wide form's float one */
                CHECK(g->wide ? i == g->first && bg_plan_bspmm_wide(m, &m->insts[l->inst])
                              : bg_plan_bspmm_bits(m, &m->insts[l->inst]));
            if (strcmp(l->op, "readout") == 0) CHECK(g->rows == BG_ROWS_G);
            if (bg_plan_sparse_tpr(p, l) > 0) CHECK(g->csr == l->args[1] && p->bufs[g->csr].role == BG_ROLE_INPUT);
        }
        if (g->wide) { /* the wide form: its aggregation, then a plain bin and a lanes(256) absmean */
            CHECK(bg_plan_rowgroup_wide_ok(p, g) && !g->warp && g->csr < 0);
            for (int i = g->first + 1; i < g->first + g->count; i++)
                if (!p->launches[i].prep) {
                    const BgInst *in = &m->insts[p->launches[i].inst];
                    CHECK(in->nsteps == 0 && in->npro == 0 && (in->op == BG_OP_BIN || in->op == BG_OP_ABSMEAN));
                }
        }
        next = g->first + g->count;
    }
    {
        /* Kernels beside the one before them (plan.h bg_plan_launch_beside_prev): never a row
         * group's member or the run's first; no buffer of either written by the other (the
         * output, a scratch buffer); the kernel before lets exactly those launch early.  Per
         * example: gcn_full's absmean of the features beside their bin, saint_full's root
         * product beside the neighbour product, sage_full's first aggregation beside the root
         * branch's product; none in gcn_bin. */
        int nbeside = 0;
        for (int i = 0; i < p->nlaunches; i++) {
            const bool beside = bg_plan_launch_beside_prev(p, i);
            int j = i - 1;
            while (j >= 0 && p->launches[j].prep) j--;
            if (j >= 0 && !p->launches[i].prep) CHECK(bg_plan_launch_lets_next(p, j) == beside);
            if (!beside) continue;
            nbeside++;
            CHECK(j >= 0 && !p->launches[i].prep);
            CHECK(!bg_plan_launch_beside_prev(p, j)); /* it waited for its own before it lets i launch */
            int end = i + 1; /* i's kernel: launch i, or the group in the wide form that it opens */
            for (int gi = 0; gi < p->nrowgroups; gi++) {
                const BgPlanRowGroup *g = &p->rowgroups[gi];
                if (g->wide && i == g->first) end = g->first + g->count;
                else CHECK(!(i >= g->first && i < g->first + g->count));
                CHECK(!(j >= g->first && j < g->first + g->count));
            }
            for (int k = i; k < end; k++) {
                const BgPlanLaunch *li = &p->launches[k], *lj = &p->launches[j];
                for (int x = 0; x < li->nargs && !li->prep; x++)
                    for (int y = 0; y < lj->nargs; y++)
                        if (li->args[x] == lj->args[y]) /* shared: read by both */
                            CHECK(x > 0 && y > 0 && !bg_plan_scratch_buf(&p->bufs[li->args[x]]));
            }
        }
        static const struct { const char *file; int beside; const char *op; } want_beside[] = {
            {"gcn_bin.bgnn", 0, NULL}, {"gcn_full.bgnn", 1, "absmean"}, {"saint_full.bgnn", 1, "bmm"}, {"sage_bin.bgnn", 0, NULL},
            {"sage_full.bgnn", 1, "bspmm"}, /* the aggregation beside the root branch's product */
        };
        for (size_t w = 0; w < sizeof want_beside / sizeof want_beside[0]; w++) {
            if (strcmp(file, want_beside[w].file) != 0) continue;
            CHECK_EQ_INT(nbeside, want_beside[w].beside);
            for (int i = 0; i < p->nlaunches && want_beside[w].op; i++)
                if (bg_plan_launch_beside_prev(p, i)) CHECK(strcmp(p->launches[i].op, want_beside[w].op) == 0);
        }
    }
    {
        /* groups, launches they run, groups over the features' CSR (the first layer's row mean,
         * product, bin.center of the inductive models) */
        static const struct { const char *file; int groups, launches, sparse, wide; } want_groups[] = {
            {"gcn_bin.bgnn", 0, 0, 0, 0},      {"gcn_full.bgnn", 1, 2, 0, 0},     {"indgcn_full.bgnn", 2, 7, 0, 1},
            {"sage_bin.bgnn", 2, 10, 1, 0},    {"sage_full.bgnn", 4, 14, 1, 1},   {"saint_bin.bgnn", 3, 13, 1, 0},
            {"saint_full.bgnn", 3, 9, 1, 0},   {"indgcn_bin.bgnn", 1, 2, 1, 0},   {"mutag_gcn_bin.bgnn", 3, 8, 1, 0},
        };
        for (size_t w = 0; w < sizeof want_groups / sizeof want_groups[0]; w++) {
            if (strcmp(file, want_groups[w].file) != 0) continue;
            int nl = 0, ns = 0, nw = 0;
            for (int gi = 0; gi < p->nrowgroups; gi++) {
                nl += bg_plan_rowgroup_members(p, &p->rowgroups[gi]);
                ns += p->rowgroups[gi].csr >= 0;
                nw += p->rowgroups[gi].wide;
            }
            CHECK_EQ_INT(ns, want_groups[w].sparse);
            CHECK_EQ_INT(nw, want_groups[w].wide);
            CHECK_EQ_INT(p->nrowgroups, want_groups[w].groups);
            CHECK_EQ_INT(nl, want_groups[w].launches);
        }
    }

    /* Manifest round trip. */
    char *m1 = bg_manifest_write(p);
    BgPlan *p2 = bg_manifest_read(m1, strlen(m1), file, a, &d);
    CHECK(p2 != NULL);
    if (!p2) fprintf(stderr, "%s: %s\n", file, first_msg(&d));
    char *m2 = p2 ? bg_manifest_write(p2) : NULL;
    CHECK(m2 && strcmp(m1, m2) == 0);
    if (p2) {
        CHECK_EQ_INT(p2->nbufs, p->nbufs);
        CHECK_EQ_INT(p2->nlaunches, p->nlaunches);
        CHECK(strcmp(p2->launches[0].kernel, p->launches[0].kernel) == 0);
    }
    /* the work lists (graph arrays order: i32, N+1 rows of 4; slots: i32, slots1(g) rows of 4 of
     * its own graph), or refused */
    static const struct { const char *garr, *from[3], *to[3]; } lists[] = {
        {" garr=order ", {" width=4 ", " kind=i32 ", " rows=N+1 "}, {" width=3 ", " kind=f32 ", " rows=N "}},
        {" garr=slots ", {" width=4 ", " kind=i32 ", " rows=slots1("}, {" width=3 ", " kind=f32 ", " rows=items1("}}};
    for (int li = 0; li < 2; li++) {
        const char *o = strstr(m1, lists[li].garr);
        if (!o) continue;
        const char *ls = o;
        while (ls > m1 && ls[-1] != '\n') ls--;
        int line = 1;
        for (const char *q = m1; q < ls; q++) line += *q == '\n';
        const char *le = strchr(ls, '\n');
        char orig[512];
        snprintf(orig, sizeof orig, "%.*s", (int)(le - ls), ls);
        for (int v = 0; v < 3; v++) {
            char bad[600];
            const char *at = strstr(orig, lists[li].from[v]);
            CHECK(at != NULL);
            if (!at) continue;
            snprintf(bad, sizeof bad, "%.*s%s%s", (int)(at - orig), orig, lists[li].to[v], at + strlen(lists[li].from[v]));
            char *t = replace_line(m1, line, bad);
            CHECK(bg_manifest_read(t, strlen(t), file, a, &d) == NULL);
            free(t);
        }
        bg_diag_free(&d);
        bg_diag_init(&d);
    }
    if (!*did_hostile && strcmp(file, "gcn_bin.bgnn") == 0) {
        hostile(m1);
        *did_hostile = true;
    }
    if (strcmp(file, "indgcn_full.bgnn") == 0) hostile_wide(m1, p);
    free(m2);
    free(m1);

    /* Deterministic CUDA, with the manifest embedded. */
    char *cu = bg_codegen_cuda(m, "sm_90", &d);
    char *cu2 = bg_codegen_cuda(m, "sm_90", &d);
    CHECK(cu && cu2 && strcmp(cu, cu2) == 0);
    CHECK_STR_CONTAINS(cu, "bgnn_manifest[");
    CHECK_STR_CONTAINS(cu, "bgnn_manifest_len");
    CHECK_STR_CONTAINS(cu, p->launches[0].kernel);
    for (int gi = 0; cu && gi < p->nrowgroups; gi++) { /* the runtime looks each up by name */
        char sym[256], lb[64];
        snprintf(sym, sizeof sym, ") %s(long long n, long long tile,", p->rowgroups[gi].kernel);
        CHECK_STR_CONTAINS(cu, sym);
        const char *k = strstr(cu, sym), *body = k ? strstr(k, ") {") : NULL; /* csr last exactly when it reads one */
        snprintf(lb, sizeof lb, "void __launch_bounds__(%d", p->rowgroups[gi].block); /* the block, maybe a minimum */
        const char *at = k ? k : cu;
        while (cu && at > cu && at[-1] != '\n') at--;
        CHECK(k && strstr(at, lb) == strstr(at, "void __launch_bounds__(") && strstr(at, lb) < k);
        CHECK(body && (p->rowgroups[gi].csr >= 0) == (strncmp(body - 3, "csr", 3) == 0));
    }
    if (cu && p->fused) { /* the fused kernel: the features' CSR last exactly when bg_plan_fused_csr names one */
        char sym[256];
        snprintf(sym, sizeof sym, " %s(long long n, long long ngraphs,", p->fused_kernel);
        const char *k = strstr(cu, sym), *body = k ? strstr(k, ") {") : NULL;
        CHECK(body && (bg_plan_fused_csr(p) >= 0) == (strncmp(body - 3, "csr", 3) == 0));
        if (bg_plan_fused_csr(p) >= 0) CHECK(body && strstr(body, "if (csr) {") != NULL);
    }
    free(cu2);
    if (cu && strcmp(file, "sage_full.bgnn") == 0) {
        /* sage_full's first row group: the sparse standardize of the features through shared
         * memory (its other members have none), writing the root branch's bin and absmean of
         * its rows as well (cg_rows.c std_outs, rowwise.cuh StdRowOut), whose launches then
         * emit no call of their own */
        const char *k = strstr(cu, " bgnn_rows0(long long n, long long tile,");
        const char *end = k ? strstr(k, "\n}\n") : NULL;
        const char *call = k ? strstr(k, "bgnn::standardize_csr<1433, 0x38d1b717u /* eps 0.0001 */, 32, true>(rows, ") : NULL;
        CHECK(end && call && call < end);
        const char *out = call ? strstr(call, "bgnn::StdRowOut<1433>{") : NULL;
        CHECK(out && out < end);
        const char *w1 = k ? strstr(k, "// launch 1 (bgnn_k9_bin): written with launch 0's standardize") : NULL;
        const char *w2 = k ? strstr(k, "// launch 2 (bgnn_k10_absmean): written with launch 0's standardize") : NULL;
        CHECK(w1 && w1 < end && w2 && w2 < end);
        const char *bin = k ? strstr(k, "bgnn::bin<'F', 1433>") : NULL; /* none in the group */
        CHECK(!bin || bin > end);
        /* only there: the second layer's standardize (of a hidden layer, no CSR) keeps its bin
         * and absmean as launches of their own group members */
        int outs = 0;
        for (const char *q = strstr(cu, "bgnn::StdRowOut<"); q; q = strstr(q + 1, "bgnn::StdRowOut<")) outs++;
        CHECK_EQ_INT(outs, 1);
    }
    /* A sparse variant is emitted exactly for the launches whose variant the runtime looks up
     * (plan.h: every alt launch, and bg_plan_launch_row_csr, a bin, a rowmean or a standardize
     * of the features), so no lookup fails; the bin's exactly when it reads the features
     * (gcn_full's first layer), the rowmean's where fold-standardize-mm made one (the
     * inductive models), the standardize's where the first layer standardizes the features
     * and keeps them (sage_full, indgcn_full). */
    int row_csr = 0;
    for (int i = 0; cu && i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        char sym[256];
        snprintf(sym, sizeof sym, ") %s%s(long long n, long long ngraphs", l->kernel, BG_PLAN_SPARSE_SUFFIX);
        const bool emitted = strstr(cu, sym) != NULL;
        const bool looked_up = l->alt || bg_plan_launch_row_csr(p, l);
        if (emitted != looked_up) fprintf(stderr, "%s: launch %d (%s): sparse variant emitted %d, looked up %d\n", file, i,
                                          l->kernel, emitted, looked_up);
        CHECK(emitted == looked_up);
        row_csr += !l->alt && emitted;
        if (!l->alt && emitted)
            CHECK((strcmp(l->op, "bin") == 0 || strcmp(l->op, "bin.center") == 0 || strcmp(l->op, "rowmean") == 0 ||
                   strcmp(l->op, "standardize") == 0) &&
                  p->bufs[l->args[1]].role == BG_ROLE_INPUT);
        if (!l->alt && emitted && strcmp(l->op, "standardize") == 0)
            CHECK(l->fp.kind == BG_FP_LANES && l->fp.split == 32);
    }
    if (strcmp(file, "gcn_full.bgnn") == 0 || strcmp(file, "gcn_bin_layers.bgnn") == 0) CHECK_EQ_INT(row_csr, 1);
    /* the first product's row means read the features; sage_bin's and saint_bin's bin.center
     * too, sage_full's and indgcn_full's standardize */
    if (strcmp(file, "indgcn_bin.bgnn") == 0) CHECK_EQ_INT(row_csr, 1);
    if (strcmp(file, "sage_bin.bgnn") == 0 || strcmp(file, "saint_bin.bgnn") == 0) CHECK_EQ_INT(row_csr, 2);
    if (strcmp(file, "saint_full.bgnn") == 0) CHECK_EQ_INT(row_csr, 1);
    if (strcmp(file, "sage_full.bgnn") == 0 || strcmp(file, "indgcn_full.bgnn") == 0) CHECK_EQ_INT(row_csr, 1);
    CHECK(bg_codegen_cuda(m, "sm_5", &d) == NULL && has_code(&d, BG_E_ARCH));

    if (nv && cu) {
        int nh = 0;
        BgNvrtcHeader *h = bg_codegen_templates(&nh);
        CHECK(nh >= 6);
        const char *archs[] = {"sm_80", "sm_90"};
        /* BGNN_CODEGEN_NVRTC_SM90_ONLY (the sanitizer build: NVRTC itself is not instrumented,
         * the Release build compiles every example for both): sm_90, and only gcn_bin.bgnn, which
         * keeps the C side of the NVRTC call under the sanitizers (the other compiles took 90 s
         * of CI's 15 minutes there) */
        const bool sm90_only = getenv("BGNN_CODEGEN_NVRTC_SM90_ONLY") != NULL;
        for (int k = sm90_only ? 1 : 0; k < 2 && (!sm90_only || strcmp(file, "gcn_bin.bgnn") == 0); k++) {
            char *src = k == 0 ? bg_codegen_cuda(m, archs[k], &d) : cu;
            BgNvrtcReq req = {src, file, h, nh, archs[k], NULL, 0, nv};
            BgNvrtcResult res;
            BgDiagSink d2;
            bg_diag_init(&d2);
            bool ok = bg_nvrtc_compile(&req, &res, &d2);
            CHECK(ok && res.cubin && res.cubin_len > 4 && memcmp(res.cubin, "\177ELF", 4) == 0);
            if (!ok) fprintf(stderr, "%s %s: %s\n", file, archs[k], first_msg(&d2));
            else printf("%s %s: cubin %zu bytes\n", file, archs[k], res.cubin_len);
            bg_nvrtc_result_free(&res);
            bg_diag_free(&d2);
            if (k == 0) free(src);
        }
        free(h);
    }
    free(cu);
out:
    bg_diag_free(&d);
    bg_arena_free(a);
}

/* The sparse features product's lanes a row (plan.c bg_plan_fb_csr_lanes): a power of two from
 * 2 to 32, at most 8 outputs a lane where 32 lanes allow it, no more lanes than that needs. */
static void fb_csr_lanes(void) {
    static const int64_t cols[] = {1, 7, 16, 17, 32, 33, 64, 65, 128, 200, 256, 257, 1000};
    static const int64_t want[] = {2, 2, 2, 4, 4, 8, 8, 16, 16, 32, 32, 32, 32};
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) {
        const int64_t g = bg_plan_fb_csr_lanes(cols[i]);
        CHECK_EQ_INT(g, want[i]);
        CHECK(g == 32 || (cols[i] + g - 1) / g <= 8);
        CHECK(g == 2 || (cols[i] + g / 2 - 1) / (g / 2) > 8);
    }
}

/* Its lanes for a whole launch (bg_plan_fb_csr_lanes_rows): twice as many, at most 32, below
 * BG_PLAN_FB_CSR_WIDE rows x lanes; the runtime's grid (bg_plan_sparse_tpr_rows) the same. */
static void fb_csr_lanes_rows(void) {
    CHECK_EQ_INT(bg_plan_fb_csr_lanes_rows(64, 2708), 16);  /* Cora */
    CHECK_EQ_INT(bg_plan_fb_csr_lanes_rows(64, 3327), 16);  /* CiteSeer */
    CHECK_EQ_INT(bg_plan_fb_csr_lanes_rows(64, 19717), 8);  /* PubMed */
    CHECK_EQ_INT(bg_plan_fb_csr_lanes_rows(64, BG_PLAN_FB_CSR_WIDE / 8 - 1), 16);
    CHECK_EQ_INT(bg_plan_fb_csr_lanes_rows(64, BG_PLAN_FB_CSR_WIDE / 8), 8);
    CHECK_EQ_INT(bg_plan_fb_csr_lanes_rows(128, 4095), 32);
    CHECK_EQ_INT(bg_plan_fb_csr_lanes_rows(128, 4096), 16);
    CHECK_EQ_INT(bg_plan_fb_csr_lanes_rows(256, 1), 32); /* never past 32 */
    CHECK_EQ_INT(bg_plan_fb_csr_lanes_rows(7, 0), 4);
    CHECK_EQ_INT(bg_plan_fb_csr_lanes_rows(7, 1LL << 40), 2);
}

/* The widest fused launch: a bspmm_mm over a B adjacency (rowptr, col, rowf, colf and its
 * SLOTS list) with BG_FUSE_MAX_OPERANDS operands (mm scl, epilogue add, scl by rows and
 * columns, add) fits BG_PLAN_MAX_ARGS, and its CUDA is emitted. */
static void widest_fused_launch(void) {
    static const char text[] =
        "model widest\n"
        "graph  A   = adjacency(self_loops: true, norm: none)\n"
        "graph  Ah  = adjacency(self_loops: true, norm: sym)\n"
        "input  X   : f32[N, 1433]\n"
        "param  mu  : f32[1433]    = \"bn.running_mean\"\n"
        "param  var : f32[1433]    = \"bn.running_var\"\n"
        "param  W1  : b1[1433, 64] = \"conv1.weight\".T\n"
        "param  W2  : b1[64, 7]    = \"conv2.weight\".T\n"
        "param  b2  : f32[7]       = \"conv2.bias\"\n"
        "param  c2  : f32[7]       = \"conv2.cs\"\n"
        "param  d2  : f32[7]       = \"conv2.d\"\n"
        "x  = batchnorm(X, mu, var)\n"
        "t1 = bmm.FBB(x, W1)\n"
        "h1 = bspmm.BBB(A, t1)\n"
        "t2 = bmm.BBF(h1, W2)\n"
        "s2 = scl(t2, cols: scale(W2))\n"
        "y0 = bspmm.FBF(Ah, s2)\n"
        "r  = absmean(X)\n"
        "y1 = add.FFF(y0, b2)\n"
        "y2 = scl(y1, r, c2)\n"
        "y  = add.FFF(y2, d2)\n"
        "output logits = y\n";
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgModule *m = bg_compile_text(a, "widest.bgnn", text, sizeof text - 1, NULL, &d);
    CHECK(m != NULL);
    BgPlan *p = m ? bg_plan_build(m, NULL, a, &d) : NULL;
    CHECK(p != NULL);
    int widest = 0;
    for (int i = 0; p && i < p->nlaunches; i++)
        if (strcmp(p->launches[i].op, "bspmm_mm") == 0 && p->launches[i].nargs > widest) widest = p->launches[i].nargs;
    CHECK_EQ_INT(widest, BG_PLAN_MAX_ARGS);
    char *cu = p ? bg_codegen_cuda(m, "sm_90", &d) : NULL;
    CHECK(cu != NULL && strstr(cu, "bgnn::bspmm_mm_adjb") != NULL);
    free(cu);
    if (d.n) {
        char *msg = bg_diag_render(&d);
        fprintf(stderr, "widest_fused_launch: %s\n", msg);
        free(msg);
    }
    bg_diag_free(&d);
    bg_arena_free(a);
}

int main(void) {
    widest_fused_launch();
    fb_csr_lanes();
    fb_csr_lanes_rows();
    const char *root = getenv("BGNN_SOURCE_DIR");
    if (!root || !*root) root = ".";
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/examples", root);
    DIR *dp = opendir(dir);
    CHECK(dp != NULL);
    if (!dp) return bg_test_finish();
    char *files[256];
    int nf = 0;
    struct dirent *de;
    while ((de = readdir(dp)) && nf < 256) {
        size_t n = strlen(de->d_name);
        if (n > 5 && strcmp(de->d_name + n - 5, ".bgnn") == 0) files[nf++] = strdup(de->d_name);
    }
    closedir(dp);
    qsort(files, (size_t)nf, sizeof *files, cmp_str);
    CHECK(nf >= 2);

    BgNvrtc nv;
    BgDiagSink d;
    bg_diag_init(&d);
    bool have_nv = bg_nvrtc_load(&nv, &d);
    bg_diag_free(&d);

    bool did_hostile = false;
    for (int i = 0; i < nf; i++) {
        one_example(dir, files[i], have_nv ? &nv : NULL, &did_hostile);
        free(files[i]);
    }
    CHECK(did_hostile);
    /* and the Reddit-sized binary GCN: its 128-bit aggregation in the order slots (S = 8, four
     * words a lane group), which no example has, through NVRTC */
    snprintf(dir, sizeof dir, "%s/bench", root);
    one_example(dir, "gcn_bin_reddit.bgnn", have_nv ? &nv : NULL, &did_hostile);
    if (have_nv) bg_nvrtc_unload(&nv);
    if (!have_nv && bgt_fail == 0) bg_test_skip("libnvrtc cannot be loaded (the rest passed)");
    return bg_test_finish();
}
