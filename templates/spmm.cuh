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

// ---- A warp a row (bg_plan_bspmm_rows: float activations, C <= 128; the per-launch kernels) ----
// The same sums as spmm_adjb_elem / spmm_adjf_elem: each output's terms added from +0 in edge
// order, then the row factor.  Lane l holds outputs l + 32 p, p < ceil(C / 32) (those below C).
// A row's columns (and per-edge weights) are read 32 at a time (lane k edge eb + k; the next 32
// requested during these), then handed out by shuffles, SPR_E edges a batch: every gather of a
// batch is unconditional (an edge past the row's end reads the row's first edge again, its term
// unused) so the batch's factor and float loads go out together, and only the ordered adds are
// predicated.  A row of
// up to SPR_E edges waits on two dependent round trips (the thread-an-element form: two an edge
// for a row's first d mod 8 edges, two a batch of 8 after).
// With the work list SLOTS (plan.h bg_plan_mm_slots, blocks of 256) block b takes slots b, b +
// grid, ... as mm_spmm.cuh does; a hub slot's row goes to the whole block: each step, warp w
// gathers the terms of SPR_E edges into the block's stage (edge row 8 w + k), then warp 0 adds
// the step's terms in edge order from shared memory: the hub's gathers in parallel, its adds
// still in order (Cora's row of 169 neighbours: 3 steps instead of 22 batches of 2 round trips),
// the next step's gathers under them (two stage buffers; block_row).  The stage holds at most
// SPR_SC columns (two buffers of 64 edges x 64 columns, 32 KB of static shared memory): a wider
// hub row is added in passes of SPR_SC columns, each over all its edges.
constexpr int SPR_E = 8;             // a warp's edges a batch
constexpr int SPR_STEP = 8 * SPR_E;  // a hub step's edges (8 warps)
constexpr long long SPR_SC = 64;     // a hub pass's columns
template <long long C>
struct SprStage {
    float t[SPR_STEP][C];
};
template <long long C>
__device__ __forceinline__ SprStage<C> *spr_stage2() { // two buffers (spmm_warp_rows' block_row)
    __shared__ SprStage<C> stage[2];
    return stage;
}

