// bmm_bb_wg.cuh - bmm.BB{B,F} on Hopper's warpgroup tensor cores (wgmma .b1, AND form), sm_90a.
// Benchmark-only (bench/bmm_tc_bench.cu): the product compiles for sm_90, where wgmma does not
// exist, and on the shapes measured this kernel is no faster than templates/bmm_bb_tc.cuh
// (docs/performance.md, "Bit tensor cores").  Include after templates/bmm_bb_tc.cuh, whose
// loader, PTX helpers and tc_store it uses.  The result is the mma.sync kernel's, bit for bit: t[r,o] = K - 2 popc(x_r) - 2 popc(w_o) + 4 popc(x_r AND w_o),
// exact integers, through the same epilogue and the same stores.
//
// Work: a 256-thread block is two warpgroups; a tile is 128 rows x BN columns, each warpgroup
// 64 rows x BN by one wgmma.m64nBNk256 a k-step, its accumulators in registers (BN / 2 a thread,
// the mma m16n8 layout repeated: warp q of a warpgroup holds rows 16q..16q+15).  A and B come
// from shared memory through matrix descriptors, laid out as wgmma's core matrices without
// swizzle (8 rows x 16 bytes, 128 contiguous bytes): the two 16-byte halves of a row's 32-byte
// k-step are 128 bytes apart (LBO, the K direction), groups of 8 rows 256 bytes apart (SBO).
// A k-step goes global -> registers (TcLoader, two steps ahead) -> shared (two stages).  The
// popcounts of the x rows and w rows are counted from those registers as they are stored (each
// thread always stores the same three rows' same half; the two halves are added by a shuffle),
// so the tensor cores do only the product.  Per step: barrier (the stage is stored), wgmma,
// wait for the previous step's wgmma, barrier (its stage is free), store the next step there;
// the tensor cores run this step's wgmma meanwhile.  Tiles: blockIdx.x, + nblk, ... with
// nblk = min(grid, tiles, %nsmid) (one block a multiprocessor: 128 accumulators a thread at BN
// 256), the k-steps of a block's tiles one sequence, as in bmm_bb_tc.cuh.
//
// Shared memory: the block of bmm_fb_tiled.cuh, reused (two stages of 384 rows x 32 bytes and
// the counts: 26,112 bytes at BN = 256).
#ifndef BGNN_BMM_BB_WG_CUH
#define BGNN_BMM_BB_WG_CUH

#include "../../templates/wgmma_b1.cuh" // the wrappers, WgShape, wg_store

#ifndef BGNN_WG_DIAG
#define BGNN_WG_DIAG 0 // benchmark diagnosis only: 1 no global loads, 2 no wgmma (wrong results)
#endif

