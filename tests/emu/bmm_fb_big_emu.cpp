// bmm_fb_big_emu.cpp - templates/bmm_fb_big.cuh run on the host: each block as 256 std::threads
// with a std::barrier for __syncthreads (tests/emu/shim: the few CUDA built-ins and bgnn helpers
// it uses), its outputs compared bit for bit with the k-ordered fmaf sum (the same prologue,
// the same +-1 / f32 weights) on awkward shapes (K = 5, 16, 17, 100, 384, 602; M = 128, 129,
// 130, 160, 256, 288; rows 1, 5, 128, 129, 300 over 1 or 2 blocks), every BN mode, b1 and f32
// outputs, specials (NaN, +-Inf, +-0, subnormals) and products that underflow to -0 (the case
// that showed +0 weight padding wrong).  No GPU needed; ASan/UBSan and TSan builds check the
// kernel's indexing and its barriers (a stage moved past its barrier is reported).  CTest runs
// it as unit.bmm_fb_big_emu (tests/CMakeLists.txt copies the template beside the shims, since it
// includes them by quoted name); by hand:
//   d=$(mktemp -d); cp tests/emu/shim/*.cuh templates/bmm_fb_big.cuh $d
//   g++ -std=c++20 -O1 -pthread -I$d tests/emu/bmm_fb_big_emu.cpp -o emu && ./emu   (exit 0: all ok)
// Written by a review in session 36; on the GPU since session 37 (variants 3 and 7, every mode).
#include "bmm_fb_big.cuh"
#include <vector>
#include <thread>
#include <random>
#include <cstdio>
#include <memory>
#include <cstdlib>
thread_local Dim3 threadIdx, blockIdx;
Dim3 gridDim;
thread_local std::barrier<> *g_bar;
using namespace bgnn;
static std::mt19937 rng(12345);
static int g_fail = 0;
constexpr size_t FBT_SIZE = 35584;
static_assert(sizeof(FbgSmem) <= FBT_SIZE, "size");

static float rnd(int mode) {
    std::uniform_real_distribution<float> u(-2.f, 2.f);
    if (mode == 0) return u(rng);
    if (mode == 1) { // specials
        static const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, -1e-40f};
        const unsigned c = rng() % 40;
        return c < sizeof special / sizeof special[0] ? special[c] : u(rng);
    }
    // mode 2: tiny positive (x) - products underflow
    return 1e-23f;
}

