// spmm_bits.cuh - bspmm.B?{F,B} over a weighted adjacency: b1 activations [N][ceil(C/32)]
// summed with float factors, one warp per row (aggregate-first's aggregation: Reddit's
// gcn_bin second layer sums 128 bits of ~490 neighbours a row).
//
// The value of spmm.cuh, bit for bit: adjacency B (ADJF false) s = sum over the row's
// neighbours j in CSR order of +-colf[j] (the sign of bit c of x_j), from +0.0f, then
// y = fl(rowf[i] * s); adjacency F (ADJF true) y = sum of +-w[e] likewise.  Then the epilogue
// (epilogue.cuh) into a float or a bit.
//
// Work: warp per row (grid-stride over warps: 32 threads a row); lane l owns columns l, l + 32,
// ... (CW = ceil(C/32) accumulators, one per word).  The lanes load 32 edges' columns and
// factors at a time (coalesced), then take them in CSR order by shuffle, U edges at a time:
// the U rows of x (CW words each, the same for the whole warp: broadcast, 16-byte loads where
// possible) are all requested before any is used, so U gathers are in flight per warp; then
// lane l adds +-factor by bit l of each word, edge after edge (the sequential order).
// Output b1: one __ballot_sync per word, padding bits zero.
#ifndef BGNN_SPMM_BITS_CUH
#define BGNN_SPMM_BITS_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"

namespace bgnn {

// The CW words of row j of x into w[] (16-byte loads when a row is a multiple of 4 words).
template <int CW>
__device__ __forceinline__ void spmm_bits_row(const u32 *x, long long j, u32 *w) {
    if constexpr (CW % 4 == 0) {
        const uint4 *r = (const uint4 *)(x + j * CW);
#pragma unroll
        for (int k = 0; k < CW / 4; k++) {
            const uint4 v = r[k];
            w[4 * k] = v.x;
            w[4 * k + 1] = v.y;
            w[4 * k + 2] = v.z;
            w[4 * k + 3] = v.w;
        }
    } else {
#pragma unroll
        for (int k = 0; k < CW; k++) w[k] = x[j * CW + k];
    }
}

template <bool ADJF, char Z, long long C, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_bits_rows(long long rows, void *yp, const long long *rowptr, const int *col,
                                                const float *rowf, const float *factor, const u32 *x,
                                                Epi epi = Epi()) {
    constexpr long long CWL = words_of(C);
    constexpr int CW = CWL > 0 ? (int)CWL : 1;
    if constexpr (C == 0) return; // no outputs (and no bits to read)
    constexpr int U = CW <= 8 ? 4 : 1; // edges whose rows are loaded together
    const unsigned lane = threadIdx.x & 31u, sh = 31u - lane;
    const long long warps = thread_stride() >> 5;
    for (long long i = thread_index() >> 5; i < rows; i += warps) {
        float acc[CW];
#pragma unroll
        for (int w = 0; w < CW; w++) acc[w] = 0.0f;
        const long long e0 = rowptr[i], e1 = rowptr[i + 1];
        for (long long b = e0; b < e1; b += 32) {
            const long long e = b + lane;
            int jl = 0;
            float fl = 0.0f;
            if (e < e1) {
                jl = col[e];
                fl = ADJF ? factor[e] : factor[jl];
            }
            const int n = e1 - b < 32 ? (int)(e1 - b) : 32;
            for (int q0 = 0; q0 < n; q0 += U) {
                u32 xw[U][CW];
                float f[U];
#pragma unroll
                for (int u = 0; u < U; u++) { // U rows of x in flight at once
                    const int q = (q0 + u) & 31;
                    const long long j = __shfl_sync(0xffffffffu, jl, q);
                    f[u] = __shfl_sync(0xffffffffu, fl, q);
                    if (q0 + u < n) spmm_bits_row<CW>(x, j, xw[u]);
                }
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (q0 + u >= n) break;
                    const u32 nf = __float_as_uint(f[u]) ^ 0x80000000u;
#pragma unroll
                    for (int w = 0; w < CW; w++) acc[w] = fadd(acc[w], signed_by_shifted(nf, xw[u][w], sh));
                }
            }
        }
#pragma unroll
        for (int w = 0; w < CW; w++) {
            const long long c = 32LL * w + lane;
            float v = acc[w];
            if constexpr (!ADJF) v = fmul(rowf[i], v);
            if constexpr (Z == 'B') {
                const u32 bit = c < C ? ep_bit(epi, i, c, v) : 0u;
                const u32 word = __ballot_sync(0xffffffffu, bit != 0u);
                if (lane == 0u && w < CWL) ((u32 *)yp)[i * CWL + w] = word;
            } else {
                if (c < C) ((float *)yp)[i * C + c] = ep_val(epi, i, c, v);
            }
        }
    }
}

} // namespace bgnn

#endif // BGNN_SPMM_BITS_CUH
