// bmm_fb_tiled.cuh - the fast bmm.FB{B,F}: float activations x [R][K] times b1 weights
// w [K][M] (canonical b1 layout), optionally with an inference-BatchNorm prologue applied to
// x as it is read, so the normalised matrix is never stored.
//
// Exactly the semantics of matmul.cuh's FB product (docs/semantics.md): for each output
// (r, o) the sum runs over k = 0..K-1 in order from +0.0f, acc = fl(acc + v(w[k,o]) * x'[r,k]).
// Each step is one __fmaf_rn(x', +-1.0f, acc): the product by +-1 is exact, so the single
// rounding of the fma is the rounding of the add - the same bits as the reference.  The
// prologue is x' = fl(fl(x - mean) * inv) [* gamma] [+ beta], inv = fl(1 / fl(sqrt(fl(var +
// eps)))), each step rounded as in elementwise.cuh's batchnorm.
//
// Work decomposition: a tile is 32 rows x 32 outputs; a 256-thread block owns one tile at a
// time (grid-stride over tiles).  Lane l of warp w computes output o0 + l of rows 4w .. 4w + 3,
// the four running sums (independent fma chains) in registers.
// K goes in chunks of KC = 64: the block stages the chunk of x (coalesced, prologue applied
// once per element) and of w as +-1.0f (rows of KC + 4 floats: bank-conflict-free 16-byte
// reads) in shared memory, and loads the next chunk's global values into registers while it
// computes the current one.  Output b1: the 32 lanes of a warp hold the 32 bits of word
// o0/32 of their row, so one __ballot_sync is the word (padding bits zero); output f32: one
// coalesced store per row.  Needs blockDim.x == 256 (the plan's block size).
#ifndef BGNN_BMM_FB_TILED_CUH
#define BGNN_BMM_FB_TILED_CUH

#include "bgnn_common.cuh"

