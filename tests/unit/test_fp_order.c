/* test_fp_order.c - the recorded float orders (docs/semantics.md, section 2; pass fp-order).
 *
 * 1. Each order kind of bg_ref_bmm_fp (seq, seq+fma, splitk(SxL), splitk+fma; FF, FB, BF; F
 *    and B results) on awkward K (1, 31, 33, 1000, 1433, K not divisible by the chunk) against
 *    an independent scalar computation of the same order, bit for bit.
 *    The float64 row sums of absmean, rowmean, standardize and bin.center in seq and lanes(L) (L = 2 ..
 *    256; C = 1, 5, 31, 32, 33, 64, 1000, 1433) against a recursive scalar formulation of the
 *    same orders, bit for bit.
 * 2. What fp-order records: --fp-strict gives seq without fma on every instruction; the
 *    default gives bmm.FF* seq+fma (of a graph's row with K >= 16 splitk(ceil(K/8)x8)+fma),
 *    bmm.FB* with K > 256 splitk(ceil(K/256)x256), and absmean,
 *    standardize, bin.center over more than 32 columns lanes(32), but lanes(256) for a plain
 *    absmean of a float aggregation of 256 threads a row (indgcn_full's and sage_full's first
 *    layers: exactly one each); the text form round-trips;
 *    the verifier refuses orders no kernel implements.
 * 3. The differential test of the pass (the default against --fp-strict, the same
 *    instructions): every example model (random weights on an awkward graph), 150 random
 *    models (tests/unit/gen_model.h) and the same random models with a split-k order forced
 *    on every float bmm (chunks of 8 k, so that split-k meets the generator's small widths)
 *    and lanes(32) on every row sum, whatever its width.
 *    Per reordered instruction, recomputed from the strict run's operands: the product t
 *    differs by at most B = 2 (K + 1) 2^-24 sum_k |x'_k w_k| (the worst-case error of either
 *    order is (K - 1) 2^-24 sum|terms| plus one rounding per product), and its sign may flip
 *    only where |t_strict| <= B (flips counted and printed).  End to end: float outputs within
 *    1e-5 of the row's largest magnitude wherever no bit of the model flipped (a flipped bit
 *    may change everything downstream; its cause is the local check above).
 * 4. On Cora (and CiteSeer) with every example's trained weights: the predicted classes of the
 *    default and the strict orders agree on at least 99.9% of the nodes, and the local check
 *    holds on the real values (flips and agreement printed). */
#include "reference.h"
#include "bgtest.h"
#include "difftest.h"
#include "gen_model.h"
#include "plan.h"

#include <dirent.h>

/* ---- 1. the order kinds against a scalar computation ------------------------------------ */

/* v(x[r,k]) of an f32 or b1 tensor (+-1 for bits), as the product reads it. */
static float val_at(const BgTensor *t, int64_t r, int64_t k) { return bg_ref_value(t, r, k); }

/* The recorded order written out for one output: chunks of L, each from +0, left fold. */
static float scalar_dot(const char *prec, const BgTensor *x, const BgTensor *w, int64_t r, int64_t o,
                        BgFpOrder fp) {
    int64_t k = x->dim[1], l = fp.kind == BG_FP_SPLITK ? fp.chunk : (k > 0 ? k : 1);
    float tot = 0.0f;
    for (int64_t k0 = 0; k0 < k; k0 += l) {
        float acc = 0.0f;
        for (int64_t i = k0; i < k && i < k0 + l; i++) {
            float a = val_at(x, r, i), b = val_at(w, i, o), p;
            if (fp.fma) {
                acc = fmaf(a, b, acc);
                continue;
            }
            if (prec[0] == 'F' && prec[1] == 'F') p = a * b;
            else if (prec[0] == 'F') p = b > 0.0f ? a : -a; /* FB: x by +-1 */
            else p = a > 0.0f ? b : -b;                       /* BF: w by +-1 */
            acc = acc + p;
        }
        tot = k0 == 0 ? acc : tot + acc;
    }
    return tot;
}

static float wide_value(unsigned long long *s) { /* magnitudes 2^-10 .. 2^10: orders round differently */
    return ldexpf(bg_test_randf(s), (int)(bg_test_rand(s) % 21) - 10);
}

static void fill(BgTensor *t, char p, int64_t rows, int64_t cols, unsigned long long *s) {
    bg_tensor_alloc(t, p == 'B' ? BG_DT_B1 : BG_DT_F32, 2, rows, cols);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            if (p == 'B') bg_bit_set(t->data, t->words_per_row, r, c, (int)(bg_test_rand(s) & 1));
            else ((float *)t->data)[r * cols + c] = wide_value(s);
        }
}

static void check_kinds(void) {
    static const int64_t ks[] = {1, 31, 33, 1000, 1433};
    static const int32_t ls[] = {1, 7, 64, 256};
    static const char *const precs[] = {"FFF", "FFB", "FBF", "FBB", "BFF", "BFB"};
    unsigned long long s = 11;
    int cases = 0, differ_fma = 0, differ_split = 0;
    for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++)
        for (size_t pi = 0; pi < sizeof precs / sizeof *precs; pi++) {
            const char *prec = precs[pi];
            int64_t k = ks[ki], rows = 3, m = 5;
            BgTensor x, w;
            fill(&x, prec[0], rows, k, &s);
            fill(&w, prec[1], k, m, &s);
            BgTensor seq_out = {0};
            for (int fma = 0; fma < 2; fma++)
                for (int li = -1; li < (int)(sizeof ls / sizeof *ls); li++) {
                    if (fma && !(prec[0] == 'F' && prec[1] == 'F')) continue;
                    BgFpOrder fp = {BG_FP_SEQ, fma != 0, 0, 0, 0};
                    if (li >= 0) {
                        int32_t l = ls[li];
                        if ((k + l - 1) / l < 2) continue;
                        fp.kind = BG_FP_SPLITK;
                        fp.chunk = l;
                        fp.split = (int32_t)((k + l - 1) / l);
                    }
                    BgTensor y = {0};
                    CHECK(bg_ref_bmm_fp(prec, &x, &w, fp, &y));
                    int bad = 0, diff = 0;
                    for (int64_t r = 0; r < rows && y.data; r++)
                        for (int64_t o = 0; o < m; o++) {
                            float want = scalar_dot(prec, &x, &w, r, o, fp);
                            if (prec[2] == 'F') {
                                float got = ((float *)y.data)[r * m + o];
                                bad += memcmp(&got, &want, sizeof got) != 0;
                                if (seq_out.data) diff += ((float *)seq_out.data)[r * m + o] != got;
                            } else {
                                bad += bg_bit_get(y.data, y.words_per_row, r, o) != (signbit(want) ? 0 : 1);
                            }
                        }
                    if (bad) {
                        char fb[48];
                        fprintf(stderr, "bmm.%s K=%lld %s: %d outputs differ from the scalar order\n", prec,
                                (long long)k, bg_fp_order_str(fp, fb, sizeof fb), bad);
                    }
                    CHECK(bad == 0);
                    cases++;
                    if (k == 1433 && prec[2] == 'F' && diff) *(fma ? &differ_fma : &differ_split) += 1;
                    if (fp.kind == BG_FP_SEQ && !fp.fma && prec[2] == 'F') seq_out = y;
                    else bg_tensor_free(&y);
                }
            bg_tensor_free(&seq_out);
            bg_tensor_free(&x);
            bg_tensor_free(&w);
        }
    printf("order kinds: %d cases bit-identical to the scalar orders (K=1433: fma changed %d, split-k %d)\n",
           cases, differ_fma, differ_split);
    CHECK(cases >= 80);
    CHECK(differ_fma > 0 && differ_split > 0); /* the orders are really different computations */
}

/* The float64 row sums, written as recursion: lanes(L) is T(0, 1), where T(i, m) (the lanes
 * congruent to i mod m) = T(i, 2m) + T(i + m, 2m) and T(i, L) is lane i's seq sum.  kind 0: x,
 * 1: |x|, 2: (x - mu)^2. */
static double term_of(int kind, float v, double mu) {
    double d = (double)v - (kind == 2 ? mu : 0.0);
    return kind == 1 ? fabs(d) : kind == 2 ? d * d : d;
}

static double lane_tree(const float *x, int64_t n, int lanes, int i, int m, int kind, double mu) {
    if (m == lanes) {
        double s = 0.0;
        for (int64_t c = i; c < n; c += lanes) s += term_of(kind, x[c], mu);
        return s;
    }
    return lane_tree(x, n, lanes, i, 2 * m, kind, mu) + lane_tree(x, n, lanes, i + m, 2 * m, kind, mu);
}

static double scalar_row_sum(const float *x, int64_t n, BgFpOrder fp, int kind, double mu) {
    if (fp.kind == BG_FP_LANES) return lane_tree(x, n, fp.split, 0, 1, kind, mu);
    double s = 0.0;
    for (int64_t c = 0; c < n; c++) s += term_of(kind, x[c], mu);
    return s;
}

