// fold.cuh - the parameters of a batchnorm folded into the product that reads the input
// features (fold-batchnorm-mm; docs/semantics.md, section 2.3), exactly as
// reference/ref_fold.c computes them:
//   batchnorm.scale: s[k] = fl(1 / fl(sqrt(fl(var[k] + eps)))) [then fl(s * gamma[k])]
//   batchnorm.shift: c[o] = sum over k ascending from +0.0f of v(W[k,o]) * t_k,
//                    t_k = fl(beta[k] - fl(mean[k] * s[k])) (no beta: -fl(mean[k] * s[k]))
// Both depend on parameters alone.  One thread per output element (store_all).
#ifndef BGNN_FOLD_CUH
#define BGNN_FOLD_CUH

#include "bgnn_common.cuh"

namespace bgnn {

// y f32[K] (rows = 1); gamma may be unused (HG false).
template <long long K, unsigned EPS_BITS, bool HG>
__device__ __forceinline__ void bn_scale(long long rows, float *y, const float *var, const float *gamma) {
    store_all<'F', K>(rows, y, [&](long long, long long k) {
        const float inv = fdiv(1.0f, fsqrt(fadd(var[k], f32_from_bits(EPS_BITS))));
        return HG ? fmul(inv, gamma[k]) : inv;
    });
}

// y f32[M] (rows = 1); w b1 [K][ceil(M/32)] (canonical); beta unused when HB is false.
template <long long K, long long M, bool HB>
__device__ __forceinline__ void bn_shift(long long rows, float *y, const u32 *w, const float *mean,
                                         const float *s, const float *beta) {
    constexpr long long MW = words_of(M);
    store_all<'F', M>(rows, y, [&](long long, long long o) {
        float acc = 0.0f;
        for (long long k = 0; k < K; k++) {
            const float ms = fmul(mean[k], s[k]);
            const float t = HB ? fsub(beta[k], ms) : -ms;
            acc = fadd(acc, signed_by(t, get_bit(w + k * MW, o)));
        }
        return acc;
    });
}

// signsum (fold-standardize-mm): y[o] = sum_k v(w[k,o]), f32[M] (rows = 1): the count of +1
// bits, an exact integer, as 2 ones - K (rounded once, exact for K < 2^24, as the reference).
template <long long K, long long M>
__device__ __forceinline__ void sign_sum(long long rows, float *y, const u32 *w) {
    constexpr long long MW = words_of(M);
    store_all<'F', M>(rows, y, [&](long long, long long o) {
        long long ones = 0;
        for (long long k = 0; k < K; k++) ones += get_bit(w + k * MW, o) ? 1 : 0;
        return (float)(2 * ones - K);
    });
}

} // namespace bgnn

#endif // BGNN_FOLD_CUH
