// spmm_csr_probe.cu - where the time of a wide float aggregation goes (sage_full's and indgcn_full's
// first layer on Cora: y = A_mean standardize(X), 1,433 columns, X sparse).
// Kernels, each on the whole graph and on parts of it (the other rows emptied: rows of at least
// 100 edges, Cora's one hub of 168; rows of fewer; rows of at most 32 edges; rows of more), median
// of 200 event-timed launches, every output compared bit for bit with the dense one.  A part's
// kernel still covers every row (an empty row reads its range and stores its zeros), so its time
// includes that cost: the dense kernel on the 10 rows of more than 32 edges alone takes 23-25 us,
// most of its 31 us on the whole graph.
//   dense   the product's template (spmm.cuh bspmm_adjb: a thread an output, 8 edges' loads in flight);
//   csr     the block-a-row sparse variant (bench/kernels/spmm_csr.cuh);
//   mask4/8 a thread an output reading a neighbour's column only where X stores an entry (a bit
//           mask of X's entries and each row's first column without one, built on the host), else
//           the row's one value of +0 (4 / 8 edges unrolled);
//   wdWxK   a warp an item (a row, W 32-column words of it), the neighbours' ids and factors read
//           32 edges at a time, a lane an edge, and handed out by shuffles, K edges' loads a
//           step in flight (K = 8 where not given);
//   wm1x32  the same with the mask;
//   dense xK  a thread K outputs of a row (columns t, t + T, ...), edges unrolled (k_cols:
//             the product's swd_row_cols);
//   pipe xKuU the same with the next U edges' ids loaded during this step's gathers (k_pipe);
//   hybrid    rows of <= 32 edges as xK, longer rows a thread an output pipelined (k_hybrid);
//   staged    the product's templates/spmm.cuh bspmm_wide_adjb: rows of <= 32 edges as xK (K =
//             ceil(C / 256)), longer rows a block a 32-column slice, 64 edges' terms loaded at
//             once into shared memory, then added in edge order (its probe form, with K = 4, 6,
//             8, took 19.1-23.7 us: docs/logs/spmm_csr_probe7_h200_2026-11-30.log).
// Measured on an H200 (2026-11-30; docs/logs/spmm_csr_probe{1..7}_h200_2026-11-30.log;
// docs/performance.md, "Tried and not kept: a sparse aggregation of standardized features" and
// "Wide float aggregations"): on the whole graph dense 31-33 us, staged x6 19.1, every other
// form 23-201.  Build on the device machine:
//   gcc -std=c11 -O2 -c plan/features_csr.c plan/row_order.c plan/plan.c -Iplan -Ibase -Iloaders -Iinclude
//   nvcc -O3 -arch=sm_90 -std=c++17 -Itemplates -Ibench/kernels -Icompiler -Ibase -Iinclude -Iplan -Iloaders \
//        bench/spmm_csr_probe.cu features_csr.o row_order.o plan.o -o probe
// Run: ./probe DATA_DIR/cora
#include "bench_util.cuh"
#include "bgnn_common.cuh"
#include "rowwise.cuh"
#include "spmm.cuh"
#include "spmm_csr.cuh" // bench/kernels

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "plan.h" // bg_features_csr, bg_plan_row_order, bg_plan_wide_threads_per_row, BG_PLAN_LONG_ROW_EDGES
}
using bgnn::u32;

constexpr long long C = 1433;

