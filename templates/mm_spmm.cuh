// mm_spmm.cuh - bspmm_mm.PQX.XYZ (fuse-mm-spmm; docs/ir.md 4.2, docs/semantics.md 7):
// y = A t over a CSR graph with t = bmm.PQX(x, W) mm(steps), t never stored.
//
// Operands (bgnn_common.cuh layouts): the graph arrays of spmm.cuh (rowptr, col, rowf / colf
// for adjacency B, w for adjacency F), x f32 [N][K] or b1 [N][ceil(K/32)], W as matmul.cuh
// takes it (b1t [M][ceil(K/32)] when WT, the plan's layout of a b1 param read by a BB product),
// y f32 [N][C] or b1 [N][ceil(C/32)], C = M.
// One warp per row (mm_spmm_warp_rows): its lanes gather 32 edges at once, then the terms are
// accumulated in CSR order exactly as spmm.cuh does; a lone long row (Cora's 169 neighbours)
// goes to the whole block, 256 edges at once, summed in the same order.  Where spmm.cuh reads the stored activation t[j, c], this
// recomputes it: the product element bmm_dot(j, c) of matmul.cuh (mm_spmm_dots: x_j's words
// read once per edge, W's kept in registers when small), then the mm steps EM at row j (scl
// rows / a tensor add index row j, the neighbour), then for X = B its bit (EM.bit: by the
// sign or a threshold table).
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

constexpr int MSW_CB = 8, MSW_CMAX = 64; // outputs per shared-tile round; the most outputs

// W's words for a bspmm_mm whose outputs fit one tile (C <= MSW_CB) of a b1 product stored
// transposed (b1t [C][KW], the plan's layout for the popcount products fuse-mm-spmm fuses),
// held in registers when at most 16 words (examples/gcn_bin.bgnn's 7 x 2), loaded once per
// warp; otherwise read where used (matmul.cuh's bmm_dot does the same).
template <char P, char Q, long long K, long long C, bool WT>
struct MswW {
    static constexpr long long KW = words_of(K);
    static constexpr bool REG = P == 'B' && Q == 'B' && WT && C <= MSW_CB && C * KW <= 16;
    u32 w[REG ? C : 1][REG ? KW : 1];
    __device__ __forceinline__ explicit MswW(const void *wp) {
        if constexpr (REG) {
#pragma unroll
            for (long long c = 0; c < C; c++)
#pragma unroll
                for (long long i = 0; i < KW; i++) w[c][i] = ((const u32 *)wp)[c * KW + i];
        }
    }
};

// Row j of the product t = bmm.PQ(x, W), outputs cb .. cb + MSW_CB - 1 (those below C):
// fn(cl, c, v) with v = bmm_dot(j, c) of matmul.cuh, the same float.  For a popcount product
// with W transposed, x_j's KW words are read once for the tile (not once per output) and W's
// from the registers of MswW when it holds them: the same XORs, masks and popcounts.
template <char P, char Q, long long K, long long C, bool WT, class Fn>
__device__ __forceinline__ void mm_spmm_dots(long long j, long long cb, const void *xp, const void *wp,
                                             const MswW<P, Q, K, C, WT> &W, Fn fn) {
    if constexpr (P == 'B' && Q == 'B' && WT) {
        constexpr long long KW = words_of(K);
        const u32 *xr = (const u32 *)xp + j * KW;
        u32 xw[KW];
#pragma unroll
        for (long long k = 0; k < KW; k++) xw[k] = xr[k];
#pragma unroll
        for (int cl = 0; cl < MSW_CB; cl++) {
            const long long c = cb + cl;
            if (c >= C) break;
            long long pc = 0;
#pragma unroll
            for (long long k = 0; k < KW; k++) {
                u32 wv;
                if constexpr (MswW<P, Q, K, C, WT>::REG) wv = W.w[cl][k]; // C <= MSW_CB: cb = 0
                else wv = ((const u32 *)wp)[c * KW + k];
                pc += popc((xw[k] ^ wv) & word_mask(K, k));
            }
            fn(cl, c, (float)(K - 2 * pc)); // exact: |t| <= K < 2^24
        }
    } else {
#pragma unroll
        for (int cl = 0; cl < MSW_CB; cl++) {
            const long long c = cb + cl;
            if (c >= C) break;
            fn(cl, c, bmm_dot<P, Q, K, C, WT>(j, c, xp, wp, ProNone()));
        }
    }
}

