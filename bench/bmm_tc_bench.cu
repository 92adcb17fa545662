// bmm_tc_bench.cu - bgnn's bmm.BB{F,B} on the bit tensor cores (templates/bmm_bb_tc.cuh)
// against its popcount kernel (templates/matmul.cuh, as the code generator instantiates it),
// cuBLAS INT8 GEMM and FP16 GEMM of the same logical shape (+-1 operands as int8 / half),
// and the b1 mma peak measured by a bare loop of independent mma.sync in the same run; on sm_90a
// builds also the benchmark-only wgmma kernel (kernels/bmm_bb_wg.cuh) and the wgmma b1 peak of
// a bare wgmma loop; and the benchmark-only multistage mma.sync kernel (kernels/bmm_bb_ms.cuh:
// cp.async stages of 512 bits in dynamic shared memory), plain (MS), with the popcounts of the w
// rows given (MSW: a table made once, as a parameter's could be at binding) and of both operands'
// rows given (MSC: what the counting costs); and on sm_90a the warp-specialized wgmma kernel
// (templates/bmm_bb_wgs.cuh, WGS: a producer warpgroup, cp.async stages in the 64-byte swizzle,
// mbarriers; for K a multiple of 128, the shapes wgp_on marks; WGSW the same with the w rows'
// popcounts given).  Build and run:
// bench/run_bmm_tc_bench.sh.
//
// Shapes [R, K] x [K, M]: the BB products of every example model (Cora 2708 rows, CiteSeer
// 3327, the Reddit-size benchmark graph 232965: K = input width, M = output width), two large
// BNN-style shapes (65536 x 4096 x 4096 and 232965 x 1024 x 1024), and check-only shapes with
// K not a multiple of 256, N = 1, M = 1, M not a multiple of 8 or 32.
//
// Checks, every shape: each tensor-core result (mma.sync, wgmma, multistage, warp-specialized) equals the popcount kernel's, every word of the
// output (f32 bits and b1 words, padding bits included), plain and with Bi-GCN's epilogue (row
// and column scales and a bias, operands sized exactly, so a read past them is a sanitizer error); the popcount kernel equals the CPU
// reference (reference/ref_ops.c bg_ref_bmm) on all rows (R <= 4096) or 64 sampled rows; on
// timed shapes cuBLAS INT8 (int32 out) and FP16 (fp32 accumulate, f32 out) give the same
// integers as bmm.BBF (their K and M zero-padded to multiples of 16, which INT8 GEMM needs).
// Operands: random bits (padding bits 0); x b1 [R][KW], w b1t [M][KW].
//
// Timing: median of --reps launches (default 50), each timed alone with CUDA events after 3
// warm-ups, back to back on the same buffers (operands of the large shapes exceed or fill
// the L2; the small ones sit in L2 for every kernel alike).  bit-ops = 2 R K M (one AND and
// one add per bit pair, as flops count a GEMM); the b1 peak is 2 * 16 * 8 * 256 bit-ops per
// mma.sync.m16n8k256 over the measured mma rate.
// Exit status: 0 all checks passed, 1 a check failed, 2 a CUDA / cuBLAS error, 77 no GPU.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "bg.h"
#include "plan.h"
#include "ref_ops.h"
}

#include "../templates/bgnn_common.cuh"
#include "../templates/epilogue.cuh"
#include "../templates/matmul.cuh"
#include "../templates/bmm_bb_tc.cuh"
#include "kernels/bmm_bb_wg.cuh"
#include "../templates/bmm_bb_wgs.cuh"
#include "kernels/bmm_bb_ms.cuh"
#include "bench_util.cuh"
#include "rmat.h"

using bgnn::u32;

#define CKB(x) CK_STATUS(x, CUBLAS_STATUS_SUCCESS, "cublas")

static int g_reps = 50;
static std::string g_only; // --only SUBSTR: the shapes whose name contains SUBSTR
static bool g_check_only = false; // --check-only: the check-only shapes, no timing (sanitizer runs)
static bool g_tc_only = false;    // --tc-only: time the tensor-core kernels alone (no popcount, no cuBLAS)
static int g_ok = 0, g_fail = 0;
static double g_peak = 0;    // measured b1 bit-ops/s, mma.sync
static double g_wg_peak = 0; // and wgmma (0: not built)

static void report(const std::string &what, bool ok, const std::string &note) {
    printf("  check %-58s %s%s\n", what.c_str(), ok ? "OK" : "FAIL", note.c_str());
    (ok ? g_ok : g_fail)++;
    fflush(stdout);
}

// ---- the b1 peak: independent mma.sync chains, no memory ---------------------------------
__global__ void __launch_bounds__(128) k_mma_peak(int iters, int *sink) {
    u32 a[4] = {0xaaaaaaaau ^ threadIdx.x, 0x55555555u, 0xccccccccu, 0x33333333u};
    int d[16][4] = {};
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int j = 0; j < 16; j++) bgnn::mma_b1_and(d[j], a, 0xf0f0f0f0u + it, 0x0f0f0f0fu);
    }
    int s = 0;
