// bmm_bb_wgs.cuh - bmm.BB{B,F} on Hopper's warpgroup tensor cores (wgmma .b1, AND form), fed by
// a warp-specialized cp.async pipeline (sm_90a).  Timed by bench/bmm_tc_bench.cu as "wgmma
// warp-specialized" (docs/performance.md); the plan chooses it for wide products on sm_90
// (compiler/codegen/plan_build.c bg_plan_bmm_wgs: an sm_90a compile, 384-thread launches with
// dynamic shared memory, bmm_bb_wgs_launch below).  The wgmma wrappers: wgmma_b1.cuh.
// The result is the mma.sync kernel's, bit for bit: t[r,o] = K - 2 popc(x_r) -
// 2 popc(w_o) + 4 popc(x_r AND w_o), exact integers, through the same stores (tc_store; a whole
// tile of a plain BBB through wgs_store_sign, tc_store_sign's bits without shuffles: its w rows
// are copied in a permuted order, so that each thread's accumulators are whole output words).
//
// What differs from the benchmark's bench/kernels/bmm_bb_wg.cuh (register-staged, two stages, two
// barriers a step):
// * 384 threads: two consumer warpgroups (64 rows each of a 128 x BN tile, BN = WgShape<M>::BN,
//   one m64nBNk256 wgmma a k-step each, accumulators in registers) and a producer warpgroup that
//   alone copies the operands global -> shared by cp.async (16 bytes, zero-filled past the rows
//   and K; a whole tile's copies without the fill and its select, cp_async16_at) into WGP_NS
//   stages of 512 bits (two k-steps) of dynamic shared memory.  setmaxnreg
//   moves registers from the producer (40) to the consumers (232).  Stages are handed over by
//   mbarriers: full[slot] (128 arrivals, each producer thread's cp.async.mbarrier.arrive.noinc,
//   which fires when that thread's copies have landed) and empty[slot] (8 arrivals, each
//   consumer warp once its wgmma of the stage are done).  The consumers' proxy fence
//   (fence.proxy.async, a MEMBAR in machine code) has no copies of their own to wait for: in a
//   form where every thread copied and computed, it waited for the copies of the stages ahead,
//   and the kernel ran at the speed of one L2 round trip a stage;
// * the popcounts are counted by the tensor cores too, by small wgmma against an all-ones
//   operand (8 rows of 256 set bits in shared memory): popc of the warpgroup's 64 x rows (m64n8,
//   x as A) and of 64-row blocks of the tile's w rows (m64n8, w as A), so no CUDA-core work and
//   no branch sits in the loop (with WC, the w rows' popcounts are given instead: a table
//   computed once, w being a weight, and 4 of the 6 wgmma a k-step are gone);
// * each consumer warpgroup keeps its own counts and count table; where two tiles' stages fit in
//   the ring (short K), their stage loops alternate (ping-pong), so that one's epilogue runs
//   while the other's wgmma keep the tensor cores busy;
// * shared layout: a stage is the tile's x rows, then its w rows, each row's 512 bits as 64
//   bytes in wgmma's 64-byte swizzle (16-byte chunk c of row r at 64 r + 16 (c ^ ((r >> 1) & 3)),
//   atoms of 8 rows 512 bytes apart, the block 1024-aligned): a global 32-byte sector lands in one
//   32-byte piece of shared memory, and a quarter warp's copies (2 rows) on distinct banks.  (A
//   chunk-major layout without swizzle, each core matrix's 8 rows x 16 bytes contiguous, read
//   every sector from L2 twice: its two 16-byte halves went to different places.)
// Tiles: blockIdx.x, + nblk, ... (nblk = min(grid, tiles, %nsmid)), the stages of a block's tiles
// one sequence.  Needs K a multiple of 128 (whole 16-byte chunks: the rows' starts are then
// 16-byte aligned), blockDim.x == 384 and the dynamic shared memory of wgs_smem_bytes<M>().
#ifndef BGNN_BMM_BB_WGS_CUH
#define BGNN_BMM_BB_WGS_CUH

