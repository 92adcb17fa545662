// mm_spmm.cuh - bspmm_mm.PQX.XYZ (fuse-mm-spmm; docs/ir.md 4.2, docs/semantics.md 7):
// y = A t over a CSR graph with t = bmm.PQX(x, W) mm(steps), t never stored.
//
// Operands (bgnn_common.cuh layouts): the graph arrays of spmm.cuh (rowptr, col, rowf / colf
// for adjacency B, w for adjacency F), x f32 [N][K] or b1 [N][ceil(K/32)], W as matmul.cuh
// takes it (b1t [M][ceil(K/32)] when WT, the plan's layout of a b1 param read by a BB product),
// y f32 [N][C] or b1 [N][ceil(C/32)], C = M.
// One warp per row (mm_spmm_warp_rows): its lanes gather 64 edges at once, then the terms are
// accumulated in CSR order exactly as spmm.cuh does (a row of 169 neighbours is 3 rounds of
// gathers, not 169 dependent ones).  Where spmm.cuh reads the stored activation t[j, c], this
// recomputes it: the product element bmm_dot(j, c) of matmul.cuh, then the mm steps EM at row j (scl rows / a tensor add index
// row j, the neighbour), then for X = B its bit (EM.bit: by the sign or a threshold table).
// That is the float (X = F) or the bit (X = B) the unfused bmm would have stored in t[j, c]
// (matmul.cuh's ep_store_all with the same EM), so the aggregation, and the epilogue EPI on
// its result, are bit for bit those of the unfused pair.
// Cost: ceil(K/32) popcounts (BB) per edge and output element, i.e. M * ceil(K/32) words per
// edge; fuse-mm-spmm fires only when that is at most 64 and x_j's row is no wider than t_j's.
// METHOD is accepted for parity with spmm.cuh (an integer +-1 sum is one ballot per output).
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

