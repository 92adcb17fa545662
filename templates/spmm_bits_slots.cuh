// spmm_bits_slots.cuh - the bit aggregation's sums in the order slots(S, T, H) (docs/semantics.md,
// section 2; base.h BgFpOrder): a row of d > T edges of b1 activations summed as S chains of
// masked sums (4 S from H edges), the chains combined pairwise, then fl(fl(P + P) - Q).
//
// A warp's lanes take G = min(8, words to a power of two) words of one edge each: lane
// l = sl G + w holds slot sl (S = 32 / G slots) and word w of the warp's word group.  For each
// of its edges a lane loads the edge's column and factor and its one word of the neighbour's
// row (the G lanes of an edge read G consecutive words: one request), adds the factor to its
// slot's sum q and, for every set bit b, to p[b]: 32 predicated adds (the compiler sets 7
// predicates an instruction, R2P), where the order seq costs each lane a shift, a sign flip
// and an add per column and edge.  The slots are then combined pairwise within the warp
// (h = 1, 2, ... S/2: lane pairs sl, sl ^ h by shuffle; each level keeps half of the columns, so
// a lane ends with the G columns sl + S m of its word), and moved by shuffles to the layout of
// spmm_bits_lanes (lane l: column 32 k + l in acc[k]).
//
// A row of at least H edges has 4 S slots, edge t to slot t mod 4S: the slots S q .. S q + S - 1
// are quarter q, a pass of its own (edges t = S q + 4 S i + sl), and the quarters combine as
// ((q0 + q1) + (q2 + q3)), the pairwise levels h = S and 2 S.  Four warps of a block take the
// four quarters of a hub row at once (the runtime's row list puts those rows first); one warp
// alone takes them one after another (spmm_bits_slots_row, both).  A kernel holds two pass
// instances, a row's (stride S) and a quarter's (stride 4 S, in a loop): six inlined passes took
// NVRTC's time for the Reddit-sized gcn_bin from 5 to 11 s, and one with the stride a run-time
// value cost that model 4.51 against 3.94 ms (docs/performance.md).
#ifndef BGNN_SPMM_BITS_SLOTS_CUH
#define BGNN_SPMM_BITS_SLOTS_CUH

#include "bgnn_common.cuh"

