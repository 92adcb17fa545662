// bmm_bb_ms.cuh - benchmark-only: bmm.BB{F,B} on mma.sync b1 in a multistage form (bench/bmm_tc_bench.cu
// times it beside templates/bmm_bb_tc.cuh; docs/performance.md, "Bit tensor cores, a multistage
// pipeline").  Include
// after templates/bmm_bb_tc.cuh, whose shapes (TcShape), PTX wrappers, ldmatrix lane layout and
// stores (tc_store, tc_store_sign) it uses.
//
// Same tiles, warps and result as bmm_bb_tc (bit for bit: the same exact integers through the
// same stores); what differs is the pipeline:
// * k-stages of 512 bits (16 words a row) go global -> shared by cp.async (zero-filled past the
//   rows and K), MS_NS (3) stages in dynamic shared memory (73 KB at 384 rows a tile), so that
//   the copies of two stages are in flight while one computes; one barrier a stage;
// * a stage's two 256-bit substeps: the A fragments and the first B pair of the next substep are
//   read (ldmatrix) while this one's mma issue, the other B pairs each while the pair before it
//   computes, so that no mma waits for its fragments after the barrier;
// * the count mma (popc of the x and w rows against all ones) take their operands by selects,
//   with no branch; or (GIVEN) the counts are read from tables once a tile;
// * a whole tile of a plain BBB result goes through tc_store_sign.
// Chunks are 16 bytes of a 64-byte shared row, chunk c of row r at 16 (c ^ ((r >> 1) & 3)), so
// that the 8 rows of an 8x8 ldmatrix fall on 8 distinct bank groups.
// Needs blockDim.x == 256, sm_80 or later, and the dynamic shared memory of
// tc_ms_smem_bytes<M>() (cudaFuncAttributeMaxDynamicSharedMemorySize).
#ifndef BGNN_BMM_BB_MS_CUH
#define BGNN_BMM_BB_MS_CUH

#include "../../templates/bmm_bb_tc.cuh"

