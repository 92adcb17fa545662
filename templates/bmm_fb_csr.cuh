// bmm_fb_csr.cuh - bmm.FB{F,B} of the model's input features held as CSR (their nonzeros
// only), a few lanes a row: bmm_fb_rows.cuh's result, bit for bit, without reading the zeros.
//
// The runtime builds the CSR when it uploads sparse features (runtime/bind.c, plan.h
// BgPlanLaunch.alt) and passes it in place of the dense features:
//     CsrRange range[rows]; u32 rowptr[rows + 1]; u32 order[rows]; (pad); CsrEnt ent[nnz]
// one block of memory (plan.h bg_features_csr), each entry a column and its value, the columns of
// a row ascending, every value other than +0 (-0 and NaN kept); order lists the rows by their
// nonzeros, most first (ties by index), and range[p] holds row order[p]'s entries, so a row set's
// first loads (its order and range entries) are one round trip.  The kernel takes it as a
// CsrRows view (bgnn_common.cuh): the whole block, or a row group's tile (rows in index order).
//
// y[r,o] = sum over k ascending from +0.0f of v(w[k,o]) * x'[r,k], x' = pro(k, x[r,k]), the
// terms with x' = +-0 skipped: bmm_fb_rows' order and rule.  The +0s the CSR leaves out give
// x' = pro(k, +0), which is +-0 (skipped there too) for ProNone, and for ProScl unless s[k] is
// infinite or NaN: then x' is NaN, the row kernel adds it and its sums end NaN.  So each block
// first looks for such columns (a scan of s, almost always empty); when there are some, a row
// lacking any of them in its CSR gets NaN sums (the GPU's NaN, the one the row kernel's adds
// give) before its epilogue.  A -0 the CSR keeps is a term like any other (x' = +-0 or NaN, as
// in the row kernel).
//
// Work: G lanes a row (G = 2..32 by M: plan.c bg_plan_fb_csr_lanes, about 8 outputs a lane; a
// whole launch over few rows takes 2 G, bmm_fb_csr_rows at the end), so a warp holds 32 / G
// rows; warps grid-stride over those row sets.  Lane g of a row's group owns
// outputs o = g, g + G, ... (NO = ceil(M / G) running sums, each one fadd chain in column
// order).  A step loads G nonzeros of the row, one a lane, each with its weight row (canonical
// b1 [K][ceil(M/32)]), the next step's loaded while this one is added (up to M = 256; wider
// rows of weight words would take too many registers); the step's entries are
// then added in column order, each value and weight row broadcast from its lane by __shfl_sync
// within the group.  Every entry of a step is added, none skipped: an x' of +-0 (a zero scale,
// or past the row's end, where the step pads with +0 and no weight bits) adds a +-0 term, which
// leaves a sum that starts at +0.0f unchanged (bmm_fb_rows.cuh: a sum is never -0.0f), so the
// bits are those of the row kernel, which skips them.  The row set runs for its longest row's
// steps, so the rows are taken in `order`: a warp's rows have about the same length (little
// padding), and the longest go first.  The first row's first step is loaded before the block waits on its scan of s.
#ifndef BGNN_BMM_FB_CSR_CUH
#define BGNN_BMM_FB_CSR_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"
#include "bmm_fb_rows.cuh"

