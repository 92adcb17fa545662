// bmm_bb_tc.cuh - bmm.BB{B,F} on the bit tensor cores (mma.sync.m16n8k256 .b1, AND form).
//
// The result of matmul.cuh's BB product, bit for bit: t[r,o] = K - 2 popc(x_r XOR w_o) over
// the real K bits (an exact integer), through the same epilogue (epilogue.cuh) into a float
// or a bit.  On sm_90 the b1 mma has only the AND form in machine code (XOR is emulated and
// several times slower), so the kernel counts popc(x AND w) and uses
//     popc(x XOR w) = popc(x) + popc(w) - 2 popc(x AND w),
// with popc(x_r) and popc(w_o) counted by the tensor cores as well: an mma of 16 x (or w) rows
// against an all-ones operand.  Padding bits are 0 (docs/semantics.md 1) and the words past
// ceil(K/32) are zero-filled here, so nothing needs a mask.
//
// Operands: x b1 [R][KW], w b1t [M][KW] (the transposed b1 parameter every BB product reads),
// KW = ceil(K/32).  Bit k of a row is bit k%32 of word k/32 in both; AND + popc counts the same
// positions in x and w whatever order the tensor core gives the bits of a register.
//
// Work: a 256-thread block computes a BM x BN tile, its 8 warps as WARPS_M x WARPS_N, each
// warp MI m16 tiles x NJ n8 tiles (TcShape: 64 x 64 a warp from M > 64 up, else 32 x 8NJ).
// K goes in steps of 256 bits, 8 words a row.  A step's x and w rows go global -> registers
// (16-byte loads when KW % 4 == 0, else single words; zeros past R, M and KW) two steps ahead
// of their use, and registers -> shared memory at the end of the step before, so that two
// steps' loads are in flight while one computes in a shared block of only two stages (with
// cp.async straight into shared memory, BGNN_TC_REGSTAGE=0, only one step is in flight: 12 %
// slower on the large shapes).  One barrier a step.  Fragments are read with ldmatrix.x4 at
// addresses set up once; the two 16-byte halves of a 32-byte row are swapped in every other
// group of 4 rows, so the 8 rows of an 8x8 matrix fall on 8 distinct bank groups; the next
// n16 group's B fragment is read while the mma of this one issue.  The popcounts of the x rows
// and w rows are mma against all ones of fragments already in registers (a warp counts the
// m16 tiles and n16 groups that no other warp of its rows or columns counts; the w rows'
// B fragment, reordered, is an A fragment), summed in shared memory once a tile.
// Tiles: a block takes tiles blockIdx.x, + nblk, ... and runs its k-steps as one sequence
// across tiles, so the next tile's first loads are in flight under the current tile's last
// steps and epilogue.  nblk = min(grid, TC_WAVES (2) x %nsmid): the plan launches about one
// block a small tile (bg_plan_bmm_tc_threads_per_row, at most TC_WAVES blocks an SM), and a
// block with one tile has nothing to hide its first loads under; the blocks past nblk return
// at once.  Where TcShape's tiles are fewer than the SMs (Cora's, CiteSeer's and PubMed's
// first layers) the product runs in TcSmallShape's (one m16 tile a warp): more blocks, each a
// shorter chain.  A fused kernel's grid of any size works alike.
//
// Output f32: each lane stores its accumulator elements (2 adjacent columns, rows g and g+8).
// Output b1: the 4 lanes of a row group OR their bits of a 32-column word together (two
// shuffles); lane 0 of the group stores the word; bits past M are 0.  A whole tile of a plain
// sign (no epilogue) takes tc_store_sign: each sign bit shifted into the word by a funnel shift.
//
// Shared memory: the block of bmm_fb_tiled.cuh (FbtSmem), reused.  The __shared__ variables of
// a kernel add up against its 48 KB static limit, and a fused kernel runs its phases one
// after another, each beginning after a barrier; this one begins with __syncthreads().
// Needs blockDim.x == 256 and sm_80 or later (the plan chooses this path only there).
#ifndef BGNN_BMM_BB_TC_CUH
#define BGNN_BMM_BB_TC_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"
#include "bmm_fb_tiled.cuh"

