// bmm_bench.cu - correctness and speed of every bmm.XYZ kernel of bgnn (templates/matmul.cuh,
// templates/bmm_fb_tiled.cuh) against the CPU reference (reference/ref_ops.c bg_ref_bmm) and
// cuBLAS FP32 SGEMM / FP16 GEMM, in one run.  Build and run: bench/run_bmm_bench.sh.
//
// Kernels: all 8 XYZ in {F,B}^3, each as the code generator instantiates a plain product
// (compiler/codegen/plan_build.c, cg_cuda.c): the same template, the same thin __global__ wrapper
// (n, ngraphs, y, x, w), block 256, grid ceil(rows * threads_per_row / 256) with
// threads_per_row = f32_tpr(M) (Z = F) or b1_tpr(M) (Z = B); bmm.FB* runs the tiled kernel
// (bg_plan_bmm_fb_tiled: F x canonical B1 weights, no epilogue; 12 threads per row per 64
// outputs), bmm.BB* reads its b1 parameter transposed (B1T, WT = true).  Two extra rows time
// the simple matmul.cuh FB kernel, which the generator uses for an FB product with a fused
// epilogue (the tiled kernel takes none).
//
// Shapes [N, K] x [K, M]: N = 2708 (Cora), 3327 (CiteSeer), 19717 (PubMed), 232965
// (Reddit-sized); K = M = 64, 128, 256; plus the first layers of Cora (K 1433, M 64) and
// CiteSeer (K 3703, M 64).  Only N matters for a BMM, so no graph is loaded.  Check-only
// shapes: N 37 / K 70 / M 33 and N 1 / K 1 / M 1 (small halves and signed zeros as values, so
// sums hit exact zeros) and N 2708 / K 64 / M 7 (Cora's second layer: rows share warps).
//
// Values: element (r, c) of copy i of X or W is a deterministic function of (seed + i, r, c),
// made on the GPU; the b1 operands are the bits of the same floats (bit rule: !signbit), the
// FP16 operands the same floats rounded to half, so every kernel of a row computes the same
// product.  Every buffer rotates through enough copies (together >= 2x the L2, at most 256)
// that no launch finds its operands in L2 from an earlier launch; the checks use copy 0.
//
// Options: --reps R (timed launches per row, default 50), --quick (a subset: the Cora shapes
// and Reddit-sized 128, 20 launches unless --reps), --only SUBSTR (only the rows whose
// "graph N=.. K=.. M=.. kernel" label contains SUBSTR; the cuBLAS rows of a shape always run),
// --fbt-tpr T (the tiled FB kernel's grid at T threads per row per output tile instead of the
// plan's 12: its rows per block follow, about 256 / T).
// Exit status: 0 all checks passed, 1 a check failed, 2 a CUDA / cuBLAS error, 77 no GPU.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

extern "C" {
#include "bg.h"
#include "plan.h"
#include "ref_ops.h"
}

#include "../templates/bgnn_common.cuh"
#include "../templates/epilogue.cuh"
#include "../templates/matmul.cuh"
#include "../templates/bmm_fb_tiled.cuh"
#include "bench_util.cuh"
#include "rmat.h"

using bgnn::u32;

#define CKB(x) CK_STATUS(x, CUBLAS_STATUS_SUCCESS, "cublas")

static int g_reps = 50;
static int g_ok = 0, g_fail = 0, g_warn = 0;
static double g_bw = 0;       // device-to-device copy: bytes read + written per second
static double g_peak32 = 0;   // FP32 flop/s: SMs * 128 lanes * 2 * clock
static double g_popc = 0;     // 32-bit popcounts/s: SMs * 16 * clock
static double g_peak16 = 0;   // dense FP16 tensor-core flop/s (sm_90: 4096 flop/clk/SM), 0 unknown
static long long g_l2 = 0;    // L2 bytes
static std::string g_only;
static long long g_fbt_tpr = 0; // --fbt-tpr: threads per row per output tile of the tiled FB kernel (0: the plan's)

// ---- deterministic values (host and device; rmat_mix64 of rmat.h: splitmix64) ------------
__host__ __device__ __forceinline__ u32 f2u(float v) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(v);
#else
    u32 u;
    memcpy(&u, &v, sizeof u);
    return u;
