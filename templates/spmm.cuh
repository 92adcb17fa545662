// spmm.cuh - bspmm.XYZ: y = A x over a CSR graph, x [N,C] -> y [N,C].
//
// Layouts (bgnn_common.cuh): rowptr int64[N+1], col int32[nnz] (ascending per row), rowf /
// colf float[N], w float[nnz]; x f32 [N][C] or b1 [N][ceil(C/32)]; y likewise.
// One thread per output element (i, c) (one warp per output word for b1 outputs), the
// neighbours of row i in CSR order, accumulated sequentially (docs/semantics.md):
//   adjacency B: s = sum_j t_j, t_j = fl(colf[j] * x[j,c]) (F activation) or +-colf[j]
//                (B activation); y = fl(rowf[i] * s).  UNIT (norm none / mean: every
//                colf is exactly 1) with a B activation sums +-1 in integers (exact, the
//                same value as the float sum).
//   adjacency F: y = sum_j fl(w_ij * v(x[j,c])).
// Output B: bit_of(y), padding bits zero.  Isolated nodes give s = +0 (y = +0 -> bit 1).
// EPI (epilogue.cuh) maps y to the output: fused scl / add / relu steps, then the bit by
// the sign or a threshold table; the default EpEnd is the plain aggregation.
// METHOD (ifelse / andnot / popc2) selects a reduction for the UNIT case in later
// versions; all give the same result and this version uses the per-lane if-else sum.
#ifndef BGNN_SPMM_CUH
#define BGNN_SPMM_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"

namespace bgnn {

template <char X, long long C>
__device__ __forceinline__ u32 spmm_xbit(const void *xp, long long j, long long c) {
    return get_bit((const u32 *)xp + j * words_of(C), c);
}
template <char X, long long C>
__device__ __forceinline__ float spmm_xval(const void *xp, long long j, long long c) {
    return ((const float *)xp)[j * C + c];
}

template <char X, long long C, bool UNIT>
__device__ __forceinline__ float spmm_adjb_elem(long long i, long long c, const long long *rowptr,
                                                const int *col, const float *rowf,
                                                const float *colf, const void *xp) {
    long long e0 = rowptr[i], e1 = rowptr[i + 1];
    float acc;
    if constexpr (X == 'B' && UNIT) {
        long long s = 0;
        for (long long e = e0; e < e1; e++) s += spmm_xbit<X, C>(xp, col[e], c) ? 1 : -1;
        acc = (float)s;
    } else {
        acc = 0.0f;
        // Unrolled so the neighbours' loads are issued together; the adds stay in order.
#pragma unroll 8
        for (long long e = e0; e < e1; e++) {
            long long j = col[e];
            float cj = colf[j];
            float t;
            if constexpr (X == 'B') t = signed_by(cj, spmm_xbit<X, C>(xp, j, c));
            else t = fmul(cj, spmm_xval<X, C>(xp, j, c));
            acc = fadd(acc, t);
        }
    }
    return fmul(rowf[i], acc);
}

template <char X, long long C>
__device__ __forceinline__ float spmm_adjf_elem(long long i, long long c, const long long *rowptr,
                                                const int *col, const float *w, const void *xp) {
    long long e0 = rowptr[i], e1 = rowptr[i + 1];
    float acc = 0.0f;
#pragma unroll 8
    for (long long e = e0; e < e1; e++) {
        long long j = col[e];
        float t;
        if constexpr (X == 'B') t = signed_by(w[e], spmm_xbit<X, C>(xp, j, c));
        else t = fmul(w[e], spmm_xval<X, C>(xp, j, c));
        acc = fadd(acc, t);
    }
    return acc;
}

// Adjacency B (pattern + factor vectors).  rows = N.
template <char X, char Z, long long C, bool UNIT, int METHOD, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_adjb(long long rows, void *yp, const long long *rowptr,
                                           const int *col, const float *rowf, const float *colf,
                                           const void *xp, Epi epi = Epi()) {
    static_assert(X == 'F' || X == 'B', "bspmm: activation is F or B");
    ep_store_all<Z, C>(rows, yp, epi, [&](long long i, long long c) {
        return spmm_adjb_elem<X, C, UNIT>(i, c, rowptr, col, rowf, colf, xp);
    });
}

// Adjacency F (per-edge weights).  rows = N.
template <char X, char Z, long long C, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_adjf(long long rows, void *yp, const long long *rowptr,
                                           const int *col, const float *w, const void *xp,
                                           Epi epi = Epi()) {
    static_assert(X == 'F' || X == 'B', "bspmm: activation is F or B");
    ep_store_all<Z, C>(rows, yp, epi, [&](long long i, long long c) {
        return spmm_adjf_elem<X, C>(i, c, rowptr, col, w, xp);
    });
}

} // namespace bgnn

#endif // BGNN_SPMM_CUH