namespace bgnn {

template <long long M>
struct TcShape {
    static constexpr int WARPS_N = M > 128 ? 4 : (M > 64 ? 2 : 1);
    static constexpr int WARPS_M = 8 / WARPS_N;
    static constexpr int MI = M > 64 ? 4 : 2;                               // m16 tiles a warp
    static constexpr int NJ = M > 64 ? 8 : 2 * (int)((M + 15) / 16);        // n8 tiles a warp (even)
    static constexpr int BM = WARPS_M * 16 * MI;                            // tile rows
    static constexpr int BN = WARPS_N * 8 * NJ;                             // tile columns
    static constexpr int ROWS = BM + BN;   // shared rows a stage: the tile's x rows, then its w rows
    static constexpr int TASKS = ROWS / 16; // count tasks of a tile
    static constexpr int TPW = (TASKS + 7) / 8;
    static constexpr bool CORE = false; // shared rows 32 bytes in a row (see TcLoader)
};

// The small tiles of few rows (bmm_bb_tc: where TcShape's tiles are fewer than the SMs): one m16
// tile a warp, the 8 warps as WARPS_M x WARPS_N with whole 32-column words a warp (NJ = 4) from
// M > 32 up: 64 x 64 tiles for M <= 64, 32 x 128 for M <= 128, 128 x 8NJ below 33 columns.  More
// blocks take part (Cora's 2,708 x 1,433 x 64: 43 tiles of 64 rows, against 11 of 256), each
// with a shorter chain of k-steps and stores.  Wider products have none (HAS = false).
template <long long M>
struct TcSmallShape {
    static constexpr bool HAS = M <= 128;
    static constexpr int WARPS_N = M > 64 ? 4 : (M > 32 ? 2 : 1);
    static constexpr int WARPS_M = 8 / WARPS_N;
    static constexpr int MI = 1;
    static constexpr int NJ = M > 32 ? 4 : 2 * (int)((M + 15) / 16);
    static constexpr int BM = WARPS_M * 16 * MI;
    static constexpr int BN = WARPS_N * 8 * NJ;
    static constexpr int ROWS = BM + BN;
    static constexpr int TASKS = ROWS / 16;
    static constexpr int TPW = (TASKS + 7) / 8;
    static constexpr bool CORE = false;
};

constexpr int TC_STAGES = 2;
#ifndef BGNN_TC_REGSTAGE
#define BGNN_TC_REGSTAGE 1
#endif
#ifndef BGNN_TC_WAVES
#define BGNN_TC_WAVES 2
#endif
// 1: a k-step goes global -> registers -> shared, two steps ahead; 0: cp.async, one step ahead.
constexpr bool TC_REGSTAGE = BGNN_TC_REGSTAGE;
constexpr int TC_WAVES = BGNN_TC_WAVES; // blocks a multiprocessor (see bmm_bb_tc)
template <bool B>
struct TcBool {
    static constexpr bool value = B;
};

template <class S>
struct TcSmem {
    u32 rows[TC_STAGES][S::ROWS][8]; // a step's 256 bits of each row, halves swizzled
    __align__(8) int cnt[S::ROWS];   // popc of each x row (0..BM-1) and w row (BM..) of the tile
};

// ---- PTX wrappers ----------------------------------------------------------------------
__device__ __forceinline__ u32 smem_addr(const void *p) { return (u32)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void ldg16(uint4 &r, const void *p) {
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
}
__device__ __forceinline__ void ldg4(u32 &r, const void *p) {
    asm volatile("ld.global.ca.u32 %0, [%1];\n" : "=r"(r) : "l"(p)); // the 4 words of a chunk share sectors
}
__device__ __forceinline__ void sts16(u32 dst, const uint4 &r) {
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(r.x), "r"(r.y), "r"(r.z), "r"(r.w));
}
// d += popc(a AND b) over a 16 x 256 by 256 x 8 bit product.
__device__ __forceinline__ void mma_b1_and(int (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
    asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ldmatrix.x4 of 16 shared rows: the byte offset of the row and half this lane addresses,
// from the first of the 16 rows (a multiple of 8, so the swizzle depends on the lane alone).
// A order: {rows 0-7, rows 8-15} x {words 0-3, 4-7} = the m16n8k256 A fragment {a0, a1, a2, a3}
// of those rows.  B order: {words 0-3, 4-7} x {rows 0-7, rows 8-15} = the B fragments {b0, b1}
// of the n8 tile of rows 0-7, then of rows 8-15, each pair in consecutive registers as the mma
// reads it.
template <bool B_ORDER>
__device__ __forceinline__ u32 tc_lane_off(int lane) {
    const int m = lane >> 3; // the 8x8 matrix this lane addresses a row of
    const int row = (B_ORDER ? (m >> 1) : (m & 1)) * 8 + (lane & 7), half = B_ORDER ? (m & 1) : (m >> 1);
    return (u32)(row * 32 + (half ^ ((row >> 2) & 1)) * 16);
}
// Copy 16 (or 4) bytes from global src to the shared address dst; only the first `valid` bytes
// are read, the rest of dst is zero-filled (valid = 0: nothing is read).
__device__ __forceinline__ void cp_async16(u32 dst, const void *src, int valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid));
}
__device__ __forceinline__ void cp_async4(u32 dst, const void *src, int valid) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> // at most N of this thread's cp.async groups still in flight
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
__device__ __forceinline__ void ldsm_x4_at(u32 (&r)[4], u32 addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// The copies of one thread: chunk c of the thread is 16 bytes (half `half` of a 32-byte row
// step) of shared row (tid / 2) + 128 c: x row r0 + row while row < BM, else w row c0 + row - BM.
// A k-step goes global -> registers (fetch, two steps ahead of its use) -> shared memory
// (store, at the end of the step before its use), so that two steps' loads are in flight
// while one step computes: the shared block holds only two stages.  The loader walks the
// block's tiles (tile, tile + gridDim.x, ...) k-step by k-step, across tile boundaries.
template <long long K, long long M, class S>
struct TcLoader {
    static constexpr long long KW = words_of(K), KS = (KW + 7) / 8;
    static constexpr long long NTN = (M + S::BN - 1) / S::BN; // column tiles
    static constexpr int NCH = (S::ROWS * 2 + 255) / 256;     // chunks a thread
    static constexpr u32 STAGE_BYTES = S::ROWS * 32;
    const u32 *src[NCH]; // chunk c's 16 bytes at k-step 0 of the tile being fetched
    unsigned live;       // bit c: chunk c's row exists
    u32 dst;             // shared address of chunk 0 in stage 0 (chunk c: + 4096 c)
    int half, row0, ks;  // ks: the k-step the next fetch reads
    long long tile;      // the tile the next fetch reads (>= ntiles: nothing left)
    int stride;          // tiles between this block's tiles
    // base: the shared address of stage 0's first row.  Rows are 32 bytes in a row (halves
    // swizzled) unless S::CORE, wgmma's core matrices (bmm_bb_wg.cuh): 8 rows x 16 bytes each,
    // the two halves of 8 rows 128 bytes apart, groups of 8 rows 256 bytes apart.  Either way
    // row + 128 lies 4096 bytes after row.
    __device__ __forceinline__ TcLoader(u32 base, int stride_) : stride(stride_) {
        const int tid = (int)threadIdx.x;
        half = tid & 1;
        row0 = tid >> 1; // bit 2 of the row is the same for every chunk (128 c)
        dst = base + (S::CORE ? (u32)((row0 >> 3) * 256 + half * 128 + (row0 & 7) * 16)
                              : (u32)(row0 * 32) + 16u * (u32)(half ^ ((row0 >> 2) & 1)));
        ks = 0;
        tile = blockIdx.x;
    }
    // src and live for `tile`.
    __device__ __forceinline__ void point(long long rows, const u32 *x, const u32 *w) {
        const long long r0 = tile / NTN * S::BM, c0 = tile % NTN * S::BN;
        live = 0u;
#pragma unroll
        for (int c = 0; c < NCH; c++) {
            const int row = row0 + 128 * c;
            const bool isx = row < S::BM;
            const long long g = isx ? r0 + row : c0 + (row - S::BM);
            const bool ok = row < S::ROWS && g < (isx ? rows : M);
            if (ok) live |= 1u << c;
            src[c] = (isx || row >= S::ROWS ? x : w) + (ok ? g : 0) * KW + (KW % 4 == 0 ? half * 4 : 0);
        }
    }
    // The next k-step into r (zeros past the rows and past KW), then move on.
    __device__ __forceinline__ void fetch(uint4 (&r)[NCH], long long ntiles, long long rows, const u32 *x, const u32 *w) {
        if (tile < ntiles) {
#pragma unroll
            for (int c = 0; c < NCH; c++) {
                if (S::ROWS * 2 % 256 != 0 && row0 + 128 * c >= S::ROWS) continue;
                const bool ok = (live >> c) & 1u;
                r[c] = make_uint4(0u, 0u, 0u, 0u);
                if constexpr (KW % 4 == 0) {
                    if (ok && (KW % 8 == 0 || ks * 8 + half * 4 < KW)) ldg16(r[c], src[c] + ks * 8);
                } else {
                    const long long wd = (long long)ks * 8 + half * 4;
                    if (ok && wd < KW) ldg4(r[c].x, src[c] + wd);
                    if (ok && wd + 1 < KW) ldg4(r[c].y, src[c] + wd + 1);
                    if (ok && wd + 2 < KW) ldg4(r[c].z, src[c] + wd + 2);
                    if (ok && wd + 3 < KW) ldg4(r[c].w, src[c] + wd + 3);
                }
            }
        }
        if (++ks == KS) {
            ks = 0;
            tile += stride;
            if (tile < ntiles) point(rows, x, w);
        }
    }
    // The next k-step straight into stage st by cp.async (zero-filled likewise), then move on.
    __device__ __forceinline__ void copy(int st, long long ntiles, long long rows, const u32 *x, const u32 *w) {
        if (tile < ntiles) {
#pragma unroll
            for (int c = 0; c < NCH; c++) {
                if (S::ROWS * 2 % 256 != 0 && row0 + 128 * c >= S::ROWS) continue;
                const u32 d = dst + (u32)st * STAGE_BYTES + 4096u * (u32)c;
                const bool ok = (live >> c) & 1u;
                if constexpr (KW % 4 == 0) {
                    const bool v = ok && (KW % 8 == 0 || ks * 8 + half * 4 < KW);
                    cp_async16(d, src[c] + (v ? ks * 8 : 0), v ? 16 : 0);
                } else {
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        const long long wd = (long long)ks * 8 + half * 4 + j;
                        const bool v = ok && wd < KW;
                        cp_async4(d + 4u * (u32)j, src[c] + (v ? wd : 0), v ? 4 : 0);
                    }
                }
            }
        }
        if (++ks == KS) {
            ks = 0;
            tile += stride;
            if (tile < ntiles) point(rows, x, w);
        }
    }
    // r into stage st.
    __device__ __forceinline__ void store(const uint4 (&r)[NCH], int st) const {
#pragma unroll
        for (int c = 0; c < NCH; c++) {
            if (S::ROWS * 2 % 256 != 0 && row0 + 128 * c >= S::ROWS) continue;
            sts16(dst + (u32)st * STAGE_BYTES + 4096u * (u32)c, r[c]);
        }
    }
};

// The outputs of one warp's part of a tile at (r0, c0): MI m16 x NJ n8 fragments from tile row
// wr and column wc, tint(i, h, j, e) the exact integer t of the lane's element: row
// wr + 16 i + g + 8 h, column wc + 8 j + 2 tq + e (the mma / wgmma accumulator layout).  Each is
// stored as its float, or its bit (for the plain sign, the integer's sign: t >= 0 is
// !signbit((float)t) for an integer t).  FULL: no element of the tile lies outside the output, so
// nothing is checked.  Output b1: the 4 lanes of a row group OR their bits of a 32-column word
// together (two shuffles); lane tq = 0 stores the word; bits past M are 0.
template <char Z, long long M, int MI, int NJ, bool FULL, class Epi, class T>
__device__ __forceinline__ void tc_store(long long rows, void *yp, long long r0, long long c0, int wr, int wc,
                                         int lane, const Epi &epi, T tint) {
    constexpr long long MW = words_of(M);
    const int g = lane >> 2, tq = lane & 3;
#pragma unroll
    for (int i = 0; i < MI; i++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const long long r = r0 + wr + 16 * i + g + 8 * h;
            const bool rok = FULL || r < rows;
            if constexpr (Z == 'F') {
                if (!rok) continue; // the epilogue may read row factors: only real rows
                float *yr = (float *)yp + r * M;
#pragma unroll
                for (int j = 0; j < NJ; j++) {
                    const long long c = c0 + wc + 8 * j + 2 * tq;
                    if (M % 2 == 0 && (FULL || c < M)) { // c, M even: an aligned pair
                        const float v0 = ep_val(epi, r, c, (float)tint(i, h, j, 0));
                        const float v1 = ep_val(epi, r, c + 1, (float)tint(i, h, j, 1));
                        *reinterpret_cast<float2 *>(yr + c) = make_float2(v0, v1);
                    } else {
                        if (FULL || c < M) yr[c] = ep_val(epi, r, c, (float)tint(i, h, j, 0));
                        if (FULL || c + 1 < M) yr[c + 1] = ep_val(epi, r, c + 1, (float)tint(i, h, j, 1));
                    }
                }
            } else {
#pragma unroll
                for (int wd = 0; wd < (NJ + 3) / 4; wd++) {
                    u32 bits = 0u;
#pragma unroll
                    for (int jj = 0; jj < 4; jj++) {
                        const int j = 4 * wd + jj;
                        if (j >= NJ) break;
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int lc = wc + 8 * j + 2 * tq + e;
                            if (!FULL && !(rok && c0 + lc < M)) continue;
                            u32 bit;
                            if constexpr (Epi::identity) bit = tint(i, h, j, e) >= 0 ? 1u : 0u;
                            else bit = ep_bit(epi, r, c0 + lc, (float)tint(i, h, j, e));
                            bits |= bit << (8 * jj + 2 * tq + e);
                        }
                    }
                    bits |= __shfl_xor_sync(0xffffffffu, bits, 1);
                    bits |= __shfl_xor_sync(0xffffffffu, bits, 2);
                    const long long word = (c0 + wc) / 32 + wd;
                    if (tq == 0 && rok && (FULL || word < MW)) ((u32 *)yp)[r * MW + word] = bits;
                }
            }
        }
    }
}