namespace bgnn {

#ifndef BGNN_MS_NS
#define BGNN_MS_NS 3
#endif
constexpr int MS_NS = BGNN_MS_NS; // shared stages
template <class S>
struct TcMsSmem {
    u32 rows[MS_NS][S::ROWS][16]; // a stage's 512 bits of each row, 16-byte chunks swizzled
    __align__(8) int cnt[S::ROWS];
};
template <long long M>
constexpr unsigned tc_ms_smem_bytes() { return (unsigned)sizeof(TcMsSmem<TcShape<M>>); }
// byte offset of 16-byte chunk c (0..3) of shared row r in a stage
__device__ __forceinline__ u32 tc_ms_off(int r, int c) { return (u32)(r * 64 + 16 * (c ^ ((r >> 1) & 3))); }

// GIVEN = 0: the popcounts of the x rows and the w rows are counted by mma, as bmm_bb_tc does;
// bit 1: those of the w rows are read from wcnt (M ints, computed once beforehand, as the product
// could at binding: the weights are parameters); bit 2: those of the x rows from xcnt (R ints; a
// measure of what counting them costs: in the product they would come from the layer before).
template <char Z, long long K, long long M, int GIVEN = 0, class Epi = EpEnd>
__device__ __forceinline__ void bmm_bb_ms(long long rows, void *yp, const void *xp, const void *wp, const int *wcnt,
                                          const int *xcnt, Epi epi = Epi()) {
    using S = TcShape<M>;
    constexpr long long KW = words_of(K), KS = (KW + 15) / 16, NTN = (M + S::BN - 1) / S::BN;
    constexpr int NCH = (S::ROWS * 4 + 255) / 256; // 16-byte chunks a thread a stage
    constexpr u32 STAGE = S::ROWS * 64;
    extern __shared__ __align__(16) unsigned char tc_dyn[];
    TcMsSmem<S> &sm = *reinterpret_cast<TcMsSmem<S> *>(tc_dyn);
    const u32 *x = (const u32 *)xp, *w = (const u32 *)wp;
    constexpr bool wcnt_given = GIVEN & 1, xcnt_given = GIVEN & 2;
    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / S::WARPS_N, wn = warp % S::WARPS_N;
    const int wr = wm * S::MI * 16, wc = wn * S::NJ * 8;
    const int g = lane >> 2, tq = lane & 3;
    const long long ntiles = (rows + S::BM - 1) / S::BM * NTN;
    u32 nsm;
    asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
    const long long nblk = min(min((long long)gridDim.x, ntiles), (long long)nsm * TC_WAVES);
    if ((long long)blockIdx.x >= nblk) return;
    const long long total = ((ntiles - 1 - (long long)blockIdx.x) / nblk + 1) * KS;
    const u32 base = smem_addr(&sm.rows[0][0][0]);
    // ---- loader: chunk c of this thread is chunk tid % 4 of shared row tid / 4 + 64 c
    // chunk c < NCX of a thread is an x row (rows lrow0 + 64 c of the tile's x rows), the rest w rows
    const int lch = tid & 3, lrow0 = tid >> 2;
    constexpr int NCX = S::BM / 64;
    const u32 *srcx, *srcw; // the thread's first x row and first w row, word lch * 4
    unsigned live = 0u;
    long long ltile = blockIdx.x;
    int lks = 0;
    auto point = [&]() {
        const long long r0 = ltile / NTN * S::BM, c0 = ltile % NTN * S::BN;
        live = 0u;
#pragma unroll
        for (int c = 0; c < NCH; c++) {
            const int row = lrow0 + 64 * c;
            const bool isx = c < NCX;
            const long long gi = isx ? r0 + row : c0 + (row - S::BM);
            if (row < S::ROWS && gi < (isx ? rows : M)) live |= 1u << c;
        }
        srcx = x + (r0 + lrow0) * KW + lch * 4;
        srcw = w + (c0 + lrow0) * KW + lch * 4;
    };
    // chunk c's row at word 0 (only read when live)
    auto src = [&](int c) { return c < NCX ? srcx + (long long)(64 * c) * KW : srcw + (long long)(64 * (c - NCX)) * KW; };
    constexpr unsigned ALL = (1u << NCH) - 1u;
    const u32 dst0 = base + tc_ms_off(lrow0, lch); // row lrow0 + 64 c: + 4096 c (the swizzle repeats every 8 rows)
    auto copy = [&](int st) { // the next k-stage into stage st (zero-filled past rows and KW)
        if (KW % 16 == 0 && S::ROWS * 4 % 256 == 0 && live == ALL && ltile < ntiles) {
            // every chunk real: one pointer per operand, the chunks at fixed offsets from it
            const u32 *px = srcx + lks * 16, *pw = srcw + lks * 16;
            const u32 d = dst0 + (u32)st * STAGE;
#pragma unroll
            for (int c = 0; c < NCH; c++)
                cp_async16(d + 4096u * (u32)c, c < NCX ? px + 64 * c * KW : pw + 64 * (c - NCX) * KW, 16);
        } else if (ltile < ntiles) {
#pragma unroll
            for (int c = 0; c < NCH; c++) {
                const int row = lrow0 + 64 * c;
                if (S::ROWS * 4 % 256 != 0 && row >= S::ROWS) continue;
                const u32 d = base + (u32)st * STAGE + tc_ms_off(row, lch);
                const bool ok = (live >> c) & 1u;
                const long long wd = (long long)lks * 16 + lch * 4;
                if constexpr (KW % 4 == 0) {
                    const bool v = ok && (KW % 16 == 0 || wd < KW);
                    cp_async16(d, v ? src(c) + lks * 16 : x, v ? 16 : 0);
                } else {
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        const bool v = ok && wd + j < KW;
                        cp_async4(d + 4u * (u32)j, v ? src(c) + lks * 16 + j : x, v ? 4 : 0);
                    }
                }
            }
        }
        if (++lks == KS) {
            lks = 0;
            ltile += nblk;
            if (ltile < ntiles) point();
        }
    };
    // ---- fragments: A of m16 tile i, B {b0,b1} pairs of n16 group jj, of substep kk of a stage
    const int am = lane >> 3;
    const int a_row = wr + (am & 1) * 8 + (lane & 7), a_half = am >> 1;
    const int b_row = S::BM + wc + (am >> 1) * 8 + (lane & 7), b_half = am & 1;
    auto a_addr = [&](int st, int i, int kk) { return base + (u32)st * STAGE + tc_ms_off(a_row + 16 * i, 2 * kk + a_half); };
    auto b_addr = [&](int st, int jj, int kk) { return base + (u32)st * STAGE + tc_ms_off(b_row + 16 * jj, 2 * kk + b_half); };
    int acc[S::MI][S::NJ][4];
    constexpr int QX = (S::MI + S::WARPS_N - 1) / S::WARPS_N, QW = (S::NJ / 2 + S::WARPS_M - 1) / S::WARPS_M;
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
    // A fragments and the first n16 group's B of a substep are loaded a substep ahead (set 0 / 1);
    // the other groups' B during the substep, each while the one before it computes.
    u32 fa[2][S::MI][4], fb0[2][4];
    auto load_frags = [&](int set, int st, int kk) {
#pragma unroll
        for (int i = 0; i < S::MI; i++) ldsm_x4_at(fa[set][i], a_addr(st, i, kk));
        ldsm_x4_at(fb0[set], b_addr(st, 0, kk));
    };
    auto compute = [&](int set, int st, int kk) {
        constexpr int PERM[4] = {0, 2, 1, 3};
        u32 fw[QW][4]; // the w count tasks' operands (w rows as an A operand), chosen as the groups pass
        u32 bb[2][4];
#pragma unroll
        for (int jj = 0; jj < S::NJ / 2; jj++) {
            const u32(&bc)[4] = jj == 0 ? fb0[set] : bb[jj & 1];
            if (jj + 1 < S::NJ / 2) ldsm_x4_at(bb[(jj + 1) & 1], b_addr(st, jj + 1, kk));
#pragma unroll
            for (int i = 0; i < S::MI; i++) {
                mma_b1_and(acc[i][2 * jj], fa[set][i], bc[0], bc[1]);
                mma_b1_and(acc[i][2 * jj + 1], fa[set][i], bc[2], bc[3]);
            }
#pragma unroll
            for (int q = 0; q < QW; q++) {
                if (jj < q * S::WARPS_M || jj >= (q + 1) * S::WARPS_M || wcnt_given) continue;
#pragma unroll
                for (int e = 0; e < 4; e++) fw[q][e] = (jj == q * S::WARPS_M || jj - q * S::WARPS_M == wm) ? bc[PERM[e]] : fw[q][e];
            }
        }
        // counts: x m-tiles i = wn + q WARPS_N, w n16 groups jj = wm + q WARPS_M, operands by select
#pragma unroll
        for (int q = 0; q < (xcnt_given ? 0 : QX); q++) {
            u32 f[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                f[e] = fa[set][q * S::WARPS_N][e];
#pragma unroll
                for (int i = q * S::WARPS_N + 1; i < S::MI && i < (q + 1) * S::WARPS_N; i++)
                    f[e] = (i - q * S::WARPS_N == wn) ? fa[set][i][e] : f[e];
            }
            mma_b1_and(cntx[q], f, ~0u, ~0u);
        }
#pragma unroll
        for (int q = 0; q < QW; q++) {
            if (q * S::WARPS_M >= S::NJ / 2 || wcnt_given) break;
            if ((q + 1) * S::WARPS_M <= S::NJ / 2) mma_b1_and(cntw[q], fw[q], ~0u, ~0u); // every warp has this task
            else if (wm + q * S::WARPS_M < S::NJ / 2) mma_b1_and(cntw[q], fw[q], ~0u, ~0u);
        }
    };
    long long tile = blockIdx.x;
    auto epilogue = [&]() {
        const long long r0 = tile / NTN * S::BM, c0 = tile % NTN * S::BN;
        if (tq == 0) {
#pragma unroll
            for (int q = 0; q < QX; q++) {
                const int i = wn + q * S::WARPS_N;
                if (!xcnt_given && (QX * S::WARPS_N == S::MI || i < S::MI)) {
                    sm.cnt[wr + 16 * i + g] = cntx[q][0];
                    sm.cnt[wr + 16 * i + g + 8] = cntx[q][2];
                }
            }
#pragma unroll
            for (int q = 0; q < QW; q++) {
                const int jj = wm + q * S::WARPS_M;
                if (!wcnt_given && jj < S::NJ / 2) {
                    sm.cnt[S::BM + wc + 16 * jj + g] = cntw[q][0];
                    sm.cnt[S::BM + wc + 16 * jj + g + 8] = cntw[q][2];
                }
            }
        }
        if (wcnt_given)
            for (int c = tid; c < S::BN; c += 256) sm.cnt[S::BM + c] = c0 + c < M ? wcnt[c0 + c] : 0;
        if (xcnt_given)
            for (int c = tid; c < S::BM; c += 256) sm.cnt[c] = r0 + c < rows ? xcnt[r0 + c] : 0;
        __syncthreads();
        if constexpr (Z == 'B' && Epi::identity && S::NJ % 4 == 0) {
            if (r0 + S::BM <= rows && c0 + S::BN <= M) {
                tc_store_sign<K, M, S::BM, S::MI, S::NJ>(yp, r0, c0, wr, wc, lane, acc, sm.cnt);
                return;
            }
        }
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
    __syncthreads(); // shared memory is free: the previous phase is done with it
    point();
#pragma unroll
    for (int i = 0; i < MS_NS - 1; i++) {
        copy(i);
        cp_async_commit();
    }
    cp_async_wait<MS_NS - 2>();
    __syncthreads();
    load_frags(0, 0, 0);
    int st = 0, kc = 0;
    // the second substep of the last stage holds no real bits when KW % 16 <= 8: skipped
    constexpr bool HALF_LAST = KW % 16 != 0 && KW % 16 <= 8;
    for (long long s = 0; s < total; s++) {
        // substep 0: fragments of substep 1 of this stage, then the mma of substep 0
        if (!HALF_LAST || kc + 1 < KS) load_frags(1, st, 1);
        compute(0, st, 0);
        // substep 1: the next stage complete for all; stage st - 1 free: the copy of stage s + NS - 1 into it
        cp_async_wait<MS_NS - 3 < 0 ? 0 : MS_NS - 3>();
        __syncthreads();
        copy(st == 0 ? MS_NS - 1 : st - 1);
        cp_async_commit();
        const int nst = st + 1 == MS_NS ? 0 : st + 1;
        if (s + 1 < total) load_frags(0, nst, 0);
        if (!HALF_LAST || kc + 1 < KS) compute(1, st, 1);
        st = nst;
        if (++kc == KS) {
            epilogue();
            zero();
            kc = 0;
            tile += nblk;
        }
    }
    cp_async_wait<0>();
}

} // namespace bgnn

#endif // BGNN_BMM_BB_MS_CUH
