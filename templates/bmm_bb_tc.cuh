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
// K goes in steps of 256 bits, 8 words a row.  Each step's x and w rows are copied to shared
// memory with cp.async (16-byte chunks when KW % 4 == 0, else single words; zero-filled past
// R, M and KW), in two stages so the next step's copy runs under this step's mma.  Fragments
// are read with ldmatrix.x4; the two 16-byte halves of a 32-byte row are swapped in every
// other group of 4 rows, so the 8 rows of an 8x8 matrix fall on 8 distinct bank groups.  The
// count tasks (16 rows of the tile's x or w each) are spread over the 8 warps.  Tiles go
// grid-stride: the plan's grid is about one block a tile (bg_plan_bmm_tc_threads_per_row),
// a fused kernel's grid may be any size.
//
// Output f32: each lane stores its accumulator elements (2 adjacent columns, rows g and g+8).
// Output b1: the 4 lanes of a row group OR their bits of a 32-column word together (two
// shuffles); lane 0 of the group stores the word; bits past M are 0.
//
// Shared memory: the block of bmm_fb_tiled.cuh (FbtSmem), reused.  The __shared__ variables of
// a kernel add up against its 48 KB static limit, and a fused kernel runs its phases one
// after another, each beginning after a barrier; each tile here begins with __syncthreads().
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
};

constexpr int TC_STAGES = 2;
template <bool B>
struct TcBool {
    static constexpr bool value = B;
};

template <class S>
struct TcSmem {
    u32 rows[TC_STAGES][S::ROWS][8]; // a step's 256 bits of each row, halves swizzled
    int cnt[S::ROWS];                // popc of each x row (0..BM-1) and w row (BM..) of the tile
};

