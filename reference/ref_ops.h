/* ref_ops.h - the CPU reference implementation of every IR op on host tensors.
 *
 * Each function computes one op exactly as docs/semantics.md prescribes (binary ops with
 * real bit packing and popcounts, float reductions in the order the IR records: seq in index
 * order without FMA unless the fp-order pass chose another, docs/semantics.md section 2) and is
 * the oracle the GPU kernels are tested against.  Conventions:
 *   - inputs are const host tensors (BgTensor / BgAdj from base.h and loaders.h); the output tensor *y is
 *     allocated here with bg_tensor_alloc (the caller frees it with bg_tensor_free);
 *   - a function returns false (and leaves *y zeroed, nothing allocated) when the operands
 *     do not fit together (dtype, shape, precision letters) or allocation fails;
 *   - precision strings are the IR's "XYZ" letters: prec[0] the activation operand,
 *     prec[1] the second operand (weights, adjacency, second addend), prec[2] the output;
 *     'F' = f32, 'B' = b1; the letters must agree with the operands' dtypes;
 *   - every b1 output has its padding bits zero. */
#ifndef BG_REF_OPS_H
#define BG_REF_OPS_H

#include "bg.h"

/* bin: bit 1 (+1) when x's sign bit is clear: x >= 0 except -0.0 -> -1 and NaN -> its sign
 * bit (docs/semantics.md, the bit rule); every B output of every op uses the same rule.
 * A b1 input is copied. */
bool bg_ref_bin(const BgTensor *x, BgTensor *y);
/* The row sums of absmean, rowmean, standardize and bin.center: float64, in the recorded order fp
 * (docs/semantics.md, section 2): seq (c ascending from +0) or lanes(L) (lane c mod L, each
 * seq from +0, the lanes combined by halves; L a power of two 2 .. 32, though the IR records
 * 32 only).  Any other kind or L is summed as seq. */
/* absmean: f32[R] = fl(sum_c |x[r,c]| (float64, in order fp) / C); C = 0 gives 0. */
bool bg_ref_absmean(const BgTensor *x, BgFpOrder fp, BgTensor *y);
/* rowmean: f32[R] = fl(sum_c x[r,c] (float64, in order fp) / C); C = 0 gives 0. */
bool bg_ref_rowmean(const BgTensor *x, BgFpOrder fp, BgTensor *y);
/* scl: y[r,c] = fl(fl(x[r,c] * rows[r]) * cols[c]), a b1 x read as +-1; rows (f32[R]) / cols
 * (f32[C]) may be NULL.  y is f32. */
bool bg_ref_scl(const BgTensor *x, const BgTensor *rows, const BgTensor *cols, BgTensor *y);
/* bmm.XYZ: x [R,K] times w [K,M] (both row-major as in base.h) -> y [R,M], float products
 * in the order seq without fma. */
bool bg_ref_bmm(const char prec[3], const BgTensor *x, const BgTensor *w, BgTensor *y);
/* The same in the recorded order fp (docs/semantics.md, section 2; ignored by bmm.BB*):
 * seq, seq+fma (bmm.FF*: acc = fmaf(x, w, acc)), splitk(S x L) (chunks of L k from +0.0f,
 * partials folded left to right), splitk+fma. */
bool bg_ref_bmm_fp(const char prec[3], const BgTensor *x, const BgTensor *w, BgFpOrder fp, BgTensor *y);
/* bspmm.XYZ: adjacency a (prec[1]: 'B' = pattern with row/col factors, 'F' = per-edge
 * weights) times x [N,C] -> y [N,C].  method selects the reduction for the popcount case
 * (B activation, B adjacency, every neighbour's column factor exactly 1); AUTO = POPC2. */
bool bg_ref_bspmm(const char prec[3], const BgAdj *a, const BgTensor *x, BgTensor *y,
                  BgMethod method);
/* bg_ref_bspmm in the recorded order fp: seq, or for bit activations slots (base.h BgFpOrder;
 * a unit-factor sum, exact, is counted in integers in every order). */
bool bg_ref_bspmm_fp(const char prec[3], const BgAdj *a, const BgTensor *x, BgTensor *y, BgMethod method,
                     BgFpOrder fp);
/* Rows r0 .. r1-1 of bg_ref_bspmm's result, as y [r1 - r0, C] (0 <= r0 <= r1 <= N): callers
 * split the rows among threads.  Only the rows' own edges are checked.  POPC2 transposes all
 * of x on every call: for many small parts IFELSE or ANDNOT (the same result) is faster. */
bool bg_ref_bspmm_rows(const char prec[3], const BgAdj *a, const BgTensor *x, int64_t r0, int64_t r1,
                       BgTensor *y, BgMethod method);
bool bg_ref_bspmm_rows_fp(const char prec[3], const BgAdj *a, const BgTensor *x, int64_t r0, int64_t r1,
                          BgTensor *y, BgMethod method, BgFpOrder fp);