template <long long CC>
__global__ void __launch_bounds__(256) k_dense(long long rows, float *y, const long long *rp, const int *col,
                                               const float *rowf, const float *colf, const float *x) {
    bgnn::bspmm_adjb<'F', 'F', CC, true, 0>(rows, y, rp, col, rowf, colf, x);
}
template <long long CC>
__global__ void __launch_bounds__(256) k_csr(long long rows, float *y, const long long *rp, const int *col,
                                             const float *rowf, const float *colf, const float *x, const unsigned *csr) {
    bgnn::bspmm_csr_adjb<'F', CC>(rows, y, rp, col, rowf, colf, x, bgnn::csr_rows(csr, rows));
}
// A thread an output, a warp a 32-column word of a row: neighbour j's term reads x[j, c] where
// X stores an entry at (j, c) (mask bit), else x[j, zc[j]] (the row's one value of +0).
template <long long CC, int U>
__global__ void __launch_bounds__(256) k_mask(long long rows, float *y, const long long *rp, const int *col,
                                              const float *rowf, const float *colf, const float *x, const u32 *zc,
                                              const u32 *mask) {
    constexpr long long CW = (CC + 31) / 32;
    for (long long t = blockIdx.x * 256LL + threadIdx.x; t < rows * CW * 32; t += (long long)gridDim.x * 256) {
        const long long i = t / (CW * 32), c = t % (CW * 32);
        const long long e0 = rp[i], e1 = rp[i + 1];
        float acc = 0.0f;
#pragma unroll U
        for (long long e = e0; e < e1; e++) {
            const long long j = col[e];
            const u32 w = mask[j * CW + (c >> 5)];
            const long long cc = (w >> (c & 31)) & 1u ? c : (long long)zc[j];
            acc = bgnn::fadd(acc, bgnn::fmul(colf[j], x[j * CC + cc]));
        }
        if (c < CC) y[i * CC + c] = bgnn::fmul(rowf[i], acc);
    }
}
// A warp an item (row i, WPW words of its columns), lane l column 32 w + l of each word w:
// the neighbours' ids, factors, mask words and first +0 columns are read 32 edges at a time,
// a lane an edge, and handed out by shuffles; then 8 edges' x loads a step in flight, added in
// edge order.  MASK false: every column read (the dense form of the same loop).
template <long long CC, int WPW, bool MASK, int KB = 8>
__global__ void __launch_bounds__(256) k_warp(long long rows, float *y, const long long *rp, const int *col,
                                              const float *rowf, const float *colf, const float *x, const u32 *zc,
                                              const u32 *mask) {
    constexpr long long CW = (CC + 31) / 32, NB = (CW + WPW - 1) / WPW;
    const int lane = (int)(threadIdx.x & 31);
    const long long nw = (long long)gridDim.x * 8;
    for (long long item = blockIdx.x * 8LL + (threadIdx.x >> 5); item < rows * NB; item += nw) {
        const long long i = item / NB, w0 = (item % NB) * WPW;
        const long long e0 = rp[i], e1 = rp[i + 1];
        float acc[WPW];
#pragma unroll
        for (int w = 0; w < WPW; w++) acc[w] = 0.0f;
        for (long long eb = e0; eb < e1; eb += 32) {
            const long long e = eb + lane < e1 ? eb + lane : e0;
            const int j = col[e];
            const float f = colf[j];
            u32 z = 0, m[WPW];
            if (MASK) z = zc[j];
#pragma unroll
            for (int w = 0; w < WPW; w++) m[w] = MASK && w0 + w < CW ? mask[(long long)j * CW + w0 + w] : 0u;
            const int nb = (int)(e1 - eb < 32 ? e1 - eb : 32);
            for (int k0 = 0; k0 < nb; k0 += KB) {
                float t[KB][WPW];
#pragma unroll
                for (int k = 0; k < KB; k++) {
                    const int jj = __shfl_sync(0xffffffffu, j, k0 + k);
                    const float ff = __shfl_sync(0xffffffffu, f, k0 + k);
                    const u32 zz = __shfl_sync(0xffffffffu, z, k0 + k);
#pragma unroll
                    for (int w = 0; w < WPW; w++) {
                        const u32 mw = __shfl_sync(0xffffffffu, m[w], k0 + k);
                        long long c = (w0 + w) * 32 + lane;
                        if (!MASK && c >= CC) c = 0;
                        const long long cc = MASK ? ((mw >> lane) & 1u ? c : (long long)zz) : c;
                        t[k][w] = k0 + k < nb ? bgnn::fmul(ff, x[(long long)jj * CC + cc]) : 0.0f;
                    }
                }
#pragma unroll
                for (int k = 0; k < KB; k++)
                    if (k0 + k < nb)
#pragma unroll
                        for (int w = 0; w < WPW; w++) acc[w] = bgnn::fadd(acc[w], t[k][w]);
            }
        }
        const float rf = rowf[i];
#pragma unroll
        for (int w = 0; w < WPW; w++) {
            const long long c = (w0 + w) * 32 + lane;
            if (w0 + w < CW && c < CC) y[i * CC + c] = bgnn::fmul(rf, acc[w]);
        }
    }
}