#pragma unroll
    for (int j = 0; j < 16; j++) s += d[j][0] + d[j][1] + d[j][2] + d[j][3];
    if (s == 0x7fffffff) sink[blockIdx.x] = s; // never true; keeps the chains alive
}
// The wgmma b1 peak (sm_90a): each warpgroup issues m64n256k256 wgmma back to back on operands
// in shared memory (fixed pseudo-random bits), 8 a commit group, one group left in flight.
__global__ void __launch_bounds__(256, 1) k_wg_peak(int iters, int *sink) {
#if BGNN_TC_WGMMA
    __shared__ __align__(128) u32 sm[384 * 8];
    for (u32 i = threadIdx.x; i < 384 * 8; i += 256) sm[i] = (0x9e3779b9u * (i + 1u)) ^ (i << 7);
    bgnn::wg_fence_smem();
    __syncthreads();
    const u32 base = bgnn::smem_addr(sm);
    const int wg = (int)threadIdx.x / 128;
    const bgnn::u64 a = bgnn::wg_desc(base + (u32)wg * 2048u), b = bgnn::wg_desc(base + 4096u);
    int d[128];
#pragma unroll
    for (int i = 0; i < 128; i++) d[i] = 0;
    for (int it = 0; it < iters; it++) {
        bgnn::wg_fence();
#pragma unroll
        for (int j = 0; j < 8; j++) bgnn::wgmma_b1(d, a, b, 1);
        bgnn::wg_commit();
        bgnn::wg_wait<1>();
    }
    bgnn::wg_wait<0>();
    int s = 0;
#pragma unroll
    for (int i = 0; i < 128; i++) s += d[i];
    if (s == 0x7fffffff) sink[blockIdx.x] = s; // never true; keeps the chain alive
#else
    (void)iters;
    (void)sink;
#endif
}
// Whether the device code was built with wgmma (sm_90a).
__global__ void k_has_wg(int *out) { *out = BGNN_TC_WGMMA; }
static bool g_has_wg = false;
static double measure_wg_peak(int sms) {
    int *sink;
    CK(cudaMalloc(&sink, sizeof(int) * 65536));
    const int iters = 2048;
    const float ms = median_ms([&](int) { k_wg_peak<<<sms, 256>>>(iters, sink); }, 2, 9);
    CK(cudaGetLastError());
    CK(cudaFree(sink));
    return (double)sms * 2 * iters * 8 * 2.0 * 64 * 256 * 256 / (ms * 1e-3);
}
__global__ void k_nsmid(unsigned *out) {
    unsigned v;
    asm("mov.u32 %0, %%nsmid;" : "=r"(v));
    *out = v;
}
static unsigned read_nsmid() { // %nsmid, which bmm_bb_tc sizes its set of blocks by
    unsigned *d, h = 0;
    CK(cudaMalloc(&d, sizeof(unsigned)));
    k_nsmid<<<1, 1>>>(d);
    CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    return h;
}
static double measure_b1_peak(int sms) {
    int *sink;
    CK(cudaMalloc(&sink, sizeof(int) * 65536));
    const int blocks = sms * 8, iters = 4096;
    const float ms = median_ms([&](int) { k_mma_peak<<<blocks, 128>>>(iters, sink); }, 2, 9);
    CK(cudaGetLastError());
    CK(cudaFree(sink));
    const double mmas = (double)blocks * 4 * iters * 16;
    return mmas * 2.0 * 16 * 8 * 256 / (ms * 1e-3);
}

// ---- operands ------------------------------------------------------------------------------
// 32 random bits of stream position v (rmat.h's splitmix64).
__host__ __device__ __forceinline__ u32 mix32(uint64_t v) { return (u32)rmat_mix64(v); }
// A [rows][KW] of random bits, padding bits 0; also as int8 / half +-1 [rows][KP] when given
// (columns K..KP-1 left as they are: zero).
__global__ void k_fill_bits(u32 *b, int8_t *i8, __half *h, long long rows, long long K, long long KP, uint64_t seed) {
    const long long KW = bgnn::words_of(K), n = rows * KW;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (long long)gridDim.x * blockDim.x) {
        const long long r = e / KW, w = e % KW;
        const u32 v = mix32(seed * 0x9e3779b97f4a7c15ull + (uint64_t)e) & bgnn::word_mask(K, w);
        b[e] = v;
        for (int j = 0; j < 32 && 32 * w + j < K; j++) {
            const long long k = 32 * w + j;
            const int s = (v >> j) & 1u ? 1 : -1;
            if (i8) i8[r * KP + k] = (int8_t)s;
            if (h) h[r * KP + k] = __float2half_rn((float)s);
        }
    }
}