// One warp per row i (grid-stride over rows by warps).  The row's edges go 32 at a time (a
// round): lane l gathers edge e0 + l (its column, factor and product row: all of a round's
// gathers in flight at once; the next round's columns are loaded during this one).  TILE(e, j, cb, o) writes that edge's terms for outputs cb .. cb +
// MSW_CB - 1 (those below C) to o[0..] (the product row's words read once for them:
// mm_spmm_dots).  Float terms: the lanes write the terms of MSW_CB outputs to the warp's
// shared tile, then lane c % MSW_CB adds them in edge order to output c's running sum - the
// sequential CSR order of spmm.cuh, exactly (a chunk of 16 terms read at once, then added one
// after the other).  INT (+-1 terms, summed in integers, exact in any order): one ballot per
// output and 32 edges.  FIN(i, c, acc) turns the sum into the value the epilogue reads.  An
// epilogue ending in EpLsm (fuse-log-softmax; C <= 32, so lane c holds output c) takes the
// row's log_softmax in the warp before the store (lsm_warp).
//
// A hub row goes to the whole block, when every warp of the block takes rows (blockDim.x <=
// 256: not the per-graph kernel's 1024-thread blocks).  The block takes its rows in groups of
// one a warp; in a group, the longest row is the block's when it has more than MSW_HUB edges
// and more than twice the next longest (a lone long row: Cora's 169 neighbours among rows of
// a few; in a graph of uniformly long rows every warp keeps its own).  After their own rows,
// the warps gather and compute the hub row's terms together, 32 edges each a step,
// into the block's tile; then warp 0's lanes add them in edge order as above (INT: each
// warp's integer counts, added after).  The same terms and the same order: the same sums.  At
// most 8 warps of a block take rows (the shared tiles are 8; a larger block's other warps
// idle here).
//
// With the work list SLOTS (plan.h bg_plan_mm_slots; the per-launch and fused kernels, blocks
// of 256) the blocks take slots instead: block b slot b, b + grid, ...; a hub slot's row (one of
// more than the runtime's hub_min edges) goes to the whole block as above, another slot's rows
// one a warp.  The rows come longest first, so a graph's few long rows each start at once on a
// block of their own instead of after a group's rows (Cora's rows of 37 to 169 edges: 12 hub
// slots).  Each warp reads its slot entry in one 16-byte load (row, edges, first edge).
constexpr int MSW_HUB = 64; // a block's row has more edges than this
// The shared tiles, one set for every instantiation (a fused kernel's phases reuse them: the
// phases are separated by barriers): per warp [edge of the round][output of the tile round]
// (a hub row: the whole array, one tile of 8 * 32 edges), the running sums (or a hub
// row's integer counts per warp), and the degrees of a group's rows.
struct MswTiles {
    float t[8 * 32][MSW_CB + 1]; // warp w's rows: [32 w, 32 w + 32)
    union {
        float a[8][MSW_CMAX];
        int n[8][MSW_CMAX];
    };
    long long deg[8];
};
__device__ __forceinline__ MswTiles &msw_tiles() {
    __shared__ MswTiles tiles;
    return tiles;
}

// A warp's sequential add of terms t[0..nr) (rows of the tile, column lane) to a.
__device__ __forceinline__ float msw_add_terms(float a, const float (*t)[MSW_CB + 1], int nr, int lane) {
    for (int l0 = 0; l0 < nr; l0 += 16) {
        float v[16];
#pragma unroll
        for (int l = 0; l < 16; l++) v[l] = t[l0 + l][lane];
#pragma unroll
        for (int l = 0; l < 16; l++)
            if (l0 + l < nr) a = fadd(a, v[l]);
    }
    return a;
}

