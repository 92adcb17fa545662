/* test_interp.c - the CPU reference interpreter and the leaf binder.
 * Builds small modules by hand (bg_module_new / bg_ir_add), binds them either directly
 * (adjacency from bg_adj_build over a hand CSR graph, leaf tensors filled here) or through
 * bg_bind over safetensors / .npy files written here, runs them, and checks the outputs
 * against computations done independently in this file. */
#include "reference.h"
#include "bgtest.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------------------- */

static BgRef add(BgModule *m, BgOp op, const char *prec, BgType t, int nargs, BgRef a0, BgRef a1,
                 BgRef a2, BgRef a3, BgRef a4) {
    BgRef args[5] = {a0, a1, a2, a3, a4};
    return bg_ir_add(m, op, prec, t, args, nargs, (BgLoc){0, 0});
}
#define N_ BG_DIM_N
#define F32(a, b) bg_type_make(BG_TY_F32, 2, a, b)
#define F32V(a) bg_type_make(BG_TY_F32, 1, a, 0)
#define B1(a, b) bg_type_make(BG_TY_B1, 2, a, b)
#define ADJT bg_type_make(BG_TY_ADJ, 0, 0, 0)
#define NONET bg_type_make(BG_TY_NONE, 0, 0, 0)
#define X BG_NONE

/* 7 nodes: an undirected graph with an isolated node (5), rows sorted. */
static void hand_graph(BgGraph *g, int batched) {
    static const int64_t rp[] = {0, 2, 5, 7, 9, 10, 10, 11};
    static const int32_t col[] = {1, 2, 0, 2, 3, 0, 1, 1, 4, 3, 6 /* 6 -> 6 self loop */};
    memset(g, 0, sizeof *g);
    g->n = 7;
    g->nnz = 11;
    g->rowptr = malloc(sizeof rp);
    memcpy(g->rowptr, rp, sizeof rp);
    g->col = malloc(sizeof col);
    memcpy(g->col, col, sizeof col);
    g->ngraphs = 1;
    if (batched) {
        g->ngraphs = 3; /* {0..4}, {5}, {6} */
        g->graph_ptr = malloc(sizeof(int64_t) * 4);
        g->graph_ptr[0] = 0;
        g->graph_ptr[1] = 5;
        g->graph_ptr[2] = 6;
        g->graph_ptr[3] = 7;
    }
}

static BgTensor f32_rand(int rank, int64_t d0, int64_t d1, unsigned long long *s) {
    BgTensor t;
    bg_tensor_alloc(&t, BG_DT_F32, rank, d0, d1);
    float *v = t.data;
    int64_t n = bg_tensor_rows(&t) * bg_tensor_cols(&t);
    for (int64_t i = 0; i < n; i++) v[i] = bg_test_randf(s);
    return t;
}

static void bindings_init(BgBindings *b, const BgModule *m, BgGraph *g) {
    memset(b, 0, sizeof *b);
    b->m = m;
    b->graph = g;
    b->n = g->n;
    b->ngraphs = g->graph_ptr ? g->ngraphs : 1;
    b->adj = calloc((size_t)m->ninsts, sizeof(BgAdj));
    b->leaf = calloc((size_t)m->ninsts, sizeof(BgTensor));
}

/* The bit rule: +1 iff the sign bit is clear (so -0.0 is -1). */
static int sgn(float v) { return signbit(v) ? -1 : 1; }

/* ---- module A: binary GCN layer, checked against a naive computation -------------- */

