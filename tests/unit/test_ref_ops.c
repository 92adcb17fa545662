/* test_ref_ops.c - the CPU reference ops: hand-computed small cases for every op and
 * precision variant, and randomized cross-checks of the bit-packed ops against naive
 * computations on unpacked +-1 values (awkward shapes, isolated nodes, a high-degree node,
 * all three BSPMM methods, padding bits). */
#include "reference.h"
#include "bgtest.h"

#include <stdint.h>

/* ---- helpers ---------------------------------------------------------------------- */

/* The float64 row sums' orders (docs/semantics.md, section 2). */
static const BgFpOrder SEQ = {BG_FP_SEQ, false, 0, 0, 0}, LANES2 = {BG_FP_LANES, false, 2, 0, 0};

static BgTensor mk_f32(int rank, int64_t d0, int64_t d1, const float *v) {
    BgTensor t;
    bg_tensor_alloc(&t, BG_DT_F32, rank, d0, d1);
    if (v) memcpy(t.data, v, bg_tensor_bytes(&t));
    return t;
}

/* The bit rule of docs/semantics.md, written independently: +1 iff the sign bit is clear. */
static int rule(float v) { return !signbit(v); }
static float pm(float v) { return rule(v) ? 1.0f : -1.0f; }

/* b1 tensor from float values by the bit rule. */
static BgTensor mk_b1(int rank, int64_t d0, int64_t d1, const float *v) {
    BgTensor t;
    bg_tensor_alloc(&t, BG_DT_B1, rank, d0, d1);
    int64_t rows = bg_tensor_rows(&t), cols = bg_tensor_cols(&t);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            if (rule(v[r * cols + c])) bg_bit_set(t.data, t.words_per_row, r, c, 1);
    return t;
}

static int bitv(const BgTensor *t, int64_t r, int64_t c) {
    return bg_bit_get(t->data, t->words_per_row, r, c);
}

/* Every padding bit of a b1 tensor is zero. */
static int padding_zero(const BgTensor *t) {
    int64_t rows = bg_tensor_rows(t), cols = bg_tensor_cols(t), wpr = t->words_per_row;
    if (cols % 32 == 0) return 1;
    uint32_t pad = ~((1u << (cols % 32)) - 1u);
    const uint32_t *w = t->data;
    for (int64_t r = 0; r < rows; r++)
        if (w[r * wpr + wpr - 1] & pad) return 0;
    return 1;
}

/* Test-local adjacency builder, straight from docs/semantics.md section 3 (independent of
 * graph.c): rowptr/col of the final pattern (self loops already included by the caller). */
static BgAdj mk_adj(int64_t n, const int64_t *rowptr, const int32_t *col, BgNorm norm) {
    BgAdj a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.nnz = rowptr[n];
    a.rowptr = malloc(sizeof(int64_t) * (size_t)(n + 1));
    memcpy(a.rowptr, rowptr, sizeof(int64_t) * (size_t)(n + 1));
    a.col = malloc(sizeof(int32_t) * (size_t)(a.nnz + 1));
    if (a.nnz) memcpy(a.col, col, sizeof(int32_t) * (size_t)a.nnz);
    a.rowf = malloc(sizeof(float) * (size_t)(n + 1));
    a.colf = malloc(sizeof(float) * (size_t)(n + 1));
    a.w = malloc(sizeof(float) * (size_t)(a.nnz + 1));
    a.norm = norm;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)(rowptr[i + 1] - rowptr[i]);
        if (d == 0) a.rowf[i] = a.colf[i] = 0.0f;
        else if (norm == BG_NORM_SYM) a.rowf[i] = a.colf[i] = (float)(1.0 / sqrt(d));
        else if (norm == BG_NORM_MEAN) a.rowf[i] = (float)(1.0 / d), a.colf[i] = 1.0f;
        else a.rowf[i] = a.colf[i] = 1.0f;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++) a.w[e] = a.rowf[i] * a.colf[col[e]];
    return a;
}

static void free_adj(BgAdj *a) {
    free(a->rowptr);
    free(a->col);
    free(a->rowf);
    free(a->colf);
    free(a->w);
    memset(a, 0, sizeof *a);
}

/* ---- hand-computed cases ------------------------------------------------------------ */

static void test_bin(void) {
    float nanv = copysignf(NAN, 1.0f), negnan = copysignf(NAN, -1.0f);
    float x[2 * 33];
    for (int i = 0; i < 66; i++) x[i] = (i % 3 == 0) ? -1.0f : 1.0f;
    x[0] = 0.0f;
    x[1] = -0.0f;
    x[2] = nanv;
    x[3] = -1e-30f;
    x[5] = negnan;
    x[6] = 1e-45f;
    x[32] = -5.0f;  /* row 0, col 32: second word */
    x[33 + 32] = 7.0f;
    BgTensor t = mk_f32(2, 2, 33, x), y;
    CHECK(bg_ref_bin(&t, &y));
    CHECK_EQ_INT(y.dtype, BG_DT_B1);
    CHECK_EQ_INT(y.words_per_row, 2);
    CHECK_EQ_INT(bitv(&y, 0, 0), 1);  /* bin(0) = +1 */
    CHECK_EQ_INT(bitv(&y, 0, 1), 0);  /* bin(-0) = -1: the sign bit decides */
    CHECK_EQ_INT(bitv(&y, 0, 2), 1);  /* +NaN -> +1 */
    CHECK_EQ_INT(bitv(&y, 0, 3), 0);
    CHECK_EQ_INT(bitv(&y, 0, 4), 1);
    CHECK_EQ_INT(bitv(&y, 0, 5), 0);  /* -NaN -> -1 */
    CHECK_EQ_INT(bitv(&y, 0, 6), 1);  /* denormal */
    CHECK_EQ_INT(bitv(&y, 0, 32), 0);
    CHECK_EQ_INT(bitv(&y, 1, 32), 1);
    CHECK_EQ_INT(bitv(&y, 1, 0), 0);  /* x[33]: 33 % 3 == 0 -> -1 */
    CHECK_EQ_INT(bitv(&y, 1, 1), 1);
    CHECK(padding_zero(&y));
    bg_tensor_free(&y);
    bg_tensor_free(&t);
}

