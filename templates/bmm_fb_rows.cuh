// bmm_fb_rows.cuh - bmm.FB{F,B} of the model's input features, one warp per row, skipping
// the zero features (bag-of-words features are 1-5% nonzero: Cora 1.3%).
//
// y[r,o] = sum over k ascending from +0.0f of v(w[k,o]) * x'[r,k], every step rounded: the
// seq order of docs/semantics.md (section 2), bit for bit, with x' = pro(k, x[r,k]) (ProNone,
// or ProScl: fold-batchnorm-mm's fl(x * s[k])).  A term with x' = +-0 is skipped: the
// accumulator starts at +0.0f and is never -0.0f (a sum is -0 only when both addends are),
// so adding +-0 leaves it unchanged; a NaN or infinite x' is not zero and is added as seq adds
// it.  Then the epilogue (epilogue.cuh) into a float or a bit, as matmul.cuh's bmm.  A
// ProScl's s[k] is requested beside x[r,k], and a bias alone (EpAdd<M, false, EpEnd>) before
// the row's first values: read where they are used, each was one more dependent round trip
// (the per-graph kernel's first phase, before its tables are staged: GCN bin).
//
// Work: warp per row (grid-stride over warps: any grid, 32 threads a row); lane l owns outputs
// o = l, l + 32, ... (MJ = ceil(M/32) accumulators).  The row is read 32 floats a step,
// U steps loaded before any is used (U loads in flight); __ballot_sync marks the nonzero x',
// and each one, in k order, is broadcast (__shfl_sync) and added into every lane's outputs
// with the bits of weight row k (canonical b1 [K][ceil(M/32)]: word j, bit l, the same word
// for the whole warp).  A step with more than 8 nonzeros (dense features: Reddit's 602) goes
// through all 32 positions in order instead, DU weight rows loaded before they are used.  Output b1: one __ballot_sync a 32-column word, padding bits 0.
#ifndef BGNN_BMM_FB_ROWS_CUH
#define BGNN_BMM_FB_ROWS_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"