// ---- kernels under test: thin wrappers as cg_cuda.c emits them -----------------------------
template <char Z, long long K, long long M>
__global__ void __launch_bounds__(256) k_popc(long long n, void *y, const u32 *x, const u32 *w) {
    bgnn::bmm<'B', 'B', Z, K, M, true>(n, y, x, w);
}
// Paths: the popcount kernel, bmm_bb_tc as the product calls it (mma.sync), and the
// benchmark-only wgmma kernel (kernels/bmm_bb_wg.cuh; built for sm_90a only, and instantiated
// for the shapes wg_on marks: the large ones, Reddit's first layer and three awkward ones, which
// keeps the build short).
enum Path { POPC, TC, WG, MS, MSW, MSC, WGS, WGSW };
template <long long K, long long M>
constexpr bool wg_on() {
    return (K == 4096 && M == 4096) || (K == 1024 && M == 1024) || (K == 602 && M == 128) || (K == 257 && M == 7) ||
           (K == 100 && M == 130) || (K == 2049 && M == 129);
}
// The warp-specialized wgmma kernel (templates/bmm_bb_wgs.cuh; sm_90a, K a multiple of 128).
template <long long K, long long M>
__host__ __device__ constexpr bool wgp_on() {
    return (K == 4096 && M == 4096) || (K == 1024 && M == 1024) || (K == 128 && M == 41) || (K == 256 && M == 1) ||
           (K == 4096 && M == 257) || (K == 1024 && M == 130) || (K == 384 && M == 128) || (K == 512 && M == 288) ||
           (K == 512 && M == 512) || (K == 256 && M == 256) || (K == 128 && M == 128) || (K == 1024 && M == 256);
}
// The multistage kernel (kernels/bmm_bb_ms.cuh): MS counts the w rows by mma as bmm_bb_tc does,
// MSW reads their popcounts from wc (computed once before, as parameters' tables are at binding),
// MSC also those of the x rows (from g_xc_dev: what the counting costs).
__device__ const int *g_xc_dev;
template <long long K, long long M>
constexpr bool msw_on() {
    return wg_on<K, M>() || (K == 1433 && M == 64) || (K == 3703 && M == 64) || (K == 4096 && M == 257);
}
template <int PATH, char Z, long long K, long long M, class Epi>
__device__ __forceinline__ void run_path(long long n, void *y, const u32 *x, const u32 *w, const int *wc, Epi e) {
    if constexpr (PATH == POPC) bgnn::bmm<'B', 'B', Z, K, M, true>(n, y, x, w, bgnn::ProNone(), e);
    else if constexpr (PATH == TC) bgnn::bmm_bb_tc<Z, K, M>(n, y, x, w, bgnn::ProNone(), e);
    else if constexpr (PATH == MS) bgnn::bmm_bb_ms<Z, K, M, 0>(n, y, x, w, nullptr, nullptr, e);
    else if constexpr (PATH == MSW) bgnn::bmm_bb_ms<Z, K, M, 1>(n, y, x, w, wc, nullptr, e);
    else if constexpr (PATH == MSC) bgnn::bmm_bb_ms<Z, K, M, 3>(n, y, x, w, wc, g_xc_dev, e);
    else if constexpr (PATH == WGS) {
#if BGNN_TC_WGMMA
        if constexpr (wgp_on<K, M>()) bgnn::bmm_bb_wgs<Z, K, M>(n, y, x, w, e);
#endif
    } else if constexpr (PATH == WGSW) {
#if BGNN_TC_WGMMA
        if constexpr (wgp_on<K, M>()) bgnn::bmm_bb_wgs<Z, K, M, true>(n, y, x, w, e, wc);
#endif
    } else {
#if BGNN_TC_WGMMA
        bgnn::bmm_bb_wg<Z, K, M>(n, y, x, w, e);
#endif
    }
}
template <int PATH, char Z, long long K, long long M>
__global__ void __launch_bounds__(256) k_bmm(long long n, void *y, const u32 *x, const u32 *w, const int *wc) {
    run_path<PATH, Z, K, M>(n, y, x, w, wc, bgnn::EpEnd());
}
// The warp-specialized wgmma kernel: 384 threads (two consumer warpgroups and a producer warpgroup).
template <int PATH, char Z, long long K, long long M>
__global__ void __launch_bounds__(384, 1) k_bmm_ws(long long n, void *y, const u32 *x, const u32 *w, const int *wc) {
    run_path<PATH, Z, K, M>(n, y, x, w, wc, bgnn::EpEnd());
}
// With Bi-GCN's epilogue (row and column scales, then a bias), which reads per-row and
// per-column operands: every kernel must read them for real outputs only.
template <long long M> using EpBiGcn = bgnn::EpScl<true, true, bgnn::EpAdd<M, false, bgnn::EpEnd>>;
template <int PATH, char Z, long long K, long long M>
__global__ void __launch_bounds__(256) k_epi(long long n, void *y, const u32 *x, const u32 *w, const int *wc,
                                             const float *rf, const float *cf, const float *b) {
    run_path<PATH, Z, K, M>(n, y, x, w, wc, EpBiGcn<M>{rf, cf, {b, {}}});
}
template <int PATH, char Z, long long K, long long M>
__global__ void __launch_bounds__(384, 1) k_epi_ws(long long n, void *y, const u32 *x, const u32 *w, const int *wc,
                                                   const float *rf, const float *cf, const float *b) {
    run_path<PATH, Z, K, M>(n, y, x, w, wc, EpBiGcn<M>{rf, cf, {b, {}}});
}
// popc of each row of a b1 operand [n][kw] (the tables MSW and MSC read)
__global__ void k_row_popc(const u32 *b, long long n, long long kw, int *out) {
    for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += (long long)gridDim.x * blockDim.x) {
        int c = 0;
        for (long long k = 0; k < kw; k++) c += __popc(b[o * kw + k]);
        out[o] = c;
    }
}
static int *g_wc = nullptr; // the w counts of the shape being run
static int *g_xc = nullptr; // and the x counts (MSC)
__global__ void k_fill_f32(float *p, long long n, uint64_t seed) {
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (long long)gridDim.x * blockDim.x)
        p[e] = (float)(mix32(seed * 0x9e3779b97f4a7c15ull + (uint64_t)e) >> 8) * (1.0f / 16777216.0f) - 0.25f;
}
// The plan's grids (plan/plan.c): popcount one thread per f32 output / one warp per b1 word;
// tensor cores bg_plan_bmm_tc_threads_per_row (about one block a small tile), at most
// BG_PLAN_TC_GRID_PER_SM blocks an SM (the launch's grid_per_sm, runtime/exec.c).
static long long g_sms = 0;
template <char Z, long long M>
static long long grid_of(int path, long long n) {
    const long long tpr = path != POPC ? (long long)bg_plan_bmm_tc_threads_per_row(M) : (Z == 'B' ? bgnn::b1_tpr(M) : bgnn::f32_tpr(M));
    const long long g = std::min((n * tpr + 255) / 256, 1LL << 30);
    return path != POPC && g_sms > 0 ? std::min(g, (long long)BG_PLAN_TC_GRID_PER_SM * g_sms) : g;
}
template <char Z, long long K, long long M>
static void launch(int path, long long n, void *y, const u32 *x, const u32 *w) {
    const long long G = grid_of<Z, M>(path, n);
    if (G <= 0) return;
    const dim3 g((unsigned)G), b(256);
    const unsigned ms = bgnn::tc_ms_smem_bytes<M>();
    if (path == POPC) k_bmm<POPC, Z, K, M><<<g, b>>>(n, y, x, w, g_wc);
    else if (path == TC) k_bmm<TC, Z, K, M><<<g, b>>>(n, y, x, w, g_wc);
    else if (path == MS) k_bmm<MS, Z, K, M><<<g, b, ms>>>(n, y, x, w, g_wc);
    else if (path == MSW) {
        if constexpr (msw_on<K, M>()) k_bmm<MSW, Z, K, M><<<g, b, ms>>>(n, y, x, w, g_wc);
    } else if (path == MSC) {
        if constexpr (msw_on<K, M>()) k_bmm<MSC, Z, K, M><<<g, b, ms>>>(n, y, x, w, g_wc);
    } else if (path == WGS) {
        if constexpr (wgp_on<K, M>()) k_bmm_ws<WGS, Z, K, M><<<g_sms, 384, bgnn::wgs_smem_bytes<M>()>>>(n, y, x, w, g_wc);
    } else if (path == WGSW) {
        if constexpr (wgp_on<K, M>()) k_bmm_ws<WGSW, Z, K, M><<<g_sms, 384, bgnn::wgs_smem_bytes<M>()>>>(n, y, x, w, g_wc);
    } else if constexpr (wg_on<K, M>()) k_bmm<WG, Z, K, M><<<g, b>>>(n, y, x, w, g_wc);
    CK(cudaGetLastError());
}
template <char Z, long long K, long long M>
static void launch_epi(int path, long long n, void *y, const u32 *x, const u32 *w, const float *rf, const float *cf,
                       const float *bias) {
    const long long G = grid_of<Z, M>(path, n);
    if (G <= 0) return;
    const dim3 g((unsigned)G), b(256);
    const unsigned ms = bgnn::tc_ms_smem_bytes<M>();
    if (path == POPC) k_epi<POPC, Z, K, M><<<g, b>>>(n, y, x, w, g_wc, rf, cf, bias);
    else if (path == TC) k_epi<TC, Z, K, M><<<g, b>>>(n, y, x, w, g_wc, rf, cf, bias);
    else if (path == MS) k_epi<MS, Z, K, M><<<g, b, ms>>>(n, y, x, w, g_wc, rf, cf, bias);
    else if (path == MSW) {
        if constexpr (msw_on<K, M>()) k_epi<MSW, Z, K, M><<<g, b, ms>>>(n, y, x, w, g_wc, rf, cf, bias);
    } else if (path == MSC) {
        if constexpr (msw_on<K, M>()) k_epi<MSC, Z, K, M><<<g, b, ms>>>(n, y, x, w, g_wc, rf, cf, bias);
    } else if (path == WGS) {
        if constexpr (wgp_on<K, M>()) k_epi_ws<WGS, Z, K, M><<<g_sms, 384, bgnn::wgs_smem_bytes<M>()>>>(n, y, x, w, g_wc, rf, cf, bias);
    } else if (path == WGSW) {
        if constexpr (wgp_on<K, M>()) k_epi_ws<WGSW, Z, K, M><<<g_sms, 384, bgnn::wgs_smem_bytes<M>()>>>(n, y, x, w, g_wc, rf, cf, bias);
    } else if constexpr (wg_on<K, M>()) k_epi<WG, Z, K, M><<<g, b>>>(n, y, x, w, g_wc, rf, cf, bias);
    CK(cudaGetLastError());
}