static bool same_f32(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* absmean, rowmean, standardize (eps 1e-4) and bin.center of x in order fp against the scalar
 * sums; returns the number of outputs that differ from them. */
static int row_ops_against_scalar(const BgTensor *x, BgFpOrder fp) {
    int64_t rows = x->dim[0], cols = x->dim[1];
    BgTensor am = {0}, rm = {0}, st = {0}, bc = {0};
    const float eps = 1e-4f;
    CHECK(bg_ref_absmean(x, fp, &am) && bg_ref_rowmean(x, fp, &rm) && bg_ref_standardize(x, eps, fp, &st) &&
          bg_ref_bin_center(x, fp, &bc));
    int bad = 0;
    for (int64_t r = 0; r < rows && am.data && rm.data && st.data && bc.data; r++) {
        const float *xr = (const float *)x->data + r * cols;
        double s = scalar_row_sum(xr, cols, fp, 1, 0.0);
        bad += !same_f32(((float *)am.data)[r], cols ? (float)(s / (double)cols) : 0.0f);
        double mu = cols ? scalar_row_sum(xr, cols, fp, 0, 0.0) / (double)cols : 0.0;
        bad += !same_f32(((float *)rm.data)[r], (float)mu);
        double ss = scalar_row_sum(xr, cols, fp, 2, mu);
        double den = (cols > 1 ? sqrt(ss / (double)(cols - 1)) : 0.0) + (double)eps;
        for (int64_t c = 0; c < cols; c++) {
            double d = (double)xr[c] - mu;
            bad += !same_f32(((float *)st.data)[r * cols + c], (float)(d / den));
            bad += bg_bit_get(bc.data, bc.words_per_row, r, c) != (!signbit(d) && !isnan(d));
        }
    }
    bg_tensor_free(&am);
    bg_tensor_free(&rm);
    bg_tensor_free(&st);
    bg_tensor_free(&bc);
    return bad;
}

static void check_row_sums(void) {
    static const int64_t cs[] = {1, 5, 31, 32, 33, 64, 1000, 1433};
    unsigned long long s = 23;
    int cases = 0, differ = 0;
    for (size_t ci = 0; ci < sizeof cs / sizeof *cs; ci++) {
        BgTensor x;
        fill(&x, 'F', 4, cs[ci], &s);
        BgTensor seq_am = {0};
        for (int lanes = 1; lanes <= 256; lanes *= 2) {
            BgFpOrder fp = {lanes == 1 ? BG_FP_SEQ : BG_FP_LANES, false, lanes == 1 ? 0 : lanes, 0, 0};
            int bad = row_ops_against_scalar(&x, fp);
            if (bad) fprintf(stderr, "row sums C=%lld lanes %d: %d outputs differ from the scalar order\n", (long long)cs[ci], lanes, bad);
            CHECK(bad == 0);
            cases++;
            BgTensor am = {0};
            CHECK(bg_ref_absmean(&x, fp, &am));
            if (lanes == 1) seq_am = am;
            else {
                for (int64_t r = 0; r < 4 && cs[ci] == 1433 && am.data; r++) differ += !same_f32(((float *)am.data)[r], ((float *)seq_am.data)[r]);
                bg_tensor_free(&am);
            }
        }
        bg_tensor_free(&seq_am);
        bg_tensor_free(&x);
    }
    /* Float64 sums of floats of similar magnitude rarely differ once rounded to float32; a
     * cancelling one shows the orders are different computations: x = (2^60, 1, -2^60, 1,
     * 0.375, 0).  seq: 2^60 + 1 rounds to 2^60, so the sum is 1.375 (mu 0.229); lanes(2): lanes
     * 0.375 and 2, sum 2.375 (mu 0.396).  x[4] = 0.375 lies between the means: its bit flips. */
    float big[6] = {0x1p60f, 1.0f, -0x1p60f, 1.0f, 0.375f, 0.0f};
    BgTensor bx = {0}, a = {0}, b = {0};
    bg_tensor_alloc(&bx, BG_DT_F32, 2, 1, 6);
    memcpy(bx.data, big, sizeof big);
    BgFpOrder seq = {BG_FP_SEQ, false, 0, 0, 0}, l2 = {BG_FP_LANES, false, 2, 0, 0};
    CHECK(bg_ref_bin_center(&bx, seq, &a) && bg_ref_bin_center(&bx, l2, &b));
    CHECK(a.data && b.data && bg_bit_get(a.data, 1, 0, 4) == 1 && bg_bit_get(b.data, 1, 0, 4) == 0);
    bg_tensor_free(&a);
    bg_tensor_free(&b);
    bg_tensor_free(&bx);
    printf("row sums: %d cases (absmean, rowmean, standardize, bin.center) bit-identical to the scalar orders "
           "(C=1433: lanes changed %d absmean values)\n", cases, differ);
    CHECK(cases == 72);
}

/* fold-standardize-mm's own operations: signsum against the seq product of a row of ones (a
 * sum of +-1, exact), and the center step against fl(x - fl(mu_r * s_c)) written out, on
 * awkward K and M (1, 31, 33, 1433 x 1, 7, 64, 65). */
static void check_fold_ops(void) {
    static const int64_t ks[] = {1, 31, 33, 1433}, ms[] = {1, 7, 64, 65};
    unsigned long long s = 41;
    int bad = 0;
    for (size_t i = 0; i < 4; i++) {
        BgTensor w, ones = {0}, y = {0}, ref = {0}, x, mu, cs = {0}, z = {0};
        fill(&w, 'B', ks[i], ms[i], &s);
        bg_tensor_alloc(&ones, BG_DT_F32, 2, 1, ks[i]);
        for (int64_t k = 0; k < ks[i]; k++) ((float *)ones.data)[k] = 1.0f;
        BgFpOrder seq = {BG_FP_SEQ, false, 0, 0, 0};
        CHECK(bg_ref_signsum(&w, &y) && bg_ref_bmm_fp("FBF", &ones, &w, seq, &ref));
        for (int64_t o = 0; o < ms[i] && y.data && ref.data; o++) bad += !same_f32(((float *)y.data)[o], ((float *)ref.data)[o]);
        fill(&x, 'F', 5, ms[i], &s);
        bg_tensor_alloc(&mu, BG_DT_F32, 1, 5, 0);
        for (int r = 0; r < 5; r++) ((float *)mu.data)[r] = wide_value(&s);
        CHECK(bg_ref_center(&x, &mu, &y, &z));
        for (int64_t r = 0; r < 5 && z.data; r++)
            for (int64_t c = 0; c < ms[i]; c++) {
                volatile float p = ((float *)mu.data)[r] * ((float *)y.data)[c];
                bad += !same_f32(((float *)z.data)[r * ms[i] + c], ((float *)x.data)[r * ms[i] + c] - p);
            }
        CHECK(!bg_ref_center(&x, &y, &mu, &cs)); /* factors of the wrong lengths (M is never 5) */
        bg_tensor_free(&w), bg_tensor_free(&ones), bg_tensor_free(&y), bg_tensor_free(&ref);
        bg_tensor_free(&x), bg_tensor_free(&mu), bg_tensor_free(&cs), bg_tensor_free(&z);
    }
    printf("fold-standardize-mm operations: signsum and center on 4 shapes, %d differences\n", bad);
    CHECK(bad == 0);
}

/* A sum whose sign depends on the order, and the bound the differential test uses for it:
 * x = (2^24, 1, -2^24, 1), w = (1, 1, 1, -0.75).  seq: 2^24 + 1 rounds to 2^24, minus 2^24 is
 * 0, then -0.75.  splitk(2x2): 2^24 + 1 -> 2^24 and -2^24 - 0.75 -> -2^24, folded: +0.  The
 * sign flips, and |t_seq| = 0.75 lies within B = 2 (K + 1) 2^-24 sum|t| (about 20). */
static void check_bound_on_cancellation(void) {
    BgTensor x, w;
    bg_tensor_alloc(&x, BG_DT_F32, 2, 1, 4);
    bg_tensor_alloc(&w, BG_DT_F32, 2, 4, 1);
    const float xv[4] = {16777216.0f, 1.0f, -16777216.0f, 1.0f};
    for (int k = 0; k < 4; k++) ((float *)x.data)[k] = xv[k], ((float *)w.data)[k] = k == 3 ? -0.75f : 1.0f;
    BgFpOrder seq = {BG_FP_SEQ, false, 0, 0, 0}, sp = {BG_FP_SPLITK, false, 2, 2, 0};
    BgTensor a = {0}, b = {0};
    CHECK(bg_ref_bmm_fp("FFF", &x, &w, seq, &a) && bg_ref_bmm_fp("FFF", &x, &w, sp, &b));
    float ta = a.data ? ((float *)a.data)[0] : 0.0f, tb = b.data ? ((float *)b.data)[0] : 0.0f;
    double bound = 2.0 * 5.0 * ldexp(1.0, -24) * (2.0 * 16777216.0 + 1.75);
    printf("cancellation: seq %g, splitk(2x2) %g (a sign flip), bound %g\n", (double)ta, (double)tb, bound);
    CHECK(signbit(ta) != signbit(tb) && fabs((double)ta) <= bound && fabs((double)ta - (double)tb) <= bound);
    bg_tensor_free(&a);
    bg_tensor_free(&b);
    bg_tensor_free(&x);
    bg_tensor_free(&w);
}

/* The order slots of an aggregation of bits written out per output (docs/semantics.md, section
 * 2): a row of at most T edges in seq (+-f from +0 in edge order); a longer one's edges t to
 * slot t mod ns (ns = S, 4 S from H edges), each slot's sums from +0, the slots' tree by
 * recursive halves, fl(fl(P + P) - Q); then fl(rowf * s) (adjacency B). */
static float slot_tree(const float *v, int64_t lo, int64_t n) {
    return n == 1 ? v[lo] : slot_tree(v, lo, n / 2) + slot_tree(v, lo + n / 2, n / 2);
}
static float scalar_slots(const BgAdj *a, bool adjf, const BgTensor *x, int64_t i, int64_t c, BgFpOrder fp) {
    const int64_t e0 = a->rowptr[i], d = a->rowptr[i + 1] - e0;
    float s = 0.0f;
    if (fp.kind != BG_FP_SLOTS || d <= fp.chunk) {
        for (int64_t t = 0; t < d; t++) {
            const int64_t j = a->col[e0 + t];
            const float f = adjf ? a->w[e0 + t] : a->colf[j];
            s = s + (bg_bit_get(x->data, x->words_per_row, j, c) ? f : -f);
        }
    } else {
        const int64_t ns = d >= fp.hub ? 4 * (int64_t)fp.split : fp.split;
        float pv[128], qv[128];
        for (int64_t k = 0; k < ns; k++) pv[k] = qv[k] = 0.0f;
        for (int64_t t = 0; t < d; t++) {
            const int64_t j = a->col[e0 + t];
            const float f = adjf ? a->w[e0 + t] : a->colf[j];
            qv[t % ns] = qv[t % ns] + f;
            if (bg_bit_get(x->data, x->words_per_row, j, c)) pv[t % ns] = pv[t % ns] + f;
        }
        const float p = slot_tree(pv, 0, ns), q = slot_tree(qv, 0, ns);
        s = (p + p) - q;
    }
    return adjf ? s : a->rowf[i] * s;
}

/* bg_ref_bspmm_fp in slots (and seq) on rows of awkward lengths (0, 1, T, T + 1, H - 1, H, a
 * 5,000-edge hub), C of 1 to 300 (S = 32, 16, 8, 4), both adjacencies, factors of mixed sign and
 * magnitude with zeros, and unit factors (the reference's integer path: the same values).  F
 * outputs bit for bit; B outputs the sign rule of the same values. */
static void check_slots(void) {
    static const int64_t long_degs[] = {0, 1, 2, 15, 16, 17, 31, 33, 63, 64, 65, 100, 4095, 4096, 5000};
    const int64_t nl = (int64_t)(sizeof long_degs / sizeof *long_degs), n = 5003;
    unsigned long long sd = 99;
    BgAdj a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.rowptr = calloc((size_t)n + 1, sizeof(int64_t));
    int64_t *degs = malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) { /* the awkward lengths first, then rows of 0 to 20 edges */
        degs[i] = i < nl ? long_degs[i] : (int64_t)(bg_test_rand(&sd) % 21);
        a.rowptr[i + 1] = a.rowptr[i] + degs[i];
    }
    a.nnz = a.rowptr[n];
    a.col = malloc(sizeof(int32_t) * (size_t)a.nnz);
    a.w = malloc(sizeof(float) * (size_t)a.nnz);
    a.rowf = malloc(sizeof(float) * (size_t)n);
    a.colf = malloc(sizeof(float) * (size_t)n);
    char *mark = calloc((size_t)n, 1);
    for (int64_t i = 0; i < n; i++) { /* distinct columns, ascending (as a graph's CSR) */
        memset(mark, 0, (size_t)n);
        for (int64_t k = 0; k < degs[i];) {
            const int64_t j = (int64_t)(bg_test_rand(&sd) % (uint64_t)n);
            if (!mark[j]) mark[j] = 1, k++;
        }
        int64_t e = a.rowptr[i];
        for (int64_t j = 0; j < n; j++)
            if (mark[j]) a.col[e++] = (int32_t)j;
    }
    free(mark);
    for (int64_t e = 0; e < a.nnz; e++) a.w[e] = e % 37 == 5 ? 0.0f : wide_value(&sd);
    /* BGNN_FP_ORDER_SLOTS_QUICK (the sanitizer build): C = 1, 33, 100 (S = 32, 16, 8) */
    static const int64_t cs_all[] = {1, 31, 33, 64, 100, 128, 300}, cs_quick[] = {1, 33, 100};
    const bool quick = getenv("BGNN_FP_ORDER_SLOTS_QUICK") != NULL;
    const int64_t *cs = quick ? cs_quick : cs_all;
    const size_t ncs = quick ? sizeof cs_quick / sizeof *cs_quick : sizeof cs_all / sizeof *cs_all;
    static const BgFpOrder orders[] = {{BG_FP_SLOTS, false, 0, 16, 4096}, {BG_FP_SLOTS, false, 0, 0, 64},
                                       {BG_FP_SEQ, false, 0, 0, 0}};
    long checked = 0, bad = 0;
    for (int unit = 0; unit < 2; unit++) {
        for (int64_t i = 0; i < n; i++) {
            a.rowf[i] = unit ? 1.0f : wide_value(&sd);
            a.colf[i] = unit ? 1.0f : i % 7 == 3 ? 0.0f : wide_value(&sd);
        }
        for (size_t ci = 0; ci < ncs; ci++) {
            BgTensor x = {0};
            fill(&x, 'B', n, cs[ci], &sd);
            for (size_t oi = 0; oi < sizeof orders / sizeof *orders; oi++) {
                BgFpOrder fp = orders[oi];
                if (fp.kind == BG_FP_SLOTS) fp.split = bg_fp_slots_for_cols(cs[ci]);
                for (int adjf = 0; adjf < 2; adjf++) {
                    if (unit && adjf) continue;
                    const char pf[4] = {'B', adjf ? 'F' : 'B', 'F', 0}, pb[4] = {'B', adjf ? 'F' : 'B', 'B', 0};
                    BgTensor yf = {0}, yb = {0};
                    CHECK(bg_ref_bspmm_fp(pf, &a, &x, &yf, BG_METHOD_AUTO, fp));
                    CHECK(bg_ref_bspmm_fp(pb, &a, &x, &yb, BG_METHOD_AUTO, fp));
                    for (int64_t i = 0; yf.data && yb.data && i < n; i++)
                        for (int64_t c = 0; c < cs[ci]; c++) {
                            const float want = scalar_slots(&a, adjf, &x, i, c, fp), got = ((float *)yf.data)[i * cs[ci] + c];
                            checked++;
                            if (!same_f32(want, got) && !(isnan(want) && isnan(got)) && bad++ < 5)
                                fprintf(stderr, "slots: row %lld (%lld edges) column %lld, C %lld, %s, adjacency %c%s: %.9g, the scalar form %.9g\n",
                                        (long long)i, (long long)degs[i], (long long)c, (long long)cs[ci],
                                        bg_fp_order_str(fp, (char[48]){0}, 48), adjf ? 'F' : 'B', unit ? " (unit)" : "", (double)got, (double)want);
                            if (bg_bit_get(yb.data, yb.words_per_row, i, c) != (signbit(got) ? 0 : 1)) bad++;
                        }
                    bg_tensor_free(&yf);
                    bg_tensor_free(&yb);
                }
            }
            bg_tensor_free(&x);
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(checked > 1000000);
    printf("slots: %ld outputs against the scalar formulation, %ld differ\n", checked, bad);
    /* the reference refuses slot counts no kernel has, and T >= H */
    BgTensor x = {0}, y = {0};
    fill(&x, 'B', n, 64, &sd);
    CHECK(!bg_ref_bspmm_fp("BBF", &a, &x, &y, BG_METHOD_AUTO, (BgFpOrder){BG_FP_SLOTS, false, 12, 16, 4096}));
    CHECK(!bg_ref_bspmm_fp("BBF", &a, &x, &y, BG_METHOD_AUTO, (BgFpOrder){BG_FP_SLOTS, false, 16, 64, 64}));
    bg_tensor_free(&x);
    free(degs);
    free(a.rowptr);
    free(a.col);
    free(a.w);
    free(a.rowf);
    free(a.colf);
}

/* ---- 2. what the pass records ------------------------------------------------------------- */

/* path or (text != NULL) text through every pass of the table in order (the default pipeline
 * and those outside it: aggregate-first), strict or not; lowered: no passes (every declared
 * parameter, for the weights file). */
static BgModule *compile_model(BgArena *a, const char *path, const char *text, bool strict, bool lowered) {
    static const char *const none[1] = {NULL};
    const char *all[64];
    int nt = 0;
    const BgPass *table = bg_pass_table(&nt);
    for (int i = 0; i < nt && i < 64; i++) all[i] = table[i].name;
    BgDiagSink d;
    bg_diag_init(&d);
    BgCompileOpts o = {0};
    o.fp_strict = strict;
    o.passes = all;
    o.npasses = nt < 64 ? nt : 64;
    if (lowered) {
        o.passes = none;
        o.npasses = 0;
    }
    BgModule *m = text ? bg_compile_text(a, path, text, strlen(text), &o, &d) : bg_compile_file(a, path, &o, &d);
    if (!m) {
        char *t = bg_diag_render(&d);
        fprintf(stderr, "%s", t);
        free(t);
    }
    bg_diag_free(&d);
    return m;
}

/* Every float reduction of m recorded as the rule of fp-order says. */
static void check_recorded(const BgModule *m, bool strict, int *nfma, int *nsplit, int *nwide, int *nslots) {
    for (int i = 0; i < m->ninsts; i++) {
        const BgInst *in = &m->insts[i];
        BgFpOrder fp = bg_inst_fp(m, in);
        if (fp.kind == BG_FP_NONE) continue;
        int64_t k = bg_inst_bmm_k(m, in);
        bool ff = in->op == BG_OP_BMM && in->prec[0] == 'F' && in->prec[1] == 'F';
        bool fb = in->op == BG_OP_BMM && in->prec[0] == 'F' && in->prec[1] == 'B';
        CHECK(fp.fma == (!strict && ff));
        bool split = !strict && fb && k > 256 && !bg_bmm_reads_input(m, in); /* the features: seq */
        /* a graph's row (a classifier after a readout): chunks of 8 k from K = 16 */
        bool gsplit = !strict && ff && m->insts[in->args[0]].type.dim[0] == BG_DIM_G && k >= 16;
        CHECK((fp.kind == BG_FP_SPLITK) == (split || gsplit));
        bool lanes = !strict && (bg_op_row_sum(in->op) || in->op == BG_OP_LOG_SOFTMAX) &&
                     m->insts[in->args[0]].type.dim[1] > 32;
        CHECK((fp.kind == BG_FP_LANES) == lanes);
        /* a plain absmean of a float aggregation of 256 threads a row: lanes(256) */
        const BgInst *a = &m->insts[in->args[0]];
        const int64_t ac = a->type.dim[1];
        const bool wide = lanes && in->op == BG_OP_ABSMEAN && !in->npro && !in->nsteps && a->op == BG_OP_BSPMM &&
                          strcmp(a->prec, "FBF") == 0 && !a->nsteps && ac >= 256 && ac <= 4096 &&
                          bg_plan_wide_threads_per_row(ac) == 256;
        if (lanes) CHECK(fp.split == (wide ? 256 : 32) && fp.chunk == 0 && !fp.fma);
        if (nwide) *nwide += wide;
        if (split) CHECK(fp.chunk == 256 && fp.split == (int32_t)((k + 255) / 256));
        /* a bit aggregation with a float sum, in a model without a readout: slots(S,16,4096) */
        bool slots = !strict && in->op == BG_OP_BSPMM && in->prec[0] == 'B' && !bg_ir_has_op(m, BG_OP_READOUT);
        CHECK((fp.kind == BG_FP_SLOTS) == slots);
        if (slots)
            CHECK(fp.split == bg_fp_slots_for_cols(in->type.dim[1]) && fp.chunk == 16 && fp.hub == 4096 && !fp.fma);
        if (nslots) *nslots += slots;
        if (gsplit) CHECK(fp.chunk == 8 && fp.split == (int32_t)((k + 7) / 8));
        *nfma += fp.fma;
        *nsplit += fp.kind == BG_FP_SPLITK;
    }
}

static void check_text(void) {
    static const char *const good[] = {"-", "seq", "seq+fma", "splitk(6x256)", "splitk(2x1)+fma", "lanes(32)", "lanes(256)",
                                       "slots(8,16,4096)", "slots(32,0,64)", "slots(4,16,17)"};
    static const char *const bad[] = {"", "se", "seq+", "seqfma", "splitk(1x5)", "splitk(2x0)", "splitk(02x5)",
                                      "splitk(2x5", "splitk(2x5)fma", "splitk(99999999x1)", "SEQ",
                                      "lanes(16)", "lanes(64)", "lanes(0)", "lanes(32", "lanes(032)", "lanes()",
                                      "slots(7,16,4096)", "slots(8,16)", "slots(8,4096,4096)", "slots(8,16,4096",
                                      "slots(8,-1,4096)", "slots(8,00,4096)", "slots(0,16,4096)", "slots(8,16,4096)x"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        BgFpOrder o;
        char buf[48];
        CHECK(bg_fp_order_parse(good[i], &o));
        CHECK(strcmp(bg_fp_order_str(o, buf, sizeof buf), good[i]) == 0);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        BgFpOrder o;
        CHECK(!bg_fp_order_parse(bad[i], &o));
    }
}

static bool verifies(const BgModule *m) {
    BgDiagSink d;
    bg_diag_init(&d);
    bool ok = bg_ir_verify(m, &d);
    bg_diag_free(&d);
    return ok;
}

/* The verifier refuses orders that neither the reference nor a kernel implements. */
static void check_verifier(const char *src) {
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/gcn_bin.bgnn", src);
    for (int c = 0; c < 7; c++) {
        BgArena *a = bg_arena_new();
        BgModule *m = compile_model(a, path, NULL, false, false);
        CHECK(m && verifies(m));
        int fb = -1, agg = -1, bb = -1;
        for (int i = 0; m && i < m->ninsts; i++) {
            const BgInst *in = &m->insts[i];
            if (in->op == BG_OP_BMM && in->prec[0] == 'F') fb = i;
            if (in->op == BG_OP_BSPMM_MM) agg = i;
            if (in->op == BG_OP_BSPMM) bb = i; /* bspmm.BBB over norm none: no float reduction */
        }
        CHECK(fb >= 0 && agg >= 0 && bb >= 0);
        if (fb < 0 || agg < 0 || bb < 0) {
            bg_arena_free(a);
            continue;
        }
        BgFpOrder *f = &m->insts[fb].attrs.fp;
        switch (c) {
        case 0: f->split = 5; break;                                   /* split != ceil(K / chunk) */
        case 1: f->fma = true; break;                                  /* fma on a bmm.FB */
        case 2: m->insts[agg].attrs.fp.fma = true; break;              /* fma on an aggregation */
        case 3: m->insts[agg].attrs.fp = (BgFpOrder){BG_FP_SPLITK, false, 2, 64, 0}; break; /* split-k on an aggregation */
        case 4: m->insts[bb].attrs.fp.fma = true; break;               /* an order without a reduction */
        case 5: *f = (BgFpOrder){BG_FP_LANES, false, 32, 0, 0}; break;    /* lanes on a bmm */
        default: f->kind = 7; break;                                   /* no such order */
        }
        CHECK(!verifies(m));
        bg_arena_free(a);
    }
    /* slots: only on an aggregation of bits (the Reddit-sized gcn_bin's bspmm.BBF takes
     * slots(8,16,4096)), with its columns' S and H = 4096, and not in a model with a readout */
    for (int c = 0; c < 6; c++) {
        snprintf(path, sizeof path, "%s/bench/gcn_bin_reddit.bgnn", src);
        BgArena *sa = bg_arena_new();
        BgModule *sm = compile_model(sa, path, NULL, false, false);
        CHECK(sm && verifies(sm));
        int agg = -1, fb = -1;
        for (int i = 0; sm && i < sm->ninsts; i++) {
            BgFpOrder so;
            if (bg_fp_slots_order(sm, &sm->insts[i], &so)) {
                sm->insts[i].attrs.fp = so;
                agg = i;
            }
            if (sm->insts[i].op == BG_OP_BMM && sm->insts[i].prec[0] == 'F') fb = i;
        }
        CHECK(sm && verifies(sm));
        CHECK(agg >= 0 && fb >= 0);
        if (agg < 0 || fb < 0) {
            bg_arena_free(sa);
            continue;
        }
        CHECK(sm->insts[agg].attrs.fp.split == 8 && sm->insts[agg].attrs.fp.chunk == 16 && sm->insts[agg].attrs.fp.hub == 4096);
        BgFpOrder *f = &sm->insts[agg].attrs.fp;
        switch (c) {
        case 0: f->split = 16; break;                                           /* not the S of 128 columns */
        case 1: f->hub = 2048; break;                                           /* not the runtime's H */
        case 2: f->chunk = 4096; break;                                         /* T >= H */
        case 3: sm->insts[fb].attrs.fp = *f; break;                             /* slots on a bmm */
        case 4: f->fma = true; break;                                           /* fma */
        default: f->split = 0; break;                                           /* no slots */
        }
        CHECK(!verifies(sm));
        bg_arena_free(sa);
    }
    /* lanes(256) only on an absmean: indgcn_full's first standardize given it is refused */
    snprintf(path, sizeof path, "%s/examples/indgcn_full.bgnn", src);
    BgArena *a = bg_arena_new();
    BgModule *m = compile_model(a, path, NULL, false, false);
    CHECK(m && verifies(m));
    int std = -1;
    for (int i = 0; m && i < m->ninsts && std < 0; i++)
        if (m->insts[i].op == BG_OP_STANDARDIZE) std = i;
    CHECK(std >= 0);
    if (std >= 0) {
        m->insts[std].attrs.fp = (BgFpOrder){BG_FP_LANES, false, 256, 0, 0};
        CHECK(!verifies(m));
    }
    bg_arena_free(a);
    /* log_softmax: lanes(32) over more than 32 columns (fp-order records it for the Reddit-sized
     * gcn_fp32's 41 classes), refused on a row of at most 32 (gcn_fp32's 7 classes on Cora),
     * which a warp runs a column a lane in seq */
    static const char *const lsm_models[] = {"bench/gcn_fp32_reddit.bgnn", "examples/gcn_fp32.bgnn"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", src, lsm_models[k]);
        a = bg_arena_new();
        m = compile_model(a, path, NULL, false, false);
        CHECK(m && verifies(m));
        int lsm = -1;
        for (int i = 0; m && i < m->ninsts; i++)
            if (m->insts[i].op == BG_OP_LOG_SOFTMAX) lsm = i;
        CHECK(lsm >= 0);
        if (lsm >= 0) {
            const BgFpOrder got = m->insts[lsm].attrs.fp;
            CHECK(k == 0 ? got.kind == BG_FP_LANES && got.split == 32 : got.kind == BG_FP_SEQ);
            m->insts[lsm].attrs.fp = (BgFpOrder){BG_FP_LANES, false, 32, 0, 0};
            CHECK(verifies(m) == (k == 0));
        }
        bg_arena_free(a);
    }
}

/* ---- 3. the differential test -------------------------------------------------------------- */

typedef struct Tally {
    long insts, folds, aggs, rowsums, elems, flips, flips_bad, bound_bad; /* reordered, folded or aggregated-first
                                                                           products; reordered row sums */
    long slots;                                       /* aggregations of bits in slots */
    long models, models_flipped, out_elems, out_bad;  /* end to end */
    double worst;                                     /* largest |dy| / row magnitude, unflipped models */
    double tol;                                       /* end to end, relative to the row's magnitude */
} Tally;

/* x' = x with the instruction's batchnorm prologue applied (strict operands), as floats or bits;
 * or an absmean's standardize prologue (its statistics in seq: the checks below are of the
 * reduction the instruction records). */
static bool prologue_input(const BgInst *in, const BgTensor *vals, BgTensor *xn) {
    const BgTensor *x = &vals[in->args[0]];
    if (in->npro && in->steps[0].kind == BG_STEP_STANDARDIZE) {
        BgFpOrder seq = {BG_FP_SEQ, false, 0, 0, 0};
        return bg_ref_standardize(x, in->steps[0].eps, seq, xn);
    }
    if (!in->npro || in->steps[0].kind != BG_STEP_BATCHNORM) return false;
    int a = bg_inst_step_arg(in, 0);
    const BgTensor *sl[4];
    for (int j = 0; j < 4; j++) sl[j] = in->args[a + j] == BG_NONE ? NULL : &vals[in->args[a + j]];
    return bg_ref_batchnorm(x, sl[0], sl[1], sl[2], sl[3], in->steps[0].eps, xn);
}

/* Instruction i reordered: recompute its product both ways from the strict operands. */
static void local_check(const BgModule *md, int i, const BgTensor *vals, Tally *t, const char *what) {
    const BgInst *in = &md->insts[i];
    BgFpOrder fp = bg_inst_fp(md, in), seq = {BG_FP_SEQ, false, 0, 0, 0};
    BgTensor xn = {0}, ys = {0}, yd = {0};
    const BgTensor *x = prologue_input(in, vals, &xn) ? &xn : &vals[in->args[0]];
    const BgTensor *w = &vals[in->args[1]];
    char prec[4] = {in->prec[0], in->prec[1], 'F', 0};
    CHECK(bg_ref_bmm_fp(prec, x, w, seq, &ys) && bg_ref_bmm_fp(prec, x, w, fp, &yd));
    int64_t rows = x->dim[0], k = x->dim[1], m = w->dim[1];
    double *sum = calloc((size_t)m + 1, sizeof(double));
    float *wa = malloc(sizeof(float) * (size_t)(k * m + 1));
    for (int64_t q = 0; q < k; q++)
        for (int64_t o = 0; o < m; o++) wa[q * m + o] = fabsf(val_at(w, q, o));
    long flips = 0, fbad = 0, bbad = 0;
    for (int64_t r = 0; r < rows && ys.data && yd.data; r++) {
        for (int64_t o = 0; o < m; o++) sum[o] = 0.0;
        for (int64_t q = 0; q < k; q++) {
            double xa = fabs((double)val_at(x, r, q));
            if (xa == 0.0) continue;
            for (int64_t o = 0; o < m; o++) sum[o] += xa * wa[q * m + o];
        }
        for (int64_t o = 0; o < m; o++) {
            float a = ((float *)ys.data)[r * m + o], b = ((float *)yd.data)[r * m + o];
            double bound = 2.0 * (double)(k + 1) * ldexp(1.0, -24) * sum[o];
            if (isnan(a) || isnan(b)) continue; /* NaN: unspecified bits (section 2) */
            if (fabs((double)a - (double)b) > bound) bbad++;
            if (signbit(a) != signbit(b)) {
                flips++;
                if (fabs((double)a) > bound) fbad++;
            }
        }
    }
    if (fbad || bbad)
        fprintf(stderr, "%s: %%%d (bmm.%s, K=%lld): %ld differences past the bound, %ld flips away from zero\n", what,
                i, in->prec, (long long)k, bbad, fbad);
    t->insts++;
    t->elems += rows * m;
    t->flips += flips;
    t->flips_bad += fbad;
    t->bound_bad += bbad;
    free(sum);
    free(wa);
    bg_tensor_free(&xn);
    bg_tensor_free(&ys);
    bg_tensor_free(&yd);
}

/* The sign flips and bound violations of a local check. */
typedef struct Counts {
    long flips, fbad, bbad;
} Counts;

/* One element: u the strict value, v the reordered one, bound the rounding bound. */
static void judge(Counts *c, float u, float v, double bound) {
    if (isnan(u) || isnan(v)) return; /* NaN: unspecified bits (section 2) */
    if (fabs((double)u - (double)v) > bound) c->bbad++;
    if (signbit(u) != signbit(v)) {
        c->flips++;
        if (fabs((double)u) > bound) c->fbad++;
    }
}

/* kind: what the instruction is ("folded", "aggregate-first", "row sum of"), op: "bmm.XYZ" or
 * the row op's name; k: its reduction's length. */
static void add_counts(Tally *t, const Counts *c, long elems, const char *what, int i, const char *kind,
                       const char *op, int64_t k) {
    if (c->fbad || c->bbad)
        fprintf(stderr, "%s: %%%d (%s %s, K=%lld): %ld differences past the bound, %ld flips away from zero\n",
                what, i, kind, op, (long long)k, c->bbad, c->fbad);
    t->insts++;
    t->elems += elems;
    t->flips += c->flips;
    t->flips_bad += c->fbad;
    t->bound_bad += c->bbad;
}

/* A product fold-batchnorm-mm made (a column-scale prologue): y = sum_k v(w) fl(x s_k) + c_o
 * against the unfolded seq product of batchnorm(x) (its statistics found through s and c), on
 * the same operands.  Bound: the strict order's, plus the rounding of the folded terms
 * (x s_k, mean_k s_k and beta_k, each about K + 2 roundings deep in the worst case):
 * B = 2 (K + 2) 2^-24 (sum|x'_k| + sum|x_k s_k| + sum|mean_k s_k| + sum|beta_k|). */
static void fold_check(const BgModule *md, int i, const BgTensor *vals, Tally *t, const char *what) {
    const BgInst *in = &md->insts[i];
    int a = bg_inst_step_arg(in, 0);
    BgRef sref = in->args[a + 1], shift = BG_NONE;
    for (int q = 0; q < md->ninsts; q++)
        if (md->insts[q].op == BG_OP_BN_SHIFT && md->insts[q].args[2] == sref) shift = (BgRef)q;
    const BgInst *si = &md->insts[sref];
    CHECK(si->op == BG_OP_BN_SCALE && shift != BG_NONE);
    if (si->op != BG_OP_BN_SCALE || shift == BG_NONE) return;
    const BgInst *ci = &md->insts[shift];
    const BgTensor *x = &vals[in->args[0]], *w = &vals[in->args[1]], *sv = &vals[sref], *cv = &vals[shift];
    const BgTensor *mean = &vals[ci->args[1]], *var = &vals[si->args[0]];
    const BgTensor *gamma = si->nargs > 1 ? &vals[si->args[1]] : NULL, *beta = ci->nargs > 3 ? &vals[ci->args[3]] : NULL;
    BgFpOrder seq = {BG_FP_SEQ, false, 0, 0, 0};
    BgTensor xn = {0}, xs = {0}, ys = {0}, yt = {0}, yd = {0};
    CHECK(bg_ref_batchnorm(x, mean, var, gamma, beta, si->attrs.eps, &xn) && bg_ref_bmm_fp("FBF", &xn, w, seq, &ys));
    CHECK(bg_ref_scl(x, NULL, sv, &xs) && bg_ref_bmm_fp("FBF", &xs, w, bg_inst_fp(md, in), &yt) &&
          bg_ref_add("FFF", &yt, cv, &yd));
    int64_t rows = x->dim[0], k = x->dim[1], m = w->dim[1];
    double shift_sum = 0.0;
    for (int64_t q = 0; q < k; q++)
        shift_sum += fabs((double)((float *)mean->data)[q] * (double)((float *)sv->data)[q]) +
                     (beta ? fabs((double)((float *)beta->data)[q]) : 0.0);
    Counts cn = {0, 0, 0};
    for (int64_t r = 0; r < rows && ys.data && yd.data; r++) {
        double sum = shift_sum;
        for (int64_t q = 0; q < k; q++)
            sum += fabs((double)((float *)xn.data)[r * k + q]) + fabs((double)((float *)xs.data)[r * k + q]);
        double bound = 2.0 * (double)(k + 2) * ldexp(1.0, -24) * sum;
        for (int64_t o = 0; o < m; o++) {
            float u = ((float *)ys.data)[r * m + o], v = ((float *)yd.data)[r * m + o];
            judge(&cn, u, v, bound);
        }
    }
    char op[16];
    snprintf(op, sizeof op, "bmm.%s", in->prec);
    add_counts(t, &cn, rows * m, what, i, "folded", op, k);
    t->folds++;
    bg_tensor_free(&xn);
    bg_tensor_free(&xs);
    bg_tensor_free(&ys);
    bg_tensor_free(&yt);
    bg_tensor_free(&yd);
}

/* A product fold-standardize-mm made (a center step): v = fl(t - fl(mu_r s_o)), t the raw
 * features' product, against the unfolded seq product u of standardize(x) on the same
 * operands, u times the row's positive divisor d = sd + eps (float64, as standardize takes
 * it), so that both estimate sum_k v(W[k,o]) (x_k - mu).  Bound: the strict order's over the
 * standardized terms (each rounded once more), scaled by d, plus the folded side's roundings
 * (t over the raw terms, mu, its product with s_o, the subtraction):
 * B = 2 (K + 2) 2^-24 (d sum|x'_k| + sum|x_k| + 2 |mu s_o|) + 2^-23 |u d|. */
static void std_fold_check(const BgModule *ms, const BgModule *md, int i, const BgTensor *vals, Tally *t,
                           const char *what) {
    const BgInst *in = &md->insts[i];
    int a = bg_inst_step_arg(in, in->npro);
    const BgInst *st = NULL; /* the standardize it replaced: the strict module's product at its place reads it */
    for (int q = 0; q < ms->ninsts && !st; q++) {
        const BgInst *p = &ms->insts[q];
        if (p->op == BG_OP_BMM && p->loc.off == in->loc.off && ms->insts[p->args[0]].op == BG_OP_STANDARDIZE)
            st = &ms->insts[p->args[0]];
    }
    CHECK(st != NULL);
    if (!st) return;
    const float eps = st->attrs.eps;
    const BgTensor *x = &vals[in->args[0]], *w = &vals[in->args[1]], *mu = &vals[in->args[a]], *s = &vals[in->args[a + 1]];
    BgFpOrder seq = {BG_FP_SEQ, false, 0, 0, 0};
    BgTensor xn = {0}, ys = {0}, yt = {0}, yd = {0};
    CHECK(bg_ref_standardize(x, eps, seq, &xn) && bg_ref_bmm_fp("FBF", &xn, w, seq, &ys));
    CHECK(bg_ref_bmm_fp("FBF", x, w, bg_inst_fp(md, in), &yt) && bg_ref_center(&yt, mu, s, &yd));
    int64_t rows = x->dim[0], k = x->dim[1], m = w->dim[1];
    Counts cn = {0, 0, 0};
    for (int64_t r = 0; r < rows && ys.data && yd.data; r++) {
        const float *xr = (const float *)x->data + r * k, *xnr = (const float *)xn.data + r * k;
        double sum = 0.0, ss = 0.0, sx = 0.0, sxn = 0.0;
        for (int64_t q = 0; q < k; q++) sum += xr[q];
        const double mean = k ? sum / (double)k : 0.0;
        for (int64_t q = 0; q < k; q++) {
            ss += (xr[q] - mean) * (xr[q] - mean);
            sx += fabs((double)xr[q]);
            sxn += fabs((double)xnr[q]);
        }
        const double d = (k > 1 ? sqrt(ss / (double)(k - 1)) : 0.0) + (double)eps;
        const float mur = ((const float *)mu->data)[r];
        for (int64_t o = 0; o < m; o++) {
            const float so = ((const float *)s->data)[o];
            const double ud = (double)((float *)ys.data)[r * m + o] * d;
            const double bound = 2.0 * (double)(k + 2) * ldexp(1.0, -24) * (d * sxn + sx + 2.0 * fabs((double)mur * so)) +
                                 ldexp(1.0, -23) * fabs(ud);
            judge(&cn, (float)ud, ((float *)yd.data)[r * m + o], bound);
        }
    }
    char op[16];
    snprintf(op, sizeof op, "bmm.%s", in->prec);
    add_counts(t, &cn, rows * m, what, i, "standardize-folded", op, k);
    t->folds++;
    bg_tensor_free(&xn);
    bg_tensor_free(&ys);
    bg_tensor_free(&yt);
    bg_tensor_free(&yd);
}

/* A product aggregate-first made: z = bmm.FB?(u, W) [scl cols m ...], u = bspmm.B?F(A, h),
 * against the unreordered pair A (scl(bmm.BBF(h, W), m)) on the same operands, both before
 * the steps after the column scales.  Per (i, o) both sum the D_i K terms +-f_ij m_o (f the
 * edge's factor, r_i applied to both): bound B = 2 (K + D_i + 2) 2^-24 |r_i| K |m_o|
 * sum_j |f_ij|. */
static void agg_check(const BgModule *md, int i, const BgTensor *vals, BgGraph *g, Tally *t, const char *what) {
    const BgInst *in = &md->insts[i], *ag = &md->insts[in->args[0]];
    const BgInst *gi = &md->insts[ag->args[0]];
    const BgTensor *h = &vals[ag->args[1]], *w = &vals[in->args[1]];
    int nscl = 0; /* the leading column scales (the product's steps, moved after it) */
    while (nscl < in->nsteps && in->steps[nscl].kind == BG_STEP_SCL && in->args[bg_inst_step_arg(in, nscl)] == BG_NONE)
        nscl++;
    BgAdj adj;
    memset(&adj, 0, sizeof adj);
    CHECK(bg_adj_build(g, gi->attrs.self_loops, gi->attrs.norm, &adj));
    BgTensor p = {0}, ys = {0}, yd = {0}, tmp = {0};
    char pa[4] = {'F', ag->prec[1], 'F', 0};
    bool ok = bg_ref_bmm("BBF", h, w, &p);
    for (int s = 0; s < nscl && ok; s++) { /* strict: the scales on the product's rows */
        ok = bg_ref_scl(&p, NULL, &vals[in->args[bg_inst_step_arg(in, s) + 1]], &tmp);
        bg_tensor_free(&p);
        p = tmp;
        memset(&tmp, 0, sizeof tmp);
    }
    ok = ok && bg_ref_bspmm(pa, &adj, &p, &ys, BG_METHOD_AUTO);
    ok = ok && bg_ref_bmm_fp("FBF", &vals[in->args[0]], w, bg_inst_fp(md, in), &yd);
    for (int s = 0; s < nscl && ok; s++) {
        ok = bg_ref_scl(&yd, NULL, &vals[in->args[bg_inst_step_arg(in, s) + 1]], &tmp);
        bg_tensor_free(&yd);
        yd = tmp;
        memset(&tmp, 0, sizeof tmp);
    }
    CHECK(ok);
    int64_t rows = adj.n, k = h->dim[1], m = w->dim[1];
    Counts cn = {0, 0, 0};
    for (int64_t r = 0; ok && r < rows; r++) {
        double fs = 0.0;
        for (int64_t e = adj.rowptr[r]; e < adj.rowptr[r + 1]; e++)
            fs += fabs(ag->prec[1] == 'F' ? (double)adj.w[e] : (double)adj.colf[adj.col[e]]);
        double rf = ag->prec[1] == 'F' ? 1.0 : fabs((double)adj.rowf[r]);
        int64_t deg = adj.rowptr[r + 1] - adj.rowptr[r];
        for (int64_t o = 0; o < m; o++) {
            double mo = 1.0;
            for (int s = 0; s < nscl; s++) mo *= fabs((double)((float *)vals[in->args[bg_inst_step_arg(in, s) + 1]].data)[o]);
            double bound = 2.0 * (double)(k + deg + 2) * ldexp(1.0, -24) * rf * (double)k * mo * fs;
            float u = ((float *)ys.data)[r * m + o], v = ((float *)yd.data)[r * m + o];
            judge(&cn, u, v, bound);
        }
    }
    char op[16];
    snprintf(op, sizeof op, "bmm.%s", in->prec);
    add_counts(t, &cn, rows * m, what, i, "aggregate-first", op, k);
    t->aggs++;
    bg_adj_free(&adj);
    bg_tensor_free(&p);
    bg_tensor_free(&ys);
    bg_tensor_free(&yd);
}

/* A float64 row sum fp-order gave lanes(32) (absmean, rowmean, standardize, bin.center),
 * recomputed from md's operand both ways.  Each order's float64 sum lies within (C - 1) 2^-53
 * sum|t| of the exact one, so with S = sum_c |x'| the two means differ by at most Bmu = 2 (C +
 * 1) 2^-53 S / C: absmean and rowmean within 2^-23 |a| + Bmu (one float32 rounding each way); standardize within
 * 1e-5 of the row's magnitude (its sign flips only below that); bin.center's bit flips only
 * where |x - mu_seq| <= Bmu (flips counted). */
static void row_check(const BgModule *md, int i, const BgTensor *vals, Tally *t, const char *what) {
    const BgInst *in = &md->insts[i];
    BgFpOrder fp = bg_inst_fp(md, in), seq = {BG_FP_SEQ, false, 0, 0, 0};
    BgTensor xn = {0}, ys = {0}, yd = {0};
    const BgTensor *x = prologue_input(in, vals, &xn) ? &xn : &vals[in->args[0]];
    int64_t rows = x->dim[0], cols = x->dim[1];
    bool ok;
    const bool mean = in->op == BG_OP_ABSMEAN || in->op == BG_OP_ROW_MEAN; /* an f32[R] result */
    if (in->op == BG_OP_ABSMEAN) ok = bg_ref_absmean(x, seq, &ys) && bg_ref_absmean(x, fp, &yd);
    else if (in->op == BG_OP_ROW_MEAN) ok = bg_ref_rowmean(x, seq, &ys) && bg_ref_rowmean(x, fp, &yd);
    else if (in->op == BG_OP_STANDARDIZE)
        ok = bg_ref_standardize(x, in->attrs.eps, seq, &ys) && bg_ref_standardize(x, in->attrs.eps, fp, &yd);
    else ok = bg_ref_bin_center(x, seq, &ys) && bg_ref_bin_center(x, fp, &yd);
    CHECK(ok);
    Counts cn = {0, 0, 0};
    long elems = 0;
    for (int64_t r = 0; ok && r < rows; r++) {
        const float *xr = (const float *)x->data + r * cols;
        double s = 0.0;
        for (int64_t c = 0; c < cols; c++) s += fabs((double)xr[c]);
        double bmu = 2.0 * (double)(cols + 1) * ldexp(1.0, -53) * s / (double)(cols ? cols : 1);
        if (mean) {
            float a = ((float *)ys.data)[r], b = ((float *)yd.data)[r];
            judge(&cn, a, b, ldexp(fabs((double)a), -23) + bmu);
            elems++;
        } else if (in->op == BG_OP_STANDARDIZE) {
            const float *a = (const float *)ys.data + r * cols, *b = (const float *)yd.data + r * cols;
            double mag = 0.0;
            for (int64_t c = 0; c < cols; c++) mag = fmax(mag, fabs((double)a[c]));
            for (int64_t c = 0; c < cols; c++) judge(&cn, a[c], b[c], 1e-5 * mag);
            elems += cols;
        } else {
            double mu = cols ? scalar_row_sum(xr, cols, seq, 0, 0.0) / (double)cols : 0.0;
            for (int64_t c = 0; c < cols; c++) {
                if (bg_bit_get(ys.data, ys.words_per_row, r, c) == bg_bit_get(yd.data, yd.words_per_row, r, c)) continue;
                cn.flips++;
                if (!(fabs((double)xr[c] - mu) <= bmu)) cn.fbad++;
            }
            elems += cols;
        }
    }
    add_counts(t, &cn, elems, what, i, "row sum of", bg_op_info(in->op)->name, cols);
    t->rowsums++;
    bg_tensor_free(&xn);
    bg_tensor_free(&ys);
    bg_tensor_free(&yd);
}

/* An aggregation of bits fp-order gave slots, recomputed from md's operand in seq and in its
 * order (the float sum before the steps, B?F).  Each order's sums (seq; P and Q) lie within
 * (d - 1) 2^-24 sum|f| of the exact ones, so fl(2P - Q) within 3 (d - 1) 2^-24 sum|f| plus a
 * rounding: B = 4 (d + 1) 2^-24 |rowf| sum|f| (rowf's product rounds both the same way, relatively). */
static void slots_check(const BgModule *md, int i, const BgTensor *vals, BgGraph *g, Tally *t, const char *what) {
    const BgInst *in = &md->insts[i], *gi = &md->insts[in->args[0]];
    BgAdj adj;
    memset(&adj, 0, sizeof adj);
    CHECK(bg_adj_build(g, gi->attrs.self_loops, gi->attrs.norm, &adj));
    const BgTensor *x = &vals[in->args[1]];
    const char pa[4] = {'B', in->prec[1], 'F', 0};
    BgTensor ys = {0}, yd = {0};
    const BgFpOrder seq = {BG_FP_SEQ, false, 0, 0, 0};
    bool ok = bg_ref_bspmm_fp(pa, &adj, x, &ys, BG_METHOD_AUTO, seq) &&
              bg_ref_bspmm_fp(pa, &adj, x, &yd, BG_METHOD_AUTO, bg_inst_fp(md, in));
    CHECK(ok);
    const int64_t cols = x->dim[1];
    Counts cn = {0, 0, 0};
    for (int64_t r = 0; ok && r < adj.n; r++) {
        double fs = 0.0;
        for (int64_t e = adj.rowptr[r]; e < adj.rowptr[r + 1]; e++)
            fs += fabs(in->prec[1] == 'F' ? (double)adj.w[e] : (double)adj.colf[adj.col[e]]);
        const double rf = in->prec[1] == 'F' ? 1.0 : fabs((double)adj.rowf[r]);
        const int64_t deg = adj.rowptr[r + 1] - adj.rowptr[r];
        const double bound = 4.0 * (double)(deg + 1) * ldexp(1.0, -24) * rf * fs;
        for (int64_t c = 0; c < cols; c++) judge(&cn, ((float *)ys.data)[r * cols + c], ((float *)yd.data)[r * cols + c], bound);
    }
    char op[16];
    snprintf(op, sizeof op, "bspmm.%s", in->prec);
    add_counts(t, &cn, adj.n * cols, what, i, "slots of", op, cols);
    t->slots++;
    bg_adj_free(&adj);
    bg_tensor_free(&ys);
    bg_tensor_free(&yd);
}

/* Is md's instruction i a product aggregate-first made: a bmm.FB? whose activation is a
 * bspmm.B?F without steps read by it alone (its u)? */
static bool aggregated_first(const BgModule *md, const BgInst *in) {
    if (in->op != BG_OP_BMM || in->prec[0] != 'F' || in->prec[1] != 'B') return false;
    const BgInst *a = &md->insts[in->args[0]];
    return a->op == BG_OP_BSPMM && a->prec[0] == 'B' && a->prec[2] == 'F' && !a->nsteps &&
           bg_ir_use_count(md, in->args[0]) == 1;
}

/* The local checks of md's instructions on md's own operand values: reordered products
 * (local_check), folded ones (fold_check), aggregated-first ones (agg_check, on graph g), row
 * sums in lanes (row_check). */
static void local_checks(const BgModule *ms, const BgModule *md, const BgTensor *vals, BgGraph *g, Tally *t,
                         const char *what) {
    for (int i = 0; i < md->ninsts; i++) {
        const BgInst *in = &md->insts[i];
        if (bg_op_row_sum(in->op) && bg_inst_fp(md, in).kind == BG_FP_LANES) row_check(md, i, vals, t, what);
        if (in->op == BG_OP_BSPMM && bg_inst_fp(md, in).kind == BG_FP_SLOTS) slots_check(md, i, vals, g, t, what);
        if (in->op != BG_OP_BMM) continue;
        BgFpOrder fp = bg_inst_fp(md, in);
        if (in->nsteps > in->npro && in->steps[in->npro].kind == BG_STEP_CENTER) std_fold_check(ms, md, i, vals, t, what);
        else if (in->npro && in->steps[0].kind == BG_STEP_SCL) fold_check(md, i, vals, t, what);
        else if (aggregated_first(md, in)) agg_check(md, i, vals, g, t, what);
        else if (fp.fma || fp.kind == BG_FP_SPLITK) local_check(md, i, vals, t, what);
    }
}

/* The instruction of ms that md's instruction i stands for: the next one at or after *from
 * with the same op, precisions, type and source position (fold-batchnorm-mm adds
 * instructions to md, the others keep their order); -1 when none. */
static int twin_of(const BgModule *ms, const BgModule *md, int i, int *from) {
    const BgInst *b = &md->insts[i];
    for (int j = *from; j < ms->ninsts; j++) {
        const BgInst *a = &ms->insts[j];
        if (a->op == b->op && strcmp(a->prec, b->prec) == 0 && bg_type_eq(a->type, b->type) && a->loc.off == b->loc.off) {
            *from = j + 1;
            return j;
        }
    }
    return -1;
}

/* The default module md against the strict ms (other orders; folded batchnorms). */
static void compare(const char *what, const BgModule *ms, const BgModule *md, BgGraph *g, const BgTensor *feat,
                    const char *wpath, Tally *t) {
    BgInterpResult rs, rd;
    memset(&rs, 0, sizeof rs);
    memset(&rd, 0, sizeof rd);
    BgTensor *vs = NULL, *vd = NULL;
    bool ok = diff_run_values(ms, g, feat, wpath, &rs, &vs) && diff_run_values(md, g, feat, wpath, &rd, &vd);
    CHECK(ok);
    long mflips = 0, flips0 = t->flips;
    if (ok) local_checks(ms, md, vd, g, t, what);
    mflips += t->flips - flips0;
    for (int i = 0, from = 0; ok && i < md->ninsts; i++) {
        const BgInst *in = &md->insts[i];
        int j = in->type.kind == BG_TY_B1 ? twin_of(ms, md, i, &from) : -1;
        if (j >= 0 && vs[j].data && vd[i].data)
            for (int64_t r = 0; r < vs[j].dim[0]; r++)
                for (int64_t c = 0; c < vs[j].dim[1]; c++)
                    mflips += bg_bit_get(vs[j].data, vs[j].words_per_row, r, c) !=
                              bg_bit_get(vd[i].data, vd[i].words_per_row, r, c);
    }
    t->models++;
    t->models_flipped += mflips > 0;
    for (int o = 0; ok && o < rs.noutputs && !mflips; o++) {
        const BgTensor *a = &rs.outputs[o], *b = &rd.outputs[o];
        if (a->dtype != BG_DT_F32) {
            CHECK(memcmp(a->data, b->data, bg_tensor_bytes(a)) == 0);
            continue;
        }
        int64_t rows = bg_tensor_rows(a), cols = bg_tensor_cols(a);
        for (int64_t r = 0; r < rows; r++) {
            const float *ya = (const float *)a->data + r * cols, *yb = (const float *)b->data + r * cols;
            double mag = 0.0;
            for (int64_t c = 0; c < cols; c++) mag = fmax(mag, fabs((double)ya[c]));
            for (int64_t c = 0; c < cols; c++) {
                if (isnan(ya[c]) || isnan(yb[c]) || isinf(ya[c])) continue;
                double dy = fabs((double)ya[c] - (double)yb[c]), rel = mag > 0.0 ? dy / mag : dy;
                t->out_elems++;
                if (rel > t->worst) t->worst = rel;
                if (dy > t->tol * (mag > 0.0 ? mag : 1.0)) {
                    if (t->out_bad++ < 5)
                        fprintf(stderr, "%s: output %d [%lld,%lld] %.9g (strict) vs %.9g, row magnitude %.3g\n", what, o,
                                (long long)r, (long long)c, (double)ya[c], (double)yb[c], mag);
                }
            }
        }
    }
    if (vs) bg_interp_values_free(ms, vs);
    if (vd) bg_interp_values_free(md, vd);
    bg_interp_result_free(&rs);
    bg_interp_result_free(&rd);
}

static void print_tally(const char *what, const Tally *t) {
    printf("%s: %ld models (%ld with a flipped bit somewhere), %ld reordered products, aggregations and row sums (%ld folded, %ld "
           "aggregated first, %ld aggregations in slots, %ld row sums in lanes), %ld elements: %ld sign flips (%ld away from zero), %ld past the "
           "rounding bound; outputs %ld floats, %ld past %g of the row (worst %.2g)\n",
           what, t->models, t->models_flipped, t->insts, t->folds, t->aggs, t->slots, t->rowsums, t->elems, t->flips, t->flips_bad,
           t->bound_bad, t->out_elems, t->out_bad, t->tol, t->worst);
    CHECK(t->flips_bad == 0 && t->bound_bad == 0 && t->out_bad == 0);
}

static void random_features(const BgModule *m, int64_t n, unsigned long long seed, BgTensor *feat) {
    int64_t width = 0;
    for (int i = 0; i < m->ninsts; i++)
        if (m->insts[i].op == BG_OP_INPUT) width = m->insts[i].type.dim[1];
    bg_tensor_alloc(feat, BG_DT_F32, 2, n, width);
    for (int64_t k = 0; k < n * width; k++) ((float *)feat->data)[k] = rnd_value(&seed) * 3.0f;
}

static void check_examples(const char *dir, BgGraph *g, Tally *t) {
    DIR *dh = opendir(dir);
    CHECK(dh != NULL);
    struct dirent *e;
    while (dh && (e = readdir(dh))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".bgnn") != 0) continue;
        char path[4096], wpath[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(wpath, sizeof wpath, "%s/fp_order_weights.safetensors", bg_test_tmpdir());
        BgArena *a = bg_arena_new();
        BgModule *ms = compile_model(a, path, NULL, true, false), *md = compile_model(a, path, NULL, false, false);
        BgModule *m0 = compile_model(a, path, NULL, true, true);
        CHECK(ms && md && m0);
        if (ms && md && m0) {
            int nf = 0, ns = 0, nwide = 0;
            check_recorded(ms, true, &nf, &ns, NULL, NULL);
            CHECK(nf == 0 && ns == 0);
            check_recorded(md, false, &nf, &ns, &nwide, NULL);
            if (strstr(e->d_name, "indgcn_full") || strstr(e->d_name, "sage_full")) CHECK(nwide == 1);
            BgTensor feat = {0};
            random_features(ms, g->n, 4242, &feat);
            CHECK(write_weights(m0, wpath, 99));
            compare(e->d_name, ms, md, g, &feat, wpath, t);
            bg_tensor_free(&feat);
        }
        bg_arena_free(a);
    }
    if (dh) closedir(dh);
}

/* Every float bmm of m gets split-k in chunks of 8 k (where K > 8), keeping its fma flag;
 * every row sum lanes(32), whatever its width. */
static void force_orders(BgModule *m) {
    for (int i = 0; i < m->ninsts; i++) {
        BgInst *in = &m->insts[i];
        if (bg_op_row_sum(in->op)) in->attrs.fp = (BgFpOrder){BG_FP_LANES, false, 32, 0, 0};
        /* every aggregation of bits in slots, every row of it (T = 0) */
        BgFpOrder so;
        if (bg_fp_slots_order(m, in, &so)) {
            so.chunk = 0;
            in->attrs.fp = so;
        }
        int64_t k = bg_inst_bmm_k(m, in);
        if (bg_inst_fp(m, in).kind == BG_FP_NONE || in->op != BG_OP_BMM || k <= 8) continue;
        in->attrs.fp.kind = BG_FP_SPLITK;
        in->attrs.fp.chunk = 8;
        in->attrs.fp.split = (int32_t)((k + 7) / 8);
    }
    CHECK(verifies(m));
}

static void check_random(int nmodels, BgGraph *g, Tally *t, Tally *tsplit) {
    char *text = malloc(1 << 16);
    int nslots = 0; /* the aggregations fp-order recorded in slots */
    char wpath[4096];
    snprintf(wpath, sizeof wpath, "%s/fp_order_random.safetensors", bg_test_tmpdir());
    for (int k = 0; k < nmodels; k++) {
        bg_gen_model((unsigned long long)k, text, 1 << 16);
        char name[64];
        snprintf(name, sizeof name, "random%d.bgnn", k);
        BgArena *a = bg_arena_new();
        BgModule *ms = compile_model(a, name, text, true, false), *md = compile_model(a, name, text, false, false);
        BgModule *m0 = compile_model(a, name, text, true, true);
        CHECK(ms && md && m0);
        if (ms && md && m0) {
            BgTensor feat = {0};
            random_features(m0, g->n, (unsigned long long)k * 31 + 5, &feat);
            CHECK(write_weights(m0, wpath, (unsigned long long)k + 1));
            int nf = 0, ns = 0;
            check_recorded(md, false, &nf, &ns, NULL, &nslots);
            compare(name, ms, md, g, &feat, wpath, t);
            force_orders(md);
            compare(name, ms, md, g, &feat, wpath, tsplit);
            bg_tensor_free(&feat);
        }
        bg_arena_free(a);
    }
    free(text);
    printf("random models: %d aggregations recorded in slots\n", nslots);
    CHECK(nslots > nmodels / 10); /* the generator's aggregations of bits with a float sum */
}

/* ---- 4. Cora and CiteSeer with the trained weights: the predictions ----------------------------------- */

static int64_t argmax_row(const BgTensor *y, int64_t r) {
    int64_t cols = bg_tensor_cols(y), best = 0;
    const float *p = (const float *)y->data + r * cols;
    for (int64_t c = 1; c < cols; c++)
        if (p[c] > p[best]) best = c;
    return best;
}

/* ds: "cora" (models in examples/) or "citeseer" (examples/citeseer/); weights NAME_ds. */
static void check_trained(const char *src, const char *ds_name) {
    static const char *const models[] = {"gcn_bin", "gcn_fp32", "gcn_full", "indgcn_bin", "indgcn_full",
                                         "sage_bin", "sage_full", "saint_bin", "saint_full", NULL};
    char dpath[4096];
    snprintf(dpath, sizeof dpath, "%s/%s", bg_default_data_root(), ds_name);
    bool cora = strcmp(ds_name, "cora") == 0;
    BgDataset ds;
    memset(&ds, 0, sizeof ds);
    BgDiagSink d;
    bg_diag_init(&d);
    if (!bg_dataset_load(dpath, &ds, &d)) {
        printf("[note] no %s under %s: the accuracy check is skipped\n", ds_name, dpath);
        bg_diag_free(&d);
        return;
    }
    for (int i = 0; models[i]; i++) {
        char path[4096], wpath[4096];
        snprintf(path, sizeof path, "%s/examples/%s%s.bgnn", src, cora ? "" : "citeseer/", models[i]);
        snprintf(wpath, sizeof wpath, "%s/examples/weights/%s_%s.safetensors", src, models[i], ds_name);
        BgArena *a = bg_arena_new();
        BgModule *ms = compile_model(a, path, NULL, true, false), *md = compile_model(a, path, NULL, false, false);
        BgInterpResult rs, rd;
        memset(&rs, 0, sizeof rs);
        memset(&rd, 0, sizeof rd);
        bool ok = ms && md && diff_run(ms, &ds.graph, &ds.features, wpath, &rs) &&
                  diff_run(md, &ds.graph, &ds.features, wpath, &rd) && rs.noutputs > 0;
        CHECK(ok);
        if (ok) {
            const BgTensor *ys = &rs.outputs[0], *yd = &rd.outputs[0];
            int64_t n = bg_tensor_rows(ys), same = 0, bitsame = 0;
            for (int64_t r = 0; r < n; r++) {
                same += argmax_row(ys, r) == argmax_row(yd, r);
                bitsame += memcmp((const float *)ys->data + r * bg_tensor_cols(ys),
                                  (const float *)yd->data + r * bg_tensor_cols(ys),
                                  sizeof(float) * (size_t)bg_tensor_cols(ys)) == 0;
            }
            Tally one;
            memset(&one, 0, sizeof one);
            BgInterpResult r1;
            BgTensor *v1 = NULL;
            memset(&r1, 0, sizeof r1);
            /* the local checks on the dataset's real values (products, flips) */
            if (diff_run_values(md, &ds.graph, &ds.features, wpath, &r1, &v1))
                local_checks(ms, md, v1, &ds.graph, &one, models[i]);
            if (v1) bg_interp_values_free(md, v1);
            bg_interp_result_free(&r1);
            printf("%-8s %-12s predictions equal on %lld of %lld nodes (%.3f%%), logits rows bit-identical %lld; "
                   "%ld reordered products and row sums (%ld folded, %ld row sums), %ld sign flips of %ld elements "
                   "(%ld away from zero)\n",
                   ds_name, models[i], (long long)same, (long long)n, 100.0 * (double)same / (double)n, (long long)bitsame,
                   one.insts, one.folds, one.rowsums, one.flips, one.elems, one.flips_bad);
            CHECK(same * 1000 >= n * 999);
            CHECK(one.flips_bad == 0 && one.bound_bad == 0);
        }
        bg_interp_result_free(&rs);
        bg_interp_result_free(&rd);
        bg_arena_free(a);
    }
    bg_dataset_free(&ds);
    bg_diag_free(&d);
}

int main(void) {
    (void)diff_same; /* difftest.h's bitwise compare: the orders here differ by design */
    const char *src = getenv("BGNN_SOURCE_DIR");
    if (!src) bg_test_skip("BGNN_SOURCE_DIR not set (run through ctest)");
    check_kinds();
    check_row_sums();
    check_fold_ops();
    check_bound_on_cancellation();
    check_slots();
    check_text();
    check_verifier(src);
    unsigned long long s = 7;
    BgGraph g;
    random_graph(&g, 67, &s);
    g.ngraphs = 3; /* the batched example needs graph boundaries: three graphs, one empty */
    g.graph_ptr = malloc(sizeof(int64_t) * 4);
    g.graph_ptr[0] = 0; g.graph_ptr[1] = 30; g.graph_ptr[2] = 30; g.graph_ptr[3] = 67;
    Tally te, tr, ts;
    memset(&te, 0, sizeof te);
    memset(&tr, 0, sizeof tr);
    memset(&ts, 0, sizeof ts);
    te.tol = tr.tol = 1e-5;
    ts.tol = 1e-4; /* chunks of 8 change far more roundings than the recorded orders: amplified more */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/examples", src);
    check_examples(dir, &g, &te);
    snprintf(dir, sizeof dir, "%s/examples/citeseer", src);
    check_examples(dir, &g, &te);
    print_tally("examples (random weights, N = 67)", &te);
    CHECK(te.models >= 10 && te.insts >= 10);
    int nmodels = getenv("BGNN_RANDOM_MODELS") ? atoi(getenv("BGNN_RANDOM_MODELS")) : 150;
    check_random(nmodels, &g, &tr, &ts);
    print_tally("random models (recorded orders)", &tr);
    print_tally("random models (split-k in chunks of 8, lanes(32) and slots(S,0,4096) forced)", &ts);
    CHECK(ts.insts >= tr.insts && ts.insts > nmodels / 2);
    CHECK(ts.slots > nmodels / 10); /* the generator's aggregations of bits with a float sum */
    bg_graph_free(&g);
    /* BGNN_FP_ORDER_DATASETS: the trained-weight checks to run (default "cora,citeseer"; the
     * sanitizer build runs none: ctest sets it, tests/CMakeLists.txt) */
    const char *ds = getenv("BGNN_FP_ORDER_DATASETS");
    if (!ds) ds = "cora,citeseer";
    if (strstr(ds, "cora")) check_trained(src, "cora");
    if (strstr(ds, "citeseer")) check_trained(src, "citeseer");
    return bg_test_finish();
}
