/* ref_ops.c - the CPU reference implementation of every IR op (see ref_ops.h).
 *
 * This file is the executable form of docs/semantics.md and the oracle for the GPU kernels:
 * binary operands stay bit-packed (uint32 words, LSB first, padding 0) and +-1 dot products
 * are popcounts over the real K bits; float reductions run in the order the IR records
 * (docs/semantics.md, section 2: seq from +0.0f in index order, fmaf where it says fma,
 * split-k chunks folded left to right, float64 row sums by lanes), every other product and
 * sum rounded on its own (built with -ffp-contract=off), and in float64 where the semantics
 * say so.  Nothing here prints or exits. */
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------------------ */

static bool is_f32(const BgTensor *t) { return t && t->dtype == BG_DT_F32 && t->data; }
static bool is_b1(const BgTensor *t) { return t && t->dtype == BG_DT_B1 && t->data; }
static bool is_rank2(const BgTensor *t) { return t->rank == 2; }
static bool vec_ok(const BgTensor *v, int64_t c) {
    return !v || (is_f32(v) && v->rank == 1 && v->dim[0] == c);
}

static bool prec_ok(char p) { return p == 'F' || p == 'B'; }
static bool dtype_is(const BgTensor *t, char p) {
    return p == 'F' ? is_f32(t) : p == 'B' ? is_b1(t) : false;
}

/* Mask of the valid bits of word w of a row with cols columns. */
static uint32_t word_mask(int64_t cols, int64_t w) {
    int64_t rem = cols - w * 32;
    if (rem >= 32) return 0xffffffffu;
    if (rem <= 0) return 0;
    return (1u << rem) - 1u;
}

static int popc(uint32_t v) { return __builtin_popcount(v); }

/* The bit rule (docs/semantics.md): bit 1 (+1) when the sign bit is clear.  Equals t >= 0
 * except on -0.0 (-1) and NaN (its sign bit). */
static inline uint32_t bit_of(float t) { return signbit(t) ? 0u : 1u; }

#define SIGN_BIT 0x80000000u
/* t with its sign bit XORed with m (m = 0 or SIGN_BIT): exact, like a negation. */
static inline float flip_sign(float t, uint32_t m) {
    uint32_t u;
    memcpy(&u, &t, sizeof u);
    u ^= m;
    memcpy(&t, &u, sizeof t);
    return t;
}

/* Allocates y like x (same rank and dims) with dtype dt. */
static bool alloc_like(BgTensor *y, BgDType dt, const BgTensor *x) {
    return bg_tensor_alloc(y, dt, x->rank, x->dim[0], x->rank == 2 ? x->dim[1] : 0);
}

static bool fail(BgTensor *y) {
    bg_tensor_free(y);
    return false;
}

float bg_ref_value(const BgTensor *t, int64_t r, int64_t c) {
    if (t->dtype == BG_DT_B1)
        return bg_bit_get((const uint32_t *)t->data, t->words_per_row, r, c) ? 1.0f : -1.0f;
    return ((const float *)t->data)[r * bg_tensor_cols(t) + c];
}

/* ---- bin, absmean, scl ---------------------------------------------------------------- */

bool bg_ref_bin(const BgTensor *x, BgTensor *y) { return bg_tensor_to_bits(x, y); }

/* The terms of the float64 row sums: x, |x|, (x - mu)^2, exp(x - mu) (each rounded on its own). */
typedef enum { TERM_X, TERM_ABS, TERM_SQDEV, TERM_EXPDEV } RowTerm;

static double row_term(RowTerm t, float v, double mu) {
    if (t == TERM_ABS) return fabs((double)v);
    if (t == TERM_SQDEV) {
        double d = (double)v - mu;
        return d * d;
    }
    if (t == TERM_EXPDEV) return exp((double)v - mu);
    return (double)v;
}

/* sum_c term(x[c]) over c = 0..n-1 in float64, in the order fp (ref_ops.h): seq, or lanes(L):
 * lane l sums c = l, l + L, ... from +0, then p[i] = p[i] + p[i + h] for h = L/2, ..., 1. */
static double row_sum(const float *x, int64_t n, BgFpOrder fp, RowTerm t, double mu) {
    int lanes = fp.split;
    if (fp.kind != BG_FP_LANES || lanes < 2 || lanes > 256 || (lanes & (lanes - 1))) {
        double s = 0.0;
        for (int64_t c = 0; c < n; c++) s += row_term(t, x[c], mu);
        return s;
    }
    double p[256];
    for (int l = 0; l < lanes; l++) {
        p[l] = 0.0;
        for (int64_t c = l; c < n; c += lanes) p[l] += row_term(t, x[c], mu);
    }
    for (int h = lanes / 2; h >= 1; h /= 2)
        for (int i = 0; i < h; i++) p[i] = p[i] + p[i + h];
    return p[0];
}

/* f32[R]: each row's mean of term(x) (absmean: |x|, rowmean: x), the float64 sum in order fp
 * rounded once; C = 0 gives 0. */