// ---- cuBLAS: row-major Y[R][M] = X[R][K] W[K][M], W given as Wt [M][K]: column-major
// Y^T (M x R) = op_T(Wt as K x M) * X^T (K x R), the TN form INT8 GEMM asks for.  K and M are
// padded to multiples of 16 with zeros (INT8 GEMM needs leading dimensions that are multiples
// of 4): the padding adds 0 to every sum, so the product is the same, with Y [R][MP].
static long long pad16(long long v) { return (v + 15) / 16 * 16; }
static void gemm_i8(cublasHandle_t h, long long R, long long K, long long M, const int8_t *x, const int8_t *wt, int *y) {
    const int one = 1, zero = 0;
    const int KP = (int)pad16(K), MP = (int)pad16(M);
    CKB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, MP, (int)R, KP, &one, wt, CUDA_R_8I, KP, x, CUDA_R_8I, KP, &zero, y,
                     CUDA_R_32I, MP, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
}
static void gemm_f16(cublasHandle_t h, long long R, long long K, long long M, const __half *x, const __half *wt, float *y) {
    const float one = 1.0f, zero = 0.0f;
    const int KP = (int)pad16(K), MP = (int)pad16(M);
    CKB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, MP, (int)R, KP, &one, wt, CUDA_R_16F, KP, x, CUDA_R_16F, KP, &zero, y,
                     CUDA_R_32F, MP, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

struct Shape {
    const char *name;
    long long R, K, M;
    bool timed;
};
struct Row {
    std::string name, kernel;
    long long R, K, M;
    double us;
};
static std::vector<Row> g_rows;

template <class T> static T *dalloc(size_t n) {
    T *p = nullptr;
    CK(cudaMalloc(&p, std::max<size_t>(1, n) * sizeof(T)));
    return p;
}
template <class T> static std::vector<T> fetch(const T *d, size_t n) {
    std::vector<T> h(std::max<size_t>(1, n));
    CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

template <long long K, long long M>
static void run_shape(const Shape &s, cublasHandle_t cb) {
    constexpr long long KW = bgnn::words_of(K), MW = bgnn::words_of(M);
    const long long R = s.R;
    using S = bgnn::TcShape<M>;
    using SS = bgnn::TcSmallShape<M>;
    const bool small = bgnn::tc_small_tiles<M>(R, (long long)read_nsmid());
    printf("%s: R %lld K %lld M %lld (tensor-core tile %d x %d, %d x %d warps)\n", s.name, R, K, M, small ? SS::BM : S::BM,
           small ? SS::BN : S::BN, small ? SS::WARPS_M : S::WARPS_M, small ? SS::WARPS_N : S::WARPS_N);
    fflush(stdout);
    { // the multistage kernels' dynamic shared memory
        auto allow = [](auto... fns) {
            for (const void *f : {(const void *)fns...})
                CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bgnn::tc_ms_smem_bytes<M>()));
        };
        allow(k_bmm<MS, 'F', K, M>, k_bmm<MS, 'B', K, M>, k_epi<MS, 'F', K, M>, k_epi<MS, 'B', K, M>);
        if constexpr (msw_on<K, M>())
            allow(k_bmm<MSW, 'F', K, M>, k_bmm<MSW, 'B', K, M>, k_epi<MSW, 'F', K, M>, k_epi<MSW, 'B', K, M>,
                  k_bmm<MSC, 'F', K, M>, k_bmm<MSC, 'B', K, M>, k_epi<MSC, 'F', K, M>, k_epi<MSC, 'B', K, M>);
        if constexpr (wgp_on<K, M>())
            for (const void *f : {(const void *)k_bmm_ws<WGS, 'F', K, M>, (const void *)k_bmm_ws<WGS, 'B', K, M>,
                                  (const void *)k_epi_ws<WGS, 'F', K, M>, (const void *)k_epi_ws<WGS, 'B', K, M>,
                                  (const void *)k_bmm_ws<WGSW, 'F', K, M>, (const void *)k_bmm_ws<WGSW, 'B', K, M>,
                                  (const void *)k_epi_ws<WGSW, 'F', K, M>, (const void *)k_epi_ws<WGSW, 'B', K, M>})
                CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bgnn::wgs_smem_bytes<M>()));
    }
    u32 *x = dalloc<u32>((size_t)(R * KW)), *w = dalloc<u32>((size_t)(M * KW));
    g_wc = dalloc<int>((size_t)M);
    g_xc = dalloc<int>((size_t)std::max(1LL, R));
    CK(cudaMemcpyToSymbol(g_xc_dev, &g_xc, sizeof g_xc));
    const long long KP = pad16(K), MP = pad16(M);
    int8_t *x8 = nullptr, *w8 = nullptr;
    __half *x16 = nullptr, *w16 = nullptr;
    if (s.timed) {
        x8 = dalloc<int8_t>((size_t)(R * KP));
        w8 = dalloc<int8_t>((size_t)(MP * KP));
        x16 = dalloc<__half>((size_t)(R * KP));
        w16 = dalloc<__half>((size_t)(MP * KP));
        CK(cudaMemset(x8, 0, (size_t)(R * KP)));
        CK(cudaMemset(w8, 0, (size_t)(MP * KP)));
        CK(cudaMemset(x16, 0, 2 * (size_t)(R * KP)));
        CK(cudaMemset(w16, 0, 2 * (size_t)(MP * KP)));
    }
    k_fill_bits<<<4096, 256>>>(x, x8, x16, R, K, KP, 1000 + (uint64_t)R * 7 + (uint64_t)K);
    k_fill_bits<<<4096, 256>>>(w, w8, w16, M, K, KP, 2000 + (uint64_t)M * 13 + (uint64_t)K);
    CK(cudaGetLastError());
    k_row_popc<<<64, 256>>>(w, M, KW, g_wc);
    k_row_popc<<<256, 256>>>(x, R, KW, g_xc);
    CK(cudaGetLastError());
    float *yf_p = dalloc<float>((size_t)(R * M)), *yf_t = dalloc<float>((size_t)(R * M));
    u32 *yb_p = dalloc<u32>((size_t)(R * MW)), *yb_t = dalloc<u32>((size_t)(R * MW));
    CK(cudaMemset(yf_t, 0xA5, sizeof(float) * (size_t)std::max(1LL, R * M)));
    CK(cudaMemset(yb_t, 0xA5, sizeof(u32) * (size_t)std::max(1LL, R * MW)));
    const char *pname[8] = {"popcount", "tensor cores (mma.sync)", "wgmma", "multistage", "multistage, w counts given",
                            "multistage, x and w counts given", "wgmma warp-specialized",
                            "wgmma warp-specialized, w counts given"};
    float *rf = dalloc<float>((size_t)std::max(1LL, R)), *cf = dalloc<float>((size_t)M), *bias = dalloc<float>((size_t)M);
    k_fill_f32<<<64, 256>>>(rf, R, 11);
    k_fill_f32<<<64, 256>>>(cf, M, 12);
    k_fill_f32<<<64, 256>>>(bias, M, 13);
    launch<'F', K, M>(POPC, R, yf_p, x, w);
    launch<'B', K, M>(POPC, R, yb_p, x, w);
    CK(cudaDeviceSynchronize());
    const std::vector<float> hf_p = fetch(yf_p, (size_t)(R * M));
    const std::vector<u32> hb_p = fetch(yb_p, (size_t)(R * MW));
    std::vector<float> hf_t;
    auto compare = [&](const std::string &what, const void *a, const void *b, long long words) {
        long long bad = 0, first = -1;
        for (long long i = 0; i < words; i++)
            if (((const u32 *)a)[i] != ((const u32 *)b)[i]) {
                if (first < 0) first = i;
                bad++;
            }
        char note[160] = "";
        if (bad) snprintf(note, sizeof note, ": %lld of %lld words differ, first at %lld", bad, words, first);
        report(std::string(s.name) + " " + what, bad == 0, note);
    };
    // Each tensor-core path against the popcount kernel, plain and with Bi-GCN's epilogue (the
    // outputs poisoned first: every word must be written).
    for (int path : {TC, WG, MS, MSW, MSC, WGS, WGSW}) {
        if (path == WG && (!g_has_wg || !wg_on<K, M>())) continue;
        if ((path == WGS || path == WGSW) && (!g_has_wg || !wgp_on<K, M>())) continue;
        if ((path == MSW || path == MSC) && !msw_on<K, M>()) continue;
        const std::string pn = pname[path];
        CK(cudaMemset(yf_t, 0xA5, sizeof(float) * (size_t)std::max(1LL, R * M)));
        CK(cudaMemset(yb_t, 0xA5, sizeof(u32) * (size_t)std::max(1LL, R * MW)));
        launch<'F', K, M>(path, R, yf_t, x, w);
        launch<'B', K, M>(path, R, yb_t, x, w);
        CK(cudaDeviceSynchronize());
        const std::vector<float> tf = fetch(yf_t, (size_t)(R * M));
        compare("bmm.BBF " + pn + " == popcount", tf.data(), hf_p.data(), R * M);
        compare("bmm.BBB " + pn + " == popcount", fetch(yb_t, (size_t)(R * MW)).data(), hb_p.data(), R * MW);
        if (path == TC) hf_t = tf;
        launch_epi<'F', K, M>(POPC, R, yf_p, x, w, rf, cf, bias);
        launch_epi<'F', K, M>(path, R, yf_t, x, w, rf, cf, bias);
        launch_epi<'B', K, M>(POPC, R, yb_p, x, w, rf, cf, bias);
        launch_epi<'B', K, M>(path, R, yb_t, x, w, rf, cf, bias);
        CK(cudaDeviceSynchronize());
        compare("bmm.BBF +scales +bias " + pn + " == popcount", fetch(yf_t, (size_t)(R * M)).data(),
                fetch(yf_p, (size_t)(R * M)).data(), R * M);
        compare("bmm.BBB +scales +bias " + pn + " == popcount", fetch(yb_t, (size_t)(R * MW)).data(),
                fetch(yb_p, (size_t)(R * MW)).data(), R * MW);
    }
    for (float *p : {rf, cf, bias}) CK(cudaFree(p));
    // back to the plain products, which the timing uses
    launch<'F', K, M>(POPC, R, yf_p, x, w);
    launch<'B', K, M>(POPC, R, yb_p, x, w);
    CK(cudaDeviceSynchronize());
    // The popcount kernel against the CPU reference, on all rows or 64 sampled ones.
    {
        std::vector<long long> rows;
        if (R <= 4096)
            for (long long r = 0; r < R; r++) rows.push_back(r);
        else
            for (long long i = 0; i < 64; i++) rows.push_back(i < 2 ? (i ? R - 1 : 0) : (long long)(mix32(77 + i) % R));
        const std::vector<u32> hx = fetch(x, (size_t)(R * KW)), hw = fetch(w, (size_t)(M * KW));
        BgTensor tx, tw, yf, yb;
        if (rows.empty()) rows.push_back(-1); // R = 0: one dummy row, nothing compared
        if (!bg_tensor_alloc(&tx, BG_DT_B1, 2, (int64_t)rows.size(), K) || !bg_tensor_alloc(&tw, BG_DT_B1, 2, K, M)) {
            fprintf(stderr, "host allocation failed\n");
            exit(2);
        }
        for (size_t i = 0; i < rows.size(); i++)
            if (rows[i] >= 0) memcpy((u32 *)tx.data + i * KW, &hx[(size_t)(rows[i] * KW)], 4 * (size_t)KW);
        for (long long o = 0; o < M; o++) // canonical [K][M] from b1t [M][KW]
            for (long long k = 0; k < K; k++)
                if ((hw[(size_t)(o * KW + k / 32)] >> (k % 32)) & 1u)
                    ((u32 *)tw.data)[k * tw.words_per_row + o / 32] |= 1u << (o % 32);
        if (!bg_ref_bmm("BBF", &tx, &tw, &yf) || !bg_ref_bmm("BBB", &tx, &tw, &yb)) {
            fprintf(stderr, "bg_ref_bmm refused the operands\n");
            exit(2);
        }
        long long badf = 0, badb = 0;
        for (size_t i = 0; i < rows.size() && rows[0] >= 0; i++) {
            badf += memcmp((const float *)yf.data + i * M, &hf_p[(size_t)(rows[i] * M)], 4 * (size_t)M) != 0;
            badb += memcmp((const u32 *)yb.data + i * yb.words_per_row, &hb_p[(size_t)(rows[i] * MW)], 4 * (size_t)MW) != 0;
        }
        char note[96];
        snprintf(note, sizeof note, " (%zu rows)%s", rows[0] >= 0 ? rows.size() : (size_t)0, badf + badb ? ": rows differ" : "");
        report(std::string(s.name) + " popcount == CPU reference (BBF, BBB)", badf + badb == 0, note);
        for (BgTensor *t : {&tx, &tw, &yf, &yb}) bg_tensor_free(t);
    }
    if (s.timed) {
        int *y32 = dalloc<int>((size_t)(R * MP));
        float *y16 = dalloc<float>((size_t)(R * MP));
        gemm_i8(cb, R, K, M, x8, w8, y32);
        gemm_f16(cb, R, K, M, x16, w16, y16);
        CK(cudaDeviceSynchronize());
        {
            const std::vector<int> h32 = fetch(y32, (size_t)(R * MP));
            const std::vector<float> h16 = fetch(y16, (size_t)(R * MP));
            long long b8 = 0, b16 = 0;
            for (long long r = 0; r < R; r++)
                for (long long o = 0; o < M; o++) {
                    b8 += (float)h32[(size_t)(r * MP + o)] != hf_t[(size_t)(r * M + o)];
                    b16 += h16[(size_t)(r * MP + o)] != hf_t[(size_t)(r * M + o)];
                }
            report(std::string(s.name) + " cuBLAS INT8 == bmm.BBF", b8 == 0, b8 ? ": " + std::to_string(b8) + " differ" : "");
            report(std::string(s.name) + " cuBLAS FP16 == bmm.BBF", b16 == 0, b16 ? ": " + std::to_string(b16) + " differ" : "");
        }
        auto add = [&](const char *kernel, float ms) {
            g_rows.push_back(Row{s.name, kernel, R, K, M, ms * 1e3});
            const double ops = 2.0 * R * K * M;
            printf("  %-28s %10.2f us  %8.1f T bit-op/s  %5.1f%% of b1 peak\n", kernel, ms * 1e3, ops / (ms * 1e-3) / 1e12,
                   100.0 * ops / (ms * 1e-3) / g_peak);
            fflush(stdout);
        };
        if (!g_tc_only) add("bgnn popcount BBF", median_ms([&](int) { launch<'F', K, M>(POPC, R, yf_p, x, w); }, 3, g_reps));
        add("bgnn tensor cores BBF", median_ms([&](int) { launch<'F', K, M>(TC, R, yf_t, x, w); }, 3, g_reps));
        if (!g_tc_only) add("bgnn popcount BBB", median_ms([&](int) { launch<'B', K, M>(POPC, R, yb_p, x, w); }, 3, g_reps));
        add("bgnn tensor cores BBB", median_ms([&](int) { launch<'B', K, M>(TC, R, yb_t, x, w); }, 3, g_reps));
        if (g_has_wg && wg_on<K, M>())
            add("bench-only wgmma BBB", median_ms([&](int) { launch<'B', K, M>(WG, R, yb_t, x, w); }, 3, g_reps));
        if (g_has_wg && wgp_on<K, M>()) {
            add("wgmma warp-specialized BBF", median_ms([&](int) { launch<'F', K, M>(WGS, R, yf_t, x, w); }, 3, g_reps));
            add("wgmma warp-specialized BBB", median_ms([&](int) { launch<'B', K, M>(WGS, R, yb_t, x, w); }, 3, g_reps));
            add("wgmma w-s, w counts given BBB", median_ms([&](int) { launch<'B', K, M>(WGSW, R, yb_t, x, w); }, 3, g_reps));
        }
        add("bench-only multistage BBF", median_ms([&](int) { launch<'F', K, M>(MS, R, yf_t, x, w); }, 3, g_reps));
        add("bench-only multistage BBB", median_ms([&](int) { launch<'B', K, M>(MS, R, yb_t, x, w); }, 3, g_reps));
        if (msw_on<K, M>()) {
            add("multistage, w counts given BBB", median_ms([&](int) { launch<'B', K, M>(MSW, R, yb_t, x, w); }, 3, g_reps));
            add("multistage, x+w counts given BBB", median_ms([&](int) { launch<'B', K, M>(MSC, R, yb_t, x, w); }, 3, g_reps));
        }
        if (!g_tc_only) {
            add("cuBLAS INT8 (int32 out)", median_ms([&](int) { gemm_i8(cb, R, K, M, x8, w8, y32); }, 3, g_reps));
            add("cuBLAS FP16 (fp32 acc, out)", median_ms([&](int) { gemm_f16(cb, R, K, M, x16, w16, y16); }, 3, g_reps));
        }
        CK(cudaFree(y32));
        CK(cudaFree(y16));
    }
    for (void *p : {(void *)x, (void *)w, (void *)x8, (void *)w8, (void *)x16, (void *)w16, (void *)yf_p, (void *)yf_t,
                    (void *)yb_p, (void *)yb_t, (void *)g_wc, (void *)g_xc})
        if (p) CK(cudaFree(p));
}

