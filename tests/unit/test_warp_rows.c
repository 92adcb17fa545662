/* test_warp_rows.c - the warp-rows form of row groups (plan.h "Row groups", plan_build.c,
 * cg_warp_rows.c): which groups take it (the GIN bin classifiers' layer groups, the TU
 * classifiers' readout and classifier groups; none over the features' CSR), which of their members' results stay in
 * registers (bg_plan_buf_kept: a bin or a product read only as a later member's main operand,
 * an absmean read as a later member's per-row factor) and which are stored (a layer's bits the
 * next gather reads, the outputs), the manifest's warp= through a write and a read, and the
 * generated kernels (one warp a row, no block barrier; the per-graph kernel stages the tables
 * in shared memory), and the per-graph kernel's own pairs of GCN bin (a fast aggregation and
 * the bit product after it, cg_blocks.c staged_pair).  GPU == CPU for these kernels: test_gpu_batches
 * (the MUTAG classifiers) and the TU A/B runs. */
#include "bgtest.h"
#include "bg.h"
#include "codegen.h"
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The buffer of instruction i's value, or -1. */
static int buf_of(const BgPlan *p, int inst) {
    for (int k = 0; k < p->nbufs; k++)
        if (p->bufs[k].inst == inst && p->bufs[k].role == BG_ROLE_TEMP) return k;
    return -1;
}

/* A model compiled (the file at path, or text) and planned for sm_90, in its own arena. */
typedef struct Compiled {
    BgArena *a;
    BgDiagSink d;
    BgModule *m;
    BgPlan *p;
} Compiled;
static BgPlan *compile_plan(Compiled *c, const char *path, const char *text) {
    c->a = bg_arena_new();
    bg_diag_init(&c->d);
    c->m = text ? bg_compile_text(c->a, path, text, strlen(text), NULL, &c->d) : bg_compile_file(c->a, path, NULL, &c->d);
    c->p = c->m ? bg_codegen_plan(c->m, "sm_90", c->a, &c->d) : NULL;
    CHECK(c->m && c->p);
    return c->p;
}
static void compiled_free(Compiled *c) {
    bg_diag_free(&c->d);
    bg_arena_free(c->a);
}