template <char Z, long long C, bool INT, class Epi, class Tile, class Fin>
__device__ __forceinline__ void mm_spmm_warp_rows(long long rows, void *yp, const long long *rowptr,
                                                  const int *col, const int4 *slots, const Epi &epi, Tile tile,
                                                  Fin fin) {
    static_assert(C <= MSW_CMAX, "bspmm_mm: fuse-mm-spmm keeps M * ceil(K/32) <= 64");
    static_assert(!Epi::lsm || (Z == 'F' && C >= 1 && C <= 32), "bspmm_mm: a log_softmax tail needs an f32 row of 1 to 32 columns");
    constexpr int CW = (int)((C + 31) / 32), CQ = (int)((C + MSW_CB - 1) / MSW_CB);
    const int lane = (int)(threadIdx.x & 31), wib = (int)(threadIdx.x >> 5);
    const int wpb = blockDim.x >= 256 ? 8 : (int)(blockDim.x >> 5); // warps of a block taking rows
    if (wib >= wpb) return;
    MswTiles &tl = msw_tiles();
    float(*ts)[MSW_CB + 1] = tl.t + 32 * wib;
    float *as = tl.a[wib];
    const long long nwarps = (long long)gridDim.x * wpb;
    // the row's result from its sums (sums[] or the integer counts s[]), through the epilogue
    auto store_row = [&](long long i, const long long *s, const float *sums) {
        if constexpr (Epi::lsm) { // the row tail: lane c holds output c (C <= 32)
            const long long c = lane;
            float v = 0.0f;
            if (c < C) v = ep_val(epi, i, c, fin(i, c, INT ? (float)s[0] : sums[c]));
            const float o = lsm_warp<C>(lane, v);
            if (c < C) ((float *)yp)[i * C + c] = o;
        } else {
#pragma unroll
            for (int p = 0; p < CW; p++) {
                const long long c = 32LL * p + lane;
                const float v = INT ? (float)s[p] : (c < C ? sums[c] : 0.0f);
                if constexpr (Z == 'B') {
                    const u32 word = __ballot_sync(0xffffffffu, c < C && ep_bit(epi, i, c, fin(i, c, v)) != 0u);
                    if (lane == 0) ((u32 *)yp)[i * words_of(C) + p] = word;
                } else {
                    if (c < C) ((float *)yp)[i * C + c] = ep_val(epi, i, c, fin(i, c, v));
                }
            }
        }
    };
    // INT: the +-1 terms of edges eb .. eb + nb - 1 (nb <= 32) for every output, into the
    // counts s[] (lane c % 32 keeps c's)
    auto int_terms = [&](long long eb, long long j, int nb, long long *s) {
        const bool has = lane < nb;
        const long long e = eb + (has ? lane : 0);
#pragma unroll
        for (int q = 0; q < CQ; q++) {
            float o[MSW_CB];
#pragma unroll
            for (int cl = 0; cl < MSW_CB; cl++) o[cl] = 0.0f;
            if (has) tile(e, j, (long long)q * MSW_CB, o);
#pragma unroll
            for (int cl = 0; cl < MSW_CB; cl++) {
                const int c = q * MSW_CB + cl;
                if (c >= C) break;
                const u32 plus = __ballot_sync(0xffffffffu, has && o[cl] > 0.0f);
                if (lane == (c & 31)) s[c >> 5] += 2 * (long long)popc(plus) - nb;
            }
        }
    };
    // row i (edges e0 .. e1 - 1) by this warp alone
    auto warp_row = [&](long long i, long long e0, long long e1) {
        long long s[CW];
#pragma unroll
        for (int p = 0; p < CW; p++) s[p] = 0;
        if constexpr (!INT) {
            for (int c = lane; c < C; c += 32) as[c] = 0.0f;
            __syncwarp();
        }
        // the columns of a round's edges are requested a round ahead (a lane past the row's end
        // reads the row's first edge), so a round waits for one gather, not two
        long long jn = e0 < e1 ? col[e0 + lane < e1 ? e0 + lane : e0] : 0;
        for (long long eb = e0; eb < e1; eb += 32) {
            const int nr = (int)(e1 - eb < 32 ? e1 - eb : 32); // edges of this round
            const long long j = jn;
            if (eb + 32 < e1) jn = col[eb + 32 + lane < e1 ? eb + 32 + lane : e0];
            if constexpr (INT) {
                int_terms(eb, j, nr, s);
            } else {
                const bool has = lane < nr;
                const long long e = eb + (has ? lane : 0);
#pragma unroll 1
                for (int q = 0; q < CQ; q++) {
                    float tv[MSW_CB];
#pragma unroll
                    for (int cl = 0; cl < MSW_CB; cl++) tv[cl] = 0.0f;
                    if (has) tile(e, j, (long long)q * MSW_CB, tv);
#pragma unroll
                    for (int cl = 0; cl < MSW_CB; cl++) ts[lane][cl] = tv[cl];
                    __syncwarp();
                    const long long c = (long long)q * MSW_CB + lane;
                    if (lane < MSW_CB && c < C) as[c] = msw_add_terms(as[c], ts, nr, lane);
                    __syncwarp();
                }
            }
        }
        store_row(i, s, as);
        if constexpr (!INT) __syncwarp(); // the sums are read before the next row clears them
    };
    // row i (edges e0 .. e1 - 1) by the whole block (every thread calls it; it starts and ends
    // with a barrier)
    auto block_row = [&](long long i, long long e0, long long e1) {
        float(*bt)[MSW_CB + 1] = tl.t; // the block's tile: 32 * wpb edges
        float *sums = tl.a[0];
        long long s[CW];
#pragma unroll
        for (int p = 0; p < CW; p++) s[p] = 0;
        __syncthreads(); // every warp is done with its own row and tiles
        if (!INT && wib == 0)
            for (int c = lane; c < C; c += 32) sums[c] = 0.0f;
        for (long long eb = e0; eb < e1; eb += 32LL * wpb) { // a step: 32 edges a warp
            const long long wb = eb + 32LL * wib;              // this warp's first edge
            const long long e = wb + lane;
            const long long j = col[e < e1 ? e : e0];
            if constexpr (INT) {
                if (wb < e1) int_terms(wb, j, e1 - wb < 32 ? (int)(e1 - wb) : 32, s); // warp-uniform
            } else {
                const int nr = (int)(e1 - eb < 32LL * wpb ? e1 - eb : 32LL * wpb);
#pragma unroll 1
                for (int q = 0; q < CQ; q++) {
                    float o[MSW_CB];
#pragma unroll
                    for (int cl = 0; cl < MSW_CB; cl++) o[cl] = 0.0f;
                    if (e < e1) tile(e, j, (long long)q * MSW_CB, o);
#pragma unroll
                    for (int cl = 0; cl < MSW_CB; cl++) bt[32 * wib + lane][cl] = o[cl];
                    __syncthreads();
                    const long long c = (long long)q * MSW_CB + lane;
                    if (wib == 0 && lane < MSW_CB && c < C) sums[c] = msw_add_terms(sums[c], bt, nr, lane);
                    __syncthreads();
                }
            }
        }
        if constexpr (INT) { // the warps' counts, added in warp order (integers: exact)
#pragma unroll
            for (int p = 0; p < CW; p++)
                if (32 * p + lane < C) tl.n[wib][32 * p + lane] = (int)s[p];
            __syncthreads();
            if (wib == 0) {
#pragma unroll
                for (int p = 0; p < CW; p++) {
                    long long t = 0;
                    if (32 * p + lane < C)
                        for (int v = 0; v < wpb; v++) t += tl.n[v][32 * p + lane];
                    s[p] = t;
                }
            }
        } else {
            __syncthreads(); // warp 0's sums are complete
        }
        if (wib == 0) store_row(i, s, sums);
        __syncthreads(); // sums, counts and tile free again
    };
    if (slots && blockDim.x == 256) { // the work list in blocks' slots (bgnn_common.cuh slots_walk)
        slots_walk(rows, slots, wib, block_row, warp_row);
        return;
    }
    if ((int)blockDim.x != 32 * wpb) { // not every warp takes rows: each its own
        for (long long i = (long long)blockIdx.x * wpb + wib; i < rows; i += nwarps) // uniform across the warp
            warp_row(i, rowptr[i], rowptr[i + 1]);
        return;
    }
    for (long long i0 = (long long)blockIdx.x * wpb; i0 < rows; i0 += nwarps) { // block-uniform
        const long long i = i0 + wib;
        if (i0 != (long long)blockIdx.x * wpb) __syncthreads(); // the last group's degrees are read
        const long long e0 = i < rows ? rowptr[i] : 0, e1 = i < rows ? rowptr[i + 1] : -1;
        if (lane == 0) tl.deg[wib] = e1 - e0;
        __syncthreads();
        int h = 0; // the group's longest row (the first of them), and the next longest
        long long d1 = tl.deg[0], d2 = -1;
        for (int w = 1; w < wpb; w++) {
            const long long d = tl.deg[w];
            if (d > d1) {
                d2 = d1;
                d1 = d;
                h = w;
            } else if (d > d2) {
                d2 = d;
            }
        }
        const bool hub = d1 > MSW_HUB && d1 > 2 * d2; // block-uniform
        if (i < rows && !(hub && wib == h)) warp_row(i, e0, e1);
        if (hub) block_row(i0 + h, rowptr[i0 + h], rowptr[i0 + h + 1]);
    }
}