template <char Z, long long K, long long M, int BN, char Y>
void run(long long rows, unsigned grid, int mode) {
    const unsigned EPS = 0x3727c5acu; // 1e-5
    const long long MW = words_of(M);
    std::vector<float> x(rows * K > 0 ? rows * K : 1);
    for (auto &v : x) v = rnd(mode);
    std::vector<u32> wb(K * MW);
    for (auto &v : wb) v = rng();
    std::vector<float> wf(K * M);
    for (auto &v : wf) v = mode == 2 ? -1e-23f : rnd(mode == 1 ? 1 : 0);
    std::vector<float> mean(K), var(K), gam(K), bet(K);
    for (long long k = 0; k < K; k++) { mean[k] = rnd(0); var[k] = std::fabs(rnd(0)); gam[k] = rnd(0); bet[k] = rnd(0); }
    if (mode == 2) for (long long k = 0; k < K; k++) { mean[k] = BN == 5 ? 1.0f : 0.0f; var[k] = 1.0f; gam[k] = 1.0f; bet[k] = 0.0f; }
    const void *wv = Y == 'B' ? (const void *)wb.data() : (const void *)wf.data();
    // reference
    const float eps = f32_from_bits(EPS);
    std::vector<float> yref(rows * M);
    for (long long r = 0; r < rows; r++)
        for (long long o = 0; o < M; o++) {
            float acc = 0.0f;
            for (long long k = 0; k < K; k++) {
                float v = x[r * K + k];
                if (BN == 5) v = fmul(v, mean[k]);
                else if (BN > 0) {
                    float inv = fdiv(1.0f, fsqrt(fadd(var[k], eps)));
                    v = fmul(fsub(v, mean[k]), inv);
                    if (BN == 2 || BN == 4) v = fmul(v, gam[k]);
                    if (BN == 3 || BN == 4) v = fadd(v, bet[k]);
                }
                float w = Y == 'B' ? pm1((wb[k * MW + (o >> 5)] >> (o & 31)) & 1u) : wf[k * M + o];
                acc = __fmaf_rn(v, w, acc);
            }
            yref[r * M + o] = acc;
        }
    const size_t ny = Z == 'F' ? rows * M : rows * MW;
    std::vector<u32> y(ny ? ny : 1, 0xABABABABu);
    std::vector<std::unique_ptr<std::barrier<>>> bars;
    std::vector<void *> smems;
    for (unsigned b = 0; b < grid; b++) { bars.emplace_back(new std::barrier<>(256)); smems.push_back(aligned_alloc(16, FBT_SIZE)); memset(smems.back(), 0x5a, FBT_SIZE); }
    gridDim = {grid, 1, 1};
    std::vector<std::thread> th;
    for (unsigned b = 0; b < grid; b++)
        for (unsigned t = 0; t < 256; t++)
            th.emplace_back([&, b, t] {
                threadIdx = {t, 0, 0}; blockIdx = {b, 0, 0}; g_bar = bars[b].get();
                bmm_fb_big<Z, K, M, BN, EPS, Y>(*reinterpret_cast<FbgSmem *>(smems[b]), rows, y.data(), x.data(), wv,
                    mean.data(), var.data(), gam.data(), bet.data(), EpEnd{});
            });
    for (auto &t : th) t.join();
    for (auto p : smems) free(p);
    long long bad = 0, badsign = 0;
    if (Z == 'F') {
        for (long long i = 0; i < rows * M; i++) {
            u32 a = y[i], e = f2u(yref[i]);
            bool nan_both = std::isnan(u2f(a)) && std::isnan(yref[i]);
            if (a != e && !nan_both) { bad++; if ((a ^ e) == 0x80000000u) badsign++; }
        }
    } else {
        for (long long r = 0; r < rows; r++)
            for (long long d = 0; d < MW; d++) {
                u32 e = 0;
                for (int b = 0; b < 32; b++) { long long o = d * 32 + b; if (o < M && bit_of(yref[r * M + o])) e |= 1u << b; }
                if (y[r * MW + d] != e) { bad++; if (mode == 2) badsign++; }
            }
    }
    printf("Z=%c K=%lld M=%lld BN=%d Y=%c rows=%lld grid=%u mode=%d: %s (%lld bad, %lld sign-only)\n", Z, K, M, BN, Y, rows, grid, mode,
           bad ? "MISMATCH" : "ok", bad, badsign);
    if (bad) g_fail++;
}

template <char Z, long long K, long long M, int BN, char Y>
void shapes(int mode) {
    const long long rs[] = {1, 5, 128, 129, 300};
    for (long long r : rs) run<Z, K, M, BN, Y>(r, r == 300 ? 2 : 1, mode);
}
int main(int argc, char **argv) {
    int sel = argc > 1 ? atoi(argv[1]) : 0;
    if (sel == 0 || sel == 1) {
    shapes<'F', 100, 130, 0, 'B'>(0); shapes<'B', 100, 130, 0, 'B'>(0);
    shapes<'F', 602, 128, 0, 'F'>(0); shapes<'B', 384, 288, 0, 'F'>(0);
    shapes<'B', 602, 128, 4, 'B'>(1); shapes<'F', 100, 130, 5, 'B'>(1);
    shapes<'F', 17, 129, 1, 'F'>(1); shapes<'B', 5, 256, 2, 'B'>(0); shapes<'F', 16, 160, 3, 'F'>(1);
    }
    if (sel == 0 || sel == 2) {
    run<'F', 602, 128, 0, 'F'>(5, 1, 2); run<'B', 602, 128, 0, 'F'>(5, 1, 2);
    run<'F', 100, 130, 5, 'F'>(5, 1, 2); run<'F', 384, 288, 0, 'F'>(5, 1, 2);
    run<'F', 100, 130, 0, 'B'>(5, 1, 2);
    }
    printf("%d failing\n", g_fail);
    return g_fail != 0;
}
