// bspmm_frdc.cuh - benchmark-only (bench/bspmm_bench.cu): bspmm.BBB / BBF over the FRDC
// form of the adjacency (frdc.cuh: 4x4 bit tiles), with the vertical counters and split-row
// protocol of templates/bspmm_fast.cuh.  Same semantics as bspmm_bb_csr; its schedule is
// bg_plan_schedule over the tile row pointer (a "row" = a tile row of 4 rows) with chunk
// BSPMM_FRDC_CHUNK, and partial holds 4*C ints per split slot.  Measured slower than the CSR
// kernel on graphs with ~1 edge per tile (docs/performance.md), so the code generator does
// not use it.
#ifndef BGNN_BENCH_BSPMM_FRDC_CUH
#define BGNN_BENCH_BSPMM_FRDC_CUH

#include "../../templates/bspmm_fast.cuh"
#include "frdc.cuh"

namespace bgnn {

constexpr int BSPMM_FRDC_CHUNK = 512; // max tiles per FRDC work item (4*chunk < 2^PLANES)

// ---- FRDC kernel (POPC2) ------------------------------------------------------------------
// One warp per item of TILE rows; lane = r * 8 + slot * WG + w: r the row inside the tile
// row, WG = min(pow2ceil(W), 8) words, S = 8 / WG tiles per round.  A lane adds, for the
// 4 columns of each tile, the neighbour's word when its row's bit is set (a column shared by
// several rows of the tile row is gathered once per row lane group; L1 serves the repeats).
// partial holds 4*C ints per split slot.  Schedule: bg_plan_schedule over tile_rowptr with
// chunk <= BSPMM_FRDC_CHUNK and no group items.
template <long long C, char Z, int PB>
__device__ __forceinline__ void bspmm_bb_frdc(long long n, const long long *__restrict__ tile_rowptr,
                                              const int *__restrict__ colind,
                                              const void *__restrict__ payload,
                                              const float *__restrict__ rowf,
                                              const u32 *__restrict__ x, void *__restrict__ yp,
                                              const int4 *__restrict__ items, long long nitems,
                                              int chunk, int *partial, unsigned *done) {
    using namespace fast_detail;
    constexpr int P = BSPMM_PLANES;
    constexpr long long W = words_of(C);
    constexpr int WG = W >= 8 ? 8 : pow2ceil(W);
    constexpr int S = 8 / WG;
    constexpr long long NG = (W + WG - 1) / WG;
    const int lane = threadIdx.x & 31;
    const int r = lane >> 3, s = (lane & 7) / WG, wl = lane % WG;
    const long long warp0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long it = warp0; it < nitems; it += nwarps) {
        const int4 item = items[it];
        const long long R = item.x;
        const long long ts = tile_rowptr[R], te = tile_rowptr[R + 1];
        const long long t0 = ts + (long long)item.y * chunk;
        const long long t1 = t0 + chunk < te ? t0 + chunk : te;
        const bool split = item.w >= 0;
        const long long row = 4 * R + r;
        const bool rvalid = row < n;
        int *ps = split ? partial + (long long)item.w * 4 * C + (long long)r * C : nullptr;
        const float rf = (Z == 'F' && rowf && rvalid) ? rowf[row] : 1.0f;
        for (long long g = 0; g < NG; g++) {
            const long long w = g * WG + wl;
            const bool wvalid = w < W;
            const u32 mask = wvalid ? word_mask(C, w) : 0u;
            Vc<P> ones;
            ones.zero();
            int deg = 0;
            for (long long base = t0; base < t1; base += 2 * S) {
                u32 v[8];
#pragma unroll
                for (int k = 0; k < 2; k++) {
                    const long long t = base + s + S * k;
                    const bool ok = t < t1;
                    const long long T = ok ? ld_stream(colind + t) : 0;
                    const u32 nib = ok ? frdc_row_nibble<PB>(payload, t, r) : 0u;
                    deg += __popc(nib);
#pragma unroll
                    for (int c = 0; c < 4; c++)
                        v[4 * k + c] = ((nib >> c) & 1u) && wvalid ? __ldg(x + (4 * T + c) * W + w)
                                                                   : 0u;
                }
                ones.add8(v);
            }
            ones.reduce_xor(WG, 8);
            for (int off = WG; off < 8; off <<= 1) deg += __shfl_xor_sync(0xffffffffu, deg, off);
            if (!split && Z == 'B') {
                u32 word = ones.ge((deg + 1) >> 1);
                if (s == 0 && wvalid && rvalid) ((u32 *)yp)[row * W + w] = word & mask;
            } else {
                // Lane (r, s, w) unpacks bits b = t*S + s of word w (32 / S of them).
#pragma unroll
                for (int t = 0; t < 32 / S; t++) {
                    const int b = t * S + s;
                    const long long c = w * 32 + b;
                    if (!wvalid || c >= C || !rvalid) continue;
                    int sv = 2 * ones.count(b) - deg;
                    if (split) atomicAdd(ps + c, sv);
                    else ((float *)yp)[row * C + c] = fmul(rf, (float)sv);
                }
            }
        }
        if (split) split_finish<C, Z>(item.w, item.z, 4 * R, 4, n, partial, done, rowf, yp);
    }
}

template <long long C, char Z, int PB>
__global__ void __launch_bounds__(128)
    bspmm_bb_frdc_kernel(long long n, const long long *__restrict__ tile_rowptr,
                         const int *__restrict__ colind, const void *__restrict__ payload,
                         const float *__restrict__ rowf, const u32 *__restrict__ x,
                         void *__restrict__ y, const int4 *__restrict__ items, long long nitems,
                         int chunk, int *partial, unsigned *done) {
    bspmm_bb_frdc<C, Z, PB>(n, tile_rowptr, colind, payload, rowf, x, y, items, nitems, chunk,
                            partial, done);
}


} // namespace bgnn

#endif // BGNN_BENCH_BSPMM_FRDC_CUH