/* add.XYZ: y = v(a) + v(b); b is [R,C] like a or a [C] row vector (broadcast). */
bool bg_ref_add(const char prec[3], const BgTensor *a, const BgTensor *b, BgTensor *y);
/* concat: columns of xs[0..n-1] side by side (all f32 or all b1, same rows, rank 2). */
bool bg_ref_concat(int n, const BgTensor *const *xs, BgTensor *y);
/* relu: x > 0 ? x : 0 (f32). */
bool bg_ref_relu(const BgTensor *x, BgTensor *y);
/* batchnorm (inference): inv = 1/sqrtf(var[c] + eps); y = fl(x - mean) * inv [* gamma] [+ beta].
 * gamma / beta may be NULL. */
bool bg_ref_batchnorm(const BgTensor *x, const BgTensor *mean, const BgTensor *var,
                      const BgTensor *gamma, const BgTensor *beta, float eps, BgTensor *y);
/* standardize: per row in float64 (both sums in order fp), mu = sum/C, sd = sqrt(sum (x-mu)^2
 * / (C-1)) (0 when C=1), y = fl((x - mu) / (sd + eps)). */
bool bg_ref_standardize(const BgTensor *x, float eps, BgFpOrder fp, BgTensor *y);
/* log_softmax: per row m = max (f32, the first maximum in column order), s = sum exp((double)x
 * - m) (float64, in order fp: seq or lanes(32)), y = fl((double)x - m - log(s)). */
bool bg_ref_log_softmax(const BgTensor *x, BgFpOrder fp, BgTensor *y);
/* readout: f32[G,C]; graph g owns rows graph_ptr[g]..graph_ptr[g+1]-1 (graph_ptr NULL: one
 * graph of all rows, ngraphs must be 1).  sum sequential in node order (f32 from 0),
 * mean = fl(sum / count), max = largest value; an empty graph gives 0.  A b1 x reads +-1. */
bool bg_ref_readout(const BgTensor *x, const int64_t *graph_ptr, int64_t ngraphs,
                    BgReduce reduce, BgTensor *y);

/* ---- fused forms (docs/semantics.md, section 7) ---------------------------------------- */
/* bin.center: per row mu = fl64(sum_c x (float64, in order fp) / C) (0 when C = 0), bit = 1
 * iff d = fl64((double)x - mu) has its sign bit clear and is not NaN. */
bool bg_ref_bin_center(const BgTensor *x, BgFpOrder fp, BgTensor *y);
/* threshold: the table f32[2,C] of the chain steps[0..nsteps) (kinds SCL with rows none,
 * ADD, BATCHNORM, RELU); slots[] holds each step's slot tensors in order (NULL = none).
 * Row 0: per channel the boundary (the smallest float32, in the total order, where the bit
 * of the chain becomes 1 ^ dir; +NaN 0x7fc00000 = none), row 1: dir as 0.0f / 1.0f. */
bool bg_ref_threshold(int nsteps, const BgStep *steps, const BgTensor *const *slots, int64_t cols,
                      BgTensor *y);
/* bin by a threshold table t f32[2,C]: bit = (key(v) >= key(t[0][c])) ^ (t[1][c] != 0), a NaN
 * v counting as -inf (sign set) or +inf (sign clear). */
bool bg_ref_bin_threshold(const BgTensor *x, const BgTensor *t, BgTensor *y);
/* ---- folded batchnorm parameters (ref_fold.c; fold-batchnorm-mm) ----------------------- */
/* batchnorm.scale: s[k] = fl(1 / fl(sqrtf(fl(var[k] + eps)))) [then fl(s * gamma[k])], f32[K]:
 * the multiplier batchnorm applies to column k. */
bool bg_ref_bn_scale(const BgTensor *var, const BgTensor *gamma, float eps, BgTensor *y);
/* batchnorm.shift: c[o] = sum over k ascending from +0.0f (every step rounded, no fma) of
 * v(w[k,o]) * t_k, t_k = fl(beta[k] - fl(mean[k] * scale[k])) (beta NULL: -fl(mean * scale)),
 * f32[M]; w b1[K,M]. */
bool bg_ref_bn_shift(const BgTensor *w, const BgTensor *mean, const BgTensor *scale, const BgTensor *beta,
                     BgTensor *y);
/* signsum: s[o] = sum_k v(w[k,o]) of a b1 w[K,M], f32[M] (an integer of magnitude <= K:
 * exact for K < 2^24, and rounded once above). */
bool bg_ref_signsum(const BgTensor *w, BgTensor *y);
/* center: y[r,c] = fl(x[r,c] - fl(rows[r] * cols[c])), x f32[R,C], rows f32[R], cols f32[C]
 * (the step of fold-standardize-mm). */
bool bg_ref_center(const BgTensor *x, const BgTensor *rows, const BgTensor *cols, BgTensor *y);
/* The total-order key of a float32 (-0 < +0; -NaN below -inf, +NaN above +inf). */
uint32_t bg_ref_key(float v);

/* Helpers shared with bind.c and the tests. */
/* The value of element (r, c) of an f32 or b1 tensor as a float (+-1 for bits). */
float bg_ref_value(const BgTensor *t, int64_t r, int64_t c);

#endif /* BG_REF_OPS_H */
