// spmm_wide_outs.cuh - the wide float aggregation with the bin and the absmean of its rows as its
// epilogue: the kernel of a row group's wide form (plan.h "Row groups", codegen/cg_rows.c).
//
// The same sums as spmm.cuh bspmm_wide_adjb (the same loads, adds and epilogue, so the same
// values), then per row what bin_rows and absmean would compute from the stored row: the bits
// ep_bit(EpEnd) by ballots, and absmean's float64 sum of |y| in its order lanes(256) (the
// compiler's choice for an absmean of such an aggregation, compiler/passes/fp_order.c:
// rowwise.cuh warp_lanes_sum's operations in the same order, so the same bits), without the
// row's trip through memory.  bits (b1 [R][words_of(C)]) and am (f32 [R]) may each be null.
//   Rows of at most LONG edges: a block a row (SwdShape<C>::T must be 256, the block's
//     threads).  Thread t holds outputs t + 256 k, so warp w's ballot over slot k is the row's
//     word 8 k + w, and its sum of |y| over them in k order is lane t's of lanes(256).  The 256
//     sums go through shared memory to warp 0, which combines them; two buffers for alternate
//     rows, so one barrier a row.  y is stored only when STORE (something other than the group
//     reads it).
//   Longer rows: bspmm_wide_adjb's slices, a block a slice of SWD_SW = 32 columns (one word:
//     its ballot).  Each slice's values are stored to y; the slice that finishes last (done[i],
//     a counter a row: zeroed when the runtime allocates it, and reset to 0 by that last slice)
//     reads the row back from L2 for absmean's sum.
// Every thread of the block runs both loops (barriers inside); any grid is correct.
#ifndef BGNN_SPMM_WIDE_OUTS_CUH
#define BGNN_SPMM_WIDE_OUTS_CUH

#include "rowwise.cuh"
#include "spmm.cuh"

namespace bgnn {

template <long long C, long long LONG, bool STORE, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_wide_adjb_outs(long long rows, float *y, const long long *rowptr, const int *col,
                                                     const float *rowf, const float *colf, const float *x,
                                                     const int4 *order, u32 *bits, float *am, unsigned *done,
                                                     Epi epi = Epi()) {
    using S = SwdShape<C>;
    constexpr int K = S::K;
    constexpr long long T = S::T, NS = S::NS, W = words_of(C);
    static_assert(T == 256, "bspmm_wide_adjb_outs: a row's 256 threads, the block");
    static_assert(SWD_SW == 32, "bspmm_wide_adjb_outs: a long row's slice is one word");
    __shared__ double sd[2][256];
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    int buf = 0;
    for (long long t = thread_index(); t < rows * T; t += thread_stride()) { // a block a row
        const long long i = t / T;
        const long long e0 = rowptr[i], e1 = rowptr[i + 1];
        if (e1 - e0 > LONG) continue; // the second loop's (block-uniform)
        float acc[K];
        swd_row_sums<C, K, T, 2>(tid, e0, e1, col, colf, x, acc);
        const float rf = rowf[i];
        double s = 0.0; // lane tid of lanes(256)
#pragma unroll
        for (int k = 0; k < K; k++) {
            const long long c = tid + k * T;
            const float v = c < C ? ep_val(epi, i, c, fmul(rf, acc[k])) : 0.0f;
            if (STORE && c < C) y[i * C + c] = v;
            if (c < C) s = dadd(s, AbsDouble{}(v));
            if (bits) {
                const u32 word = __ballot_sync(0xffffffffu, c < C && ep_bit(EpEnd{}, i, c, v) != 0u);
                if (lane == 0 && 8LL * k + warp < W) bits[i * W + 8LL * k + warp] = word;
            }
        }
        if (am) {
            sd[buf][tid] = s;
            __syncthreads(); // the lanes in sd[buf]; sd[buf ^ 1] is written again after the next barrier
            if (warp == 0) {
                double q[8];
#pragma unroll
                for (int j = 0; j < 8; j++) q[j] = sd[buf][lane + 32 * j];
                const double r = warp_vlanes_combine<8>(q);
                if (lane == 0) am[i] = __double2float_rn(div_by_cols<C>(r));
            }
            buf ^= 1;
        }
    }
    __shared__ int last;
    const long long nlong = order[0].y;
    for (long long it = blockIdx.x; it < nlong * NS; it += gridDim.x) { // block-uniform
        const SwdSlice sl = swd_slice<NS>(order, it);
        const long long i = sl.i, c = sl.cs + tid;
        const float acc = swd_slice_sum<C>(sl, col, colf, x);
        if (tid < SWD_SW) {
            const float v = c < C ? ep_val(epi, i, c, fmul(rowf[i], acc)) : 0.0f;
            if (c < C) y[i * C + c] = v;
            if (bits) {
                const u32 word = __ballot_sync(0xffffffffu, c < C && ep_bit(EpEnd{}, i, c, v) != 0u);
                if (lane == 0) bits[i * W + sl.cs / SWD_SW] = word;
            }
            if (am) __threadfence(); // the slice's values before its count
        }
        if (am) {
            __syncthreads();
            if (tid == 0) last = atomicAdd(&done[i], 1u) == (unsigned)(NS - 1);
            __syncthreads();
            if (last && warp == 0) { // every slice of row i is in y
                __threadfence();
                const float *r = y + i * C;
                const double s = warp_lanes_sum<C, 256>(lane, [&](long long cc) { return __ldcg(r + cc); }, AbsDouble{});
                if (lane == 0) {
                    am[i] = __double2float_rn(div_by_cols<C>(s));
                    done[i] = 0u; // for the next run
                }
            }
        }
    }
}

} // namespace bgnn

#endif // BGNN_SPMM_WIDE_OUTS_CUH
