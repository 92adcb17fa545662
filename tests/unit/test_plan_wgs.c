/* test_plan_wgs.c - the plan's choice of the wgmma BB product (compiler/codegen/plan_build.c
 * bg_plan_bmm_wgs, templates/bmm_bb_wgs.cuh) and what it puts in the plan, the manifest and
 * the generated code (no GPU needed; its results are checked on the GPU by test_gpu_variants'
 * path-wgmma outputs, and its speed by bench/run_models.sh's wide product):
 * * path auto on sm_90: BB products from K = 512 and M = 256 take it (1024 x 1024, 1024 x 512,
 *   512 x 1000), a narrower one keeps mma.sync's kernel (1024 x 128); path wgmma takes it at
 *   any K multiple of 128 (1024 x 100); on sm_80 none does (path wgmma falls back to mma.sync's);
 * * its launch: 384 threads, one block an SM, a block a 128-row tile, the template's dynamic
 *   shared memory, and the plan's arch sm_90a (which the code generator reports for NVRTC);
 *   no fused, per-graph or row-group kernel holds it;
 * * the manifest carries smem= through write and read, and refuses a value past the limit;
 * * the generated call and its static_assert of the shared bytes;
 * * path wgmma with K not a multiple of 128 is an error naming the file and position; the
 *   schedule space has a wgmma point on sm_90 only, and refuses other blocks for it. */
#include "bgtest.h"
#include "codegen.h"

#include <string.h>

static const char *model =
    "model wide\n"
    "input X : f32[N, 1024]\n"
    "param W1 : b1[1024, 1024] = \"w1\".T\n"
    "param W2 : b1[1024, 1024] = \"w2\".T\n"
    "param W3 : b1[1024, 100] = \"w3\".T\n"
    "param W4 : b1[512, 1000] = \"w4\".T\n"
    "param W5 : b1[1024, 128] = \"w5\".T\n"
    "param b1 : f32[1024] = \"b1\"\n"
    "xb = bin(X)\n"
    "h = bin(add.FFF(bmm.BBF(xb, W1), b1))\n" /* auto, 1024 x 1024, a bias as its threshold */
    "y2 = bmm.BBB(h, W2)\n"                   /* auto, 1024 x 1024, plain */
    "y3 = bmm.BBF(h, W3) { path: wgmma }\n"   /* forced, 100 columns */
    "y4 = bmm.BBF(bmm.BBB(h, W4T), W4)\n"     /* auto, 1024 x 512 then 512 x 1000 (W4T below) */
    "y5 = bmm.BBF(h, W5)\n"                   /* auto, 128 columns: mma.sync */
    "output o2 = y2\noutput o3 = y3\noutput o4 = y4\noutput o5 = y5\n";

/* The manifest reader refuses text, with an error containing want. */
static void refused(const char *text, const char *want, BgArena *a) {
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(bg_manifest_read(text, strlen(text), "wide", a, &d) == NULL);
    char *r = bg_diag_render(&d);
    CHECK(strstr(r, want) != NULL);
    free(r);
    bg_diag_free(&d);
}

static BgModule *compile(BgArena *a, const char *text, BgDiagSink *d) {
    return bg_compile_text(a, "wide.bgnn", text, strlen(text), NULL, d);
}

/* the launch computing instruction `inst`'s bmm (the producer of output k) */
static const BgPlanLaunch *launch_of(const BgPlan *p, int inst) {
    for (int i = 0; i < p->nlaunches; i++)
        if (p->launches[i].inst == inst) return &p->launches[i];
    return NULL;
}

static int wgs_launches(const BgModule *m, const BgPlan *p, int sm) {
    int n = 0;
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        const BgInst *in = &m->insts[l->inst];
        const bool wt = in->op == BG_OP_BMM && p->bufs[l->args[2]].kind == BG_BUF_B1T;
        if (bg_plan_bmm_wgs(m, in, wt, sm)) {
            n++;
            const int64_t cols = in->type.dim[1];
            CHECK_EQ_INT(l->block_size, BG_PLAN_WGS_BLOCK);
            CHECK_EQ_INT(l->grid_per_sm, BG_PLAN_WGS_GRID_PER_SM);
            CHECK_EQ_INT(l->smem, bg_plan_wgs_smem(cols));
            CHECK_EQ_INT(l->threads_per_row, bg_plan_wgs_threads_per_row(cols));
            CHECK(!bg_plan_bmm_tc(m, in, wt, sm));
        } else {
            CHECK_EQ_INT(l->smem, 0);
        }
    }
    return n;
}