namespace bgnn {

// The prologues this kernel takes, and whether pro(k, +-0) can be other than +-0 for some k
// (checked): ProNone never, ProScl for a non-finite scale.
template <class Pro>
struct CsrZeroTerms {
    static constexpr bool supported = false, checked = false;
};
template <>
struct CsrZeroTerms<ProNone> {
    static constexpr bool supported = true, checked = false;
};
template <>
struct CsrZeroTerms<ProScl> {
    static constexpr bool supported = true, checked = true;
    __device__ __forceinline__ static bool bad(const ProScl &p, long long k) { return !isfinite(p.s[k]); }
};

// Row r's outputs from its group of G lanes (lane g holds outputs g, g + G, ... in acc) through
// the epilogue: floats, or each 32-column word or'ed over the group's lanes (padding bits 0).
template <char Z, long long M, int G, int NO, class Epi>
__device__ __forceinline__ void fb_csr_store(long long r, bool valid, void *yp, const float (&acc)[NO], unsigned g,
                                             const Epi &epi) {
    constexpr long long MW = words_of(M);
    if constexpr (Z == 'B') {
        u32 word[MW > 0 ? MW : 1];
#pragma unroll
        for (int j = 0; j < (int)MW; j++) word[j] = 0u;
#pragma unroll
        for (int i = 0; i < NO; i++) {
            const long long o = (long long)G * i + g;
            if (valid && o < M) word[(G * i) >> 5] |= ep_bit(epi, r, o, acc[i]) << (((G * i) & 31) + g);
        }
#pragma unroll
        for (int j = 0; j < (int)MW; j++) {
#pragma unroll
            for (int d = 1; d < G; d <<= 1) word[j] |= __shfl_xor_sync(0xffffffffu, word[j], d);
            if (valid && g == (unsigned)(j % G)) ((u32 *)yp)[r * MW + j] = word[j];
        }
    } else {
#pragma unroll
        for (int i = 0; i < NO; i++) {
            const long long o = (long long)G * i + g;
            if (valid && o < M) ((float *)yp)[r * M + o] = ep_val(epi, r, o, acc[i]);
        }
    }
}

// G: lanes per row (2, 4, 8, 16 or 32; plan.c bg_plan_fb_csr_lanes).
// MUL: the sign flips by multiply (signed_by_mul: fewer integer ALU operations, for launches of
// many rows, bound by them) or by shift (signed_by_shifted: a shorter chain, for few rows).
template <char Z, long long K, long long M, int G, class Pro = ProNone, class Epi = EpEnd, bool MUL = false>
__device__ __forceinline__ void bmm_fb_csr(long long rows, void *yp, CsrRows csr, const u32 *w,
                                           Pro pro = Pro(), Epi epi = Epi()) {
    static_assert(CsrZeroTerms<Pro>::supported,
                  "bmm_fb_csr: a prologue whose zero terms it cannot account for");
    static_assert(G == 2 || G == 4 || G == 8 || G == 16 || G == 32, "bmm_fb_csr: lanes per row");
    constexpr long long MW = words_of(M);
    constexpr int MJ = M > 0 ? (int)MW : 1;
    constexpr int NO = M > 0 ? (int)((M + G - 1) / G) : 1; // outputs a lane
    constexpr int RPW = 32 / G;                             // rows a warp
    constexpr bool PREFETCH = MJ <= 8; // the next step's loads in flight (registers: 2 MJ words)
    if constexpr (M == 0) return;
    const u32 *rp = csr.rp, *order = csr.order; // order nullptr: index order (rp), else range
    const CsrEnt *ent = csr.ent;
    const CsrRange *range = csr.range;
    const unsigned lane = threadIdx.x & 31u, g = lane % G;
    // shift (or its power of two, MUL) of output i's weight bit to the sign: bit ((G i) mod 32) + g
    // of word (G i) / 32
    u32 sh[NO];
#pragma unroll
    for (int i = 0; i < NO; i++) sh[i] = MUL ? 1u << (31u - (((G * i) & 31) + g)) : 31u - (((G * i) & 31) + g);
    const long long warps = thread_stride() >> 5;
    // A step of a row: G of its nonzeros, lane g's value x' and weight row (all loaded at once);
    // past the row's end x' = +0 and no weight bits: a +-0 term, which leaves the sum unchanged.
    struct Step {
        float xv;
        u32 wv[MJ];
    };
    // entry `off` of the row [beg, end) (compared as an offset: beg + off may pass 2^32 where a
    // warp's longer row keeps a short one stepping past its end)
    auto load = [&](u32 off, u32 beg, u32 end, Step &st) {
        const bool in = off < end - beg;
        const CsrEnt en = in ? ent[beg + off] : CsrEnt{0u, 0.0f};
        const u32 k = en.col;
        st.xv = in ? pro((long long)k, en.val) : 0.0f;
#pragma unroll
        for (int j = 0; j < MJ; j++) st.wv[j] = 0u;
        if (in) fb_rows_weights<MJ>(w + (long long)k * MW, st.wv);
    };
    // The row set at `base`: this group's row (in `order`), its range and its first step.
    bool valid = false;
    long long r = rows;
    u32 beg = 0, end = 0;
    Step cur;
    auto open = [&](long long base) {
        valid = base + lane / G < rows;
        if (order) { // the row and its range side by side: neither waits on the other
            r = valid ? (long long)order[base + lane / G] : rows;
            const CsrRange rg = valid ? range[base + lane / G] : CsrRange{0u, 0u};
            beg = rg.beg;
            end = rg.end;
        } else {
            r = valid ? base + lane / G : rows;
            beg = valid ? rp[r] : 0u;
            end = valid ? rp[r + 1] : 0u;
        }
        load(g, beg, end, cur);
    };
    long long base = (thread_index() >> 5) * RPW;
    open(base); // the first row set, loaded before the scan below waits on its loads
    bool any_bad = false; // a column whose zero term is NaN (ProScl with a non-finite scale)
    if constexpr (CsrZeroTerms<Pro>::checked) {
        bool b = false;
        // 8 columns a thread at a time, their loads all in flight before the first test (a
        // loop of one load and one test a turn waited a round trip a turn: on Cora's 1433
        // columns six of them, 29% of the kernel's stall samples, before any row of the block
        // could finish)
        for (long long k0 = threadIdx.x; k0 < K; k0 += 8LL * blockDim.x) {
            bool bad[8];
#pragma unroll
            for (int u = 0; u < 8; u++) {
                const long long k = k0 + (long long)u * blockDim.x; // past K: column K - 1 again
                bad[u] = CsrZeroTerms<Pro>::bad(pro, k < K ? k : K - 1);
            }
#pragma unroll
            for (int u = 0; u < 8; u++) b |= bad[u];
        }
        any_bad = __syncthreads_or(b) != 0;
    }
    for (bool first = true; base < rows; base += warps * RPW, first = false) {
        if (!first) open(base);
        u32 steps = (end - beg + G - 1) / G; // the warp's longest row, in steps
#pragma unroll
        for (int d = 16; d >= 1; d >>= 1) steps = max(steps, __shfl_xor_sync(0xffffffffu, steps, d));
        float acc[NO];
#pragma unroll
        for (int i = 0; i < NO; i++) acc[i] = 0.0f;
        for (u32 s = 0; s < steps; s++) {
            Step nxt;
            if (PREFETCH && s + 1 < steps) load((s + 1) * G + g, beg, end, nxt);
#pragma unroll 8
            for (int b = 0; b < G; b++) { // in column order: entry b's value and weight row
                const u32 nt = __float_as_uint(__shfl_sync(0xffffffffu, cur.xv, b, G)) ^ 0x80000000u;
                u32 wb = 0u; // the weight word of outputs i, broadcast when i enters a new word
#pragma unroll
                for (int i = 0; i < NO; i++) {
                    if (i == 0 || ((G * i) >> 5) != ((G * (i - 1)) >> 5))
                        wb = __shfl_sync(0xffffffffu, cur.wv[(G * i) >> 5], b, G);
                    acc[i] = fadd(acc[i], MUL ? signed_by_mul(nt, wb, sh[i]) : signed_by_shifted(nt, wb, sh[i]));
                }
            }
            if (s + 1 < steps) {
                if constexpr (PREFETCH) cur = nxt;
                else load((s + 1) * G + g, beg, end, cur);
            }
        }
        if constexpr (CsrZeroTerms<Pro>::checked) {
            if (any_bad) { // rare: is some column with a NaN zero term absent from this row?
                bool nan = false;
                for (long long k0 = 0; k0 < K; k0 += G) { // every group through all of K: no early exit
                    const long long k = k0 + g;
                    bool miss = false;
                    if (valid && k < K && CsrZeroTerms<Pro>::bad(pro, k)) {
                        miss = true;
                        for (u32 e = beg; e < end; e++)
                            if (ent[e].col == (u32)k) {
                                miss = false;
                                break;
                            }
                    }
                    const u32 grp = (__ballot_sync(0xffffffffu, miss) >> (lane - g)) & (G == 32 ? 0xffffffffu : ((1u << G) - 1u));
                    nan |= grp != 0u;
                }
                if (nan)
#pragma unroll
                    for (int i = 0; i < NO; i++) acc[i] = __uint_as_float(0x7fffffffu);
            }
        }
        fb_csr_store<Z, M, G, NO>(r, valid, yp, acc, g, epi);
    }
}

// A whole launch's product (an alt launch's sparse variant, over every row of the CSR): 2 G lanes
// a row when rows x G < WIDE (plan.h bg_plan_fb_csr_lanes_rows: fewer than 2,048 warps of rows
// at G, so more warps, each with a shorter chain), else G with the sign flips by multiply (the
// launch is bound by its integer ALU operations: PubMed's 19,717 rows 20.2 -> 18.2 us on an H200,
// where Cora's and CiteSeer's short chains were 0.1-0.25 us slower with it).  The runtime sizes the grid by the
// same rule; a grid of another size would give the same bits (the warps grid-stride).
template <char Z, long long K, long long M, int G, long long WIDE, class Pro = ProNone, class Epi = EpEnd>
__device__ __forceinline__ void bmm_fb_csr_rows(long long rows, void *yp, CsrRows csr, const u32 *w,
                                                Pro pro = Pro(), Epi epi = Epi()) {
    if constexpr (G < 32) {
        if (rows < WIDE / G) {
            bmm_fb_csr<Z, K, M, 2 * G>(rows, yp, csr, w, pro, epi);
            return;
        }
    }
    bmm_fb_csr<Z, K, M, G, Pro, Epi, true>(rows, yp, csr, w, pro, epi);
}

} // namespace bgnn

#endif // BGNN_BMM_FB_CSR_CUH
