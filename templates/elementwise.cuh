// elementwise.cuh - scl, add (incl. a [C] row-vector broadcast and BBF / BBB), relu,
// batchnorm (inference form).
//
// Layouts (bgnn_common.cuh): f32 [R][C] row-major; b1 [R][ceil(C/32)] words, padding zero;
// vectors f32[R] (per-row factors) and f32[C] (per-column factors, biases, statistics).
// One thread per element (f32 outputs) or one warp per output word (b1 outputs):
// bgnn_common.cuh store_all, epilogue.cuh ep_store_all.
// Float order exactly as docs/semantics.md (each product / sum rounded on its own).
#ifndef BGNN_ELEMENTWISE_CUH
#define BGNN_ELEMENTWISE_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"

namespace bgnn {

// scl: y = fl(fl(x * rf[r]) * cf[c]); absent factors are skipped (pointers unused).  X ==
// 'B': x is b1, read as +-1.
template <char X, long long C, bool HAS_R, bool HAS_C>
__device__ __forceinline__ void scl(long long rows, float *y, const void *xp, const float *rf,
                                    const float *cf) {
    store_all<'F', C>(rows, y, [&](long long r, long long c) {
        float v;
        if constexpr (X == 'B') v = pm1(get_bit((const u32 *)xp + r * words_of(C), c));
        else v = ((const float *)xp)[r * C + c];
        if constexpr (HAS_R) v = fmul(v, rf[r]);
        if constexpr (HAS_C) v = fmul(v, cf[c]);
        return v;
    });
}

// add.XXZ: y = v(a) + v(b); BCAST: b is one row [C] added to every row.  BBB: bit = a | b.
template <char X, char Z, long long C, bool BCAST>
__device__ __forceinline__ float add_val(long long r, long long c, const void *ap, const void *bp) {
    long long rb = BCAST ? 0 : r;
    if constexpr (X == 'B') {
        constexpr long long CW = words_of(C);
        return fadd(pm1(get_bit((const u32 *)ap + r * CW, c)), pm1(get_bit((const u32 *)bp + rb * CW, c)));
    } else {
        return fadd(((const float *)ap)[r * C + c], ((const float *)bp)[rb * C + c]);
    }
}

// EPI (epilogue.cuh): fused steps on the sum (a threshold for a thresholded bin of it).
template <char X, char Z, long long C, bool BCAST, class Epi = EpEnd>
__device__ __forceinline__ void add(long long rows, void *yp, const void *ap, const void *bp,
                                    Epi epi = Epi()) {
    if constexpr (Z == 'B' && X == 'B' && Epi::identity) { // BBB: the bit is a | b
        constexpr long long CW = words_of(C);
        store_all<'B', C>(rows, yp, [&](long long r, long long c) {
            return get_bit((const u32 *)ap + r * CW, c) | get_bit((const u32 *)bp + (BCAST ? 0 : r) * CW, c);
        });
    } else {
        ep_store_all<Z, C>(rows, yp, epi, [&](long long r, long long c) { return add_val<X, Z, C, BCAST>(r, c, ap, bp); });
    }
}

// relu: x > 0 ? x : 0 (NaN and -0.0 give +0).
template <long long C>
__device__ __forceinline__ void relu(long long rows, float *y, const float *x) {
    store_all<'F', C>(rows, y, [&](long long r, long long c) {
        float v = x[r * C + c];
        return v > 0.0f ? v : 0.0f;
    });
}

// batchnorm: inv = 1 / sqrt(var + eps) (float32, each step rounded);
// y = fl(fl(x - mean) * inv) [* gamma] [+ beta].  EPS_BITS: the bits of the float eps.
template <long long C, unsigned EPS_BITS, bool HAS_G, bool HAS_B>
__device__ __forceinline__ void batchnorm(long long rows, float *y, const float *x,
                                          const float *mean, const float *var,
                                          const float *gamma, const float *beta) {
    const float eps = f32_from_bits(EPS_BITS);
    store_all<'F', C>(rows, y, [&](long long r, long long c) {
        float inv = fdiv(1.0f, fsqrt(fadd(var[c], eps)));
        float v = fmul(fsub(x[r * C + c], mean[c]), inv);
        if constexpr (HAS_G) v = fmul(v, gamma[c]);
        if constexpr (HAS_B) v = fadd(v, beta[c]);
        return v;
    });
}

} // namespace bgnn

#endif // BGNN_ELEMENTWISE_CUH