static void test_absmean_scl(void) {
    float x[] = {1, -2, 3, 0, 0, -4};
    BgTensor t = mk_f32(2, 2, 3, x), y;
    CHECK(bg_ref_absmean(&t, SEQ, &y));
    CHECK_EQ_INT(y.rank, 1);
    CHECK_EQ_INT(y.dim[0], 2);
    CHECK(((float *)y.data)[0] == 2.0f);
    CHECK(((float *)y.data)[1] == (float)(4.0 / 3.0));
    bg_tensor_free(&y);
    /* float64 sum: 0.1f + 0.2f + 0.3f summed in double, divided once. */
    float x2[] = {0.1f, -0.2f, 0.3f};
    BgTensor t2 = mk_f32(2, 1, 3, x2);
    CHECK(bg_ref_absmean(&t2, SEQ, &y));
    CHECK(((float *)y.data)[0] == (float)(((double)0.1f + (double)0.2f + (double)0.3f) / 3.0));
    bg_tensor_free(&y);
    bg_tensor_free(&t2);
    /* lanes(2) on 5 terms: lane 0 sums x0, x2, x4 and lane 1 x1, x3, then lane 0 + lane 1.
     * |x| = (2^53, 1, 0, 1, 2^-20): seq loses both 1s (2^53 + 1 rounds to 2^53), lanes(2) adds
     * them first (2^53 + 2); the float32 means round alike, the float64 sums do not (checked
     * through standardize below and test_fp_order's bin.center). */
    float x3[] = {0x1p53f, -1.0f, 0.0f, 1.0f, 0x1p-20f};
    BgTensor t3 = mk_f32(2, 1, 5, x3);
    CHECK(bg_ref_absmean(&t3, SEQ, &y));
    CHECK(((float *)y.data)[0] == (float)(0x1p53 / 5.0));
    bg_tensor_free(&y);
    CHECK(bg_ref_absmean(&t3, LANES2, &y));
    CHECK(((float *)y.data)[0] == (float)((0x1p53 + 2.0) / 5.0));
    bg_tensor_free(&y);
    bg_tensor_free(&t3);
    /* standardize of (1, 2^60, 1, -2^60) in lanes(2): lane 0 = 1 + 1 = 2, lane 1 = 0, mu =
     * 0.5; in seq 1 + 2^60 rounds to 2^60 and the sum is 0, mu = 0: x[0] - mu differs. */
    float x4[] = {1.0f, 0x1p60f, 1.0f, -0x1p60f};
    BgTensor t4 = mk_f32(2, 1, 4, x4);
    BgTensor y2;
    CHECK(bg_ref_standardize(&t4, 0.0f, SEQ, &y) && bg_ref_standardize(&t4, 0.0f, LANES2, &y2));
    CHECK(((float *)y.data)[0] > ((float *)y2.data)[0]);
    bg_tensor_free(&y);
    bg_tensor_free(&y2);
    bg_tensor_free(&t4);

    float s[] = {1, 2, 3, 4};
    float rs[] = {2, 0.5f}, cs[] = {10, -1};
    BgTensor sx = mk_f32(2, 2, 2, s), r = mk_f32(1, 2, 0, rs), c = mk_f32(1, 2, 0, cs);
    CHECK(bg_ref_scl(&sx, &r, &c, &y));
    float e1[] = {20, -4, 15, -2};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == e1[i]);
    bg_tensor_free(&y);
    CHECK(bg_ref_scl(&sx, NULL, &c, &y));
    float e2[] = {10, -2, 30, -4};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == e2[i]);
    bg_tensor_free(&y);
    CHECK(bg_ref_scl(&sx, &r, NULL, &y));
    float e3[] = {2, 4, 1.5f, 2};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == e3[i]);
    bg_tensor_free(&y);
    /* a b1 operand is read as +-1 (bits of 1, 2, -0.0, -4), the result is f32 */
    float sb[] = {1, 2, -0.0f, -4};
    BgTensor bx = mk_b1(2, 2, 2, sb);
    CHECK(bg_ref_scl(&bx, &r, &c, &y));
    CHECK(y.dtype == BG_DT_F32);
    float e4[] = {20, -2, -5, 0.5f};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == e4[i]);
    bg_tensor_free(&y);
    bg_tensor_free(&bx);
    BgTensor bad = mk_f32(1, 3, 0, NULL);
    CHECK(!bg_ref_scl(&sx, &bad, NULL, &y));
    CHECK(y.data == NULL);
    bg_tensor_free(&bad);
    bg_tensor_free(&sx);
    bg_tensor_free(&r);
    bg_tensor_free(&c);
    bg_tensor_free(&t);

    /* param scale: mean |W[k,o]| over k. */
    float w[] = {1, -2, -3, 4, 0.5f, 0};
    BgTensor wt = mk_f32(2, 3, 2, w);
    CHECK(bg_param_scale(&wt, &y));
    CHECK(((float *)y.data)[0] == (float)(4.5 / 3.0));
    CHECK(((float *)y.data)[1] == 2.0f);
    bg_tensor_free(&y);
    bg_tensor_free(&wt);
}