// LW lanes a row (the schedule's lanes=, LW = 8 or 16; uGrapher's group size): a warp takes
// R = 32 / LW rows at once, group g (lanes g LW .. g LW + LW - 1) row i0 + g, for rows of few
// edges, where a warp a row leaves most lanes idle.  The same terms in the same order as
// mm_spmm_warp_rows: each group gathers its row's edges LW at a time (lane l of the group edge
// eb + l, the next round's columns loaded during this one), TILE writes their terms to the
// group's LW rows of the warp's shared tile, and the group's lane c (< C <= MSW_CB) adds output
// c's terms in edge order to its running sum from +0.0f (INT: counts the +-1 terms from one
// ballot per output, masked to the group).  The warp runs as many rounds as its longest row
// (warp-uniform loops: __syncwarp, the ballots and the shuffles see every lane; a shorter row's
// group adds nothing in the rounds past its end).  A long row (more than MSW_LONG_ROUNDS rounds
// of LW edges) sits the group phase out and is then taken by the whole warp, 32 edges a round,
// its terms added in edge order by lane c as above: the same sum, without a hub of a skewed
// graph holding the warp for thousands of narrow rounds.  The store as store_row of
// mm_spmm_warp_rows, per group: lane c holds output c (a log_softmax tail: lsm_warp of width
// LW); a long row's, the warp's lane c (lsm_warp of width 32).
constexpr int MSW_LONG_ROUNDS = 4;
template <int LW, char Z, long long C, bool INT, class Epi, class Tile, class Fin>
__device__ __forceinline__ void mm_spmm_group_rows(long long rows, void *yp, const long long *rowptr, const int *col,
                                                   const Epi &epi, Tile tile, Fin fin) {
    static_assert(LW == 8 || LW == 16, "bspmm_mm: lanes= is 8 or 16");
    static_assert(C >= 1 && C <= MSW_CB, "bspmm_mm: lanes= needs at most MSW_CB outputs");
    static_assert(!Epi::lsm || Z == 'F', "bspmm_mm: a log_softmax tail needs an f32 row");
    constexpr int R = 32 / LW;
    const int lane = (int)(threadIdx.x & 31), wib = (int)(threadIdx.x >> 5);
    const int g = lane / LW, sl = lane % LW;
    const int wpb = blockDim.x >= 256 ? 8 : (int)(blockDim.x >> 5); // warps of a block taking rows
    if (wib >= wpb) return;
    const u32 gmask = ((1u << LW) - 1u) << (g * LW);
    float(*ts)[MSW_CB + 1] = msw_tiles().t + 32 * wib + g * LW; // the group's LW edge rows
    const long long nwarps = (long long)gridDim.x * wpb;
    for (long long i0 = ((long long)blockIdx.x * wpb + wib) * R; i0 < rows; i0 += nwarps * R) { // warp-uniform
        const long long i = i0 + g;
        const bool live = i < rows;
        const long long r0 = live ? rowptr[i] : 0, r1 = live ? rowptr[i + 1] : 0;
        const bool lng = r1 - r0 > (long long)MSW_LONG_ROUNDS * LW; // the warp's, after the groups'
        const long long e0 = r0, e1 = lng ? r0 : r1;                // the group phase's edges
        long long rounds = (e1 - e0 + LW - 1) / LW; // the warp's longest short row's
#pragma unroll
        for (int o = 16; o >= LW; o >>= 1) {
            const long long r2 = __shfl_xor_sync(0xffffffffu, rounds, o);
            if (r2 > rounds) rounds = r2;
        }
        float acc = 0.0f; // lane c < C: output c's running sum (float terms)
        long long cnt = 0; // lane c < C: output c's +-1 count (INT)
        long long jn = e0 < e1 ? col[e0 + sl < e1 ? e0 + sl : e0] : 0;
        for (long long r = 0; r < rounds; r++) {
            const long long eb = e0 + r * LW;
            const int nr = eb < e1 ? (int)(e1 - eb < LW ? e1 - eb : LW) : 0; // this group's edges this round
            const long long j = jn;
            if (eb + LW < e1) jn = col[eb + LW + sl < e1 ? eb + LW + sl : e0];
            const bool has = sl < nr;
            float tv[MSW_CB];
#pragma unroll
            for (int cl = 0; cl < MSW_CB; cl++) tv[cl] = 0.0f;
            if (has) tile(eb + sl, j, 0LL, tv);
            if constexpr (INT) {
#pragma unroll
                for (int cl = 0; cl < (int)C; cl++) {
                    const u32 plus = __ballot_sync(0xffffffffu, has && tv[cl] > 0.0f) & gmask;
                    if (sl == cl) cnt += 2 * (long long)popc(plus) - nr;
                }
            } else {
#pragma unroll
                for (int cl = 0; cl < MSW_CB; cl++) ts[sl][cl] = tv[cl];
                __syncwarp();
                if (sl < (int)C)
                    for (int l = 0; l < nr; l++) acc = fadd(acc, ts[l][sl]);
                __syncwarp();
            }
        }
        const float v = INT ? (float)cnt : acc;
        const bool st = live && !lng; // this group's row is stored here
        if constexpr (Epi::lsm) {
            float x = 0.0f;
            if (st && sl < (int)C) x = ep_val(epi, i, sl, fin(i, sl, v));
            const float o = lsm_warp<C, LW>(sl, x);
            if (st && sl < (int)C) ((float *)yp)[i * C + sl] = o;
        } else if constexpr (Z == 'B') {
            const u32 bits = __ballot_sync(0xffffffffu, st && sl < (int)C && ep_bit(epi, i, sl, fin(i, sl, v)) != 0u);
            if (st && sl == 0) ((u32 *)yp)[i * words_of(C)] = (bits & gmask) >> (g * LW);
        } else {
            if (st && sl < (int)C) ((float *)yp)[i * C + sl] = ep_val(epi, i, sl, fin(i, sl, v));
        }
        // the long rows, one after the other by the whole warp (lane c: output c)
        float(*tw)[MSW_CB + 1] = msw_tiles().t + 32 * wib; // the warp's 32 edge rows
        for (u32 longs = __ballot_sync(0xffffffffu, sl == 0 && lng); longs; longs &= longs - 1u) {
            const int lead = __ffs(longs) - 1;
            const long long li = i0 + lead / LW;
            const long long l0 = __shfl_sync(0xffffffffu, r0, lead), l1 = __shfl_sync(0xffffffffu, r1, lead);
            float wacc = 0.0f;
            long long wcnt = 0;
            __syncwarp(); // the group phase's tile reads are done
            for (long long eb = l0; eb < l1; eb += 32) {
                const int nr = (int)(l1 - eb < 32 ? l1 - eb : 32);
                const bool has = lane < nr;
                const long long e = eb + (has ? lane : 0);
                const long long j = col[e];
                float tv[MSW_CB];
#pragma unroll
                for (int cl = 0; cl < MSW_CB; cl++) tv[cl] = 0.0f;
                if (has) tile(e, j, 0LL, tv);
                if constexpr (INT) {
#pragma unroll
                    for (int cl = 0; cl < (int)C; cl++) {
                        const u32 plus = __ballot_sync(0xffffffffu, has && tv[cl] > 0.0f);
                        if (lane == cl) wcnt += 2 * (long long)popc(plus) - nr;
                    }
                } else {
#pragma unroll
                    for (int cl = 0; cl < MSW_CB; cl++) tw[lane][cl] = tv[cl];
                    __syncwarp();
                    if (lane < (int)C)
                        for (int l = 0; l < nr; l++) wacc = fadd(wacc, tw[l][lane]);
                    __syncwarp();
                }
            }
            const float wv = INT ? (float)wcnt : wacc;
            if constexpr (Epi::lsm) {
                float x = 0.0f;
                if (lane < (int)C) x = ep_val(epi, li, lane, fin(li, lane, wv));
                const float o = lsm_warp<C>(lane, x);
                if (lane < (int)C) ((float *)yp)[li * C + lane] = o;
            } else if constexpr (Z == 'B') {
                const u32 bits = __ballot_sync(0xffffffffu, lane < (int)C && ep_bit(epi, li, lane, fin(li, lane, wv)) != 0u);
                if (lane == 0) ((u32 *)yp)[li * words_of(C)] = bits;
            } else {
                if (lane < (int)C) ((float *)yp)[li * C + lane] = ep_val(epi, li, lane, fin(li, lane, wv));
            }
        }
        __syncwarp(); // the next rows' group phase writes the tile
    }
}