namespace bgnn {

template <class S>
struct WgSmem {
    u32 rows[2][S::ROWS][8];       // two stages, core-matrix order (TcLoader with S::CORE)
    __align__(8) int cnt[S::ROWS]; // popc of each x row (0..BM-1) and w row (BM..) of the tile
};

#if BGNN_TC_WGMMA
template <char Z, long long K, long long M, class Epi>
__device__ __forceinline__ void bmm_bb_wg(long long rows, void *yp, const void *xp, const void *wp, Epi epi) {
    using S = WgShape<M>;
    using L = TcLoader<K, M, S>;
    constexpr int NJ = S::BN / 8, NA = S::BN / 2, NCH = L::NCH;
    constexpr long long KS = L::KS, NTN = L::NTN;
    static_assert(Z == 'F' || Z == 'B', "bmm_bb_wg: the output is F or B");
    static_assert(sizeof(WgSmem<S>) <= sizeof(FbtSmem), "bmm_bb_wg: its tiles outgrow the shared block");
    WgSmem<S> &sm = *reinterpret_cast<WgSmem<S> *>(&fbt_smem());
    const u32 *x = (const u32 *)xp, *w = (const u32 *)wp;
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2;
    const int row0 = tid >> 1;
    const int wr = 16 * warp; // the warp's first tile row (warpgroup wg: rows 64 wg ..)
    const long long ntiles = (rows + S::BM - 1) / S::BM * NTN;
    u32 nsm;
    asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
    const long long nblk = min(min((long long)gridDim.x, ntiles), (long long)nsm);
    if ((long long)blockIdx.x >= nblk) return;
    const long long total = ((ntiles - 1 - (long long)blockIdx.x) / nblk + 1) * KS;
    constexpr u32 STAGE = L::STAGE_BYTES;
    const u32 base = smem_addr(&sm.rows[0][0][0]);
    const u64 a_desc = wg_desc(base + (u32)wg * 64u * 32u), b_desc = wg_desc(base + (u32)S::BM * 32u);
    int acc[NA];
#pragma unroll
    for (int i = 0; i < NA; i++) acc[i] = 0;
    int cnt[NCH], done[NCH]; // popcounts of this thread's rows (row0 + 128 c, its half): the tile
                             // being stored, and the last one finished (both halves)
#pragma unroll
    for (int c = 0; c < NCH; c++) cnt[c] = done[c] = 0;
    auto live = [&](int c) { return S::ROWS * 2 % 256 == 0 || row0 + 128 * c < S::ROWS; };
    auto count = [&](const uint4 (&r)[NCH]) {
#pragma unroll
        for (int c = 0; c < NCH; c++)
            if (live(c)) cnt[c] += __popc(r[c].x) + __popc(r[c].y) + __popc(r[c].z) + __popc(r[c].w);
    };
    auto finish_counts = [&]() { // the stored tile is complete: both halves into done
#pragma unroll
        for (int c = 0; c < NCH; c++) {
            done[c] = cnt[c] + __shfl_xor_sync(0xffffffffu, cnt[c], 1);
            cnt[c] = 0;
        }
    };
    L ld(base, (int)nblk);
    ld.point(rows, x, w);
    uint4 ra[NCH], rb[NCH]; // in flight: even steps in ra, odd in rb
    __syncthreads();        // shared memory is free: the previous phase is done with it
    ld.fetch(ra, ntiles, rows, x, w);
    ld.fetch(rb, ntiles, rows, x, w);
    count(ra);
    ld.store(ra, 0);
    wg_fence_smem();
    ld.fetch(ra, ntiles, rows, x, w);
    long long tile = blockIdx.x;
    int kc = 0; // k-step of the tile being computed
    auto epilogue = [&]() {
        const long long r0 = tile / NTN * S::BM, c0 = tile % NTN * S::BN;
        if ((tid & 1) == 0) {
#pragma unroll
            for (int c = 0; c < NCH; c++)
                if (live(c)) sm.cnt[row0 + 128 * c] = done[c];
        }
        __syncthreads();
        wg_store<Z, K, M, S::BM, S::BN>(rows, yp, r0, c0, wr, lane, acc, sm.cnt, epi);
    };
    // One k-step s (parity P = s % 2: stage P; the next step's registers are rb when P = 0).
    auto step = [&](long long s, auto p_c) {
        constexpr int P = decltype(p_c)::value;
        __syncthreads(); // stage P is stored (and fenced) by every thread
        wg_pin(acc);
        wg_fence();
        if (BGNN_WG_DIAG != 2) wgmma_b1(acc, a_desc + (u64)(P * STAGE >> 4), b_desc + (u64)(P * STAGE >> 4), kc > 0);
        wg_commit();
        wg_wait<1>();    // this warpgroup's wgmma of step s - 1 is done ...
        __syncthreads(); // ... and the other's: stage P ^ 1 is free
        if (s + 1 < total) {
            uint4(&nx)[NCH] = P ? ra : rb; // step s + 1
            if ((s + 1) % KS == 0) finish_counts();
            count(nx);
            ld.store(nx, P ^ 1);
            wg_fence_smem();
            if (BGNN_WG_DIAG != 1) ld.fetch(nx, ntiles, rows, x, w); // step s + 3
        } else {
            finish_counts();
        }
        if (++kc == KS) {
            wg_wait<0>();
            wg_pin(acc);
            epilogue();
            kc = 0;
            tile += nblk;
        }
    };
    for (long long s = 0; s < total; s += 2) {
        step(s, TcBool<false>());
        if (s + 1 < total) step(s + 1, TcBool<true>());
    }
}
#endif // BGNN_TC_WGMMA

} // namespace bgnn

#endif // BGNN_BMM_BB_WG_CUH
