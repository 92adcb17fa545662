// emu_csr_test_2026-11-27.cpp - host emulation check of templates/bin_ops.cuh bin_csr and the pending
// absmean_csr (docs/logs/absmean_csr_pending_2026-11-27.patch) against the dense bin / absmean templates,
// bit for bit.  Build against the emulator of docs/logs/emu_harness_2026-11-27.tgz (unpacked in DIR):
//   g++ -std=c++20 -O2 -ffp-contract=off -fno-fast-math -pthread -Wno-unknown-pragmas -I<templates> -c this.cpp
//   gcc -std=c11 -O2 -c plan/features_csr.c -Iplan -Ibase -Iloaders -Iinclude -o fcsr.o
//   g++ -pthread this.o DIR/emu_rt.fib.o DIR/emu_swap.o fcsr.o -o csr_test && ./csr_test [seed]
// (the #include of ../emu_cuda.h: DIR/emu_cuda.h).  2026-11-27: 4,800 runs, 0 differences; a mutant
// whose rank ignores the earlier words: 136 of 600 runs differ.
// csr_test.cpp - host emulation: bin_csr / absmean_csr (templates of /tmp/wt-am) against the
// dense bin / absmean templates, bit for bit, on random features (+0, -0, NaN, inf, negatives).
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
    if (R > 2) for (long long c = 0; c < C; c++) x[(size_t)(C + c)] = 0.0f; // an empty row
    uint64_t nnz = 0;
    for (float v : x) { u32 u; memcpy(&u, &v, 4); nnz += u != 0u; }
    size_t words = 0;
    u32 *csr = bg_features_csr(x.data(), R, C, nnz, &words);
    if (!csr) { printf("csr failed\n"); fails++; return; }
    std::vector<float> mean(C), var(C), thr(2 * C);
    for (long long c = 0; c < C; c++) {
        mean[c] = rnd() % 5 == 0 ? 0.0f : rval();
        var[c] = rnd() % 7 == 0 ? -1.0f : (float)(rnd() % 1000) / 100.0f; // some NaN inverses
        thr[c] = rnd() % 4 == 0 ? 0.0f : rnd() % 4 == 1 ? -0.0f : rval();
        thr[C + c] = rnd() % 2 ? 1.0f : 0.0f;
    }
    constexpr long long CW = (C + 31) / 32;
    // absmean: ProNone and ProBn, lanes(32) and seq, TABLE both
    for (int pro = 0; pro < 2; pro++)
        for (int lanes = 0; lanes < 2; lanes++) {
            std::vector<float> yd((size_t)R, 7.0f), ys((size_t)R, 9.0f);
            bgnn::ProBn<0x3727c5acu, false, false> bn{mean.data(), var.data(), nullptr, nullptr};
            emu::launch(grid, block, [&] {
                if (pro) {
                    if (lanes) bgnn::absmean<C, 32, true>(R, yd.data(), x.data(), bn);
                    else bgnn::absmean<C, 0, false>(R, yd.data(), x.data(), bn);
                } else {
                    if (lanes) bgnn::absmean<C, 32, false>(R, yd.data(), x.data(), bgnn::ProNone{});
                    else bgnn::absmean<C, 0, true>(R, yd.data(), x.data(), bgnn::ProNone{});
                }
            });
            emu::launch(grid, block, [&] {
                if (pro) {
                    if (lanes) bgnn::absmean_csr<C, 32>(R, ys.data(), csr, bn);
                    else bgnn::absmean_csr<C, 0>(R, ys.data(), csr, bn);
                } else {
                    if (lanes) bgnn::absmean_csr<C, 32>(R, ys.data(), csr, bgnn::ProNone{});
                    else bgnn::absmean_csr<C, 0>(R, ys.data(), csr, bgnn::ProNone{});
                }
            });
            runs++;
            if (memcmp(yd.data(), ys.data(), (size_t)R * 4) != 0) {
                fails++;
                long long r = 0;
                while (memcmp(&yd[r], &ys[r], 4) == 0) r++;
                printf("absmean C=%lld R=%lld pct=%d pro=%d lanes=%d grid=%u block=%u: row %lld %a vs %a\n", C, R, pct, pro,
                       lanes, grid, block, r, yd[r], ys[r]);
            }
        }
    // bin: EpEnd and EpThr
    for (int th = 0; th < 2; th++) {
        std::vector<u32> bd((size_t)(R * CW), 0u), bs((size_t)(R * CW), 0x5a5a5a5au);
        bgnn::EpThr<C> ep{thr.data()};
        emu::launch(grid * 4, block, [&] {
            if (th) bgnn::bin<'F', C>(R, bd.data(), x.data(), ep);
            else bgnn::bin<'F', C>(R, bd.data(), x.data());
        });
        emu::launch(grid, block, [&] {
            if (th) bgnn::bin_csr<C>(R, bs.data(), csr, ep);
            else bgnn::bin_csr<C>(R, bs.data(), csr);
        });
        runs++;
        if (bd != bs) {
            fails++;
            size_t i = 0;
            while (bd[i] == bs[i]) i++;
            printf("bin C=%lld R=%lld pct=%d thr=%d: word %zu %08x vs %08x\n", C, R, pct, th, i, bd[i], bs[i]);
        }
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
    printf("%ld runs, %ld differ\n", runs, fails);
    return fails != 0;
}
