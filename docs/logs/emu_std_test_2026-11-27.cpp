// emu_std_test_2026-11-27.cpp - host emulation check of the fold-standardize-mm kernels against the CPU
// reference (reference/ref_ops.c), bit for bit: rowmean and rowmean_csr (bg_ref_rowmean),
// bin_center and bin_center_csr (bg_ref_bin_center), absmean_std (bg_ref_standardize then
// bg_ref_absmean), standardize (bg_ref_standardize), in seq (C <= 32) or lanes(32), on random features (+0, -0, NaN, inf, negatives,
// all-zero rows) and grids of 1 to 64 blocks of 32 to 256 threads.  Build against the emulator of
// docs/logs/emu_harness_2026-11-27.tgz (unpacked in DIR; this file in DIR/std) and build/libbgnn.a:
//   g++ -std=c++20 -O2 -ffp-contract=off -fno-fast-math -pthread -Wno-unknown-pragmas -Itemplates
//       -Ireference -Icompiler -Ibase -Iloaders -Iinclude -c this.cpp
//   g++ -pthread this.o DIR/emu_rt.fib.o DIR/emu_swap.o build/libbgnn.a -lz -ldl -lm -o std_test
// 2026-11-27: 8,000 runs, 0 differences; a mutant bin_center_csr without the padding mask differs
// in 357 of 2,000.
// 2026-11-29: standardize_csr added; the templates' current CsrRows arguments, min/max and
// __reduce_or_sync shims.  With standardize's quotient by multiply (templates/std_quotient.cuh):
// 10,400 runs, 0 differences; with a copy of the templates whose bg_std_quotient_exact always
// fails (every row redone with the divisions): 10,400 runs, 0 differences; after the review fix
// (the reciprocal's precondition, seed 3): 10,400 runs, 0 differences.
// Build as above with -Itemplates and the harness's emu_cuda.h, emu_rt.cpp and emu_swap.S one
// directory up.
#include "../emu_cuda.h"
#include "emu_prelude.h" // docs/logs/emu_prelude.h: the shims this test had inline (build with -Idocs/logs)
#include "rowwise.cuh"
#include "bin_ops.cuh"
#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
extern "C" {
#include "ref_ops.h"
uint32_t *bg_features_csr(const float *x, int64_t rows, int64_t width, uint64_t nnz, size_t *words);
}
using bgnn::u32;

static unsigned long long rs = 12345;
static u32 rnd() { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (u32)(rs >> 11); }
static int special = 1;
static float rval() {
    u32 u = rnd() % 100;
    if (special && u < 2) return NAN;
    if (special && u < 3) return -NAN;
    if (special && u < 4) return INFINITY;
    if (special && u < 5) return -INFINITY;
    if (u < 12) return -0.0f;
    return ((int)(rnd() % 2001) - 1000) / 250.0f;
}
static long fails, runs;

