// emu_lsm_test_2026-11-27.cpp - host emulation: the bit aggregation (templates/spmm_bits.cuh
// bspmm_bits_rows, F result) with a log_softmax tail (EpLsm, fuse-log-softmax) against the same
// kernel without it followed by the CPU reference's log_softmax (bg_ref_log_softmax), bit for bit
// (any NaN equal), C = 1 .. 32, random graphs (isolated rows, a 300-edge row), +-1 bits, an add
// epilogue before the tail, grids of 1 to 64 blocks of 32 to 256 threads.
#include "../emu_cuda.h"
#include "spmm_bits.cuh"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
extern "C" {
#include "ref_ops.h"
}
using bgnn::u32;
static unsigned long long rs = 777;
static u32 rnd() { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (u32)(rs >> 11); }
static long runs, fails;

template <long long C>
static void one(int n, unsigned grid, unsigned block) {
    std::vector<long long> rowptr(n + 1, 0);
    std::vector<int> col;
    for (int i = 0; i < n; i++) {
        int d = i == n / 2 ? 300 : (int)(rnd() % 9) - 2;
        if (d < 0) d = 0;
        for (int k = 0; k < d; k++) col.push_back((int)(rnd() % n));
        std::sort(col.begin() + rowptr[i], col.end());
        rowptr[i + 1] = (long long)col.size();
    }
    if (col.empty()) col.push_back(0);
    std::vector<float> rowf(n), colf(n), add((size_t)n * C);
    for (auto &v : rowf) v = 1.0f / (float)(1 + rnd() % 7);
    for (auto &v : colf) v = rnd() % 5 == 0 ? -0.5f : 0.25f * (float)(1 + rnd() % 4);
    for (auto &v : add) v = ((int)(rnd() % 2001) - 1000) / 100.0f;
    std::vector<u32> x(n);
    for (auto &w : x) w = rnd() & (C == 32 ? 0xffffffffu : ((1u << C) - 1u));
    std::vector<float> plain((size_t)n * C, -7.f), fused((size_t)n * C, -9.f);
    using Add = bgnn::EpAdd<C, true, bgnn::EpEnd>;
    using AddLsm = bgnn::EpAdd<C, true, bgnn::EpLsm<C>>;
    emu::launch(grid, block, [&] {
        bgnn::bspmm_bits_rows<false, 'F', C>(n, plain.data(), rowptr.data(), col.data(), rowf.data(), colf.data(), x.data(),
                                             (const int4 *)nullptr, Add{add.data(), {}});
    });
    emu::launch(grid, block, [&] {
        bgnn::bspmm_bits_rows<false, 'F', C>(n, fused.data(), rowptr.data(), col.data(), rowf.data(), colf.data(), x.data(),
                                             (const int4 *)nullptr, AddLsm{add.data(), {}});
    });
    BgTensor t, l;
    bg_tensor_alloc(&t, BG_DT_F32, 2, n, C);
    memcpy(t.data, plain.data(), sizeof(float) * plain.size());
    bg_ref_log_softmax(&t, &l);
    bool bad = false;
    for (size_t i = 0; i < plain.size(); i++) {
        const float u = fused[i], v = ((float *)l.data)[i];
        if (!(std::isnan(u) && std::isnan(v)) && memcmp(&u, &v, 4)) bad = true;
    }
    runs++;
    if (bad) { fails++; printf("C=%lld n=%d grid=%u block=%u differs\n", C, n, grid, block); }
    bg_tensor_free(&t), bg_tensor_free(&l);
}

template <long long C>
static void shapes() {
    const int ns[] = {1, 5, 33, 300};
    const unsigned cfg[][2] = {{1, 32}, {2, 64}, {3, 256}, {64, 256}, {1, 96}};
    for (int n : ns)
        for (auto &g : cfg) one<C>(n, g[0], g[1]);
}

int main() {
    shapes<1>(); shapes<2>(); shapes<7>(); shapes<16>(); shapes<31>(); shapes<32>();
    printf("%d runs, %ld differ\n", (int)runs, fails);
    return fails != 0;
}