static void test_binary_gcn(void) {
    enum { N = 7, K = 5, M = 3 };
    BgArena *ar = bg_arena_new();
    BgModule *m = bg_module_new(ar, NULL, "bgcn");
    BgRef g = add(m, BG_OP_GRAPH, NULL, ADJT, 0, X, X, X, X, X);
    bg_ir_inst(m, g)->attrs.self_loops = true;
    bg_ir_inst(m, g)->attrs.norm = BG_NORM_NONE;
    BgRef x = add(m, BG_OP_INPUT, NULL, F32(N_, K), 0, X, X, X, X, X);
    BgRef w = add(m, BG_OP_PARAM, NULL, B1(K, M), 0, X, X, X, X, X);
    BgRef ws = add(m, BG_OP_PARAM_SCALE, NULL, F32V(M), 0, X, X, X, X, X);
    BgRef xb = add(m, BG_OP_BIN, NULL, B1(N_, K), 1, x, X, X, X, X);
    BgRef al = add(m, BG_OP_ABSMEAN, NULL, F32V(N_), 1, x, X, X, X, X);
    BgRef t = add(m, BG_OP_BMM, "BBF", F32(N_, M), 2, xb, w, X, X, X);
    BgRef ts = add(m, BG_OP_SCL, NULL, F32(N_, M), 3, t, al, ws, X, X);
    BgRef tb = add(m, BG_OP_BIN, NULL, B1(N_, M), 1, ts, X, X, X, X);
    BgRef agb = add(m, BG_OP_BSPMM, "BBB", B1(N_, M), 2, g, tb, X, X, X);
    bg_ir_inst(m, agb)->attrs.method = BG_METHOD_ANDNOT;
    BgRef agf = add(m, BG_OP_BSPMM, "BBF", F32(N_, M), 2, g, tb, X, X, X);
    bg_ir_inst(m, agf)->attrs.method = BG_METHOD_IFELSE;
    BgRef bias = add(m, BG_OP_PARAM, NULL, F32V(M), 0, X, X, X, X, X);
    BgRef sum = add(m, BG_OP_ADD, "FFF", F32(N_, M), 2, agf, bias, X, X, X);
    BgRef lsm = add(m, BG_OP_LOG_SOFTMAX, NULL, F32(N_, M), 1, sum, X, X, X, X);
    BgRef o1 = add(m, BG_OP_OUTPUT, NULL, NONET, 1, lsm, X, X, X, X);
    bg_ir_inst(m, o1)->attrs.name = "logp";
    BgRef o2 = add(m, BG_OP_OUTPUT, NULL, NONET, 1, agb, X, X, X, X);
    bg_ir_inst(m, o2)->attrs.name = "bits";

    BgGraph gr;
    hand_graph(&gr, 0);
    BgBindings b;
    bindings_init(&b, m, &gr);
    CHECK(bg_adj_build(&gr, true, BG_NORM_NONE, &b.adj[g]));
    unsigned long long seed = 42;
    b.leaf[x] = f32_rand(2, N, K, &seed);
    ((float *)b.leaf[x].data)[3 * K + 1] = 0.0f;  /* +0: bit +1 */
    ((float *)b.leaf[x].data)[2 * K + 4] = -0.0f; /* -0: bit -1 */
    for (int k = 0; k < K; k++) ((float *)b.leaf[x].data)[4 * K + k] = k == 2 ? -0.0f : 0.0f;
    /* node 4 is all zeros: alpha = 0, so scl gives +-0 and bin keeps the sign of the dot */
    BgTensor wf = f32_rand(2, K, M, &seed);
    CHECK(bg_ref_bin(&wf, &b.leaf[w]));
    CHECK(bg_param_scale(&wf, &b.leaf[ws]));
    b.leaf[bias] = f32_rand(1, M, 0, &seed);

    BgDiagSink d;
    bg_diag_init(&d);
    BgInterpResult r;
    BgTensor *vals = NULL;
    CHECK(bg_interp_run(m, &b, &r, &vals, &d));
    CHECK_EQ_INT(d.nerrors, 0);
    CHECK_EQ_INT(r.noutputs, 2);
    if (r.noutputs == 2 && vals) {
        CHECK(strcmp(r.names[0], "logp") == 0 && strcmp(r.names[1], "bits") == 0);
        /* Independent computation on unpacked values. */
        const float *xv = b.leaf[x].data, *wv = wf.data, *bv = b.leaf[bias].data;
        int hb[N][M];
        for (int i = 0; i < N; i++) {
            double asum = 0;
            for (int k = 0; k < K; k++) asum += fabs((double)xv[i * K + k]);
            float alpha = (float)(asum / K);
            for (int o = 0; o < M; o++) {
                double msum = 0;
                int dot = 0;
                for (int k = 0; k < K; k++) {
                    msum += fabs((double)wv[k * M + o]);
                    dot += sgn(xv[i * K + k]) * sgn(wv[k * M + o]);
                }
                float mo = (float)(msum / K);
                float v = (float)dot;
                v = v * alpha;
                v = v * mo;
                hb[i][o] = sgn(v);
            }
        }
        /* A + I (node 6 already has its self loop). */
        int adj[N][N];
        memset(adj, 0, sizeof adj);
        for (int i = 0; i < N; i++) {
            adj[i][i] = 1;
            for (int64_t e = gr.rowptr[i]; e < gr.rowptr[i + 1]; e++) adj[i][gr.col[e]] = 1;
        }
        int bad_bits = 0, bad_lp = 0;
        for (int i = 0; i < N; i++) {
            float row[M];
            for (int o = 0; o < M; o++) {
                int s = 0;
                for (int j = 0; j < N; j++)
                    if (adj[i][j]) s += hb[j][o];
                if (bg_bit_get(r.outputs[1].data, r.outputs[1].words_per_row, i, o) != (s >= 0))
                    bad_bits++;
                row[o] = (float)s + bv[o];
            }
            float mx = row[0];
            for (int o = 1; o < M; o++) mx = row[o] > mx ? row[o] : mx;
            double se = 0;
            for (int o = 0; o < M; o++) se += exp((double)row[o] - mx);
            for (int o = 0; o < M; o++)
                if (((float *)r.outputs[0].data)[i * M + o] != (float)((double)row[o] - mx - log(se)))
                    bad_lp++;
        }
        CHECK_EQ_INT(bad_bits, 0);
        CHECK_EQ_INT(bad_lp, 0);
        /* all values: leaves copied, GRAPH / OUTPUT empty, intermediates typed */
        CHECK(vals[g].data == NULL && vals[o1].data == NULL && vals[o2].data == NULL);
        CHECK(vals[w].data && memcmp(vals[w].data, b.leaf[w].data, bg_tensor_bytes(&b.leaf[w])) == 0);
        CHECK(vals[xb].dtype == BG_DT_B1 && vals[xb].dim[0] == N && vals[xb].dim[1] == K);
        CHECK(bg_bit_get(vals[xb].data, vals[xb].words_per_row, 3, 1) == 1);
        CHECK(bg_bit_get(vals[xb].data, vals[xb].words_per_row, 2, 4) == 0);
        CHECK(((float *)vals[al].data)[4] == 0.0f);
        {
            int agree = 1; /* bin(scl(t, 0, m)) = bin(t) for the all-zero node */
            for (int o = 0; o < M; o++)
                if (bg_bit_get(vals[tb].data, vals[tb].words_per_row, 4, o) !=
                    (((float *)vals[t].data)[4 * M + o] >= 0))
                    agree = 0;
            CHECK(agree);
        }
        CHECK(vals[al].rank == 1 && vals[al].dim[0] == N);
        CHECK(r.outputs[1].dtype == BG_DT_B1 && r.outputs[1].dim[0] == N);
    }
    bg_interp_values_free(m, vals);
    bg_interp_result_free(&r);

    /* Without all_values: same outputs (values freed after their last use). */
    BgInterpResult r2;
    CHECK(bg_interp_run(m, &b, &r2, NULL, &d));
    CHECK_EQ_INT(r2.noutputs, 2);
    bg_interp_result_free(&r2);

    /* A missing leaf is an internal error, not a crash. */
    BgTensor saved = b.leaf[ws];
    memset(&b.leaf[ws], 0, sizeof saved);
    BgInterpResult r3;
    CHECK(!bg_interp_run(m, &b, &r3, NULL, &d));
    CHECK(d.nerrors == 1 && d.items[0].code == BG_E_INTERNAL);
    CHECK(r3.noutputs == 0 && r3.outputs == NULL);
    b.leaf[ws] = saved;

    /* A value whose computed shape contradicts its type is an internal error. */
    bg_ir_inst(m, t)->type = F32(N_, M + 1);
    CHECK(!bg_interp_run(m, &b, &r3, NULL, &d));
    CHECK(d.nerrors == 2 && d.items[1].code == BG_E_INTERNAL);
    CHECK_STR_CONTAINS(d.items[1].msg, "f32[N,4]");
    bg_ir_inst(m, t)->type = F32(N_, M);

    bg_diag_free(&d);
    bg_tensor_free(&wf);
    bg_bindings_free(&b);
    bg_graph_free(&gr);
    bg_arena_free(ar);
}