#include "wgmma_b1.cuh"

#ifndef BGNN_WGP_NS
#define BGNN_WGP_NS 6
#endif
#ifndef BGNN_WGP_DIAG
#define BGNN_WGP_DIAG 0 // benchmark diagnosis only (wrong results): 1 no epilogue, 3 no proxy fence
#endif

namespace bgnn {

constexpr int WGP_NS = BGNN_WGP_NS;
template <long long M>
struct WgsShape {
    static constexpr int BM = 128, BN = WgShape<M>::BN;
    static constexpr int RB = BN < 64 ? 64 : BN;         // w rows a stage (64 at least: the count wgmma's m64)
    static constexpr int NQ = RB / 64;                   // 64-row count blocks of w (each warpgroup counts all)
    static constexpr int NUA = BM / 32, NUB = RB / 32;   // copies a producer thread a stage (x, w)
    static constexpr u32 AB = BM * 64;                   // the x rows of a stage (64 bytes each), then the w rows
    static constexpr u32 STAGE = (BM + RB) * 64;         // a multiple of 1024: the swizzle atoms stay aligned
    static constexpr u32 ONES = WGP_NS * STAGE;          // 256 bytes of set bits
    static constexpr int CT = BM + RB;                   // a count table: the x rows' popcounts, then the w rows'
    static constexpr u32 CNT = ONES + 256;               // int cnt[2 warpgroups][2][CT]
    static constexpr u32 BARS = CNT + 4 * 4 * CT;        // u64 full[NS], empty[NS]
    static constexpr u32 BYTES = BARS + 16 * WGP_NS + 1024; // + the slack that aligns the base to 1024
};
template <long long M>
constexpr unsigned wgs_smem_bytes() { return WgsShape<M>::BYTES; }

#if BGNN_TC_WGMMA
// A shared-memory matrix descriptor (wgmma_b1.cuh's wg_desc: no swizzle) for rows of 64 bytes in
// the 64-byte swizzle (layout type 2): 8-row groups 512 bytes apart; a k-step j of the row adds
// 32 j bytes to the start.
__device__ __forceinline__ u64 wgp_desc_sw64(u32 addr) {
    return (u64)((addr & 0x3FFFFu) >> 4) | ((u64)1 << 16) | ((u64)(512 >> 4) << 32) | ((u64)2 << 62);
}
// Byte offset of 16-byte chunk c of row r in an operand region (rows of 64 bytes, swizzled).
__device__ __forceinline__ u32 wgp_off(int r, int c) { return (u32)(64 * r + 16 * (c ^ ((r >> 1) & 3))); }
// The dynamic shared block, its base rounded up to 1024 bytes (the swizzle is of address bits).
__device__ __forceinline__ unsigned char *wgp_block() {
    extern __shared__ __align__(1024) unsigned char wgp_dyn[];
    const u32 raw = smem_addr(wgp_dyn);
    return wgp_dyn + (((raw + 1023u) & ~1023u) - raw);
}

// A 16-byte cp.async from src + OFF bytes, all of it in bounds (no zero fill); the offset a
// constant of the PTX instruction, so that a row set's copies start from one base address
// (ptxas still forms each copy's address with an add: LDGSTS takes no global offset).
template <long long OFF>
__device__ __forceinline__ void cp_async16_at(u32 dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1+%2], 16;\n" ::"r"(dst), "l"(src), "n"(OFF));
}
// f(WgsInt<u>()) for u < N, in order (u a constant of each call).
template <int U>
struct WgsInt {
    static constexpr int value = U;
};
template <int N, int U = 0, class F>
__device__ __forceinline__ void wgs_unroll(F &&f) {
    if constexpr (U < N) {
        f(WgsInt<U>());
        wgs_unroll<N, U + 1>(f);
    }
}
__device__ __forceinline__ void mbar_init(u32 a, u32 n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(a), "r"(n)); }
__device__ __forceinline__ void mbar_arrive(u32 a) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(a) : "memory");
}
__device__ __forceinline__ void mbar_arrive_cp(u32 a) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(a) : "memory");
}
// The spin is inside the asm (a scoped label), so that the compiler sees no divergent loop
// around the wgmma in flight.
__device__ __forceinline__ void mbar_wait(u32 a, u32 parity) {
    asm volatile("{\n.reg .pred p;\nWGS_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra WGS_WAIT;\n}\n" ::"r"(a),
                 "r"(parity)
                 : "memory");
}