static bool row_means(const BgTensor *x, BgFpOrder fp, RowTerm term, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!is_f32(x) || !is_rank2(x)) return false;
    int64_t rows = x->dim[0], cols = x->dim[1];
    if (!bg_tensor_alloc(y, BG_DT_F32, 1, rows, 0)) return fail(y);
    const float *xs = x->data;
    float *ys = y->data;
    for (int64_t r = 0; r < rows; r++) {
        double s = row_sum(xs + r * cols, cols, fp, term, 0.0);
        ys[r] = cols ? (float)(s / (double)cols) : 0.0f;
    }
    return true;
}

bool bg_ref_absmean(const BgTensor *x, BgFpOrder fp, BgTensor *y) { return row_means(x, fp, TERM_ABS, y); }

bool bg_ref_rowmean(const BgTensor *x, BgFpOrder fp, BgTensor *y) { return row_means(x, fp, TERM_X, y); }


bool bg_ref_scl(const BgTensor *x, const BgTensor *rows, const BgTensor *cols, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!is_rank2(x)) return false;
    int64_t nr = bg_tensor_rows(x), nc = bg_tensor_cols(x);
    if (rows && (!is_f32(rows) || rows->rank != 1 || rows->dim[0] != nr)) return false;
    if (cols && (!is_f32(cols) || cols->rank != 1 || cols->dim[0] != nc)) return false;
    if (!alloc_like(y, BG_DT_F32, x)) return fail(y);
    const float *rs = rows ? rows->data : NULL, *cs = cols ? cols->data : NULL;
    float *ys = y->data;
    for (int64_t r = 0; r < nr; r++)
        for (int64_t c = 0; c < nc; c++) {
            float v = bg_ref_value(x, r, c); /* b1: +-1 */
            if (rs) v = v * rs[r];
            if (cs) v = v * cs[c];
            ys[r * nc + c] = v;
        }
    return true;
}

/* ---- bmm ------------------------------------------------------------------------------ */

/* Transposes the bits of w b1[K,M] to [M, ceil(K/32)] words (padding 0). */
static uint32_t *transpose_bits(const BgTensor *w, int64_t *wpr_out) {
    int64_t k = w->dim[0], m = w->dim[1], wpr = (k + 31) / 32;
    uint32_t *t = bg_xcalloc((size_t)(m * wpr) + 1, sizeof(uint32_t));
    const uint32_t *ws = w->data;
    for (int64_t i = 0; i < k; i++)
        for (int64_t o = 0; o < m; o++)
            if (bg_bit_get(ws, w->words_per_row, i, o)) t[o * wpr + i / 32] |= 1u << (i % 32);
    *wpr_out = wpr;
    return t;
}

/* acc[o] = fmaf(xv, wr[o], acc[o]) for o < m: one rounding each (IEEE fusedMultiplyAdd).  On
 * x86-64 a clone for FMA hardware, picked at load time, vectorises it (the generic fmaf call
 * is about 4x slower); both give the same bits, fmaf being correctly rounded. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("fma", "default")))
#endif
static void fma_row(float *acc, float xv, const float *wr, int64_t m) {
    for (int64_t o = 0; o < m; o++) acc[o] = fmaf(xv, wr[o], acc[o]);
}

/* Writes row r of the output from float accumulators: f32 as is, b1 as bin (sign bit). */
static void store_row(BgTensor *y, int64_t r, const float *acc, int64_t m) {
    if (y->dtype == BG_DT_F32) {
        memcpy((float *)y->data + r * m, acc, sizeof(float) * (size_t)m);
        return;
    }
    uint32_t *ys = (uint32_t *)y->data + r * y->words_per_row;
    for (int64_t o = 0; o < m; o++)
        ys[o / 32] |= bit_of(acc[o]) << (o % 32);
}

bool bg_ref_bmm(const char prec[3], const BgTensor *x, const BgTensor *w, BgTensor *y) {
    BgFpOrder seq = {BG_FP_SEQ, false, 0, 0, 0};
    return bg_ref_bmm_fp(prec, x, w, seq, y);
}