// One warp per row i (grid-stride over rows by warps).  The row's edges go MSW_U * 32 at a
// time (a round): lane l gathers edges e0 + l, e0 + 32 + l, ... (their columns, factors and
// product rows: all of a round's gathers in flight at once; the next round's columns are
// loaded during this one), so a row of 169 neighbours waits on 3 gathers, not 6.  TERM(e, j,
// c) is that edge's term for output c.  Float terms: the lanes write the terms of MSW_CB
// outputs to the warp's shared tile, then lane c % MSW_CB adds them in edge order to output
// c's running sum - the sequential CSR order of spmm.cuh, exactly (a chunk of 16 terms read
// at once, then added one after the other).  INT (+-1 terms, summed in integers, exact in any
// order): one ballot per output and 32 edges.  FIN(i, c, acc) turns the sum into the value the
// epilogue reads.  An epilogue ending in EpLsm (fuse-log-softmax; C <= 32, so lane c holds
// output c) takes the row's log_softmax in the warp before the store (lsm_warp).  At most 8
// warps of a block take rows (the shared tiles are 8; a larger block's other warps idle here:
// the per-graph kernel's 1024).
constexpr int MSW_CB = 8, MSW_CMAX = 64; // outputs per shared-tile round; the most outputs
constexpr int MSW_U = 2;                 // edges a lane gathers per round
// The shared tiles, one set for every instantiation (a fused kernel's phases reuse them: the
// phases are separated by barriers): per warp [edge of the round][output of the tile round],
// and the running sums.
struct MswTiles {
    float t[8][32 * MSW_U][MSW_CB + 1];
    float a[8][MSW_CMAX];
};
__device__ __forceinline__ MswTiles &msw_tiles() {
    __shared__ MswTiles tiles;
    return tiles;
}
template <char Z, long long C, bool INT, class Epi, class Term, class Fin>
__device__ __forceinline__ void mm_spmm_warp_rows(long long rows, void *yp, const long long *rowptr,
                                                  const int *col, const Epi &epi, Term term, Fin fin) {
    static_assert(C <= MSW_CMAX, "bspmm_mm: fuse-mm-spmm keeps M * ceil(K/32) <= 64");
    static_assert(!Epi::lsm || (Z == 'F' && C >= 1 && C <= 32), "bspmm_mm: a log_softmax tail needs an f32 row of 1 to 32 columns");
    constexpr int CW = (int)((C + 31) / 32), CQ = (int)((C + MSW_CB - 1) / MSW_CB);
    constexpr int RE = 32 * MSW_U; // edges a round
    const int lane = (int)(threadIdx.x & 31), wib = (int)(threadIdx.x >> 5);
    const int wpb = blockDim.x >= 256 ? 8 : (int)(blockDim.x >> 5); // warps of a block taking rows
    if (wib >= wpb) return;
    float(&ts)[RE][MSW_CB + 1] = msw_tiles().t[wib];
    float *as = msw_tiles().a[wib];
    const long long nwarps = (long long)gridDim.x * wpb;
    for (long long i = (long long)blockIdx.x * wpb + wib; i < rows; i += nwarps) { // uniform across the warp
        const long long e0 = rowptr[i], e1 = rowptr[i + 1];
        long long s[CW];
#pragma unroll
        for (int p = 0; p < CW; p++) s[p] = 0;
        if constexpr (!INT) {
            for (int c = lane; c < C; c += 32) as[c] = 0.0f;
            __syncwarp();
        }
        // the columns of a round's edges are requested a round ahead (a lane past the row's end
        // reads the row's first edge), so a round waits for one gather, not two
        long long jn[MSW_U];
#pragma unroll
        for (int u = 0; u < MSW_U; u++) jn[u] = e0 < e1 ? col[e0 + 32 * u + lane < e1 ? e0 + 32 * u + lane : e0] : 0;
        for (long long eb = e0; eb < e1; eb += RE) {
            const int nr = (int)(e1 - eb < RE ? e1 - eb : RE); // edges of this round
            long long j[MSW_U];
#pragma unroll
            for (int u = 0; u < MSW_U; u++) {
                j[u] = jn[u];
                const long long en = eb + RE + 32 * u + lane;
                if (eb + RE < e1) jn[u] = col[en < e1 ? en : e0];
            }
            if constexpr (INT) {
#pragma unroll
                for (int u = 0; u < MSW_U; u++) {
                    if (32 * u >= nr) break; // uniform
                    const int nb = nr - 32 * u < 32 ? nr - 32 * u : 32;
                    const bool has = lane < nb;
                    const long long e = eb + 32 * u + (has ? lane : 0);
#pragma unroll
                    for (int p = 0; p < CW; p++) { // outputs 32 p .. 32 p + 31: lane c % 32 keeps c's sum
                        const int cn = (int)(C - 32LL * p < 32 ? C - 32LL * p : 32);
                        for (int cl = 0; cl < cn; cl++) {
                            const u32 plus = __ballot_sync(0xffffffffu, has && term(e, j[u], 32LL * p + cl) > 0.0f);
                            if (lane == cl) s[p] += 2 * (long long)popc(plus) - nb;
                        }
                    }
                }
            } else {
#pragma unroll 1
                for (int q = 0; q < CQ; q++) {
                    float tv[MSW_U][MSW_CB]; // every gather of the round before any store
#pragma unroll
                    for (int u = 0; u < MSW_U; u++) {
                        const bool has = 32 * u + lane < nr;
                        const long long e = eb + 32 * u + (has ? lane : 0);
#pragma unroll
                        for (int cl = 0; cl < MSW_CB; cl++) {
                            const long long c = (long long)q * MSW_CB + cl;
                            tv[u][cl] = has && c < C ? term(e, j[u], c) : 0.0f;
                        }
                    }
#pragma unroll
                    for (int u = 0; u < MSW_U; u++)
#pragma unroll
                        for (int cl = 0; cl < MSW_CB; cl++) ts[32 * u + lane][cl] = tv[u][cl];
                    __syncwarp();
                    const long long c = (long long)q * MSW_CB + lane;
                    if (lane < MSW_CB && c < C) {
                        float a = as[c];
#pragma unroll
                        for (int l0 = 0; l0 < RE; l0 += 16) {
                            if (l0 >= nr) break;
                            float v[16];
#pragma unroll
                            for (int l = 0; l < 16; l++) v[l] = ts[l0 + l][lane];
#pragma unroll
                            for (int l = 0; l < 16; l++)
                                if (l0 + l < nr) a = fadd(a, v[l]);
                        }
                        as[c] = a;
                    }
                    __syncwarp();
                }
            }
        }
        if constexpr (Epi::lsm) { // the row tail: lane c holds output c (C <= 32)
            const long long c = lane;
            float v = 0.0f;
            if (c < C) v = ep_val(epi, i, c, fin(i, c, INT ? (float)s[0] : as[c]));
            const float o = lsm_warp<C>(lane, v);
            if (c < C) ((float *)yp)[i * C + c] = o;
        } else {
#pragma unroll
            for (int p = 0; p < CW; p++) {
                const long long c = 32LL * p + lane;
                const float v = INT ? (float)s[p] : (c < C ? as[c] : 0.0f);
                if constexpr (Z == 'B') {
                    const u32 word = __ballot_sync(0xffffffffu, c < C && ep_bit(epi, i, c, fin(i, c, v)) != 0u);
                    if (lane == 0) ((u32 *)yp)[i * words_of(C) + p] = word;
                } else {
                    if (c < C) ((float *)yp)[i * C + c] = ep_val(epi, i, c, fin(i, c, v));
                }
            }
        }
        if constexpr (!INT) __syncwarp(); // the sums are read before the next row clears them
    }
}

