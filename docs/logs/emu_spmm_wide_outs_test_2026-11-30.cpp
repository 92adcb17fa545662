// emu_spmm_wide_outs_test_2026-11-30.cpp - host emulation check of templates/spmm_wide_outs.cuh
// bspmm_wide_adjb_outs (a row group's wide form: the wide float aggregation with the bin and the
// absmean of its rows) against spmm.cuh bspmm_wide_adjb, then bin_ops.cuh bin<'F', C> and
// rowwise.cuh absmean<C, 256> (the order lanes(256) fp_order.c gives it) over its output, every word, float and row, bit for bit; with STORE
// also y; and absmean<C, 256> against lanes(256) as docs/semantics.md defines it.  A bit is the value's sign (bit_of), and the host's arithmetic NaNs take their sign
// from the operand order the host compiler picks (x86's default NaN is negative), where the
// GPU's are canonical (positive): the bits of NaN values are not compared.  Graphs: isolated nodes, short rows, rows of exactly 32 and 33 edges (LONG = 32), hubs
// of 64, 65 and 700 edges; x with NaN, inf, -0 (emu_rval); unit and random colf / rowf; C = 256,
// 1000, 1433 and 3703 (every width where SwdShape's T is 256, the form's condition); grids of 1,
// 3 and 64 blocks of 256.  Each configuration runs twice on the same counters, which must be
// left zero: the second run checks that the last slice of each long row reset its counter.
// Build with the emulator of docs/logs/emu_harness_2026-11-27.tgz (DIR = its spmm_bits/):
//   g++ -std=c++20 -O2 -ffp-contract=off -fno-fast-math -pthread -Wno-unknown-pragmas -I<templates> -Idocs/logs -DEMU_H='"DIR/emu_cuda.h"' -c this.cpp
//   gcc -std=c11 -O2 -c plan/row_order.c -Iplan -Ibase -Iloaders -Iinclude -o row_order.o
//   g++ -pthread this.o DIR/emu_rt.fib.o DIR/emu_swap.o row_order.o -o wide_outs_test && ./wide_outs_test [seed]
#include EMU_H
#include "emu_prelude.h" // docs/logs/emu_prelude.h
#include "emu_random.h"  // docs/logs/emu_random.h
template <class T>
inline T __ldcg(const T *p) { return *p; }
#include "bin_ops.cuh"
#include "spmm_wide_outs.cuh"
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using bgnn::u32;

static long fails, runs, nan_bits;
static long long differ(const float *a, const float *b, size_t n) {
    long long k = 0;
    for (size_t i = 0; i < n; i++) k += !(std::isnan(a[i]) && std::isnan(b[i])) && memcmp(&a[i], &b[i], 4) != 0;
    return k;
}