#endif
}
__host__ __device__ __forceinline__ u32 hash32(u32 x) { // a bijection of 32-bit words
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
// Matrix A [rows][cols] of stream `seed` (one stream per operand and copy), through two keys.
// The signs come in 32-bit words, one hash per word of the canonical b1 layout: bit c%32 of
// sign_word(r, c/32) = 1 when A[r][c] is not negative, so the b1 form of A costs one hash per
// word.  The magnitudes: mode 0 uniform in [0, 1) on a 2^-23 grid (exact floats); mode 1
// {0, 0.5, 1, 1.5} (exact sums, many of them zero; zeros of both signs).
struct Keys {
    u32 s, m;
};
__host__ __device__ __forceinline__ Keys keys_of(uint64_t seed) {
    return Keys{hash32((u32)rmat_mix64(seed ^ (1ull << 56))), hash32((u32)rmat_mix64(seed ^ (2ull << 56)))};
}
__host__ __device__ __forceinline__ u32 sign_word(Keys k, long long r, long long w, long long cols) {
    return hash32((u32)(r * bgnn::words_of(cols) + w) ^ k.s);
}
__host__ __device__ __forceinline__ float gen_val(Keys k, long long r, long long c, long long cols, int mode) {
    const u32 neg = ((sign_word(k, r, c >> 5, cols) >> (c & 31)) & 1u) ^ 1u;
    const u32 h = hash32((u32)(r * cols + c) ^ k.m);
    const float mag = mode == 0 ? (float)(h >> 9) * (1.0f / 8388608.0f) : (float)((h >> 9) & 3u) * 0.5f;
    return neg ? -mag : mag; // -0.0f for a negative zero
}
// Word w of row r of the canonical b1 form of A [rows][cols] (padding bits zero).
__host__ __device__ __forceinline__ u32 gen_word(Keys k, long long r, long long w, long long cols) {
    return sign_word(k, r, w, cols) & bgnn::word_mask(cols, w);
}
// Word w of row o of the transposed b1 form (B1T: [cols][ceil(rows/32)]): bit b = the bit of
// A[32 w + b][o].
__host__ __device__ __forceinline__ u32 gen_word_t(Keys k, long long o, long long w, long long rows,
                                                   long long cols) {
    u32 v = 0u;
    for (int b = 0; b < 32; b++) {
        const long long r = 32 * w + b;
        if (r < rows) v |= ((sign_word(k, r, o >> 5, cols) >> (o & 31)) & 1u) << b;
    }
    return v;
}

// Elements of one copy of a pool: kind 0 A as f32 [rows][cols]; 1 as f16; 2 canonical b1
// [rows][ceil(cols/32)]; 3 transposed b1 [cols][ceil(rows/32)].
__host__ __device__ __forceinline__ long long fill_elems(int kind, long long rows, long long cols) {
    return kind <= 1 ? rows * cols : kind == 2 ? rows * bgnn::words_of(cols) : cols * bgnn::words_of(rows);
}
// Copy blockIdx.y of a pool (at base + copy * stride_elems) from stream seed + copy.
__global__ void k_fill(void *base, int kind, long long stride_elems, long long rows, long long cols,
                       uint64_t seed, int mode) {
    const long long c = blockIdx.y, per = fill_elems(kind, rows, cols);
    const Keys k = keys_of(seed + (uint64_t)c);
    const long long cw = bgnn::words_of(cols), rw = bgnn::words_of(rows);
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < per;
         e += (long long)gridDim.x * blockDim.x) {
        const long long o = c * stride_elems + e;
        if (kind == 0) ((float *)base)[o] = gen_val(k, e / cols, e % cols, cols, mode);
        else if (kind == 1) ((__half *)base)[o] = __float2half_rn(gen_val(k, e / cols, e % cols, cols, mode));
        else if (kind == 2) ((u32 *)base)[o] = gen_word(k, e / cw, e % cw, cols);
        else ((u32 *)base)[o] = gen_word_t(k, e / rw, e % rw, rows, cols);
    }
}

__global__ void k_gather_rows(char *dst, const char *src, const long long *rows, long long nr, long long row_bytes) {
    const long long total = nr * row_bytes;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x)
        dst[t] = src[rows[t / row_bytes] * row_bytes + t % row_bytes];
}

static int grid_for(long long items) { return (int)std::max(1LL, std::min((items + 255) / 256, 65536LL)); }

// ---- the kernels under test: thin wrappers as cg_cuda.c emits them ---------------------------
template <char P> using ElemT = typename std::conditional<P == 'B', unsigned, float>::type;

template <char X, char Y, char Z, long long K, long long M, bool WT>
__global__ void __launch_bounds__(256) k_bmm(long long n, long long ngraphs, ElemT<Z> *__restrict__ y,
                                             const ElemT<X> *__restrict__ x, const ElemT<Y> *__restrict__ w) {
    const long long rows = n;
    (void)n;
    (void)ngraphs;
    bgnn::bmm<X, Y, Z, K, M, WT>(rows, y, x, w);
}
template <char Z, long long K, long long M>
__global__ void __launch_bounds__(256) k_bmm_fbt(long long n, long long ngraphs, ElemT<Z> *__restrict__ y,
                                                 const float *__restrict__ x, const unsigned *__restrict__ w) {
    const long long rows = n;
    (void)n;
    (void)ngraphs;
    bgnn::bmm_fb_tiled<Z, K, M, 0, 0x00000000u>(rows, y, x, w, nullptr, nullptr, nullptr, nullptr);
}

enum Var { V_FFF, V_FFB, V_FBF, V_FBB, V_BFF, V_BFB, V_BBF, V_BBB, V_FBF_S, V_FBB_S, NVAR };
struct VarInfo {
    const char *prec, *label;
    bool tiled, wt;
};
static const VarInfo VARS[NVAR] = {
    {"FFF", "bmm.FFF", false, false},           {"FFB", "bmm.FFB", false, false},
    {"FBF", "bmm.FBF tiled", true, false},      {"FBB", "bmm.FBB tiled", true, false},
    {"BFF", "bmm.BFF", false, false},           {"BFB", "bmm.BFB", false, false},
    {"BBF", "bmm.BBF (B1T w)", false, true},    {"BBB", "bmm.BBB (B1T w)", false, true},
    {"FBF", "bmm.FBF simple (+epi)", false, false}, {"FBB", "bmm.FBB simple (+epi)", false, false},
};