// The dense template's sums with K outputs a thread: thread t of a row's T = ceil(C / K) (a
// multiple of 32) takes columns t, t + T, ... (each warp's loads still 32 consecutive columns),
// its neighbours' ids read once for the K sums, U edges unrolled.
template <long long CC, int K, int U>
__global__ void __launch_bounds__(256) k_cols(long long rows, float *y, const long long *rp, const int *col,
                                              const float *rowf, const float *colf, const float *x) {
    constexpr long long T = ((CC + K - 1) / K + 31) / 32 * 32;
    for (long long t = blockIdx.x * 256LL + threadIdx.x; t < rows * T; t += (long long)gridDim.x * 256)
        bgnn::swd_row_cols<CC, K, T, U, (1LL << 62)>(t / T, t % T, y, rp, col, rowf, colf, x, bgnn::EpEnd{});
}

// Row i's outputs c0, c0 + T, ... (K of them) by one thread, the next U edges' ids loaded while
// this step's x loads are in flight (one dependent round trip a step after the first), the
// factors read with the x loads.
template <long long CC, int K, int U, long long T>
__device__ __forceinline__ void pipe_row(long long i, long long c0, float *y, const long long *rp, const int *col,
                                         const float *rowf, const float *colf, const float *x) {
    const long long e0 = rp[i], e1 = rp[i + 1];
    float acc[K];
#pragma unroll
    for (int k = 0; k < K; k++) acc[k] = 0.0f;
    int jn[U];
#pragma unroll
    for (int u = 0; u < U; u++) jn[u] = e0 + u < e1 ? col[e0 + u] : 0;
    for (long long eb = e0; eb < e1; eb += U) {
        int j[U];
#pragma unroll
        for (int u = 0; u < U; u++) j[u] = jn[u];
#pragma unroll
        for (int u = 0; u < U; u++) jn[u] = eb + U + u < e1 ? col[eb + U + u] : 0;
        float f[U], v[U][K];
#pragma unroll
        for (int u = 0; u < U; u++) {
            f[u] = colf[j[u]];
#pragma unroll
            for (int k = 0; k < K; k++) {
                const long long c = c0 + k * T;
                v[u][k] = c < CC ? x[(long long)j[u] * CC + c] : 0.0f;
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (eb + u < e1)
#pragma unroll
                for (int k = 0; k < K; k++) acc[k] = bgnn::fadd(acc[k], bgnn::fmul(f[u], v[u][k]));
    }
    const float rf = rowf[i];
#pragma unroll
    for (int k = 0; k < K; k++) {
        const long long c = c0 + k * T;
        if (c < CC) y[i * CC + c] = bgnn::fmul(rf, acc[k]);
    }
}
// k_cols by pipe_row.
template <long long CC, int K, int U>
__global__ void __launch_bounds__(256) k_pipe(long long rows, float *y, const long long *rp, const int *col,
                                              const float *rowf, const float *colf, const float *x) {
    constexpr long long T = ((CC + K - 1) / K + 31) / 32 * 32;
    for (long long t = blockIdx.x * 256LL + threadIdx.x; t < rows * T; t += (long long)gridDim.x * 256)
        pipe_row<CC, K, U, T>(t / T, t % T, y, rp, col, rowf, colf, x);
}

// The rows of at most D edges as k_cols (K outputs a thread), the longer ones (hub[0..nhub), the
// graph's rows by their edges, most first, as a work list gives them) a thread an output by
// pipe_row: every block takes the short rows'
// items, then the long rows' (the two index spaces one after the other, grid-stride).
template <long long CC, int K, int U, int D>
__global__ void __launch_bounds__(256) k_hybrid(long long rows, float *y, const long long *rp, const int *col,
                                                const float *rowf, const float *colf, const float *x, const int *hub,
                                                int nhub) {
    constexpr long long T = ((CC + K - 1) / K + 31) / 32 * 32, T1 = (CC + 31) / 32 * 32;
    const long long stride = (long long)gridDim.x * 256, t0 = blockIdx.x * 256LL + threadIdx.x;
    for (long long t = t0; t < rows * T; t += stride)
        bgnn::swd_row_cols<CC, K, T, 2, D>(t / T, t % T, y, rp, col, rowf, colf, x, bgnn::EpEnd{});
    for (long long t = t0; t < (long long)nhub * T1; t += stride)
        pipe_row<CC, 1, U, T1>(hub[t / T1], t % T1, y, rp, col, rowf, colf, x);
}

// The product's form (templates/spmm.cuh bspmm_wide_adjb): k_hybrid's short rows with
// ceil(C / 256) outputs a thread, then each long row in 32-column slices, a block a slice, 64
// edges' terms loaded at once into shared memory, then added in edge order; its long rows from
// the work list ORDER (plan/row_order.c).
template <long long CC>
__global__ void __launch_bounds__(256) k_wide(long long rows, float *y, const long long *rp, const int *col,
                                              const float *rowf, const float *colf, const float *x, const int4 *order) {
    bgnn::bspmm_wide_adjb<CC, BG_PLAN_LONG_ROW_EDGES>(rows, y, rp, col, rowf, colf, x, order);
}

template <long long CC>
__global__ void k_std(long long rows, float *y, const float *x) {
    bgnn::standardize<CC, 0x38d1b717u, 32>(rows, y, x);
}

static std::vector<float> load_npy_f32(const std::string &path, long long *r, long long *c) {
    FILE *f = fopen(path.c_str(), "rb");
    if (!f) { perror(path.c_str()); exit(2); }
    char magic[10];
    if (fread(magic, 1, 10, f) != 10) exit(2);
    unsigned hl = (unsigned char)magic[8] | ((unsigned char)magic[9] << 8);
    std::string h(hl, ' ');
    if (fread(&h[0], 1, hl, f) != hl) exit(2);
    size_t p = h.find("shape");
    p = h.find('(', p);
    *r = atoll(h.c_str() + p + 1);
    *c = atoll(h.c_str() + h.find(',', p) + 1);
    std::vector<float> v((size_t)(*r * *c));
    if (fread(v.data(), 4, v.size(), f) != v.size()) exit(2);
    fclose(f);
    return v;
}

struct Csr { std::vector<long long> rp; std::vector<int> col; };
static Csr load_mtx(const std::string &path, long long n) {
    FILE *f = fopen(path.c_str(), "r");
    if (!f) { perror(path.c_str()); exit(2); }
    char line[512];
    long long a, b, m;
    do { if (!fgets(line, sizeof line, f)) exit(2); } while (line[0] == '%');
    sscanf(line, "%lld %lld %lld", &a, &b, &m);
    std::vector<std::vector<int>> adj((size_t)n);
    for (long long k = 0; k < m; k++) {
        if (fscanf(f, "%lld %lld", &a, &b) != 2) exit(2);
        adj[(size_t)(a - 1)].push_back((int)(b - 1));
    }
    fclose(f);
    Csr g;
    g.rp.push_back(0);
    for (auto &r : adj) {
        std::sort(r.begin(), r.end());
        for (int j : r) g.col.push_back(j);
        g.rp.push_back((long long)g.col.size());
    }
    return g;
}
// rows kept by keep(i, degree); the others empty
template <class F>
static Csr subgraph(const Csr &g, F keep) {
    Csr s;
    s.rp.push_back(0);
    for (size_t i = 0; i + 1 < g.rp.size(); i++) {
        const long long d = g.rp[i + 1] - g.rp[i];
        if (keep((long long)i, d))
            for (long long e = g.rp[i]; e < g.rp[i + 1]; e++) s.col.push_back(g.col[(size_t)e]);
        s.rp.push_back((long long)s.col.size());
    }
    return s;
}

template <class L>
static float median_us(L launch) {
    return 1000.0f * median_ms([&](int) { launch(); }, 5, 200);
}

template <class T>
static T *up(const std::vector<T> &v) {
    T *d;
    CK(cudaMalloc(&d, v.size() * sizeof(T) + 16));
    CK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

int main(int argc, char **argv) {
    const std::string dir = argc > 1 ? argv[1] : "cora";
    long long n, c;
    std::vector<float> X = load_npy_f32(dir + "/features.npy", &n, &c);
    if (c != C) { fprintf(stderr, "features have %lld columns, the probe is built for %lld\n", c, C); return 2; }
    const Csr g = load_mtx(dir + "/graph.mtx", n);
    uint64_t nnz = 0;
    for (float v : X) { u32 u; memcpy(&u, &v, 4); nnz += u != 0u; }
    size_t words = 0;
    u32 *blk = bg_features_csr(X.data(), n, C, nnz, &words);
    std::vector<u32> blkv(blk, blk + words);
    constexpr long long CW = (C + 31) / 32;
    std::vector<u32> zc((size_t)n), mask((size_t)(n * CW), 0u);
    for (long long j = 0; j < n; j++) {
        long long z = C;
        for (long long k = 0; k < C; k++) {
            u32 u;
            memcpy(&u, &X[(size_t)(j * C + k)], 4);
            if (u) mask[(size_t)(j * CW + k / 32)] |= 1u << (k % 32);
            else if (z == C) z = k;
        }
        zc[(size_t)j] = (u32)(z < C ? z : 0);
    }
    float *dX = up(X), *dx;
    CK(cudaMalloc(&dx, X.size() * 4));
    k_std<C><<<(unsigned)((n + 7) / 8), 256>>>(n, dx, dX);
    u32 *dblk = up(blkv), *dzc = up(zc), *dmask = up(mask);
    std::vector<float> colf((size_t)n, 1.0f);
    float *dcolf = up(colf), *dy0, *dy1;
    CK(cudaMalloc(&dy0, X.size() * 4));
    CK(cudaMalloc(&dy1, X.size() * 4));
    int dev;
    CK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    printf("%s, %lld rows, %llu nonzero features, %zu edges\n", prop.name, n, (unsigned long long)nnz, g.col.size());
    struct Part { const char *name; Csr g; } parts[] = {
        {"whole graph", g},
        {"rows >= 100 edges", subgraph(g, [](long long, long long d) { return d >= 100; })},
        {"rows < 100 edges", subgraph(g, [](long long, long long d) { return d < 100; })},
        {"rows <= 32 edges", subgraph(g, [](long long, long long d) { return d <= 32; })},
        {"rows > 32 edges", subgraph(g, [](long long, long long d) { return d > 32; })},
        {"no edges", subgraph(g, [](long long, long long) { return false; })},
    };
    printf("%-18s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s  same\n", "graph (us)", "dense", "csr", "mask4", "mask8", "wd1x32",
           "wd2x16", "wd2", "wd4", "wd8", "wm1x32");
    for (auto &pt : parts) {
        std::vector<float> rowf((size_t)n);
        for (long long i = 0; i < n; i++) {
            const long long d = pt.g.rp[(size_t)i + 1] - pt.g.rp[(size_t)i];
            rowf[(size_t)i] = d ? (float)(1.0 / (double)d) : 0.0f;
        }
        long long *drp = up(pt.g.rp);
        int *dcol = up(pt.g.col.empty() ? std::vector<int>{0} : pt.g.col);
        float *drowf = up(rowf);
        const unsigned gd = (unsigned)((n * C + 255) / 256), gm = (unsigned)((n * CW * 32 + 255) / 256);
        const float td = median_us([&] { k_dense<C><<<gd, 256>>>(n, dy0, drp, dcol, drowf, dcolf, dx); });
        std::vector<float> y0(X.size()), y1(X.size());
        CK(cudaMemcpy(y0.data(), dy0, y0.size() * 4, cudaMemcpyDeviceToHost));
        bool same = true;
        auto check = [&] {
            CK(cudaMemcpy(y1.data(), dy1, y1.size() * 4, cudaMemcpyDeviceToHost));
            same = same && memcmp(y0.data(), y1.data(), y0.size() * 4) == 0;
            CK(cudaMemset(dy1, 0xff, y1.size() * 4));
        };
        const float tc = median_us([&] { k_csr<C><<<(unsigned)n, 256>>>(n, dy1, drp, dcol, drowf, dcolf, dx, dblk); });
        check();
        const float t4 = median_us([&] { k_mask<C, 4><<<gm, 256>>>(n, dy1, drp, dcol, drowf, dcolf, dx, dzc, dmask); });
        check();
        const float t8 = median_us([&] { k_mask<C, 8><<<gm, 256>>>(n, dy1, drp, dcol, drowf, dcolf, dx, dzc, dmask); });
        check();
        auto warp = [&](auto kern, int wpw) {
            const long long items = n * ((CW + wpw - 1) / wpw);
            const float t = median_us([&] { kern<<<(unsigned)((items + 7) / 8), 256>>>(n, dy1, drp, dcol, drowf, dcolf, dx, dzc, dmask); });
            check();
            return t;
        };
        const float w1 = warp(k_warp<C, 1, false, 32>, 1), w2x = warp(k_warp<C, 2, false, 16>, 2), w2 = warp(k_warp<C, 2, false>, 2),
                    w4 = warp(k_warp<C, 4, false>, 4), w8 = warp(k_warp<C, 8, false>, 8), wm = warp(k_warp<C, 1, true, 32>, 1);
        printf("%-18s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f  %s\n", pt.name, td, tc, t4, t8, w1, w2x, w2,
               w4, w8, wm, same ? "yes" : "NO");
        auto cols = [&](auto kern, int k) {
            const long long tpr = ((C + k - 1) / k + 31) / 32 * 32;
            const float t = median_us([&] { kern<<<(unsigned)((n * tpr + 255) / 256), 256>>>(n, dy1, drp, dcol, drowf, dcolf, dx); });
            check();
            return t;
        };
        const float c2 = cols(k_cols<C, 2, 4>, 2), c4 = cols(k_cols<C, 4, 4>, 4), c8 = cols(k_cols<C, 8, 2>, 8),
                    c4u8 = cols(k_cols<C, 4, 8>, 4), c16 = cols(k_cols<C, 16, 1>, 16);
        printf("%-18s  dense x2 %.2f  x4 %.2f  x8 %.2f  x4u8 %.2f  x16 %.2f  %s\n", pt.name, c2, c4, c8, c4u8, c16,
               same ? "yes" : "NO");
        const float p1 = cols(k_pipe<C, 1, 8>, 1), p1u = cols(k_pipe<C, 1, 16>, 1), p2 = cols(k_pipe<C, 2, 8>, 2),
                    p2u = cols(k_pipe<C, 2, 16>, 2), p4 = cols(k_pipe<C, 4, 8>, 4), p8 = cols(k_pipe<C, 8, 4>, 8);
        std::vector<int> hub;
        for (long long i = 0; i < n; i++)
            if (pt.g.rp[(size_t)i + 1] - pt.g.rp[(size_t)i] > 32) hub.push_back((int)i);
        int *dhub = up(hub.empty() ? std::vector<int>{0} : hub);
        auto hyb = [&](auto kern, int k) {
            const long long tpr = ((C + k - 1) / k + 31) / 32 * 32;
            const unsigned g = (unsigned)((n * tpr + 255) / 256);
            const float t = median_us([&] { kern<<<g, 256>>>(n, dy1, drp, dcol, drowf, dcolf, dx, dhub, (int)hub.size()); });
            check();
            return t;
        };
        const float h8 = hyb(k_hybrid<C, 8, 8, 32>, 8), h8u16 = hyb(k_hybrid<C, 8, 16, 32>, 8), h6 = hyb(k_hybrid<C, 6, 8, 32>, 6),
                    h4 = hyb(k_hybrid<C, 4, 8, 32>, 4);
        printf("%-18s  hybrid x8u8 %.2f  x8u16 %.2f  x6u8 %.2f  x4u8 %.2f  (%zu long rows)  %s\n", pt.name, h8, h8u16, h6, h4,
               hub.size(), same ? "yes" : "NO");
        std::vector<int32_t> order((size_t)(n + 1) * 4);
        if (!bg_plan_row_order((const int64_t *)pt.g.rp.data(), n, 2048, order.data())) return 2;
        int32_t *dorder = up(order);
        const unsigned gw = (unsigned)((n * bg_plan_wide_threads_per_row(C) + 255) / 256);
        const float tw = median_us([&] { k_wide<C><<<gw, 256>>>(n, dy1, drp, dcol, drowf, dcolf, dx, (const int4 *)dorder); });
        check();
        printf("%-18s  staged (bspmm_wide_adjb) %.2f  %s\n", pt.name, tw, same ? "yes" : "NO");
        CK(cudaFree(dorder));
        CK(cudaFree(dhub));
        printf("%-18s  pipe x1u8 %.2f  x1u16 %.2f  x2u8 %.2f  x2u16 %.2f  x4u8 %.2f  x8u4 %.2f  %s\n", pt.name, p1, p1u, p2,
               p2u, p4, p8, same ? "yes" : "NO");
        CK(cudaFree(drp));
        CK(cudaFree(dcol));
        CK(cudaFree(drowf));
    }
    CK(cudaGetLastError());
    return 0;
}
