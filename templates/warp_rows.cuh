// warp_rows.cuh - a row group's launches on one row at a time, the row held by one warp in
// registers from launch to launch (cg_rows.c, "warp rows"): the values a launch of the group
// passes to a later one as its main operand never go through memory.
//
// A row value of C columns, CW = ceil(C / 32) words (at most WR_WORDS_MAX):
//   F  float v[CW]: lane l holds column l + 32 w in v[w] (0.0f past C);
//   B  u32 b[CW]: every lane holds every word (padding bits zero);
//   a per-row float (absmean): every lane holds it.
// Each function computes exactly what its op's template computes for that row (the same float
// operations in the same order): bspmm_bits_rows (spmm_bits.cuh) a row without a work list,
// bin_rows (bin_ops.cuh), absmean in the order lanes(32) (rowwise.cuh: lane l sums its columns
// l + 32 w in w order, then the warp's butterfly) or seq (warp_seq_sum), bmm of B activations and transposed B
// weights (matmul.cuh bmm_dot: K - 2 popc, then the epilogue), scl and relu (elementwise.cuh);
// in a group of graph rows (a row a graph), readout, bmm.FF* in the order seq or splitk (bmm_dot_f) and
// log_softmax (lsm_warp).
// Operands other than the main one (epilogue and prologue tables) are read from memory at row
// r as the templates read them; an earlier member's per-row value (an absmean as a scale) is
// passed as a RowVal (epilogue.cuh) instead.  The code generator stores a value, followed by
// __syncwarp, when anything reads it from memory.  Every lane of the warp calls each function
// (ballots and shuffles take the full mask).
#ifndef BGNN_WARP_ROWS_CUH
#define BGNN_WARP_ROWS_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"
#include "rowwise.cuh"
#include "spmm_bits.cuh"

