// rowwise.cuh - per-row reductions (absmean: one warp per row; standardize, bin.center,
// log_softmax: one thread per row; sequential, float64 where docs/semantics.md says so) and
// readout (one thread per (graph, feature), nodes of the graph in order).
//
// Layouts (bgnn_common.cuh): x f32 [R][C] (readout: also b1 [N][ceil(C/32)], read as +-1);
// absmean y f32[R]; graph_ptr int64[G+1] (graph g owns rows graph_ptr[g]..graph_ptr[g+1]-1).
#ifndef BGNN_ROWWISE_CUH
#define BGNN_ROWWISE_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"

namespace bgnn {

// absmean: y[r] = fl(sum_c |x[r,c]| (float64, sequential) / C); C = 0 gives 0.  pro maps
// x[r,c] to the value summed (epilogue.cuh: ProNone, or ProBn, a batchnorm prologue).  One
// warp per row (the launch has 32 threads per row): the lanes read 32 consecutive columns at a
// time and map them in parallel, then every lane adds the 32 terms in column order (the
// shuffles do not depend on the running sum, so they overlap the chain of adds); the sum is
// the sequential one, bit for bit.
template <long long C, class Pro>
__device__ __forceinline__ void absmean(long long rows, float *y, const float *x, const Pro &pro) {
    const int lane = (int)(threadIdx.x & 31u);
    for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
        const float *xr = x + r * C;
        double s = 0.0;
        for (long long c0 = 0; c0 < C; c0 += 32) {
            const long long c = c0 + lane;
            const double v = c < C ? fabs((double)pro(c, xr[c])) : 0.0;
            if (c0 + 32 <= C) {
#pragma unroll
                for (int i = 0; i < 32; i++) s = dadd(s, __shfl_sync(0xffffffffu, v, i));
            } else {
                for (int i = 0; i < (int)(C - c0); i++) s = dadd(s, __shfl_sync(0xffffffffu, v, i));
            }
        }
        if (lane == 0) y[r] = C ? __double2float_rn(ddiv(s, (double)C)) : 0.0f;
    }
}

// standardize: mu = sum/C, sd = sqrt(sum (x-mu)^2 / (C-1)) (0 when C <= 1), all float64;
// y = fl((x - mu) / (sd + eps)).
template <long long C, unsigned EPS_BITS>
__device__ __forceinline__ void standardize(long long rows, float *y, const float *x) {
    const double eps = (double)f32_from_bits(EPS_BITS);
    for (long long r = thread_index(); r < rows; r += thread_stride()) {
        const float *xr = x + r * C;
        double sum = 0.0;
        for (long long c = 0; c < C; c++) sum = dadd(sum, (double)xr[c]);
        double mu = C ? ddiv(sum, (double)C) : 0.0;
        double ss = 0.0;
        for (long long c = 0; c < C; c++) {
            double dv = dsub((double)xr[c], mu);
            ss = dadd(ss, dmul(dv, dv));
        }
        double sd = C > 1 ? dsqrt(ddiv(ss, (double)(C - 1))) : 0.0;
        double den = dadd(sd, eps);
        for (long long c = 0; c < C; c++)
            y[r * C + c] = __double2float_rn(ddiv(dsub((double)xr[c], mu), den));
    }
}

// bin.center: mu = sum/C in float64 (standardize's mean, operation for operation), then
// bit = 1 iff d = fl64(x - mu) has its sign bit clear and is not NaN.  One thread per row
// writes whole words (no ballot: the launch has 1 thread per row), padding bits zero.
template <long long C>
__device__ __forceinline__ void bin_center(long long rows, u32 *y, const float *x) {
    constexpr long long CW = words_of(C);
    for (long long r = thread_index(); r < rows; r += thread_stride()) {
        const float *xr = x + r * C;
        double sum = 0.0;
        for (long long c = 0; c < C; c++) sum = dadd(sum, (double)xr[c]);
        double mu = C ? ddiv(sum, (double)C) : 0.0;
        for (long long w = 0; w < CW; w++) {
            u32 word = 0u;
            for (long long b = 0; b < 32 && w * 32 + b < C; b++) {
                const u64 d = (u64)__double_as_longlong(dsub((double)xr[w * 32 + b], mu));
                const bool nan = (d & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
                if (!nan && (d >> 63) == 0u) word |= 1u << b;
            }
            y[r * CW + w] = word;
        }
    }
}

// log_softmax: m = max (float32, first maximum), s = sum exp(x - m) (float64, sequential),
// y = fl(x - m - log s) in float64.
template <long long C>
__device__ __forceinline__ void log_softmax(long long rows, float *y, const float *x) {
    for (long long r = thread_index(); r < rows; r += thread_stride()) {
        const float *xr = x + r * C;
        if (C == 0) continue;
        float m = xr[0];
        for (long long c = 1; c < C; c++)
            if (xr[c] > m) m = xr[c];
        double s = 0.0;
        for (long long c = 0; c < C; c++) s = dadd(s, exp(dsub((double)xr[c], (double)m)));
        double ls = log(s);
        for (long long c = 0; c < C; c++)
            y[r * C + c] = __double2float_rn(dsub(dsub((double)xr[c], (double)m), ls));
    }
}

// readout: y[g,c] over the nodes of graph g: REDUCE 0 = sum (sequential from +0.0f),
// 1 = mean (fl(sum / count)), 2 = max; an empty graph gives 0.  rows = G.
template <char X, long long C, int REDUCE>
__device__ __forceinline__ float readout_val(const void *xp, long long v, long long c) {
    if constexpr (X == 'B') return pm1(get_bit((const u32 *)xp + v * words_of(C), c));
    else return ((const float *)xp)[v * C + c];
}

template <char X, long long C, int REDUCE>
__device__ __forceinline__ void readout(long long rows, float *y, const void *xp,
                                        const long long *graph_ptr) {
    static_assert(REDUCE >= 0 && REDUCE <= 2, "readout: sum, mean or max");
    store_all<'F', C>(rows, y, [&](long long g, long long c) {
        long long lo = graph_ptr[g], hi = graph_ptr[g + 1];
        float acc = 0.0f;
        if (hi > lo) {
            if constexpr (REDUCE == 2) {
                acc = readout_val<X, C, REDUCE>(xp, lo, c);
                for (long long v = lo + 1; v < hi; v++) {
                    float tv = readout_val<X, C, REDUCE>(xp, v, c);
                    if (tv > acc) acc = tv;
                }
            } else {
                for (long long v = lo; v < hi; v++) acc = fadd(acc, readout_val<X, C, REDUCE>(xp, v, c));
                if constexpr (REDUCE == 1) acc = fdiv(acc, (float)(hi - lo));
            }
        }
        return acc;
    });
}

} // namespace bgnn

#endif // BGNN_ROWWISE_CUH
