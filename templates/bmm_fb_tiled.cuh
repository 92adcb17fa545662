// bmm_fb_tiled.cuh - the fast bmm.FB{B,F}: float activations x [R][K] times b1 weights
// w [K][M] (canonical b1 layout), optionally with an inference-BatchNorm prologue applied to
// x as it is read, so the normalised matrix is never stored.  Y = 'F': the same kernel for
// bmm.FF{B,F} of f32 weights w [K][M] in the order seq+fma (acc = fmaf(x', w, acc) in k order,
// matmul.cuh's FMA product), the weights staged as they are.
//
// Exactly the semantics of matmul.cuh's FB product (docs/semantics.md): for each output
// (r, o) the sum runs over k = 0..K-1 in order from +0.0f, acc = fl(acc + v(w[k,o]) * x'[r,k]);
// under a split-k order (SPL = L) over each chunk of L k from +0.0f, the chunks' sums folded
// left to right as the k loop passes their ends (each thread's own registers: no extra sync).
// Each step is one __fmaf_rn(x', +-1.0f, acc): the product by +-1 is exact, so the single
// rounding of the fma is the rounding of the add - the same bits as the reference.  The
// prologue is x' = fl(fl(x - mean) * inv) [* gamma] [+ beta], inv = fl(1 / fl(sqrt(fl(var +
// eps)))), each step rounded as in elementwise.cuh's batchnorm.
//
// Work decomposition (register tiles, as SGEMM does, but never splitting k):
// * A tile is RT rows x OTW outputs, OTW = 32 when M <= 32 else 64.  RT (1..64) is chosen at
//   run time from the grid so that the row tiles spread evenly over the blocks:
//   RT = ceil(rows / (gridDim.x / out tiles)), capped at 64; blocks grid-stride over tiles.
//   The plan sizes the grid at 12 threads per row per output tile (about 21 rows a block), so
//   a Cora-sized layer is one tile per SM, not 1.3 tiles per SM on the busiest ones; from 128
//   rows per SM up, tiles are 64 rows (the surplus blocks find no tile and return).
// * A 256-thread block is 16 row slots x 16 output groups.  Warp w takes output quarter w & 3
//   and half h = w >> 2 of the tile's rows: the rows t with t % 2 == h, so both halves hold
//   the same number of rows for any RT; lane l takes the rows 2 (l / 4 + 8 i) + h, i < NR (NR
//   = 1, 2 or 4 row sets of 8, as the half's rows need), and outputs quarter * OTW / 4 + l % 4
//   + 4 j, j < OTW / 16.  Each thread keeps its up to 4 x 4 running sums (independent fma
//   chains) in registers.  In shared memory tile row t sits at position fbt_pos(t) = 8 (t % 2)
//   + (t / 2) % 8 + 16 (t / 16), so a warp reads 8 consecutive x rows at once.
// * K goes in chunks of KC = 64: the block stages the chunk of x (coalesced, prologue applied
//   once per element; 1 / sqrt(var + eps) computed once per column, during the previous
//   chunk's arithmetic) and of w as +-1.0f in shared memory, rows of KC + 4 floats, so every
//   16-byte read of a warp (8 x rows, 4 w rows) is free of bank conflicts; per 4 k a thread
//   issues NR + 4 such reads for 16 NR fmas (4 row sets: 8 reads for 64 fmas), one step ahead
//   of the fmas that use them.  A chunk of w is staged once for up to 64 rows, so on tall
//   inputs (the Reddit-sized graph's 602 features) its +-1 expansion and the shared-memory
//   reads per fma are half what 32-row tiles cost.  The next chunk's global values are loaded
//   into registers while the current one computes.
// * Output b1: each thread ors its bits into a shared tile of words, written once per tile
//   (padding bits zero); output f32: one store per element.
// * Tall inputs (M >= 128, no split-k, rows giving every SM BGNN_FBG_MIN_TILES_PER_SM tiles of
//   128 rows) go to bmm_fb_big.cuh instead: 128 x 128 tiles, 8 x 8 sums a thread, the same bits.
// Needs blockDim.x == 256 (the plan's block size).
#ifndef BGNN_BMM_FB_TILED_CUH
#define BGNN_BMM_FB_TILED_CUH

