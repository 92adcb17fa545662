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

// bin: rows = R; grid rows * b1_tpr(C).  EPI: EpEnd (the sign) or EpThr (a threshold table,
// epilogue.cuh) for an F input.
template <char X, long long C, class Epi = EpEnd>
__device__ __forceinline__ void bin(long long rows, u32 *y, const void *xp, Epi epi = Epi()) {
    if constexpr (X == 'F')
        ep_store_all<'B', C>(rows, y, epi, [&](long long r, long long c) { return ((const float *)xp)[r * C + c]; });
    else
        store_all<'B', C>(rows, y, [&](long long r, long long c) { return get_bit((const u32 *)xp + r * words_of(C), c); });
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