// A warp a row (LW = 32) or LW lanes a row.
template <int LW, char Z, long long C, bool INT, class Epi, class Tile, class Fin>
__device__ __forceinline__ void mm_spmm_rows(long long rows, void *yp, const long long *rowptr, const int *col,
                                             const int4 *slots, const Epi &epi, Tile tile, Fin fin) {
    if constexpr (LW == 32) mm_spmm_warp_rows<Z, C, INT>(rows, yp, rowptr, col, slots, epi, tile, fin);
    else mm_spmm_group_rows<LW, Z, C, INT>(rows, yp, rowptr, col, epi, tile, fin);
}

// Adjacency B (pattern + factor vectors): y[i, c] = rowf[i] * sum_j colf[j] v(t[j, c]) (the
// +-1 sum when X = B and the factors are unit).  rows = N; grid: rows * LW threads.
template <char P, char Q, char X, char Z, long long K, long long C, bool WT, bool UNIT, int METHOD, int LW = 32,
          class EM = EpEnd, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_mm_adjb(long long rows, void *yp, const long long *rowptr, const int *col,
                                              const float *rowf, const float *colf, const void *xp,
                                              const void *wp, const int4 *slots, EM em = EM(), Epi epi = Epi()) {
    static_assert((P == 'F' || P == 'B') && (Q == 'F' || Q == 'B') && (X == 'F' || X == 'B') &&
                      (Z == 'F' || Z == 'B'),
                  "bspmm_mm: precision letters are F or B");
    static_assert(!WT || Q == 'B', "bspmm_mm: only b1 weights can be transposed");
    constexpr bool INT = X == 'B' && UNIT;
    auto fin = [&](long long i, long long, float acc) { return fmul(rowf[i], acc); };
    const MswW<P, Q, K, C, WT> W(wp);
    mm_spmm_rows<LW, Z, C, INT>(rows, yp, rowptr, col, slots, epi, [&](long long, long long j, long long cb, float(&o)[MSW_CB]) {
        const float f = INT ? 1.0f : colf[j];
        mm_spmm_dots<P, Q, K, C, WT>(j, cb, xp, wp, W, [&](int cl, long long c, float v) {
            if constexpr (INT) o[cl] = ep_bit(em, j, c, v) ? 1.0f : -1.0f;
            else if constexpr (X == 'B') o[cl] = signed_by(f, ep_bit(em, j, c, v));
            else o[cl] = fmul(f, ep_val(em, j, c, v));
        });
    }, fin);
}