static void check_gin(const char *srcdir, const char *ds) {
    char path[600];
    snprintf(path, sizeof path, "%s/examples/tu/gin_bin_%s.bgnn", srcdir, ds);
    Compiled c;
    BgPlan *p = compile_plan(&c, path, NULL);
    BgModule *m = c.m;
    BgArena *a = c.a;
    BgDiagSink *d = &c.d;
    if (!p) {
        compiled_free(&c);
        return;
    }
    int warp = 0, regs_only = 0, regs_scale = 0, kept_bits = 0, graph_warp = 0;
    for (int gi = 0; gi < p->nrowgroups; gi++) {
        const BgPlanRowGroup *g = &p->rowgroups[gi];
        if (!g->warp) continue;
        if (g->rows == BG_ROWS_G) { /* the readout and the classifier: only the output kept */
            graph_warp++;
            CHECK(strcmp(p->launches[g->first].op, "readout") == 0 && g->csr < 0);
            for (int i = g->first; i < g->first + g->count; i++) {
                const int b = p->launches[i].args[0];
                bool out = false;
                for (int q = 0; q < p->noutputs; q++) out |= p->outputs[q].buf == b;
                if (!p->launches[i].prep) CHECK(bg_plan_buf_kept(p, b) == out);
            }
            continue;
        }
        warp++;
        CHECK(g->rows == BG_ROWS_N && g->csr < 0);
        CHECK(strcmp(p->launches[g->first].op, "bspmm") == 0); /* each layer's group opens with its gather */
        for (int i = g->first; i < g->first + g->count; i++) {
            const BgPlanLaunch *l = &p->launches[i];
            if (l->prep) continue;
            const int b = l->args[0];
            const bool kept = bg_plan_buf_kept(p, b);
            if (strcmp(l->op, "bin") == 0) { /* read only as the next product's main operand */
                CHECK(!kept);
                regs_only += !kept;
            }
            if (strcmp(l->op, "absmean") == 0) { /* the product's epilogue takes it from the register */
                CHECK(!kept);
                regs_scale += !kept;
            }
            /* the layer's bits, gathered by the next group's aggregation, stay in memory */
            for (int j = g->first + g->count; j < p->nlaunches; j++)
                if (strcmp(p->launches[j].op, "bspmm") == 0 && p->launches[j].args[5] == b) {
                    CHECK(kept);
                    kept_bits += kept;
                }
        }
    }
    CHECK(warp >= 2 && graph_warp == 1);
    CHECK(regs_only >= 2 * warp && regs_scale >= 2 * warp && kept_bits >= 1);
    for (int q = 0; q < p->noutputs; q++) CHECK(bg_plan_buf_kept(p, p->outputs[q].buf));
    /* a value outside every warp-rows group is always in memory */
    const int x = buf_of(p, 1);
    CHECK(x < 0 || bg_plan_buf_kept(p, x));
    CHECK(bg_plan_buf_kept(p, -1) && bg_plan_buf_kept(p, p->nbufs));
    /* warp= through the manifest */
    char *man = bg_manifest_write(p);
    BgPlan *q = bg_manifest_read(man, strlen(man), "test", a, d);
    CHECK(q && q->nrowgroups == p->nrowgroups);
    for (int gi = 0; q && gi < q->nrowgroups; gi++) CHECK(q->rowgroups[gi].warp == p->rowgroups[gi].warp);
    for (int b = 0; q && b < p->nbufs; b++) CHECK(bg_plan_buf_kept(q, b) == bg_plan_buf_kept(p, b));
    free(man);
    /* the generated kernel: a warp a row, no block barrier in a warp-rows group */
    char *cu = bg_codegen_cuda(m, "sm_90", d);
    CHECK(cu != NULL);
    for (int gi = 0; cu && gi < p->nrowgroups; gi++) {
        const BgPlanRowGroup *g = &p->rowgroups[gi];
        char sig[80];
        snprintf(sig, sizeof sig, "void __launch_bounds__(%d) %s(", g->block, g->kernel);
        const char *k = strstr(cu, sig);
        CHECK(k != NULL);
        if (!k) continue;
        const char *end = strstr(k + 1, "extern \"C\"");
        const size_t len = end ? (size_t)(end - k) : strlen(k);
        char *body = malloc(len + 1);
        memcpy(body, k, len);
        body[len] = 0;
        CHECK((strstr(body, "__syncthreads") == NULL) == g->warp);
        CHECK((strstr(body, g->rows == BG_ROWS_G ? "wr_readout" : "wr_bspmm_bits") != NULL) == g->warp);
        free(body);
    }
    /* the per-graph kernel stages the warp-rows groups' tables once, before its graphs */
    const char *blk = cu && p->blocks ? strstr(cu, p->blocks_kernel) : NULL;
    if (blk) {
        const char *st = strstr(blk, "__shared__ float st"), *loop = strstr(blk, "for (long long g = ");
        CHECK(st != NULL && loop != NULL && st < loop && strstr(blk, "bgnn::ProBn<") != NULL);
        CHECK(strstr(strstr(blk, "bgnn::ProBn<"), "{st") != NULL); /* a prologue reads its staged tables */
    }
    free(cu);
    compiled_free(&c);
}

/* Models with no warp-rows group of node rows (graph_rows: one of graph rows, the classifier
 * after the readout): every buffer of node rows kept. */
static void check_none(const char *srcdir, const char *rel, bool graph_rows) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", srcdir, rel);
    Compiled c;
    const BgPlan *p = compile_plan(&c, path, NULL);
    int graph_warp = 0;
    for (int gi = 0; p && gi < p->nrowgroups; gi++) {
        CHECK(!p->rowgroups[gi].warp || p->rowgroups[gi].rows == BG_ROWS_G);
        graph_warp += p->rowgroups[gi].warp;
    }
    CHECK_EQ_INT(graph_warp, graph_rows ? 1 : 0);
    for (int b = 0; p && b < p->nbufs; b++) CHECK(p->bufs[b].rows.kind != BG_ROWS_N || bg_plan_buf_kept(p, b));
    compiled_free(&c);
}

/* A bit aggregation with a log_softmax tail (fuse-log-softmax) opens no warp-rows group: the
 * memory form applies the tail in spmm_bits_store, warp_rows.cuh has none. */