bool bg_ref_bmm_fp(const char prec[3], const BgTensor *x, const BgTensor *w, BgFpOrder fp, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!prec || !prec_ok(prec[0]) || !prec_ok(prec[1]) || !prec_ok(prec[2])) return false;
    if (!dtype_is(x, prec[0]) || !dtype_is(w, prec[1])) return false;
    if (!is_rank2(x) || !is_rank2(w) || x->dim[1] != w->dim[0]) return false;
    int64_t rows = x->dim[0], k = x->dim[1], m = w->dim[1];
    if (!bg_tensor_alloc(y, prec[2] == 'B' ? BG_DT_B1 : BG_DT_F32, 2, rows, m)) return fail(y);
    float *acc = bg_xcalloc((size_t)m + 1, sizeof(float));

    if (prec[0] == 'B' && prec[1] == 'B') {
        /* t = K - 2 popc(x_r XOR w_o) over the real K bits. */
        int64_t kw;
        uint32_t *wt = transpose_bits(w, &kw);
        const uint32_t *xs = x->data;
        uint32_t last = word_mask(k, kw - 1);
        for (int64_t r = 0; r < rows; r++) {
            const uint32_t *xr = xs + r * x->words_per_row;
            for (int64_t o = 0; o < m; o++) {
                const uint32_t *wo = wt + o * kw;
                int64_t pc = 0;
                for (int64_t i = 0; i + 1 < kw; i++) pc += popc(xr[i] ^ wo[i]);
                if (kw > 0) pc += popc((xr[kw - 1] ^ wo[kw - 1]) & last);
                int64_t t = k - 2 * pc;
                if (y->dtype == BG_DT_F32) ((float *)y->data)[r * m + o] = (float)t;
                else if (t >= 0) ((uint32_t *)y->data)[r * y->words_per_row + o / 32] |= 1u << (o % 32);
            }
        }
        free(wt);
        free(acc);
        return true;
    }

    /* Float paths: acc[o] accumulates over k in order (one sequential sum per output); under
     * split-k, over the chunk's k, and tot[o] folds the chunks' partials left to right.
     * v(bit) * t is t with its sign flipped for a 0 bit: an exact sign-bit XOR (also for
     * NaN and zeros, like a negation), which keeps the loop over o vectorisable. */
    int64_t chunk = fp.kind == BG_FP_SPLITK && fp.chunk > 0 ? fp.chunk : k;
    float *tot = bg_xcalloc((size_t)m + 1, sizeof(float));
    uint32_t *wmask = NULL;
    if (prec[0] == 'F' && prec[1] == 'B') {
        wmask = bg_xcalloc((size_t)(k * m) + 1, sizeof(uint32_t));
        for (int64_t i = 0; i < k; i++)
            for (int64_t o = 0; o < m; o++)
                wmask[i * m + o] = bg_bit_get(w->data, w->words_per_row, i, o) ? 0u : SIGN_BIT;
    }
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t o = 0; o < m; o++) tot[o] = 0.0f;
        for (int64_t k0 = 0; k0 < k; k0 += chunk) {
            int64_t k1 = k - k0 < chunk ? k : k0 + chunk;
            for (int64_t o = 0; o < m; o++) acc[o] = 0.0f;
            for (int64_t i = k0; i < k1; i++) {
                if (prec[0] == 'F' && prec[1] == 'B') {
                    float xv = ((const float *)x->data)[r * k + i];
                    const uint32_t *mr = wmask + i * m;
                    for (int64_t o = 0; o < m; o++) acc[o] = acc[o] + flip_sign(xv, mr[o]);
                } else if (prec[0] == 'B' && prec[1] == 'F') {
                    uint32_t mk = bg_bit_get(x->data, x->words_per_row, r, i) ? 0u : SIGN_BIT;
                    const float *wr = (const float *)w->data + i * m;
                    for (int64_t o = 0; o < m; o++) acc[o] = acc[o] + flip_sign(wr[o], mk);
                } else if (fp.fma) {
                    fma_row(acc, ((const float *)x->data)[r * k + i], (const float *)w->data + i * m, m);
                } else {
                    float xv = ((const float *)x->data)[r * k + i];
                    const float *wr = (const float *)w->data + i * m;
                    for (int64_t o = 0; o < m; o++) {
                        float p = xv * wr[o];
                        acc[o] = acc[o] + p;
                    }
                }
            }
            for (int64_t o = 0; o < m; o++) tot[o] = k0 == 0 ? acc[o] : tot[o] + acc[o];
        }
        store_row(y, r, tot, m);
    }
    free(wmask);
    free(tot);
    free(acc);
    return true;
}

/* ---- bspmm ---------------------------------------------------------------------------- */

/* The three integer reductions for a B activation over a 0/1 row (reference-notes 4).
 * Each computes s[c] = sum_{j in row} v(x[j,c]) for c < C. */

/* ifelse: loop over the neighbours, add +1 or -1 per bit. */
static void red_ifelse(const BgAdj *a, const BgTensor *x, int64_t i, int64_t *s) {
    int64_t cols = x->dim[1], wpr = x->words_per_row;
    const uint32_t *xs = x->data;
    for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
        const uint32_t *xj = xs + (int64_t)a->col[e] * wpr;
        for (int64_t w = 0; w < wpr; w++) {
            uint32_t word = xj[w];
            int64_t c0 = w * 32, n = cols - c0 < 32 ? cols - c0 : 32;
            for (int64_t b = 0; b < n; b++) s[c0 + b] += ((word >> b) & 1u) ? 1 : -1;
        }
    }
}

/* Bit-sliced vertical counter: planes[p] holds bit p of 32 per-bit counts. */
static void vc_add(uint32_t *planes, int *np, uint32_t v) {
    for (int p = 0; v; p++) {
        if (p == *np) {
            planes[p] = 0;
            (*np)++;
        }
        uint32_t carry = planes[p] & v;
        planes[p] ^= v;
        v = carry;
    }
}
static int64_t vc_count(const uint32_t *planes, int np, int b) {
    int64_t n = 0;
    for (int p = 0; p < np; p++) n |= (int64_t)((planes[p] >> b) & 1u) << p;
    return n;
}

/* andnot: per feature word, over the neighbour rows, count per bit popc(a & b) and
 * popc(a & ~b) with two bit-sliced vertical counters; s = ones - zeros. */
