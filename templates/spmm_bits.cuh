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
// ... (CW = ceil(C/32) accumulators, one per word).  The rows come from the graph's work list
// (the graph array ORDER, plan.h bg_plan_row_order): by edges, most first, so a block's warps
// take rows of similar length and the longest start first, each warp's row and range in one
// 16-byte load.  A row of at least bg_plan_bits_split_min edges (the list's first `hubs`) is
// CW warps, one a 32-column word, each summing its columns in the same order: a hub is then CW
// shorter chains, not one (the Reddit-sized graph's rows of 10^5 edges held a block, and so an
// SM's slot, for most of the kernel).  Without a list (the per-graph kernel) rows go in index
// order.
//
// The edges go 32 at a time: lane q loads edge q's column and factor (coalesced) and then, for
// rows of at most 8 words (C <= 256), the CW words of that neighbour's row of x, so the 32
// gathers of a step are in flight together; the next step's columns and factors are requested
// before this step's sums, and its rows right after them.  Then the warp takes the edges in CSR
// order: each edge's factor and words go to every lane (through the warp's stage in shared
// memory, two broadcast loads an edge, in blocks of at most 8 warps; by shuffle, one a word,
// in larger ones), and lane l adds +-factor by bit l of each word, edge after edge (the
// sequential order).  So a row of d edges is about d / 32 dependent gathers, not d / 4 (Cora's
// 168-neighbour row, Reddit-sized hubs of 10^5).  Wider rows (C > 256) load U = 1 row at a
// time, a broadcast to the warp.  Output b1: one __ballot_sync per word, padding bits zero.
#ifndef BGNN_SPMM_BITS_CUH
#define BGNN_SPMM_BITS_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"
#include "spmm_bits_slots.cuh"