static void test_bmm_hand(void) {
    /* x: 2 x 3, W: 3 x 2.  Bits: x r0 = [+,-,+], r1 = [+,+,+]; W = [[+,-],[+,+],[-,+]]. */
    float xf[] = {0.5f, -2, 3, 1, 1, 1};
    float wf[] = {0.5f, -1, 2, 0.25f, -1, 3};
    BgTensor x_f = mk_f32(2, 2, 3, xf), x_b = mk_b1(2, 2, 3, xf);
    BgTensor w_f = mk_f32(2, 3, 2, wf), w_b = mk_b1(2, 3, 2, wf);
    BgTensor y;
    /* BB: r0: o0 = 1-1-1 = -1, o1 = -1-1+1 = -1; r1: o0 = 1+1-1 = 1, o1 = -1+1+1 = 1. */
    CHECK(bg_ref_bmm("BBF", &x_b, &w_b, &y));
    float ebb[] = {-1, -1, 1, 1};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == ebb[i]);
    bg_tensor_free(&y);
    CHECK(bg_ref_bmm("BBB", &x_b, &w_b, &y));
    CHECK_EQ_INT(bitv(&y, 0, 0), 0);
    CHECK_EQ_INT(bitv(&y, 0, 1), 0);
    CHECK_EQ_INT(bitv(&y, 1, 0), 1);
    CHECK_EQ_INT(bitv(&y, 1, 1), 1);
    CHECK(padding_zero(&y));
    bg_tensor_free(&y);
    /* FB: r0: o0 = 0.5 - 2 - 3 = -4.5, o1 = -0.5 - 2 + 3 = 0.5; r1: o0 = 1, o1 = 1. */
    CHECK(bg_ref_bmm("FBF", &x_f, &w_b, &y));
    float efb[] = {-4.5f, 0.5f, 1, 1};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == efb[i]);
    bg_tensor_free(&y);
    CHECK(bg_ref_bmm("FBB", &x_f, &w_b, &y));
    CHECK_EQ_INT(bitv(&y, 0, 0), 0);
    CHECK_EQ_INT(bitv(&y, 0, 1), 1);
    bg_tensor_free(&y);
    /* BF: r0: o0 = 0.5 - 2 - 1 = -2.5, o1 = -1 - 0.25 + 3 = 1.75; r1: o0 = 1.5, o1 = 2.25. */
    CHECK(bg_ref_bmm("BFF", &x_b, &w_f, &y));
    float ebf[] = {-2.5f, 1.75f, 1.5f, 2.25f};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == ebf[i]);
    bg_tensor_free(&y);
    CHECK(bg_ref_bmm("BFB", &x_b, &w_f, &y));
    CHECK_EQ_INT(bitv(&y, 0, 0), 0);
    CHECK_EQ_INT(bitv(&y, 0, 1), 1);
    bg_tensor_free(&y);
    /* FF: r0: o0 = 0.25 - 4 - 3 = -6.75, o1 = -0.5 - 0.5 + 9 = 8; r1: o0 = 1.5, o1 = 2.25. */
    CHECK(bg_ref_bmm("FFF", &x_f, &w_f, &y));
    float eff[] = {-6.75f, 8, 1.5f, 2.25f};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == eff[i]);
    bg_tensor_free(&y);
    CHECK(bg_ref_bmm("FFB", &x_f, &w_f, &y));
    CHECK_EQ_INT(bitv(&y, 0, 0), 0);
    CHECK_EQ_INT(bitv(&y, 0, 1), 1);
    CHECK_EQ_INT(bitv(&y, 1, 0), 1);
    bg_tensor_free(&y);
    /* Mismatched letters / shapes are refused. */
    CHECK(!bg_ref_bmm("FBF", &x_b, &w_b, &y));
    CHECK(!bg_ref_bmm("BBF", &x_b, &x_b, &y));
    CHECK(!bg_ref_bmm("BXF", &x_b, &w_b, &y));
    /* Tie: K = 2, dot = 0 gives +1; the float sum order matters: 1e8 + 1 - 1e8 = 0 in f32. */
    float xt[] = {1, -1}, wt[] = {1, 1};
    BgTensor xtb = mk_b1(2, 1, 2, xt), wtb = mk_b1(2, 2, 1, wt);
    CHECK(bg_ref_bmm("BBB", &xtb, &wtb, &y));
    CHECK_EQ_INT(bitv(&y, 0, 0), 1);
    bg_tensor_free(&y);
    float xo[] = {1e8f, 1, -1e8f}, wo[] = {1, 1, 1};
    BgTensor xof = mk_f32(2, 1, 3, xo), wob = mk_b1(2, 3, 1, wo);
    CHECK(bg_ref_bmm("FBF", &xof, &wob, &y));
    CHECK(((float *)y.data)[0] == 0.0f); /* sequential: (1e8 + 1) rounds to 1e8 */
    bg_tensor_free(&y);
    bg_tensor_free(&xof);
    bg_tensor_free(&wob);
    bg_tensor_free(&xtb);
    bg_tensor_free(&wtb);
    bg_tensor_free(&x_f);
    bg_tensor_free(&x_b);
    bg_tensor_free(&w_f);
    bg_tensor_free(&w_b);
}