// Threads per row of the plan (plan.c): the tiled FB kernel's (bg_plan_fbt_threads_per_row,
// BG_PLAN_FBT_TPT per output tile unless --fbt-tpr), else one thread per f32 output / one warp
// per b1 output word.
static long long tpr_of(int v, long long M) {
    if (VARS[v].tiled) return bg_plan_fbt_threads_per_row(M, g_fbt_tpr > 0 ? g_fbt_tpr : BG_PLAN_FBT_TPT);
    return VARS[v].prec[2] == 'B' ? bgnn::b1_tpr(M) : bgnn::f32_tpr(M);
}

template <long long K, long long M>
static void launch(int v, long long n, void *y, const void *x, const void *w) {
    const long long T = n * tpr_of(v, M);
    if (T <= 0) return;
    const dim3 g((unsigned)std::min((T + 255) / 256, 1LL << 30)), b(256);
    typedef float f;
    typedef unsigned u;
    switch (v) {
    case V_FFF: k_bmm<'F', 'F', 'F', K, M, false><<<g, b>>>(n, 1, (f *)y, (const f *)x, (const f *)w); break;
    case V_FFB: k_bmm<'F', 'F', 'B', K, M, false><<<g, b>>>(n, 1, (u *)y, (const f *)x, (const f *)w); break;
    case V_FBF: k_bmm_fbt<'F', K, M><<<g, b>>>(n, 1, (f *)y, (const f *)x, (const u *)w); break;
    case V_FBB: k_bmm_fbt<'B', K, M><<<g, b>>>(n, 1, (u *)y, (const f *)x, (const u *)w); break;
    case V_BFF: k_bmm<'B', 'F', 'F', K, M, false><<<g, b>>>(n, 1, (f *)y, (const u *)x, (const f *)w); break;
    case V_BFB: k_bmm<'B', 'F', 'B', K, M, false><<<g, b>>>(n, 1, (u *)y, (const u *)x, (const f *)w); break;
    case V_BBF: k_bmm<'B', 'B', 'F', K, M, true><<<g, b>>>(n, 1, (f *)y, (const u *)x, (const u *)w); break;
    case V_BBB: k_bmm<'B', 'B', 'B', K, M, true><<<g, b>>>(n, 1, (u *)y, (const u *)x, (const u *)w); break;
    case V_FBF_S: k_bmm<'F', 'B', 'F', K, M, false><<<g, b>>>(n, 1, (f *)y, (const f *)x, (const u *)w); break;
    case V_FBB_S: k_bmm<'F', 'B', 'B', K, M, false><<<g, b>>>(n, 1, (u *)y, (const f *)x, (const u *)w); break;
    default: break;
    }
    CK(cudaGetLastError());
}

// ---- cuBLAS baselines: row-major Y[N][M] = X[N][K] W[K][M] as column-major Y^T = W^T X^T ----
static void sgemm(cublasHandle_t h, long long N, long long K, long long M, const float *x, const float *w, float *y) {
    const float one = 1.0f, zero = 0.0f;
    CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)M, (int)N, (int)K, &one, w, (int)M, x, (int)K, &zero, y,
                    (int)M));
}
static void hgemm(cublasHandle_t h, long long N, long long K, long long M, const __half *x, const __half *w,
                  __half *y) {
    const float one = 1.0f, zero = 0.0f;
    CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)M, (int)N, (int)K, &one, w, CUDA_R_16F, (int)M, x, CUDA_R_16F,
                     (int)K, &zero, y, CUDA_R_16F, (int)M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// ---- buffers ---------------------------------------------------------------------------------
// `count` copies of `bytes` each (256-byte aligned): enough that cycling through them touches
// at least 2x the L2 between two uses of one copy (at most 256 copies, 4 GB).
struct Pool {
    char *base = nullptr;
    size_t bytes = 0, stride = 0;
    int count = 0;
    void *at(long long i) const { return base + (size_t)(i % count) * stride; }
};
static void pool_alloc(Pool &p, size_t bytes) {
    p.bytes = bytes;
    p.stride = (std::max<size_t>(bytes, 1) + 255) & ~(size_t)255;
    long long want = (2 * g_l2 + (long long)p.stride - 1) / (long long)p.stride;
    want = std::min(want, (4LL << 30) / (long long)p.stride);
    p.count = (int)std::max(1LL, std::min(256LL, want));
    CK(cudaMalloc(&p.base, p.stride * p.count));
}
static void pool_free(Pool &p) {
    if (p.base) CK(cudaFree(p.base));
    p = Pool();
}
static void pool_fill(Pool &p, int kind, long long rows, long long cols, uint64_t seed, int mode) {
    const size_t esz = kind == 1 ? 2 : 4;
    const long long per = fill_elems(kind, rows, cols);
    if (per == 0) return;
    const dim3 grid((unsigned)std::max(1LL, std::min((per + 255) / 256, 4096LL)), (unsigned)p.count);
    k_fill<<<grid, 256>>>(p.base, kind, (long long)(p.stride / esz), rows, cols, seed, mode);
    CK(cudaGetLastError());
}

