// emu_absmean_mean_test_2026-11-29.cpp - host emulation check of templates/rowwise.cuh absmean with a
// batchnorm prologue and TABLE (the block's column inverses and, up to ABSMEAN_MEAN_MAX columns, means
// staged in shared memory) against the same template without TABLE (every element's inverse and mean
// from global memory), bit for bit, lanes(32) and seq, gamma / beta or not, on random features (+0,
// -0, NaN, inf), means and variances (some negative: NaN inverses).  Build with the emulator of
// docs/logs/emu_harness_2026-11-27.tgz (emu_cuda.h one directory up):
//   g++ -std=c++20 -O2 -ffp-contract=off -fno-fast-math -pthread -Wno-unknown-pragmas -Itemplates -c this.cpp
//   g++ -pthread this.o emu_rt.o emu_swap.o -o am_test && ./am_test [seed]
// 2026-11-29, for docs/logs/absmean_mean_staged_pending_2026-11-29.patch: seeds 1 and 2, 1,008 runs each
// (C 1, 31, 33, 100, 1433, 4096, 4097), 0 differences; a mutant staging column c - 1's mean: 360 of 1,008.
#include "../emu_cuda.h"
#include "emu_prelude.h" // docs/logs/emu_prelude.h: the shims this test had inline (build with -Idocs/logs)
#include "rowwise.cuh"
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
static unsigned long long rs = 12345;
static unsigned rnd() { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (unsigned)(rs >> 11); }
static int special = 1; // NaN and infinities among the values (most rows' sums then NaN): half the runs
static float rval() {
    const unsigned u = rnd() % 100;
    if (special && u < 2) return NAN;
    if (special && u < 3) return INFINITY;
    if (special && u < 4) return -INFINITY;
    if (u < 12) return -0.0f;
    if (u < 30) return 0.0f;
    return ((int)(rnd() % 2001) - 1000) / 97.0f;
}
static long runs, fails;
template <long long C, bool HG, bool HB>
static void one(long long R, unsigned grid, unsigned block) {
    std::vector<float> x((size_t)(R * C)), mean(C), var(C), gam(C), bet(C);
    for (auto &v : x) v = rval();
    for (long long c = 0; c < C; c++) {
        mean[c] = rnd() % 5 == 0 ? 0.0f : rval();
        var[c] = special && rnd() % 7 == 0 ? -1.0f : (float)(rnd() % 1000) / 100.0f;
        gam[c] = rval(), bet[c] = rval();
    }
    bgnn::ProBn<0x3727c5acu, HG, HB> bn{mean.data(), var.data(), gam.data(), bet.data()};
    for (int lanes = 0; lanes < 2; lanes++) {
        std::vector<float> yt((size_t)R, 7.0f), yp((size_t)R, 9.0f);
        emu::launch(grid, block, [&] {
            if (lanes) bgnn::absmean<C, 32, true>(R, yt.data(), x.data(), bn);
            else bgnn::absmean<C, 0, true>(R, yt.data(), x.data(), bn);
        });
        emu::launch(grid, block, [&] {
            if (lanes) bgnn::absmean<C, 32, false>(R, yp.data(), x.data(), bn);
            else bgnn::absmean<C, 0, false>(R, yp.data(), x.data(), bn);
        });
        runs++;
        for (long long r = 0; r < R; r++) {
            const float a = yt[r], b = yp[r];
            if (std::isnan(a) && std::isnan(b)) continue;
            if (memcmp(&a, &b, 4)) {
                fails++;
                printf("C=%lld R=%lld lanes=%d HG=%d HB=%d grid=%u block=%u row %lld: %a vs %a\n", C, R, lanes, HG, HB, grid, block, r, a, b);
                break;
            }
        }
    }
}
template <long long C>
static void shapes() {
    const long long rows[] = {1, 3, 40};
    const unsigned cfg[][2] = {{1, 32}, {2, 64}, {3, 256}, {9, 256}};
    for (int sp = 0; sp < 2; sp++)
    for (long long R : rows)
        for (auto &g : cfg) {
            special = sp;
            one<C, false, false>(R, g[0], g[1]);
            one<C, true, true>(R, g[0], g[1]);
            one<C, true, false>(R, g[0], g[1]);
        }
}
int main(int argc, char **argv) {
    if (argc > 1) rs = strtoull(argv[1], nullptr, 10);
    shapes<1>(), shapes<31>(), shapes<33>(), shapes<100>(), shapes<1433>(), shapes<4096>(), shapes<4097>();
    printf("%ld runs, %ld differ\n", runs, fails);
    return fails != 0;
}