// TERM(e, j, c, we): the term of edge e (neighbour j) for output c; we is w[e] where W is not
// null (read with the edge's neighbour, 32 edges a coalesced load, and handed out by the same
// shuffles: a per-edge weight read by each warp edge by edge was one more L2 request an edge,
// Reddit-sized gcn_fp32's 41-wide aggregation 5.25 ms against 4.37 for gcn_full's factors), else 0.
template <char Z, long long C, class Epi, class Term, class Fin>
__device__ __forceinline__ void spmm_warp_rows(long long rows, void *yp, const long long *rowptr, const int *col,
                                               const float *w, const int4 *slots, const Epi &epi, Term term,
                                               Fin fin) {
    static_assert(C >= 1 && C <= 128, "bspmm rows: at most 128 outputs (four a lane)");
    static_assert(!Epi::lsm, "bspmm rows: no log_softmax tail");
    constexpr int CW = (int)((C + 31) / 32);
    constexpr long long SC = C < SPR_SC ? C : SPR_SC;   // the hub stage's columns
    constexpr int PW = (int)((SC + 31) / 32);           // a hub pass's outputs a lane
    constexpr int NPASS = (CW + PW - 1) / PW;
    const int lane = (int)(threadIdx.x & 31), wib = (int)(threadIdx.x >> 5);
    // the row's result: lane l's outputs l + 32 p through the epilogue
    auto store_row = [&](long long i, const float *acc) {
#pragma unroll
        for (int p = 0; p < CW; p++) {
            const long long c = 32LL * p + lane;
            if constexpr (Z == 'B') {
                const u32 word = __ballot_sync(0xffffffffu, c < C && ep_bit(epi, i, c, fin(i, acc[p])) != 0u);
                if (lane == 0) ((u32 *)yp)[i * words_of(C) + p] = word;
            } else {
                if (c < C) ((float *)yp)[i * C + c] = ep_val(epi, i, c, fin(i, acc[p]));
            }
        }
    };
    // this lane's edge e: its neighbour and weight (0 without W)
    auto edge_of = [&](long long e, int &j, float &we) {
        j = col[e];
        we = w ? w[e] : 0.0f;
    };
    // the terms of edges eb .. eb + SPR_E - 1 (those below e1; the others re-read edge e0), the
    // neighbours and weights from lanes k0 .. k0 + SPR_E - 1 of jr and wr, of lane's outputs
    // p0 + q, q < NP
    auto batch = [&](long long e0, long long e1, long long eb, int jr, float wr, int k0, int p0, auto &t) {
        constexpr int NP = (int)(sizeof(t[0]) / sizeof(float));
#pragma unroll
        for (int k = 0; k < SPR_E; k++) {
            const long long j = __shfl_sync(0xffffffffu, jr, k0 + k);
            const float we = w ? __shfl_sync(0xffffffffu, wr, k0 + k) : 0.0f;
            const long long e = eb + k < e1 ? eb + k : e0;
#pragma unroll
            for (int q = 0; q < NP; q++) {
                const long long c = 32LL * (p0 + q) + lane;
                t[k][q] = c < C ? term(e, j, c, we) : 0.0f;
            }
        }
    };
    auto warp_row = [&](long long i, long long e0, long long e1) {
        float acc[CW];
#pragma unroll
        for (int p = 0; p < CW; p++) acc[p] = 0.0f;
        int jn = 0;
        float wn = 0.0f;
        if (e0 < e1) edge_of(e0 + lane < e1 ? e0 + lane : e0, jn, wn);
        for (long long eb = e0; eb < e1; eb += 32) { // a round of 32 columns, warp-uniform
            const int jr = jn;
            const float wr = wn;
            if (eb + 32 < e1) edge_of(eb + 32 + lane < e1 ? eb + 32 + lane : e0, jn, wn);
            const int nr = (int)(e1 - eb < 32 ? e1 - eb : 32);
            for (int k0 = 0; k0 < nr; k0 += SPR_E) {
                float t[SPR_E][CW];
                batch(e0, e1, eb + k0, jr, wr, k0, 0, t);
#pragma unroll
                for (int k = 0; k < SPR_E; k++)
                    if (k0 + k < nr)
#pragma unroll
                        for (int p = 0; p < CW; p++) acc[p] = fadd(acc[p], t[k][p]);
            }
        }
        store_row(i, acc);
    };
    // row i by the whole block of 8 warps (every thread calls it; barriers inside), in NPASS
    // passes of PW outputs a lane (SC columns), each over all the row's edges.  The stage
    // has two buffers, steps in turn: warp 0 adds step s's terms while the other warps gather
    // step s + 1's into the other buffer, one barrier a step (a buffer is written again two
    // steps later, after the barrier that warp 0 reaches only once it has added it).  Each
    // warp's neighbours of the next step are requested with this step's gathers; warp 0 reads
    // 8 staged terms before adding them in edge order (a step's 64 slots are all written every
    // step, those past the row's end unused).
    auto block_row = [&](long long i, long long e0, long long e1) {
        SprStage<SC> *st = spr_stage2<SC>();
        float acc[CW];
#pragma unroll
        for (int p = 0; p < CW; p++) acc[p] = 0.0f;
        const int kl = lane & (SPR_E - 1);
        auto edge_at = [&](long long sb, int &j, float &we) { // this lane's edge of step sb
            const long long e = sb + (long long)SPR_E * wib + kl;
            edge_of(e < e1 ? e : e0, j, we);
        };
        int b = 0;
#pragma unroll
        for (int pass = 0; pass < NPASS; pass++) {
            const int p0 = pass * PW;
            int jr;
            float wr;
            edge_at(e0, jr, wr);
            for (long long sb = e0; sb < e1; sb += SPR_STEP, b ^= 1) { // block-uniform
                float t[SPR_E][PW];
                batch(e0, e1, sb + (long long)SPR_E * wib, jr, wr, 0, p0, t);
                if (sb + SPR_STEP < e1) edge_at(sb + SPR_STEP, jr, wr);
#pragma unroll
                for (int k = 0; k < SPR_E; k++)
#pragma unroll
                    for (int q = 0; q < PW; q++)
                        if (32 * q + lane < SC) st[b].t[SPR_E * wib + k][32 * q + lane] = t[k][q];
                __syncthreads(); // step sb is staged
                if (wib == 0) {
                    const int ns = (int)(e1 - sb < SPR_STEP ? e1 - sb : SPR_STEP);
                    for (int k0 = 0; k0 < ns; k0 += SPR_E) {
                        float v[SPR_E][PW];
#pragma unroll
                        for (int k = 0; k < SPR_E; k++)
#pragma unroll
                            for (int q = 0; q < PW; q++)
                                v[k][q] = 32 * q + lane < SC ? st[b].t[k0 + k][32 * q + lane] : 0.0f;
#pragma unroll
                        for (int k = 0; k < SPR_E; k++)
                            if (k0 + k < ns)
#pragma unroll
                                for (int q = 0; q < PW; q++)
                                    if (p0 + q < CW) acc[p0 + q] = fadd(acc[p0 + q], v[k][q]);
                    }
                }
            }
        }
        if (wib == 0) store_row(i, acc);
        __syncthreads(); // the stage is free again
    };
    if (slots && blockDim.x == 256) { // the work list in blocks' slots (bgnn_common.cuh slots_walk)
        slots_walk(rows, slots, wib, block_row, warp_row);
        return;
    }
    for (long long i = thread_index() >> 5; i < rows; i += thread_stride() >> 5) // warp-uniform
        warp_row(i, rowptr[i], rowptr[i + 1]);
}

