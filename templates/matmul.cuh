// matmul.cuh - bmm.XYZ: y[r,o] = sum_k v(x[r,k]) * v(w[k,o]), x [R,K], w [K,M], y [R,M].
//
// Layouts (bgnn_common.cuh): x f32 [R][K] or b1 [R][ceil(K/32)]; w f32 [K][M], b1 [K][ceil(M/32)]
// (canonical, WT = false) or b1t [M][ceil(K/32)] (transposed, WT = true; used by BB products
// so both operands of the popcount are k-contiguous); y f32 [R][M] or b1 [R][ceil(M/32)].
// One thread per output element (r, o), k in the recorded order (bmm_dot_f: seq in k order,
// or split-k chunks folded left to right; FF with or without fma): FF acc += fl(x*w),
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

// The float products (FF, FB, BF) of output (r, o) in the recorded order (docs/semantics.md,
// section 2): SPL = 0 seq over k = 0..K-1 from +0.0f; SPL = L > 0 split-k: chunks of L k,
// each summed from +0.0f, the partials folded left to right (tot = p0, then fl(tot + p_s)).
// FMA (FF only): each step is __fmaf_rn(x', w, acc) instead of fl(acc + fl(x' * w)).
template <char X, char Y, long long K, long long M, bool WT, long long SPL, bool FMA, class Pro>
__device__ __forceinline__ float bmm_dot_f(long long r, long long o, const void *xp, const void *wp,
                                           const Pro &pro) {
    static_assert(!(X == 'B' && Y == 'B'), "bmm_dot_f: float products only");
    static_assert(!FMA || (X == 'F' && Y == 'F'), "bmm_dot_f: fma is for FF products");
    constexpr long long KW = words_of(K), MW = words_of(M);
    constexpr long long L = SPL > 0 ? SPL : (K > 0 ? K : 1);
    float tot = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += L) {
        const long long k1 = K - k0 < L ? K : k0 + L;
        float acc = 0.0f;
        if constexpr (X == 'F' && Y == 'F') {
            const float *xr = (const float *)xp + r * K, *w = (const float *)wp;
            for (long long k = k0; k < k1; k++) {
                if constexpr (FMA) acc = __fmaf_rn(pro(k, xr[k]), w[k * M + o], acc);
                else acc = fadd(acc, fmul(pro(k, xr[k]), w[k * M + o]));
            }
        } else if constexpr (X == 'F') { // FB
            const float *xr = (const float *)xp + r * K;
            const u32 *w = (const u32 *)wp;
            for (long long k = k0; k < k1; k++) {
                u32 b = WT ? get_bit(w + o * KW, k) : get_bit(w + k * MW, o);
                acc = fadd(acc, signed_by(pro(k, xr[k]), b));
            }
        } else { // BF
            const u32 *xr = (const u32 *)xp + r * KW;
            const float *w = (const float *)wp;
            for (long long k = k0; k < k1; k++) acc = fadd(acc, signed_by(w[k * M + o], get_bit(xr, k)));
        }
        tot = k0 == 0 ? acc : fadd(tot, acc);
    }
    return tot;
}

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
    } else {
        return bmm_dot_f<X, Y, K, M, WT, 0, false>(r, o, xp, wp, pro);
    }
}

// rows = R (run time); grid: rows * (Z == 'B' ? b1_tpr(M) : f32_tpr(M)) threads.  SPL, FMA:
// the recorded float order of a float product (bmm_dot_f; 0, false = seq).
template <char X, char Y, char Z, long long K, long long M, bool WT, long long SPL = 0, bool FMA = false,
          class Pro = ProNone, class Epi = EpEnd>
__device__ __forceinline__ void bmm(long long rows, void *yp, const void *xp, const void *wp,
                                    Pro pro = Pro(), Epi epi = Epi()) {
    static_assert((X == 'F' || X == 'B') && (Y == 'F' || Y == 'B') && (Z == 'F' || Z == 'B'),
                  "bmm: precision letters are F or B");
    static_assert(!WT || Y == 'B', "bmm: only b1 weights can be transposed");
    ep_store_all<Z, M>(rows, yp, epi, [&](long long r, long long o) {
        if constexpr (X == 'B' && Y == 'B') return bmm_dot<X, Y, K, M, WT>(r, o, xp, wp, pro);
        else return bmm_dot_f<X, Y, K, M, WT, SPL, FMA>(r, o, xp, wp, pro);
    });
}

// bmm.FF{F,B} of one row (a graph's, in the per-graph kernel: x, y at that row) in the order
// splitk(L), fma or not, spread over the block: thread t < S M (S = ceil(K / L) chunks) takes
// chunk s = t / M of output o = t % M, its L k summed from +0 as bmm_dot_f does, into
// part[t]; after a barrier the outputs fold their S partials left to right (bmm_dot_f's tot)
// and store through the epilogue.  The same float operations in the same order as bmm with
// SPL = L: the same bits.  Every thread of the block calls it (it holds a barrier); part has
// S * M floats of shared memory that nothing else uses in the launch's phase.
template <char Z, long long K, long long M, long long L, bool FMA, class Epi = EpEnd>
__device__ __forceinline__ void bmm_ff_block(void *yp, const float *x, const float *w, float *part, Epi epi = Epi()) {
    static_assert(L > 0 && K > 0 && M > 0, "bmm_ff_block: a split-k order of a non-empty product");
    constexpr long long S = (K + L - 1) / L;
    for (int t = threadIdx.x; t < (int)(S * M); t += blockDim.x) {
        const int s = t / (int)M, o = t - s * (int)M, k0 = s * (int)L, k1 = (int)K - k0 < (int)L ? (int)K : k0 + (int)L;
        float acc = 0.0f;
#pragma unroll
        for (int q = 0; q < (int)L; q++) {
            const int k = k0 + q;
            if (k < k1) {
                if constexpr (FMA) acc = __fmaf_rn(x[k], w[k * M + o], acc);
                else acc = fadd(acc, fmul(x[k], w[k * M + o]));
            }
        }
        part[t] = acc;
    }
    __syncthreads();
    ep_store_all<Z, M>(1, yp, epi, [&](long long, long long o) {
        float tot = part[o];
#pragma unroll 1 // unrolled, the per-graph kernel (64 registers at 1,024 threads) spilled
        for (long long s = 1; s < S; s++) tot = fadd(tot, part[s * M + o]);
        return tot;
    });
}

} // namespace bgnn

#endif // BGNN_MATMUL_CUH