// A whole tile of a plain bmm.BBB (no epilogue) takes its w rows in a permuted order, so that
// each thread's accumulators are whole output words and the sign needs no shuffle.  wgmma gives
// thread tq of a row group the columns 8 j + 2 tq + e (j < NJ, e < 2): the w row of tile column
// l = 2 NJ tq + 2 j + e is copied to the operand's row 8 j + 2 tq + e, so that tq holds the
// columns [2 NJ tq, 2 NJ (tq + 1)): NJ / 16 words of its two rows.
template <int NJ>
__device__ __forceinline__ int wgs_phys(int l) { // operand row of tile column l
    return 8 * ((l % (2 * NJ)) >> 1) + 2 * (l / (2 * NJ)) + (l & 1);
}
// The same for tile column lr + 32 u, lr < 32 (a producer thread's w row u).
template <int NJ>
__device__ __forceinline__ int wgs_phys_lr(int lr, int u) {
    if constexpr (NJ == 16) return 8 * (lr >> 1) + 2 * u + (lr & 1);
    else if constexpr (NJ == 32) return 8 * ((lr + 32 * (u & 1)) >> 1) + 2 * (u >> 1) + (lr & 1);
    else return wgs_phys<NJ>(lr + 32 * u); // (not a permuted tile's width)
}

// wgs_store_sign's table of the w rows' popcounts, interleaved: thread tq's column 2 j + e (tile
// column 2 NJ tq + 2 j + e) at 16 (j / 2) + 4 tq + 2 (j % 2) + e, so that the four threads of a
// row group read 16 consecutive bytes each, side by side (in tile-column order, 256 bytes apart,
// every 16-byte read of a quarter warp was a 4-way bank conflict: 10% slower on both large
// shapes than the shuffled store).
__device__ __forceinline__ int wgs_tab(int tq, int j, int e) { return 16 * (j >> 1) + 4 * tq + 2 * (j & 1) + e; }

// The plain sign of a warp's 16 rows of a whole tile (bmm.BBB, no epilogue) from accumulators in
// the permuted column order (wgs_phys): the output bit is set where t = 4 acc + (K - 2 popc(x)) -
// 2 popc(w) >= 0, as tc_store_sign computes it, each sign bit funnel-shifted into its word.
// cnt: the x rows' popcounts at [0, BM), the w rows' at BM + wgs_tab.  Each word is built as two
// 16-bit halves (shorter dependency chains), and each lane stores its row's NJ / 16 words at once.
template <long long K, long long M, int BM, int NJ>
__device__ __forceinline__ void wgs_store_sign(void *yp, long long r0, long long c0, int wr, int lane,
                                               const int (&acc)[NJ * 4], const int *cnt) {
    static_assert(NJ % 16 == 0, "wgs_store_sign: whole words a thread");
    constexpr long long MW = words_of(M);
    constexpr int NW = NJ / 16; // words a thread a row
    const int g = lane >> 2, tq = lane & 3;
    const int4 *cw = reinterpret_cast<const int4 *>(cnt + BM + wgs_tab(tq, 0, 0));
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int rt = (int)K - 2 * cnt[wr + g + 8 * h];
        auto bit = [&](int a, int c) { return (u32)(4 * a + rt - 2 * c); };
        u32 wd[NW];
#pragma unroll
        for (int k = 0; k < NW; k++) {
            u32 half[2];
#pragma unroll
            for (int hb = 0; hb < 2; hb++) {
                u32 bits = 0u; // column 2 jj + e of the half at bit 2 jj + e
#pragma unroll
                for (int jp = 3; jp >= 0; jp--) { // columns 4 jp .. 4 jp + 3 of the half
                    const int j = 16 * k + 8 * hb + 2 * jp;
                    const int4 c = cw[j / 2 * 4]; // its columns 2 j .. 2 j + 3
                    bits = __funnelshift_l(bit(acc[4 * (j + 1) + 2 * h + 1], c.w), bits, 1);
                    bits = __funnelshift_l(bit(acc[4 * (j + 1) + 2 * h], c.z), bits, 1);
                    bits = __funnelshift_l(bit(acc[4 * j + 2 * h + 1], c.y), bits, 1);
                    bits = __funnelshift_l(bit(acc[4 * j + 2 * h], c.x), bits, 1);
                }
                half[hb] = bits;
            }
            wd[k] = ~__byte_perm(half[0], half[1], 0x5410);
        }
        u32 *yr = (u32 *)yp + (r0 + wr + g + 8 * h) * MW + c0 / 32 + NW * tq;
        if constexpr (NW == 2 && MW % 2 == 0) {
            *reinterpret_cast<uint2 *>(yr) = make_uint2(wd[0], wd[1]);
        } else {
#pragma unroll
            for (int k = 0; k < NW; k++) yr[k] = wd[k];
        }
    }
}