/* ---- module B: float layers over a batched graph ------------------------------------ */

static void test_float_batched(void) {
    enum { N = 7, C = 4, M = 2 };
    BgArena *ar = bg_arena_new();
    BgModule *m = bg_module_new(ar, NULL, "floaty");
    BgRef g = add(m, BG_OP_GRAPH, NULL, ADJT, 0, X, X, X, X, X);
    bg_ir_inst(m, g)->attrs.norm = BG_NORM_SYM;
    BgRef x = add(m, BG_OP_INPUT, NULL, F32(N_, C), 0, X, X, X, X, X);
    BgRef st = add(m, BG_OP_STANDARDIZE, NULL, F32(N_, C), 1, x, X, X, X, X);
    bg_ir_inst(m, st)->attrs.eps = 1e-4f;
    BgRef mu = add(m, BG_OP_PARAM, NULL, F32V(C), 0, X, X, X, X, X);
    BgRef var = add(m, BG_OP_PARAM, NULL, F32V(C), 0, X, X, X, X, X);
    BgRef gam = add(m, BG_OP_PARAM, NULL, F32V(C), 0, X, X, X, X, X);
    BgRef bn = add(m, BG_OP_BATCHNORM, NULL, F32(N_, C), 5, st, mu, var, gam, X);
    bg_ir_inst(m, bn)->attrs.eps = 1e-5f;
    BgRef re = add(m, BG_OP_RELU, NULL, F32(N_, C), 1, bn, X, X, X, X);
    BgRef w = add(m, BG_OP_PARAM, NULL, F32(C, M), 0, X, X, X, X, X);
    BgRef mm = add(m, BG_OP_BMM, "FFF", F32(N_, M), 2, re, w, X, X, X);
    BgRef ag = add(m, BG_OP_BSPMM, "FFF", F32(N_, M), 2, g, mm, X, X, X);
    BgRef cc = add(m, BG_OP_CONCAT, NULL, F32(N_, C + M), 2, re, ag, X, X, X);
    BgRef rd = add(m, BG_OP_READOUT, NULL, F32(BG_DIM_G, C + M), 2, cc, g, X, X, X);
    bg_ir_inst(m, rd)->attrs.reduce = BG_RED_MEAN;
    BgRef o1 = add(m, BG_OP_OUTPUT, NULL, NONET, 1, rd, X, X, X, X);
    bg_ir_inst(m, o1)->attrs.name = "pooled";
    BgRef o2 = add(m, BG_OP_OUTPUT, NULL, NONET, 1, ag, X, X, X, X);
    (void)o2; /* unnamed: gets a generated name */

    BgGraph gr;
    hand_graph(&gr, 1);
    BgBindings b;
    bindings_init(&b, m, &gr);
    CHECK(bg_adj_build(&gr, false, BG_NORM_SYM, &b.adj[g]));
    unsigned long long seed = 5;
    b.leaf[x] = f32_rand(2, N, C, &seed);
    b.leaf[mu] = f32_rand(1, C, 0, &seed);
    b.leaf[var] = f32_rand(1, C, 0, &seed);
    for (int c = 0; c < C; c++) ((float *)b.leaf[var].data)[c] += 1.5f;
    b.leaf[gam] = f32_rand(1, C, 0, &seed);
    b.leaf[w] = f32_rand(2, C, M, &seed);

    BgDiagSink d;
    bg_diag_init(&d);
    BgInterpResult r;
    CHECK(bg_interp_run(m, &b, &r, NULL, &d));
    CHECK_EQ_INT(d.nerrors, 0);
    CHECK_EQ_INT(r.noutputs, 2);
    if (r.noutputs == 2) {
        CHECK(strcmp(r.names[0], "pooled") == 0);
        CHECK(r.names[1] != NULL);
        CHECK_EQ_INT(r.outputs[0].dim[0], 3);
        CHECK_EQ_INT(r.outputs[0].dim[1], C + M);
        /* Independent: per node, standardize -> batchnorm (gamma, no beta) -> relu. */
        const float *xv = b.leaf[x].data, *muv = b.leaf[mu].data, *vv = b.leaf[var].data,
                    *gv = b.leaf[gam].data, *wv = b.leaf[w].data;
        float h[N][C], z[N][M], ag2[N][M];
        for (int i = 0; i < N; i++) {
            double s = 0, ss = 0;
            for (int c = 0; c < C; c++) s += xv[i * C + c];
            double mean = s / C;
            for (int c = 0; c < C; c++) ss += (xv[i * C + c] - mean) * (xv[i * C + c] - mean);
            double sd = sqrt(ss / (C - 1));
            for (int c = 0; c < C; c++) {
                float v = (float)((xv[i * C + c] - mean) / (sd + (double)1e-4f));
                float inv = 1.0f / sqrtf(vv[c] + 1e-5f);
                v = (v - muv[c]) * inv;
                v = v * gv[c];
                h[i][c] = v > 0 ? v : 0;
            }
            for (int o = 0; o < M; o++) {
                float acc = 0;
                for (int c = 0; c < C; c++) {
                    float p = h[i][c] * wv[c * M + o];
                    acc = acc + p;
                }
                z[i][o] = acc;
            }
        }
        /* sym over A (no self loops): d = 2, 3, 2, 2, 1, 0, 1. */
        for (int i = 0; i < N; i++)
            for (int o = 0; o < M; o++) {
                float acc = 0;
                int64_t di = gr.rowptr[i + 1] - gr.rowptr[i];
                for (int64_t e = gr.rowptr[i]; e < gr.rowptr[i + 1]; e++) {
                    int j = gr.col[e];
                    int64_t dj = gr.rowptr[j + 1] - gr.rowptr[j];
                    float wij = (float)(1.0 / sqrt((double)di)) * (float)(1.0 / sqrt((double)dj));
                    float p = wij * z[j][o];
                    acc = acc + p;
                }
                ag2[i][o] = acc;
            }
        int bad = 0;
        for (int i = 0; i < N; i++)
            for (int o = 0; o < M; o++)
                if (((float *)r.outputs[1].data)[i * M + o] != ag2[i][o]) bad++;
        /* readout mean over {0..4}, {5}, {6} */
        const int lo[] = {0, 5, 6}, hi[] = {5, 6, 7};
        for (int gi = 0; gi < 3; gi++)
            for (int c = 0; c < C + M; c++) {
                float acc = 0;
                for (int i = lo[gi]; i < hi[gi]; i++) acc = acc + (c < C ? h[i][c] : ag2[i][c - C]);
                acc = acc / (float)(hi[gi] - lo[gi]);
                if (((float *)r.outputs[0].data)[gi * (C + M) + c] != acc) bad++;
            }
        CHECK_EQ_INT(bad, 0);
        CHECK(((float *)r.outputs[0].data)[1 * (C + M) + C] == 0.0f); /* isolated node: 0 */
    }
    bg_interp_result_free(&r);
    bg_diag_free(&d);
    bg_bindings_free(&b);
    bg_graph_free(&gr);
    bg_arena_free(ar);
}

