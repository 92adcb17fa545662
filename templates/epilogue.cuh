// epilogue.cuh - fused steps (docs/ir.md 4.1, docs/semantics.md 7): the input prologue of a
// bmm, the epilogue of bmm / bspmm / add / bin, the threshold compare, and the kernel that
// computes a threshold table from parameters.
//
// A prologue is a functor pro(k, x) -> float applied to activation element (r, k) as the
// product reads it.  An epilogue is a chain of functors built by the code generator, e.g.
//   bgnn::EpScl<false, true, bgnn::EpAdd<7, false, bgnn::EpEnd>>{nullptr, s, {b, {}}}
// with e.val(r, c, v) -> float (the steps in order) and e.bit(c, v) -> u32 (the bit of the
// result: by the sign, or by a threshold table when the chain ends in EpThr).  A threshold
// chain (ChAdd, ChScl, ChBn, ChRelu, ChEnd) has ch.val(c, v) and ch.dir(c).  Every step uses
// the same float operations, in the same order, as the unfused op's template
// (elementwise.cuh), so fused and unfused results are bit for bit equal.
//
// Threshold tables: f32 [2][C]; row 0 the boundary float b_c, row 1 the direction d_c
// (0.0f or 1.0f); bit(v) = (key(v) >= key(b_c)) ^ d_c with key the total order of float32
// (-0 < +0) and a NaN v counted as -inf / +inf by its sign bit.  bgnn::threshold computes the
// table by bisection over the keys of -inf..+inf, exactly as reference/ref_ops.c does.
#ifndef BGNN_EPILOGUE_CUH
#define BGNN_EPILOGUE_CUH

#include "bgnn_common.cuh"