template <long long C>
static void one(long long R, int pct, unsigned grid, unsigned block) {
    constexpr int L = C > 32 ? 32 : 0;
    std::vector<float> x((size_t)(R * C));
    for (auto &v : x) v = (int)(rnd() % 100) < pct ? rval() : (rnd() % 3 ? 0.0f : (pct > 50 ? 1.0f : 0.0f));
    if (R > 2) for (long long c = 0; c < C; c++) x[(size_t)(C + c)] = 0.0f; // an all-zero row
    uint64_t nnz = 0;
    for (float v : x) { u32 u; memcpy(&u, &v, 4); nnz += u != 0u; }
    size_t words = 0;
    u32 *csr = bg_features_csr(x.data(), R, C, nnz, &words);
    BgTensor xt, rm, bc, st, am;
    bg_tensor_alloc(&xt, BG_DT_F32, 2, R, C);
    memcpy(xt.data, x.data(), sizeof(float) * x.size());
    BgFpOrder fp = {L ? BG_FP_LANES : BG_FP_SEQ, false, L, 0};
    const float eps = 1e-4f;
    bg_ref_rowmean(&xt, fp, &rm);
    bg_ref_bin_center(&xt, fp, &bc);
    bg_ref_standardize(&xt, eps, fp, &st);
    bg_ref_absmean(&st, fp, &am);
    constexpr long long CW = (C + 31) / 32;
    std::vector<float> m1(R, -7.f), m2(R, -7.f), a1(R, -7.f);
    std::vector<u32> b1((size_t)(R * CW), 0xa5a5a5a5u), b2((size_t)(R * CW), 0x5a5a5a5au);
    unsigned eb; memcpy(&eb, &eps, 4);
    emu::launch(grid, block, [&] { bgnn::rowmean<C, L>(R, m1.data(), x.data()); });
    emu::launch(grid, block, [&] { bgnn::rowmean_csr<C, L>(R, m2.data(), bgnn::csr_rows(csr, R)); });
    emu::launch(grid, block, [&] { bgnn::bin_center<C, L>(R, b1.data(), x.data()); });
    emu::launch(grid, block, [&] { bgnn::bin_center_csr<C, L>(R, b2.data(), bgnn::csr_rows(csr, R)); });
    emu::launch(grid, block, [&] { bgnn::absmean_std<C, 0x38d1b717u, L>(R, a1.data(), x.data()); });
    std::vector<float> sd((size_t)(R * C), -7.f);
    emu::launch(grid, block, [&] { bgnn::standardize<C, 0x38d1b717u, L>(R, sd.data(), x.data()); });
    bool sdd = false;
    for (long long i = 0; i < R * C; i++) {
        const float u = sd[(size_t)i], v = ((const float *)st.data)[i];
        if (!(std::isnan(u) && std::isnan(v)) && memcmp(&u, &v, 4)) sdd = true;
    }
    if (sdd) { fails++; printf("standardize C=%lld R=%lld pct=%d grid=%u block=%u differs\n", C, R, pct, grid, block); }
    runs += 6;
    if constexpr (L == 32 && C > 1 && C <= bgnn::LANES_REGS_MAX) { // standardize_csr (2026-11-29)
        std::vector<float> sc((size_t)(R * C), -7.f);
        emu::launch(grid, block, [&] { bgnn::standardize_csr<C, 0x38d1b717u, L>(R, sc.data(), bgnn::csr_rows(csr, R)); });
        bool scd = false;
        for (long long i = 0; i < R * C; i++) {
            const float u = sc[(size_t)i], v = ((const float *)st.data)[i];
            if (!(std::isnan(u) && std::isnan(v)) && memcmp(&u, &v, 4)) scd = true;
        }
        if (scd) { fails++; printf("standardize_csr C=%lld R=%lld pct=%d grid=%u block=%u differs\n", C, R, pct, grid, block); }
        runs++;
    }
    // floats bit for bit, any NaN equal to any NaN (section 2: a NaN's bits are unspecified; the
    // host compiler may commute an addition of two NaNs, a GPU gives the canonical NaN)
    const auto fdiff = [&](const std::vector<float> &a, const BgTensor &t) {
        for (long long r = 0; r < R; r++) {
            const float u = a[(size_t)r], v = ((const float *)t.data)[r];
            if (std::isnan(u) && std::isnan(v)) continue;
            if (memcmp(&u, &v, 4)) return true;
        }
        return false;
    };
    const auto bdiff = [&](const std::vector<u32> &a) { return memcmp(a.data(), bc.data, sizeof(u32) * R * CW) != 0; };
    const char *what[5] = {"rowmean", "rowmean_csr", "bin_center", "bin_center_csr", "absmean_std"};
    bool d[5] = {fdiff(m1, rm), fdiff(m2, rm), bdiff(b1), bdiff(b2), fdiff(a1, am)};
    for (int k = 0; k < 5; k++)
        if (d[k]) { fails++; printf("%s C=%lld R=%lld pct=%d grid=%u block=%u differs\n", what[k], C, R, pct, grid, block); }
    free(csr);
    bg_tensor_free(&xt), bg_tensor_free(&rm), bg_tensor_free(&bc), bg_tensor_free(&st), bg_tensor_free(&am);
}

template <long long C>
static void shapes() {
    const long long rows[] = {1, 3, 33, 100};
    const int pcts[] = {0, 2, 10, 50, 100};
    const unsigned cfg[][2] = {{1, 32}, {2, 64}, {3, 256}, {64, 256}, {1, 96}};
    for (int sp = 0; sp < 2; sp++) {
        special = sp;
        for (long long R : rows)
            for (int p : pcts)
                for (auto &g : cfg) one<C>(R, p, g[0], g[1]);
    }
}

int main(int argc, char **argv) {
    if (argc > 1) rs = strtoull(argv[1], nullptr, 10);
    shapes<1>();
    shapes<7>();
    shapes<32>();
    shapes<33>();
    shapes<64>();
    shapes<100>();
    shapes<1433>();
    shapes<2100>();
    printf("%ld runs, %ld differ\n", runs, fails);
    return fails != 0;
}