// Each consumer warpgroup counts all the w rows itself and keeps its own count table (double-
// buffered, its own named barrier), so the two are independent but for the stages (and, with
// short K, the ping-pong order of their stage loops).
// WC: the w rows' popcounts given (wc[o] = popc of w row o, computed once: w is a parameter), in
// place of the four count wgmma a k-step (and a warpgroup's table entries written from them).
template <char Z, long long K, long long M, bool WC = false, class Epi>
__device__ __forceinline__ void bmm_bb_wgs(long long rows, void *yp, const void *xp, const void *wp, Epi epi,
                                           const int *wc = nullptr) {
    using S = WgsShape<M>;
    constexpr long long KW = words_of(K), KST = (KW + 15) / 16, NTN = (M + S::BN - 1) / S::BN;
    constexpr int NJ = S::BN / 8, NA = S::BN / 2;
    static_assert(KW % 4 == 0, "bmm_bb_wgs: K a multiple of 128");
    static_assert(Z == 'F' || Z == 'B', "bmm_bb_wgs: the output is F or B");
    // whole tiles of a plain BBB: w rows in the permuted order of wgs_store_sign
    constexpr bool PERM = Z == 'B' && Epi::identity && NJ % 16 == 0;
    auto permuted = [&](long long r0, long long c0) { return PERM && r0 + S::BM <= rows && c0 + S::BN <= M; };
    unsigned char *wgp_dyn = wgp_block();
    const int tid = (int)threadIdx.x, lane = tid & 31;
    const int warp = __shfl_sync(0xffffffffu, tid >> 5, 0); // warp-uniform, as the compiler sees it
    const long long ntiles = (rows + S::BM - 1) / S::BM * NTN;
    u32 nsm;
    asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
    const long long nblk = min(min((long long)gridDim.x, ntiles), (long long)nsm);
    if ((long long)blockIdx.x >= nblk) return;
    const long long total = ((ntiles - 1 - (long long)blockIdx.x) / nblk + 1) * KST; // stages
    const u32 base = smem_addr(wgp_dyn);
    const u32 full0 = base + S::BARS, empty0 = full0 + 8 * WGP_NS;
    if (tid < 64) reinterpret_cast<u32 *>(wgp_dyn + S::ONES)[tid] = 0xffffffffu;
    if (tid == 0)
        for (int i = 0; i < WGP_NS; i++) {
            mbar_init(full0 + 8 * i, 128);
            mbar_init(empty0 + 8 * i, 8);
        }
    __syncthreads();

    if (warp >= 8) { // ---- the producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        const u32 *x = (const u32 *)xp, *w = (const u32 *)wp;
        const int lr = (tid - 256) >> 2, ch = tid & 3;
        long long tile = blockIdx.x;
        long long ks = 0;
        const u32 *pa = nullptr, *pb = nullptr;
        int na = 0, nb = 0; // this thread's live x rows lr + 32 u (u < na) and w rows (u < nb) of the tile
        bool perm = false;  // the tile's w rows in wgs_phys order
        auto point = [&]() {
            const long long r0 = tile / NTN * S::BM, c0 = tile % NTN * S::BN;
            perm = permuted(r0, c0);
            pa = x + (r0 + lr) * KW + 4 * ch;
            pb = w + (c0 + lr) * KW + 4 * ch;
            na = (int)max(0LL, min((long long)S::NUA, (rows - r0 - lr + 31) / 32));
            nb = (int)max(0LL, min((long long)S::NUB, (M - c0 - lr + 31) / 32));
        };
        point();
        int slot = 0;     // s % WGP_NS, stepped
        u32 phase = 1u;   // (s / WGP_NS - 1) & 1: the parity of the slot's release awaited
#pragma unroll 1
        for (long long s = 0; s < total; s++) {
            if (s >= WGP_NS) {
                mbar_wait(empty0 + 8 * slot, phase);
                // The slot's last copies (stage s - NS) have landed: the consumers waited for them
                // before they released it.  Waiting for them here as well costs nothing and states
                // the order to tools that do not follow cp.async.mbarrier.arrive (racecheck).
                cp_async_wait<WGP_NS - 1>();
            }
            const u32 sa = base + (u32)slot * S::STAGE + wgp_off(lr, ch), sb = base + (u32)slot * S::STAGE + S::AB;
            const u32 *qa = pa + ks * 16, *qb = pb + ks * 16;
            if (KW % 16 == 0 && na == S::NUA && nb == S::NUB) {
                // a whole tile, every chunk in K: one base address a row set and constant
                // offsets, no zero fill and no select a copy (with them, Nsight Compute counted
                // about 600 producer instructions a warp a tile, and long-scoreboard stalls where
                // a copy's address registers were reused; the consumers waited for stages)
                constexpr long long ROW32 = 32 * KW * 4; // bytes from a row to the one 32 further
                wgs_unroll<S::NUA>([&](auto uc) {
                    constexpr int u = decltype(uc)::value;
                    cp_async16_at<u * ROW32>(sa + 2048u * u, qa);
                });
                if (perm)
                    wgs_unroll<S::NUB>([&](auto uc) {
                        constexpr int u = decltype(uc)::value;
                        cp_async16_at<u * ROW32>(sb + wgp_off(wgs_phys_lr<NJ>(lr, u), ch), qb);
                    });
                else
                    wgs_unroll<S::NUB>([&](auto uc) {
                        constexpr int u = decltype(uc)::value;
                        cp_async16_at<u * ROW32>(sb + wgp_off(lr, ch) + 2048u * u, qb);
                    });
                // the stage's tail, as at the loop's end (written twice: an if/else or a shared
                // lambda changed the machine code that was measured)
                mbar_arrive_cp(full0 + 8 * slot);
                cp_async_commit();
                if (++ks == KST) {
                    ks = 0;
                    tile += nblk;
                    if (s + 1 < total) point();
                }
                if (++slot == WGP_NS) slot = 0, phase ^= 1u;
                continue;
            }
            const bool kok = ks * 16 + 4 * ch < KW;
#pragma unroll
            for (int u = 0; u < S::NUA; u++) {
                const bool ok = kok && u < na;
                cp_async16(sa + 2048u * (u32)u, ok ? (const void *)(qa + 32 * u * KW) : xp, ok ? 16 : 0);
            }
#pragma unroll
            for (int u = 0; u < S::NUB; u++) {
                const bool ok = kok && u < nb;
                const int n = perm ? wgs_phys<NJ>(lr + 32 * u) : lr + 32 * u; // its operand row
                cp_async16(sb + wgp_off(n, ch), ok ? (const void *)(qb + 32 * u * KW) : xp, ok ? 16 : 0);
            }
            mbar_arrive_cp(full0 + 8 * slot);
            cp_async_commit();
            if (++ks == KST) {
                ks = 0;
                tile += nblk;
                if (s + 1 < total) point();
            }
            if (++slot == WGP_NS) slot = 0, phase ^= 1u;
        }
        cp_async_wait<0>();
        return;
    }

    // ---- the consumers
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int wg = warp >> 2, g = lane >> 2, tq = lane & 3;
    const int wr = 16 * warp;
    int *cnt_sm = reinterpret_cast<int *>(wgp_dyn + S::CNT);
    const u32 a0 = base + (u32)wg * 64u * 64u, b0 = base + S::AB;
    const u64 da = wgp_desc_sw64(a0), db = wgp_desc_sw64(b0);
    const u64 d1 = wg_desc(base + S::ONES); // the all-ones operand: one 8-row group, no swizzle
    u64 dq[S::NQ];
#pragma unroll
    for (int q = 0; q < S::NQ; q++) dq[q] = wgp_desc_sw64(b0 + (u32)q * 64u * 64u);
    int acc[NA], cx[4] = {0, 0, 0, 0}, cw[S::NQ][4] = {};
    auto pin_all = [&]() {
        wg_pin(acc);
        wg_pin(cx);
#pragma unroll
        for (int q = 0; q < S::NQ; q++)
            if constexpr (!WC) wg_pin(cw[q]);
    };
    long long tile = blockIdx.x;
    int par = 0;
    auto epilogue = [&]() {
        const long long r0 = tile / NTN * S::BM, c0 = tile % NTN * S::BN;
#if BGNN_WGP_DIAG == 1 // timing only: no epilogue (the accumulators kept live)
        int z = cx[0];
#pragma unroll
        for (int i = 0; i < NA; i++) z ^= acc[i];
        if (z == 0x7fffffff) ((int *)yp)[r0 + c0] = z;
        return;
#endif
        int *cnt = cnt_sm + (2 * wg + par) * S::CT;
        const bool perm = permuted(r0, c0); // the w counts go in tile-column order
        if constexpr (WC) { // the warpgroup's 128 threads copy the tile's w counts
            if (tq == 0) {
                cnt[wr + g] = cx[0];
                cnt[wr + g + 8] = cx[2];
            }
#pragma unroll
            for (int l = tid - 128 * wg; l < S::RB; l += 128) {
                const int v = c0 + l < M ? wc[c0 + l] : 0;
                cnt[S::BM + (perm ? wgs_tab(l / (2 * NJ), (l % (2 * NJ)) >> 1, l & 1) : l)] = v;
            }
        } else if (tq == 0) {
            cnt[wr + g] = cx[0];
            cnt[wr + g + 8] = cx[2];
#pragma unroll
            for (int q = 0; q < S::NQ; q++) {
                const int p = 64 * q + 16 * (warp & 3) + g; // operand rows p and p + 8
                if (perm) { // operand row p = 8 j + 2 tq + e: thread tq's column 2 j + e
                    cnt[S::BM + wgs_tab((p >> 1) & 3, p >> 3, p & 1)] = cw[q][0];
                    cnt[S::BM + wgs_tab((p >> 1) & 3, (p >> 3) + 1, p & 1)] = cw[q][2];
                } else {
                    cnt[S::BM + p] = cw[q][0];
                    cnt[S::BM + p + 8] = cw[q][2];
                }
            }
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wg) : "memory"); // this warpgroup's table is written
        if constexpr (PERM) {
            if (perm) {
                wgs_store_sign<K, M, S::BM, NJ>(yp, r0, c0, wr, lane, acc, cnt);
                return;
            }
        } else if constexpr (Z == 'B' && Epi::identity && NJ % 4 == 0) {
            if (r0 + S::BM <= rows && c0 + S::BN <= M) {
                tc_store_sign<K, M, S::BM, 1, NJ>(yp, r0, c0, wr, 0, lane,
                                                  *reinterpret_cast<const int(*)[1][NJ][4]>(acc), cnt);
                return;
            }
        }
        wg_store<Z, K, M, S::BM, S::BN>(rows, yp, r0, c0, wr, lane, acc, cnt, epi);
    };
    // Tile by tile; a tile's stages in a loop of their own, so that between two stages only wgmma
    // touch the accumulators (an epilogue inside the stage loop made ptxas wait for every wgmma
    // at each stage's end).
    long long s = 0; // the block's stage sequence
    int slot = 0, prev = 0; // s % WGP_NS and (s - 1) % WGP_NS, stepped (no 64-bit division a stage)
    u32 phase = 0u;         // (s / WGP_NS) & 1
    // Ping-pong where two tiles' stages fit in the ring (short K): the warpgroups' stage loops
    // alternate (named barriers 3 and 4), so that each one's epilogue runs while the other's wgmma
    // keep the tensor cores busy; the two share nothing but the stages.  With long K the ring
    // cannot hold a tile for one warpgroup while the other waits, and both run each stage together.
    constexpr bool PP = 2 * KST <= WGP_NS;
