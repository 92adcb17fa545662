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
// XS: the stride of x's rows (K, or a shared-memory copy's padded stride: bmm_ff_tile).
template <char X, char Y, long long K, long long M, bool WT, long long SPL, bool FMA, class Pro, long long XS = K>
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
            const float *xr = (const float *)xp + r * XS, *w = (const float *)wp;
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

// bmm.FFF over a row group's tile (cg_rows.c; every thread of the block calls it with the same
// rows: barriers inside): all of w and the tile's x rows, RS = FF_TILE_X_MAX / (K | 1) of them at a
// time, are copied into shared memory by the whole block (coalesced, one round trip), then thread t < nr M
// takes output (r, o) = (t / M, t % M) and runs bmm_dot_f's chain over the copies: the same float
// operations in the same order as bmm, so the same bits.  A small head's chain of K dependent
// steps (saint's 128 -> 7: 56 threads of a block) then waits on no global load a step, and the
// rest of the block is not idle at the next barrier for long.  x's rows sit at the odd stride K |
// 1, so the rows of a warp's outputs read different banks.  Its shared memory is its own (the
// first barrier: the previous tile's chains are done with it).
constexpr long long FF_TILE_X_MAX = 2048; // floats of x a chunk
constexpr long long FF_TILE_W_MAX = 4096; // floats of w
template <long long K, long long M>
constexpr bool bmm_ff_tile_ok = K > 0 && M > 0 && K * M <= FF_TILE_W_MAX && (K | 1) <= FF_TILE_X_MAX;
template <long long K, long long M, long long SPL, bool FMA, class Pro = ProNone, class Epi = EpEnd>
__device__ __forceinline__ void bmm_ff_tile(long long rows, float *y, const float *x, const float *w, Pro pro = Pro(),
                                            Epi epi = Epi()) {
    static_assert(bmm_ff_tile_ok<K, M>, "bmm_ff_tile: w of at most FF_TILE_W_MAX floats, rows below FF_TILE_X_MAX");
    constexpr long long XS = K | 1, RS = FF_TILE_X_MAX / XS;
    constexpr int CB = 8; // a thread's copies in flight at once
    __shared__ float sw[K * M];
    __shared__ float sx[RS * XS];
    __syncthreads(); // the previous tile's chains are done with sw and sx
    for (long long r0 = 0; r0 < rows; r0 += RS) { // block-uniform
        const long long nr = rows - r0 < RS ? rows - r0 : RS;
        if (r0 > 0) __syncthreads(); // the last chunk's chains are done with sx
        // the copies: w's K M floats with the first chunk, then the chunk's nr K of x, CB a
        // thread at a time, every load of a batch issued before its stores
        const long long nw = r0 == 0 ? K * M : 0, nc = nw + nr * K;
        for (long long i0 = threadIdx.x; i0 < nc; i0 += (long long)CB * blockDim.x) {
            float v[CB];
#pragma unroll
            for (int q = 0; q < CB; q++) {
                const long long i = i0 + (long long)q * blockDim.x, j = i - nw;
                v[q] = i < nw ? w[i] : i < nc ? x[r0 * K + j] : 0.0f;
            }
#pragma unroll
            for (int q = 0; q < CB; q++) {
                const long long i = i0 + (long long)q * blockDim.x, j = i - nw;
                if (i < nw) sw[i] = v[q];
                else if (i < nc) sx[(j / K) * XS + j % K] = v[q];
            }
        }
        __syncthreads();
        for (long long t = threadIdx.x; t < nr * M; t += blockDim.x) {
            const long long r = t / M, o = t - r * M;
            const float v = bmm_dot_f<'F', 'F', K, M, false, SPL, FMA, Pro, XS>(r, o, sx, sw, pro);
            y[(r0 + r) * M + o] = ep_val(epi, r0 + r, o, v);
        }
    }
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
