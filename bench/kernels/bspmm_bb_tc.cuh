// bspmm_bb_tc.cuh - bspmm.BBB / bspmm.BBF over a 0/1 adjacency on the bit tensor cores
// (mma.sync.m16n8k256 .b1, AND form), QGTC-style (Wang et al. 2022): the adjacency as dense
// 16 x 256 bit tiles, the activations transposed to bit columns, and
//     cnt1[i][c] = popc(A_i AND xt_c) = #neighbours j of i with bit c of x[j] set,
//     s[i][c]    = 2 cnt1[i][c] - deg(i)          (= sum_j v(x[j,c]), an exact integer).
// Output F: y = fl(rowf[i] * s) (rowf = nullptr: 1, norm none; norm mean: BgAdj rowf), then the
// epilogue (epilogue.cuh); output B: the sign (s >= 0; a row factor > 0, or 0 on an empty row,
// never changes it) or, with a non-identity epilogue, ep_bit of that float.  Bit for bit the
// result of bspmm_fast.cuh's kernels and of spmm.cuh's bspmm_adjb (docs/semantics.md 4).
//
// Tile format (built on the host from the CSR: bench/kernels/bspmm_tiles.h bgt_build):
//   row block rb = rows 16 rb .. 16 rb + 15 (the last one may be partial: rows >= N are 0);
//   column tile kt = nodes 256 kt .. 256 kt + 255 (nkt = ceil(N / 256));
//   rbptr int32[nrb + 1]: the tiles of row block rb are rbptr[rb] .. rbptr[rb + 1] - 1;
//   tcol  int32[ntiles]:  each tile's column tile kt (ascending within a row block);
//   tiles uint4[ntiles][32]: a tile's 16 x 256 bits in m16n8k256 A-fragment order, one uint4 a
//         lane: lane = 4 g + q holds {row g word q, row g+8 word q, row g word q+4, row g+8
//         word q+4} (word w of a row = its neighbours 256 kt + 32 w + bit), so a warp reads a
//         tile with one coalesced 16-byte load a lane.
//   Only tiles with a nonzero bit are stored ("zero-tile jumping"); deg(i) is the popcount of
//   row i over its tiles (counted here from the fragments: no degree array), so an adjacency
//   with a repeated edge cannot be represented (the builder refuses it).
// Activation transpose (bspmm_tc_xt, a kernel of its own before the aggregation, or the
// epilogue of whatever writes x): x b1 [N][W] -> xt uint4[nkt][NP][32], NP = ceil(C / 16)
//   feature pairs of 16: lane 4 g + q of (kt, p) holds {b0, b1} of feature 16 p + g and {b0,
//   b1} of feature 16 p + 8 + g, b0 = the bits of nodes 256 kt + 32 q + 0..31, b1 = nodes
//   256 kt + 32 (q + 4) + 0..31: the m16n8k256 B fragments of two n8 tiles, one coalesced
//   16-byte load a lane.  Nodes >= N and features >= C are 0 (padding adds nothing to cnt1).
//
// Work: one warp a row block (grid-stride over row blocks: any grid works); per tile one A
// load and NP B loads (x tiles shared by neighbouring row blocks hit L1 / L2), 2 NP mma.  The
// features go in chunks of up to 128 (8 pairs: 64 accumulator registers a lane); a row block's
// tiles are read once a chunk.  Output F: each lane stores 2 adjacent columns of rows g and
// g + 8 per n8 tile; output B: the 4 lanes of a row group OR their bits of a 32-column word
// (two shuffles) and lane q = 0 stores it.
// Needs sm_80 or later.  Measured against bspmm_fast.cuh in bench/agg_tc_bench.cu
// (docs/performance.md, "Aggregation on bit tensor cores (QGTC-style)"): it pays only on
// graphs whose tiles are dense; the plan does not use it.
#ifndef BGNN_BSPMM_BB_TC_CUH
#define BGNN_BSPMM_BB_TC_CUH

#include "../../templates/bgnn_common.cuh"
#include "../../templates/epilogue.cuh"
#include "../../templates/bmm_bb_tc.cuh" // mma_b1_and

