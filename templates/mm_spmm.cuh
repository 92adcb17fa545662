// mm_spmm.cuh - bspmm_mm.PQX.XYZ (fuse-mm-spmm; docs/ir.md 4.2, docs/semantics.md 7):
// y = A t over a CSR graph with t = bmm.PQX(x, W) mm(steps), t never stored.
//
// Operands (bgnn_common.cuh layouts): the graph arrays of spmm.cuh (rowptr, col, rowf / colf
// for adjacency B, w for adjacency F), x f32 [N][K] or b1 [N][ceil(K/32)], W as matmul.cuh
// takes it (b1t [M][ceil(K/32)] when WT, the plan's layout of a b1 param read by a BB product),
// y f32 [N][C] or b1 [N][ceil(C/32)], C = M.
// One thread per output element (i, c) (one warp per output word for a b1 result), exactly
// as spmm.cuh: the neighbours j of row i in CSR order, accumulated sequentially.  Where
// spmm.cuh reads the stored activation t[j, c], this recomputes it: the product element
// bmm_dot(j, c) of matmul.cuh, then the mm steps EM at row j (scl rows / a tensor add index
// row j, the neighbour), then for X = B its bit (EM.bit: by the sign or a threshold table).
// That is the float (X = F) or the bit (X = B) the unfused bmm would have stored in t[j, c]
// (matmul.cuh's ep_store_all with the same EM), so the aggregation, and the epilogue EPI on
// its result, are bit for bit those of the unfused pair.
// Cost: ceil(K/32) popcounts (BB) per edge and output element, i.e. M * ceil(K/32) words per
// edge; fuse-mm-spmm fires only when that is at most 64 and x_j's row is no wider than t_j's.
// METHOD is accepted for parity with spmm.cuh (the per-lane if-else sum is used).
#ifndef BGNN_MM_SPMM_CUH
#define BGNN_MM_SPMM_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"
#include "matmul.cuh"

namespace bgnn {

// t[j, c] as the unfused bmm.PQX stores it: its float (X = F) or its bit (X = B).
template <char P, char Q, long long K, long long C, bool WT, class EM>
__device__ __forceinline__ float mm_spmm_tval(long long j, long long c, const void *xp, const void *wp,
                                              const EM &em) {
    return ep_val(em, j, c, bmm_dot<P, Q, K, C, WT>(j, c, xp, wp, ProNone()));
}
template <char P, char Q, long long K, long long C, bool WT, class EM>
__device__ __forceinline__ u32 mm_spmm_tbit(long long j, long long c, const void *xp, const void *wp,
                                            const EM &em) {
    return ep_bit(em, j, c, bmm_dot<P, Q, K, C, WT>(j, c, xp, wp, ProNone()));
}

// spmm_adjb_elem with t[j, c] recomputed.
template <char P, char Q, char X, long long K, long long C, bool WT, bool UNIT, class EM>
__device__ __forceinline__ float mm_spmm_adjb_elem(long long i, long long c, const long long *rowptr,
                                                   const int *col, const float *rowf, const float *colf,
                                                   const void *xp, const void *wp, const EM &em) {
    long long e0 = rowptr[i], e1 = rowptr[i + 1];
    float acc;
    if constexpr (X == 'B' && UNIT) {
        long long s = 0;
        for (long long e = e0; e < e1; e++) s += mm_spmm_tbit<P, Q, K, C, WT>(col[e], c, xp, wp, em) ? 1 : -1;
        acc = (float)s;
    } else {
        acc = 0.0f;
        for (long long e = e0; e < e1; e++) {
            long long j = col[e];
            float cj = colf[j];
            float t;
            if constexpr (X == 'B') t = signed_by(cj, mm_spmm_tbit<P, Q, K, C, WT>(j, c, xp, wp, em));
            else t = fmul(cj, mm_spmm_tval<P, Q, K, C, WT>(j, c, xp, wp, em));
            acc = fadd(acc, t);
        }
    }
    return fmul(rowf[i], acc);
}

// spmm_adjf_elem with t[j, c] recomputed.
template <char P, char Q, char X, long long K, long long C, bool WT, class EM>
__device__ __forceinline__ float mm_spmm_adjf_elem(long long i, long long c, const long long *rowptr,
                                                   const int *col, const float *w, const void *xp,
                                                   const void *wp, const EM &em) {
    long long e0 = rowptr[i], e1 = rowptr[i + 1];
    float acc = 0.0f;
    for (long long e = e0; e < e1; e++) {
        long long j = col[e];
        float t;
        if constexpr (X == 'B') t = signed_by(w[e], mm_spmm_tbit<P, Q, K, C, WT>(j, c, xp, wp, em));
        else t = fmul(w[e], mm_spmm_tval<P, Q, K, C, WT>(j, c, xp, wp, em));
        acc = fadd(acc, t);
    }
    return acc;
}

// Adjacency B (pattern + factor vectors).  rows = N; grid: rows * (Z == 'B' ? b1_tpr(C) : f32_tpr(C)).
template <char P, char Q, char X, char Z, long long K, long long C, bool WT, bool UNIT, int METHOD,
          class EM = EpEnd, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_mm_adjb(long long rows, void *yp, const long long *rowptr, const int *col,
                                              const float *rowf, const float *colf, const void *xp,
                                              const void *wp, EM em = EM(), Epi epi = Epi()) {
    static_assert((P == 'F' || P == 'B') && (Q == 'F' || Q == 'B') && (X == 'F' || X == 'B') &&
                      (Z == 'F' || Z == 'B'),
                  "bspmm_mm: precision letters are F or B");
    static_assert(!WT || Q == 'B', "bspmm_mm: only b1 weights can be transposed");
    ep_store_all<Z, C>(rows, yp, epi, [&](long long i, long long c) {
        return mm_spmm_adjb_elem<P, Q, X, K, C, WT, UNIT>(i, c, rowptr, col, rowf, colf, xp, wp, em);
    });
}

// Adjacency F (per-edge weights).  rows = N; grid as above.
template <char P, char Q, char X, char Z, long long K, long long C, bool WT, class EM = EpEnd, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_mm_adjf(long long rows, void *yp, const long long *rowptr, const int *col,
                                              const float *w, const void *xp, const void *wp, EM em = EM(),
                                              Epi epi = Epi()) {
    static_assert((P == 'F' || P == 'B') && (Q == 'F' || Q == 'B') && (X == 'F' || X == 'B') &&
                      (Z == 'F' || Z == 'B'),
                  "bspmm_mm: precision letters are F or B");
    static_assert(!WT || Q == 'B', "bspmm_mm: only b1 weights can be transposed");
    ep_store_all<Z, C>(rows, yp, epi, [&](long long i, long long c) {
        return mm_spmm_adjf_elem<P, Q, X, K, C, WT>(i, c, rowptr, col, w, xp, wp, em);
    });
}

} // namespace bgnn

#endif // BGNN_MM_SPMM_CUH