static void red_andnot(const BgAdj *a, const BgTensor *x, int64_t i, int64_t *s) {
    int64_t cols = x->dim[1], wpr = x->words_per_row;
    const uint32_t *xs = x->data;
    uint32_t pos[64], neg[64];
    for (int64_t w = 0; w < wpr; w++) {
        int npos = 0, nneg = 0;
        uint32_t mask = word_mask(cols, w);
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++) {
            uint32_t word = xs[(int64_t)a->col[e] * wpr + w];
            vc_add(pos, &npos, word & mask);
            vc_add(neg, &nneg, ~word & mask);
        }
        int64_t c0 = w * 32, n = cols - c0 < 32 ? cols - c0 : 32;
        for (int64_t b = 0; b < n; b++)
            s[c0 + b] += vc_count(pos, npos, (int)b) - vc_count(neg, nneg, (int)b);
    }
}

/* popc2: the neighbour set as a bitmask per 32-node block of columns, against the
 * activations transposed to [C][ceil(N/32)] node words: s += 2 popc(a & b) - popc(a). */
static void red_popc2(const BgAdj *a, const uint32_t *xt, int64_t nblk, int64_t cols,
                      int64_t i, int64_t *s) {
    int64_t e = a->rowptr[i], end = a->rowptr[i + 1];
    while (e < end) {
        int64_t blk = a->col[e] / 32;
        uint32_t am = 0;
        for (; e < end && a->col[e] / 32 == blk; e++) am |= 1u << (a->col[e] % 32);
        int pa = popc(am);
        for (int64_t c = 0; c < cols; c++) s[c] += 2 * popc(am & xt[c * nblk + blk]) - pa;
    }
}

/* x b1[N,C] transposed to [C][ceil(N/32)] words: bit j%32 of word c*nblk + j/32 = x[j,c]. */
static uint32_t *transpose_nodes(const BgTensor *x, int64_t *nblk_out) {
    int64_t n = x->dim[0], cols = x->dim[1], nblk = (n + 31) / 32;
    uint32_t *t = bg_xcalloc((size_t)(cols * nblk) + 1, sizeof(uint32_t));
    for (int64_t j = 0; j < n; j++)
        for (int64_t c = 0; c < cols; c++)
            if (bg_bit_get(x->data, x->words_per_row, j, c)) t[c * nblk + j / 32] |= 1u << (j % 32);
    *nblk_out = nblk;
    return t;
}

static bool adj_ok(const BgAdj *a) {
    return a && a->rowptr && (a->nnz == 0 || a->col) && a->n >= 0;
}

bool bg_ref_bspmm(const char prec[3], const BgAdj *a, const BgTensor *x, BgTensor *y,
                  BgMethod method) {
    return bg_ref_bspmm_rows(prec, a, x, 0, a ? a->n : 0, y, method);
}

bool bg_ref_bspmm_fp(const char prec[3], const BgAdj *a, const BgTensor *x, BgTensor *y, BgMethod method,
                     BgFpOrder fp) {
    return bg_ref_bspmm_rows_fp(prec, a, x, 0, a ? a->n : 0, y, method, fp);
}

bool bg_ref_bspmm_rows(const char prec[3], const BgAdj *a, const BgTensor *x, int64_t r0, int64_t r1,
                       BgTensor *y, BgMethod method) {
    return bg_ref_bspmm_rows_fp(prec, a, x, r0, r1, y, method, (BgFpOrder){BG_FP_SEQ, false, 0, 0, 0});
}

/* The order slots of one row of d > T edges of bit activations (docs/semantics.md, section 2):
 * edge t to slot t mod ns (ns = S, or 4 S from H edges); per slot the factors of the edges
 * whose bit c is set (p) and all factors (q), each from +0 in edge order; the slots combined
 * pairwise, p[s] += p[s + h] for s a multiple of 2h, h = 1, 2, 4, ...; acc[c] = fl(fl(p + p) - q).
 * f(e) is the factor of the row's edge e (adjacency F: its weight; B: colf of its column). */
static void slots_row(const BgAdj *a, bool adjf, const uint32_t *xw, int64_t wpr, int64_t cols, int64_t i,
                      BgFpOrder fp, float *p, float *q, float *acc) {
    const int64_t e0 = a->rowptr[i], d = a->rowptr[i + 1] - e0;
    const int64_t ns = d >= fp.hub ? 4 * (int64_t)fp.split : fp.split;
    for (int64_t k = 0; k < ns * cols; k++) p[k] = 0.0f;
    for (int64_t k = 0; k < ns; k++) q[k] = 0.0f;
    for (int64_t t = 0; t < d; t++) {
        const int64_t j = a->col[e0 + t], sl = t % ns;
        const float f = adjf ? a->w[e0 + t] : a->colf[j];
        const uint32_t *xr = xw + j * wpr;
        float *ps = p + sl * cols;
        q[sl] = q[sl] + f;
        for (int64_t c = 0; c < cols; c++)
            if ((xr[c / 32] >> (c % 32)) & 1u) ps[c] = ps[c] + f;
    }
    for (int64_t h = 1; h < ns; h *= 2)
        for (int64_t sl = 0; sl + h < ns; sl += 2 * h) {
            q[sl] = q[sl] + q[sl + h];
            for (int64_t c = 0; c < cols; c++) p[sl * cols + c] = p[sl * cols + c] + p[(sl + h) * cols + c];
        }
    for (int64_t c = 0; c < cols; c++) acc[c] = (p[c] + p[c]) - q[0];
}

