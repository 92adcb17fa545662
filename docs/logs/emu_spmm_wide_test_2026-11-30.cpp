// emu_spmm_wide_test_2026-11-30.cpp - host emulation check of templates/spmm.cuh bspmm_wide_adjb (the
// aggregation of wide float rows: K outputs a thread on rows of at most LONG = 32 edges, the longer
// ones a block a 32-column slice staged 64 edges at a time) against bspmm_adjb<'F', 'F', C, UNIT, 0>
// (a thread an output), bit for bit, with the work list ORDER from plan/row_order.c.  Graphs:
// isolated nodes, short rows, rows of exactly 32 and 33 edges, hubs of 64, 65 and 700 edges;
// x with NaN, inf, -0; unit and random colf / rowf; grids of 1, 3 and 64 blocks of 256 and of 1
// and 5 blocks of 96 threads (the staging's generic loop).  Build with the emulator of
// docs/logs/emu_harness_2026-11-27.tgz (DIR = its spmm_bits/):
//   g++ -std=c++20 -O2 -ffp-contract=off -fno-fast-math -pthread -Wno-unknown-pragmas -I<templates> -Idocs/logs -DEMU_H='"DIR/emu_cuda.h"' -c this.cpp
//   gcc -std=c11 -O2 -c plan/row_order.c -Iplan -Ibase -Iloaders -Iinclude -o row_order.o
//   g++ -pthread this.o DIR/emu_rt.fib.o DIR/emu_swap.o row_order.o -o spmm_wide_test && ./spmm_wide_test [seed]
// 2026-11-30: seeds 1, 2 and 3, 30 runs each (C 256, 300, 1433), 0 differences; mutants: rows of
// exactly 32 edges taken as long by the kernel but not by the work list: 30 of 30 runs differ; the
// staged adds one edge short: 29 of 30.
#include EMU_H
#include "emu_prelude.h" // docs/logs/emu_prelude.h
#include "emu_random.h"  // docs/logs/emu_random.h
#include "spmm.cuh"
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using bgnn::u32;

static long fails, runs;
static bool same(const std::vector<float> &a, const std::vector<float> &b) {
    for (size_t i = 0; i < a.size(); i++)
        if (!(std::isnan(a[i]) && std::isnan(b[i])) && memcmp(&a[i], &b[i], 4) != 0) return false;
    return true;
}

template <long long C>
static void one(long long n, bool unit, unsigned grid, unsigned block) {
    EmuWideCase w;
    if (!emu_wide_case(n, C, unit, w)) { printf("row order failed\n"); fails++; return; }
    const auto &[rp, col, order, x, rowf, colf] = w;
    std::vector<float> a((size_t)(n * C), -7.0f), b((size_t)(n * C), -9.0f);
    emu::launch(16, 256, [&] { bgnn::bspmm_adjb<'F', 'F', C, true, 0>(n, a.data(), rp.data(), col.data(), rowf.data(), colf.data(), x.data()); });
    emu::launch(grid, block, [&] {
        bgnn::bspmm_wide_adjb<C, 32>(n, b.data(), rp.data(), col.data(), rowf.data(), colf.data(), x.data(), (const int4 *)order.data());
    });
    runs++;
    if (!same(a, b)) {
        fails++;
        long long bad = 0;
        for (size_t k = 0; k < a.size(); k++)
            if (!(std::isnan(a[k]) && std::isnan(b[k])) && memcmp(&a[k], &b[k], 4)) {
                if (!bad) printf("  first at row %lld col %lld: %a vs %a\n", (long long)(k / C), (long long)(k % C), a[k], b[k]);
                bad++;
            }
        printf("C=%lld n=%lld unit=%d grid=%u block=%u: %lld differ\n", C, n, unit, grid, block, bad);
    }
}

template <long long C>
static void all() {
    const unsigned cfg[][2] = {{1, 256}, {3, 256}, {64, 256}, {1, 96}, {5, 96}};
    for (int unit = 0; unit < 2; unit++)
        for (auto &g : cfg) one<C>(C > 1000 ? 709 : 1100, unit, g[0], g[1]);
}

int main(int argc, char **argv) {
    emu_seed(argc, argv);
    all<256>();
    all<300>();
    all<1433>();
    printf("%ld runs, %ld differ\n", runs, fails);
    return fails != 0;
}
