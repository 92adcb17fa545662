// emu_bin_test_2026-11-27.cpp - host emulation check of the pending bin_rows (docs/logs/bin_rows_pending_2026-11-27.patch)
// and of bin_csr against the old one-warp-a-word bin (ep_store_all), bit for bit.  Build as
// docs/logs/emu_csr_test_2026-11-27.cpp says.  2026-11-27: 3,600 runs, 0 differences; a mutant storing
// word w0 + (u & ~1): 1,000 of 3,600 differ.
// bin_test.cpp - host emulation: bin (bin_rows) and bin_csr against the old one-warp-a-word
// store_all bin, bit for bit, on random features (+0, -0, NaN, inf, negatives).
#include "../emu_cuda.h"
inline unsigned atomicOr(unsigned *p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicXor(unsigned *p, unsigned v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }
#include "rowwise.cuh"
#include "bin_ops.cuh"
#include <cstdint>
#include <cstdlib>
extern "C" uint32_t *bg_features_csr(const float *x, int64_t rows, int64_t width, uint64_t nnz, size_t *words);
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
using bgnn::u32;

static unsigned long long rs = 12345;
static u32 rnd() { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (u32)(rs >> 11); }
static float rval() {
    u32 u = rnd() % 100;
    if (u < 3) return NAN;
    if (u < 5) return -NAN;
    if (u < 7) return INFINITY;
    if (u < 9) return -INFINITY;
    if (u < 15) return -0.0f;
    return ((int)(rnd() % 2001) - 1000) / 250.0f;
}
static long fails, runs;

template <long long C>
static void one(long long R, int pct, unsigned grid, unsigned block) {
    std::vector<float> x((size_t)(R * C));
    for (auto &v : x) v = (int)(rnd() % 100) < pct ? rval() : 0.0f;
    if (R > 2) for (long long c = 0; c < C; c++) x[(size_t)(C + c)] = 0.0f;
    uint64_t nnz = 0;
    for (float v : x) { u32 u; memcpy(&u, &v, 4); nnz += u != 0u; }
    size_t words = 0;
    u32 *csr = bg_features_csr(x.data(), R, C, nnz, &words);
    std::vector<float> thr(2 * C);
    for (long long c = 0; c < C; c++) {
        thr[c] = rnd() % 4 == 0 ? 0.0f : rnd() % 4 == 1 ? -0.0f : rval();
        thr[C + c] = rnd() % 2 ? 1.0f : 0.0f;
    }
    constexpr long long CW = (C + 31) / 32;
    for (int th = 0; th < 2; th++) {
        std::vector<u32> ref((size_t)(R * CW), 0u), bn((size_t)(R * CW), 0xa5a5a5a5u), bs((size_t)(R * CW), 0x5a5a5a5au);
        bgnn::EpThr<C> ep{thr.data()};
        const auto elem = [&](long long r, long long c) { return x[(size_t)(r * C + c)]; };
        emu::launch(grid * 4, block, [&] {
            if (th) bgnn::ep_store_all<'B', C>(R, ref.data(), ep, elem);
            else bgnn::ep_store_all<'B', C>(R, ref.data(), bgnn::EpEnd{}, elem);
        });
        emu::launch(grid, block, [&] {
            if (th) bgnn::bin<'F', C>(R, bn.data(), x.data(), ep);
            else bgnn::bin<'F', C>(R, bn.data(), x.data());
        });
        emu::launch(grid, block, [&] {
            if (th) bgnn::bin_csr<C>(R, bs.data(), csr, ep);
            else bgnn::bin_csr<C>(R, bs.data(), csr);
        });
        runs += 2;
        if (ref != bn) { fails++; printf("bin_rows C=%lld R=%lld pct=%d thr=%d grid=%u block=%u differs\n", C, R, pct, th, grid, block); }
        if (ref != bs) { fails++; printf("bin_csr C=%lld R=%lld pct=%d thr=%d grid=%u block=%u differs\n", C, R, pct, th, grid, block); }
    }
    free(csr);
}

template <long long C>
static void shapes() {
    const long long rows[] = {1, 3, 33, 300};
    const int pcts[] = {0, 2, 10, 50, 100};
    const unsigned cfg[][2] = {{1, 32}, {2, 64}, {3, 256}, {64, 256}, {1, 96}};
    for (long long R : rows)
        for (int p : pcts)
            for (auto &g : cfg) one<C>(R, p, g[0], g[1]);
}

int main(int argc, char **argv) {
    if (argc > 1) rs = strtoull(argv[1], nullptr, 10);
    shapes<1>();
    shapes<7>();
    shapes<31>();
    shapes<32>();
    shapes<33>();
    shapes<64>();
    shapes<100>();
    shapes<1433>();
    shapes<300>();
    printf("%ld runs, %ld differ\n", runs, fails);
    return fails != 0;
}
