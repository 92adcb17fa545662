// emu_std_csr_test_2026-11-30.cpp - host emulation check of rowwise.cuh standardize_csr in both
// forms (STAGE = false: csr_lanes_load's registers; true: the warp's row in shared memory,
// csr_row_stage) against the dense standardize<C, eps, 32> it stands for, bit for bit, on random
// sparse features X (+0, -0, NaN, inf; rows that store column 0, rows of columns 0..k, full rows,
// empty rows, constant rows: their x - mu of 0 takes the redo with the divisions) and X's CSR block
// from plan/features_csr.c; grids of 1, 3 and 64 blocks of 256.  Build with the emulator of
// docs/logs/emu_harness_2026-11-27.tgz (DIR = its spmm_bits/; emu_rt.fib.o and emu_swap.o as its
// Makefile builds them):
//   g++ -std=c++20 -O2 -ffp-contract=off -fno-fast-math -pthread -Wno-unknown-pragmas -Itemplates -Idocs/logs -DEMU_H='"DIR/emu_cuda.h"' -c this.cpp
//   gcc -std=c11 -O2 -c plan/features_csr.c -Iplan -Ibase -Iloaders -Iinclude -o fcsr.o
//   g++ -pthread this.o DIR/emu_rt.fib.o DIR/emu_swap.o fcsr.o -o std_csr_test && ./std_csr_test [seed]
// 2026-11-30 (399dc34): seed 1, 84 runs (C 2, 7, 33, 300, 1433, 1473 and 2000: the last two past the
// stage's 46 KB, so the register form), 5,785 rows of one value, 0 differences.  Mutant: the
// value pass's fill +0 instead of the row's value of +0: 43 of 84 runs differ.  A missing
// __syncwarp between the statistics' reads of the row and its second fill is not seen here (the
// statistics' shuffles order the emulated lanes); racecheck on the GPU checks the stage.
#include EMU_H
#include "emu_prelude.h" // docs/logs/emu_prelude.h
#include "emu_random.h"  // docs/logs/emu_random.h
#include "rowwise.cuh"
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using bgnn::u32;

static long fails, runs, redo_rows;
static long long differ(const std::vector<float> &a, const std::vector<float> &b, long long C, const char *what) {
    long long bad = 0;
    for (size_t k = 0; k < a.size(); k++)
        if (!(std::isnan(a[k]) && std::isnan(b[k])) && memcmp(&a[k], &b[k], 4) != 0) {
            if (!bad) printf("  %s: first at row %lld col %lld: %a vs %a\n", what, (long long)(k / C), (long long)(k % C), a[k], b[k]);
            bad++;
        }
    return bad;
}

template <long long C>
static void one(long long n, int pct, unsigned grid) {
    const std::vector<float> X = emu_sparse_features(n, C, pct, 8, true); // emu_random.h
    u32 *blk = emu_features_csr(X, n, C); // emu_random.h
    if (!blk) { printf("bg_features_csr failed\n"); fails++; return; }
    std::vector<float> d((size_t)(n * C), -7.0f), r((size_t)(n * C), -8.0f), s((size_t)(n * C), -9.0f);
    emu::launch(8, 256, [&] { bgnn::standardize<C, 0x38d1b717u, 32>(n, d.data(), X.data()); });
    emu::launch(grid, 256, [&] { bgnn::standardize_csr<C, 0x38d1b717u, 32, false>(n, r.data(), bgnn::csr_rows(blk, n)); });
    emu::launch(grid, 256, [&] { bgnn::standardize_csr<C, 0x38d1b717u, 32, true>(n, s.data(), bgnn::csr_rows(blk, n)); });
    redo_rows += emu_constant_rows(X, n, C); // rows whose every value is the same: the redo
    runs++;
    const long long b1 = differ(d, r, C, "registers"), b2 = differ(d, s, C, "stage");
    if (b1 || b2) {
        fails++;
        printf("C=%lld n=%lld pct=%d grid=%u: %lld (registers) and %lld (stage) differ\n", C, n, pct, grid, b1, b2);
    }
    free(blk);
}

int main(int argc, char **argv) {
    emu_seed(argc, argv);
    emu_csr_sweep<2, 7, 33, 300, 1433, 1473, 2000>([]<long long C>(long long n, int pct, unsigned grid) { one<C>(n, pct, grid); });
    printf("%ld runs (%ld constant rows), %ld differ\n", runs, redo_rows, fails);
    return fails != 0;
}