int main(void) {
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    /* W4T: the inner product of y4 needs a [1024, 512] weight */
    char text[4096];
    snprintf(text, sizeof text, "%s", model);
    char *at = strstr(text, "param b1");
    char tail[4096];
    snprintf(tail, sizeof tail, "%s", at);
    snprintf(at, sizeof text - (size_t)(at - text), "param W4T : b1[1024, 512] = \"w4t\".T\n%s", tail);
    BgModule *m = compile(a, text, &d);
    CHECK(m != NULL);
    if (!m) {
        char *r = bg_diag_render(&d);
        fprintf(stderr, "%s", r);
        free(r);
        return bg_test_finish();
    }

    /* the template's byte count for the widths here (bmm_bb_wgs.cuh WgsShape<M>::BYTES) */
    CHECK_EQ_INT(bg_plan_wgs_smem(1024), 154976);
    CHECK_EQ_INT(bg_plan_wgs_smem(100), 103776); /* 128-column tiles: 6 stages of 256 rows of 64 bytes, ... */
    CHECK_EQ_INT(bg_plan_wgs_tile_cols(100), 128);
    CHECK_EQ_INT(bg_plan_wgs_threads_per_row(1024), 4 * 384); /* a block a row and column tile of 256 */
    CHECK_EQ_INT(bg_plan_wgs_threads_per_row(100), 384);

    /* sm_90: five wgmma products (four by auto, y3 by its path), arch sm_90a */
    BgPlan *p = bg_plan_build(m, "sm_90", a, &d);
    CHECK(p != NULL);
    if (p) {
        CHECK(strcmp(p->arch, "sm_90a") == 0);
        CHECK_EQ_INT(wgs_launches(m, p, 90), 5);
        CHECK(m->fused && !p->fused); /* fuse-model asked for the one-kernel form: not with smem */
        /* no row group or per-graph kernel holds an smem launch: the plan-level rules say no
         * for it, and yes for the same launch without smem (so it is the smem that decides) */
        int nsm = 0;
        for (int i = 0; i < p->nlaunches; i++) {
            BgPlanLaunch *l = &p->launches[i];
            if (!l->smem) continue;
            nsm++;
            CHECK(!bg_plan_rowgroup_launch_ok(p, l, BG_ROWS_N) && !bg_plan_rowgroup_lead_ok(p, l, BG_ROWS_N));
            const int s = l->smem;
            l->smem = 0;
            CHECK(bg_plan_rowgroup_launch_ok(p, l, BG_ROWS_N));
            l->smem = s;
        }
        CHECK_EQ_INT(nsm, 5);
        p->uses_graph_ptr = true; /* as a batch's plan: the per-graph kernel would be allowed ... */
        CHECK(!bg_plan_blocks_ok(p));
        int saved[64];
        for (int i = 0; i < p->nlaunches && i < 64; i++) saved[i] = p->launches[i].smem, p->launches[i].smem = 0;
        CHECK(p->nlaunches <= 64 && bg_plan_blocks_ok(p)); /* ... but for the smem launches */
        for (int i = 0; i < p->nlaunches && i < 64; i++) p->launches[i].smem = saved[i];
        p->uses_graph_ptr = false;
        int tc = 0; /* the 128-wide product keeps mma.sync's kernel */
        for (int i = 0; i < p->nlaunches; i++) {
            const BgPlanLaunch *l = &p->launches[i];
            const BgInst *in = &m->insts[l->inst];
            if (in->op == BG_OP_BMM && bg_plan_bmm_tc(m, in, p->bufs[l->args[2]].kind == BG_BUF_B1T, 90)) tc++;
        }
        CHECK_EQ_INT(tc, 1);

        /* the manifest round trip keeps smem, and refuses it past the limit */
        char *txt = bg_manifest_write(p);
        CHECK(strstr(txt, " smem=154976\n") != NULL);
        BgPlan *q = bg_manifest_read(txt, strlen(txt), "wide", a, &d);
        CHECK(q != NULL);
        { /* a fused kernel beside an smem launch is refused */
            char *fz = bg_xmalloc(strlen(txt) + 64);
            strcpy(fz, txt);
            char *f = strstr(fz, "fused 0 kernel=- block=0\n");
            CHECK(f != NULL);
            if (f) {
                char rest[16384];
                snprintf(rest, sizeof rest, "%s", f + strlen("fused 0 kernel=- block=0\n"));
                sprintf(f, "fused 1 kernel=bgnn_model block=256\n%s", rest);
                refused(fz, "dynamic shared memory", a);
            }
            free(fz);
        }
        if (q) {
            char *txt2 = bg_manifest_write(q);
            CHECK(strcmp(txt, txt2) == 0);
            free(txt2);
        }
        char *bad = bg_xmalloc(strlen(txt) + 16);
        strcpy(bad, txt);
        char *s = strstr(bad, " smem=154976\n");
        if (s) memcpy(s, " smem=999999\n", 13);
        refused(bad, "smem", a);
        free(bad);
        free(txt);
    }

    /* sm_80: no wgmma product (y3's path falls back to mma.sync's), arch kept */
    BgPlan *p80 = bg_plan_build(m, "sm_80", a, &d);
    CHECK(p80 != NULL);
    if (p80) {
        CHECK(strcmp(p80->arch, "sm_80") == 0);
        CHECK_EQ_INT(wgs_launches(m, p80, 80), 0);
        const BgPlanLaunch *l3 = NULL;
        for (int i = 0; i < m->ninsts; i++)
            if (m->insts[i].op == BG_OP_BMM && m->insts[i].attrs.path == BG_BMM_PATH_WGMMA) l3 = launch_of(p80, i);
        CHECK(l3 != NULL && bg_plan_bmm_tc(m, &m->insts[l3->inst], true, 80));
        if (l3) { /* a schedule of path wgmma with its 384-thread blocks: mma.sync's keeps 256 there */
            BgInst *in3 = &m->insts[l3->inst];
            const BgSchedPoint def = bg_sched_point(in3);
            BgSchedPoint pt = def;
            pt.s.block = 384;
            CHECK(bg_sched_valid(m, in3, &pt, NULL, 0));
            bg_sched_set(in3, &pt);
            BgPlan *q80 = bg_plan_build(m, "sm_80", a, &d), *q90 = bg_plan_build(m, "sm_90", a, &d);
            const BgPlanLaunch *t80 = q80 ? launch_of(q80, l3->inst) : NULL, *t90 = q90 ? launch_of(q90, l3->inst) : NULL;
            CHECK(t80 != NULL && t80->block_size == 256 && t80->smem == 0);
            CHECK(t90 != NULL && t90->block_size == BG_PLAN_WGS_BLOCK && t90->smem > 0);
            bg_sched_set(in3, &def);
        }
    }

    /* the generated code, and the arch NVRTC must compile it for */
    char arch[16] = "";
    char *cu = bg_codegen_cuda_arch(m, "sm_90", arch, sizeof arch, &d);
    CHECK(cu != NULL && strcmp(arch, "sm_90a") == 0);
    if (cu) {
        CHECK(strstr(cu, "#include \"bmm_bb_wgs.cuh\"") != NULL);
        CHECK(strstr(cu, "__launch_bounds__(384, 1)") != NULL);
        CHECK(strstr(cu, "bgnn::bmm_bb_wgs_launch<'B', 1024, 1024>(rows, y, x, w") != NULL);
        CHECK(strstr(cu, "bgnn::bmm_bb_wgs_launch<'F', 1024, 100>(rows, y, x, w") != NULL);
        CHECK(strstr(cu, "static_assert(bgnn::wgs_smem_bytes<1024>() == 154976u") != NULL);
        CHECK(strstr(cu, "for sm_90a. Do not edit.") != NULL);
    }
    free(cu);
    cu = bg_codegen_cuda_arch(m, "sm_80", arch, sizeof arch, &d);
    CHECK(cu != NULL && strcmp(arch, "sm_80") == 0 && !strstr(cu, "bmm_bb_wgs"));
    free(cu);

    /* the schedule space: a wgmma point on sm_90 only; wgmma takes no other block */
    for (int i = 0; i < m->ninsts; i++) {
        BgInst *in = &m->insts[i];
        if (in->op != BG_OP_BMM || in->type.dim[1] != 1024 || in->prec[2] != 'B' || in->nsteps) continue;
        int n90 = bg_sched_space(m, in, 90, NULL, 0), n80 = bg_sched_space(m, in, 80, NULL, 0);
        BgSchedPoint *pts = bg_xcalloc((size_t)n90 + 1, sizeof *pts);
        bg_sched_space(m, in, 90, pts, n90);
        int wg = 0;
        for (int k = 0; k < n90; k++) wg += pts[k].path == BG_BMM_PATH_WGMMA;
        CHECK(wg > 0 && n80 == n90 - wg);
        free(pts);
        BgSchedPoint pt = bg_sched_point(in);
        pt.path = BG_BMM_PATH_WGMMA;
        pt.s.block = 256;
        char why[200] = "";
        CHECK(!bg_sched_valid(m, in, &pt, why, sizeof why) && strstr(why, "384") != NULL);
        pt.s.block = 384;
        CHECK(bg_sched_valid(m, in, &pt, why, sizeof why));
        break;
    }

    /* path wgmma needs K a multiple of 128: an error at the attribute */
    const char *badm = "model b\ninput X : f32[N, 200]\nparam W : b1[200, 64] = \"w\".T\n"
                       "output y = bmm.BBF(bin(X), W) { path: wgmma }\n";
    BgDiagSink d3;
    bg_diag_init(&d3);
    CHECK(compile(a, badm, &d3) == NULL);
    char *r = bg_diag_render(&d3);
    CHECK(strstr(r, "wide.bgnn:4:") != NULL && strstr(r, "path=wgmma needs K a multiple of 128 (K = 200)") != NULL);
    free(r);
    bg_diag_free(&d3);

    bg_diag_free(&d);
    bg_arena_free(a);
    return bg_test_finish();
}