static void test_bspmm_hand(void) {
    /* Path 0 - 1 - 2 with self loops: rows {0,1}, {0,1,2}, {1,2}; d = 2, 3, 2. */
    int64_t rp[] = {0, 2, 5, 7};
    int32_t col[] = {0, 1, 0, 1, 2, 1, 2};
    float xv[] = {1, 1, -1, 1, -1, -1}; /* node0 [+,+], node1 [-,+], node2 [-,-] */
    BgTensor xb = mk_b1(2, 3, 2, xv), xf = mk_f32(2, 3, 2, xv), y;
    BgAdj none = mk_adj(3, rp, col, BG_NORM_NONE), mean = mk_adj(3, rp, col, BG_NORM_MEAN),
          sym = mk_adj(3, rp, col, BG_NORM_SYM);
    const BgMethod methods[] = {BG_METHOD_AUTO, BG_METHOD_IFELSE, BG_METHOD_ANDNOT,
                                BG_METHOD_POPC2};
    /* none: s0 = [0, 2], s1 = [-1, 1], s2 = [-2, 0]. */
    float enone[] = {0, 2, -1, 1, -2, 0};
    for (int mi = 0; mi < 4; mi++) {
        CHECK(bg_ref_bspmm("BBF", &none, &xb, &y, methods[mi]));
        for (int i = 0; i < 6; i++) CHECK(((float *)y.data)[i] == enone[i]);
        bg_tensor_free(&y);
        CHECK(bg_ref_bspmm("BBB", &none, &xb, &y, methods[mi]));
        int eb[] = {1, 1, 0, 1, 0, 1}; /* 0 -> +1 */
        for (int i = 0; i < 6; i++) CHECK_EQ_INT(bitv(&y, i / 2, i % 2), eb[i]);
        CHECK(padding_zero(&y));
        bg_tensor_free(&y);
        /* mean: r = 1/2, 1/3, 1/2. */
        CHECK(bg_ref_bspmm("BBF", &mean, &xb, &y, methods[mi]));
        float third = (float)(1.0 / 3.0);
        float emean[] = {0, 1, -third, third, -1, 0};
        for (int i = 0; i < 6; i++) CHECK(((float *)y.data)[i] == emean[i]);
        bg_tensor_free(&y);
    }
    /* F activation over none / mean equals the same numbers (x is +-1 here). */
    CHECK(bg_ref_bspmm("FBF", &none, &xf, &y, BG_METHOD_AUTO));
    for (int i = 0; i < 6; i++) CHECK(((float *)y.data)[i] == enone[i]);
    bg_tensor_free(&y);
    /* sym, B activation: s0[0] = c0 - c1, s0[1] = c0 + c1, y = r0 * s (float, sequential). */
    float c2 = (float)(1.0 / sqrt(2.0)), c3 = (float)(1.0 / sqrt(3.0));
    CHECK(sym.colf[0] == c2 && sym.colf[1] == c3);
    CHECK(bg_ref_bspmm("BBF", &sym, &xb, &y, BG_METHOD_POPC2));
    float *yy = y.data;
    CHECK(yy[0] == c2 * (c2 - c3));
    CHECK(yy[1] == c2 * (c2 + c3));
    CHECK(yy[2] == c3 * ((c2 - c3) - c2));   /* row 1, col 0: +c0 -c1 -c2 */
    CHECK(yy[3] == c3 * ((c2 + c3) - c2));   /* row 1, col 1: +c0 +c1 -c2 */
    CHECK(yy[4] == c2 * (-c3 - c2));
    CHECK(yy[5] == c2 * (c3 - c2));
    bg_tensor_free(&y);
    CHECK(bg_ref_bspmm("BBB", &sym, &xb, &y, BG_METHOD_IFELSE));
    CHECK_EQ_INT(bitv(&y, 0, 0), rule(c2 * (c2 - c3)));
    CHECK_EQ_INT(bitv(&y, 1, 0), 0);
    bg_tensor_free(&y);
    /* sym, F activation: y = r_i * sum_j fl(c_j * x_j). */
    float xv2[] = {0.5f, -1, 2, 3, -4, 0.25f};
    BgTensor xf2 = mk_f32(2, 3, 2, xv2);
    CHECK(bg_ref_bspmm("FBF", &sym, &xf2, &y, BG_METHOD_AUTO));
    yy = y.data;
    CHECK(yy[0] == c2 * (c2 * 0.5f + c3 * 2.0f));
    CHECK(yy[3] == c3 * ((c2 * -1.0f + c3 * 3.0f) + c2 * 0.25f));
    bg_tensor_free(&y);
    /* adjacency F: y_i = sum_j fl(w_ij * x_j), w_ij = fl(r_i c_j). */
    CHECK(bg_ref_bspmm("FFF", &sym, &xf2, &y, BG_METHOD_AUTO));
    yy = y.data;
    CHECK(yy[0] == (c2 * c2) * 0.5f + (c2 * c3) * 2.0f);
    CHECK(yy[2] == ((c3 * c2) * 0.5f + (c3 * c3) * 2.0f) + (c3 * c2) * -4.0f);
    bg_tensor_free(&y);
    CHECK(bg_ref_bspmm("BFF", &sym, &xb, &y, BG_METHOD_AUTO));
    yy = y.data;
    CHECK(yy[0] == (c2 * c2) - (c2 * c3));
    bg_tensor_free(&y);
    CHECK(bg_ref_bspmm("FFB", &sym, &xf2, &y, BG_METHOD_AUTO));
    CHECK_EQ_INT(bitv(&y, 0, 0), 1);
    CHECK_EQ_INT(bitv(&y, 2, 1), 1);
    bg_tensor_free(&y);
    CHECK(!bg_ref_bspmm("FBF", &sym, &xb, &y, BG_METHOD_AUTO)); /* letters vs dtype */
    bg_tensor_free(&xf2);
    free_adj(&none);
    free_adj(&mean);
    free_adj(&sym);

    /* Isolated node without self loop (d = 0: r = c = 0): sum is empty, y = 0 -> bit +1. */
    int64_t rp2[] = {0, 1, 1, 2};
    int32_t col2[] = {2, 0};
    BgAdj iso = mk_adj(3, rp2, col2, BG_NORM_SYM);
    CHECK(bg_ref_bspmm("BBB", &iso, &xb, &y, BG_METHOD_POPC2));
    CHECK_EQ_INT(bitv(&y, 1, 0), 1);
    CHECK_EQ_INT(bitv(&y, 1, 1), 1);
    CHECK_EQ_INT(bitv(&y, 0, 0), 0);  /* row 0 = {2}: x2 = [-,-] */
    CHECK(padding_zero(&y));
    bg_tensor_free(&y);
    free_adj(&iso);
    bg_tensor_free(&xb);
    bg_tensor_free(&xf);
}

static void test_add_concat(void) {
    float a[] = {1, -2, 0.5f, 4}, b[] = {-1, 2, -0.5f, 1}, bias[] = {10, -20};
    BgTensor af = mk_f32(2, 2, 2, a), bf = mk_f32(2, 2, 2, b), bv = mk_f32(1, 2, 0, bias), y;
    CHECK(bg_ref_add("FFF", &af, &bf, &y));
    float e1[] = {0, 0, 0, 5};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == e1[i]);
    bg_tensor_free(&y);
    CHECK(bg_ref_add("FFF", &af, &bv, &y));
    float e2[] = {11, -22, 10.5f, -16};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == e2[i]);
    bg_tensor_free(&y);
    CHECK(bg_ref_add("FFB", &af, &bf, &y)); /* all sums 0 or 5: all +1 */
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(bitv(&y, i / 2, i % 2), 1);
    bg_tensor_free(&y);
    /* BB: +1 + -1 = 0 -> +1; -1 + -1 = -2 -> -1. a bits [+,-,+,+], b bits [-,+,-,+]. */
    float bb2[] = {-1, -1, -1, 1};
    BgTensor ab = mk_b1(2, 2, 2, a), bb = mk_b1(2, 2, 2, b), bb2t = mk_b1(2, 2, 2, bb2);
    CHECK(bg_ref_add("BBF", &ab, &bb, &y));
    float e3[] = {0, 0, 0, 2};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == e3[i]);
    bg_tensor_free(&y);
    CHECK(bg_ref_add("BBF", &ab, &bb2t, &y));
    float e4[] = {0, -2, 0, 2};
    for (int i = 0; i < 4; i++) CHECK(((float *)y.data)[i] == e4[i]);
    bg_tensor_free(&y);
    CHECK(bg_ref_add("BBB", &ab, &bb2t, &y));
    int e5[] = {1, 0, 1, 1};
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(bitv(&y, i / 2, i % 2), e5[i]);
    CHECK(padding_zero(&y));
    bg_tensor_free(&y);
    CHECK(!bg_ref_add("FBF", &af, &bb, &y));
    CHECK(!bg_ref_add("FFF", &af, &ab, &y));

    /* concat across a word boundary: 33 + 2 columns. */
    float c1[2 * 33], c2v[2 * 2] = {-1, 1, 1, -1};
    for (int i = 0; i < 66; i++) c1[i] = (i % 5 == 0) ? 1.0f : -1.0f;
    BgTensor p = mk_b1(2, 2, 33, c1), q = mk_b1(2, 2, 2, c2v);
    const BgTensor *xs[] = {&p, &q, &p};
    CHECK(bg_ref_concat(3, xs, &y));
    CHECK_EQ_INT(y.dim[1], 68);
    for (int r = 0; r < 2; r++) {
        for (int c = 0; c < 33; c++) {
            CHECK_EQ_INT(bitv(&y, r, c), bitv(&p, r, c));
            CHECK_EQ_INT(bitv(&y, r, 35 + c), bitv(&p, r, c));
        }
        CHECK_EQ_INT(bitv(&y, r, 33), bitv(&q, r, 0));
        CHECK_EQ_INT(bitv(&y, r, 34), bitv(&q, r, 1));
    }
    CHECK(padding_zero(&y));
    bg_tensor_free(&y);
    BgTensor pf = mk_f32(2, 2, 33, c1), qf = mk_f32(2, 2, 2, c2v);
    const BgTensor *xf[] = {&qf, &pf};
    CHECK(bg_ref_concat(2, xf, &y));
    CHECK(((float *)y.data)[0] == -1.0f && ((float *)y.data)[1] == 1.0f);
    CHECK(((float *)y.data)[2] == 1.0f && ((float *)y.data)[35 + 2] == -1.0f);
    bg_tensor_free(&y);
    const BgTensor *mixed[] = {&pf, &q};
    CHECK(!bg_ref_concat(2, mixed, &y));
    bg_tensor_free(&pf);
    bg_tensor_free(&qf);
    bg_tensor_free(&p);
    bg_tensor_free(&q);
    bg_tensor_free(&ab);
    bg_tensor_free(&bb);
    bg_tensor_free(&bb2t);
    bg_tensor_free(&af);
    bg_tensor_free(&bf);
    bg_tensor_free(&bv);
}

