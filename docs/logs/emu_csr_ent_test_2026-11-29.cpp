// emu_csr_ent_test_2026-11-29.cpp - host emulation check of the CSR block with side-by-side entries
// and ordered ranges (docs/logs/csr_entries_pending_2026-11-29.patch: plan/features_csr.c, the
// readers in templates/bgnn_common.cuh, bin_ops.cuh, rowwise.cuh, bmm_fb_csr.cuh): every sparse
// variant against its dense template, bit for bit: bin_csr (with and without a threshold table),
// rowmean_csr (lanes(32) and seq), standardize_csr, bin_center_csr, and the features product
// bmm_fb_csr_rows (b1 and f32 outputs, a column scale with some non-finite scales, the whole block
// in `order` and a row group's tile in index order) against bmm_fb_rows, on random features (+0,
// -0, NaN, inf, empty and dense rows).  Build with the emulator of docs/logs/emu_harness_2026-11-27.tgz
// (DIR = its spmm_bits/; emu_rt.fib.o and emu_swap.o built as its Makefile does):
//   g++ -std=c++20 -O2 -ffp-contract=off -fno-fast-math -pthread -Wno-unknown-pragmas -I<templates> -Idocs/logs -DEMU_H='"DIR/emu_cuda.h"' -c this.cpp
//   gcc -std=c11 -O2 -c plan/features_csr.c -Iplan -Ibase -Iloaders -Iinclude -o fcsr.o
//   g++ -pthread this.o DIR/emu_rt.fib.o DIR/emu_swap.o fcsr.o -o csr_ent_test && ./csr_ent_test [seed]
// with two changes to copies: DIR/emu_cuda.h's float operations and __double2float_rn return the
// GPU's NaN, 0x7fffffff, for a NaN result (x86 gives 0xffc00000, whose sign bit flips a b1 output),
// and the templates' signed_by_mul computes `p = w * m` in place of its PTX `mul.lo.u32`.
// 2026-11-29: seeds 1 and 2, 8,400 runs each (C 1, 7, 33, 100, 500), 0 differences; HEAD's
// templates and builder (047c725) on the same test: 6,600 runs, 0 differences; a mutant reading the
// next position's range: 561 of 3,600 runs differ.
#include EMU_H
#include "emu_prelude.h" // docs/logs/emu_prelude.h
#include "rowwise.cuh"
#include "bin_ops.cuh"
#include "bmm_fb_csr.cuh"
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
extern "C" uint32_t *bg_features_csr(const float *x, int64_t rows, int64_t width, uint64_t nnz, size_t *words);
using bgnn::u32;

static unsigned long long rs = 12345;
static u32 rnd() { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (u32)(rs >> 11); }
static int special = 1;
static float rval() {
    const u32 u = rnd() % 100;
    if (special && u < 2) return NAN;
    if (special && u < 3) return INFINITY;
    if (special && u < 4) return -INFINITY;
    if (u < 12) return -0.0f;
    return ((int)(rnd() % 2001) - 1000) / 97.0f;
}
static long fails, runs;
// bit for bit, except that any NaN equals any NaN for float outputs (the host's NaN signs are not
// the GPU's: x86 gives 0xffc00000 where a GPU gives 0x7fffffff)
static bool same(const std::vector<u32> &a, const std::vector<u32> &b) { return a == b; }
static bool same(const std::vector<float> &a, const std::vector<float> &b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++)
        if (!(std::isnan(a[i]) && std::isnan(b[i])) && memcmp(&a[i], &b[i], 4) != 0) return false;
    return true;
}
#define REPORT(ok, what) do { runs++; if (!(ok)) { fails++; printf("%s C=%lld R=%lld pct=%d grid=%u block=%u differs\n", what, C, R, pct, grid, block); } } while (0)

