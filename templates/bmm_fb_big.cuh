// bmm_fb_big.cuh - bmm_fb_tiled.cuh's path for tall inputs: the same product (float activations
// times b1 weights as +-1.0f, or f32 weights, each output's fmas in k order from +0.0f, the
// BatchNorm prologue on x as it is staged, the epilogue on each output) in tiles of 128 rows x
// 128 outputs with 8 x 8 running sums a thread, the tiles SGEMM uses.
//
// Why: bmm_fb_tiled's 4 x 4 sums a thread read two float4 from shared memory for every 8 fmas
// (8 reads for 64), which holds it near half the FP32 peak (the Reddit-sized 602 -> 128 product
// at 40% of it); here a thread reads four float4 for 64 fmas, so shared memory keeps up.
//
// Work: a 256-thread block, thread (ty, tx) = (tid / 16, tid % 16), holds the sums of tile rows
// 4 ty + i and 64 + 4 ty + i (i < 4) for outputs 4 tx + j and 64 + 4 tx + j (j < 4); blocks
// grid-stride over the tiles.  K goes in chunks of FBG_KC = 16, staged in two buffers (the next
// chunk's global values in registers while this one computes, one barrier a chunk): x
// transposed (k-major, rows padded by 4 floats) with the prologue applied, w as +-1.0f or its
// floats.  Staged x past K or past the tile's rows is +0.0f and staged w past K or past M is
// -0.0f, and the terms of the padded k are added: each is fma(+0, -0, acc), an exact -0 added
// to acc, which is acc for every acc (-0 + -0 = -0, +0 + -0 = +0, NaN and Inf stay).  With +0
// weights it would not be: an fma rounds a tiny negative product to a -0.0f acc (1e-23 x -1e-23
// from +0), which + (+0) would turn to +0 (found by emulating the kernel on the host, session
// 36).  So the bits are those of the k-ordered sum over the real k.  Split-k orders stay on
// bmm_fb_tiled.
// Shared memory: bmm_fb_tiled's block (FbtSmem), reused (bmm_fb_tiled.cuh checks the size).
#ifndef BGNN_BMM_FB_BIG_CUH
#define BGNN_BMM_FB_BIG_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"