bool bg_ref_bspmm_rows_fp(const char prec[3], const BgAdj *a, const BgTensor *x, int64_t r0, int64_t r1,
                          BgTensor *y, BgMethod method, BgFpOrder fp) {
    memset(y, 0, sizeof *y);
    if (!prec || !prec_ok(prec[0]) || !prec_ok(prec[1]) || !prec_ok(prec[2])) return false;
    if (!adj_ok(a) || !dtype_is(x, prec[0]) || !is_rank2(x) || x->dim[0] != a->n) return false;
    if (r0 < 0 || r1 < r0 || r1 > a->n) return false;
    if (prec[1] == 'F' ? !a->w : (!a->rowf || !a->colf)) return false;
    if (method != BG_METHOD_AUTO && method != BG_METHOD_IFELSE && method != BG_METHOD_ANDNOT &&
        method != BG_METHOD_POPC2)
        return false;
    if (method == BG_METHOD_AUTO) method = BG_METHOD_POPC2;
    int64_t n = a->n, cols = x->dim[1];
    /* Every entry of a whole graph; only the rows' own edges of a part of one. */
    bool whole = r0 == 0 && r1 == n;
    for (int64_t e = whole ? 0 : a->rowptr[r0]; e < (whole ? a->nnz : a->rowptr[r1]); e++)
        if (a->col[e] < 0 || a->col[e] >= n) return false;
    if (!bg_tensor_alloc(y, prec[2] == 'B' ? BG_DT_B1 : BG_DT_F32, 2, r1 - r0, cols)) return fail(y);

    const bool slots = fp.kind == BG_FP_SLOTS && prec[0] == 'B';
    if (slots && (!bg_fp_slots_ok(fp.split) || fp.chunk < 0 || fp.hub <= fp.chunk)) return fail(y);
    float *acc = bg_xcalloc((size_t)cols + 1, sizeof(float));
    int64_t *s = bg_xcalloc((size_t)cols + 1, sizeof(int64_t));
    float *sp = slots ? bg_xcalloc((size_t)(4 * fp.split) * (size_t)(cols + 1), sizeof(float)) : NULL;
    float *sq = slots ? bg_xcalloc((size_t)(4 * fp.split), sizeof(float)) : NULL;
    uint32_t *xt = NULL;
    int64_t nblk = 0;
    bool xb = prec[0] == 'B';
    const float *xf = xb ? NULL : x->data;
    const uint32_t *xw = xb ? x->data : NULL;
    int64_t wpr = x->words_per_row;

    for (int64_t i = r0; i < r1; i++) {
        int64_t e0 = a->rowptr[i], e1 = a->rowptr[i + 1];
        for (int64_t c = 0; c < cols; c++) acc[c] = 0.0f;
        const bool row_slots = slots && e1 - e0 > fp.chunk;
        if (prec[1] == 'F' && row_slots) {
            slots_row(a, true, xw, wpr, cols, i, fp, sp, sq, acc);
        } else if (prec[1] == 'F') {
            /* y_i = sum_j fl(w_ij * v(x_j)), sequential. */
            for (int64_t e = e0; e < e1; e++) {
                int64_t j = a->col[e];
                float wij = a->w[e];
                for (int64_t c = 0; c < cols; c++) {
                    float t = xb ? (((xw[j * wpr + c / 32] >> (c % 32)) & 1u) ? wij : -wij)
                                 : wij * xf[j * cols + c];
                    acc[c] = acc[c] + t;
                }
            }
        } else {
            bool unit = xb;
            for (int64_t e = e0; unit && e < e1; e++)
                if (a->colf[a->col[e]] != 1.0f) unit = false;
            if (unit) {
                /* Integer sum of +-1 (exact); the popcount case. */
                for (int64_t c = 0; c < cols; c++) s[c] = 0;
                if (method == BG_METHOD_IFELSE) {
                    red_ifelse(a, x, i, s);
                } else if (method == BG_METHOD_ANDNOT) {
                    red_andnot(a, x, i, s);
                } else {
                    if (!xt) xt = transpose_nodes(x, &nblk);
                    red_popc2(a, xt, nblk, cols, i, s);
                }
                for (int64_t c = 0; c < cols; c++) acc[c] = (float)s[c];
            } else if (row_slots) {
                slots_row(a, false, xw, wpr, cols, i, fp, sp, sq, acc);
            } else {
                /* s_i = sum_j t_j, t_j = fl(c_j * x_j) or +-c_j, sequential in column order. */
                for (int64_t e = e0; e < e1; e++) {
                    int64_t j = a->col[e];
                    float cj = a->colf[j];
                    for (int64_t c = 0; c < cols; c++) {
                        float t = xb ? (((xw[j * wpr + c / 32] >> (c % 32)) & 1u) ? cj : -cj)
                                     : cj * xf[j * cols + c];
                        acc[c] = acc[c] + t;
                    }
                }
            }
            float ri = a->rowf[i];
            for (int64_t c = 0; c < cols; c++) acc[c] = ri * acc[c];
        }
        store_row(y, i - r0, acc, cols);
    }
    free(xt);
    free(s);
    free(acc);
    free(sp);
    free(sq);
    return true;
}