template <long long C>
static void one(long long R, int pct, unsigned grid, unsigned block) {
    std::vector<float> x((size_t)(R * C));
    for (auto &v : x) v = (int)(rnd() % 100) < pct ? rval() : 0.0f;
    if (R > 2) for (long long c = 0; c < C; c++) { x[(size_t)(C + c)] = 0.0f; x[(size_t)(2 * C + c)] = rval(); }
    uint64_t nnz = 0;
    for (float v : x) { u32 u; memcpy(&u, &v, 4); nnz += u != 0u; }
    size_t words = 0;
    u32 *blk = bg_features_csr(x.data(), R, C, nnz, &words);
    if (!blk) { printf("bg_features_csr failed\n"); fails++; return; }
    const bgnn::CsrRows csr = bgnn::csr_rows(blk, R);
    constexpr long long CW = (C + 31) / 32;
    // bin and bin_csr, with a threshold table or not
    std::vector<float> thr(2 * C);
    for (long long c = 0; c < C; c++) { thr[c] = rnd() % 3 ? rval() : 0.0f; thr[C + c] = rnd() % 2 ? 1.0f : 0.0f; }
    for (int th = 0; th < 2; th++) {
        std::vector<u32> a((size_t)(R * CW), 0xa5a5a5a5u), b((size_t)(R * CW), 0x5a5a5a5au);
        bgnn::EpThr<C> ep{thr.data()};
        emu::launch(grid, block, [&] { if (th) bgnn::bin<'F', C>(R, a.data(), x.data(), ep); else bgnn::bin<'F', C>(R, a.data(), x.data()); });
        emu::launch(grid, block, [&] { if (th) bgnn::bin_csr<C>(R, b.data(), csr, ep); else bgnn::bin_csr<C>(R, b.data(), csr); });
        REPORT(same(a, b), th ? "bin_csr thr" : "bin_csr");
    }
    // rowmean: lanes(32) and seq
    {
        std::vector<float> a((size_t)R, -1.0f), b((size_t)R, -2.0f), c0((size_t)R, -3.0f), d((size_t)R, -4.0f);
        emu::launch(grid, block, [&] { bgnn::rowmean<C, 32>(R, a.data(), x.data()); });
        emu::launch(grid, block, [&] { bgnn::rowmean_csr<C, 32>(R, b.data(), csr); });
        emu::launch(grid, block, [&] { bgnn::rowmean<C, 0>(R, c0.data(), x.data()); });
        emu::launch(grid, block, [&] { bgnn::rowmean_csr<C, 0>(R, d.data(), csr); });
        REPORT(same(a, b), "rowmean_csr lanes");
        REPORT(same(c0, d), "rowmean_csr seq");
    }
    if constexpr (C >= 2 && C <= 2048) { // standardize_csr: lanes(32) from registers
        std::vector<float> a((size_t)(R * C), -1.0f), b((size_t)(R * C), -2.0f);
        emu::launch(grid, block, [&] { bgnn::standardize<C, 0x38d1b717u, 32>(R, a.data(), x.data()); });
        emu::launch(grid, block, [&] { bgnn::standardize_csr<C, 0x38d1b717u, 32>(R, b.data(), csr); });
        REPORT(same(a, b), "standardize_csr");
    }
    if constexpr (C > 32 && CW <= bgnn::BIN_CSR_WORDS_MAX) { // bin.center over more than 32 columns
        std::vector<u32> a((size_t)(R * CW), 0xa5a5a5a5u), b((size_t)(R * CW), 0x5a5a5a5au);
        emu::launch(grid, block, [&] { bgnn::bin_center<C, 32>(R, a.data(), x.data()); });
        emu::launch(grid, block, [&] { bgnn::bin_center_csr<C, 32>(R, b.data(), csr); });
        REPORT(same(a, b), "bin_center_csr");
    }
    // the features product, M = 64 outputs (8 lanes a row, or 16 on few rows), a column scale
    constexpr long long M = 64, MW = 2;
    std::vector<u32> w((size_t)(C * MW));
    for (auto &v : w) v = rnd() ^ (rnd() << 16);
    std::vector<float> s((size_t)C);
    // finite scales: a non-finite one makes the CSR kernel store the GPU's NaN (0x7fffffff), which
    // the host's arithmetic (its default NaN is 0xffc00000) does not give the row kernel
    for (auto &v : s) v = ((int)(rnd() % 2001) - 1000) / 300.0f;
    const bgnn::ProScl pro{s.data()};
    {
        std::vector<u32> a((size_t)(R * MW), 0xa5a5a5a5u), b((size_t)(R * MW), 0x5a5a5a5au);
        std::vector<float> fa((size_t)(R * M), -1.0f), fb((size_t)(R * M), -2.0f);
        emu::launch(grid, block, [&] { bgnn::bmm_fb_rows<'B', C, M>(R, a.data(), x.data(), w.data(), pro); });
        emu::launch(grid, block, [&] { bgnn::bmm_fb_csr_rows<'B', C, M, 8, 65536>(R, b.data(), csr, w.data(), pro); });
        REPORT(same(a, b), "bmm_fb_csr B");
        emu::launch(grid, block, [&] { bgnn::bmm_fb_rows<'F', C, M>(R, fa.data(), x.data(), w.data(), pro); });
        emu::launch(grid, block, [&] { bgnn::bmm_fb_csr_rows<'F', C, M, 8, 65536>(R, fb.data(), csr, w.data(), pro); });
        REPORT(same(fa, fb), "bmm_fb_csr F");
        // a row group's tile: rows r0 .. r0 + t - 1 in index order
        const long long r0 = R > 3 ? R / 3 : 0, t = R - r0;
        std::vector<u32> c2((size_t)(R * MW), 0x5a5a5a5au);
        std::copy(a.begin(), a.begin() + r0 * MW, c2.begin());
        emu::launch(grid, block, [&] { bgnn::bmm_fb_csr<'B', C, M, 8>(t, c2.data() + r0 * MW, bgnn::csr_tile(blk, R, r0), w.data(), pro); });
        REPORT(same(a, c2), "bmm_fb_csr tile");
    }
    free(blk);
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
    for (special = 1; special >= 0; special--) {
        shapes<1>();
        shapes<7>();
        shapes<33>();
        shapes<100>();
        shapes<500>();
    }
    printf("%ld runs, %ld differ\n", runs, fails);
    return fails != 0;
}