static void test_float_layers(void) {
    float r[] = {-1, 0, -0.0f, 2};
    BgTensor rx = mk_f32(2, 2, 2, r), y;
    CHECK(bg_ref_relu(&rx, &y));
    float *yy = y.data;
    CHECK(yy[0] == 0 && !signbit(yy[0]) && yy[1] == 0 && !signbit(yy[2]) && yy[3] == 2);
    bg_tensor_free(&y);
    bg_tensor_free(&rx);

    /* batchnorm: inv = 1/sqrt(var + eps) = [0.5, 1]. */
    float x[] = {1, 2, -3, 5}, mu[] = {0, 1}, var[] = {3, 0}, g[] = {2, 3}, be[] = {1, -1};
    BgTensor xt = mk_f32(2, 2, 2, x), mt = mk_f32(1, 2, 0, mu), vt = mk_f32(1, 2, 0, var),
             gt = mk_f32(1, 2, 0, g), bt = mk_f32(1, 2, 0, be);
    CHECK(bg_ref_batchnorm(&xt, &mt, &vt, NULL, NULL, 1.0f, &y));
    yy = y.data;
    CHECK(yy[0] == 0.5f && yy[1] == 1.0f && yy[2] == -1.5f && yy[3] == 4.0f);
    bg_tensor_free(&y);
    CHECK(bg_ref_batchnorm(&xt, &mt, &vt, &gt, &bt, 1.0f, &y));
    yy = y.data;
    CHECK(yy[0] == 2.0f && yy[1] == 2.0f && yy[2] == -2.0f && yy[3] == 11.0f);
    bg_tensor_free(&y);
    CHECK(bg_ref_batchnorm(&xt, &mt, &vt, &gt, NULL, 1.0f, &y));
    yy = y.data;
    CHECK(yy[0] == 1.0f && yy[3] == 12.0f);
    bg_tensor_free(&y);
    /* eps 1e-5 with var 1: rounded like the semantics say. */
    float v1[] = {1, 1};
    BgTensor v1t = mk_f32(1, 2, 0, v1);
    CHECK(bg_ref_batchnorm(&xt, &mt, &v1t, NULL, NULL, 1e-5f, &y));
    float inv = 1.0f / sqrtf(1.0f + 1e-5f);
    CHECK(((float *)y.data)[2] == -3.0f * inv);
    bg_tensor_free(&y);
    bg_tensor_free(&v1t);

    /* standardize: [1,2,3] -> mu 2, sd 1 -> [-1, 0, 1] (eps 0); one column -> 0. */
    float s[] = {1, 2, 3, 10, 10, 10};
    BgTensor st = mk_f32(2, 2, 3, s);
    CHECK(bg_ref_standardize(&st, 0.0f, SEQ, &y));
    yy = y.data;
    CHECK(yy[0] == -1.0f && yy[1] == 0.0f && yy[2] == 1.0f);
    bg_tensor_free(&y);
    CHECK(bg_ref_standardize(&st, 1e-4f, SEQ, &y));
    yy = y.data;
    CHECK(yy[0] == (float)(-1.0 / (1.0 + (double)1e-4f)));
    CHECK(yy[3] == 0.0f && yy[5] == 0.0f);
    bg_tensor_free(&y);
    float one[] = {5, -7};
    BgTensor ot = mk_f32(2, 2, 1, one);
    CHECK(bg_ref_standardize(&ot, 1e-4f, LANES2, &y));
    CHECK(((float *)y.data)[0] == 0.0f && ((float *)y.data)[1] == 0.0f);
    bg_tensor_free(&y);
    bg_tensor_free(&ot);
    bg_tensor_free(&st);

    /* log_softmax. */
    float l[] = {0, 0, 1, 2, 3, -1000};
    BgTensor lt = mk_f32(2, 2, 3, l);
    CHECK(bg_ref_log_softmax(&lt, SEQ, &y));
    yy = y.data;
    double s0 = exp(-1.0) + exp(-1.0) + 1.0; /* max is 1 */
    CHECK(yy[0] == (float)(0.0 - 1.0 - log(s0)));
    CHECK(yy[2] == (float)(1.0 - 1.0 - log(s0)));
    double s1 = exp(-1.0) + 1.0 + exp(-1003.0);
    CHECK(yy[3] == (float)(2.0 - 3.0 - log(s1)));
    CHECK(yy[5] == (float)(-1000.0 - 3.0 - log(s1)));
    CHECK_NEAR(exp(yy[0]) + exp(yy[1]) + exp(yy[2]), 1.0, 1e-6);
    bg_tensor_free(&y);
    /* lanes(2): lane 0 sums columns 0 and 2, lane 1 column 1, then the two lanes */
    CHECK(bg_ref_log_softmax(&lt, LANES2, &y));
    yy = y.data;
    double s0l = (exp(-1.0) + 1.0) + exp(-1.0), s1l = (exp(-1.0) + exp(-1003.0)) + 1.0;
    CHECK(yy[0] == (float)(0.0 - 1.0 - log(s0l)) && yy[2] == (float)(1.0 - 1.0 - log(s0l)));
    CHECK(yy[3] == (float)(2.0 - 3.0 - log(s1l)) && yy[4] == (float)(3.0 - 3.0 - log(s1l)));
    bg_tensor_free(&y);
    /* the maximum is the first in column order: -0 before +0 gives m = -0 */
    float z[] = {-0.0f, 0.0f, -5.0f};
    BgTensor zt = mk_f32(2, 1, 3, z);
    CHECK(bg_ref_log_softmax(&zt, LANES2, &y));
    yy = y.data;
    double sz = (1.0 + exp(-5.0)) + 1.0;
    CHECK(yy[0] == (float)(-log(sz)) && yy[1] == (float)(-log(sz)) && yy[2] == (float)(-5.0 - log(sz)));
    bg_tensor_free(&y);
    bg_tensor_free(&zt);
    bg_tensor_free(&lt);

    /* readout over graphs {0,1}, {}, {2,3,4}. */
    float rv[] = {1, -1, 2, 5, 3, 0, -4, 0.5f, 0, 7};
    int64_t gp[] = {0, 2, 2, 5};
    BgTensor rt = mk_f32(2, 5, 2, rv);
    CHECK(bg_ref_readout(&rt, gp, 3, BG_RED_SUM, &y));
    yy = y.data;
    CHECK_EQ_INT(y.dim[0], 3);
    CHECK(yy[0] == 3 && yy[1] == 4 && yy[2] == 0 && yy[3] == 0 && yy[4] == -1 && yy[5] == 7.5f);
    bg_tensor_free(&y);
    CHECK(bg_ref_readout(&rt, gp, 3, BG_RED_MEAN, &y));
    yy = y.data;
    CHECK(yy[0] == 1.5f && yy[1] == 2 && yy[2] == 0 && yy[4] == -1.0f / 3.0f && yy[5] == 2.5f);
    bg_tensor_free(&y);
    CHECK(bg_ref_readout(&rt, gp, 3, BG_RED_MAX, &y));
    yy = y.data;
    CHECK(yy[0] == 2 && yy[1] == 5 && yy[2] == 0 && yy[3] == 0 && yy[4] == 3 && yy[5] == 7);
    bg_tensor_free(&y);
    CHECK(bg_ref_readout(&rt, NULL, 1, BG_RED_SUM, &y));
    CHECK_EQ_INT(y.dim[0], 1);
    CHECK(((float *)y.data)[0] == 2.0f && ((float *)y.data)[1] == 11.5f);
    bg_tensor_free(&y);
    int64_t badgp[] = {0, 2, 4};
    CHECK(!bg_ref_readout(&rt, badgp, 2, BG_RED_SUM, &y));
    bg_tensor_free(&rt);
    bg_tensor_free(&xt);
    bg_tensor_free(&mt);
    bg_tensor_free(&vt);
    bg_tensor_free(&gt);
    bg_tensor_free(&bt);
}