// The (K, M) of every shape are template arguments of the kernels.  BGNN_TC_BENCH_BIG_ONLY:
// the two large shapes' (K, M) and the plan rule's shapes (a quicker build of a variant, for
// --only bnn or --only rule; the other shapes are skipped, but for the awkward ones of the
// same K and M).  The rule's shapes are in that build only (the full one is slow to build).
#ifdef BGNN_TC_BENCH_BIG_ONLY
#define BG_TC_SHAPES(X) X(4096, 4096) X(1024, 1024) X(512, 512) X(256, 256) X(128, 128) X(1024, 256)
#else
#define BG_TC_SHAPES(X)                                                                               \
    X(1433, 64) X(64, 64) X(64, 7) X(3703, 64) X(64, 6) X(602, 128) X(128, 41) X(4096, 4096)           \
    X(1024, 1024) X(1, 1) X(256, 1) X(255, 8) X(257, 7) X(300, 33) X(513, 64) X(100, 130) X(1000, 65)  \
    X(4096, 257) X(64, 300) X(32, 256) X(96, 96) X(2049, 129) X(31, 31) X(769, 40) X(200, 500) X(7, 2) X(1024, 130)     \
    X(384, 128) X(512, 288)
#endif
static void dispatch(const Shape &s, cublasHandle_t cb) {
#define X(KK, MM) \
    if (s.K == KK && s.M == MM) return run_shape<KK, MM>(s, cb);
    BG_TC_SHAPES(X)
#undef X
#ifdef BGNN_TC_BENCH_BIG_ONLY
    (void)cb; // a quick build: the other shapes are skipped
#else
    fprintf(stderr, "no kernels instantiated for K=%lld M=%lld\n", s.K, s.M);
    exit(2);
#endif
}