// The plain sign (bmm.BBB, no epilogue) of a whole tile (no element outside the output): for the
// lane's elements, t = 4 acc + (K - 2 popc(x)) - 2 popc(w) with the popcounts in cnt (the x rows
// of the tile at [0, BM), its w rows at [BM, ..)).  Each element's sign bit goes into the word
// by one funnel shift (2 bits, a column pair, in each byte), the bits are inverted (t >= 0 is
// 1), then the 4 lanes of a row group OR their words together as in tc_store.  The same bits as
// tc_store's (t >= 0 for an exact integer t), in about half its instructions.
template <long long K, long long M, int BM, int MI, int NJ>
__device__ __forceinline__ void tc_store_sign(void *yp, long long r0, long long c0, int wr, int wc, int lane,
                                              const int (&acc)[MI][NJ][4], const int *cnt) {
    static_assert(NJ % 4 == 0, "tc_store_sign: whole 32-column words a warp");
    constexpr long long MW = words_of(M);
    const int g = lane >> 2, tq = lane & 3;
    int cw2[NJ][2];
#pragma unroll
    for (int j = 0; j < NJ; j++) {
        const int2 cw = *reinterpret_cast<const int2 *>(&cnt[BM + wc + 8 * j + 2 * tq]);
        cw2[j][0] = 2 * cw.x;
        cw2[j][1] = 2 * cw.y;
    }
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int rt = (int)K - 2 * cnt[wr + 16 * i + g + 8 * h];
            const long long r = r0 + wr + 16 * i + g + 8 * h;
#pragma unroll
            for (int wd = 0; wd < NJ / 4; wd++) {
                u32 bits = 0u; // sign bits: column 8 jj + 2 tq + e at bit 8 jj + e
#pragma unroll
                for (int jj = 3; jj >= 0; jj--) {
                    const int j = 4 * wd + jj;
                    if (jj < 3) bits <<= 6;
#pragma unroll
                    for (int e = 1; e >= 0; e--)
                        bits = __funnelshift_l((u32)(4 * acc[i][j][2 * h + e] + rt - cw2[j][e]), bits, 1);
                }
                bits = (~bits & 0x03030303u) << (2 * tq);
                bits |= __shfl_xor_sync(0xffffffffu, bits, 1);
                bits |= __shfl_xor_sync(0xffffffffu, bits, 2);
                if (tq == 0) ((u32 *)yp)[r * MW + (c0 + wc) / 32 + wd] = bits;
            }
        }
}