// Adjacency B a warp a row: y[i, c] = rowf[i] * sum_j fl(colf[j] * x[j, c]).
template <char Z, long long C, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_rows_adjb(long long rows, void *yp, const long long *rowptr, const int *col,
                                                const float *rowf, const float *colf, const float *x,
                                                const int4 *slots, Epi epi = Epi()) {
    spmm_warp_rows<Z, C>(rows, yp, rowptr, col, nullptr, slots, epi,
                         [&](long long, long long j, long long c, float) { return fmul(colf[j], x[j * C + c]); },
                         [&](long long i, float acc) { return fmul(rowf[i], acc); });
}

// Adjacency F a warp a row: y[i, c] = sum_e fl(w[e] * x[col[e], c]).
template <char Z, long long C, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_rows_adjf(long long rows, void *yp, const long long *rowptr, const int *col,
                                                const float *w, const float *x, const int4 *slots, Epi epi = Epi()) {
    spmm_warp_rows<Z, C>(rows, yp, rowptr, col, w, slots, epi,
                         [&](long long, long long j, long long c, float we) { return fmul(we, x[j * C + c]); },
                         [](long long, float acc) { return acc; });
}

// ---- Wide rows of float activations (bg_plan_bspmm_wide: 256 columns or more; a launch's own
// kernel, blocks of 256) -------------------------------------------------------------------
// The same sums as spmm_adjb_elem (each output's terms fl(colf[j] * x[j, c]) added from +0 in edge
// order, then fl(rowf[i] * s), then the epilogue), by two kinds of work in one launch:
//   rows of at most LONG edges (the plan's BG_PLAN_LONG_ROW_EDGES, the bound by which
//     plan/row_order.c counts the long rows): SwdShape::T threads a row, thread t the K outputs
//     t, t + T, ... (a warp's loads still 32 consecutive columns), its neighbours' ids and factors
//     read once for the K sums (swd_row_cols).  A thread an output made Cora's 1,433-wide
//     aggregation 3.9 million threads, about 14 waves each waiting on its row's range before its
//     loads: 17 us with no edge at all, 31 us on the graph (H200, bench/spmm_csr_probe.cu);
//     K = ceil(C / 256) outputs a thread, 10 and 19;
//   longer rows (the first order[0].y entries of the work list ORDER, plan.h bg_plan_row_order: the
//     rows by their edges, most first) in slices of SWD_SW columns, a block a slice: the block
//     loads SWD_SE edges' terms of the slice into shared memory at once, then SWD_SW threads add
//     them in edge order.  Cora's row of 168 edges waits on 3 such steps instead of 168 / 2
//     dependent loads a thread (its kernel 46.9 us with 8 outputs a thread and no such path).
// Every thread of the block runs the second loop (barriers inside); any grid is correct.
constexpr int SWD_SW = 32, SWD_SE = 64;
template <long long C>
struct SwdShape {
    static constexpr int K = (int)((C + 255) / 256);
    static constexpr long long T = ((C + K - 1) / K + 31) / 32 * 32, NS = (C + SWD_SW - 1) / SWD_SW;
};
// The K sums of one row's outputs c0, c0 + T, ... (those below C; 0 for the others) over its
// edges e0 .. e1 - 1 in order, U of them unrolled: each neighbour's id and factor read once for
// the K sums.
template <long long C, int K, long long T, int U>
__device__ __forceinline__ void swd_row_sums(long long c0, long long e0, long long e1, const int *col, const float *colf,
                                             const float *x, float (&acc)[K]) {
#pragma unroll
    for (int k = 0; k < K; k++) acc[k] = 0.0f;
#pragma unroll U
    for (long long e = e0; e < e1; e++) {
        const long long j = col[e];
        const float cj = colf[j];
#pragma unroll
        for (int k = 0; k < K; k++) {
            const long long c = c0 + k * T;
            if (c < C) acc[k] = fadd(acc[k], fmul(cj, x[j * C + c]));
        }
    }
}
// Row i's outputs c0, c0 + T, ... (K of them, those below C) by one thread, U edges unrolled,
// unless the row has more than LONG edges (then false, nothing written).
template <long long C, int K, long long T, int U, long long LONG, class Epi>
__device__ __forceinline__ bool swd_row_cols(long long i, long long c0, float *y, const long long *rowptr,
                                             const int *col, const float *rowf, const float *colf, const float *x,
                                             const Epi &epi) {
    const long long e0 = rowptr[i], e1 = rowptr[i + 1];
    if (e1 - e0 > LONG) return false;
    float acc[K];
    swd_row_sums<C, K, T, U>(c0, e0, e1, col, colf, x, acc);
    const float rf = rowf[i];
#pragma unroll
    for (int k = 0; k < K; k++) {
        const long long c = c0 + k * T;
        if (c < C) y[i * C + c] = ep_val(epi, i, c, fmul(rf, acc[k]));
    }
    return true;
}
// Work item `it` of the long rows (ORDER's first order[0].y rows, NS slices of SWD_SW columns
// each): row i, its first column cs and its edges e0 .. e1 - 1.
struct SwdSlice {
    long long i, cs, e0, e1;
};
template <long long NS>
__device__ __forceinline__ SwdSlice swd_slice(const int4 *order, long long it) {
    const int4 o = order[1 + it / NS];
    const long long e0 = (long long)(((unsigned long long)(unsigned)o.w << 32) | (unsigned)o.z);
    return SwdSlice{o.x, (it % NS) * SWD_SW, e0, e0 + o.y};
}
// The block's sum of slice s's column cs + tid for threads tid < SWD_SW (0 for the others): SWD_SE
// edges' terms of the slice at a time into shared memory, then added in edge order.  Every
// thread of the block calls it (barriers inside).
template <long long C>
__device__ __forceinline__ float swd_slice_sum(const SwdSlice &s, const int *col, const float *colf, const float *x) {
    __shared__ float st[SWD_SE][SWD_SW];
    const int tid = (int)threadIdx.x;
    float acc = 0.0f;
    for (long long eb = s.e0; eb < s.e1; eb += SWD_SE) {
        const int ne = (int)(s.e1 - eb < SWD_SE ? s.e1 - eb : SWD_SE);
        // a term of the step: edge e, column cs + c (0 past the row or the columns)
        const auto term = [&](int q) {
            const int e = q / SWD_SW, c = q % SWD_SW;
            if (e >= ne || s.cs + c >= C) return 0.0f;
            const long long j = col[eb + e];
            return fmul(colf[j], x[j * C + s.cs + c]);
        };
        if (blockDim.x == 256) { // every load of the step in flight before the first store
            constexpr int Q = SWD_SE * SWD_SW / 256;
            float v[Q];
#pragma unroll
            for (int u = 0; u < Q; u++) v[u] = term(tid + 256 * u);
            __syncthreads(); // the last step's adds are done
#pragma unroll
            for (int u = 0; u < Q; u++) st[(tid + 256 * u) / SWD_SW][(tid + 256 * u) % SWD_SW] = v[u];
        } else {
            __syncthreads();
            for (int q = tid; q < SWD_SE * SWD_SW; q += (int)blockDim.x) st[q / SWD_SW][q % SWD_SW] = term(q);
        }
        __syncthreads();
        if (tid < SWD_SW)
            for (int e = 0; e < ne; e++) acc = fadd(acc, st[e][tid]);
    }
    return acc;
}
template <long long C, long long LONG, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_wide_adjb(long long rows, float *y, const long long *rowptr, const int *col,
                                                const float *rowf, const float *colf, const float *x, const int4 *order,
                                                Epi epi = Epi()) {
    using S = SwdShape<C>;
    constexpr long long T = S::T, NS = S::NS;
    for (long long t = thread_index(); t < rows * T; t += thread_stride()) // long rows: the second loop's
        swd_row_cols<C, S::K, T, 2, LONG>(t / T, t % T, y, rowptr, col, rowf, colf, x, epi);
    const int tid = (int)threadIdx.x;
    const long long nlong = order[0].y;
    for (long long it = blockIdx.x; it < nlong * NS; it += gridDim.x) { // block-uniform
        const SwdSlice s = swd_slice<NS>(order, it);
        const float acc = swd_slice_sum<C>(s, col, colf, x);
        if (tid < SWD_SW && s.cs + tid < C) y[s.i * C + s.cs + tid] = ep_val(epi, s.i, s.cs + tid, fmul(rowf[s.i], acc));
    }
}

} // namespace bgnn

#endif // BGNN_SPMM_CUH