namespace bgnn {

__host__ __device__ constexpr long long bspmm_tc_pairs(long long C) { return (C + 15) / 16; }
// Column tiles (and 256-node slices of xt) of an N-node graph.
__host__ __device__ constexpr long long bspmm_tc_nkt(long long n) { return (n + 255) / 256; }
// uint4 elements of xt for an N-node graph of width C.
__host__ __device__ constexpr long long bspmm_tc_xt_elems(long long n, long long C) {
    return bspmm_tc_nkt(n) * bspmm_tc_pairs(C) * 32;
}

// xt <- the transpose of x (see the file comment).  Warp work items (kt, node word q, feature
// word w): lane l loads word w of node 256 kt + 32 q + l; 32 ballots give the 32 features'
// node words; lane f stores feature 32 w + f's.  Grid: any (grid-stride over items).
template <long long C>
__device__ __forceinline__ void bspmm_tc_xt(long long n, uint4 *__restrict__ xt, const u32 *__restrict__ x) {
    constexpr long long W = words_of(C), NP = bspmm_tc_pairs(C);
    const int lane = (int)(threadIdx.x & 31u);
    const long long warp0 = thread_index() >> 5, nwarps = thread_stride() >> 5;
    const long long items = bspmm_tc_nkt(n) * 8 * W;
    u32 *xw = reinterpret_cast<u32 *>(xt);
    for (long long it = warp0; it < items; it += nwarps) {
        const long long w = it % W, kq = it / W, kt = kq / 8;
        const int q = (int)(kq % 8);
        const long long node = kt * 256 + 32 * q + lane;
        const u32 v = node < n ? __ldg(x + node * W + w) : 0u;
        u32 mine = 0u;
#pragma unroll
        for (int f = 0; f < 32; f++) {
            const u32 b = __ballot_sync(0xffffffffu, (v >> f) & 1u);
            if (lane == f) mine = b;
        }
        const long long c = w * 32 + lane;
        if (c < 16 * NP) {
            const long long p = c / 16;
            const int hi = (int)((c % 16) / 8), g = (int)(c % 8);
            const int tq = q & 3, which = q >> 2;
            xw[((kt * NP + p) * 32 + 4 * g + tq) * 4 + 2 * hi + which] = mine;
        }
    }
}

// y = bspmm.BB{Z}(A, x) over the tiles (see the file comment); n = N.
template <long long C, char Z, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_bb_tc(long long n, const int *__restrict__ rbptr, const int *__restrict__ tcol,
                                            const uint4 *__restrict__ tiles, const uint4 *__restrict__ xt,
                                            const float *__restrict__ rowf, void *__restrict__ yp, Epi epi = Epi()) {
    static_assert(Z == 'B' || Z == 'F', "bspmm_bb_tc: output B or F");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    static_assert(Z != Z, "bspmm_bb_tc: needs sm_80 or later");
#endif
    constexpr long long W = words_of(C);
    constexpr int NP = (int)bspmm_tc_pairs(C);
    constexpr int PC = NP < 8 ? NP : 8;          // feature pairs a chunk
    constexpr int NCH = (NP + PC - 1) / PC;      // chunks
    constexpr int NWC = (2 * PC + 3) / 4;        // output words a chunk (B)
    const int lane = (int)(threadIdx.x & 31u), g = lane >> 2, tq = lane & 3;
    const long long warp0 = thread_index() >> 5, nwarps = thread_stride() >> 5;
    const long long nrb = (n + 15) / 16;
    for (long long rb = warp0; rb < nrb; rb += nwarps) {
        const int t0 = rbptr[rb], t1 = rbptr[rb + 1];
        const long long ra = rb * 16 + g, rbr = ra + 8; // this lane's rows
        int d[2] = {0, 0};
#pragma unroll 1
        for (int ch = 0; ch < NCH; ch++) {
            int acc[PC][2][4];
#pragma unroll
            for (int p = 0; p < PC; p++)
#pragma unroll
                for (int h = 0; h < 2; h++)
#pragma unroll
                    for (int e = 0; e < 4; e++) acc[p][h][e] = 0;
            int kt_next = t0 < t1 ? __ldg(tcol + t0) : 0;
            uint4 a_next = t0 < t1 ? __ldcs(tiles + (long long)t0 * 32 + lane) : make_uint4(0, 0, 0, 0);
            for (int t = t0; t < t1; t++) {
                const int kt = kt_next;
                const uint4 av = a_next;
                if (t + 1 < t1) { // the next tile's loads in flight under this one's
                    kt_next = __ldg(tcol + t + 1);
                    a_next = __ldcs(tiles + (long long)(t + 1) * 32 + lane);
                }
                const uint4 *xb = xt + ((long long)kt * NP + ch * PC) * 32 + lane;
                uint4 b[PC];
#pragma unroll
                for (int p = 0; p < PC; p++)
                    if (ch * PC + p < NP) b[p] = __ldg(xb + p * 32);
                const u32 a[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
                for (int p = 0; p < PC; p++) {
                    if (ch * PC + p < NP) {
                        mma_b1_and(acc[p][0], a, b[p].x, b[p].y);
                        mma_b1_and(acc[p][1], a, b[p].z, b[p].w);
                    }
                }
                if (ch == 0) {
                    d[0] += __popc(av.x) + __popc(av.z);
                    d[1] += __popc(av.y) + __popc(av.w);
                }
            }
            if (ch == 0) { // degrees of rows g and g + 8: the 4 lanes of the group hold 8 words each
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    d[h] += __shfl_xor_sync(0xffffffffu, d[h], 1);
                    d[h] += __shfl_xor_sync(0xffffffffu, d[h], 2);
                }
            }
            // Element (p, h, e2) of row half hh: column 16 (ch PC + p) + 8 h + 2 tq + e2.
            if constexpr (Z == 'F') {
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const long long r = hh ? rbr : ra;
                    if (r >= n) continue;
                    const float rf = rowf ? rowf[r] : 1.0f;
                    float *yr = (float *)yp + r * C;
#pragma unroll
                    for (int p = 0; p < PC; p++)
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            const long long c = 16LL * (ch * PC + p) + 8 * h + 2 * tq;
                            const float v0 = fmul(rf, (float)(2 * acc[p][h][2 * hh] - d[hh]));
                            const float v1 = fmul(rf, (float)(2 * acc[p][h][2 * hh + 1] - d[hh]));
                            if (C % 2 == 0 && c < C) {
                                *reinterpret_cast<float2 *>(yr + c) =
                                    make_float2(ep_val(epi, r, c, v0), ep_val(epi, r, c + 1, v1));
                            } else {
                                if (c < C) yr[c] = ep_val(epi, r, c, v0);
                                if (c + 1 < C) yr[c + 1] = ep_val(epi, r, c + 1, v1);
                            }
                        }
                }
            } else {
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const long long r = hh ? rbr : ra;
                    const bool rok = r < n;
                    const float rf = (!Epi::identity && rok && rowf) ? rowf[r] : 1.0f;
#pragma unroll
                    for (int wd = 0; wd < NWC; wd++) {
                        u32 bits = 0u;
#pragma unroll
                        for (int jj = 0; jj < 4; jj++) {
                            const int j = 4 * wd + jj; // n8 tile within the chunk
                            if (j >= 2 * PC) break;
                            const int p = j >> 1, h = j & 1;
#pragma unroll
                            for (int e2 = 0; e2 < 2; e2++) {
                                const long long c = 16LL * (ch * PC + p) + 8 * h + 2 * tq + e2;
                                if (!rok || c >= C) continue;
                                const int s = 2 * acc[p][h][2 * hh + e2] - d[hh];
                                u32 bit;
                                if constexpr (Epi::identity) bit = s >= 0 ? 1u : 0u;
                                else bit = ep_bit(epi, r, c, fmul(rf, (float)s));
                                bits |= bit << (8 * jj + 2 * tq + e2);
                            }
                        }
                        bits |= __shfl_xor_sync(0xffffffffu, bits, 1);
                        bits |= __shfl_xor_sync(0xffffffffu, bits, 2);
                        const long long word = (long long)ch * (2 * PC / 4) + wd;
                        if (tq == 0 && rok && word < W) ((u32 *)yp)[r * W + word] = bits;
                    }
                }
            }
        }
    }
}

} // namespace bgnn

#endif // BGNN_BSPMM_BB_TC_CUH
