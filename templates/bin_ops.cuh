// bin_ops.cuh - bin (f32 -> b1 by the bit rule or a threshold table; b1 -> b1 copy) and
// concat (columns of several f32 or several b1 operands side by side).
//
// Layouts (bgnn_common.cuh): f32 [R][C] row-major; b1 [R][ceil(C/32)] words, padding zero.
// b1 outputs: one warp per output word, one lane per feature, __ballot_sync; padding lanes
// contribute 0, so padding bits stay zero.
#ifndef BGNN_BIN_OPS_CUH
#define BGNN_BIN_OPS_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"

namespace bgnn {

// bin: rows = R; grid rows * b1_tpr(C).  EPI: EpEnd (the sign) or EpThr (a threshold table,
// epilogue.cuh) for an F input.
template <char X, long long C, class Epi = EpEnd>
__device__ __forceinline__ void bin(long long rows, u32 *y, const void *xp, Epi epi = Epi()) {
    constexpr long long TPR = b1_tpr(C), CW = words_of(C);
    for (long long t = thread_index(); t < rows * TPR; t += thread_stride()) {
        long long r = t / TPR, c = t % TPR;
        u32 bit = 0u;
        if (c < C) {
            if constexpr (X == 'F') bit = ep_bit(epi, r, c, ((const float *)xp)[r * C + c]);
            else bit = get_bit((const u32 *)xp + r * CW, c);
        }
        if (CW > 0) store_bits(y + r * CW, c >> 5, bit);
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
    if constexpr (T == 'B') {
        constexpr long long TPR = b1_tpr(C), CW = words_of(C);
        u32 *y = (u32 *)yp;
        for (long long t = thread_index(); t < rows * TPR; t += thread_stride()) {
            long long r = t / TPR, c = t % TPR;
            u32 bit = 0u;
            if (c < C) {
                long long k_col;
                int k = concat_find<Cs...>(c, &k_col);
                bit = get_bit((const u32 *)xs[k] + r * words_of(widths[k]), k_col);
            }
            if (CW > 0) store_bits(y + r * CW, c >> 5, bit);
        }
    } else {
        constexpr long long TPR = f32_tpr(C);
        float *y = (float *)yp;
        for (long long t = thread_index(); t < rows * TPR; t += thread_stride()) {
            long long r = t / TPR, c = t % TPR;
            if (c < C) {
                long long k_col;
                int k = concat_find<Cs...>(c, &k_col);
                y[r * C + c] = ((const float *)xs[k])[r * widths[k] + k_col];
            }
        }
    }
}

} // namespace bgnn

#endif // BGNN_BIN_OPS_CUH