namespace bgnn {

// ---- keys of the total order of float32 ------------------------------------------------
constexpr u32 KEY_NINF = 0x007fffffu; // key of -inf
constexpr u32 KEY_PINF = 0xff800000u; // key of +inf
constexpr u32 THR_NONE = 0x7fc00000u; // boundary above +inf: the bit never becomes 1 ^ dir

__device__ __forceinline__ bool is_nan_f(float v) { return (__float_as_uint(v) & 0x7fffffffu) > 0x7f800000u; }
// The float of key k: the key of x is ~bits(x) for a negative x, bits(x) | 2^31 otherwise
// (reference/ref_ops.c bg_ref_key).
__device__ __forceinline__ float from_key(u32 k) {
    return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
// 1 when a multiplier reverses the order: sign bit set and not NaN.
__device__ __forceinline__ u32 reverses(float f) { return (!is_nan_f(f) && (__float_as_uint(f) >> 31)) ? 1u : 0u; }
// The same order as signed ints: key(x) = ikey_of(x) + 2^31 (mod 2^32), two instructions
// instead of a select on the sign; clamp_ikey(v): a NaN as -inf or +inf by its sign bit, as the
// reference's clamp_key (a NaN's ikey lies above +inf's or below -inf's), by a min and a max.
__device__ __forceinline__ int ikey_of(float v) {
    const int i = __float_as_int(v);
    return i ^ ((i >> 31) & 0x7fffffff);
}
__device__ __forceinline__ int clamp_ikey(float v) {
    return max(min(ikey_of(v), (int)0x7f800000), (int)0x807fffff);
}
// The bit of v by a threshold table's two entries at a channel (ta = t[c], tb = t[C + c]):
// clamp_key(v) >= key(ta), flipped where tb is not zero, computed in the signed order (the same
// bits: tests/gpu/test_gpu_thresholds.c checks both forms against the CPU reference on special
// and random pairs).  A caller can load ta and tb beside its values (bin_ops.cuh bin_rows), one
// round trip for both.
__device__ __forceinline__ u32 thr_bit_pre(float ta, float tb, float v) {
    return (clamp_ikey(v) >= ikey_of(ta) ? 1u : 0u) ^ (tb != 0.0f ? 1u : 0u);
}
// The bit of v by threshold table t ([2][C]) at channel c.
template <long long C>
__device__ __forceinline__ u32 thr_bit(const float *t, long long c, float v) {
    return thr_bit_pre(t[c], t[C + c], v);
}

// ---- prologues ------------------------------------------------------------------------
// kInv: the prologue has a per-column factor a caller may compute once (inv / with_inv).
struct ProNone {
    static constexpr bool kInv = false;
    __device__ __forceinline__ float operator()(long long, float x) const { return x; }
};
// batchnorm (inference) as the product reads x[r,k]: fl(fl(x - mean) * inv) [* g] [+ b],
// inv = fl(1 / fl(sqrt(fl(var + eps)))), exactly elementwise.cuh's batchnorm.
template <unsigned EPS_BITS, bool HG, bool HB>
struct ProBn {
    static constexpr bool kInv = true;
    const float *mean, *var, *gamma, *beta;
    // column k's inv, and the prologue given it (the same value however often it is computed);
    // inv_load / inv_from split it at the load, so that a caller can issue several loads first
    __device__ __forceinline__ float inv_load(long long k) const { return var[k]; }
    __device__ __forceinline__ static float inv_from(float v) { return fdiv(1.0f, fsqrt(fadd(v, f32_from_bits(EPS_BITS)))); }
    __device__ __forceinline__ float inv(long long k) const { return inv_from(inv_load(k)); }
    __device__ __forceinline__ float mean_of(long long k) const { return mean[k]; }
    __device__ __forceinline__ float with_inv(long long k, float x, float iv) const {
        return with_inv_mean(k, x, iv, mean[k]);
    }
    // the same given column k's mean mu (a caller's staged copy)
    __device__ __forceinline__ float with_inv_mean(long long k, float x, float iv, float mu) const {
        float v = fmul(fsub(x, mu), iv);
        if constexpr (HG) v = fmul(v, gamma[k]);
        if constexpr (HB) v = fadd(v, beta[k]);
        return v;
    }
    __device__ __forceinline__ float operator()(long long k, float x) const { return with_inv(k, x, inv(k)); }
};

// a column scale (fold-batchnorm-mm): fl(x * s[k])
struct ProScl {
    static constexpr bool kInv = false;
    const float *s;
    __device__ __forceinline__ float operator()(long long k, float x) const { return fmul(x, s[k]); }
};

// ---- epilogues ------------------------------------------------------------------------
struct EpEnd {
    static constexpr bool identity = true, lsm = false;
    __device__ __forceinline__ float val(long long, long long, float v) const { return v; }
    __device__ __forceinline__ u32 bit(long long, float v) const { return bit_of(v); }
};
template <long long C>
struct EpThr { // last step of a b1 result
    static constexpr bool identity = false, lsm = false;
    static constexpr long long cols = C;
    const float *t;
    __device__ __forceinline__ float val(long long, long long, float v) const { return v; }
    __device__ __forceinline__ u32 bit(long long c, float v) const { return thr_bit<C>(t, c, v); }
};
template <class E>
struct is_ep_thr {
    static constexpr bool value = false;
};
template <long long C>
struct is_ep_thr<EpThr<C>> {
    static constexpr bool value = true;
};
template <class P>
struct is_pro_scl { // ProScl: its column factor s[k] can be requested beside the value
    static constexpr bool value = false;
};
template <>
struct is_pro_scl<ProScl> {
    static constexpr bool value = true;
};
// A per-row factor held in a register (the warp-rows form, warp_rows.cuh): rf[r] is its value.
struct RowVal {
    float v;
    __device__ __forceinline__ float operator[](long long) const { return v; }
};
template <bool HR, bool HC, class N, class RF = const float *>
struct EpScl { // scl: fl(fl(v * rf[r]) * cf[c]); rf a pointer or a RowVal
    static constexpr bool identity = false, lsm = N::lsm;
    RF rf;
    const float *cf;
    N next;
    __device__ __forceinline__ float val(long long r, long long c, float v) const {
        if constexpr (HR) v = fmul(v, rf[r]);
        if constexpr (HC) v = fmul(v, cf[c]);
        return next.val(r, c, v);
    }
    __device__ __forceinline__ u32 bit(long long c, float v) const { return next.bit(c, v); }
};
template <long long C, bool TENSOR, class N>
struct EpAdd { // add.FFF: fl(v + b[c]) or fl(v + b[r, c])
    static constexpr bool identity = false, lsm = N::lsm;
    const float *b;
    N next;
    __device__ __forceinline__ float val(long long r, long long c, float v) const {
        return next.val(r, c, fadd(v, TENSOR ? b[r * C + c] : b[c]));
    }
    __device__ __forceinline__ u32 bit(long long c, float v) const { return next.bit(c, v); }
};
// add_scl (fuse-add): fl(v + fl(fl(x[r,c] * rf[r]) * cf[c])), x[r,c] = +-1 the bit (r, c) of a
// b1 [R][C] matrix (ceil(C/32) words a row): elementwise.cuh's scl of bits, then its add.
template <long long C, bool HR, bool HC, class N, class RF = const float *>
struct EpAddScl {
    static constexpr bool identity = false, lsm = N::lsm;
    const u32 *x;
    RF rf;
    const float *cf;
    N next;
    __device__ __forceinline__ float val(long long r, long long c, float v) const {
        float s = pm1(get_bit(x + r * words_of(C), c));
        if constexpr (HR) s = fmul(s, rf[r]);
        if constexpr (HC) s = fmul(s, cf[c]);
        return next.val(r, c, fadd(v, s));
    }
    __device__ __forceinline__ u32 bit(long long c, float v) const { return next.bit(c, v); }
};
// An epilogue that is a bias alone (EpAdd<C, false, EpEnd>): its b[c] can be requested before
// the value is ready (bmm_fb_rows), the bias then added as EpAdd does: fl(v + b[c]).
template <class E>
struct is_ep_bias {
    static constexpr bool value = false;
};
template <long long C>
struct is_ep_bias<EpAdd<C, false, EpEnd>> {
    static constexpr bool value = true;
};
template <class N, class RF = const float *>
struct EpCenter { // center (fold-standardize-mm): fl(v - fl(rf[r] * cf[c])); rf a pointer or a RowVal
    static constexpr bool identity = false, lsm = N::lsm;
    RF rf;
    const float *cf;
    N next;
    __device__ __forceinline__ float val(long long r, long long c, float v) const {
        return next.val(r, c, fsub(v, fmul(rf[r], cf[c])));
    }
    __device__ __forceinline__ u32 bit(long long c, float v) const { return next.bit(c, v); }
};
template <class N>
struct EpRelu { // relu: v > 0 ? v : +0
    static constexpr bool identity = false, lsm = N::lsm;
    N next;
    __device__ __forceinline__ float val(long long r, long long c, float v) const {
        return next.val(r, c, v > 0.0f ? v : 0.0f);
    }
    __device__ __forceinline__ u32 bit(long long c, float v) const { return next.bit(c, v); }
};
// log_softmax of a row of C <= 32 columns held by a warp, lane c holding column c's float v
// (lanes c >= C hold anything): m = the maximum in column order (the first one), s = the
// float64 sum of exp(v - m) in column order from +0, result fl(v - m - log s) in float64 -
// reference/ref_ops.c bg_ref_log_softmax exactly.  The maximum and the sum are taken by every
// lane through shuffles in the same order, so every lane has the same m and s; lane c returns
// column c's result (rowwise.cuh log_softmax, and the EpLsm tail of a bspmm_mm).  W < 32: each
// group of W lanes holds a row of its own (C <= W), lane is the lane within the group; every
// lane of the warp calls it.
template <long long C, int W = 32>
__device__ __forceinline__ float lsm_warp(int lane, float v) {
    static_assert(C >= 1 && C <= W && W <= 32 && (W & (W - 1)) == 0, "lsm_warp: a row of 1 to W columns");
    float m = __shfl_sync(0xffffffffu, v, 0, W);
    for (int c = 1; c < (int)C; c++) {
        const float vc = __shfl_sync(0xffffffffu, v, c, W);
        if (vc > m) m = vc;
    }
    const double e = lane < C ? exp(dsub((double)v, (double)m)) : 0.0;
    double s = 0.0;
    for (int c = 0; c < (int)C; c++) s = dadd(s, __shfl_sync(0xffffffffu, e, c, W));
    return __double2float_rn(dsub(dsub((double)v, (double)m), log(s)));
}

// The row tail log_softmax (fuse-log-softmax): the last step of an f32 result of C <= 32
// columns, only in a kernel that holds a row in one warp (mm_spmm.cuh checks Epi::lsm and
// applies lsm_warp after the other steps); val leaves the element as it is, and there is no
// bit (never a b1 result).
template <long long C>
struct EpLsm {
    static_assert(C >= 1 && C <= 32, "EpLsm: a row of 1 to 32 columns");
    static constexpr bool identity = false, lsm = true;
    __device__ __forceinline__ float val(long long, long long, float v) const { return v; }
};

// The output of an epilogue'd value t at (r, c): its float, or its bit.
template <class E>
__device__ __forceinline__ float ep_val(const E &e, long long r, long long c, float t) { return e.val(r, c, t); }
template <class E>
__device__ __forceinline__ u32 ep_bit(const E &e, long long r, long long c, float t) {
    return e.bit(c, e.val(r, c, t));
}

// Every output element (r, c) of a [rows][C] result: t = elem(r, c), through the epilogue,
// stored as bits (Z == 'B') or as floats: bgnn_common.cuh's store_all.
template <char Z, long long C, class E, class F>
__device__ __forceinline__ void ep_store_all(long long rows, void *yp, const E &epi, F elem) {
    static_assert(!E::lsm, "ep_store_all: a log_softmax tail needs a kernel that holds the row in a warp");
    if constexpr (Z == 'B')
        store_all<'B', C>(rows, yp, [&](long long r, long long c) { return ep_bit(epi, r, c, elem(r, c)); });
    else
        store_all<'F', C>(rows, yp, [&](long long r, long long c) { return ep_val(epi, r, c, elem(r, c)); });
}

// ---- threshold chains -------------------------------------------------------------------
struct ChEnd {
    __device__ __forceinline__ float val(long long, float v) const { return v; }
    __device__ __forceinline__ u32 dir(long long) const { return 0u; }
};
template <class N>
struct ChAdd {
    const float *b;
    N next;
    __device__ __forceinline__ float val(long long c, float v) const { return next.val(c, fadd(v, b[c])); }
    __device__ __forceinline__ u32 dir(long long c) const { return next.dir(c); }
};
template <class N>
struct ChScl { // a scl with column factors only
    const float *s;
    N next;
    __device__ __forceinline__ float val(long long c, float v) const { return next.val(c, fmul(v, s[c])); }
    __device__ __forceinline__ u32 dir(long long c) const { return reverses(s[c]) ^ next.dir(c); }
};
template <class N>
struct ChRelu {
    N next;
    __device__ __forceinline__ float val(long long c, float v) const { return next.val(c, v > 0.0f ? v : 0.0f); }
    __device__ __forceinline__ u32 dir(long long c) const { return next.dir(c); }
};
template <unsigned EPS_BITS, bool HG, bool HB, class N>
struct ChBn { // batchnorm, exactly as elementwise.cuh computes it
    const float *mean, *var, *gamma, *beta;
    N next;
    __device__ __forceinline__ float inv(long long c) const {
        return fdiv(1.0f, fsqrt(fadd(var[c], f32_from_bits(EPS_BITS))));
    }
    __device__ __forceinline__ float val(long long c, float v) const {
        v = fmul(fsub(v, mean[c]), inv(c));
        if constexpr (HG) v = fmul(v, gamma[c]);
        if constexpr (HB) v = fadd(v, beta[c]);
        return next.val(c, v);
    }
    __device__ __forceinline__ u32 dir(long long c) const {
        u32 d = reverses(inv(c));
        if constexpr (HG) d ^= reverses(gamma[c]);
        return d ^ next.dir(c);
    }
};

// threshold: y f32 [2][C] (rows = 2); thread (r, c) computes channel c and writes row r.
// The boundary is the smallest key k in key(-inf)..key(+inf) with P(k) = 1, where
// P(v) = bit_of(ch(v)) ^ dir, or !signbit(v) where ch(v) is NaN; THR_NONE when there is none.
template <long long C, class Ch>
__device__ __forceinline__ void threshold(long long rows, float *y, Ch ch) {
    store_all<'F', C>(rows, y, [&](long long r, long long c) {
        const u32 d = ch.dir(c);
        u32 lo = KEY_NINF, hi = KEY_PINF + 1u;
        while (lo < hi) {
            const u32 mid = lo + (hi - lo) / 2u;
            const float v = from_key(mid);
            const float o = ch.val(c, v);
            const u32 p = is_nan_f(o) ? ((__float_as_uint(v) >> 31) ^ 1u) : (bit_of(o) ^ d);
            if (p) hi = mid;
            else lo = mid + 1u;
        }
        const float b = lo <= KEY_PINF ? from_key(lo) : __uint_as_float(THR_NONE);
        return r == 0 ? b : (d ? 1.0f : 0.0f);
    });
}

} // namespace bgnn

#endif // BGNN_EPILOGUE_CUH
