// wgmma_b1.cuh - Hopper's warpgroup tensor-core instructions on bits (wgmma .b1, AND form, sm_90a)
// and what the kernels built on them share: the tile shape a width gets (WgShape), the no-swizzle
// shared-memory descriptor, the fences, waits and commits, the accumulator pin, one wrapper a
// width (m64nNk256, N = 8 .. 256), and the store of a warp's tile rows through tc_store
// (wg_store).  Used by templates/bmm_bb_wgs.cuh and by the benchmark's register-staged kernel
// (bench/kernels/bmm_bb_wg.cuh).  BGNN_TC_WGMMA is 1 where the code is compiled for sm_90a
// (the arch-specific features), else 0 and the wgmma parts are left out.
#ifndef BGNN_WGMMA_B1_CUH
#define BGNN_WGMMA_B1_CUH

#include "bmm_bb_tc.cuh" // u32, smem_addr, tc_store, the cp.async helpers

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define BGNN_TC_WGMMA 1
#else
#define BGNN_TC_WGMMA 0
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
// rows at [BM, ..)), then stored by tc_store (bmm_bb_wgs; the benchmark's bmm_bb_wg).
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
#endif // BGNN_TC_WGMMA

} // namespace bgnn

#endif // BGNN_WGMMA_B1_CUH