namespace bgnn {

constexpr int WR_WORDS_MAX = 8; // rows of up to 256 columns
template <long long C>
struct WrWords {
    static_assert(words_of(C) <= WR_WORDS_MAX, "warp rows: at most 256 columns");
    static constexpr int n = C > 0 ? (int)words_of(C) : 1;
};

__device__ __forceinline__ unsigned wr_lane() { return threadIdx.x & 31u; }

// ---- memory -----------------------------------------------------------------------------
template <long long C>
__device__ __forceinline__ void wr_load_f(const float *x, long long r, float (&v)[WrWords<C>::n]) {
    const unsigned lane = wr_lane();
#pragma unroll
    for (int w = 0; w < WrWords<C>::n; w++) {
        const long long c = 32LL * w + lane;
        v[w] = c < C ? x[r * C + c] : 0.0f;
    }
}
template <long long C>
__device__ __forceinline__ void wr_store_f(float *y, long long r, const float (&v)[WrWords<C>::n]) {
    const unsigned lane = wr_lane();
#pragma unroll
    for (int w = 0; w < WrWords<C>::n; w++) {
        const long long c = 32LL * w + lane;
        if (c < C) y[r * C + c] = v[w];
    }
}
template <long long C>
__device__ __forceinline__ void wr_load_b(const u32 *x, long long r, u32 (&b)[WrWords<C>::n]) {
    constexpr long long CW = words_of(C);
#pragma unroll
    for (int w = 0; w < WrWords<C>::n; w++) b[w] = w < CW ? x[r * CW + w] : 0u;
}
template <long long C>
__device__ __forceinline__ void wr_store_b(u32 *y, long long r, const u32 (&b)[WrWords<C>::n]) {
    constexpr long long CW = words_of(C);
    const unsigned lane = wr_lane();
#pragma unroll
    for (int w = 0; w < WrWords<C>::n; w++)
        if (w < CW && lane == (unsigned)w) y[r * CW + w] = b[w];
}
__device__ __forceinline__ void wr_store_s(float *y, long long r, float s) {
    if (wr_lane() == 0u) y[r] = s;
}

// ---- the row's result through an epilogue -------------------------------------------------
// Column c = 32 w + lane's value t: the F row's float (0.0f past C), or the B row's words (one
// ballot a word, padding bits 0).
template <long long C, class Epi>
__device__ __forceinline__ void wr_out(long long r, int w, float t, const Epi &epi, float (&v)[WrWords<C>::n]) {
    static_assert(!Epi::lsm, "warp rows: no log_softmax tail (plan_build.c admits none)");
    const long long c = 32LL * w + wr_lane();
    v[w] = c < C ? ep_val(epi, r, c, t) : 0.0f;
}
template <long long C, class Epi>
__device__ __forceinline__ void wr_out(long long r, int w, float t, const Epi &epi, u32 (&b)[WrWords<C>::n]) {
    const long long c = 32LL * w + wr_lane();
    b[w] = __ballot_sync(0xffffffffu, c < C && ep_bit(epi, r, c, t) != 0u);
}

// ---- ops ----------------------------------------------------------------------------------
// bspmm.B?{F,B} of bit activations x (rows of C bits, gathered at the row's neighbours): the
// row's sums as spmm_bits_lanes takes them (the warp's stage in blocks of at most 8 warps), or
// in the order slots(SL, ST, SH) (SL > 0) a row of more than ST edges as spmm_bits_slots_row
// (one warp; 4 SL slots from SH edges), fl(rowf[r] * s) for adjacency B, then the epilogue.
// Out: float or u32 [CW].
template <bool ADJF, long long C, int SL = 0, int ST = 0, int SH = 0, class Out, class Epi>
__device__ __forceinline__ void wr_bspmm_bits(long long r, Out &out, const long long *rowptr, const int *col,
                                              const float *rowf, const float *factor, const u32 *x, Epi epi) {
    constexpr int CW = WrWords<C>::n;
    const unsigned lane = wr_lane();
    const long long e0 = rowptr[r], e1 = rowptr[r + 1];
    float acc[CW];
#pragma unroll
    for (int w = 0; w < CW; w++) acc[w] = 0.0f;
    static_assert(SL == 0 || (SL == SlotsShape<CW>::S && SH > ST), "wr_bspmm_bits: the slots the codegen records");
    bool slots = false;
    if constexpr (SL > 0) {
        slots = e1 - e0 > ST;
        if (slots)
            spmm_bits_slots_row<ADJF, CW>(e0, (int)(e1 - e0), e1 - e0 >= SH, -1, col, factor, x, lane, nullptr, 0, nullptr,
                                          acc);
    }
    if (!slots) {
        if (blockDim.x <= 256) spmm_bits_lanes<ADJF, CW, CW, true>(e0, e1, col, factor, x, lane, acc);
        else spmm_bits_lanes<ADJF, CW>(e0, e1, col, factor, x, lane, acc);
    }
#pragma unroll
    for (int w = 0; w < CW; w++) {
        float v = acc[w];
        if constexpr (!ADJF) v = fmul(rowf[r], v);
        wr_out<C>(r, w, v, epi, out);
    }
}

// wr_bspmm_bits over the per-graph kernel's graph stage (cg_stage.c): the graph's CSR (offsets
// from its first edge, node ids from its first node, at most BG_PLAN_GSTAGE_EDGES edges) and
// x's rows in shared memory.  The edges in CSR order, each one's column and words read as
// broadcasts: the sums spmm_bits_lanes takes, fl(acc + (bit ? f : -f)) from +0, f = colf[j]
// (ADJF: the edge's weight).  UNIT (colf = 1: norm none or mean) makes every term +-1, so the
// sum is exact in any order (|sum| <= 512 < 2^24) and is counted in integers, 2 ones - degree.
// ROW1 (norm none): rowf = 1, and fl(1 * s) = s is not computed.
template <bool ADJF, bool UNIT, bool ROW1, long long C, class Out, class Epi>
__device__ __forceinline__ void wr_bspmm_bits_gs(long long r, Out &out, const long long *rowptr, const int *col,
                                                 const float *rowf, const float *factor, const u32 *x, Epi epi) {
    constexpr int CW = WrWords<C>::n, XW = (int)words_of(C);
    const unsigned lane = wr_lane();
    const int e0 = (int)rowptr[r], e1 = (int)rowptr[r + 1];
    float acc[CW];
    if constexpr (UNIT && !ADJF) {
        int ones[CW];
#pragma unroll
        for (int k = 0; k < CW; k++) ones[k] = 0;
#pragma unroll 4
        for (int e = e0; e < e1; e++) {
            const u32 *xr = x + col[e] * XW;
#pragma unroll
            for (int k = 0; k < CW; k++) ones[k] += (int)((xr[k] >> lane) & 1u);
        }
#pragma unroll
        for (int k = 0; k < CW; k++) acc[k] = (float)(2 * ones[k] - (e1 - e0));
    } else {
        const unsigned sh = 31u - lane;
#pragma unroll
        for (int k = 0; k < CW; k++) acc[k] = 0.0f;
#pragma unroll 4
        for (int e = e0; e < e1; e++) {
            const int j = col[e];
            const u32 nf = __float_as_uint(ADJF ? factor[e] : factor[j]) ^ 0x80000000u;
            const u32 *xr = x + j * XW;
#pragma unroll
            for (int k = 0; k < CW; k++) acc[k] = fadd(acc[k], signed_by_shifted(nf, xr[k], sh));
        }
    }
#pragma unroll
    for (int w = 0; w < CW; w++) {
        float v = acc[w];
        if constexpr (!ADJF && !ROW1) v = fmul(rowf[r], v);
        wr_out<C>(r, w, v, epi, out);
    }
}

// bin of an F row (by the sign, or the epilogue's threshold table): bin_rows' bits.
template <long long C, class Epi = EpEnd>
__device__ __forceinline__ void wr_bin(long long r, u32 (&b)[WrWords<C>::n], const float (&v)[WrWords<C>::n],
                                       Epi epi = Epi()) {
    const unsigned lane = wr_lane();
#pragma unroll
    for (int w = 0; w < WrWords<C>::n; w++) {
        const long long c = 32LL * w + lane;
        b[w] = __ballot_sync(0xffffffffu, c < C && ep_bit(epi, r, c, v[w]) != 0u);
    }
}
// bin of a B row: a copy.
template <long long C, class Epi = EpEnd>
__device__ __forceinline__ void wr_bin(long long, u32 (&b)[WrWords<C>::n], const u32 (&x)[WrWords<C>::n],
                                       Epi = Epi()) {
#pragma unroll
    for (int w = 0; w < WrWords<C>::n; w++) b[w] = x[w];
}

// A prologue's per-column factors for the lane's columns (ProBn: inv = 1 / sqrt(var + eps),
// as its table in absmean holds them), computed once per warp.
template <long long C, class Pro>
__device__ __forceinline__ void wr_pro_inv(const Pro &pro, float (&iv)[WrWords<C>::n]) {
    const unsigned lane = wr_lane();
#pragma unroll
    for (int w = 0; w < WrWords<C>::n; w++) {
        const long long c = 32LL * w + lane;
        if constexpr (Pro::kInv) iv[w] = c < C ? pro.inv(c) : 0.0f;
        else iv[w] = 0.0f;
    }
}

// absmean: fl(sum_c |pro(c, x)| (float64) / C), every lane the same; the sum in the order
// lanes(32) (L = 32: lane l sums its columns in w order, then the warp's butterfly) or seq
// (L = 0: column after column from +0, each term broadcast from its lane, as warp_seq_sum).
template <long long C, int L, class Pro>
__device__ __forceinline__ float wr_absmean(const float (&v)[WrWords<C>::n], const Pro &pro,
                                            const float (&iv)[WrWords<C>::n]) {
    static_assert(L == 32 || L == 0, "wr_absmean: lanes(32) or seq");
    if constexpr (C == 0) {
        return 0.0f;
    } else {
        const unsigned lane = wr_lane();
        float t[WrWords<C>::n];
#pragma unroll
        for (int w = 0; w < WrWords<C>::n; w++) {
            const long long c = 32LL * w + lane;
            if constexpr (Pro::kInv) t[w] = c < C ? pro.with_inv(c, v[w], iv[w]) : 0.0f;
            else t[w] = c < C ? pro(c, v[w]) : 0.0f;
        }
        double s = 0.0;
        if constexpr (L == 32) {
            s = warp_lanes_sum_regs<C>((int)lane, t, AbsDouble{});
        } else {
#pragma unroll
            for (int w = 0; w < WrWords<C>::n; w++) {
                const int nc = C - 32LL * w < 32 ? (int)(C - 32LL * w) : 32;
                for (int i = 0; i < nc; i++) s = dadd(s, AbsDouble{}(__shfl_sync(0xffffffffu, t[w], i)));
            }
        }
        return __double2float_rn(div_by_cols<C>(s));
    }
}

// The weight words lane l uses in a BB product: w (b1t [M][KW]) rows o = l + 32 j, j < MCW.
template <long long K, long long M>
struct WrBbWeights {
    static constexpr int KW = K > 0 ? (int)words_of(K) : 1, MCW = WrWords<M>::n;
    u32 w[MCW][KW];
};
template <long long K, long long M>
__device__ __forceinline__ void wr_bb_weights(const u32 *w, WrBbWeights<K, M> &wr) {
    constexpr int KW = WrBbWeights<K, M>::KW, MCW = WrBbWeights<K, M>::MCW;
    const unsigned lane = wr_lane();
#pragma unroll
    for (int j = 0; j < MCW; j++) {
        const long long o = 32LL * j + lane;
#pragma unroll
        for (int i = 0; i < KW; i++) wr.w[j][i] = o < M && i < words_of(K) ? w[o * words_of(K) + i] : 0u;
    }
}

// bmm.BB{F,B} with transposed weights: t = K - 2 popc(x XOR w_o) over the real K bits (an
// exact float), then the epilogue; the weights from registers (wr_bb_weights).
template <long long K, long long M, class Out, class Epi>
__device__ __forceinline__ void wr_bmm_bb(long long r, Out &out, const u32 (&x)[WrWords<K>::n],
                                          const WrBbWeights<K, M> &wr, Epi epi) {
    constexpr int KW = WrBbWeights<K, M>::KW, MCW = WrBbWeights<K, M>::MCW;
#pragma unroll
    for (int j = 0; j < MCW; j++) {
        int pc = 0;
#pragma unroll
        for (int i = 0; i < KW; i++) pc += popc((x[i] ^ wr.w[j][i]) & word_mask(K, i));
        wr_out<M>(r, j, (float)((int)K - 2 * pc), epi, out); // K <= 256: exact in int
    }
}

// Column 32 w + lane's value of a row: an F row's float, a B row's bit as +-1.
template <int N>
__device__ __forceinline__ float wr_value(const float (&x)[N], int w) { return x[w]; }
template <int N>
__device__ __forceinline__ float wr_value(const u32 (&x)[N], int w) { return pm1((x[w] >> wr_lane()) & 1u); }

// scl of a B row (read as +-1) or an F row: fl(fl(v * rf[r]) * cf[c]), absent factors skipped;
// rf a pointer or a RowVal (an earlier member's per-row value).
template <long long C, bool HAS_R, bool HAS_C, class X, class RF>
__device__ __forceinline__ void wr_scl(long long r, float (&y)[WrWords<C>::n], const X &x, RF rf,
                                       const float *cf) {
    const unsigned lane = wr_lane();
#pragma unroll
    for (int w = 0; w < WrWords<C>::n; w++) {
        const long long c = 32LL * w + lane;
        float v = 0.0f;
        if (c < C) { // padding columns read no factor
            v = wr_value(x, w);
            if constexpr (HAS_R) v = fmul(v, rf[r]);
            if constexpr (HAS_C) v = fmul(v, cf[c]);
        }
        y[w] = v;
    }
}

// relu: v > 0 ? v : +0.
template <long long C>
__device__ __forceinline__ void wr_relu(float (&y)[WrWords<C>::n], const float (&x)[WrWords<C>::n]) {
#pragma unroll
    for (int w = 0; w < WrWords<C>::n; w++) y[w] = x[w] > 0.0f ? x[w] : 0.0f;
}

// ---- graph rows (a group of graph rows: a readout, then the classifier) --------------------
// readout of graph g (node rows graph_ptr[g] .. graph_ptr[g + 1] - 1 of x, a gather): each
// column as readout's thread computes it (sum: 8 nodes' loads, then added in node order from
// +0; mean: that sum over the count; max: the first node's, then the larger), 0 for an empty
// graph.
template <char X, long long C, int REDUCE>
__device__ __forceinline__ void wr_readout(long long g, float (&y)[WrWords<C>::n], const void *xp,
                                           const long long *graph_ptr) {
    static_assert(REDUCE >= 0 && REDUCE <= 2, "wr_readout: sum, mean or max");
    constexpr int CW = WrWords<C>::n;
    const unsigned lane = wr_lane();
    const long long lo = graph_ptr[g], hi = graph_ptr[g + 1];
    float acc[CW];
#pragma unroll
    for (int w = 0; w < CW; w++) acc[w] = 0.0f;
    if (hi > lo) {
        if constexpr (REDUCE == 2) {
#pragma unroll
            for (int w = 0; w < CW; w++) {
                const long long c = 32LL * w + lane;
                if (c < C) acc[w] = readout_val<X, C, REDUCE>(xp, lo, c);
            }
            for (long long v = lo + 1; v < hi; v++)
#pragma unroll
                for (int w = 0; w < CW; w++) {
                    const long long c = 32LL * w + lane;
                    if (c < C) {
                        const float tv = readout_val<X, C, REDUCE>(xp, v, c);
                        if (tv > acc[w]) acc[w] = tv;
                    }
                }
        } else {
            long long v = lo;
            for (; v + 8 <= hi; v += 8) {
                float t[8][CW];
#pragma unroll
                for (int k = 0; k < 8; k++)
#pragma unroll
                    for (int w = 0; w < CW; w++) {
                        const long long c = 32LL * w + lane;
                        t[k][w] = c < C ? readout_val<X, C, REDUCE>(xp, v + k, c) : 0.0f;
                    }
#pragma unroll
                for (int k = 0; k < 8; k++)
#pragma unroll
                    for (int w = 0; w < CW; w++) acc[w] = fadd(acc[w], t[k][w]);
            }
            for (; v < hi; v++)
#pragma unroll
                for (int w = 0; w < CW; w++) {
                    const long long c = 32LL * w + lane;
                    acc[w] = fadd(acc[w], c < C ? readout_val<X, C, REDUCE>(xp, v, c) : 0.0f);
                }
            if constexpr (REDUCE == 1)
#pragma unroll
                for (int w = 0; w < CW; w++) acc[w] = fdiv(acc[w], (float)(hi - lo));
        }
    }
#pragma unroll
    for (int w = 0; w < CW; w++) y[w] = 32LL * w + lane < C ? acc[w] : 0.0f;
}

// bmm.FF{F,B} of an F row and f32 weights w [K][M] in the order seq (SPL = 0) or splitk(SPL)
// (FMA: __fmaf_rn(x, w, acc), else fl(acc + fl(x * w))), as bmm_dot_f: k ascending from +0
// in each chunk of SPL k (one chunk of K for seq), the chunks' partials folded left to right;
// lane l takes outputs o = l + 32 j, x[k] broadcast from its lane, then the epilogue.
template <long long K, long long M, long long SPL, bool FMA, class Out, class Epi>
__device__ __forceinline__ void wr_bmm_ff(long long r, Out &out, const float (&x)[WrWords<K>::n], const float *w,
                                          Epi epi) {
    constexpr int MCW = WrWords<M>::n;
    constexpr int L = SPL > 0 ? (int)SPL : (K > 0 ? (int)K : 1);
    const unsigned lane = wr_lane();
    float tot[MCW];
#pragma unroll
    for (int j = 0; j < MCW; j++) tot[j] = 0.0f;
    for (int k0 = 0; k0 < (int)K; k0 += L) {
        const int k1 = (int)K - k0 < L ? (int)K : k0 + L;
        float acc[MCW];
#pragma unroll
        for (int j = 0; j < MCW; j++) acc[j] = 0.0f;
#pragma unroll 16
        for (int k = k0; k < k1; k++) {
            const float xk = __shfl_sync(0xffffffffu, x[k >> 5], k & 31);
#pragma unroll
            for (int j = 0; j < MCW; j++) {
                const long long o = 32LL * j + lane;
                const float wk = o < M ? w[(long long)k * M + o] : 0.0f;
                if constexpr (FMA) acc[j] = __fmaf_rn(xk, wk, acc[j]);
                else acc[j] = fadd(acc[j], fmul(xk, wk));
            }
        }
#pragma unroll
        for (int j = 0; j < MCW; j++) tot[j] = k0 == 0 ? acc[j] : fadd(tot[j], acc[j]);
    }
#pragma unroll
    for (int j = 0; j < MCW; j++) wr_out<M>(r, j, tot[j], epi, out);
}

// log_softmax of a row of at most 32 columns: lsm_warp (epilogue.cuh), the log_softmax kernel's
// own function for such rows.
template <long long C>
__device__ __forceinline__ void wr_log_softmax(float (&y)[WrWords<C>::n], const float (&x)[WrWords<C>::n]) {
    static_assert(C >= 1 && C <= 32, "wr_log_softmax: a row of 1 to 32 columns");
    const int lane = (int)wr_lane();
    const float o = lsm_warp<C>(lane, lane < C ? x[0] : 0.0f);
    y[0] = lane < C ? o : 0.0f;
}

} // namespace bgnn

#endif // BGNN_WARP_ROWS_CUH