// Whether a product of `rows` rows and M columns runs in TcSmallShape's tiles: where it has
// them and TcShape's tiles would be fewer than nsm (the multiprocessors; %nsmid on the device).
// The one rule: bmm_bb_tc and the benchmark's report (bench/bmm_tc_bench.cu) both ask it.
template <long long M>
__host__ __device__ constexpr bool tc_small_tiles(long long rows, long long nsm) {
    using B = TcShape<M>;
    return TcSmallShape<M>::HAS && (rows + B::BM - 1) / B::BM * ((M + B::BN - 1) / B::BN) < nsm;
}

template <char Z, long long K, long long M, class S, class Epi>
__device__ __forceinline__ void bmm_bb_tc_tiles(long long rows, void *yp, const void *xp, const void *wp, const Epi &epi);

// rows = R (run time); y f32 [R][M] or b1 [R][ceil(M/32)]; x b1 [R][KW]; w b1t [M][KW].  A BB
// product has no prologue (a prologue normalises F activations): the parameter is there so
// that the code generator calls every bmm alike.
// The product in TcShape's tiles, or in TcSmallShape's (tc_small_tiles: a grid-wide choice,
// every block computes it alike from rows and %nsmid, and the tiles of either shape hold the
// same integers, so the outputs are the same bits).  The plan's grid is sized for the small
// tiles (bg_plan_bmm_tc_threads_per_row); the blocks past the ones the chosen tiles use return
// at once.
template <char Z, long long K, long long M, class Pro = ProNone, class Epi = EpEnd>
__device__ __forceinline__ void bmm_bb_tc(long long rows, void *yp, const void *xp, const void *wp,
                                          Pro = Pro(), Epi epi = Epi()) {
    if constexpr (TcSmallShape<M>::HAS) {
        u32 nsm;
        asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
        if (tc_small_tiles<M>(rows, (long long)nsm)) {
            bmm_bb_tc_tiles<Z, K, M, TcSmallShape<M>>(rows, yp, xp, wp, epi);
            return;
        }
    }
    bmm_bb_tc_tiles<Z, K, M, TcShape<M>>(rows, yp, xp, wp, epi);
}