template <long long C>
static void one(long long n, bool unit, unsigned grid, bool store, bool with_bits, bool with_am) {
    constexpr long long W = bgnn::words_of(C);
    EmuWideCase w;
    if (!emu_wide_case(n, C, unit, w)) { printf("row order failed\n"); fails++; return; }
    const auto &[rp, col, order, x, rowf, colf] = w;
    // the reference: the aggregation's own kernel, then bin and absmean of its rows
    std::vector<float> ya((size_t)(n * C), -7.0f), ama((size_t)n, -7.0f);
    std::vector<u32> ba((size_t)(n * W), 0xdeadbeefu);
    emu::launch(7, 256, [&] {
        bgnn::bspmm_wide_adjb<C, 32>(n, ya.data(), rp.data(), col.data(), rowf.data(), colf.data(), x.data(), (const int4 *)order.data());
    });
    emu::launch(5, 256, [&] { bgnn::bin<'F', C>(n, ba.data(), ya.data()); });
    emu::launch(5, 256, [&] { bgnn::absmean<C, 256, false>(n, ama.data(), ya.data(), bgnn::ProNone{}); });
    for (long long i = 0; i < n; i++) { // absmean's lanes(256) as docs/semantics.md defines it (ref_ops.c row_sum)
        double p[256];
        for (int l = 0; l < 256; l++) {
            p[l] = 0.0;
            for (long long c = l; c < C; c += 256) p[l] += std::fabs((double)ya[(size_t)(i * C + c)]);
        }
        for (int h = 128; h >= 1; h /= 2)
            for (int l = 0; l < h; l++) p[l] = p[l] + p[l + h];
        const float want = (float)(p[0] / (double)C);
        if (differ(&want, &ama[(size_t)i], 1)) {
            fails++;
            printf("C=%lld row %lld: absmean<C, 256> %a, lanes(256) by definition %a\n", C, i, ama[(size_t)i], want);
            break;
        }
    }
    std::vector<unsigned> done((size_t)n, 0u);
    for (int rep = 0; rep < 2; rep++) {
        std::vector<float> yb((size_t)(n * C), -9.0f), amb((size_t)n, -9.0f);
        std::vector<u32> bb((size_t)(n * W), 0x12345678u);
        u32 *bp = with_bits ? bb.data() : nullptr;
        float *mp = with_am ? amb.data() : nullptr;
        emu::launch(grid, 256, [&] {
            if (store)
                bgnn::bspmm_wide_adjb_outs<C, 32, true>(n, yb.data(), rp.data(), col.data(), rowf.data(), colf.data(),
                                                        x.data(), (const int4 *)order.data(), bp, mp, done.data());
            else // only the long rows' values stored
                bgnn::bspmm_wide_adjb_outs<C, 32, false>(n, yb.data(), rp.data(), col.data(), rowf.data(), colf.data(),
                                                         x.data(), (const int4 *)order.data(), bp, mp, done.data());
        });
        runs++;
        long long dy = 0, db = 0, dm = 0, dz = 0;
        for (long long i = 0; i < n; i++) {
            const bool lng = rp[i + 1] - rp[i] > 32;
            if (store || lng) dy += differ(&ya[(size_t)(i * C)], &yb[(size_t)(i * C)], C) != 0;
            if (!store && !lng) dy += yb[(size_t)(i * C)] != -9.0f; // not written
            bool bad = false;
            for (long long w = 0; w < W && with_bits; w++) { // a NaN's bit is its sign: see the top
                u32 mask = 0u;
                for (long long c = w * 32; c < C && c < w * 32 + 32; c++)
                    if (!std::isnan(ya[(size_t)(i * C + c)])) mask |= 1u << (c - w * 32);
                    else nan_bits++;
                bad |= ((ba[(size_t)(i * W + w)] ^ bb[(size_t)(i * W + w)]) & mask) != 0u;
                bad |= (bb[(size_t)(i * W + w)] & ~bgnn::word_mask(C, w)) != 0u; // padding bits 0
            }
            db += bad;
            if (with_am) dm += differ(&ama[(size_t)i], &amb[(size_t)i], 1);
            dz += done[(size_t)i] != 0u;
        }
        if (dy || db || dm || dz) {
            fails++;
            printf("C=%lld n=%lld unit=%d grid=%u store=%d bits=%d am=%d rep %d: rows differ: y %lld, bits %lld, absmean %lld; "
                   "counters not zero %lld\n", C, n, unit, grid, store, with_bits, with_am, rep, dy, db, dm, dz);
        }
    }
}

// rowwise.cuh warp_lanes_sum<C, 256>'s float64 sum itself against lanes(256) as defined: signed
// terms of exponents from -40 to 40, so that a wrong order shows in the sum's bits (an absmean's
// sums of |x| rarely round to a different float in any order).
template <long long C>
static void lanes256() {
    std::vector<float> x((size_t)C);
    for (int rep = 0; rep < 20; rep++) {
        for (auto &v : x) v = std::ldexp((float)((int)(rnd() % 2001) - 1000) / 997.0f, (int)(rnd() % 81) - 40);
        double got = 0.0;
        emu::launch(1, 32, [&] {
            const int lane = (int)(threadIdx.x & 31u);
            const double s = bgnn::warp_lanes_sum<C, 256>(lane, [&](long long c) { return x[(size_t)c]; },
                                                          [](float v) { return (double)v; });
            if (lane == 0) got = s;
        });
        double p[256];
        for (int l = 0; l < 256; l++) {
            p[l] = 0.0;
            for (long long c = l; c < C; c += 256) p[l] += (double)x[(size_t)c];
        }
        for (int h = 128; h >= 1; h /= 2)
            for (int l = 0; l < h; l++) p[l] = p[l] + p[l + h];
        runs++;
        if (memcmp(&got, &p[0], 8) != 0) {
            fails++;
            printf("C=%lld: warp_lanes_sum<C, 256> %a, lanes(256) by definition %a\n", C, got, p[0]);
        }
    }
}

template <long long C>
static void all() {
    lanes256<C>();
    const unsigned grids[] = {1, 3, 64};
    const long long n = C > 1000 ? 300 : 700;
    for (int store = 0; store < 2; store++)
        for (int unit = 0; unit < 2; unit++)
            for (unsigned g : grids) one<C>(n, unit, g, store, true, true);
    one<C>(n, false, 3, false, true, false);
    one<C>(n, false, 3, false, false, true);
}

int main(int argc, char **argv) {
    emu_seed(argc, argv);
    all<256>();
    all<1000>();
    all<1433>();
    all<3703>();
    printf("%ld runs, %ld differ (%ld bits of NaN values not compared)\n", runs, fails, nan_bits);
    return fails != 0;
}
