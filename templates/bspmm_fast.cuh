// bspmm_fast.cuh - fast bspmm.BBB / bspmm.BBF over the 0/1 adjacency (norm none / mean:
// every column factor is 1, so s_i = sum_{j in row i} v(x_j) is an exact integer).
//
// Semantics (docs/semantics.md 4): s[i,c] = sum_j v(x[j,c]) over row i of the CSR (self
// loops included when the model says so); output B: bin(s) = (s >= 0) (a row factor r_i > 0
// never changes the sign; an empty row gives s = 0 -> +1); output F: y = fl(rowf[i] * s)
// (rowf = nullptr means 1: norm none).  Integer sums: the result does not depend on the order
// in which edges are combined, so long rows are split across warps and combined with
// integer atomics, exactly.
//
// Layouts (no repacking: the canonical ones of bgnn_common.cuh / compiler/bg.h):
//   x  b1 [N][W], W = ceil(C/32) words per node, feature c = bit c%32 of word c/32, padding 0
//   y  b1 [N][W] (padding bits written 0) or f32 [N][C]
//   CSR rowptr int64[N+1], col int32[nnz] (any order within a row works; the integer sum is
//   order-free).
// Row-major node words are the GPU-friendly layout for a gather: one neighbour = W
// contiguous words = ONE 32-byte sector for C <= 256 (the authors' feature-word-major
// [W][N] layout costs W sectors per neighbour).
//
// Work decomposition: a SCHEDULE (built once per graph by the runtime on the host:
// plan/plan.c bg_plan_schedule, plan.h GRAPH array ITEMS) lists work items
// {row, chunk k, chunks nk, split slot}: a row of d edges is ceil(d/chunk) items (>= 1, so
// empty rows are written too); rows with nk > 1 get a split slot.  One warp per item
// (grid-stride over items: any grid works).  Items of split rows add their integer partial
// sums into partial[slot][C] (int32 atomics); the last item to finish (a per-slot counter)
// finalises the row and resets partial and counter to zero, so the buffers stay clean for
// the next launch (they must be zeroed once, at allocation).  Optionally (on graphs of
// BG_PLAN_GROUP_MIN_ROWS rows and more) an aligned block of rows that all have few edges is
// one GROUP item {first row, rows, 0, -1} whose rows the warp's slots take side by side.
// A chunk must stay below 2^BSPMM_PLANES edges (plan.h BG_PLAN_BSPMM_CHUNK).
//
// Reduction methods (reference-notes 4, semantics "method"), all exact and bit-identical:
//   METHOD_POPC2  (3): per (slot, word) lane a bit-sliced vertical counter of the ONES of the
//                 gathered words (Harley-Seal carry-save adders: LOP3 only, no XOR-popcount,
//                 which Hopper emulates); s = 2*ones - d (d = popc of the adjacency row);
//                 BBB compares bit-sliced ones >= ceil(d/2) without unpacking counts.
//   METHOD_ANDNOT (2): two vertical counters, ones (x & mask) and zeros (~x & mask);
//                 s = ones - zeros (BBB: bit-sliced ones >= zeros).
//   METHOD_IFELSE (1): one lane per feature; per neighbour, +1 or -1 per bit in an int.
// Lane layout (POPC2/ANDNOT): lane = slot * WG + w, WG = min(pow2ceil(W), 32) lanes per
// neighbour (one word each, coalesced), S = 32 / WG neighbours per warp round, 8 rounds in
// flight per batch (8 independent gathers per lane); word groups of 32 when W > 32.
//
// Code generator use (cg_cuda.c, plan.c bg_plan_bspmm_fast): per bspmm.BBB / BBF op
// (norm none: rowf = nullptr; norm mean: rowf = BgAdj rowf) a generated kernel calls
//   bspmm_bb_csr<C, 'B' or 'F', METHOD, false>(N, rowptr, col, rowf, x, y,
//       (const int4 *)items + 1, items[0] (nitems), items[2] (chunk), partial, done);
// partial [max(1, nsplit)][C] and done [max(1, nsplit)], zeroed once.  Launches that share
// partial/done must be stream-ordered (they are reset by the kernel).
// Measured on an H200 (docs/performance.md): POPC2 is fastest everywhere; ANDNOT 1.2-1.9x
// slower; IFELSE 3-7x slower.  The benchmark-only kernels built on these steps (the FRDC
// kernel, the hub-rows-in-shared-memory kernel, the GPU degree renumbering) are in
// bench/kernels/.
#ifndef BGNN_BSPMM_FAST_CUH
#define BGNN_BSPMM_FAST_CUH