// ---- timing ----------------------------------------------------------------------------------


// ---- reference -------------------------------------------------------------------------------
// bg_ref_bmm over blocks of rows in parallel (bench_util.cuh ref_rows); the raw 32-bit words
// of the result (f32 bits or b1 words), rows x (Z = B ? ceil(M/32) : M).
static bool ref_bmm(const char *prec, const BgTensor &x, const BgTensor &w, std::vector<u32> &out) {
    const long long M = w.dim[1], opr = prec[2] == 'B' ? (M + 31) / 32 : M;
    const size_t xrow = x.dtype == BG_DT_B1 ? 4 * (size_t)x.words_per_row : 4 * (size_t)x.dim[1];
    return ref_rows(x.dim[0], opr, out, [&](long long r0, long long r1, BgTensor *y) {
        BgTensor xv = x;
        xv.dim[0] = r1 - r0;
        xv.data = (char *)x.data + (size_t)r0 * xrow;
        return bg_ref_bmm(prec, &xv, &w, y);
    });
}

// ---- shapes ----------------------------------------------------------------------------------
enum CheckMode { CHECK_NONE, CHECK_FULL, CHECK_SAMPLE };
struct Shape {
    const char *graph;
    long long N, K, M;
    CheckMode check;
    bool timed;
    int mode; // value generator mode
};

struct Row {
    std::string graph, kernel;
    long long N, K, M;
    double us, mb, fbw_us, fc_us, s32_us, s16_us;
};
static std::vector<Row> g_rows;

static std::string shape_label(const Shape &s) {
    char b[96];
    snprintf(b, sizeof b, "%-9s N=%-6lld K=%-4lld M=%-3lld", s.graph, s.N, s.K, s.M);
    return b;
}
static bool selected(const Shape &s, const char *kernel) {
    if (g_only.empty()) return true;
    char b[160];
    snprintf(b, sizeof b, "%s N=%lld K=%lld M=%lld %s", s.graph, s.N, s.K, s.M, kernel);
    return strstr(b, g_only.c_str()) != nullptr;
}

static void report_check(const Shape &s, const char *what, bool ok, const std::string &note) {
    printf("check %s %-24s %s%s\n", shape_label(s).c_str(), what, ok ? "ok" : "FAIL", note.c_str());
    fflush(stdout);
    if (ok) g_ok++;
    else g_fail++;
}

// Rows of the output to check: all, or a sample (the first 64, the last 96, ~1000 spread).
static std::vector<long long> check_rows(const Shape &s) {
    std::vector<long long> r;
    if (s.check == CHECK_FULL) {
        for (long long i = 0; i < s.N; i++) r.push_back(i);
        return r;
    }
    for (long long i = 0; i < std::min(64LL, s.N); i++) r.push_back(i);
    for (long long i = std::max(0LL, s.N - 96); i < s.N; i++) r.push_back(i);
    for (long long i = 0; i < 1000; i++) r.push_back((long long)(rmat_mix64(4242 + (uint64_t)i) % (uint64_t)s.N));
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    return r;
}

// The rows `rows` (device index array drows) of a device matrix of row_bytes bytes per row.
static void fetch_rows(std::vector<char> &h, const void *src, long long N, long long row_bytes,
                       const std::vector<long long> &rows, const long long *drows, char *dtmp) {
    const long long nr = (long long)rows.size();
    h.resize((size_t)std::max(1LL, nr * row_bytes));
    if (nr * row_bytes == 0) return;
    if (nr == N) {
        CK(cudaMemcpy(h.data(), src, (size_t)(nr * row_bytes), cudaMemcpyDeviceToHost));
        return;
    }
    k_gather_rows<<<grid_for(nr * row_bytes), 256>>>(dtmp, (const char *)src, drows, nr, row_bytes);
    CK(cudaGetLastError());
    CK(cudaMemcpy(h.data(), dtmp, (size_t)(nr * row_bytes), cudaMemcpyDeviceToHost));
}

static float half_bits_to_float(uint16_t b) {
    __half_raw r;
    r.x = b;
    return __half2float(__half(r));
}

