// emu_std_outs_test_2026-11-30.cpp - host emulation check of rowwise.cuh StdRowOut: the bin and
// absmean that standardize_csr writes beside each standardized row (a row group's `bin %s` and
// `absmean %s` of its sparse standardize %s, cg_rows.c std_outs), in both forms (STAGE = false:
// csr_lanes_load's registers; true: the warp's row in shared memory), against the dense ops they
// stand for, bit for bit: standardize<C, eps, 32> of X, then bin<'F', C> (EpEnd) and
// absmean<C, 32> (no prologue) of that result, every output word (padding bits too) and every
// float.  Random sparse features X (+0, -0, NaN, inf; rows that store column 0, rows of columns
// 0..k, full rows, empty rows, constant rows: their x - mu of 0 takes the redo with the
// divisions) and X's CSR block from plan/features_csr.c; grids of 1, 3 and 64 blocks of 256;
// C from 2 to 2,048 (1,473 and up past the stage's 46 KB: the register form), each output alone
// or both.  Build with the emulator of docs/logs/emu_harness_2026-11-27.tgz (DIR = its
// spmm_bits/; emu_rt.fib.o and emu_swap.o as its Makefile builds them):
//   g++ -std=c++20 -O2 -ffp-contract=off -fno-fast-math -pthread -Wno-unknown-pragmas -Itemplates -Idocs/logs -DEMU_H='"DIR/emu_cuda.h"' -c this.cpp
//   gcc -std=c11 -O2 -c plan/features_csr.c -Iplan -Ibase -Iloaders -Iinclude -o fcsr.o
//   g++ -pthread this.o DIR/emu_rt.fib.o DIR/emu_swap.o fcsr.o -o std_outs_test && ./std_outs_test [seed] [mutant]
// mutant 1: the bit of a value by v >= 0 (not bin's rule where the two differ: -0, NaN).
// 2026-11-30 (6f749e3): seed 1, 96 runs (6,162 rows of one value), 0 differ; seed 2, 96 runs
// (6,096), 0 differ.  Mutant 1: 60 of 96 runs differ (the other 36 write the absmean alone, or
// have no -0 or NaN in the bits' rows).
#include EMU_H
#include "emu_prelude.h" // docs/logs/emu_prelude.h
#include "emu_random.h"  // docs/logs/emu_random.h
#include "rowwise.cuh"
#include "bin_ops.cuh"
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using bgnn::u32;

static long fails, runs, redo_rows, mutant;

// mutant 1 as an Out: StdRowOut's code with the bit rule changed
template <long long C>
struct MutOut {
    static constexpr bool active = true;
    u32 *bits;
    float *am;
    template <long long CC>
    __device__ __forceinline__ void row(int lane, long long r, const float (&v)[(CC + 31) / 32]) const {
        constexpr int NI = (int)((C + 31) / 32);
        u32 w0 = 0u, w1 = 0u;
        for (int i = 0; i < NI; i++) {
            const long long c = lane + 32LL * i;
            const u32 word = __ballot_sync(0xffffffffu, c < C && v[i] >= 0.0f);
            if (lane == (i & 31)) (i < 32 ? w0 : w1) = word;
        }
        if (bits && lane < NI) bits[r * NI + lane] = w0;
        if (bits && lane + 32 < NI) bits[r * NI + lane + 32] = w1;
        const double s = bgnn::warp_lanes_sum_regs<C>(lane, v, bgnn::AbsDouble{});
        if (am && lane == 0) am[r] = __double2float_rn(bgnn::div_by_cols<C>(s));
    }
};

template <class T>
static long long differ(const std::vector<T> &a, const std::vector<T> &b, const char *what) {
    long long bad = 0;
    for (size_t k = 0; k < a.size(); k++)
        if (memcmp(&a[k], &b[k], sizeof(T)) != 0) {
            if (!bad) printf("  %s: first at %zu\n", what, k);
            bad++;
        }
    return bad;
}