static void check_lsm_tail(void) {
    static const char text[] = "model lsm_tail\n"
                               "graph  A  = adjacency(self_loops: true, norm: sym)\n"
                               "input  X  : f32[N, 16]\n"
                               "param  W0 : b1[16, 8] = \"w0\".T\n"
                               "h0 = bmm.FBB(X, W0)\n"
                               "a1 = bspmm.BBF(A, h0)\n"
                               "output logits = log_softmax(a1)\n"
                               "output z = relu(X)\n";
    Compiled c;
    const BgPlan *p = compile_plan(&c, "lsm_tail.bgnn", text);
    const BgModule *m = c.m;
    bool tail = false; /* the pass did fuse the tail into the aggregation */
    for (int i = 0; p && i < p->nlaunches; i++) {
        const BgInst *in = &m->insts[p->launches[i].inst];
        if (in->op == BG_OP_BSPMM && in->nsteps && in->steps[in->nsteps - 1].kind == BG_STEP_LOG_SOFTMAX) tail = true;
    }
    CHECK(tail);
    for (int gi = 0; p && gi < p->nrowgroups; gi++) CHECK(!p->rowgroups[gi].warp);
    compiled_free(&c);
}

/* GCN bin's per-graph kernel: for a staged graph it runs each fast aggregation and the bit
 * product after it as a warp-rows pair of its own (cg_blocks.c staged_pair), which the plan
 * does not hold: the aggregation's row stays in registers in the pair (bg_plan_buf_kept_in)
 * and has no shared array, the product's row (gathered next) is stored; a graph past the
 * stage runs the two launches with a barrier between. */
static void check_gcn_pairs(const char *srcdir, const char *ds) {
    char path[600];
    snprintf(path, sizeof path, "%s/examples/tu/gcn_bin_%s.bgnn", srcdir, ds);
    Compiled c;
    const BgPlan *p = compile_plan(&c, path, NULL);
    const BgModule *m = c.m;
    int pairs = 0;
    char *cu = p ? bg_codegen_cuda(m, "sm_90", &c.d) : NULL;
    for (int i = 0; p && i + 1 < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i], *n = &p->launches[i + 1];
        if (l->prep || !bg_plan_bspmm_fast(m, &m->insts[l->inst]) || strcmp(n->op, "bmm") != 0) continue;
        const BgPlanRowGroup pair = {.first = i, .count = 2, .rows = BG_ROWS_N, .csr = -1, .warp = true};
        CHECK(bg_plan_buf_kept(p, l->args[0]));         /* no plan group: in memory on every other path */
        CHECK(!bg_plan_buf_kept_in(p, &pair, l->args[0])); /* read only by the product, from the register */
        CHECK(bg_plan_buf_kept_in(p, &pair, n->args[0]));  /* gathered next, or a later launch's operand */
        char decl[64];
        snprintf(decl, sizeof decl, "__shared__ unsigned gsx%d[", l->args[0]);
        CHECK(cu && strstr(cu, decl) == NULL);
        pairs++;
    }
    CHECK_EQ_INT(pairs, 2);
    const char *blk = cu ? strstr(cu, p->blocks_kernel) : NULL;
    CHECK(blk != NULL);
    int gs = 0, bb = 0, plain = 0;
    for (const char *q = blk; q && (q = strstr(q, "bgnn::wr_bspmm_bits_gs<false, true, true, ")); q++) gs++;
    for (const char *q = blk; q && (q = strstr(q, "bgnn::wr_bmm_bb<")); q++) bb++;
    for (const char *q = blk; q && (q = strstr(q, "bgnn::bspmm_adjb<'B', 'B', ")); q++) plain++;
    CHECK_EQ_INT(gs, 2);    /* the staged graph's pairs: counted ones ... */
    CHECK_EQ_INT(bb, 2);    /* ... then the product, a warp a row */
    CHECK_EQ_INT(plain, 2); /* a graph past the stage: the aggregation's own launch */
    free(cu);
    compiled_free(&c);
}

int main(void) {
    const char *srcdir = getenv("BGNN_SOURCE_DIR") ? getenv("BGNN_SOURCE_DIR") : ".";
    static const char *const ds[] = {"mutag", "proteins", "enzymes", "nci1"};
    for (int i = 0; i < 4; i++) check_gin(srcdir, ds[i]);
    check_none(srcdir, "examples/tu/gcn_bin_enzymes.bgnn", true);
    check_none(srcdir, "examples/tu/gin_full_enzymes.bgnn", true);
    check_none(srcdir, "examples/gcn_bin.bgnn", false);
    check_none(srcdir, "examples/sage_bin.bgnn", false);
    check_lsm_tail();
    for (int i = 0; i < 4; i++) check_gcn_pairs(srcdir, ds[i]);
    return bg_test_finish();
}