#include "bgnn_common.cuh"
#include "bmm_fb_big.cuh"
#include "epilogue.cuh"

namespace bgnn {

constexpr int FBT_ROWS = 64, FBT_OUTS = 64, FBT_KC = 64, FBT_PAD = 4;

// The shared memory of every instantiation: one block of it per kernel, however many FB
// products a (fused) kernel runs, since it belongs to this one non-template function.
struct FbtSmem {
    __align__(16) float xs[FBT_ROWS][FBT_KC + FBT_PAD];
    __align__(16) float ws[FBT_OUTS][FBT_KC + FBT_PAD];
    u32 ybits[FBT_ROWS][FBT_OUTS / 32];
    float inv[FBT_KC]; // BN: 1 / sqrt(var + eps) of the chunk's columns
};
__device__ __forceinline__ FbtSmem &fbt_smem() {
    __shared__ FbtSmem s;
    return s;
}

// Shared-memory position of tile row t (< FBT_ROWS): 8 (t % 2) + (t / 2) % 8 + 16 (t / 16), so
// that the 8 rows a warp reads at once (lanes l / 4 of one half) are 8 consecutive positions.
__device__ __forceinline__ int fbt_pos(int t) { return 8 * (t & 1) + ((t >> 1) & 7) + 16 * (t >> 4); }

// One k for one thread: acc[h][j] = fma(x of row h, weight of output j, acc[h][j]), h < NR.
template <int JN, int NR, class W>
__device__ __forceinline__ void fbt_step(float (&acc)[4][4], const float (&xv)[4], W weight) {
#pragma unroll
    for (int j = 0; j < JN; j++) {
        const float wj = weight(j);
#pragma unroll
        for (int h = 0; h < NR; h++) acc[h][j] = __fmaf_rn(xv[h], wj, acc[h][j]);
    }
}

// Component i (0..3, a constant once unrolled) of a float4.
__device__ __forceinline__ float fbt_comp(const float4 &v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

// The 4 k of one float4 step, in k order: x values a[h], weights wv[j].
template <int JN, int NR>
__device__ __forceinline__ void fbt_step4(float (&acc)[4][4], const float4 (&a)[NR], const float4 (&wv)[JN]) {
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float v[4];
#pragma unroll
        for (int h = 0; h < NR; h++) v[h] = fbt_comp(a[h], i);
        fbt_step<JN, NR>(acc, v, [&](int j) { return fbt_comp(wv[j], i); });
    }
}

// Reads the float4 step at k: rows xr[h], outputs w[j].
template <int JN, int NR>
__device__ __forceinline__ void fbt_load4(float4 (&a)[NR], float4 (&wv)[JN], const float *const (&xr)[4],
                                          const float *const (&w)[JN], int k) {
#pragma unroll
    for (int h = 0; h < NR; h++) a[h] = *(const float4 *)&xr[h][k];
#pragma unroll
    for (int j = 0; j < JN; j++) wv[j] = *(const float4 *)&w[j][k];
}

// One staged chunk (kn real k) for one thread: its NR rows xr[h] (1, 2 or 4), outputs w[j].
// The operands of the next 4 k are read from shared memory while the fmas of these 4 run; the
// loop takes 8 k a turn with two register buffers in turn (no register copies between steps).
template <int JN, int NR>
__device__ __forceinline__ void fbt_chunk(int kn, const float *const (&xr)[4],
                                          const float (*ws)[FBT_KC + FBT_PAD], const int (&oo)[JN],
                                          float (&acc)[4][4]) {
    const float *w[JN];
#pragma unroll
    for (int j = 0; j < JN; j++) w[j] = ws[oo[j]];
    const int k4 = kn & ~3, k8 = kn & ~7;
    float4 a0[NR], w0[JN], a1[NR], w1[JN];
    if (k4 > 0) fbt_load4<JN, NR>(a0, w0, xr, w, 0);
#pragma unroll 1
    for (int k = 0; k < k8; k += 8) {
        fbt_load4<JN, NR>(a1, w1, xr, w, k + 4);
        fbt_step4<JN, NR>(acc, a0, w0);
        if (k + 8 < k4) fbt_load4<JN, NR>(a0, w0, xr, w, k + 8);
        fbt_step4<JN, NR>(acc, a1, w1);
    }
    if (k8 < k4) fbt_step4<JN, NR>(acc, a0, w0); // an odd float4 step (loaded above)
#pragma unroll 1
    for (int k = k4; k < kn; k++) { // the real tail only (under 4 k): no padding term is ever added
        float v[4];
#pragma unroll
        for (int h = 0; h < NR; h++) v[h] = xr[h][k];
        fbt_step<JN, NR>(acc, v, [&](int j) { return w[j][k]; });
    }
}

// BN: 0 none; 1 mean/var; 2 + gamma; 3 + beta; 4 + gamma and beta (elementwise.cuh order);
// 5 a column scale fl(x * s[k]) with s passed as `mean` (fold-batchnorm-mm's prologue,
// epilogue.cuh ProScl).  EPI: the epilogue (epilogue.cuh) on each output before it is stored.
// SPL: the recorded float order (docs/semantics.md, section 2): 0 = seq; L > 0 (a multiple of
// FBT_KC) = split-k, chunks of L k each summed from +0.0f in acc, folded left to right into
// tot when the staging loop passes a chunk boundary (tot = p0, then fl(tot + p_s)).
// Y: 'B' b1 weights (wv: u32 words), 'F' f32 weights (wv: floats; seq+fma, SPL 0).
template <char Z, long long K, long long M, int BN, unsigned EPS_BITS, long long SPL = 0, char Y = 'B',
          class Epi = EpEnd>
__device__ __forceinline__ void bmm_fb_tiled(long long rows, void *yp, const float *x, const void *wv,
                                             const float *mean, const float *var,
                                             const float *gamma, const float *beta, Epi epi = Epi()) {
    static_assert(Y == 'B' || (Y == 'F' && SPL == 0), "bmm_fb_tiled: b1 weights, or f32 weights in seq+fma");
    const u32 *w = (const u32 *)wv;
    const float *wf = (const float *)wv;
    (void)w, (void)wf;
    static_assert(Z == 'B' || Z == 'F', "bmm_fb_tiled: output F or B");
    static_assert(SPL >= 0 && SPL % FBT_KC == 0, "bmm_fb_tiled: split-k chunks are multiples of FBT_KC");
    if constexpr (SPL == 0 && M >= FBG_O) { // tall inputs: 8 x 8 sums a thread (bmm_fb_big.cuh)
        static_assert(sizeof(FbgSmem) <= sizeof(FbtSmem) && alignof(FbgSmem) <= alignof(FbtSmem),
                      "bmm_fb_big: its stages fit bmm_fb_tiled's block");
        unsigned nsm_big;
        asm("mov.u32 %0, %%nsmid;" : "=r"(nsm_big));
        if (rows >= (long long)BGNN_FBG_MIN_TILES_PER_SM * FBG_R * nsm_big) { // grid-uniform
            bmm_fb_big<Z, K, M, BN, EPS_BITS, Y>(*reinterpret_cast<FbgSmem *>(&fbt_smem()), rows, yp, x, wv, mean,
                                                 var, gamma, beta, epi);
            return;
        }
    }
    constexpr long long MW = words_of(M);
    constexpr int OTW = M <= 32 ? 32 : FBT_OUTS;              // outputs per tile
    constexpr int TW = OTW / 32;                              // b1 words per tile row
    constexpr int JN = OTW / 16;                              // outputs per thread
    constexpr long long OT = (M + OTW - 1) / OTW;             // output tiles
    constexpr int XPT = FBT_ROWS * FBT_KC / 256;              // x elements staged per thread
    constexpr int WPT = OTW * FBT_KC / 256;                   // w elements staged per thread
    FbtSmem &sm = fbt_smem();
    auto &xs = sm.xs;
    auto &ws = sm.ws;
    auto &ybits = sm.ybits;
    float *inv_s = sm.inv;
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int sk = tid % FBT_KC;      // the k this thread stages (x and w)
    const int sr = tid / FBT_KC;      // its first staged x row / w output (then + 4 each step)
    const int half = warp >> 2;                     // compute: tile rows t with t % 2 == half,
    const int slot = half * 8 + (lane >> 2);        // at positions slot + 16 h, h < 4
    int oo[JN];                                     // compute: this thread's outputs in the tile
#pragma unroll
    for (int j = 0; j < JN; j++) oo[j] = (warp & 3) * (OTW / 4) + (lane & 3) + 4 * j;
    // Rows per tile from the grid: the row tiles spread evenly over the blocks.  When the rows
    // fill every SM twice over at 32 a tile, full tiles (no idle second-row lanes) are better.
    const long long per = (long long)gridDim.x / OT > 0 ? (long long)gridDim.x / OT : 1;
    long long rt_max = (rows + per - 1) / per;
    unsigned nsm;
    asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
    if (rt_max > FBT_ROWS || (rows + FBT_ROWS - 1) / FBT_ROWS * OT >= 2LL * nsm) rt_max = FBT_ROWS;
    if (rt_max < 1) rt_max = 1;
    const long long ntiles = (rows + rt_max - 1) / rt_max * OT;
    const float eps = f32_from_bits(EPS_BITS);
    (void)eps, (void)mean, (void)var, (void)gamma, (void)beta;
    for (long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const long long r0 = (t / OT) * rt_max, o0 = (t % OT) * OTW;
        const int rt = (int)(rows - r0 < rt_max ? rows - r0 : rt_max); // rows of this tile
        float acc[4][4], tot[4][4]; // running sums; split-k: the folded partials
#pragma unroll
        for (int h = 0; h < 4; h++)
#pragma unroll
            for (int j = 0; j < 4; j++) acc[h][j] = tot[h][j] = 0.0f;
        float xr[XPT];
        u32 wword[TW];
        float bn_m = 0.0f, bn_v = 0.0f, bn_g = 0.0f, bn_b = 0.0f; // the BN operands of column sk
        // registers <- chunk k0 (global)
        auto fetch = [&](long long k0) {
#pragma unroll
            for (int j = 0; j < XPT; j++) {
                const int r = sr + 4 * j;
                xr[j] = (k0 + sk < K && r < rt) ? x[(r0 + r) * K + k0 + sk] : 0.0f;
            }
            if constexpr (Y == 'B')
#pragma unroll
                for (int d = 0; d < TW; d++)
                    wword[d] = (k0 + sk < K && (o0 >> 5) + d < MW) ? w[(k0 + sk) * MW + (o0 >> 5) + d] : 0u;
            if constexpr (BN == 5) {
                if (k0 + sk < K) bn_m = mean[k0 + sk];
            } else if constexpr (BN > 0) {
                if (k0 + sk < K) {
                    bn_m = mean[k0 + sk];
                    bn_v = var[k0 + sk];
                    if constexpr (BN == 2 || BN == 4) bn_g = gamma[k0 + sk];
                    if constexpr (BN == 3 || BN == 4) bn_b = beta[k0 + sk];
                }
            }
        };
        if constexpr (Z == 'B') {
            __syncthreads(); // the previous tile's words are written out
            if (tid < FBT_ROWS * TW) ybits[tid / TW][tid % TW] = 0u;
        }
        // BN: threads 0..KC-1 compute the chunk's inverse deviations once, before the barrier
        // that starts the chunk (the division and square root are long instruction sequences).
        auto bn_inverse = [&]() {
            if constexpr (BN > 0 && BN < 5)
                if (tid < FBT_KC) inv_s[tid] = fdiv(1.0f, fsqrt(fadd(bn_v, eps)));
        };
        fetch(0);
        bn_inverse();
        for (long long k0 = 0; k0 < K; k0 += FBT_KC) {
            const int kn = (int)(K - k0 < FBT_KC ? K - k0 : FBT_KC);
            __syncthreads(); // the previous chunk (or tile) is consumed; inv_s holds this chunk's
#pragma unroll
            for (int j = 0; j < XPT; j++) {
                float v = xr[j];
                if constexpr (BN == 5) {
                    if (sk < kn) v = fmul(v, bn_m);
                } else if constexpr (BN > 0) {
                    if (sk < kn) {
                        v = fmul(fsub(v, bn_m), inv_s[sk]);
                        if constexpr (BN == 2 || BN == 4) v = fmul(v, bn_g);
                        if constexpr (BN == 3 || BN == 4) v = fadd(v, bn_b);
                    }
                }
                const int t = sr + 4 * j;
                xs[fbt_pos(t)][sk] = v;
            }
#pragma unroll
            for (int j = 0; j < WPT; j++) {
                if constexpr (Y == 'F') { // f32 weights, read here: output tid % OTW, k tid / OTW + j 256 / OTW
                    const int o = tid % OTW, kk = tid / OTW + j * (256 / OTW);
                    ws[o][kk] = (k0 + kk < K && o0 + o < M) ? wf[(k0 + kk) * M + o0 + o] : 0.0f;
                } else {
                    const int o = sr + 4 * j;
                    const u32 ww = (TW > 1 && o >= 32) ? wword[TW - 1] : wword[0]; // no local-memory index
                    ws[o][sk] = pm1((ww >> (o & 31)) & 1u);
                }
            }
            __syncthreads();
            if (k0 + FBT_KC < K) fetch(k0 + FBT_KC); // in flight while this chunk computes
            const int hrows = (rt - half + 1) / 2; // rows of this warp's half: 8 a row set
            const float *const xrow[4] = {xs[slot], xs[slot + 16], xs[slot + 32], xs[slot + 48]};
            if (hrows > 16) fbt_chunk<JN, 4>(kn, xrow, ws, oo, acc); // a third set: its 4th is 0
            else if (hrows > 8) fbt_chunk<JN, 2>(kn, xrow, ws, oo, acc);
            else if (hrows > 0) fbt_chunk<JN, 1>(kn, xrow, ws, oo, acc);
            if (k0 + FBT_KC < K) bn_inverse(); // the next chunk's: inv_s was read before the barrier
            if constexpr (SPL > 0) { // end of a split-k chunk (or of K): fold its partial sums
                if ((k0 + FBT_KC) % SPL == 0 || k0 + FBT_KC >= K) {
                    const bool first = k0 + FBT_KC <= SPL;
#pragma unroll
                    for (int h = 0; h < 4; h++)
#pragma unroll
                        for (int j = 0; j < 4; j++) {
                            tot[h][j] = first ? acc[h][j] : fadd(tot[h][j], acc[h][j]);
                            acc[h][j] = 0.0f;
                        }
                }
            }
        }
        if constexpr (SPL > 0) {
#pragma unroll
            for (int h = 0; h < 4; h++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[h][j] = tot[h][j];
        }
#pragma unroll
        for (int h = 0; h < 4; h++) {
            const int r = 2 * ((lane >> 2) + 8 * h) + half; // the tile row at position slot + 16 h
#pragma unroll
            for (int j = 0; j < JN; j++) {
                const long long o = o0 + oo[j];
                if (r >= rt || o >= M) continue;
                if constexpr (Z == 'B') {
                    if (ep_bit(epi, r0 + r, o, acc[h][j])) atomicOr(&ybits[r][oo[j] >> 5], 1u << (oo[j] & 31));
                } else {
                    ((float *)yp)[(r0 + r) * M + o] = ep_val(epi, r0 + r, o, acc[h][j]);
                }
            }
        }
        if constexpr (Z == 'B') {
            __syncthreads();
            if (tid < rt * TW) {
                const int r = tid / TW, d = tid % TW;
                if ((o0 >> 5) + d < MW) ((u32 *)yp)[(r0 + r) * MW + (o0 >> 5) + d] = ybits[r][d];
            }
        }
    }
}

} // namespace bgnn

#endif // BGNN_BMM_FB_TILED_CUH