#include "bgnn_common.cuh"

namespace bgnn {

enum { METHOD_IFELSE = 1, METHOD_ANDNOT = 2, METHOD_POPC2 = 3 }; // = BgMethod values

constexpr int BSPMM_PLANES = 12; // bit-sliced counter planes: counts < 4096

namespace fast_detail {

__host__ __device__ constexpr int pow2ceil(long long v) {
    int p = 1;
    while (p < v) p *= 2;
    return p;
}

// Carry-save adder: a + b + c = l + 2h, bitwise (two LOP3s).
__device__ __forceinline__ void csa(u32 &h, u32 &l, u32 a, u32 b, u32 c) {
    u32 u = a ^ b;
    h = (a & b) | (u & c);
    l = u ^ c;
}

// 32 bit-sliced counters of P planes (plane q holds bit q of each of the 32 counts).
template <int P> struct Vc {
    u32 p[P];
    __device__ __forceinline__ void zero() {
#pragma unroll
        for (int q = 0; q < P; q++) p[q] = 0u;
    }
    // Adds 8 words (Harley-Seal: 7 CSAs into planes 0..2, the weight-8 carry rippled up).
    __device__ __forceinline__ void add8(const u32 *v) {
        u32 t2a, t2b, t4a, t4b, t8;
        csa(t2a, p[0], p[0], v[0], v[1]);
        csa(t2b, p[0], p[0], v[2], v[3]);
        csa(t4a, p[1], p[1], t2a, t2b);
        csa(t2a, p[0], p[0], v[4], v[5]);
        csa(t2b, p[0], p[0], v[6], v[7]);
        csa(t4b, p[1], p[1], t2a, t2b);
        csa(t8, p[2], p[2], t4a, t4b);
#pragma unroll
        for (int q = 3; q < P; q++) {
            u32 c = p[q] & t8;
            p[q] ^= t8;
            t8 = c;
        }
    }
    // this += the counter of lane (lane ^ off), for every off = first, 2*first, ... < last.
    __device__ __forceinline__ void reduce_xor(int first, int last) {
        for (int off = first; off < last; off <<= 1) {
            u32 c = 0u;
#pragma unroll
            for (int q = 0; q < P; q++) {
                u32 a = p[q], b = __shfl_xor_sync(0xffffffffu, p[q], off);
                u32 u = a ^ b;
                p[q] = u ^ c;
                c = (a & b) | (u & c);
            }
        }
    }
    __device__ __forceinline__ int count(int b) const {
        int n = 0;
#pragma unroll
        for (int q = 0; q < P; q++) n |= (int)((p[q] >> b) & 1u) << q;
        return n;
    }
    // Bit b set iff count(b) >= k (0 <= k < 2^P).
    __device__ __forceinline__ u32 ge(int k) const {
        u32 gt = 0u, eq = 0xffffffffu;
#pragma unroll
        for (int q = P - 1; q >= 0; q--) {
            u32 kb = ((k >> q) & 1) ? 0xffffffffu : 0u;
            gt |= eq & p[q] & ~kb;
            eq &= ~(p[q] ^ kb);
        }
        return gt | eq;
    }
    // Bit b set iff count(b) >= o.count(b).
    __device__ __forceinline__ u32 ge(const Vc &o) const {
        u32 gt = 0u, eq = 0xffffffffu;
#pragma unroll
        for (int q = P - 1; q >= 0; q--) {
            gt |= eq & p[q] & ~o.p[q];
            eq &= ~(p[q] ^ o.p[q]);
        }
        return gt | eq;
    }
};

template <bool NC> __device__ __forceinline__ u32 ld_x(const u32 *p) {
    if constexpr (NC) return __ldg(p);
    else return *p;
}

// Streaming (evict-first) load for the adjacency, read once; x stays cached.  (An
// L1::no_allocate load measured slower: neighbouring lanes' column reads share sectors.)
__device__ __forceinline__ int ld_stream(const int *p) { return __ldcs(p); }

// After this warp added its partial sums of a split row: count it; the last warp of the row
// reads (and zeroes) the sums and writes the row.  rows_per = rows owned by the slot (1 for
// CSR, 4 for the FRDC kernel of bench/kernels/bspmm_frdc.cuh), row0 = first of them; rows
// >= n are skipped.
template <long long C, char Z>
__device__ __forceinline__ void split_finish(int slot, int nk, long long row0, int rows_per,
                                             long long n, int *partial, unsigned *done,
                                             const float *rowf, void *yp) {
    constexpr long long W = words_of(C);
    const int lane = threadIdx.x & 31;
    __threadfence();
    __syncwarp();
    unsigned last = 0;
    if (lane == 0) last = atomicAdd(&done[slot], 1u) == (unsigned)(nk - 1);
    last = __shfl_sync(0xffffffffu, last, 0);
    if (!last) return;
    __threadfence();
    int *ps = partial + (long long)slot * rows_per * C;
    for (int r = 0; r < rows_per; r++) {
        long long row = row0 + r;
        if (row >= n) break;
        for (long long w = 0; w < W; w++) {
            long long c = w * 32 + lane;
            int s = c < C ? atomicExch(&ps[r * C + c], 0) : 0;
            if constexpr (Z == 'B') {
                u32 word = __ballot_sync(0xffffffffu, c < C && s >= 0);
                if (lane == 0) ((u32 *)yp)[row * W + w] = word;
            } else {
                float rf = rowf ? rowf[row] : 1.0f;
                if (c < C) ((float *)yp)[row * C + c] = fmul(rf, (float)s);
            }
        }
    }
    if (lane == 0) done[slot] = 0u;
}

} // namespace fast_detail

namespace fast_detail {

// ---- the vertical-counter steps shared by the CSR kernels (POPC2, ANDNOT) ----------------
// The lane's place in the POPC2 / ANDNOT layout for word w (see count_edges).
template <long long C> struct LaneWord {
    static constexpr long long W = words_of(C);
    static constexpr int WG = W >= 32 ? 32 : pow2ceil(W); // lanes per neighbour
    static constexpr int S = 32 / WG;                     // neighbours per round
    int s;                                                // this lane's slot
    bool wvalid;
    u32 mask;
    __device__ __forceinline__ explicit LaneWord(long long w)
        : s((int)(threadIdx.x & 31) / WG), wvalid(w < W), mask(w < W ? word_mask(C, w) : 0u) {}
};

// Adds one batch of 8 gathered words (ok: the edge exists) to the counters.
template <int METHOD>
__device__ __forceinline__ void add_batch(Vc<BSPMM_PLANES> &ones, Vc<BSPMM_PLANES> &zeros,
                                          u32 (&v)[8], const bool (&ok)[8], u32 mask) {
    ones.add8(v);
    if constexpr (METHOD == METHOD_ANDNOT) {
#pragma unroll
        for (int k = 0; k < 8; k++) v[k] = ok[k] ? (~v[k] & mask) : 0u;
        zeros.add8(v);
    }
}

// Lane layout: lane = slot * WG + w % WG, WG = min(pow2ceil(W), 32) lanes per neighbour, S =
// 32 / WG neighbours per round.  count_edges adds the words w of the neighbours in edges
// [e0, e1) of col to the lane's counters; load(j, w) returns word w of neighbour j (from global
// memory or from a shared-memory copy).  Batches of 8 rounds: 8 independent gathers in
// flight per lane; the next batch's column indices are loaded before this batch's gathers
// (on a degree-ordered graph many gathers hit L1 or shared memory, and the column stream's
// DRAM latency would otherwise be exposed every batch).  (A variant that loads the column
// indices coalesced and hands them out with shuffles measured no faster at C = 64/128 and
// slower at 256.)
template <long long C, int METHOD, typename Load>
__device__ __forceinline__ void count_edges(Vc<BSPMM_PLANES> &ones, Vc<BSPMM_PLANES> &zeros,
                                            const int *__restrict__ col, long long e0,
                                            long long e1, long long w, Load load) {
    const LaneWord<C> L(w);
    constexpr int S = LaneWord<C>::S;
    const int s = L.s;
    if (e0 >= e1) return;
    int jc[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const long long e = e0 + s + S * k;
        jc[k] = e < e1 ? ld_stream(col + e) : -1;
    }
    for (long long base = e0; base < e1; base += 8 * S) {
        int jn[8];
#pragma unroll
        for (int k = 0; k < 8; k++) {
            const long long e = base + 8 * S + s + S * k;
            jn[k] = e < e1 ? ld_stream(col + e) : -1;
        }
        u32 v[8];
        bool ok[8];
#pragma unroll
        for (int k = 0; k < 8; k++) {
            ok[k] = jc[k] >= 0;
            v[k] = (ok[k] && L.wvalid) ? load((long long)jc[k], w) : 0u;
            jc[k] = jn[k];
        }
        add_batch<METHOD>(ones, zeros, v, ok, L.mask);
    }
}

// Combines the slots' counters of word w and writes the row (whole rows: B word or F values)
// or adds its integer sums to the split row's partial sums ps.  d = edges counted.
template <long long C, char Z, int METHOD>
__device__ __forceinline__ void finish_counts(Vc<BSPMM_PLANES> &ones, Vc<BSPMM_PLANES> &zeros,
                                              long long w, int d, long long row, bool split,
                                              int *ps, float rf, void *__restrict__ yp) {
    constexpr long long W = words_of(C);
    constexpr int WG = LaneWord<C>::WG, S = LaneWord<C>::S;
    const LaneWord<C> L(w);
    const int s = L.s;
    const bool wvalid = L.wvalid;
    const u32 mask = L.mask;
    ones.reduce_xor(WG, 32);
    if constexpr (METHOD == METHOD_ANDNOT) zeros.reduce_xor(WG, 32);
    if (!split && Z == 'B') {
        u32 word = METHOD == METHOD_POPC2 ? ones.ge((d + 1) >> 1) : ones.ge(zeros);
        if (s == 0 && wvalid) ((u32 *)yp)[row * W + w] = word & mask;
    } else {
        // Lane (s, w) unpacks bits b = t*S + s of word w.
#pragma unroll
        for (int t = 0; t < WG; t++) {
            const int b = t * S + s;
            const long long c = w * 32 + b;
            if (!wvalid || c >= C) continue;
            int sv = METHOD == METHOD_POPC2 ? 2 * ones.count(b) - d : ones.count(b) - zeros.count(b);
            if (split) atomicAdd(ps + c, sv);
            else ((float *)yp)[row * C + c] = fmul(rf, (float)sv);
        }
    }
}

// One work item of edges [e0, e1) of `row`: [e0, m) read through loadh, [m, e1) through
// loadg (m = e0: all through loadg), every word group, then finish_counts.
template <long long C, char Z, int METHOD, typename LoadH, typename LoadG>
__device__ __forceinline__ void count_item(const int *__restrict__ col, long long e0, long long m,
                                           long long e1, long long row, bool split, int *ps,
                                           float rf, void *__restrict__ yp, LoadH loadh,
                                           LoadG loadg) {
    constexpr long long W = words_of(C);
    constexpr int WG = LaneWord<C>::WG;
    constexpr long long NG = (W + WG - 1) / WG;
    for (long long g = 0; g < NG; g++) {
        Vc<BSPMM_PLANES> ones, zeros;
        ones.zero();
        if constexpr (METHOD == METHOD_ANDNOT) zeros.zero();
        const long long w = g * WG + (threadIdx.x & 31) % WG;
        count_edges<C, METHOD>(ones, zeros, col, e0, m, w, loadh);
        count_edges<C, METHOD>(ones, zeros, col, m, e1, w, loadg);
        finish_counts<C, Z, METHOD>(ones, zeros, w, (int)(e1 - e0), row, split, ps, rf, yp);
    }
}

// Group items: slot s of the warp takes rows row0 + s, row0 + s + S, ... of the group; the
// WG lanes of a slot hold the whole row's counters (no cross-slot reduction).  count_slot
// adds the slot's own edges [e0, e1), 8 per batch.
template <long long C, int METHOD, typename Load>
__device__ __forceinline__ void count_slot(Vc<BSPMM_PLANES> &ones, Vc<BSPMM_PLANES> &zeros,
                                           const int *__restrict__ col, long long e0,
                                           long long e1, long long w, Load load) {
    const LaneWord<C> L(w);
    for (long long base = e0; base < e1; base += 8) {
        u32 v[8];
        bool ok[8];
#pragma unroll
        for (int k = 0; k < 8; k++) {
            ok[k] = base + k < e1;
            const long long j = ok[k] ? ld_stream(col + base + k) : 0;
            v[k] = (ok[k] && L.wvalid) ? load(j, w) : 0u;
        }
        add_batch<METHOD>(ones, zeros, v, ok, L.mask);
    }
}

// The rows row0 .. row0+cnt-1 of a group item (each of few edges, whole rows).  hub_end:
// per-row counts of neighbours read through loadh (nullptr: none, all through loadg; the
// hub kernel of bench/kernels/bspmm_hub.cuh passes its shared-memory copy).
template <long long C, char Z, int METHOD, typename LoadH, typename LoadG>
__device__ __forceinline__ void group_rows(long long row0, int cnt,
                                           const long long *__restrict__ rowptr,
                                           const int *__restrict__ col,
                                           const float *__restrict__ rowf,
                                           const int *__restrict__ hub_end, void *__restrict__ yp,
                                           LoadH loadh, LoadG loadg) {
    constexpr long long W = words_of(C);
    constexpr int WG = LaneWord<C>::WG, S = LaneWord<C>::S;
    constexpr long long NG = (W + WG - 1) / WG;
    const int lane = threadIdx.x & 31, s = lane / WG;
    for (int r = s; r < cnt; r += S) {
        const long long row = row0 + r, rs = rowptr[row], re = rowptr[row + 1];
        const long long hb = hub_end ? rs + hub_end[row] : rs;
        const int d = (int)(re - rs);
        const float rf = (Z == 'F' && rowf) ? rowf[row] : 1.0f;
        for (long long g = 0; g < NG; g++) {
            const long long w = g * WG + lane % WG;
            const bool wvalid = w < W;
            Vc<BSPMM_PLANES> ones, zeros;
            ones.zero();
            if constexpr (METHOD == METHOD_ANDNOT) zeros.zero();
            count_slot<C, METHOD>(ones, zeros, col, rs, hb, w, loadh);
            count_slot<C, METHOD>(ones, zeros, col, hb, re, w, loadg);
            if constexpr (Z == 'B') {
                const u32 word = METHOD == METHOD_POPC2 ? ones.ge((d + 1) >> 1) : ones.ge(zeros);
                if (wvalid) ((u32 *)yp)[row * W + w] = word & word_mask(C, w);
            } else {
                for (int b = 0; b < 32; b++) {
                    const long long c = w * 32 + b;
                    if (!wvalid || c >= C) break;
                    const int sv = METHOD == METHOD_POPC2 ? 2 * ones.count(b) - d
                                                          : ones.count(b) - zeros.count(b);
                    ((float *)yp)[row * C + c] = fmul(rf, (float)sv);
                }
            }
        }
    }
}

} // namespace fast_detail

// ---- CSR kernel ---------------------------------------------------------------------------
// y = bspmm.BB{Z}(A, x) for the rows listed in items; see the file comment.
// NC: read x through the read-only (non-coherent) cache, for a kernel of its own; the
// generated fused kernel (x written earlier in the same kernel) passes false.
namespace fast_detail {
// METHOD_IFELSE over edges [e0, e1) of one row: one lane per feature of a group of 8 words;
// neighbours in order, +-1 per bit.
template <long long C, char Z, bool NC>
__device__ __forceinline__ void ifelse_range(const int *__restrict__ col, const u32 *x,
                                             long long e0, long long e1, long long row,
                                             bool split, int *ps, float rf,
                                             void *__restrict__ yp) {
    constexpr long long W = words_of(C);
    constexpr long long WB = 8, NGI = (W + WB - 1) / WB;
    const int lane = threadIdx.x & 31;
    for (long long g = 0; g < NGI; g++) {
        int cnt[WB];
#pragma unroll
        for (int u = 0; u < WB; u++) cnt[u] = 0;
        for (long long base = e0; base < e1; base += 32) {
            const long long e = base + lane;
            const int mycol = e < e1 ? ld_stream(col + e) : 0;
            const int m = e1 - base < 32 ? (int)(e1 - base) : 32;
            for (int t = 0; t < m; t++) {
                const long long j = __shfl_sync(0xffffffffu, mycol, t);
                const u32 *xj = x + j * W + g * WB;
#pragma unroll
                for (int u = 0; u < WB; u++)
                    if (g * WB + u < W) cnt[u] += ((ld_x<NC>(xj + u) >> lane) & 1u) ? 1 : -1;
            }
        }
#pragma unroll
        for (int u = 0; u < WB; u++) {
            const long long w = g * WB + u, c = w * 32 + lane;
            if (w >= W) break;
            if (split) {
                if (c < C) atomicAdd(ps + c, cnt[u]);
            } else if constexpr (Z == 'B') {
                u32 word = __ballot_sync(0xffffffffu, c < C && cnt[u] >= 0);
                if (lane == 0) ((u32 *)yp)[row * W + w] = word;
            } else {
                if (c < C) ((float *)yp)[row * C + c] = fmul(rf, (float)cnt[u]);
            }
        }
    }
}
} // namespace fast_detail

template <long long C, char Z, int METHOD, bool NC = true>
__device__ __forceinline__ void bspmm_bb_csr(long long n, const long long *__restrict__ rowptr,
                                             const int *__restrict__ col,
                                             const float *__restrict__ rowf,
                                             const u32 *x, void *__restrict__ yp,
                                             const int4 *__restrict__ items, long long nitems,
                                             int chunk, int *partial, unsigned *done) {
    using namespace fast_detail;
    static_assert(Z == 'B' || Z == 'F', "bspmm_bb_csr: output B or F");
    static_assert(METHOD >= 1 && METHOD <= 3, "bspmm_bb_csr: method");
    constexpr long long W = words_of(C);
    const long long warp0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    auto load = [&](long long j, long long w) { return ld_x<NC>(x + j * W + w); };
    for (long long it = warp0; it < nitems; it += nwarps) {
        const int4 item = items[it];
        if (item.z == 0) { // group item: rows item.x .. item.x + item.y - 1, whole
            if constexpr (METHOD == METHOD_IFELSE) {
                for (int r = 0; r < item.y; r++) {
                    const long long row = item.x + r;
                    const float rf = (Z == 'F' && rowf) ? rowf[row] : 1.0f;
                    ifelse_range<C, Z, NC>(col, x, rowptr[row], rowptr[row + 1], row, false,
                                           nullptr, rf, yp);
                }
            } else {
                group_rows<C, Z, METHOD>(item.x, item.y, rowptr, col, rowf, nullptr, yp, load, load);
            }
            continue;
        }
        const long long row = item.x;
        const long long rs = rowptr[row], re = rowptr[row + 1];
        const long long e0 = rs + (long long)item.y * chunk;
        const long long e1 = e0 + chunk < re ? e0 + chunk : re;
        const bool split = item.w >= 0;
        int *ps = split ? partial + (long long)item.w * C : nullptr;
        const float rf = (Z == 'F' && rowf) ? rowf[row] : 1.0f;
        if constexpr (METHOD == METHOD_IFELSE) {
            ifelse_range<C, Z, NC>(col, x, e0, e1, row, split, ps, rf, yp);
        } else {
            count_item<C, Z, METHOD>(col, e0, e0, e1, row, split, ps, rf, yp, load, load);
        }
        if (split) split_finish<C, Z>(item.w, item.z, row, 1, n, partial, done, rowf, yp);
    }
}

} // namespace bgnn

#endif // BGNN_BSPMM_FAST_CUH