/* ---- add, concat ---------------------------------------------------------------------- */

bool bg_ref_add(const char prec[3], const BgTensor *a, const BgTensor *b, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!prec || !prec_ok(prec[0]) || prec[1] != prec[0] || !prec_ok(prec[2])) return false;
    if (!dtype_is(a, prec[0]) || !dtype_is(b, prec[1])) return false;
    int64_t rows = bg_tensor_rows(a), cols = bg_tensor_cols(a);
    bool bcast;
    if (b->rank == a->rank && b->dim[0] == a->dim[0] && b->dim[1] == a->dim[1]) bcast = false;
    else if (a->rank == 2 && b->rank == 1 && b->dim[0] == cols) bcast = true;
    else return false;
    BgDType odt = prec[2] == 'B' ? BG_DT_B1 : BG_DT_F32;
    if (!alloc_like(y, odt, a)) return fail(y);

    if (prec[0] == 'B' && odt == BG_DT_B1) {
        /* v(a) + v(b) >= 0 unless both are -1: bit = a | b. */
        const uint32_t *as = a->data, *bs = b->data;
        uint32_t *ys = y->data;
        int64_t wpr = y->words_per_row;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t w = 0; w < wpr; w++)
                ys[r * wpr + w] =
                    (as[r * wpr + w] | bs[(bcast ? 0 : r) * wpr + w]) & word_mask(cols, w);
        return true;
    }
    float *row = bg_xcalloc((size_t)cols + 1, sizeof(float));
    for (int64_t r = 0; r < rows; r++) {
        int64_t rb = bcast ? 0 : r;
        for (int64_t c = 0; c < cols; c++) row[c] = bg_ref_value(a, r, c) + bg_ref_value(b, rb, c);
        store_row(y, r, row, cols);
    }
    free(row);
    return true;
}

bool bg_ref_concat(int n, const BgTensor *const *xs, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (n < 1 || !xs || !xs[0] || !xs[0]->data || !is_rank2(xs[0])) return false;
    BgDType dt = xs[0]->dtype;
    if (dt != BG_DT_F32 && dt != BG_DT_B1) return false;
    int64_t rows = xs[0]->dim[0], total = 0;
    for (int i = 0; i < n; i++) {
        if (!xs[i] || !xs[i]->data || xs[i]->dtype != dt || !is_rank2(xs[i]) ||
            xs[i]->dim[0] != rows)
            return false;
        total += xs[i]->dim[1];
    }
    if (!bg_tensor_alloc(y, dt, 2, rows, total)) return fail(y);
    int64_t off = 0;
    for (int i = 0; i < n; i++) {
        int64_t c = xs[i]->dim[1];
        for (int64_t r = 0; r < rows; r++) {
            if (dt == BG_DT_F32) {
                memcpy((float *)y->data + r * total + off, (const float *)xs[i]->data + r * c,
                       sizeof(float) * (size_t)c);
            } else {
                for (int64_t k = 0; k < c; k++)
                    if (bg_bit_get(xs[i]->data, xs[i]->words_per_row, r, k))
                        bg_bit_set(y->data, y->words_per_row, r, off + k, 1);
            }
        }
        off += c;
    }
    return true;
}

/* ---- fused forms: bin.center, threshold ------------------------------------------------- */