int main(int argc, char **argv) {
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = std::max(1, atoi(argv[++i]));
        else if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) g_only = argv[++i];
        else if (!strcmp(argv[i], "--check-only")) g_check_only = true;
        else if (!strcmp(argv[i], "--tc-only")) g_tc_only = true;
        else {
            fprintf(stderr, "usage: %s [--reps R] [--quick] [--only SUBSTR] [--check-only] [--tc-only]\n", argv[0]);
            return 2;
        }
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("bmm_tc_bench: no CUDA GPU available; nothing to run.\n");
        return 77;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major < 8) {
        printf("bmm_tc_bench: %s is sm_%d%d; b1 mma needs sm_80 or later.\n", prop.name, prop.major, prop.minor);
        return 77;
    }
    cublasHandle_t cb;
    CKB(cublasCreate(&cb));
    {
        int *d, h = 0;
        CK(cudaMalloc(&d, sizeof(int)));
        k_has_wg<<<1, 1>>>(d);
        CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
        CK(cudaFree(d));
        g_has_wg = h != 0;
    }
    g_sms = prop.multiProcessorCount;
    g_peak = g_check_only ? 1.0 : measure_b1_peak(prop.multiProcessorCount);
    g_wg_peak = g_check_only || !g_has_wg ? 0.0 : measure_wg_peak(prop.multiProcessorCount);
    printf("GPU: %s (sm_%d%d), %d SMs (%%nsmid %u); b1 mma.sync peak measured %.2f P bit-op/s (AND form, 16 chains a warp)\n",
           prop.name, prop.major, prop.minor, prop.multiProcessorCount, read_nsmid(), g_peak / 1e15);
    if (g_has_wg) printf("wgmma b1 peak measured %.2f P bit-op/s (m64n256k256, 2 warpgroups a SM)\n", g_wg_peak / 1e15);
    else printf("wgmma: not built (the device code is not sm_90a)\n");
    printf("timing: median of %d launches (CUDA events) after 3 warm-ups\n", g_reps);
    std::vector<Shape> shapes = {
        // the examples' BB products (R = the dataset's nodes)
        {"cora gcn_full l1", 2708, 1433, 64, true},   {"cora sage l2", 2708, 64, 64, true},
        {"cora indgcn_full l2", 2708, 64, 7, true},   {"citeseer gcn_full l1", 3327, 3703, 64, true},
        {"citeseer sage l2", 3327, 64, 6, true},      {"reddit gcn_full l1", 232965, 602, 128, true},
        {"reddit gcn_full l2", 232965, 128, 41, true},
        // large BNN-style shapes
        {"bnn 65536x4096x4096", 65536, 4096, 4096, true}, {"bnn 232965x1024x1024", 232965, 1024, 1024, true},
        // check-only awkward shapes
        {"awk", 1, 1, 1, false},       {"awk", 1, 256, 1, false},      {"awk", 5, 255, 8, false},
        {"awk", 31, 257, 7, false},    {"awk", 33, 300, 33, false},    {"awk", 67, 513, 64, false},
        {"awk", 100, 100, 130, false}, {"awk", 129, 1000, 65, false},  {"awk", 3, 4096, 257, false},
        {"awk", 257, 64, 300, false},  {"awk", 1000, 32, 256, false},  {"awk", 77, 96, 96, false},
        {"awk", 513, 2049, 129, false}, {"awk", 2, 31, 31, false},     {"awk", 17, 769, 40, false},
        {"awk", 300, 200, 500, false}, {"awk", 1, 7, 2, false},        {"awk", 1, 1024, 1024, false},
        {"awk", 4097, 64, 7, false},   {"awk", 1001, 1433, 64, false}, {"awk", 0, 64, 64, false},
        {"awk", 1000, 1024, 130, false}, {"awk", 300, 1024, 1024, false}, {"awk", 200, 384, 128, false},
        {"awk", 257, 512, 288, false},
#ifdef BGNN_TC_BENCH_BIG_ONLY
        // the plan's rule (compiler/codegen/plan_build.c bg_plan_bmm_wgs): wgmma or mma.sync on
        // narrower and shallower products, and on few rows
        {"rule 232965x512x512", 232965, 512, 512, true},  {"rule 232965x256x256", 232965, 256, 256, true},
        {"rule 232965x128x128", 232965, 128, 128, true},  {"rule 232965x1024x256", 232965, 1024, 256, true},
        {"rule 2708x1024x1024", 2708, 1024, 1024, true},  {"rule 16384x1024x1024", 16384, 1024, 1024, true},
        {"rule 2708x512x512", 2708, 512, 512, true},
#endif
    };
    for (const Shape &s : shapes)
        if ((!quick || !s.timed || s.R < 100000) && (!g_check_only || !s.timed) && strstr(s.name, g_only.c_str()))
            dispatch(s, cb);
    CKB(cublasDestroy(cb));

    printf("\n==== bmm.BB on bit tensor cores, %s, b1 peak %.2f P bit-op/s (median of %d launches) ====\n", prop.name,
           g_peak / 1e15, g_reps);
    if (g_has_wg) printf("wgmma b1 peak %.2f P bit-op/s (%%wgpk)\n", g_wg_peak / 1e15);
    printf("%-22s %7s %5s %5s %-28s %10s %9s %7s %7s %7s %7s %7s\n", "shape", "R", "K", "M", "kernel", "time_us", "Tbitop/s",
           "%peak", "%wgpk", "vs_popc", "vs_int8", "vs_fp16");
    for (size_t i = 0; i < g_rows.size(); i++) {
        const Row &r = g_rows[i];
        double popc = 0, i8 = 0, f16 = 0;
        for (const Row &o : g_rows)
            if (o.name == r.name) {
                const bool zb = r.kernel.back() == 'B';
                if (o.kernel == (zb ? "bgnn popcount BBB" : "bgnn popcount BBF")) popc = o.us;
                if (o.kernel.rfind("cuBLAS INT8", 0) == 0) i8 = o.us;
                if (o.kernel.rfind("cuBLAS FP16", 0) == 0) f16 = o.us;
            }
        const double ops = 2.0 * r.R * r.K * r.M, rate = ops / (r.us * 1e-6);
        printf("%-22s %7lld %5lld %5lld %-28s %10.2f %9.1f %7.1f %7.1f %7.2f %7.2f %7.2f\n", r.name.c_str(), r.R, r.K, r.M,
               r.kernel.c_str(), r.us, rate / 1e12, 100.0 * rate / g_peak, g_wg_peak > 0 ? 100.0 * rate / g_wg_peak : 0.0,
               popc / r.us, i8 / r.us, f16 / r.us);
    }
    printf("checks: %d OK, %d FAIL\n%s\n", g_ok, g_fail, g_fail ? "FAIL" : "ALL CHECKS PASSED");
    return g_fail ? 1 : 0;
}