namespace bgnn {

// The CW words of row j of x (rows of SW words) into w[] (16-byte loads when a whole row of a
// multiple of 4 words is read).
template <int CW, int SW = CW>
__device__ __forceinline__ void spmm_bits_row(const u32 *x, long long j, u32 *w) {
    if constexpr (CW == SW && CW % 4 == 0) {
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
        for (int k = 0; k < CW; k++) w[k] = x[j * SW + k];
    }
}

// The row's sums (acc, lane l's column l + 32 w in acc[w]) over edges e0 .. e1 - 1 when a row
// of x is at most 8 words: 32 edges a step, lane q gathering edge q's row (above).  Pipelined
// two steps deep: during step b's sums the rows of step b + 32 (whose columns came during the
// step before) and the columns of step b + 64 are in flight.  x's rows are SW words; the sums
// are of the CW words from x (a hub's word: CW 1, x at that word).
// The warps' stage (blocks of at most 8 warps): each warp's step, 32 rows of up to 8 words and
// 32 factors.  One variable for every instantiation (a kernel running several aggregations,
// the fused one, holds one stage, 9 KB; a warp's aggregations run one after another, each
// step behind a __syncwarp).
struct BitsStage {
    u32 words[8 * 32 * 8];
    u32 nf[8 * 32];
};
__device__ __forceinline__ BitsStage &bits_stage() {
    __shared__ __align__(16) BitsStage s;
    return s;
}

// A staged row of CWP words (1, 2, 4 or 8) into w[]: one broadcast load per 16 bytes.
template <int CWP>
__device__ __forceinline__ void spmm_bits_stage_load(const u32 *p, u32 (&w)[CWP]) {
    if constexpr (CWP % 4 == 0) {
#pragma unroll
        for (int k = 0; k < CWP; k += 4) {
            const uint4 v = *(const uint4 *)(p + k);
            w[k] = v.x; w[k + 1] = v.y; w[k + 2] = v.z; w[k + 3] = v.w;
        }
    } else if constexpr (CWP == 2) {
        const uint2 v = *(const uint2 *)p;
        w[0] = v.x; w[1] = v.y;
    } else {
        w[0] = p[0];
    }
}

template <bool ADJF, int CW, int SW = CW, bool STAGED = false>
__device__ __forceinline__ void spmm_bits_lanes(long long e0, long long e1, const int *col, const float *factor,
                                                const u32 *x, unsigned lane, float (&acc)[CW]) {
    const unsigned sh = 31u - lane;
    constexpr int CWP = CW <= 1 ? 1 : CW <= 2 ? 2 : CW <= 4 ? 4 : 8;
    // the warp's own 32 x 8 words, whatever CWP (a hub's word and a whole row, or two
    // aggregations of the fused kernel, run side by side in one block's warps)
    u32 *st = bits_stage().words + (threadIdx.x >> 5) * 32 * 8;
    u32 *stf = bits_stage().nf + (threadIdx.x >> 5) * 32;
    (void)st;
    (void)stf;
    // edge b + lane's column (and, adjacency F, its weight) ...
    auto col_of = [&](long long b, int &j, float &w) {
        j = 0;
        w = 0.0f;
        if (b + lane < e1) {
            j = col[b + lane];
            if constexpr (ADJF) w = factor[b + lane];
        }
    };
    // ... then, the column in hand, the neighbour's words and (adjacency B) its factor colf[j]
    auto row_of = [&](long long b, int j, float w, u32 (&xw)[CW], float &f) {
        f = w;
#pragma unroll
        for (int k = 0; k < CW; k++) xw[k] = 0u;
        if (b + lane < e1) {
            spmm_bits_row<CW, SW>(x, j, xw);
            if constexpr (!ADJF) f = factor[j];
        }
    };
    int j, jn;
    float w, wn, f;
    u32 xw[CW];
    col_of(e0, j, w);
    row_of(e0, j, w, xw, f);
    col_of(e0 + 32, jn, wn);
    for (long long b = e0; b < e1; b += 32) {
        u32 xn[CW];
        float fn;
        row_of(b + 32, jn, wn, xn, fn); // the next step's rows
        col_of(b + 64, jn, wn);         // and the columns after those
        const int n = e1 - b < 32 ? (int)(e1 - b) : 32;
        const u32 nf = __float_as_uint(f) ^ 0x80000000u; // -factor: the bit flips its sign
        if constexpr (STAGED) { // the step's rows through the warp's stage: one broadcast load an edge
            __syncwarp();        // the last step's reads are done
#pragma unroll
            for (int k = 0; k < CWP; k++) st[lane * CWP + k] = k < CW ? xw[k] : 0u;
            stf[lane] = nf;
            __syncwarp();
#pragma unroll 4
            for (int q = 0; q < n; q++) {
                const u32 nfq = stf[q];
                u32 wq[CWP];
                spmm_bits_stage_load<CWP>(st + q * CWP, wq);
#pragma unroll
                for (int k = 0; k < CW; k++) acc[k] = fadd(acc[k], signed_by_shifted(nfq, wq[k], sh));
            }
        } else {
#pragma unroll 4
        for (int q = 0; q < n; q++) {
            const u32 nfq = __shfl_sync(0xffffffffu, nf, q);
#pragma unroll
            for (int k = 0; k < CW; k++)
                acc[k] = fadd(acc[k], signed_by_shifted(nfq, __shfl_sync(0xffffffffu, xw[k], q), sh));
        }
        }
        f = fn;
#pragma unroll
        for (int k = 0; k < CW; k++) xw[k] = xn[k];
    }
}

// The same sums for rows wider than 8 words: the lanes load 32 edges' columns and factors at
// a time (coalesced), then take them in CSR order by shuffle, U edges at a time, each row of x
// loaded by the whole warp (a broadcast, 16-byte loads where possible).
template <bool ADJF, int CW, int U, int SW = CW>
__device__ __forceinline__ void spmm_bits_wide(long long e0, long long e1, const int *col, const float *factor,
                                               const u32 *x, unsigned lane, float (&acc)[CW]) {
    const unsigned sh = 31u - lane;
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
                if (q0 + u < n) spmm_bits_row<CW, SW>(x, j, xw[u]);
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
}

// The row sums' epilogue: lane l's column 32 w + l of row i in acc[w - w0] for words w0 ..
// w0 + NW - 1.
template <bool ADJF, char Z, long long C, int NW, class Epi>
__device__ __forceinline__ void spmm_bits_store(long long i, int w0, const float (&acc)[NW], void *yp,
                                                const float *rowf, unsigned lane, const Epi &epi) {
    constexpr long long CWL = words_of(C);
#pragma unroll
    for (int k = 0; k < NW; k++) {
        const int w = w0 + k;
        const long long c = 32LL * w + lane;
        float v = acc[k];
        if constexpr (!ADJF) v = fmul(rowf[i], v);
        if constexpr (Z == 'B') {
            const u32 bit = c < C ? ep_bit(epi, i, c, v) : 0u;
            const u32 word = __ballot_sync(0xffffffffu, bit != 0u);
            if (lane == 0u && w < CWL) ((u32 *)yp)[i * CWL + w] = word;
        } else if constexpr (Epi::lsm) { // the row tail (fuse-log-softmax): lane c holds output c
            static_assert(C >= 1 && C <= 32 && NW == 1, "spmm_bits: a log_softmax tail needs a row of 1 to 32 columns");
            const float o = lsm_warp<C>((int)lane, c < C ? ep_val(epi, i, c, v) : 0.0f);
            if (c < C) ((float *)yp)[i * C + c] = o;
        } else {
            if (c < C) ((float *)yp)[i * C + c] = ep_val(epi, i, c, v);
        }
    }
}

// A whole row's sums in the order seq: lane l's column 32 k + l in acc[k] (from +0).
template <bool ADJF, int CW>
__device__ __forceinline__ void spmm_bits_seq_row(long long e0, long long e1, const int *col, const float *factor,
                                                  const u32 *x, unsigned lane, float (&acc)[CW]) {
#pragma unroll
    for (int w = 0; w < CW; w++) acc[w] = 0.0f;
    if constexpr (CW <= 8) {
        if (blockDim.x <= 256) spmm_bits_lanes<ADJF, CW, CW, true>(e0, e1, col, factor, x, lane, acc); // the stage holds 8 warps
        else spmm_bits_lanes<ADJF, CW>(e0, e1, col, factor, x, lane, acc);
    } else spmm_bits_wide<ADJF, CW, 1>(e0, e1, col, factor, x, lane, acc);
}

// A row {row, edges, first edge low, high} of the work list.
__device__ __forceinline__ void spmm_bits_item(int4 it, long long &i, long long &e0, long long &e1) {
    i = it.x;
    e0 = (long long)(((unsigned long long)(unsigned)it.w << 32) | (unsigned)it.z);
    e1 = e0 + it.y;
}

// bspmm_bits_rows in the order slots(SL, ST, SH): rows of at most ST edges as seq, longer
// ones in slots (spmm_bits_slots.cuh).  With the work list and blocks of 4 or 8 warps, its
// first `slot hubs` rows (at least SH edges: order[0].z) take 4 warps each, work items
// 4 k .. 4 k + 3 of hub k; later items are whole rows, one a warp.
template <bool ADJF, char Z, long long C, int ST, int SH, class Epi>
__device__ __forceinline__ void bspmm_bits_rows_slots(long long rows, void *yp, const long long *rowptr, const int *col,
                                                      const float *rowf, const float *factor, const u32 *x,
                                                      const int4 *order, const Epi &epi) {
    constexpr int CW = (int)words_of(C);
    const unsigned lane = threadIdx.x & 31u;
    const long long warps = thread_stride() >> 5;
    const long long t0 = thread_index() >> 5;
    const bool grouped = order && (blockDim.x & 127u) == 0 && blockDim.x <= 256;
    const long long hubs = grouped ? (long long)order[0].z : 0;
    for (long long t = t0; t < rows + 3 * hubs; t += warps) {
        long long i, e0, e1;
        float acc[CW];
        const bool group = t < 4 * hubs; // quarter t % 4 of hub t / 4
        if (group) {
            spmm_bits_item(order[1 + t / 4], i, e0, e1);
        } else if (order) {
            spmm_bits_item(order[1 + t - 3 * hubs], i, e0, e1);
        } else {
            i = t;
            e0 = rowptr[i];
            e1 = rowptr[i + 1];
        }
        if (group || e1 - e0 > ST) {
            if (!spmm_bits_slots_row<ADJF, CW>(e0, (int)(e1 - e0), e1 - e0 >= SH, group ? (int)(t & 3) : -1, col,
                                               factor, x, lane, bits_stage().words, 32 * 8, bits_stage().nf, acc))
                continue;
        } else {
            spmm_bits_seq_row<ADJF, CW>(e0, e1, col, factor, x, lane, acc);
        }
        spmm_bits_store<ADJF, Z, C, CW>(i, 0, acc, yp, rowf, lane, epi);
    }
}

// order: the graph's work list (plan.h bg_plan_row_order: int4 {hubs, long rows, slot hubs},
// then {row, edges, first edge low, high} by edges, most first), or nullptr for rows in index
// order.  SL: 0 for the order seq, else the slots of the order slots(SL, ST, SH)
// (bspmm_bits_rows_slots).  In seq, work item t of rows + hubs (CW - 1): t < hubs CW is word
// t % CW of hub t / CW, later ones a whole row.
template <bool ADJF, char Z, long long C, int SL = 0, int ST = 0, int SH = 0, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_bits_rows(long long rows, void *yp, const long long *rowptr, const int *col,
                                                const float *rowf, const float *factor, const u32 *x,
                                                const int4 *order, Epi epi = Epi()) {
    constexpr long long CWL = words_of(C);
    constexpr int CW = CWL > 0 ? (int)CWL : 1;
    if constexpr (C == 0) return; // no outputs (and no bits to read)
    if constexpr (SL > 0) {
        static_assert(SL == SlotsShape<CW>::S && ST >= 0 && SH > ST, "bspmm_bits_rows: the slots the codegen records");
        bspmm_bits_rows_slots<ADJF, Z, C, ST, SH>(rows, yp, rowptr, col, rowf, factor, x, order, epi);
        return;
    }
    const unsigned lane = threadIdx.x & 31u;
    const long long warps = thread_stride() >> 5;
    const long long t0 = thread_index() >> 5;
    const bool staged = blockDim.x <= 256; // the stage holds 8 warps' steps
    // the list's entry for a graph without hubs, requested with the header that says so
    int4 it = order && t0 < rows ? order[1 + t0] : make_int4(0, 0, 0, 0);
    const long long hubs = order && CW > 1 ? (long long)order[0].x : 0;
    for (long long t = t0; t < rows + hubs * (CW - 1); t += warps) {
        long long i, e0, e1;
        int word = -1; // a hub's word, or -1: the whole row
        if (order) {
            if (hubs > 0 || t != t0) {
                long long k = t;
                if (t < hubs * CW) {
                    k = t / CW;
                    word = (int)(t % CW);
                } else {
                    k = t - hubs * (CW - 1);
                }
                it = order[1 + k];
            }
            i = it.x;
            e0 = (long long)(((unsigned long long)(unsigned)it.w << 32) | (unsigned)it.z);
            e1 = e0 + it.y;
        } else {
            i = t;
            e0 = rowptr[i];
            e1 = rowptr[i + 1];
        }
        if (CW > 1 && word >= 0) { // one word of a hub: its 32 columns, the same order
            float acc[1] = {0.0f};
            if constexpr (CW <= 8) {
                if (staged) spmm_bits_lanes<ADJF, 1, CW, true>(e0, e1, col, factor, x + word, lane, acc);
                else spmm_bits_lanes<ADJF, 1, CW>(e0, e1, col, factor, x + word, lane, acc);
            }
            else spmm_bits_wide<ADJF, 1, 1, CW>(e0, e1, col, factor, x + word, lane, acc);
            spmm_bits_store<ADJF, Z, C, 1>(i, word, acc, yp, rowf, lane, epi);
            continue;
        }
        float acc[CW];
        spmm_bits_seq_row<ADJF, CW>(e0, e1, col, factor, x, lane, acc);
        spmm_bits_store<ADJF, Z, C, CW>(i, 0, acc, yp, rowf, lane, epi);
    }
}

} // namespace bgnn

#endif // BGNN_SPMM_BITS_CUH