// ---- PTX wrappers ----------------------------------------------------------------------
__device__ __forceinline__ u32 smem_addr(const void *p) { return (u32)__cvta_generic_to_shared(p); }
// Copy 16 (or 4) bytes from global src to the shared address dst; only the first `valid` bytes
// are read, the rest of dst is zero-filled (valid = 0: nothing is read).
__device__ __forceinline__ void cp_async16(u32 dst, const void *src, int valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid));
}
__device__ __forceinline__ void cp_async4(u32 dst, const void *src, int valid) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
__device__ __forceinline__ void ldsm_x4(u32 (&r)[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}
// d += popc(a AND b) over a 16 x 256 by 256 x 8 bit product.
__device__ __forceinline__ void mma_b1_and(int (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
    asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The shared address of (row, 16-byte half) of a stage: halves swapped in every other group of 4 rows.
template <class S>
__device__ __forceinline__ const u32 *tc_at(const TcSmem<S> &sm, int st, int row, int half) {
    return &sm.rows[st][row][(half ^ ((row >> 2) & 1)) * 4];
}
// ldmatrix.x4 of the 16 shared rows from row0.  A order: {rows 0-7, rows 8-15} x {words 0-3,
// 4-7} = the m16n8k256 A fragment {a0, a1, a2, a3} of those rows.  B order: {words 0-3, 4-7}
// x {rows 0-7, rows 8-15} = the B fragments {b0, b1} of the n8 tile of rows 0-7, then of rows
// 8-15, each pair in consecutive registers as the mma reads it.
template <bool B_ORDER, class S>
__device__ __forceinline__ void tc_frag(u32 (&r)[4], const TcSmem<S> &sm, int st, int row0, int lane) {
    const int m = lane >> 3; // the 8x8 matrix this lane addresses a row of
    const int row = row0 + (B_ORDER ? (m >> 1) : (m & 1)) * 8 + (lane & 7), half = B_ORDER ? (m & 1) : (m >> 1);
    ldsm_x4(r, tc_at(sm, st, row, half));
}

// The copies of one thread into a stage.  Chunk c of the thread is 16 bytes (half `half` of
// a 32-byte row step) of shared row (tid / 2) + 128 c: x row r0 + row while row < BM, else w
// row c0 + row - BM.  Set up once a tile; a k-step then only offsets the source by 8 words.
template <long long K, long long M, class S>
struct TcLoader {
    static constexpr long long KW = words_of(K);
    static constexpr int NCH = (S::ROWS * 2 + 255) / 256; // chunks a thread
    static constexpr u32 STAGE_BYTES = S::ROWS * 32;
    const u32 *src[NCH]; // this chunk's 16 bytes at k-step 0 (a valid address even when !live)
    unsigned live;       // bit c: chunk c's row exists (r0 + row < rows, c0 + row - BM < M)
    u32 dst;             // shared address of chunk 0 in stage 0 (chunk c: + 4096 c)
    int half;
    __device__ __forceinline__ TcLoader(const TcSmem<S> &sm, long long rows, long long r0, long long c0,
                                        const u32 *x, const u32 *w) {
        const int tid = (int)threadIdx.x;
        half = tid & 1;
        const int row0 = tid >> 1; // bit 2 of the row is the same for every chunk (128 c)
        dst = smem_addr(&sm.rows[0][row0][0]) + 16u * (u32)(half ^ ((row0 >> 2) & 1));
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
    // Stage st <- k-step ks; zero-filled past the rows and past KW.
    __device__ __forceinline__ void load(int st, long long ks) const {
#pragma unroll
        for (int c = 0; c < NCH; c++) {
            if (S::ROWS * 2 % 256 != 0 && (int)(threadIdx.x >> 1) + 128 * c >= S::ROWS) continue;
            const u32 d = dst + (u32)st * STAGE_BYTES + 4096u * (u32)c;
            const bool ok = (live >> c) & 1u;
            if constexpr (KW % 4 == 0) {
                const bool v = ok && (KW % 8 == 0 || ks * 8 + half * 4 < KW);
                cp_async16(d, src[c] + (v ? ks * 8 : 0), v ? 16 : 0);
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const long long wd = ks * 8 + half * 4 + j;
                    const bool v = ok && wd < KW;
                    cp_async4(d + 4u * (u32)j, src[c] + (v ? wd : 0), v ? 4 : 0);
                }
            }
        }
    }
};

// rows = R (run time); y f32 [R][M] or b1 [R][ceil(M/32)]; x b1 [R][KW]; w b1t [M][KW].  A BB
// product has no prologue (a prologue normalises F activations): the parameter is there so
// that the code generator calls every bmm alike.
template <char Z, long long K, long long M, class Pro = ProNone, class Epi = EpEnd>
__device__ __forceinline__ void bmm_bb_tc(long long rows, void *yp, const void *xp, const void *wp,
                                          Pro = Pro(), Epi epi = Epi()) {
    using S = TcShape<M>;
    static_assert(Z == 'F' || Z == 'B', "bmm_bb_tc: the output is F or B");
    static_assert(sizeof(TcSmem<S>) <= sizeof(FbtSmem), "bmm_bb_tc: its tiles outgrow the shared block");
    static_assert(S::BM % 16 == 0 && S::BN % 16 == 0, "bmm_bb_tc: tiles of 16-row groups");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    static_assert(Z != Z, "bmm_bb_tc: needs sm_80 or later");
#endif
    TcSmem<S> &sm = *reinterpret_cast<TcSmem<S> *>(&fbt_smem());
    constexpr long long KW = words_of(K), KS = (KW + 7) / 8, MW = words_of(M);
    constexpr long long NTN = (M + S::BN - 1) / S::BN; // column tiles
    const u32 *x = (const u32 *)xp, *w = (const u32 *)wp;
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wr = (warp / S::WARPS_N) * S::MI * 16; // the warp's first tile row
    const int wc = (warp % S::WARPS_N) * S::NJ * 8;  // the warp's first tile column
    const int g = lane >> 2, tq = lane & 3;
    const long long ntiles = (rows + S::BM - 1) / S::BM * NTN;
    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const long long r0 = tile / NTN * S::BM, c0 = tile % NTN * S::BN;
        int acc[S::MI][S::NJ][4];
        int cnt[S::TPW][4];
#pragma unroll
        for (int i = 0; i < S::MI; i++)
#pragma unroll
            for (int j = 0; j < S::NJ; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[i][j][e] = 0;
#pragma unroll
        for (int q = 0; q < S::TPW; q++)
#pragma unroll
            for (int e = 0; e < 4; e++) cnt[q][e] = 0;
        __syncthreads(); // shared memory is free: the previous tile (or phase) is done with it
        const TcLoader<K, M, S> ld(sm, rows, r0, c0, x, w);
        ld.load(0, 0);
        cp_async_commit();
        for (long long ks = 0; ks < KS; ks++) {
            const int st = (int)(ks & 1);
            cp_async_wait<0>();
            // One barrier a step: stage st has landed for every thread, and every warp is done
            // with stage st ^ 1 (read at step ks - 1), which the next copy overwrites.
            __syncthreads();
            if (ks + 1 < KS) {
                ld.load(st ^ 1, ks + 1); // in flight while this step computes
                cp_async_commit();
            }
            u32 a[S::MI][4];
#pragma unroll
            for (int i = 0; i < S::MI; i++) tc_frag<false>(a[i], sm, st, wr + 16 * i, lane);
#pragma unroll
            for (int jj = 0; jj < S::NJ / 2; jj++) {
                u32 b[4]; // {b0, b1} of n-tile 2jj, then of 2jj + 1
                tc_frag<true>(b, sm, st, S::BM + wc + 16 * jj, lane);
#pragma unroll
                for (int i = 0; i < S::MI; i++) {
                    mma_b1_and(acc[i][2 * jj], a[i], b[0], b[1]);
                    mma_b1_and(acc[i][2 * jj + 1], a[i], b[2], b[3]);
                }
            }
#pragma unroll
            for (int q = 0; q < S::TPW; q++) {
                const int task = warp + 8 * q; // warp-uniform
                if (task < S::TASKS) {
                    u32 f[4];
                    tc_frag<false>(f, sm, st, 16 * task, lane);
                    mma_b1_and(cnt[q], f, ~0u, ~0u);
                }
            }
        }
#pragma unroll
        for (int q = 0; q < S::TPW; q++) {
            const int task = warp + 8 * q;
            if (task < S::TASKS && tq == 0) { // every column of a count task holds the count
                sm.cnt[16 * task + g] = cnt[q][0];
                sm.cnt[16 * task + g + 8] = cnt[q][2];
            }
        }
        __syncthreads();
        // t = K - 2 popc(x XOR w) = (K - 2 popc(x)) + (-2 popc(w)) + 4 popc(x AND w): exact
        // integers (|t| <= K < 2^24), so exact as floats too.  The row and column terms of this
        // lane's elements are read once a tile.
        int rterm[S::MI][2], cterm[S::NJ][2];
#pragma unroll
        for (int i = 0; i < S::MI; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) rterm[i][h] = (int)K - 2 * sm.cnt[wr + 16 * i + g + 8 * h];
#pragma unroll
        for (int j = 0; j < S::NJ; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) cterm[j][e] = -2 * sm.cnt[S::BM + wc + 8 * j + 2 * tq + e];
        // The output of element (i, h, j, e) of this lane: its float, or its bit (for the plain
        // sign, the integer's sign: t >= 0 is !signbit((float)t) for an integer t).
        auto tint = [&](int i, int h, int j, int e) { return rterm[i][h] + cterm[j][e] + 4 * acc[i][j][2 * h + e]; };
        // FULL: no element of the tile lies outside the output, so nothing is checked.
        auto store = [&](auto full_c) {
            constexpr bool FULL = decltype(full_c)::value;
#pragma unroll
            for (int i = 0; i < S::MI; i++) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const long long r = r0 + wr + 16 * i + g + 8 * h;
                    const bool rok = FULL || r < rows;
                    if constexpr (Z == 'F') {
                        if (!rok) continue; // the epilogue may read row factors: only real rows
                        float *yr = (float *)yp + r * M;
#pragma unroll
                        for (int j = 0; j < S::NJ; j++) {
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
                        for (int wd = 0; wd < (S::NJ + 3) / 4; wd++) {
                            u32 bits = 0u;
#pragma unroll
                            for (int jj = 0; jj < 4; jj++) {
                                const int j = 4 * wd + jj;
                                if (j >= S::NJ) break;
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
        };
        if (r0 + S::BM <= rows && c0 + S::BN <= M) store(TcBool<true>());
        else store(TcBool<false>());
    }
}

} // namespace bgnn

#endif // BGNN_BMM_BB_TC_CUH