template <long long K, long long M>
static void run_shape(const Shape &s, int sidx, cublasHandle_t cb) {
    const long long N = s.N, KW = (K + 31) / 32, MW = (M + 31) / 32;
    bool any = false;
    for (int v = 0; v < NVAR; v++) any = any || selected(s, VARS[v].label);
    if (!any) return;
    const uint64_t SX = 0x5eed0000ull + 7919ull * (uint64_t)sidx, SW = SX + 1000003ull;
    // Pools: X (f32, b1, f16), W (f32, b1 canonical, b1 transposed, f16), Y (f32, b1, f16).
    Pool xf, xb, xh, wf, wb, wbt, wh, yf, yb, yh;
    pool_alloc(xf, 4 * (size_t)(N * K));
    pool_alloc(xb, 4 * (size_t)(N * KW));
    pool_alloc(xh, 2 * (size_t)(N * K));
    pool_alloc(wf, 4 * (size_t)(K * M));
    pool_alloc(wb, 4 * (size_t)(K * MW));
    pool_alloc(wbt, 4 * (size_t)(M * KW));
    pool_alloc(wh, 2 * (size_t)(K * M));
    pool_alloc(yf, 4 * (size_t)(N * M));
    pool_alloc(yb, 4 * (size_t)(N * MW));
    pool_alloc(yh, 2 * (size_t)(N * M));
    pool_fill(xf, 0, N, K, SX, s.mode);
    pool_fill(xh, 1, N, K, SX, s.mode);
    pool_fill(xb, 2, N, K, SX, s.mode);
    pool_fill(wf, 0, K, M, SW, s.mode);
    pool_fill(wh, 1, K, M, SW, s.mode);
    pool_fill(wb, 2, K, M, SW, s.mode);
    pool_fill(wbt, 3, K, M, SW, s.mode);
    CK(cudaDeviceSynchronize());

    // ---- correctness (copy 0 of everything) ----
    if (s.check != CHECK_NONE) {
        const std::vector<long long> rows = check_rows(s);
        const long long nr = (long long)rows.size();
        long long *drows;
        char *dtmp;
        CK(cudaMalloc(&drows, sizeof(long long) * std::max(1LL, nr)));
        CK(cudaMalloc(&dtmp, std::max<size_t>(1, (size_t)(nr * 4 * std::max(K, M)))));
        CK(cudaMemcpy(drows, rows.data(), sizeof(long long) * nr, cudaMemcpyHostToDevice));
        // Host operands: the checked rows of X (f32 and b1), all of W (f32 and canonical b1).
        BgTensor hxf, hxb, hwf, hwb;
        if (!bg_tensor_alloc(&hxf, BG_DT_F32, 2, nr, K) || !bg_tensor_alloc(&hxb, BG_DT_B1, 2, nr, K) ||
            !bg_tensor_alloc(&hwf, BG_DT_F32, 2, K, M) || !bg_tensor_alloc(&hwb, BG_DT_B1, 2, K, M)) {
            fprintf(stderr, "host allocation failed\n");
            exit(2);
        }
        std::vector<char> tmp;
        fetch_rows(tmp, xf.at(0), N, 4 * K, rows, drows, dtmp);
        memcpy(hxf.data, tmp.data(), (size_t)(nr * 4 * K));
        fetch_rows(tmp, xb.at(0), N, 4 * KW, rows, drows, dtmp);
        memcpy(hxb.data, tmp.data(), (size_t)(nr * 4 * KW));
        CK(cudaMemcpy(hwf.data, wf.at(0), 4 * (size_t)(K * M), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hwb.data, wb.at(0), 4 * (size_t)(K * MW), cudaMemcpyDeviceToHost));
        // The generators agree with the host: spot-check X, and the transposed weights in full.
        {
            const Keys kx = keys_of(SX), kw = keys_of(SW);
            long long bad = 0;
            const float *xs = (const float *)hxf.data;
            const u32 *xbs = (const u32 *)hxb.data;
            for (long long i = 0; i < nr; i++)
                for (long long k = 0; k < K; k++) {
                    const float v = gen_val(kx, rows[i], k, K, s.mode);
                    bad += f2u(xs[i * K + k]) != f2u(v);
                    bad += (long long)((xbs[i * KW + k / 32] >> (k % 32)) & 1u) != (long long)((f2u(v) >> 31) ^ 1u);
                }
            for (long long i = 0; i < nr; i++)
                for (long long w = 0; w < KW; w++) bad += (xbs[i * KW + w] & ~bgnn::word_mask(K, w)) != 0u;
            std::vector<u32> hwt((size_t)std::max(1LL, M * KW));
            CK(cudaMemcpy(hwt.data(), wbt.at(0), 4 * (size_t)(M * KW), cudaMemcpyDeviceToHost));
            const u32 *wbs = (const u32 *)hwb.data;
            for (long long k = 0; k < K; k++)
                for (long long o = 0; o < M; o++) {
                    const float v = gen_val(kw, k, o, M, s.mode);
                    const u32 bit = (f2u(v) >> 31) ^ 1u;
                    bad += f2u(((const float *)hwf.data)[k * M + o]) != f2u(v);
                    bad += ((wbs[k * MW + o / 32] >> (o % 32)) & 1u) != bit;
                    bad += ((hwt[(size_t)(o * KW + k / 32)] >> (k % 32)) & 1u) != bit;
                }
            report_check(s, "operands (X, W, B1T)", bad == 0,
                         bad ? " " + std::to_string(bad) + " wrong elements" : "");
        }
        std::vector<u32> ref[NVAR];
        bool have[NVAR] = {};
        auto ref_for = [&](const char *prec) -> const std::vector<u32> & {
            int v0 = 0;
            while (strcmp(VARS[v0].prec, prec)) v0++;
            if (!have[v0]) {
                const BgTensor &x = prec[0] == 'B' ? hxb : hxf;
                const BgTensor &w = prec[1] == 'B' ? hwb : hwf;
                if (!ref_bmm(prec, x, w, ref[v0])) {
                    fprintf(stderr, "bg_ref_bmm(%s) refused the operands\n", prec);
                    exit(2);
                }
                have[v0] = true;
            }
            return ref[v0];
        };
        char note[256];
        for (int v = 0; v < NVAR; v++) {
            const VarInfo &vi = VARS[v];
            if (!selected(s, vi.label)) continue;
            const bool zb = vi.prec[2] == 'B';
            const long long opr = zb ? MW : M;
            Pool &py = zb ? yb : yf;
            CK(cudaMemset(py.at(0), 0xA5, py.bytes)); // poison
            const void *x = vi.prec[0] == 'B' ? xb.at(0) : xf.at(0);
            const void *w = vi.prec[1] == 'B' ? (vi.wt ? wbt.at(0) : wb.at(0)) : wf.at(0);
            launch<K, M>(v, N, py.at(0), x, w);
            CK(cudaDeviceSynchronize());
            fetch_rows(tmp, py.at(0), N, 4 * opr, rows, drows, dtmp);
            const std::vector<u32> &want = ref_for(vi.prec);
            const u32 *got = (const u32 *)tmp.data();
            long long bad = 0, first = -1;
            for (long long i = 0; i < nr * opr; i++)
                if (got[i] != want[(size_t)i]) {
                    if (first < 0) first = i;
                    bad++;
                }
            snprintf(note, sizeof note, " (%s, %lld rows)", s.check == CHECK_FULL ? "all" : "sampled", nr);
            std::string n = note;
            if (bad) {
                const long long r = rows[(size_t)(first / opr)], c = first % opr;
                snprintf(note, sizeof note, ": %lld wrong %s, first at row %lld %s %lld: got 0x%08x want 0x%08x",
                         bad, zb ? "words" : "floats", r, zb ? "word" : "col", c, got[first], want[(size_t)first]);
                n += note;
            }
            report_check(s, vi.label, bad == 0, n);
        }
        // cuBLAS: the layout (any transposition mistake gives O(1) errors) and the precision
        // against the FFF reference: max |err| / rms(reference).
        {
            const std::vector<u32> &want = ref_for("FFF");
            double ss = 0;
            for (long long i = 0; i < nr * M; i++) {
                float f;
                memcpy(&f, &want[(size_t)i], 4);
                ss += (double)f * f;
            }
            const double rms = std::max(sqrt(ss / (double)std::max(1LL, nr * M)), 1e-30);
            CK(cudaMemset(yf.at(0), 0xA5, yf.bytes));
            sgemm(cb, N, K, M, (const float *)xf.at(0), (const float *)wf.at(0), (float *)yf.at(0));
            CK(cudaDeviceSynchronize());
            fetch_rows(tmp, yf.at(0), N, 4 * M, rows, drows, dtmp);
            double e32 = 0;
            for (long long i = 0; i < nr * M; i++) {
                float g, f;
                memcpy(&g, tmp.data() + 4 * i, 4);
                memcpy(&f, &want[(size_t)i], 4);
                e32 = std::max(e32, std::isfinite(g) ? fabs((double)g - f) : 1e30);
            }
            e32 /= rms;
            CK(cudaMemset(yh.at(0), 0xA5, yh.bytes));
            hgemm(cb, N, K, M, (const __half *)xh.at(0), (const __half *)wh.at(0), (__half *)yh.at(0));
            CK(cudaDeviceSynchronize());
            fetch_rows(tmp, yh.at(0), N, 2 * M, rows, drows, dtmp);
            double e16 = 0;
            for (long long i = 0; i < nr * M; i++) {
                uint16_t hb;
                memcpy(&hb, tmp.data() + 2 * i, 2);
                float f;
                memcpy(&f, &want[(size_t)i], 4);
                const float g = half_bits_to_float(hb);
                e16 = std::max(e16, std::isfinite(g) ? fabs((double)g - f) : 1e30);
            }
            e16 /= rms;
            // FP32 (no TF32): ~1e-7..1e-5; TF32 would give ~1e-3; FP16 in/out ~1e-3.
            snprintf(note, sizeof note, ": max|err|/rms %.2e vs the FFF reference%s", e32,
                     e32 > 1e-4 && e32 <= 0.1 ? " (WARNING: larger than FP32 accumulation explains; TF32?)" : "");
            if (e32 > 1e-4 && e32 <= 0.1) g_warn++;
            report_check(s, "cublas SGEMM fp32", e32 <= 0.1, note);
            snprintf(note, sizeof note, ": max|err|/rms %.2e vs the FFF reference", e16);
            report_check(s, "cublas GemmEx fp16", e16 <= 0.1, note);
        }
        bg_tensor_free(&hxf);
        bg_tensor_free(&hxb);
        bg_tensor_free(&hwf);
        bg_tensor_free(&hwb);
        CK(cudaFree(drows));
        CK(cudaFree(dtmp));
    }

    // ---- timing ----
    if (s.timed) {
        const double flops = 2.0 * N * K * M;
        const double b32 = 4.0 * (N * K + K * M + N * M), b16 = 2.0 * (N * K + K * M + N * M);
        const float t32 = median_ms([&](int i) {
            sgemm(cb, N, K, M, (const float *)xf.at(i), (const float *)wf.at(i), (float *)yf.at(i));
        }, 3, g_reps);
        const float t16 = median_ms([&](int i) {
            hgemm(cb, N, K, M, (const __half *)xh.at(i), (const __half *)wh.at(i), (__half *)yh.at(i));
        }, 3, g_reps);
        const double s32 = t32 * 1e3, s16 = t16 * 1e3;
        auto add = [&](const std::string &kernel, double us, double bytes, double fc_us) {
            Row r{s.graph, kernel, N, K, M, us, bytes / 1e6, bytes / g_bw * 1e6, fc_us, s32, s16};
            const double fl = std::max(r.fbw_us, r.fc_us);
            printf("  %s %-29s %10.1f us  %9.2f MB  floorBW %8.2f us  floorC %8.2f us  x_floor %6.2f  "
                   "vs fp32 %6.2f  vs fp16 %6.2f\n", shape_label(s).c_str(), kernel.c_str(), us, r.mb, r.fbw_us,
                   r.fc_us, us / fl, s32 / us, s16 / us);
            fflush(stdout);
            g_rows.push_back(r);
        };
        add("cublas SGEMM fp32", s32, b32, flops / g_peak32 * 1e6);
        add("cublas GemmEx fp16 (fp32 acc)", s16, b16, g_peak16 > 0 ? flops / g_peak16 * 1e6 : 0.0);
        for (int v = 0; v < NVAR; v++) {
            const VarInfo &vi = VARS[v];
            if (!selected(s, vi.label)) continue;
            const char X = vi.prec[0], Y = vi.prec[1], Z = vi.prec[2];
            const Pool &px = X == 'B' ? xb : xf;
            const Pool &pw = Y == 'B' ? (vi.wt ? wbt : wb) : wf;
            const Pool &py = Z == 'B' ? yb : yf;
            const float ms = median_ms([&](int i) { launch<K, M>(v, N, py.at(i), px.at(i), pw.at(i)); }, 3, g_reps);
            const double bytes = (double)px.bytes + (double)pw.bytes + (double)py.bytes;
            const double fc = X == 'B' && Y == 'B' ? (double)N * M * KW / g_popc * 1e6 : flops / g_peak32 * 1e6;
            add(vi.label, ms * 1e3, bytes, fc);
        }
    }
    for (Pool *p : {&xf, &xb, &xh, &wf, &wb, &wbt, &wh, &yf, &yb, &yh}) pool_free(*p);
}