#pragma unroll 1
    for (; s < total; tile += nblk, par ^= 1) {
        if constexpr (PP) {
            if (wg == 1) asm volatile("bar.sync 3, 256;\n" ::: "memory");        // the other's stage loop of this tile is done
            else if (s > 0) asm volatile("bar.sync 4, 256;\n" ::: "memory");     // ... of the tile before
        }
#pragma unroll 1
        for (int ks = 0; ks < (int)KST; ks++, s++) {
            mbar_wait(full0 + 8 * slot, phase);                   // the stage has landed
            if (BGNN_WGP_DIAG != 3) wg_fence_smem();              // ... and is visible to the tensor cores
            const u64 so = (u64)((u32)slot * S::STAGE >> 4);
            wg_fence();
#pragma unroll
            for (int j = 0; j < 2; j++) {
                const int more = ks > 0 || j > 0;
                const u64 k = so + (u64)(2 * j);
                wgmma_b1(acc, da + k, db + k, more);
                wgmma_b1(cx, da + k, d1, more);
#pragma unroll
                for (int q = 0; q < S::NQ; q++)
                    if constexpr (!WC) wgmma_b1(cw[q], dq[q] + k, d1, more);
            }
            wg_commit();
            if (ks > 0) {
                wg_wait<1>(); // the previous stage's wgmma are done: its slot is free
                if (lane == 0) mbar_arrive(empty0 + 8 * prev);
            }
            prev = slot;
            if (++slot == WGP_NS) slot = 0, phase ^= 1u;
        }
        if constexpr (PP) asm volatile("bar.arrive %0, 256;\n" ::"r"(3 + wg) : "memory");
        wg_wait<0>();
        pin_all(); // what follows reads the accumulators as plain registers
        if (lane == 0) mbar_arrive(empty0 + 8 * prev);
        epilogue();
    }
    if constexpr (PP)
        if (wg == 0) asm volatile("bar.sync 4, 256;\n" ::: "memory"); // the other's last arrival
}
#endif // BGNN_TC_WGMMA

// The generated code's call (compiler/codegen/cg_cuda.c, the plan's rule bg_plan_bmm_wgs): a
// launch of 384-thread blocks with wgs_smem_bytes<M>() of dynamic shared memory, the same
// arguments as bmm_bb_tc's (a BB product has no prologue).  w is a B1T buffer, which ends with
// its rows' popcounts (plan/plan.h), so the kernel takes them as given (WC).
template <char Z, long long K, long long M, class Pro = ProNone, class Epi = EpEnd>
__device__ __forceinline__ void bmm_bb_wgs_launch(long long rows, void *yp, const void *xp, const void *wp,
                                                  Pro = Pro(), Epi epi = Epi()) {
#if BGNN_TC_WGMMA
    bmm_bb_wgs<Z, K, M, true>(rows, yp, xp, wp, epi, reinterpret_cast<const int *>(static_cast<const u32 *>(wp) + M * words_of(K)));
#else
    static_assert(Z == 0, "bmm_bb_wgs_launch: compile for sm_90a (the plan's arch)");
#endif
}

} // namespace bgnn

#endif // BGNN_BMM_BB_WGS_CUH