bool bg_ref_bin_center(const BgTensor *x, BgFpOrder fp, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!is_f32(x) || !is_rank2(x)) return false;
    if (!alloc_like(y, BG_DT_B1, x)) return fail(y);
    int64_t rows = x->dim[0], cols = x->dim[1], wpr = y->words_per_row;
    const float *xs = x->data;
    uint32_t *ys = y->data;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = xs + r * cols;
        double sum = row_sum(xr, cols, fp, TERM_X, 0.0); /* bg_ref_standardize's mean */
        double mu = cols ? sum / (double)cols : 0.0;
        for (int64_t c = 0; c < cols; c++) {
            double d = (double)xr[c] - mu;
            if (!signbit(d) && !isnan(d)) ys[r * wpr + c / 32] |= 1u << (c % 32);
        }
    }
    return true;
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static float f32_from(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static bool nan_bits(float f) { return (f32_bits(f) & 0x7fffffffu) > 0x7f800000u; }

#define KEY_NINF 0x007fffffu  /* key of -inf */
#define KEY_PINF 0xff800000u  /* key of +inf */
#define THR_NONE 0x7fc00000u  /* boundary "above +inf": the bit never becomes 1 ^ dir */

uint32_t bg_ref_key(float v) {
    uint32_t u = f32_bits(v);
    return (u & SIGN_BIT) ? ~u : (u | SIGN_BIT);
}
static float from_key(uint32_t k) { return f32_from((k & SIGN_BIT) ? (k & ~SIGN_BIT) : ~k); }
/* A NaN counts as -inf or +inf by its sign bit. */
static uint32_t clamp_key(float v) {
    if (nan_bits(v)) return signbit(v) ? KEY_NINF : KEY_PINF;
    return bg_ref_key(v);
}
/* 1 when a multiplier reverses the order: sign bit set and not NaN. */
static uint32_t reverses(float f) { return !nan_bits(f) && signbit(f) ? 1u : 0u; }

/* The chain at channel c on v: the unfused ops' float operations in their order (scl,
 * add.FFF, batchnorm, relu of ref_ops.c).  p[k] is slot k's data (NULL = none). */
static float chain_apply(int n, const BgStep *st, const float *const *p, int64_t c, float v) {
    int k = 0;
    for (int s = 0; s < n; s++) {
        switch ((BgStepKind)st[s].kind) {
        case BG_STEP_ADD: v = v + p[k][c]; break;
        case BG_STEP_SCL: v = v * p[k + 1][c]; break;
        case BG_STEP_RELU: v = v > 0.0f ? v : 0.0f; break;
        case BG_STEP_BATCHNORM: {
            float ve = p[k + 1][c] + st[s].eps;
            float inv = 1.0f / sqrtf(ve);
            v = v - p[k][c];
            v = v * inv;
            if (p[k + 2]) v = v * p[k + 2][c];
            if (p[k + 3]) v = v + p[k + 3][c];
            break;
        }
        default: break;
        }
        k += bg_step_slots((BgStepKind)st[s].kind);
    }
    return v;
}

/* Direction of channel c: the XOR of the sign bits of the chain's multipliers. */
static uint32_t chain_dir(int n, const BgStep *st, const float *const *p, int64_t c) {
    uint32_t d = 0;
    int k = 0;
    for (int s = 0; s < n; s++) {
        if (st[s].kind == BG_STEP_SCL) d ^= reverses(p[k + 1][c]);
        if (st[s].kind == BG_STEP_BATCHNORM) {
            float ve = p[k + 1][c] + st[s].eps;
            d ^= reverses(1.0f / sqrtf(ve));
            if (p[k + 2]) d ^= reverses(p[k + 2][c]);
        }
        k += bg_step_slots((BgStepKind)st[s].kind);
    }
    return d;
}

bool bg_ref_threshold(int nsteps, const BgStep *steps, const BgTensor *const *slots, int64_t cols,
                      BgTensor *y) {
    memset(y, 0, sizeof *y);
    const float *p[BG_MAX_ARGS];
    int k = 0;
    if (nsteps < 1 || nsteps > BG_MAX_STEPS || cols < 0) return false;
    for (int s = 0; s < nsteps; s++) {
        BgStepKind sk = (BgStepKind)steps[s].kind;
        if (sk != BG_STEP_ADD && sk != BG_STEP_SCL && sk != BG_STEP_RELU && sk != BG_STEP_BATCHNORM)
            return false;
        for (int j = 0; j < bg_step_slots(sk); j++, k++) {
            const BgTensor *t = slots[k];
            bool need = sk == BG_STEP_ADD || (sk == BG_STEP_SCL && j == 1) || (sk == BG_STEP_BATCHNORM && j < 2);
            bool allow = need || (sk == BG_STEP_BATCHNORM);
            if ((need && !t) || (t && !allow)) return false;
            if (t && (!is_f32(t) || t->rank != 1 || t->dim[0] != cols)) return false;
            p[k] = t ? t->data : NULL;
        }
    }
    if (!bg_tensor_alloc(y, BG_DT_F32, 2, 2, cols)) return fail(y);
    float *ys = y->data;
    for (int64_t c = 0; c < cols; c++) {
        uint32_t d = chain_dir(nsteps, steps, p, c);
        /* Smallest key whose P is 1: P(v) = bit(chain(v)) ^ d, or !signbit(v) where the chain
         * gives NaN; non-decreasing over -inf..+inf whenever the chain is (docs/semantics.md). */
        uint32_t lo = KEY_NINF, hi = KEY_PINF + 1u;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2u;
            float v = from_key(mid);
            float o = chain_apply(nsteps, steps, p, c, v);
            uint32_t pb = nan_bits(o) ? (signbit(v) ? 0u : 1u) : (bit_of(o) ^ d);
            if (pb) hi = mid;
            else lo = mid + 1u;
        }
        ys[c] = lo <= KEY_PINF ? from_key(lo) : f32_from(THR_NONE);
        ys[cols + c] = d ? 1.0f : 0.0f;
    }
    return true;
}

bool bg_ref_bin_threshold(const BgTensor *x, const BgTensor *t, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!is_f32(x) || !is_rank2(x) || !is_f32(t) || !is_rank2(t)) return false;
    int64_t rows = x->dim[0], cols = x->dim[1], wpr;
    if (t->dim[0] != 2 || t->dim[1] != cols) return false;
    if (!alloc_like(y, BG_DT_B1, x)) return fail(y);
    wpr = y->words_per_row;
    const float *xs = x->data, *ts = t->data;
    uint32_t *ys = y->data;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            uint32_t bit = (clamp_key(xs[r * cols + c]) >= bg_ref_key(ts[c]) ? 1u : 0u) ^ (ts[cols + c] != 0.0f ? 1u : 0u);
            ys[r * wpr + c / 32] |= bit << (c % 32);
        }
    return true;
}

/* ---- float layers --------------------------------------------------------------------- */

