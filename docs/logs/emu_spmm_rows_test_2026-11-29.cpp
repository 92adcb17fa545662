// emu_spmm_rows_test_2026-11-29.cpp - host emulation check of docs/logs/spmm_warp_rows_pending_2026-11-29.patch
// (templates/spmm.cuh spmm_warp_rows: a float aggregation a warp a row over bspmm_mm's SLOTS list, hub
// rows by the whole block) against the thread-an-element bspmm_adjb / bspmm_adjf, bit for bit.
// Build with the emulator of docs/logs/emu_harness_2026-11-27.tgz (spmm_bits/: emu_cuda.h, emu_rt.cpp,
// emu_swap.S copied beside this file), the patched templates in T:
//   g++ -std=c++20 -O2 -ffp-contract=off -fno-fast-math -pthread -Wno-unknown-pragmas -I$T -c this.cpp -o rows_test.o
//   g++ -std=c++20 -O2 -ffp-contract=off -pthread -c emu_rt.cpp; g++ -c emu_swap.S
//   gcc -std=c11 -O2 -c plan/row_order.c -Iplan -Ibase -Iloaders -Iinclude -o row_order.o
//   g++ -pthread rows_test.o emu_rt.o emu_swap.o row_order.o -o rows_test && ./rows_test [seed]
// 2026-11-29: seeds 1-3, 3,780 runs each (graphs of 1 to 300 rows with empty rows, rows of 20-80 edges
// and a hub of 300-700; C 1, 7, 31, 32, 33, 64 (F) and 7, 33, 64 (B); adjacency B and F; the SLOTS list
// at hub_min 32, 2 and 0 and none; grids 1, 3, the slot count and more; blocks 256, 128, 96): 0
// differences (a NaN's bit excepted: docs/semantics.md section 2). Mutants: warp 0 adding a hub step's
// terms in reverse: 492,558 differing words; the hub step's first barrier dropped: 21,105.
// Later the same day, for docs/logs/spmm_rows_wide_pending_2026-11-29.patch (a warp a row and chunk
// of 64 columns, every bspmm.F??): C 65, 100, 128, 129, 200 (F) and 100, 129 (B) added, grids of
// slots x chunks: seeds 1 and 2, 7,680 runs each, 0 differing words.  The first build wrote a B
// output's word past the row's end in the last chunk (C 129: caught by the guard words).  Mutant:
// the hub's gathers ignoring the chunk: 2,855,821 differing words.
// Twenty-third session, for docs/logs/spmm_hub_double_stage_pending_2026-11-29.patch (a hub row's
// stage in two buffers, one barrier a step, warp 0's adds under the next step's gathers, 8 staged
// terms read before they are added), without the wide widths (EMU_WIDE unset): seeds 1, 2 and 3,
// 4,320 runs each, 0 differing words.  Mutant: one buffer for every step (b ^= 0), so that a
// step's gathers overwrite the terms warp 0 still adds: 24,218 differing words (seed 1).
// rows_test.cpp - host emulation: templates/spmm.cuh bspmm_rows_adjb / bspmm_rows_adjf (a warp a
// row, with and without the SLOTS list, hub rows by the block) against bspmm_adjb / bspmm_adjf (a
// thread an element), bit for bit, Z = F and B, C in {1, 7, 31, 32, 33, 64}, on random graphs with
// long rows, empty rows and a hub, several grids and blocks.
#include "emu_cuda.h"
#include <cmath>
template <class A, class B> inline auto min(A a, B b) { return a < b ? a : b; }
template <class A, class B> inline auto max(A a, B b) { return a < b ? b : a; }
#include "spmm.cuh"
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
extern "C" int64_t bg_plan_mm_slots(const int64_t *rowptr, int64_t n, int64_t hub_min, int32_t *out);
using bgnn::u32;

static unsigned long long rs = 12345;
static u32 rnd() { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (u32)(rs >> 11); }
static float rval() {
    const u32 u = rnd() % 1000;
    if (u < 40) return -0.0f;
    if (u < 43) return NAN;
    if (u < 46) return INFINITY;
    return ((int)(rnd() % 2001) - 1000) / 97.0f;
}