// The (K, M) of every shape are template arguments of the kernels.
static void dispatch(const Shape &s, int sidx, cublasHandle_t cb) {
#define SHAPE(KK, MM)                                                                         \
    if (s.K == KK && s.M == MM) return run_shape<KK, MM>(s, sidx, cb);
    SHAPE(64, 64)
    SHAPE(128, 128)
    SHAPE(256, 256)
    SHAPE(1433, 64)
    SHAPE(3703, 64)
    SHAPE(70, 33)
    SHAPE(1, 1)
    SHAPE(64, 7)
#undef SHAPE
    fprintf(stderr, "no kernels instantiated for K=%lld M=%lld\n", s.K, s.M);
    exit(2);
}

int main(int argc, char **argv) {
    bool quick = false, reps_given = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            g_reps = std::max(1, atoi(argv[++i]));
            reps_given = true;
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) g_only = argv[++i];
        else if (!strcmp(argv[i], "--fbt-tpr") && i + 1 < argc) g_fbt_tpr = std::max(1, atoi(argv[++i]));
        else {
            fprintf(stderr, "usage: %s [--reps R] [--quick] [--only SUBSTR] [--fbt-tpr T]\n", argv[0]);
            return 2;
        }
    }
    if (quick && !reps_given) g_reps = 20;
    int ndev = 0;
    cudaError_t de = cudaGetDeviceCount(&ndev);
    if (de != cudaSuccess || ndev == 0) {
        printf("bmm_bench: no CUDA GPU available (%s); nothing to run.\n",
               de != cudaSuccess ? cudaGetErrorString(de) : "0 devices");
        return 77;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int clk_khz = 0, drv = 0;
    CK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, 0));
    CK(cudaDriverGetVersion(&drv));
    const double clk = clk_khz * 1e3, sms = prop.multiProcessorCount;
    const int fp32_lanes = prop.major >= 9 || (prop.major == 8 && prop.minor > 0) ? 128 : 64;
    g_peak32 = sms * fp32_lanes * 2 * clk;
    g_popc = sms * 16 * clk;
    g_peak16 = prop.major == 9 ? sms * 4096 * clk : prop.major == 8 && prop.minor == 0 ? sms * 2048 * clk : 0.0;
    g_l2 = prop.l2CacheSize;
    cublasHandle_t cb;
    CKB(cublasCreate(&cb));
    CKB(cublasSetMathMode(cb, CUBLAS_DEFAULT_MATH)); // FP32 SGEMM without TF32
    int cbv = 0;
    CKB(cublasGetVersion(cb, &cbv));
    printf("GPU: %s (sm_%d%d), %d SMs, clock %.0f MHz, L2 %lld MB; CUDA runtime %d, driver %d, cuBLAS %d; "
           "OpenMP threads %d\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount, clk / 1e6,
           g_l2 >> 20, CUDART_VERSION, drv, cbv, omp_get_max_threads());
    g_bw = measure_bw();
    printf("device-to-device copy: %.0f GB/s (bytes read + written); FP32 peak %.1f TFLOP/s (%d lanes x 2 x clock "
           "per SM); popc %.2f T/s (16/clk/SM); FP16 tensor peak %s\n", g_bw / 1e9, g_peak32 / 1e12, fp32_lanes,
           g_popc / 1e12, g_peak16 > 0 ? (std::to_string((int)(g_peak16 / 1e12)) + " TFLOP/s (dense)").c_str() : "unknown");
    printf("timing: median of %d launches (CUDA events, one launch each) after 3 warm-up launches%s%s\n", g_reps,
           quick ? "; --quick subset" : "", g_only.empty() ? "" : ("; --only '" + g_only + "'").c_str());
    fflush(stdout);

    std::vector<Shape> shapes = {
        {"awkward", 37, 70, 33, CHECK_FULL, false, 1},
        {"tiny", 1, 1, 1, CHECK_FULL, false, 1},
        {"cora-l2", 2708, 64, 7, CHECK_FULL, false, 0},
    };
    struct G { const char *name; long long n; CheckMode ck; } gs[] = {
        {"cora", 2708, CHECK_FULL}, {"citeseer", 3327, CHECK_FULL}, {"pubmed", 19717, CHECK_FULL},
        {"reddit", 232965, CHECK_SAMPLE}};
    for (const G &g : gs) {
        if (quick && strcmp(g.name, "cora") && strcmp(g.name, "reddit")) continue;
        for (long long h : {64LL, 128LL, 256LL})
            if (!quick || !strcmp(g.name, "cora") || h == 128) shapes.push_back({g.name, g.n, h, h, g.ck, true, 0});
        if (!strcmp(g.name, "cora")) shapes.push_back({g.name, g.n, 1433, 64, g.ck, true, 0});
        if (!strcmp(g.name, "citeseer")) shapes.push_back({g.name, g.n, 3703, 64, g.ck, true, 0});
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < shapes.size(); i++) dispatch(shapes[i], (int)i, cb);
    const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CKB(cublasDestroy(cb));

    printf("\n==== BMM microbenchmarks on %s (median of %d launches, CUDA events) ====\n", prop.name, g_reps);
    printf("MB = compulsory bytes (X + W + Y at their real sizes: f32 4 B, b1 1 bit padded to 32-bit words per row,\n"
           "f16 2 B); floorBW = MB / measured copy bandwidth %.0f GB/s; floorC = compute floor: 2NKM flop at the FP32\n"
           "peak for any F operand (bgnn's FF kernel rounds mul and add separately, so its own floor is 2x that),\n"
           "N*M*ceil(K/32) popcounts at 16/clk/SM for BB, 2NKM at the dense FP16 tensor peak for cuBLAS fp16;\n"
           "x_floor = time / max(floorBW, floorC); vs fp32 / vs fp16 = cuBLAS time / this time (> 1: faster).\n"
           "Generator launch shape: block 256, ceil(N * tpr / 256) blocks, tpr = M (f32 out), 32 ceil(M/32) (b1 out),\n"
           "12 per output tile of 64 (32 if M <= 32) (tiled FB).  'simple (+epi)' = the matmul.cuh FB kernel the generator uses when an\n"
           "epilogue is fused (not used for a plain product).\n", g_bw / 1e9);
    printf("%-9s %6s %4s %3s %-30s %10s %9s %9s %9s %7s %7s %7s\n", "graph", "N", "K", "M", "kernel", "time_us", "MB",
           "floorBW", "floorC", "x_floor", "vs_fp32", "vs_fp16");
    for (const Row &r : g_rows) {
        const double fl = std::max(r.fbw_us, r.fc_us);
        printf("%-9s %6lld %4lld %3lld %-30s %10.1f %9.2f %9.2f %9.2f %7.2f %7.2f %7.2f\n", r.graph.c_str(), r.N,
               r.K, r.M, r.kernel.c_str(), r.us, r.mb, r.fbw_us, r.fc_us, r.us / fl, r.s32_us / r.us,
               r.s16_us / r.us);
    }
    printf("checks: %d OK, %d FAIL%s; wall time of the shapes %.1f s\n", g_ok, g_fail,
           g_warn ? (", " + std::to_string(g_warn) + " WARNING(s)").c_str() : "", total_s);
    printf("%s\n", g_fail ? "FAIL" : "ALL CHECKS PASSED");
    return g_fail ? 1 : 0;
}
