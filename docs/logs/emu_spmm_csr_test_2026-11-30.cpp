// emu_spmm_csr_test_2026-11-30.cpp - host emulation check of bench/kernels/spmm_csr.cuh bspmm_csr_adjb
// (the sparse variant of a float aggregation of standardized sparse features) against the dense
// template it replaces, spmm.cuh bspmm_adjb<'F', 'F', C, UNIT, 0>, bit for bit, over x =
// rowwise.cuh standardize<C, eps, 32> of random sparse features X (+0, -0, NaN, inf; rows that
// store column 0, rows that store columns 0..k, full rows, empty rows) and X's CSR block from
// plan/features_csr.c.  Graphs: isolated nodes, short rows, a hub of 600 edges (three windows),
// a row whose neighbours' entries overflow the list, unit and random colf / rowf; grids of 1, 3
// and 64 blocks.  Build with the emulator of docs/logs/emu_harness_2026-11-27.tgz (DIR = its
// spmm_bits/; emu_rt.fib.o and emu_swap.o as its Makefile builds them):
//   g++ -std=c++20 -O2 -ffp-contract=off -fno-fast-math -pthread -Wno-unknown-pragmas -I<templates> -Ibench/kernels -Idocs/logs -DEMU_H='"DIR/emu_cuda.h"' -c this.cpp
//   gcc -std=c11 -O2 -c plan/features_csr.c -Iplan -Ibase -Iloaders -Iinclude -o fcsr.o
//   g++ -pthread this.o DIR/emu_rt.fib.o DIR/emu_swap.o fcsr.o -o spmm_csr_test && ./spmm_csr_test [seed]
// 2026-11-30: seed 1, 324 runs (C 1, 7, 33, 300, 1433, 2000), 0 differences; mutants: the fill term
// of a row that stores column 0 left at column 0's: 205 of 324 differ; the step's edge search
// one entry late: 228 of 324.
#include EMU_H
#include "emu_prelude.h" // docs/logs/emu_prelude.h
#include "emu_random.h"  // docs/logs/emu_random.h
#include "rowwise.cuh"
#include "spmm.cuh"
#include "spmm_csr.cuh"
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using bgnn::u32;

static float rval() { return emu_rval(10, 10); }
static long fails, runs;
static bool same(const std::vector<float> &a, const std::vector<float> &b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++)
        if (!(std::isnan(a[i]) && std::isnan(b[i])) && memcmp(&a[i], &b[i], 4) != 0) return false;
    return true;
}

struct Graph { std::vector<long long> rp; std::vector<int> col; };
// kind 0: short rows and isolated nodes; 1: + a hub of 600 edges; 2: + a row of 40 dense neighbours
static Graph graph(long long n, int kind) {
    Graph g;
    g.rp.push_back(0);
    for (long long i = 0; i < n; i++) {
        long long d = rnd() % 5 == 0 ? 0 : rnd() % 9;
        if (kind == 1 && i == n / 2) d = 600;
        if (kind == 2 && i == 1) d = 40;
        std::vector<int> nb;
        for (long long k = 0; k < d; k++) nb.push_back(kind == 2 && i == 1 ? (int)(k % 3) : (int)(rnd() % n));
        std::sort(nb.begin(), nb.end());
        for (int j : nb) g.col.push_back(j);
        g.rp.push_back((long long)g.col.size());
    }
    return g;
}

template <long long C>
static void one(long long n, int kind, int pct, bool unit, unsigned grid) {
    Graph g = graph(n, kind);
    const std::vector<float> X = emu_sparse_features(n, C, pct, 6, false); // emu_random.h
    u32 *blk = emu_features_csr(X, n, C); // emu_random.h
    if (!blk) { printf("bg_features_csr failed\n"); fails++; return; }
    std::vector<float> x((size_t)(n * C));
    emu::launch(8, 256, [&] { bgnn::standardize<C, 0x38d1b717u, 32>(n, x.data(), X.data()); });
    std::vector<float> rowf(n), colf(n);
    for (long long i = 0; i < n; i++) {
        rowf[i] = unit ? 1.0f / (float)(g.rp[i + 1] - g.rp[i] ? g.rp[i + 1] - g.rp[i] : 1) : rval();
        colf[i] = unit ? 1.0f : rval();
    }
    std::vector<float> a((size_t)(n * C), -7.0f), b((size_t)(n * C), -9.0f);
    emu::launch(16, 256, [&] { bgnn::bspmm_adjb<'F', 'F', C, true, 0>(n, a.data(), g.rp.data(), g.col.data(), rowf.data(), colf.data(), x.data()); });
    emu::launch(grid, 256, [&] { bgnn::bspmm_csr_adjb<'F', C>(n, b.data(), g.rp.data(), g.col.data(), rowf.data(), colf.data(), x.data(), bgnn::csr_rows(blk, n)); });
    runs++;
    if (!same(a, b)) {
        fails++;
        long long bad = 0;
        for (size_t k = 0; k < a.size(); k++) if (!(std::isnan(a[k]) && std::isnan(b[k])) && memcmp(&a[k], &b[k], 4)) { if (!bad) printf("  first at row %lld col %lld: %a vs %a\n", (long long)(k / C), (long long)(k % C), a[k], b[k]); bad++; }
        printf("C=%lld n=%lld kind=%d pct=%d unit=%d grid=%u: %lld differ\n", C, n, kind, pct, unit, grid, bad);
    }
    free(blk);
}

template <long long C>
static void all() {
    const unsigned grids[] = {1, 3, 64};
    for (int kind = 0; kind < 3; kind++)
        for (int pct : {1, 5, 30})
            for (int unit = 0; unit < 2; unit++)
                for (unsigned gr : grids) one<C>(kind == 1 ? 700 : 37, kind, pct, unit, gr);
}

int main(int argc, char **argv) {
    emu_seed(argc, argv);
    all<1>();
    all<7>();
    all<33>();
    all<300>();
    all<1433>();
    all<2000>();
    printf("%ld runs, %ld differ\n", runs, fails);
    return fails != 0;
}