// Adjacency F (per-edge weights): y[i, c] = sum_e w[e] v(t[col[e], c]).  rows = N; grid as above.
template <char P, char Q, char X, char Z, long long K, long long C, bool WT, int LW = 32, class EM = EpEnd,
          class Epi = EpEnd>
__device__ __forceinline__ void bspmm_mm_adjf(long long rows, void *yp, const long long *rowptr, const int *col,
                                              const float *w, const void *xp, const void *wp, const int4 *slots,
                                              EM em = EM(), Epi epi = Epi()) {
    static_assert((P == 'F' || P == 'B') && (Q == 'F' || Q == 'B') && (X == 'F' || X == 'B') &&
                      (Z == 'F' || Z == 'B'),
                  "bspmm_mm: precision letters are F or B");
    static_assert(!WT || Q == 'B', "bspmm_mm: only b1 weights can be transposed");
    auto fin = [](long long, long long, float acc) { return acc; };
    const MswW<P, Q, K, C, WT> W(wp);
    mm_spmm_rows<LW, Z, C, false>(rows, yp, rowptr, col, slots, epi, [&](long long e, long long j, long long cb, float(&o)[MSW_CB]) {
        const float f = w[e];
        mm_spmm_dots<P, Q, K, C, WT>(j, cb, xp, wp, W, [&](int cl, long long c, float v) {
            if constexpr (X == 'B') o[cl] = signed_by(f, ep_bit(em, j, c, v));
            else o[cl] = fmul(f, ep_val(em, j, c, v));
        });
    }, fin);
}

} // namespace bgnn

#endif // BGNN_MM_SPMM_CUH