/* The sign-bit rule in every B output: -0.0 results give -1. */
static void test_signed_zero(void) {
    float xv[] = {-3, 2, -0.0f, 0.0f}, zero[] = {0, 0}, one[] = {1, 1, 1, 1};
    BgTensor x = mk_f32(2, 2, 2, xv), r0 = mk_f32(1, 2, 0, zero), c1 = mk_f32(1, 2, 0, one), s, y;
    CHECK(bg_ref_scl(&x, &r0, &c1, &s)); /* -3 * 0 = -0, 2 * 0 = +0 */
    CHECK(signbit(((float *)s.data)[0]) && !signbit(((float *)s.data)[1]));
    CHECK(bg_ref_bin(&s, &y));
    CHECK_EQ_INT(bitv(&y, 0, 0), 0);
    CHECK_EQ_INT(bitv(&y, 0, 1), 1);
    CHECK_EQ_INT(bitv(&y, 1, 0), 0);
    CHECK_EQ_INT(bitv(&y, 1, 1), 1);
    bg_tensor_free(&y);
    bg_tensor_free(&s);
    /* add.FFB: -0 + -0 = -0 -> -1; -0 + +0 = +0 -> +1 */
    float av[] = {-0.0f, -0.0f}, bv[] = {-0.0f, 0.0f};
    BgTensor a = mk_f32(2, 1, 2, av), b = mk_f32(2, 1, 2, bv);
    CHECK(bg_ref_add("FFB", &a, &b, &y));
    CHECK_EQ_INT(bitv(&y, 0, 0), 0);
    CHECK_EQ_INT(bitv(&y, 0, 1), 1);
    bg_tensor_free(&y);
    /* bmm sums start at +0: FB over one -0 input stays +0 -> +1 */
    float w1[] = {1};
    float xz[] = {-0.0f};
    BgTensor wb = mk_b1(2, 1, 1, w1), xzt = mk_f32(2, 1, 1, xz);
    CHECK(bg_ref_bmm("FBB", &xzt, &wb, &y));
    CHECK_EQ_INT(bitv(&y, 0, 0), 1);
    bg_tensor_free(&y);
    /* relu(-0) = +0 */
    CHECK(bg_ref_relu(&xzt, &y));
    CHECK(!signbit(((float *)y.data)[0]));
    bg_tensor_free(&y);
    bg_tensor_free(&wb);
    bg_tensor_free(&xzt);
    bg_tensor_free(&a);
    bg_tensor_free(&b);
    bg_tensor_free(&x);
    bg_tensor_free(&r0);
    bg_tensor_free(&c1);
}

/* ---- randomized cross-checks ------------------------------------------------------- */

static void fill_rand(float *v, int64_t n, unsigned long long *s, int zeros) {
    for (int64_t i = 0; i < n; i++) {
        v[i] = bg_test_randf(s);
        if (zeros && bg_test_rand(s) % 7 == 0) v[i] = (bg_test_rand(s) & 1) ? 0.0f : -0.0f;
    }
}