bool bg_ref_relu(const BgTensor *x, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!is_f32(x)) return false;
    if (!alloc_like(y, BG_DT_F32, x)) return fail(y);
    int64_t n = bg_tensor_rows(x) * bg_tensor_cols(x);
    const float *xs = x->data;
    float *ys = y->data;
    for (int64_t i = 0; i < n; i++) ys[i] = xs[i] > 0.0f ? xs[i] : 0.0f;
    return true;
}

bool bg_ref_batchnorm(const BgTensor *x, const BgTensor *mean, const BgTensor *var,
                      const BgTensor *gamma, const BgTensor *beta, float eps, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!is_f32(x) || !is_rank2(x) || !mean || !var) return false;
    int64_t rows = x->dim[0], cols = x->dim[1];
    if (!vec_ok(mean, cols) || !vec_ok(var, cols) || !vec_ok(gamma, cols) || !vec_ok(beta, cols))
        return false;
    if (!alloc_like(y, BG_DT_F32, x)) return fail(y);
    const float *xs = x->data, *mu = mean->data, *vr = var->data;
    const float *g = gamma ? gamma->data : NULL, *bt = beta ? beta->data : NULL;
    float *ys = y->data;
    float *inv = bg_xcalloc((size_t)cols + 1, sizeof(float));
    for (int64_t c = 0; c < cols; c++) {
        float ve = vr[c] + eps;
        inv[c] = 1.0f / sqrtf(ve);
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            float v = xs[r * cols + c] - mu[c];
            v = v * inv[c];
            if (g) v = v * g[c];
            if (bt) v = v + bt[c];
            ys[r * cols + c] = v;
        }
    free(inv);
    return true;
}

bool bg_ref_standardize(const BgTensor *x, float eps, BgFpOrder fp, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!is_f32(x) || !is_rank2(x)) return false;
    if (!alloc_like(y, BG_DT_F32, x)) return fail(y);
    int64_t rows = x->dim[0], cols = x->dim[1];
    const float *xs = x->data;
    float *ys = y->data;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = xs + r * cols;
        double sum = row_sum(xr, cols, fp, TERM_X, 0.0);
        double mu = cols ? sum / (double)cols : 0.0;
        double ss = row_sum(xr, cols, fp, TERM_SQDEV, mu);
        double sd = cols > 1 ? sqrt(ss / (double)(cols - 1)) : 0.0;
        double den = sd + (double)eps;
        for (int64_t c = 0; c < cols; c++) ys[r * cols + c] = (float)(((double)xr[c] - mu) / den);
    }
    return true;
}

bool bg_ref_log_softmax(const BgTensor *x, BgFpOrder fp, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!is_f32(x)) return false;
    if (!alloc_like(y, BG_DT_F32, x)) return fail(y);
    int64_t rows = bg_tensor_rows(x), cols = bg_tensor_cols(x);
    const float *xs = x->data;
    float *ys = y->data;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = xs + r * cols;
        if (cols == 0) continue;
        float m = xr[0];
        for (int64_t c = 1; c < cols; c++)
            if (xr[c] > m) m = xr[c];
        double ls = log(row_sum(xr, cols, fp, TERM_EXPDEV, (double)m));
        for (int64_t c = 0; c < cols; c++) ys[r * cols + c] = (float)((double)xr[c] - (double)m - ls);
    }
    return true;
}

bool bg_ref_readout(const BgTensor *x, const int64_t *graph_ptr, int64_t ngraphs,
                    BgReduce reduce, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!x || !x->data || (x->dtype != BG_DT_F32 && x->dtype != BG_DT_B1) || !is_rank2(x))
        return false;
    if (reduce != BG_RED_SUM && reduce != BG_RED_MEAN && reduce != BG_RED_MAX) return false;
    int64_t n = x->dim[0], cols = x->dim[1];
    if (ngraphs < 0 || (!graph_ptr && ngraphs != 1)) return false;
    if (graph_ptr) {
        if (graph_ptr[0] != 0 || graph_ptr[ngraphs] != n) return false;
        for (int64_t g = 0; g < ngraphs; g++)
            if (graph_ptr[g + 1] < graph_ptr[g]) return false;
    }
    if (!bg_tensor_alloc(y, BG_DT_F32, 2, ngraphs, cols)) return fail(y);
    float *ys = y->data;
    for (int64_t g = 0; g < ngraphs; g++) {
        int64_t lo = graph_ptr ? graph_ptr[g] : 0, hi = graph_ptr ? graph_ptr[g + 1] : n;
        float *yr = ys + g * cols;
        if (hi == lo) continue; /* empty graph: 0 */
        for (int64_t c = 0; c < cols; c++) {
            float acc;
            if (reduce == BG_RED_MAX) {
                acc = bg_ref_value(x, lo, c);
                for (int64_t v = lo + 1; v < hi; v++) {
                    float t = bg_ref_value(x, v, c);
                    if (t > acc) acc = t;
                }
            } else {
                acc = 0.0f;
                for (int64_t v = lo; v < hi; v++) acc = acc + bg_ref_value(x, v, c);
                if (reduce == BG_RED_MEAN) acc = acc / (float)(hi - lo);
            }
            yr[c] = acc;
        }
    }
    return true;
}