template <long long C, bool STAGE>
static long long check_form(long long n, unsigned grid, const u32 *blk, const std::vector<float> &d,
                            const std::vector<u32> &bref, const std::vector<float> &aref, int which) {
    constexpr long long W = bgnn::words_of(C);
    std::vector<float> y((size_t)(n * C), -8.0f), am((size_t)n, -3.0f);
    std::vector<u32> bits((size_t)(n * W), 0xdeadbeefu);
    u32 *bp = which & 1 ? bits.data() : nullptr;
    float *ap = which & 2 ? am.data() : nullptr;
    if (mutant == 1)
        emu::launch(grid, 256, [&] {
            bgnn::standardize_csr<C, 0x38d1b717u, 32, STAGE>(n, y.data(), bgnn::csr_rows(blk, n), MutOut<C>{bp, ap});
        });
    else
        emu::launch(grid, 256, [&] {
            bgnn::standardize_csr<C, 0x38d1b717u, 32, STAGE>(n, y.data(), bgnn::csr_rows(blk, n),
                                                             bgnn::StdRowOut<C>{bp, ap});
        });
    long long bad = 0;
    for (size_t k = 0; k < y.size(); k++) // the standardized row itself, NaN payloads alike
        bad += memcmp(&y[k], &d[k], 4) != 0 && !(std::isnan(y[k]) && std::isnan(d[k]));
    if (which & 1) bad += differ(bits, bref, STAGE ? "bits (stage)" : "bits (registers)");
    if (which & 2) bad += differ(am, aref, STAGE ? "absmean (stage)" : "absmean (registers)");
    if (!(which & 1)) bad += differ(bits, std::vector<u32>(bits.size(), 0xdeadbeefu), "bits written though null");
    if (!(which & 2)) bad += differ(am, std::vector<float>(am.size(), -3.0f), "absmean written though null");
    return bad;
}

template <long long C>
static void one(long long n, int pct, unsigned grid) {
    constexpr long long W = bgnn::words_of(C);
    const std::vector<float> X = emu_sparse_features(n, C, pct, 8, true); // emu_random.h
    u32 *blk = emu_features_csr(X, n, C); // emu_random.h
    if (!blk) { printf("bg_features_csr failed\n"); fails++; return; }
    std::vector<float> d((size_t)(n * C), -7.0f), aref((size_t)n, -5.0f);
    std::vector<u32> bref((size_t)(n * W), 0xabcdef01u);
    emu::launch(8, 256, [&] { bgnn::standardize<C, 0x38d1b717u, 32>(n, d.data(), X.data()); });
    emu::launch(8, 256, [&] { bgnn::bin<'F', C>(n, bref.data(), d.data()); });
    emu::launch(8, 256, [&] { bgnn::absmean<C, 32, false>(n, aref.data(), d.data(), bgnn::ProNone{}); });
    redo_rows += emu_constant_rows(X, n, C); // rows whose every value is the same: the redo
    const int which = 1 + (int)(runs % 3); // bits, absmean, both
    runs++;
    const long long b1 = check_form<C, false>(n, grid, blk, d, bref, aref, which);
    const long long b2 = check_form<C, true>(n, grid, blk, d, bref, aref, which);
    if (b1 || b2) {
        fails++;
        printf("C=%lld n=%lld pct=%d grid=%u outputs=%d: %lld (registers) and %lld (stage) differ\n", C, n, pct, grid, which,
               b1, b2);
    }
    free(blk);
}

int main(int argc, char **argv) {
    emu_seed(argc, argv);
    mutant = argc > 2 ? atol(argv[2]) : 0;
    emu_csr_sweep<2, 7, 33, 300, 1433, 1473, 2000, 2048>([]<long long C>(long long n, int pct, unsigned grid) { one<C>(n, pct, grid); });
    printf("%ld runs (%ld constant rows), %ld differ%s\n", runs, redo_rows, fails, mutant ? " (mutant)" : "");
    return fails != 0;
}