static void check_bmm_random(void) {
    unsigned long long seed = 0x1234567ULL;
    const int64_t Rs[] = {1, 5, 33, 67}, Ks[] = {1, 31, 33, 70}, Ms[] = {1, 3, 33};
    const char *precs[] = {"BBF", "BBB", "FBF", "FBB", "BFF", "BFB", "FFF", "FFB"};
    int bad = 0;
    for (int ri = 0; ri < 4; ri++)
        for (int ki = 0; ki < 4; ki++)
            for (int mi = 0; mi < 3; mi++) {
                int64_t R = Rs[ri], K = Ks[ki], M = Ms[mi];
                float *xv = malloc(sizeof(float) * (size_t)(R * K));
                float *wv = malloc(sizeof(float) * (size_t)(K * M));
                fill_rand(xv, R * K, &seed, 1);
                fill_rand(wv, K * M, &seed, 1);
                BgTensor xf = mk_f32(2, R, K, xv), xb = mk_b1(2, R, K, xv);
                BgTensor wf = mk_f32(2, K, M, wv), wb = mk_b1(2, K, M, wv);
                for (int p = 0; p < 8; p++) {
                    const char *pr = precs[p];
                    const BgTensor *x = pr[0] == 'B' ? &xb : &xf, *w = pr[1] == 'B' ? &wb : &wf;
                    BgTensor y;
                    if (!bg_ref_bmm(pr, x, w, &y)) {
                        bad++;
                        continue;
                    }
                    for (int64_t r = 0; r < R; r++)
                        for (int64_t o = 0; o < M; o++) {
                            /* naive, on unpacked values, sequential k order */
                            float acc = 0.0f;
                            long long it = 0;
                            for (int64_t k = 0; k < K; k++) {
                                float a = pr[0] == 'B' ? pm(xv[r * K + k]) : xv[r * K + k];
                                float b = pr[1] == 'B' ? pm(wv[k * M + o]) : wv[k * M + o];
                                float prod = a * b;
                                acc = acc + prod;
                                it += (long long)a * (long long)b;
                            }
                            if (pr[0] == 'B' && pr[1] == 'B') acc = (float)it;
                            if (pr[2] == 'F') {
                                if (((float *)y.data)[r * M + o] != acc) bad++;
                            } else if (bitv(&y, r, o) != rule(acc)) {
                                bad++;
                            }
                        }
                    if (pr[2] == 'B' && !padding_zero(&y)) bad++;
                    bg_tensor_free(&y);
                }
                bg_tensor_free(&xf);
                bg_tensor_free(&xb);
                bg_tensor_free(&wf);
                bg_tensor_free(&wb);
                free(xv);
                free(wv);
            }
    CHECK_EQ_INT(bad, 0);
}

/* Random symmetric graph with optional self loops, an isolated node and a hub. */
static BgAdj rand_adj(int64_t n, unsigned long long *s, BgNorm norm, int self_loops,
                      int64_t hub_deg) {
    unsigned char *m = calloc((size_t)(n * n) + 1, 1);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++)
            if (bg_test_rand(s) % 5 == 0) m[i * n + j] = m[j * n + i] = 1;
    if (hub_deg > 0)
        for (int64_t j = 1; j <= hub_deg && j < n; j++) m[j] = m[j * n] = 1;
    if (n > 3) /* node n-2 isolated */
        for (int64_t j = 0; j < n; j++) m[(n - 2) * n + j] = m[j * n + (n - 2)] = 0;
    if (self_loops)
        for (int64_t i = 0; i < n; i++)
            if (!(n > 3 && i == n - 2)) m[i * n + i] = 1;
    int64_t *rp = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t nnz = 0;
    for (int64_t i = 0; i < n * n; i++) nnz += m[i];
    int32_t *col = malloc(sizeof(int32_t) * (size_t)(nnz + 1));
    int64_t e = 0;
    for (int64_t i = 0; i < n; i++) {
        rp[i] = e;
        for (int64_t j = 0; j < n; j++)
            if (m[i * n + j]) col[e++] = (int32_t)j;
    }
    rp[n] = e;
    BgAdj a = mk_adj(n, rp, col, norm);
    free(rp);
    free(col);
    free(m);
    return a;
}

static void check_bspmm_random(void) {
    unsigned long long seed = 0xabcdefULL;
    const int64_t Ns[] = {1, 5, 33, 67, 100}, Cs[] = {1, 31, 33, 70};
    const BgNorm norms[] = {BG_NORM_NONE, BG_NORM_MEAN, BG_NORM_SYM};
    const BgMethod methods[] = {BG_METHOD_AUTO, BG_METHOD_IFELSE, BG_METHOD_ANDNOT,
                                BG_METHOD_POPC2};
    int bad = 0, badm = 0;
    for (int ni = 0; ni < 5; ni++)
        for (int ci = 0; ci < 4; ci++)
            for (int nm = 0; nm < 3; nm++)
                for (int sl = 0; sl < 2; sl++) {
                    int64_t N = Ns[ni], C = Cs[ci];
                    BgAdj a = rand_adj(N, &seed, norms[nm], sl, N == 100 ? 60 : 0);
                    float *xv = malloc(sizeof(float) * (size_t)(N * C));
                    fill_rand(xv, N * C, &seed, 1);
                    BgTensor xf = mk_f32(2, N, C, xv), xb = mk_b1(2, N, C, xv);
                    const char *precs[] = {"BBF", "BBB", "FBF", "FBB", "BFF", "BFB", "FFF", "FFB"};
                    for (int p = 0; p < 8; p++) {
                        const char *pr = precs[p];
                        const BgTensor *x = pr[0] == 'B' ? &xb : &xf;
                        BgTensor y0;
                        if (!bg_ref_bspmm(pr, &a, x, &y0, BG_METHOD_AUTO)) {
                            bad++;
                            continue;
                        }
                        for (int64_t i = 0; i < N; i++)
                            for (int64_t c = 0; c < C; c++) {
                                float acc = 0.0f;
                                for (int64_t e = a.rowptr[i]; e < a.rowptr[i + 1]; e++) {
                                    int64_t j = a.col[e];
                                    float v = pr[0] == 'B' ? pm(xv[j * C + c])
                                                           : xv[j * C + c];
                                    float t = pr[1] == 'F' ? a.w[e] * v : a.colf[j] * v;
                                    acc = acc + t;
                                }
                                if (pr[1] == 'B') acc = a.rowf[i] * acc;
                                if (pr[2] == 'F') {
                                    if (((float *)y0.data)[i * C + c] != acc) bad++;
                                } else if (bitv(&y0, i, c) != rule(acc)) {
                                    bad++;
                                }
                            }
                        if (pr[2] == 'B' && !padding_zero(&y0)) bad++;
                        /* every method gives identical bytes */
                        for (int mi = 1; mi < 4; mi++) {
                            BgTensor y1;
                            if (!bg_ref_bspmm(pr, &a, x, &y1, methods[mi])) {
                                badm++;
                                continue;
                            }
                            if (memcmp(y0.data, y1.data, bg_tensor_bytes(&y0)) != 0) badm++;
                            bg_tensor_free(&y1);
                        }
                        bg_tensor_free(&y0);
                    }
                    bg_tensor_free(&xf);
                    bg_tensor_free(&xb);
                    free(xv);
                    free_adj(&a);
                }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(badm, 0);
}