struct G {
    int64_t n;
    std::vector<long long> rowptr;
    std::vector<int> col;
    std::vector<float> rowf, colf, w;
};
static G graph(int64_t n, int kind) {
    G g;
    g.n = n;
    g.rowptr.assign(n + 1, 0);
    for (int64_t r = 0; r < n; r++) {
        long long d = rnd() % 7;
        if (kind >= 1 && rnd() % 10 == 0) d = 20 + rnd() % 60;
        if (kind >= 2 && r == n / 3) d = 300 + rnd() % 400; // a hub
        if (rnd() % 9 == 0) d = 0;
        g.rowptr[r + 1] = g.rowptr[r] + d;
    }
    for (long long e = 0; e < g.rowptr[n]; e++) g.col.push_back((int)(rnd() % n));
    for (int64_t r = 0; r < n; r++) g.rowf.push_back(rval()), g.colf.push_back(rval());
    for (long long e = 0; e < g.rowptr[n]; e++) g.w.push_back(rval());
    return g;
}

template <char Z, long long C>
static int one(const G &g, bool adjf, bool use_slots, int64_t hub_min, unsigned grid, unsigned block) {
    std::vector<float> x(g.n * C);
    for (auto &v : x) v = rval();
    const size_t ow = Z == 'B' ? (size_t)bgnn::words_of(C) : (size_t)C;
    std::vector<u32> y0(g.n * ow + 8, 0xdeadbeefu), y1(g.n * ow + 8, 0xdeadbeefu);
    if (Z == 'B') std::fill(y0.begin(), y0.begin() + g.n * ow, 0u); // the emulated store_bits ORs its bits in
    std::vector<int32_t> sl;
    if (use_slots) {
        int64_t ns = bg_plan_mm_slots((const int64_t *)g.rowptr.data(), g.n, hub_min, nullptr);
        sl.assign((8 * ns + 1) * 4, 0);
        bg_plan_mm_slots((const int64_t *)g.rowptr.data(), g.n, hub_min, sl.data());
    }
    const int4 *slots = use_slots ? (const int4 *)sl.data() : nullptr;
    emu::launch((unsigned)((g.n * bgnn::f32_tpr(C) + 255) / 256 + 1), 256u, [&] {
        if (adjf) bgnn::bspmm_adjf<'F', Z, C>(g.n, y0.data(), g.rowptr.data(), g.col.data(), g.w.data(), x.data());
        else bgnn::bspmm_adjb<'F', Z, C, false, 0>(g.n, y0.data(), g.rowptr.data(), g.col.data(), g.rowf.data(), g.colf.data(), x.data());
    });
    emu::launch(grid, block, [&] {
        if (adjf) bgnn::bspmm_rows_adjf<Z, C>(g.n, y1.data(), g.rowptr.data(), g.col.data(), g.w.data(), x.data(), slots);
        else bgnn::bspmm_rows_adjb<Z, C>(g.n, y1.data(), g.rowptr.data(), g.col.data(), g.rowf.data(), g.colf.data(), x.data(), slots);
    });
    // the sequential host sum of row r, output c (a NaN's sign, hence its bit, is unspecified:
    // docs/semantics.md section 2; g++ may swap an addition's operands)
    auto host = [&](size_t r, long long c) {
        float acc = 0.0f;
        for (long long e = g.rowptr[r]; e < g.rowptr[r + 1]; e++) {
            const int j = g.col[e];
            volatile float t = (adjf ? g.w[e] : g.colf[j]) * x[j * C + c];
            acc = acc + t;
        }
        volatile float v = adjf ? acc : g.rowf[r] * acc;
        return (float)v;
    };
    int bad = 0;
    for (size_t k = 0; k < y0.size(); k++) {
        u32 a = y0[k], b = y1[k];
        if (Z == 'F' && k < g.n * ow && std::isnan(std::bit_cast<float>(a)) && std::isnan(std::bit_cast<float>(b))) continue;
        if (Z == 'B' && k < g.n * ow && a != b) {
            for (int bt = 0; bt < 32; bt++) {
                const long long c = (long long)(k % ow) * 32 + bt;
                if (((a ^ b) >> bt & 1u) && !(c < C && std::isnan(host(k / ow, c)))) bad++;
            }
            continue;
        }
        bad += a != b;
    }
    static int shown = 0;
    if (bad && shown < 12) {
        shown++;
        size_t k = 0;
        while (k < y0.size() && y0[k] == y1[k]) k++;
        printf("diff: Z %c C %lld n %lld adjf %d slots %d hub_min %lld grid %u block %u: %d words, first %zu (row %zu): %08x vs %08x\n", Z, C,
               (long long)g.n, (int)adjf, (int)use_slots, (long long)hub_min, grid, block, bad, k, k / ow, y0[k], y1[k]);
        const size_t r = k / ow;
        for (long long c = 0; c < C; c++) {
            if (Z == 'B' && c / 32 != (long long)(k % ow)) continue;
            const float v = host(r, c);
            const u32 b0 = (y0[k] >> (c % 32)) & 1u, b1 = (y1[k] >> (c % 32)) & 1u;
            if (b0 != b1) printf("   c %lld: host value %a (bits %08x), ref bit %u, rows bit %u, degree %lld\n", c, v, std::bit_cast<u32>(v), b0, b1, g.rowptr[r + 1] - g.rowptr[r]);
        }
    }
    return bad;
}