template <char Z, long long K, long long M, class S, class Epi>
__device__ __forceinline__ void bmm_bb_tc_tiles(long long rows, void *yp, const void *xp, const void *wp, const Epi &epi) {
    using L = TcLoader<K, M, S>;
    static_assert(Z == 'F' || Z == 'B', "bmm_bb_tc: the output is F or B");
    static_assert(sizeof(TcSmem<S>) <= sizeof(FbtSmem), "bmm_bb_tc: its tiles outgrow the shared block");
    static_assert(S::BM % 16 == 0 && S::BN % 16 == 0, "bmm_bb_tc: tiles of 16-row groups");
    static_assert(S::WARPS_N == 1 || S::NJ % 4 == 0, "bmm_bb_tc: whole 32-column words a warp (b1 stores)");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    static_assert(Z != Z, "bmm_bb_tc: needs sm_80 or later");
#endif
    TcSmem<S> &sm = *reinterpret_cast<TcSmem<S> *>(&fbt_smem());
    constexpr long long KS = L::KS, NTN = L::NTN;
    // Count tasks of a warp (each one mma of 16 rows, taken from the product's fragments, against
    // all ones): the x m-tiles i of its rows with i % WARPS_N == wn, the w n16 groups jj of its
    // columns with jj % WARPS_M == wm.
    constexpr int QX = (S::MI + S::WARPS_N - 1) / S::WARPS_N, QW = (S::NJ / 2 + S::WARPS_M - 1) / S::WARPS_M;
    const u32 *x = (const u32 *)xp, *w = (const u32 *)wp;
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / S::WARPS_N, wn = warp % S::WARPS_N;
    const int wr = wm * S::MI * 16; // the warp's first tile row
    const int wc = wn * S::NJ * 8;  // the warp's first tile column
    const int g = lane >> 2, tq = lane & 3;
    const long long ntiles = (rows + S::BM - 1) / S::BM * NTN;
    // The blocks that take part: at most TC_WAVES a multiprocessor (the plan launches about one
    // block a tile; a block that goes on to its next tile loads it under the current one's
    // mma, one that starts has nothing to hide its first loads under).  The others return now.
    u32 nsm;
    asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
    const long long nblk = min(min((long long)gridDim.x, ntiles), (long long)nsm * TC_WAVES);
    if ((long long)blockIdx.x >= nblk) return;
    // k-steps of this block: its tiles (blockIdx.x, + nblk, ...) one after another
    const long long total = ((ntiles - 1 - (long long)blockIdx.x) / nblk + 1) * KS;
    int acc[S::MI][S::NJ][4];
    int cntx[QX][4], cntw[QW][4];
    auto zero = [&]() {
#pragma unroll
        for (int i = 0; i < S::MI; i++)
#pragma unroll
            for (int j = 0; j < S::NJ; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[i][j][e] = 0;
#pragma unroll
        for (int e = 0; e < 4; e++) {
#pragma unroll
            for (int q = 0; q < QX; q++) cntx[q][e] = 0;
#pragma unroll
            for (int q = 0; q < QW; q++) cntw[q][e] = 0;
        }
    };
    zero();
    L ld(smem_addr(&sm.rows[0][0][0]), (int)nblk);
    ld.point(rows, x, w);
    // ldmatrix addresses of stage 0: the warp's first m16 tile (A), its first n16 group (B)
    const u32 a_at = smem_addr(&sm.rows[0][0][0]) + (u32)wr * 32u + tc_lane_off<false>(lane);
    const u32 b_at = smem_addr(&sm.rows[0][0][0]) + (u32)(S::BM + wc) * 32u + tc_lane_off<true>(lane);
    uint4 ra[TC_REGSTAGE ? L::NCH : 1], rb[TC_REGSTAGE ? L::NCH : 1]; // in flight: even steps in ra, odd in rb
    __syncthreads(); // shared memory is free: the previous phase is done with it
    if constexpr (TC_REGSTAGE) {
        ld.fetch(ra, ntiles, rows, x, w);
        ld.fetch(rb, ntiles, rows, x, w);
        ld.store(ra, 0);
    } else {
        ld.copy(0, ntiles, rows, x, w);
        cp_async_commit();
    }
    long long s = 0, tile = blockIdx.x;
    int kc = 0; // k-step of the tile being computed
    // The epilogue of the tile just computed: the counts through shared memory, then the outputs.
    auto epilogue = [&]() {
        const long long r0 = tile / NTN * S::BM, c0 = tile % NTN * S::BN;
        if (tq == 0) { // every column of a count mma holds the count
#pragma unroll
            for (int q = 0; q < QX; q++) {
                const int i = wn + q * S::WARPS_N;
                if (QX * S::WARPS_N == S::MI || i < S::MI) {
                    sm.cnt[wr + 16 * i + g] = cntx[q][0];
                    sm.cnt[wr + 16 * i + g + 8] = cntx[q][2];
                }
            }
#pragma unroll
            for (int q = 0; q < QW; q++) {
                const int jj = wm + q * S::WARPS_M;
                if (jj < S::NJ / 2) {
                    sm.cnt[S::BM + wc + 16 * jj + g] = cntw[q][0];
                    sm.cnt[S::BM + wc + 16 * jj + g + 8] = cntw[q][2];
                }
            }
        }
        __syncthreads();
        if constexpr (Z == 'B' && Epi::identity && S::NJ % 4 == 0) {
            if (r0 + S::BM <= rows && c0 + S::BN <= M) {
                tc_store_sign<K, M, S::BM, S::MI, S::NJ>(yp, r0, c0, wr, wc, lane, acc, sm.cnt);
                return;
            }
        }
        // t = K - 2 popc(x XOR w) = (K - 2 popc(x)) + (-2 popc(w)) + 4 popc(x AND w): exact
        // integers (|t| <= K < 2^24), so exact as floats too.  Folded into acc in place, a
        // column pair at a time, so that few registers hold the counts.
        int rterm[S::MI][2];
#pragma unroll
        for (int i = 0; i < S::MI; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) rterm[i][h] = (int)K - 2 * sm.cnt[wr + 16 * i + g + 8 * h];
#pragma unroll
        for (int j = 0; j < S::NJ; j++) {
            const int2 cw = *reinterpret_cast<const int2 *>(&sm.cnt[S::BM + wc + 8 * j + 2 * tq]);
#pragma unroll
            for (int i = 0; i < S::MI; i++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    acc[i][j][2 * h] = rterm[i][h] - 2 * cw.x + 4 * acc[i][j][2 * h];
                    acc[i][j][2 * h + 1] = rterm[i][h] - 2 * cw.y + 4 * acc[i][j][2 * h + 1];
                }
        }
        auto tint = [&](int i, int h, int j, int e) { return acc[i][j][2 * h + e]; };
        if (r0 + S::BM <= rows && c0 + S::BN <= M)
            tc_store<Z, M, S::MI, S::NJ, true>(rows, yp, r0, c0, wr, wc, lane, epi, tint);
        else
            tc_store<Z, M, S::MI, S::NJ, false>(rows, yp, r0, c0, wr, wc, lane, epi, tint);
    };
    // One k-step s (parity P = s % 2: stage P; with TC_REGSTAGE the step's registers were ra / rb).
    auto step = [&](auto p_c) {
        constexpr int P = decltype(p_c)::value;
        if constexpr (TC_REGSTAGE) {
            // One barrier a step: stage P is complete for every thread, and every warp is done
            // with stage P ^ 1 (read at step s - 1), which this step's store overwrites.
            __syncthreads();
            ld.fetch(P ? rb : ra, ntiles, rows, x, w); // free now (stored to stage P): step s + 2
        } else {
            cp_async_wait<0>();
            __syncthreads(); // likewise: stage P has landed, stage P ^ 1 is free for step s + 1
            if (s + 1 < total) ld.copy(P ^ 1, ntiles, rows, x, w);
            cp_async_commit();
        }
        constexpr u32 SO = (u32)P * L::STAGE_BYTES;
        u32 a[S::MI][4], b[2][4];
#pragma unroll
        for (int i = 0; i < S::MI; i++) ldsm_x4_at(a[i], a_at + SO + 512u * i);
        ldsm_x4_at(b[0], b_at + SO);
#pragma unroll
        for (int jj = 0; jj < S::NJ / 2; jj++) {
            const u32(&bc)[4] = b[jj & 1]; // {b0, b1} of n-tile 2jj, then of 2jj + 1
            if (jj + 1 < S::NJ / 2) ldsm_x4_at(b[(jj + 1) & 1], b_at + SO + 512u * (jj + 1));
#pragma unroll
            for (int i = 0; i < S::MI; i++) {
                mma_b1_and(acc[i][2 * jj], a[i], bc[0], bc[1]);
                mma_b1_and(acc[i][2 * jj + 1], a[i], bc[2], bc[3]);
            }
            if (jj % S::WARPS_M == wm) { // the 16 w rows as an A operand, against all ones
                const u32 f[4] = {bc[0], bc[2], bc[1], bc[3]};
                mma_b1_and(cntw[jj / S::WARPS_M], f, ~0u, ~0u);
            }
        }
#pragma unroll
        for (int i = 0; i < S::MI; i++)
            if (i % S::WARPS_N == wn) mma_b1_and(cntx[i / S::WARPS_N], a[i], ~0u, ~0u);
        if constexpr (TC_REGSTAGE)
            if (s + 1 < total) ld.store(P ? ra : rb, P ^ 1); // step s + 1
        s++;
        if (++kc == KS) {
            epilogue();
            zero();
            kc = 0;
            tile += nblk;
        }
    };
    while (true) {
        step(TcBool<false>());
        if (s >= total) break;
        step(TcBool<true>());
        if (s >= total) break;
    }
}

} // namespace bgnn

#endif // BGNN_BMM_BB_TC_CUH