namespace bgnn {

// The MJ words of a weight row (16-byte loads when MJ is a multiple of 4: rows of MW = MJ words
// start 16-byte aligned).
template <int MJ>
__device__ __forceinline__ void fb_rows_weights(const u32 *wr, u32 *wv) {
    if constexpr (MJ % 4 == 0) {
#pragma unroll
        for (int q = 0; q < MJ / 4; q++) {
            const uint4 v = ((const uint4 *)wr)[q];
            wv[4 * q] = v.x;
            wv[4 * q + 1] = v.y;
            wv[4 * q + 2] = v.z;
            wv[4 * q + 3] = v.w;
        }
    } else {
#pragma unroll
        for (int j = 0; j < MJ; j++) wv[j] = wr[j];
    }
}

// Row r's outputs from a warp (lane l holds outputs l, l + 32, ... in acc) through the epilogue:
// floats, or one __ballot_sync a 32-column word (padding bits 0).
// eb: a bias alone's b[o] (is_ep_bias), requested with the row's first values.
template <char Z, long long M, int MJ, class Epi>
__device__ __forceinline__ void fb_rows_store(long long r, void *yp, const float (&acc)[MJ], unsigned lane,
                                              const Epi &epi, const float (&eb)[MJ]) {
    constexpr long long MW = words_of(M);
    // output j through epilogue ep: a preloaded bias leaves EpEnd, the rest of EpAdd's steps
    auto put = [&](int j, const auto &ep, float a) {
        const long long o = 32LL * j + lane;
        if constexpr (Z == 'B') {
            const u32 bit = o < M ? ep_bit(ep, r, o, a) : 0u;
            const u32 word = __ballot_sync(0xffffffffu, bit != 0u);
            if (lane == 0u && j < MW) ((u32 *)yp)[r * MW + j] = word;
        } else {
            if (o < M) ((float *)yp)[r * M + o] = ep_val(ep, r, o, a);
        }
    };
#pragma unroll
    for (int j = 0; j < MJ; j++) {
        if constexpr (is_ep_bias<Epi>::value) put(j, EpEnd{}, fadd(acc[j], eb[j]));
        else put(j, epi, acc[j]);
    }
}

template <char Z, long long K, long long M, class Pro = ProNone, class Epi = EpEnd>
__device__ __forceinline__ void bmm_fb_rows(long long rows, void *yp, const float *x, const u32 *w,
                                            Pro pro = Pro(), Epi epi = Epi()) {
    constexpr long long MW = words_of(M);
    constexpr int MJ = M > 0 ? (int)MW : 1;
    if constexpr (M == 0) return; // no outputs (and no weight words to read)
    constexpr int U = 8; // 32-float steps loaded ahead
    constexpr int DU = MJ <= 4 ? 8 : (MJ <= 8 ? 4 : 1); // a dense step's weight rows loaded ahead
    const unsigned lane = threadIdx.x & 31u, sh = 31u - lane;
    const long long warps = thread_stride() >> 5;
    constexpr bool pscl = is_pro_scl<Pro>::value, bias = is_ep_bias<Epi>::value;
    for (long long r = thread_index() >> 5; r < rows; r += warps) {
        const float *xr = x + r * K;
        float acc[MJ], eb[MJ];
#pragma unroll
        for (int j = 0; j < MJ; j++) {
            acc[j] = 0.0f;
            eb[j] = 0.0f;
            if constexpr (bias) eb[j] = 32LL * j + lane < M ? epi.b[32LL * j + lane] : 0.0f;
        }
        for (long long k0 = 0; k0 < K; k0 += 32LL * U) {
            float v[U], sv[pscl ? U : 1];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const long long k = k0 + 32LL * u + lane;
                v[u] = k < K ? xr[k] : 0.0f;
                if constexpr (pscl) sv[u] = k < K ? pro.s[k] : 0.0f; // requested beside the value
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const long long kb = k0 + 32LL * u;
                if (kb >= K) break;
                float xv = 0.0f;
                if constexpr (pscl) xv = kb + lane < K ? fmul(v[u], sv[u]) : 0.0f;
                else xv = kb + lane < K ? pro(kb + lane, v[u]) : 0.0f;
                u32 nz = __ballot_sync(0xffffffffu, xv != 0.0f); // NaN counts as nonzero
                if (DU > 1 && __popc(nz) > 8) { // a dense step: every position, DU weight rows ahead
                    const u32 *wk = w + kb * MW;
                    const int nk = K - kb < 32 ? (int)(K - kb) : 32;
                    for (int b0 = 0; b0 < 32; b0 += DU) {
                        u32 wv[DU][MJ];
                        float t[DU];
#pragma unroll
                        for (int d = 0; d < DU; d++) {
                            t[d] = __shfl_sync(0xffffffffu, xv, b0 + d);
                            if (b0 + d < nk) fb_rows_weights<MJ>(wk + (b0 + d) * MW, wv[d]);
                        }
#pragma unroll
                        for (int d = 0; d < DU; d++) {
                            if (t[d] == 0.0f) continue; // +-0 (and the columns past K): skipped
                            const u32 nt = __float_as_uint(t[d]) ^ 0x80000000u;
#pragma unroll
                            for (int j = 0; j < MJ; j++) acc[j] = fadd(acc[j], signed_by_shifted(nt, wv[d][j], sh));
                        }
                    }
                    continue;
                }
                while (nz) {
                    const int b = __ffs(nz) - 1;
                    nz &= nz - 1u;
                    const float t = __shfl_sync(0xffffffffu, xv, b);
                    const u32 *wr = w + (kb + b) * MW;
                    const u32 nt = __float_as_uint(t) ^ 0x80000000u;
#pragma unroll
                    for (int j = 0; j < MJ; j++) acc[j] = fadd(acc[j], signed_by_shifted(nt, wr[j], sh));
                }
            }
        }
        fb_rows_store<Z, M, MJ>(r, yp, acc, lane, epi, eb);
    }
}

} // namespace bgnn

#endif // BGNN_BMM_FB_ROWS_CUH