namespace bgnn {

constexpr int FBT_ROWS = 32, FBT_OUTS = 32, FBT_KC = 64, FBT_PAD = 4;

// The shared memory of every instantiation: one block of it per kernel, however many FB
// products a (fused) kernel runs, since it belongs to this one non-template function.
struct FbtSmem {
    __align__(16) float xs[FBT_ROWS][FBT_KC + FBT_PAD];
    __align__(16) float ws[FBT_OUTS][FBT_KC + FBT_PAD];
    float mu[FBT_KC], inv[FBT_KC], g[FBT_KC], b[FBT_KC];
};
__device__ __forceinline__ FbtSmem &fbt_smem() {
    __shared__ FbtSmem s;
    return s;
}

// BN: 0 none; 1 mean/var; 2 + gamma; 3 + beta; 4 + gamma and beta (elementwise.cuh order).
template <char Z, long long K, long long M, int BN, unsigned EPS_BITS>
__device__ __forceinline__ void bmm_fb_tiled(long long rows, void *yp, const float *x, const u32 *w,
                                             const float *mean, const float *var,
                                             const float *gamma, const float *beta) {
    static_assert(Z == 'B' || Z == 'F', "bmm_fb_tiled: output F or B");
    constexpr long long MW = words_of(M);
    constexpr long long OT = (M + FBT_OUTS - 1) / FBT_OUTS; // output tiles (= words of a b1 row)
    constexpr int XPT = FBT_ROWS * FBT_KC / 256;             // x elements staged per thread
    constexpr int WPT = FBT_OUTS * FBT_KC / 256;             // w elements staged per thread
    FbtSmem &sm = fbt_smem();
    auto &xs = sm.xs;
    auto &ws = sm.ws;
    float *mu_s = sm.mu, *inv_s = sm.inv, *g_s = sm.g, *b_s = sm.b;
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int sk = tid % FBT_KC;     // the k this thread stages (x and w)
    const int sr = tid / FBT_KC;     // its first staged x row (then + 256 / KC each step)
    const long long ntiles = (rows + FBT_ROWS - 1) / FBT_ROWS * OT;
    const float eps = f32_from_bits(EPS_BITS);
    (void)eps, (void)mean, (void)var, (void)gamma, (void)beta;
    for (long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const long long r0 = (t / OT) * FBT_ROWS, o0 = (t % OT) * FBT_OUTS;
        const long long o = o0 + lane;
        float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
        float xr[XPT];
        u32 wword = 0u;
        // registers <- chunk k0 (global)
        auto fetch = [&](long long k0) {
#pragma unroll
            for (int j = 0; j < XPT; j++) {
                const long long r = r0 + sr + j * (256 / FBT_KC);
                xr[j] = (k0 + sk < K && r < rows) ? x[r * K + k0 + sk] : 0.0f;
            }
            wword = k0 + sk < K ? w[(k0 + sk) * MW + (o0 >> 5)] : 0u;
        };
        fetch(0);
        for (long long k0 = 0; k0 < K; k0 += FBT_KC) {
            const int kn = (int)(K - k0 < FBT_KC ? K - k0 : FBT_KC);
            __syncthreads(); // the previous chunk (or tile) is consumed
            if constexpr (BN > 0) {
                if (tid < kn) {
                    mu_s[tid] = mean[k0 + tid];
                    inv_s[tid] = fdiv(1.0f, fsqrt(fadd(var[k0 + tid], eps)));
                    if constexpr (BN == 2 || BN == 4) g_s[tid] = gamma[k0 + tid];
                    if constexpr (BN == 3 || BN == 4) b_s[tid] = beta[k0 + tid];
                }
                __syncthreads();
            }
#pragma unroll
            for (int j = 0; j < XPT; j++) {
                float v = xr[j];
                if constexpr (BN > 0) {
                    if (sk < kn) {
                        v = fmul(fsub(v, mu_s[sk]), inv_s[sk]);
                        if constexpr (BN == 2 || BN == 4) v = fmul(v, g_s[sk]);
                        if constexpr (BN == 3 || BN == 4) v = fadd(v, b_s[sk]);
                    }
                }
                xs[sr + j * (256 / FBT_KC)][sk] = v;
            }
#pragma unroll
            for (int j = 0; j < WPT; j++) {
                const int oo = sr + j * (256 / FBT_KC);
                ws[oo][sk] = pm1((wword >> oo) & 1u);
            }
            __syncthreads();
            if (k0 + FBT_KC < K) fetch(k0 + FBT_KC); // in flight while this chunk computes
            const int k4 = kn & ~3;
            const float *xa = xs[4 * warp], *xb = xs[4 * warp + 1], *xc = xs[4 * warp + 2],
                        *xd = xs[4 * warp + 3], *wo = ws[lane];
            for (int k = 0; k < k4; k += 4) {
                const float4 wv = *(const float4 *)&wo[k];
                const float4 va = *(const float4 *)&xa[k];
                const float4 vb = *(const float4 *)&xb[k];
                const float4 vc = *(const float4 *)&xc[k];
                const float4 vd = *(const float4 *)&xd[k];
                acc0 = __fmaf_rn(va.x, wv.x, acc0);
                acc1 = __fmaf_rn(vb.x, wv.x, acc1);
                acc2 = __fmaf_rn(vc.x, wv.x, acc2);
                acc3 = __fmaf_rn(vd.x, wv.x, acc3);
                acc0 = __fmaf_rn(va.y, wv.y, acc0);
                acc1 = __fmaf_rn(vb.y, wv.y, acc1);
                acc2 = __fmaf_rn(vc.y, wv.y, acc2);
                acc3 = __fmaf_rn(vd.y, wv.y, acc3);
                acc0 = __fmaf_rn(va.z, wv.z, acc0);
                acc1 = __fmaf_rn(vb.z, wv.z, acc1);
                acc2 = __fmaf_rn(vc.z, wv.z, acc2);
                acc3 = __fmaf_rn(vd.z, wv.z, acc3);
                acc0 = __fmaf_rn(va.w, wv.w, acc0);
                acc1 = __fmaf_rn(vb.w, wv.w, acc1);
                acc2 = __fmaf_rn(vc.w, wv.w, acc2);
                acc3 = __fmaf_rn(vd.w, wv.w, acc3);
            }
            for (int k = k4; k < kn; k++) { // the real tail only: no padding term is ever added
                acc0 = __fmaf_rn(xa[k], wo[k], acc0);
                acc1 = __fmaf_rn(xb[k], wo[k], acc1);
                acc2 = __fmaf_rn(xc[k], wo[k], acc2);
                acc3 = __fmaf_rn(xd[k], wo[k], acc3);
            }
        }
        const float accs[4] = {acc0, acc1, acc2, acc3};
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const long long r = r0 + 4 * warp + q;
            if constexpr (Z == 'B') {
                const u32 word = __ballot_sync(0xffffffffu, o < M && bit_of(accs[q]) != 0u);
                if (lane == 0 && r < rows) ((u32 *)yp)[r * MW + (o0 >> 5)] = word;
            } else {
                if (r < rows && o < M) ((float *)yp)[r * M + o] = accs[q];
            }
        }
    }
}

} // namespace bgnn

#endif // BGNN_BMM_FB_TILED_CUH
