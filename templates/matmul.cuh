// matmul.cuh - bmm.XYZ: y[r,o] = sum_k v(x[r,k]) * v(w[k,o]), x [R,K], w [K,M], y [R,M].
//
// Layouts (bgnn_common.cuh): x f32 [R][K] or b1 [R][ceil(K/32)]; w f32 [K][M], b1 [K][ceil(M/32)]
// (canonical, WT = false) or b1t [M][ceil(K/32)] (transposed, WT = true; used by BB products
// so both operands of the popcount are k-contiguous); y f32 [R][M] or b1 [R][ceil(M/32)].
// One thread per output element (r, o), k sequential in order: FF acc += fl(x*w),
// FB acc += (bit ? x : -x), BF acc += (bit ? w : -w), all float32 from +0.0f; BB in integers,
// t = K - 2 popc(x_r XOR w_o) over the real K bits (padding masked).  Output B: bit_of(t)
// (one warp per output word, __ballot_sync), padding bits zero.
// Fused steps (epilogue.cuh): PRO normalises each F activation element x[r,k] as it is read
// (a prologue); EPI maps t to the output (scl / add / relu steps, then the bit by the sign or
// a threshold table for Z = B).  The defaults (ProNone, EpEnd) are the plain product.
#ifndef BGNN_MATMUL_CUH
#define BGNN_MATMUL_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"

namespace bgnn {

template <char X, char Y, long long K, long long M, bool WT, class Pro>
__device__ __forceinline__ float bmm_dot(long long r, long long o, const void *xp, const void *wp,
                                         const Pro &pro) {
    constexpr long long KW = words_of(K), MW = words_of(M);
    if constexpr (X == 'B' && Y == 'B') {
        const u32 *xr = (const u32 *)xp + r * KW;
        long long pc = 0;
        if constexpr (WT) {
            const u32 *wo = (const u32 *)wp + o * KW;
            for (long long i = 0; i < KW; i++) pc += popc((xr[i] ^ wo[i]) & word_mask(K, i));
        } else {
            const u32 *w = (const u32 *)wp;
            for (long long k = 0; k < K; k++) pc += (long long)(get_bit(xr, k) ^ get_bit(w + k * MW, o));
        }
        return (float)(K - 2 * pc); // exact: |t| <= K < 2^24
    } else if constexpr (X == 'F' && Y == 'F') {
        const float *xr = (const float *)xp + r * K, *w = (const float *)wp;
        float acc = 0.0f;
        for (long long k = 0; k < K; k++) acc = fadd(acc, fmul(pro(k, xr[k]), w[k * M + o]));
        return acc;
    } else if constexpr (X == 'F') { // FB
        const float *xr = (const float *)xp + r * K;
        const u32 *w = (const u32 *)wp;
        float acc = 0.0f;
        for (long long k = 0; k < K; k++) {
            u32 b = WT ? get_bit(w + o * KW, k) : get_bit(w + k * MW, o);
            acc = fadd(acc, signed_by(pro(k, xr[k]), b));
        }
        return acc;
    } else { // BF
        const u32 *xr = (const u32 *)xp + r * KW;
        const float *w = (const float *)wp;
        float acc = 0.0f;
        for (long long k = 0; k < K; k++) acc = fadd(acc, signed_by(w[k * M + o], get_bit(xr, k)));
        return acc;
    }
}

// rows = R (run time); grid: rows * (Z == 'B' ? b1_tpr(M) : f32_tpr(M)) threads.
template <char X, char Y, char Z, long long K, long long M, bool WT, class Pro = ProNone, class Epi = EpEnd>
__device__ __forceinline__ void bmm(long long rows, void *yp, const void *xp, const void *wp,
                                    Pro pro = Pro(), Epi epi = Epi()) {
    static_assert((X == 'F' || X == 'B') && (Y == 'F' || Y == 'B') && (Z == 'F' || Z == 'B'),
                  "bmm: precision letters are F or B");
    static_assert(!WT || Y == 'B', "bmm: only b1 weights can be transposed");
    ep_store_all<Z, M>(rows, yp, epi, [&](long long r, long long o) {
        return bmm_dot<X, Y, K, M, WT>(r, o, xp, wp, pro);
    });
}

} // namespace bgnn

#endif // BGNN_MATMUL_CUH