namespace bgnn {

// The lanes' shape for rows of CW words: G words a lane group, S slots, NG word groups.
template <int CW>
struct SlotsShape {
    static constexpr int G = CW <= 1 ? 1 : CW <= 2 ? 2 : CW <= 4 ? 4 : 8;
    static constexpr int S = 32 / G;
    static constexpr int NG = (CW + G - 1) / G;
};

// Steps (of S edges) whose loads are in flight while a step's sums run.
constexpr int SLOTS_PF = 4;

// One warp's pass over the row's edges t = off + STRIDE i + sl (t < d) from edge e0, words
// g G .. g G + G - 1 of the neighbours' rows (x's rows are SW words): the masked sums and the
// factors' sum of lane l's slot, combined over the warp's S slots.  Out: v[m] = P of column
// 32 (g G + w) + sl + S m, q = Q (the same in every lane).  STRIDE is S (a row's one pass) or
// 4 S (a quarter of a hub row): a constant, so that the loop's edge indices are too.
template <bool ADJF, int CW, int SW, int STRIDE>
__device__ __forceinline__ void slots_pass(long long e0, int d, int off, int g, const int *col, const float *factor,
                                           const u32 *x, unsigned lane, float (&v)[SlotsShape<CW>::G], float &q) {
    constexpr int stride = STRIDE;
    constexpr int G = SlotsShape<CW>::G, S = SlotsShape<CW>::S;
    const int w = (int)(lane % G), sl = (int)(lane / G);
    const int wi = g * G + w;
    const bool word_ok = wi < CW;
    float p[32];
#pragma unroll
    for (int b = 0; b < 32; b++) p[b] = 0.0f;
    q = 0.0f;
    // edge t's factor and word (0 past the row: adding +0 to a sum from +0 changes nothing)
    const int *cr = col + e0;
    const float *fr = factor + (ADJF ? e0 : 0);
    auto fetch = [&](int t, float &f, u32 &wd) {
        f = 0.0f;
        wd = 0u;
        if (t < d) {
            const int j = cr[t];
            f = fr[ADJF ? t : j];
            if (word_ok) wd = x[(long long)j * SW + wi];
        }
    };
    float fq[SLOTS_PF];
    u32 wq[SLOTS_PF];
#pragma unroll
    for (int k = 0; k < SLOTS_PF; k++) fetch(off + sl + k * stride, fq[k], wq[k]);
    for (int tb = off; tb < d; tb += SLOTS_PF * stride) {
#pragma unroll
        for (int k = 0; k < SLOTS_PF; k++) {
            const float f = fq[k];
            const u32 wd = wq[k];
            fetch(tb + sl + (SLOTS_PF + k) * stride, fq[k], wq[k]);
            q = fadd(q, f);
#pragma unroll
            for (int b = 0; b < 32; b++)
                if (wd & (1u << b)) p[b] = fadd(p[b], f);
        }
    }
    // pairwise over the warp's slots: level h pairs slot sl with sl ^ h; the lane with bit h of
    // sl set keeps the columns with bit h set, its partner the others (live columns: those whose
    // bits below h are clear, each held for the lane's own bits)
#pragma unroll
    for (int h = 1; h < S; h <<= 1) {
        const bool up = (sl & h) != 0;
#pragma unroll
        for (int b = 0; b < 32; b++) {
            if ((b & h) || (b & (h - 1))) continue;
            const float send = up ? p[b] : p[b | h];
            const float keep = up ? p[b | h] : p[b];
            p[b] = fadd(keep, __shfl_xor_sync(0xffffffffu, send, h * G));
        }
        q = fadd(q, __shfl_xor_sync(0xffffffffu, q, h * G));
    }
#pragma unroll
    for (int m = 0; m < G; m++) v[m] = p[S * m];
}

// The sums fl(fl(P + P) - Q) of word group g into lane l's columns 32 k + l (acc[k]).
template <int CW>
__device__ __forceinline__ void slots_to_lanes(const float (&v)[SlotsShape<CW>::G], float q, int g, unsigned lane,
                                               float (&acc)[CW]) {
    constexpr int G = SlotsShape<CW>::G, S = SlotsShape<CW>::S;
    float r[G];
#pragma unroll
    for (int m = 0; m < G; m++) r[m] = fsub(fadd(v[m], v[m]), q);
#pragma unroll
    for (int kk = 0; kk < G; kk++) {
#pragma unroll
        for (int m = 0; m < G; m++) {
            const float t = __shfl_sync(0xffffffffu, r[m], (int)(lane % S) * G + kk);
            if (g * G + kk < CW && (int)(lane / S) == m) acc[g * G + kk] = t;
        }
    }
}

// The sums of word group g over quarters q0 .. q0 + nq - 1 of a hub row (quarter k: its slots
// S k .. S k + S - 1, edges t = S k + 4 S i + sl), one pass each, combined as
// ((q0 + q1) + (q2 + q3)) when nq = 4.  One pass instance for the group's quarter and the lone
// warp's four (NVRTC's time and the kernel's code: the four passes are not unrolled).
template <bool ADJF, int CW, int SW>
__device__ __forceinline__ void slots_quarters(long long e0, int d, int q0, int nq, int g, const int *col,
                                               const float *factor, const u32 *x, unsigned lane,
                                               float (&v)[SlotsShape<CW>::G], float &q) {
    constexpr int G = SlotsShape<CW>::G, S = SlotsShape<CW>::S;
    float c[G], qc = 0.0f;
#pragma unroll
    for (int m = 0; m < G; m++) c[m] = 0.0f;
#pragma unroll 1
    for (int k = 0; k < nq; k++) {
        float s[G], qs;
        slots_pass<ADJF, CW, SW, 4 * S>(e0, d, S * (q0 + k), g, col, factor, x, lane, s, qs);
        // k = 0: v = q0; 1: v = q0 + q1; 2: c = q2; 3: c = q2 + q3
#pragma unroll
        for (int m = 0; m < G; m++) {
            if (k == 0) v[m] = s[m];
            else if (k == 1) v[m] = fadd(v[m], s[m]);
            else if (k == 2) c[m] = s[m];
            else c[m] = fadd(c[m], s[m]);
        }
        if (k == 0) q = qs;
        else if (k == 1) q = fadd(q, qs);
        else if (k == 2) qc = qs;
        else qc = fadd(qc, qs);
    }
    if (nq == 4) {
#pragma unroll
        for (int m = 0; m < G; m++) v[m] = fadd(v[m], c[m]);
        q = fadd(q, qc);
    }
}

// A row of d > T edges: by one warp alone (grp < 0) its S slots in one pass, or (hub: a row of
// at least H edges) its 4 S slots in four; or, grp = warp & 3 of warps 4 k .. 4 k + 3 of one
// block (a hub row), quarter grp: each warp sums its quarter, writes it to its region of the
// warps' stage (st: the block's 8 regions of rw words, stq: of 32 factors' sums), and the
// group's first warp combines the four between two barriers of the group (named barrier 1 + k,
// 128 threads).  Returns true in the warp whose acc holds the row's sums (lane l: column
// 32 k + l in acc[k], before the row factor): the one alone, or the group's first.
template <bool ADJF, int CW, int SW = CW>
__device__ __forceinline__ bool spmm_bits_slots_row(long long e0, int d, bool hub, int grp, const int *col,
                                                    const float *factor, const u32 *x, unsigned lane, u32 *st, int rw,
                                                    u32 *stq, float (&acc)[CW]) {
    using Sh = SlotsShape<CW>;
    constexpr int G = Sh::G, S = Sh::S;
    const int warp = (int)(threadIdx.x >> 5);
    const unsigned bar = 1u + (unsigned)(warp >> 2);
    const bool quarters = grp >= 0 || hub;
#pragma unroll
    for (int g = 0; g < Sh::NG; g++) {
        float v[G], q;
        if (quarters)
            slots_quarters<ADJF, CW, SW>(e0, d, grp >= 0 ? grp : 0, grp >= 0 ? 1 : 4, g, col, factor, x, lane, v, q);
        else
            slots_pass<ADJF, CW, SW, S>(e0, d, 0, g, col, factor, x, lane, v, q);
        if (grp >= 0) {
            if (grp != 0) {
#pragma unroll
                for (int m = 0; m < G; m++) st[warp * rw + m * 32 + (int)lane] = __float_as_uint(v[m]);
                stq[warp * 32 + (int)lane] = __float_as_uint(q);
            }
            bar_named(bar, 128); // the quarters are written
            if (grp == 0) {
                const int w1 = warp + 1, w2 = warp + 2, w3 = warp + 3;
#pragma unroll
                for (int m = 0; m < G; m++) {
                    const int o = m * 32 + (int)lane;
                    v[m] = fadd(fadd(v[m], __uint_as_float(st[w1 * rw + o])),
                                fadd(__uint_as_float(st[w2 * rw + o]), __uint_as_float(st[w3 * rw + o])));
                }
                q = fadd(fadd(q, __uint_as_float(stq[w1 * 32 + (int)lane])),
                         fadd(__uint_as_float(stq[w2 * 32 + (int)lane]), __uint_as_float(stq[w3 * 32 + (int)lane])));
            }
            bar_named(bar, 128); // and read
        }
        if (grp <= 0) slots_to_lanes<CW>(v, q, g, lane, acc);
    }
    return grp <= 0;
}

} // namespace bgnn

#endif // BGNN_SPMM_BITS_SLOTS_CUH