template <char Z, long long C>
static int cases(const G &g, int &runs) {
    int bad = 0;
    const unsigned nslots = (unsigned)bg_plan_mm_slots((const int64_t *)g.rowptr.data(), g.n, 32, nullptr);
    const unsigned nch = (unsigned)((C + 63) / 64); // the runtime's grid: slots x chunks
    const unsigned grids[] = {nslots * nch, 1, 3, (unsigned)(g.n / 8 + 1), nslots * nch + 5, nslots};
    for (int adjf = 0; adjf < 2; adjf++) {
        for (unsigned gr : grids) {
            bad += one<Z, C>(g, adjf, true, 32, gr, 256), runs++;
            bad += one<Z, C>(g, adjf, true, 2, gr, 256), runs++; // nearly every row a hub slot
        }
        bad += one<Z, C>(g, adjf, true, 0, nslots, 256), runs++;  // slots, no hubs
        bad += one<Z, C>(g, adjf, false, 0, 5, 256), runs++;      // index order
        bad += one<Z, C>(g, adjf, true, 32, 4, 128), runs++;      // not 256: index order
        bad += one<Z, C>(g, adjf, false, 0, 2, 96), runs++;
    }
    return bad;
}

int main(int argc, char **argv) {
    if (argc > 1) rs = strtoull(argv[1], nullptr, 10);
    int bad = 0, runs = 0;
    const int64_t ns[] = {1, 5, 33, 67, 300};
    for (int64_t n : ns)
        for (int kind = 0; kind < 3; kind++) {
            G g = graph(n, kind);
            bad += cases<'F', 1>(g, runs) + cases<'F', 7>(g, runs) + cases<'F', 31>(g, runs) + cases<'F', 32>(g, runs) +
                   cases<'F', 33>(g, runs) + cases<'F', 64>(g, runs) + cases<'B', 7>(g, runs) + cases<'B', 33>(g, runs) +
                   cases<'B', 64>(g, runs);
#if EMU_WIDE // the wide patch's widths (spmm_rows_wide, not kept): -DEMU_WIDE=1 on a tree with it
            bad += cases<'F', 65>(g, runs) + cases<'F', 100>(g, runs) + cases<'F', 128>(g, runs) +
                   cases<'F', 129>(g, runs) + cases<'F', 200>(g, runs) + cases<'B', 100>(g, runs) + cases<'B', 129>(g, runs);
#endif
        }
    printf("rows_test: %d runs, %d differing words\n", runs, bad);
    return bad != 0;
}
