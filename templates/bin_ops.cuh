// bin_ops.cuh - bin (f32 -> b1 by the bit rule or a threshold table; b1 -> b1 copy) and
// concat (columns of several f32 or several b1 operands side by side).
//
// Layouts (bgnn_common.cuh): f32 [R][C] row-major; b1 [R][ceil(C/32)] words, padding zero.
// One thread per output element (bgnn_common.cuh store_all): b1 outputs one warp per output
// word, one lane per feature, __ballot_sync; padding lanes contribute 0, so padding bits
// stay zero.
#ifndef BGNN_BIN_OPS_CUH
#define BGNN_BIN_OPS_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"

namespace bgnn {

// bin of F values: a warp a row (the plan's 32 threads a row; any grid is correct), the row's
// words BIN_ROW_STEP at a time: their 32 values a lane are all requested, then one ballot a
// word, lane 0 storing it (padding bits 0).  A row costs one memory round trip per
// BIN_ROW_STEP words, where one warp a word made the kernel as many waves of warps as the
// words over what the GPU holds at once (Cora's 1433 columns: 14 waves, 16 us).  A threshold
// table's entries (EpThr) are requested beside the values: read after them, they were a second
// round trip (a lone graph's first phase, the per-graph kernel).
constexpr int BIN_ROW_STEP = 8;
template <long long C, class Epi>
__device__ __forceinline__ void bin_rows(long long rows, u32 *y, const float *x, const Epi &epi) {
    constexpr long long CW = words_of(C);
    const int lane = (int)(threadIdx.x & 31u);
    for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
        const float *xr = x + r * C;
        for (long long w0 = 0; w0 < CW; w0 += BIN_ROW_STEP) {
            constexpr bool thr = is_ep_thr<Epi>::value;
            float v[BIN_ROW_STEP], ta[thr ? BIN_ROW_STEP : 1], tb[thr ? BIN_ROW_STEP : 1];
#pragma unroll
            for (int u = 0; u < BIN_ROW_STEP; u++) {
                const long long c = (w0 + u) * 32 + lane;
                const bool in = w0 + u < CW && c < C;
                v[u] = in ? xr[c] : 0.0f;
                if constexpr (thr) {
                    ta[u] = in ? epi.t[c] : 0.0f;
                    tb[u] = in ? epi.t[C + c] : 0.0f;
                }
            }
#pragma unroll
            for (int u = 0; u < BIN_ROW_STEP; u++) {
                if (w0 + u >= CW) break; // the same for every lane
                const long long c = (w0 + u) * 32 + lane;
                u32 word;
                if constexpr (thr) { // ta, tb are 0 past C: the bit is computed, then masked
                    static_assert(Epi::cols == C, "bin_rows: a threshold table of the row's columns");
                    const u32 b = thr_bit_pre(ta[u], tb[u], v[u]);
                    word = __ballot_sync(0xffffffffu, c < C && b != 0u);
                } else { // an epilogue's tables are not read past C
                    word = __ballot_sync(0xffffffffu, c < C && ep_bit(epi, r, c, v[u]) != 0u);
                }
                if (lane == 0) y[r * CW + w0 + u] = word;
            }
        }
    }
}

// bin: rows = R.  F input: bin_rows (EPI: EpEnd, the sign, or EpThr, a threshold table,
// epilogue.cuh); B input (a copy): grid rows * b1_tpr(C).
template <char X, long long C, class Epi = EpEnd>
__device__ __forceinline__ void bin(long long rows, u32 *y, const void *xp, Epi epi = Epi()) {
    if constexpr (X == 'F')
        bin_rows<C>(rows, y, (const float *)xp, epi);
    else
        store_all<'B', C>(rows, y, [&](long long r, long long c) { return get_bit((const u32 *)xp + r * words_of(C), c); });
}

// bin_csr: bin's result for F input features held as CSR (plan.h bg_features_csr: u32
// rowptr[rows + 1], CsrEnt ent[nnz] (column, value), ...; every value other than +0, -0 kept), the
// sparse variant of a bin of the features (BgPlanLaunch: kernel + BG_PLAN_SPARSE_SUFFIX).  EPI
// may not depend on the row (EpEnd, EpThr).  Each block first makes the words of a row of +0s
// (zw: ep_bit of +0 for every column, by ballots); a warp then takes a row: its image starts as
// zw, and each stored entry (c, v), one a lane, flips bit c where ep_bit(v) differs from the +0
// bit (distinct columns, so the flips commute), then the row's words are stored.  The same
// bits as bin over the dense features, without reading their zeros.  A warp a row (the
// runtime's 32 threads a row; any grid is correct); at most BIN_CSR_WORDS_MAX words a row.
constexpr long long BIN_CSR_WORDS_MAX = 128;
template <long long C, class Epi = EpEnd>
__device__ __forceinline__ void bin_csr(long long rows, u32 *y, CsrRows csr, Epi epi = Epi()) {
    constexpr long long CW = words_of(C);
    static_assert(CW >= 1 && CW <= BIN_CSR_WORDS_MAX, "bin_csr: 1 to BIN_CSR_WORDS_MAX words a row");
    __shared__ u32 zw[CW];
    __shared__ u32 img[32][CW]; // a row image per warp (blocks of up to 1024 threads)
    const int lane = (int)(threadIdx.x & 31u), warp = (int)(threadIdx.x >> 5);
    for (long long w = warp; w < CW; w += (long long)(blockDim.x >> 5)) {
        const long long c = w * 32 + lane;
        const u32 word = __ballot_sync(0xffffffffu, c < C && ep_bit(epi, 0, c, 0.0f) != 0u);
        if (lane == 0) zw[w] = word;
    }
    __syncthreads();
    const CsrEnt *ent = csr.ent;
    u32 *im = img[warp];
    for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
        for (long long w = lane; w < CW; w += 32) im[w] = zw[w];
        __syncwarp();
        for (u32 p = csr.rp[r] + (u32)lane; p < csr.rp[r + 1]; p += 32) {
            const CsrEnt en = ent[p];
            const u32 c = en.col;
            const u32 bit = ep_bit(epi, r, c, en.val) != 0u ? 1u : 0u;
            if (bit != ((zw[c >> 5] >> (c & 31u)) & 1u)) atomicXor(&im[c >> 5], 1u << (c & 31u));
        }
        __syncwarp();
        for (long long w = lane; w < CW; w += 32) y[r * CW + w] = im[w];
        __syncwarp(); // the image is read before the next row's copy of zw overwrites it
    }
}

// Which operand holds output column c of a concat of widths Cs..., and its column there.
template <long long... Cs>
__device__ __forceinline__ int concat_find(long long c, long long *col) {
    constexpr long long widths[] = {Cs...};
    int k = 0;
    long long off = 0;
    for (; k < (int)sizeof...(Cs) - 1 && c >= off + widths[k]; k++) off += widths[k];
    *col = c - off;
    return k;
}

// concat: T = 'F' or 'B'; xs[k] is operand k ([R][Cs[k]]); rows = R.
template <char T, long long... Cs>
__device__ __forceinline__ void concat(long long rows, void *yp, const void *const *xs) {
    constexpr long long C = (0 + ... + Cs);
    constexpr long long widths[] = {Cs...};
    store_all<T, C>(rows, yp, [&](long long r, long long c) {
        long long k_col;
        int k = concat_find<Cs...>(c, &k_col);
        if constexpr (T == 'B') return get_bit((const u32 *)xs[k] + r * words_of(widths[k]), k_col);
        else return ((const float *)xs[k])[r * widths[k] + k_col];
    });
}

} // namespace bgnn

#endif // BGNN_BIN_OPS_CUH