// Adjacency B (pattern + factor vectors): y[i, c] = rowf[i] * sum_j colf[j] v(t[j, c]) (the
// +-1 sum when X = B and the factors are unit).  rows = N; grid: rows * 32 threads.
template <char P, char Q, char X, char Z, long long K, long long C, bool WT, bool UNIT, int METHOD,
          class EM = EpEnd, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_mm_adjb(long long rows, void *yp, const long long *rowptr, const int *col,
                                              const float *rowf, const float *colf, const void *xp,
                                              const void *wp, EM em = EM(), Epi epi = Epi()) {
    static_assert((P == 'F' || P == 'B') && (Q == 'F' || Q == 'B') && (X == 'F' || X == 'B') &&
                      (Z == 'F' || Z == 'B'),
                  "bspmm_mm: precision letters are F or B");
    static_assert(!WT || Q == 'B', "bspmm_mm: only b1 weights can be transposed");
    constexpr bool INT = X == 'B' && UNIT;
    auto fin = [&](long long i, long long, float acc) { return fmul(rowf[i], acc); };
    mm_spmm_warp_rows<Z, C, INT>(rows, yp, rowptr, col, epi, [&](long long, long long j, long long c) {
        if constexpr (INT) return mm_spmm_tbit<P, Q, K, C, WT>(j, c, xp, wp, em) ? 1.0f : -1.0f;
        else if constexpr (X == 'B') return signed_by(colf[j], mm_spmm_tbit<P, Q, K, C, WT>(j, c, xp, wp, em));
        else return fmul(colf[j], mm_spmm_tval<P, Q, K, C, WT>(j, c, xp, wp, em));
    }, fin);
}

// Adjacency F (per-edge weights): y[i, c] = sum_e w[e] v(t[col[e], c]).  rows = N; grid as above.
template <char P, char Q, char X, char Z, long long K, long long C, bool WT, class EM = EpEnd, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_mm_adjf(long long rows, void *yp, const long long *rowptr, const int *col,
                                              const float *w, const void *xp, const void *wp, EM em = EM(),
                                              Epi epi = Epi()) {
    static_assert((P == 'F' || P == 'B') && (Q == 'F' || Q == 'B') && (X == 'F' || X == 'B') &&
                      (Z == 'F' || Z == 'B'),
                  "bspmm_mm: precision letters are F or B");
    static_assert(!WT || Q == 'B', "bspmm_mm: only b1 weights can be transposed");
    auto fin = [](long long, long long, float acc) { return acc; };
    mm_spmm_warp_rows<Z, C, false>(rows, yp, rowptr, col, epi, [&](long long e, long long j, long long c) {
        if constexpr (X == 'B') return signed_by(w[e], mm_spmm_tbit<P, Q, K, C, WT>(j, c, xp, wp, em));
        else return fmul(w[e], mm_spmm_tval<P, Q, K, C, WT>(j, c, xp, wp, em));
    }, fin);
}

} // namespace bgnn

#endif // BGNN_MM_SPMM_CUH
