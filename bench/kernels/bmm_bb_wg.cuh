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

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define BGNN_TC_WGMMA 1
#else
#define BGNN_TC_WGMMA 0
#endif
#ifndef BGNN_WG_DIAG
#define BGNN_WG_DIAG 0 // benchmark diagnosis only: 1 no global loads, 2 no wgmma (wrong results)
#endif
#ifndef BGNN_WG_LBO
#define BGNN_WG_LBO 128 // bytes between the core matrices of a row's two 16-byte halves
#endif
#ifndef BGNN_WG_SBO
#define BGNN_WG_SBO 256 // bytes between groups of 8 rows
#endif

namespace bgnn {

template <long long M>
struct WgShape {
    static constexpr int BN = M > 128 ? 256 : M > 64 ? 128 : M > 32 ? 64 : M > 16 ? 32 : M > 8 ? 16 : 8;
    static constexpr int BM = 128;             // two warpgroups of 64 rows
    static constexpr int ROWS = BM + BN;       // shared rows a stage: the x rows, then the w rows
    static constexpr bool CORE = true;         // core-matrix layout (TcLoader)
};

template <class S>
struct WgSmem {
    u32 rows[2][S::ROWS][8];       // two stages, core-matrix order (TcLoader with S::CORE)
    __align__(8) int cnt[S::ROWS]; // popc of each x row (0..BM-1) and w row (BM..) of the tile
};

#if BGNN_TC_WGMMA
typedef unsigned long long u64;

// The shared-memory matrix descriptor of rows starting at shared address `addr` (no swizzle).
__device__ __forceinline__ u64 wg_desc(u32 addr) {
    return (u64)((addr & 0x3FFFFu) >> 4) | ((u64)(BGNN_WG_LBO >> 4) << 16) | ((u64)(BGNN_WG_SBO >> 4) << 32);
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wg_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Stores by ordinary instructions become visible to the tensor cores' reads (async proxy).
__device__ __forceinline__ void wg_fence_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Keeps the compiler from moving accumulator accesses across the asynchronous wgmma.
template <int NA>
__device__ __forceinline__ void wg_pin(int (&d)[NA]) {
#pragma unroll
    for (int i = 0; i < NA; i++) asm volatile("" : "+r"(d[i])::"memory");
}

// d (+)= popc(A AND B) of a 64 x 256 by 256 x N bit product: acc != 0 adds to d, acc == 0
// overwrites it.  One wrapper a width (the accumulators are N / 2 registers a thread).
__device__ __forceinline__ void wgmma_b1(int (&d)[4], u64 da, u64 db, int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc "
                 "{%0, %1, %2, %3}, %4, %5, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "l"(da), "l"(db), "r"(acc));
}
__device__ __forceinline__ void wgmma_b1(int (&d)[8], u64 da, u64 db, int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k256.s32.b1.b1.and.popc "
                 "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
                 : "l"(da), "l"(db), "r"(acc));
}
__device__ __forceinline__ void wgmma_b1(int (&d)[16], u64 da, u64 db, int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k256.s32.b1.b1.and.popc "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, "
                 "p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]),
                   "+r"(d[15])
                 : "l"(da), "l"(db), "r"(acc));
}
__device__ __forceinline__ void wgmma_b1(int (&d)[32], u64 da, u64 db, int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k256.s32.b1.b1.and.popc "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
                 "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]),
                   "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]),
                   "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]),
                   "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
                 : "l"(da), "l"(db), "r"(acc));
}
__device__ __forceinline__ void wgmma_b1(int (&d)[64], u64 da, u64 db, int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k256.s32.b1.b1.and.popc "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
                 "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
                 "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
                 "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]),
                   "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]),
                   "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]),
                   "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]),
                   "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]),
                   "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]),
                   "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]),
                   "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
                 : "l"(da), "l"(db), "r"(acc));
}
__device__ __forceinline__ void wgmma_b1(int (&d)[128], u64 da, u64 db, int acc) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k256.s32.b1.b1.and.popc "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
                 "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
                 "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
                 "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "
                 "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, "
                 "%87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, "
                 "%104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, "
                 "%118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]),
                   "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]),
                   "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]),
                   "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]),
                   "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]),
                   "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]),
                   "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]),
                   "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]),
                   "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]),
                   "+r"(d[71]), "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]),
                   "+r"(d[78]), "+r"(d[79]), "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]),
                   "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]),
                   "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), "+r"(d[96]), "+r"(d[97]), "+r"(d[98]),
                   "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]), "+r"(d[104]), "+r"(d[105]),
                   "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]),
                   "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]),
                   "+r"(d[118]), "+r"(d[119]), "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]),
                   "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
                 : "l"(da), "l"(db), "r"(acc));
}

// The outputs of a warp's 16 rows (wr ..) of a BM x BN tile at (r0, c0) from wgmma accumulators
// (acc[4 j + 2 h + e]: row wr + g + 8 h, column 8 j + 2 tq + e): t = (K - 2 popc(x)) + (-2 popc(w))
// + 4 popc(x AND w), folded in place with the tile's popcounts cnt (its x rows at [0, BM), its w
// rows at [BM, ..)), then stored by tc_store (bmm_bb_wg here, bmm_bb_wgs in bmm_bb_wgp.cuh).
template <char Z, long long K, long long M, int BM, int BN, class Epi>
__device__ __forceinline__ void wg_store(long long rows, void *yp, long long r0, long long c0, int wr, int lane,
                                         int (&acc)[BN / 2], const int *cnt, const Epi &epi) {
    constexpr int NJ = BN / 8;
    const int g = lane >> 2, tq = lane & 3;
    const int rt0 = (int)K - 2 * cnt[wr + g], rt1 = (int)K - 2 * cnt[wr + g + 8];
#pragma unroll
    for (int j = 0; j < NJ; j++) {
        const int2 cw = *reinterpret_cast<const int2 *>(&cnt[BM + 8 * j + 2 * tq]);
        acc[4 * j] = rt0 - 2 * cw.x + 4 * acc[4 * j];
        acc[4 * j + 1] = rt0 - 2 * cw.y + 4 * acc[4 * j + 1];
        acc[4 * j + 2] = rt1 - 2 * cw.x + 4 * acc[4 * j + 2];
        acc[4 * j + 3] = rt1 - 2 * cw.y + 4 * acc[4 * j + 3];
    }
    auto tint = [&](int, int h, int j, int e) { return acc[4 * j + 2 * h + e]; };
    if (r0 + BM <= rows && c0 + BN <= M)
        tc_store<Z, M, 1, NJ, true>(rows, yp, r0, c0, wr, 0, lane, epi, tint);
    else
        tc_store<Z, M, 1, NJ, false>(rows, yp, r0, c0, wr, 0, lane, epi, tint);
}

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