/* A node of degree 3000 (plus self loop): integer sums far from +-1, exact in every method. */
static void check_bspmm_hub(void) {
    unsigned long long seed = 99;
    int64_t N = 3100, C = 33, hub = 3000;
    int64_t *rp = malloc(sizeof(int64_t) * (size_t)(N + 1));
    int32_t *col = malloc(sizeof(int32_t) * (size_t)(2 * hub + N + 1));
    int64_t e = 0;
    for (int64_t i = 0; i < N; i++) {
        rp[i] = e;
        if (i == 0) {
            for (int64_t j = 0; j <= hub; j++) col[e++] = (int32_t)j; /* self + 1..3000 */
        } else {
            if (i <= hub) col[e++] = 0;
            col[e++] = (int32_t)i;
        }
    }
    rp[N] = e;
    BgAdj a = mk_adj(N, rp, col, BG_NORM_NONE);
    float *xv = malloc(sizeof(float) * (size_t)(N * C));
    for (int64_t i = 0; i < N * C; i++) xv[i] = (bg_test_rand(&seed) % 10 < 6) ? 1.0f : -1.0f;
    for (int64_t i = 0; i < N; i++) xv[i * C + 5] = (i % 2) ? 1.0f : -1.0f; /* column 5 near tie */
    BgTensor xb = mk_b1(2, N, C, xv);
    const BgMethod methods[] = {BG_METHOD_IFELSE, BG_METHOD_ANDNOT, BG_METHOD_POPC2};
    for (int mi = 0; mi < 3; mi++) {
        BgTensor y;
        CHECK(bg_ref_bspmm("BBF", &a, &xb, &y, methods[mi]));
        int bad = 0;
        for (int64_t c = 0; c < C; c++) {
            long long s = 0;
            for (int64_t j = 0; j <= hub; j++) s += rule(xv[j * C + c]) ? 1 : -1;
            if (((float *)y.data)[c] != (float)s) bad++;
        }
        CHECK_EQ_INT(bad, 0);
        /* column 5: nodes 0..3000 alternate -,+ starting with -: sum = -1 */
        CHECK(((float *)y.data)[5] == -1.0f);
        bg_tensor_free(&y);
        CHECK(bg_ref_bspmm("BBB", &a, &xb, &y, methods[mi]));
        CHECK_EQ_INT(bitv(&y, 0, 5), 0);
        CHECK(padding_zero(&y));
        /* bg_ref_bspmm_rows: the rows of any split are the whole result's rows */
        const int64_t cut[] = {0, 1, 2, 1500, N};
        int rbad = 0;
        for (int k = 0; k < 4; k++) {
            BgTensor yr;
            CHECK(bg_ref_bspmm_rows("BBB", &a, &xb, cut[k], cut[k + 1], &yr, methods[mi]));
            CHECK(yr.dim[0] == cut[k + 1] - cut[k] && padding_zero(&yr));
            rbad += memcmp(yr.data, (uint32_t *)y.data + cut[k] * y.words_per_row, bg_tensor_bytes(&yr)) != 0;
            bg_tensor_free(&yr);
        }
        CHECK_EQ_INT(rbad, 0);
        BgTensor ye;
        CHECK(bg_ref_bspmm_rows("BBB", &a, &xb, 7, 7, &ye, methods[mi]) && ye.dim[0] == 0);
        bg_tensor_free(&ye);
        CHECK(!bg_ref_bspmm_rows("BBB", &a, &xb, 5, 4, &ye, methods[mi]));
        CHECK(!bg_ref_bspmm_rows("BBB", &a, &xb, 0, N + 1, &ye, methods[mi]));
        bg_tensor_free(&y);
    }
    bg_tensor_free(&xb);
    free(xv);
    free_adj(&a);
    free(rp);
    free(col);
}

static void check_elementwise_random(void) {
    unsigned long long seed = 7;
    const int64_t Rs[] = {1, 5, 33}, Cs[] = {1, 31, 33, 70};
    int bad = 0;
    for (int ri = 0; ri < 3; ri++)
        for (int ci = 0; ci < 4; ci++) {
            int64_t R = Rs[ri], C = Cs[ci];
            float *av = malloc(sizeof(float) * (size_t)(R * C));
            float *bv = malloc(sizeof(float) * (size_t)(R * C));
            fill_rand(av, R * C, &seed, 1);
            fill_rand(bv, R * C, &seed, 1);
            BgTensor af = mk_f32(2, R, C, av), bf = mk_f32(2, R, C, bv);
            BgTensor ab = mk_b1(2, R, C, av), bb = mk_b1(2, R, C, bv), bin, y;
            if (!bg_ref_bin(&af, &bin)) bad++;
            else {
                if (memcmp(bin.data, ab.data, bg_tensor_bytes(&ab)) != 0 || !padding_zero(&bin)) bad++;
                bg_tensor_free(&bin);
            }
            const char *precs[] = {"BBF", "BBB", "FFF", "FFB"};
            for (int p = 0; p < 4; p++) {
                const BgTensor *a = precs[p][0] == 'B' ? &ab : &af, *b = precs[p][0] == 'B' ? &bb : &bf;
                if (!bg_ref_add(precs[p], a, b, &y)) {
                    bad++;
                    continue;
                }
                for (int64_t i = 0; i < R * C; i++) {
                    float s = precs[p][0] == 'B'
                                  ? pm(av[i]) + pm(bv[i])
                                  : av[i] + bv[i];
                    if (precs[p][2] == 'F' ? ((float *)y.data)[i] != s
                                           : bitv(&y, i / C, i % C) != rule(s))
                        bad++;
                }
                if (precs[p][2] == 'B' && !padding_zero(&y)) bad++;
                bg_tensor_free(&y);
            }
            bg_tensor_free(&af);
            bg_tensor_free(&bf);
            bg_tensor_free(&ab);
            bg_tensor_free(&bb);
            free(av);
            free(bv);
        }
    CHECK_EQ_INT(bad, 0);
}

int main(void) {
    test_bin();
    test_absmean_scl();
    test_bmm_hand();
    test_bspmm_hand();
    test_add_concat();
    test_float_layers();
    test_signed_zero();
    check_bmm_random();
    check_bspmm_random();
    check_bspmm_hub();
    check_elementwise_random();
    return bg_test_finish();
}