namespace bgnn {

constexpr int FBG_R = 128, FBG_O = 128, FBG_KC = 16, FBG_XPAD = 4;
// The tall-input path runs where the rows give every SM at least this many row tiles (the SMs
// counted by %nsmid).  Tests define it 0 (BGNN_NVRTC_DEFINES, runtime/nvrtc.c) to run the path
// on every shape.
#ifndef BGNN_FBG_MIN_TILES_PER_SM
#define BGNN_FBG_MIN_TILES_PER_SM 4
#endif

struct FbgStage {
    __align__(16) float xs[FBG_KC][FBG_R + FBG_XPAD]; // x of the chunk, k-major
    __align__(16) float ws[FBG_KC][FBG_O];            // w of the chunk
};
struct FbgSmem {
    FbgStage st[2];
    u32 ybits[FBG_R][FBG_O / 32];
};

// Z, K, M, BN, EPS_BITS, Y, Epi: as bmm_fb_tiled (BN 0..5; Y 'B' b1 weights, 'F' f32 weights).
template <char Z, long long K, long long M, int BN, unsigned EPS_BITS, char Y, class Epi>
__device__ __forceinline__ void bmm_fb_big(FbgSmem &sm, long long rows, void *yp, const float *x, const void *wv,
                                           const float *mean, const float *var, const float *gamma,
                                           const float *beta, const Epi &epi) {
    constexpr long long MW = words_of(M);
    constexpr long long OT = (M + FBG_O - 1) / FBG_O; // output tiles
    constexpr int XPT = FBG_R * FBG_KC / 256;           // x values staged a thread
    constexpr int WPT = FBG_O * FBG_KC / 256;           // w values staged a thread
    constexpr int TW = FBG_O / 32;                      // b1 words a tile row
    const u32 *w = (const u32 *)wv;
    const float *wf = (const float *)wv;
    (void)w, (void)wf, (void)mean, (void)var, (void)gamma, (void)beta;
    const int tid = (int)threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int sk = tid & (FBG_KC - 1), sr = tid / FBG_KC; // staging: x column sk, rows sr + 16 i
    const int wo = tid & (FBG_O - 1), wk = tid / FBG_O;   // staging: w output wo, k wk + 2 i
    const float eps = f32_from_bits(EPS_BITS);
    (void)eps;
    const long long ntiles = (rows + FBG_R - 1) / FBG_R * OT;
    for (long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const long long r0 = (t / OT) * FBG_R, o0 = (t % OT) * FBG_O;
        const int rt = (int)(rows - r0 < FBG_R ? rows - r0 : FBG_R);
        float xr[XPT], wr[WPT]; // the next chunk, staged values
        // registers <- chunk k0: x with the prologue (column k0 + sk), w as staged
        auto fetch = [&](long long k0) {
            const long long k = k0 + sk;
            float m = 0.0f, inv = 0.0f, g = 0.0f, b = 0.0f;
            if constexpr (BN == 5) {
                if (k < K) m = mean[k];
            } else if constexpr (BN > 0) {
                if (k < K) {
                    m = mean[k];
                    inv = fdiv(1.0f, fsqrt(fadd(var[k], eps)));
                    if constexpr (BN == 2 || BN == 4) g = gamma[k];
                    if constexpr (BN == 3 || BN == 4) b = beta[k];
                }
            }
            (void)m, (void)inv, (void)g, (void)b;
#pragma unroll
            for (int i = 0; i < XPT; i++) {
                const int r = sr + 16 * i;
                float v = 0.0f;
                if (k < K && r < rt) {
                    v = x[(r0 + r) * K + k];
                    if constexpr (BN == 5) {
                        v = fmul(v, m);
                    } else if constexpr (BN > 0) {
                        v = fmul(fsub(v, m), inv);
                        if constexpr (BN == 2 || BN == 4) v = fmul(v, g);
                        if constexpr (BN == 3 || BN == 4) v = fadd(v, b);
                    }
                }
                xr[i] = v;
            }
#pragma unroll
            for (int i = 0; i < WPT; i++) {
                const long long kw = k0 + wk + 2 * i, o = o0 + wo;
                float v = -0.0f; // padding: see the top of the file
                if (kw < K && o < M) {
                    if constexpr (Y == 'F') v = wf[kw * M + o];
                    else v = pm1((w[kw * MW + (o >> 5)] >> (o & 31)) & 1u);
                }
                wr[i] = v;
            }
        };
        auto stage = [&](FbgStage &s) {
#pragma unroll
            for (int i = 0; i < XPT; i++) s.xs[sk][sr + 16 * i] = xr[i];
#pragma unroll
            for (int i = 0; i < WPT; i++) s.ws[wk + 2 * i][wo] = wr[i];
        };
        float acc[8][8];
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
        __syncthreads(); // the previous tile's stages and words are read
        if constexpr (Z == 'B')
            for (int q = tid; q < FBG_R * TW; q += 256) sm.ybits[q / TW][q % TW] = 0u;
        fetch(0);
        stage(sm.st[0]);
        __syncthreads();
        int b = 0;
        for (long long k0 = 0; k0 < K; k0 += FBG_KC, b ^= 1) {
            if (k0 + FBG_KC < K) fetch(k0 + FBG_KC); // in flight during this chunk's fmas
            const FbgStage &s = sm.st[b];
#pragma unroll
            for (int kk = 0; kk < FBG_KC; kk++) {
                const float4 a0 = *(const float4 *)&s.xs[kk][4 * ty], a1 = *(const float4 *)&s.xs[kk][64 + 4 * ty];
                const float4 b0 = *(const float4 *)&s.ws[kk][4 * tx], b1 = *(const float4 *)&s.ws[kk][64 + 4 * tx];
                const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
                const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < 8; j++) acc[i][j] = __fmaf_rn(av[i], bv[j], acc[i][j]);
            }
            if (k0 + FBG_KC < K) stage(sm.st[b ^ 1]); // read by the chunk before this one: all past it
            __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int r = (i < 4 ? 0 : 64) + 4 * ty + (i & 3);
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const int oc = (j < 4 ? 0 : 64) + 4 * tx + (j & 3);
                const long long o = o0 + oc;
                if (r >= rt || o >= M) continue;
                if constexpr (Z == 'B') {
                    if (ep_bit(epi, r0 + r, o, acc[i][j])) atomicOr(&sm.ybits[r][oc >> 5], 1u << (oc & 31));
                } else {
                    ((float *)yp)[(r0 + r) * M + o] = ep_val(epi, r0 + r, o, acc[i][j]);
                }
            }
        }
        if constexpr (Z == 'B') {
            __syncthreads();
            for (int q = tid; q < rt * TW; q += 256) {
                const int r = q / TW, d = q % TW;
                if ((o0 >> 5) + d < MW) ((u32 *)yp)[(r0 + r) * MW + (o0 >> 5) + d] = sm.ybits[r][d];
            }
        }
    }
}

} // namespace bgnn

#endif // BGNN_BMM_FB_BIG_CUH