/* ---- bind: files written here, then bound and checked ------------------------------- */

static int has_msg(const BgDiagSink *d, int code, const char *a, const char *b2) {
    for (int i = 0; i < d->n; i++)
        if (d->items[i].code == code && strstr(d->items[i].msg, a) && (!b2 || strstr(d->items[i].msg, b2)))
            return 1;
    return 0;
}

static void test_bind(void) {
    char dir[512], stp[600], npyp[600];
    snprintf(dir, sizeof dir, "%s/bgnn_test_bind_%d", bg_test_tmpdir(), (int)getpid());
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(stp, sizeof stp, "%s/w.safetensors", dir);
    snprintf(npyp, sizeof npyp, "%s/w2.npy", dir);
    enum { K = 5, M = 3 };
    /* "lin.weight" stored [M,K] (PyTorch), "lin.bias" [M]; w2.npy [K,M]. */
    float wt[M * K], bias[M] = {0.5f, -1, 2}, w2[K * M];
    for (int i = 0; i < M * K; i++) wt[i] = (float)(i % 4) - 1.5f + (i == 7 ? 1.5f : 0.0f);
    wt[3] = -0.0f; /* bit -1 */
    wt[4] = 0.0f;  /* bit +1 */
    for (int i = 0; i < K * M; i++) w2[i] = (float)i - 7.0f;
    const char *names[] = {"lin.weight", "lin.bias"};
    const float *datas[] = {wt, bias};
    int ranks[] = {2, 1};
    int64_t dims[2][4] = {{M, K, 0, 0}, {M, 0, 0, 0}};
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(bg_safetensors_save_f32(stp, 2, names, datas, ranks, (const int64_t(*)[4])dims, &d));
    int64_t nd[2] = {K, M};
    CHECK(bg_npy_save_f32(npyp, w2, 2, nd, &d));

    BgArena *ar = bg_arena_new();
    BgModule *m = bg_module_new(ar, NULL, "b");
    BgRef g = add(m, BG_OP_GRAPH, NULL, ADJT, 0, X, X, X, X, X);
    bg_ir_inst(m, g)->attrs.self_loops = true;
    bg_ir_inst(m, g)->attrs.norm = BG_NORM_MEAN;
    BgRef x = add(m, BG_OP_INPUT, NULL, F32(N_, K), 0, X, X, X, X, X);
    bg_ir_inst(m, x)->attrs.name = "X";
    BgRef wb = add(m, BG_OP_PARAM, NULL, B1(K, M), 0, X, X, X, X, X);
    bg_ir_inst(m, wb)->attrs.name = "lin.weight";
    bg_ir_inst(m, wb)->attrs.transposed = true;
    BgRef ws = add(m, BG_OP_PARAM_SCALE, NULL, F32V(M), 0, X, X, X, X, X);
    bg_ir_inst(m, ws)->attrs.name = "lin.weight";
    bg_ir_inst(m, ws)->attrs.transposed = true;
    BgRef bb = add(m, BG_OP_PARAM, NULL, F32V(M), 0, X, X, X, X, X);
    bg_ir_inst(m, bb)->attrs.name = "lin.bias";
    BgRef wn = add(m, BG_OP_PARAM, NULL, F32(K, M), 0, X, X, X, X, X);
    bg_ir_inst(m, wn)->attrs.name = "w2";
    bg_ir_inst(m, wn)->attrs.file = "w2.npy";
    BgRef o = add(m, BG_OP_OUTPUT, NULL, NONET, 1, x, X, X, X, X);
    bg_ir_inst(m, o)->attrs.name = "y";

    BgGraph gr;
    hand_graph(&gr, 0);
    unsigned long long seed = 11;
    BgTensor feat = f32_rand(2, 7, K, &seed);
    BgBindings b;
    CHECK(bg_bind(m, &gr, &feat, stp, &b, &d));
    CHECK_EQ_INT(d.nerrors, 0);
    if (d.nerrors == 0) {
        CHECK_EQ_INT(b.n, 7);
        CHECK_EQ_INT(b.ngraphs, 1);
        CHECK(b.adj[g].rowptr && b.adj[g].norm == BG_NORM_MEAN && b.adj[g].nnz == 11 + 6);
        CHECK(memcmp(b.leaf[x].data, feat.data, bg_tensor_bytes(&feat)) == 0);
        int bad = 0;
        for (int k = 0; k < K; k++)
            for (int oo = 0; oo < M; oo++) {
                float v = wt[oo * K + k]; /* used [K,M] = stored [M,K] transposed */
                if (bg_bit_get(b.leaf[wb].data, b.leaf[wb].words_per_row, k, oo) != (sgn(v) > 0)) bad++;
                if (((float *)b.leaf[wn].data)[k * M + oo] != w2[k * M + oo]) bad++;
            }
        for (int oo = 0; oo < M; oo++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += fabs((double)wt[oo * K + k]);
            if (((float *)b.leaf[ws].data)[oo] != (float)(s / K)) bad++;
            if (((float *)b.leaf[bb].data)[oo] != bias[oo]) bad++;
        }
        CHECK_EQ_INT(bad, 0);
        CHECK(b.leaf[wb].dtype == BG_DT_B1 && b.leaf[wb].dim[0] == K && b.leaf[wb].dim[1] == M);
        BgInterpResult r;
        CHECK(bg_interp_run(m, &b, &r, NULL, &d));
        CHECK(r.noutputs == 1 && memcmp(r.outputs[0].data, feat.data, bg_tensor_bytes(&feat)) == 0);
        bg_interp_result_free(&r);
        bg_bindings_free(&b);
    }
    /* weights given as the directory: npy params still resolve */
    BgDiagSink d2;
    bg_diag_init(&d2);
    CHECK(!bg_bind(m, &gr, &feat, dir, &b, &d2));
    CHECK(has_msg(&d2, BG_E_WEIGHT_MISSING, "lin.weight", NULL));
    CHECK(b.leaf == NULL && b.adj == NULL);
    bg_diag_free(&d2);

    /* errors: missing tensor, wrong shape, wrong features, all reported in one run */
    bg_ir_inst(m, bb)->attrs.name = "lin.nope";
    bg_ir_inst(m, wb)->attrs.transposed = false; /* stored [3,5] used as [5,3] */
    bg_ir_inst(m, wn)->type = F32(K, M + 1);
    BgTensor feat2 = f32_rand(2, 7, K + 1, &seed);
    bg_diag_init(&d2);
    CHECK(!bg_bind(m, &gr, &feat2, stp, &b, &d2));
    CHECK(has_msg(&d2, BG_E_WEIGHT_MISSING, "w.safetensors", "'lin.nope'"));
    CHECK(has_msg(&d2, BG_E_WEIGHT_SHAPE, "'lin.weight' has shape [3, 5]", "[5, 3]"));
    CHECK(has_msg(&d2, BG_E_WEIGHT_SHAPE, "w2.npy", "[5, 4]"));
    CHECK(has_msg(&d2, BG_E_DATA_SHAPE, "features.npy: shape [7, 6] does not match input 'X' : f32[N,5]", NULL));
    CHECK(d2.nerrors == 4);
    bg_diag_free(&d2);

    /* rows must equal the graph's node count */
    bg_ir_inst(m, bb)->attrs.name = "lin.bias";
    bg_ir_inst(m, wb)->attrs.transposed = true;
    bg_ir_inst(m, wn)->type = F32(K, M);
    BgTensor feat3 = f32_rand(2, 6, K, &seed);
    bg_diag_init(&d2);
    CHECK(!bg_bind(m, &gr, &feat3, stp, &b, &d2));
    CHECK(has_msg(&d2, BG_E_DATA_SHAPE, "shape [6, 5]", NULL));
    CHECK(d2.nerrors == 1);
    bg_diag_free(&d2);

    bg_tensor_free(&feat);
    bg_tensor_free(&feat2);
    bg_tensor_free(&feat3);
    bg_graph_free(&gr);
    bg_arena_free(ar);
    bg_diag_free(&d);
    remove(stp);
    remove(npyp);
    rmdir(dir);
}

int main(void) {
    test_binary_gcn();
    test_float_batched();
    test_bind();
    return bg_test_finish();
}
