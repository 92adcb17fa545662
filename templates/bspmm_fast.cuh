// bspmm_fast.cuh - fast bspmm.BBB / bspmm.BBF over the 0/1 adjacency (norm none / mean:
// every column factor is 1, so s_i = sum_{j in row i} v(x_j) is an exact integer).
//
// Semantics (docs/semantics.md 4): s[i,c] = sum_j v(x[j,c]) over row i of the CSR (self
// loops included when the model says so); output B: bin(s) = (s >= 0) (a row factor r_i > 0
// never changes the sign; an empty row gives s = 0 -> +1); output F: y = fl(rowf[i] * s)
// (rowf = nullptr means 1: norm none).  Integer sums: the result does not depend on the order
// in which edges are combined, so long rows are split across warps and combined with
// integer atomics, exactly.
//
// Layouts (no repacking: the canonical ones of bgnn_common.cuh / compiler/bg.h):
//   x  b1 [N][W], W = ceil(C/32) words per node, feature c = bit c%32 of word c/32, padding 0
//   y  b1 [N][W] (padding bits written 0) or f32 [N][C]
//   CSR rowptr int64[N+1], col int32[nnz] (any order within a row works; the integer sum is
//   order-free).  FRDC (frdc.cuh) for bspmm_bb_frdc.
// Row-major node words are the GPU-friendly layout for a gather: one neighbour = W
// contiguous words = ONE 32-byte sector for C <= 256 (the authors' feature-word-major
// [W][N] layout costs W sectors per neighbour).
//
// Work decomposition: a SCHEDULE (built once per graph on the GPU, bspmm_sched_build) lists
// work items {row, chunk k, chunks nk, split slot}: a row of d edges is ceil(d/chunk) items
// (>= 1, so empty rows are written too); rows with nk > 1 get a split slot.  One warp per item
// (grid-stride over items: any grid works).  Items of split rows add their integer partial
// sums into partial[slot][C] (int32 atomics); the last item to finish (a per-slot counter)
// finalises the row and resets partial and counter to zero, so the buffers stay clean for
// the next launch (they must be zeroed once, at allocation).
//
// Reduction methods (reference-notes 4, semantics "method"), all exact and bit-identical:
//   METHOD_POPC2  (3): per (slot, word) lane a bit-sliced vertical counter of the ONES of the
//                 gathered words (Harley-Seal carry-save adders: LOP3 only, no XOR-popcount,
//                 which Hopper emulates); s = 2*ones - d (d = popc of the adjacency row);
//                 BBB compares bit-sliced ones >= ceil(d/2) without unpacking counts.
//   METHOD_ANDNOT (2): two vertical counters, ones (x & mask) and zeros (~x & mask);
//                 s = ones - zeros (BBB: bit-sliced ones >= zeros).
//   METHOD_IFELSE (1): one lane per feature; per neighbour, +1 or -1 per bit in an int.
// Lane layout (POPC2/ANDNOT): lane = slot * WG + w, WG = min(pow2ceil(W), 32) lanes per
// neighbour (one word each, coalesced), S = 32 / WG neighbours per warp round, 8 rounds in
// flight per batch (8 independent gathers per lane); word groups of 32 when W > 32.
//
// Launch (both kernels): blockDim 128 (any multiple of 32 works), grid = ceil(nitems / 4)
// (any grid >= 1 is correct).  Device functions bspmm_bb_csr<...>() / bspmm_bb_frdc<...>()
// can be called from a generated kernel with the same arguments.
//
// Code generator / runtime use (per bound graph, at bind time, once):
//   bspmm_sched_build(N, d_rowptr, BSPMM_CSR_CHUNK, &sched)          (one host sync)
//   partial = cudaMalloc + memset 0 of bspmm_partial_elems(sched, C_max, 1) ints,
//   done    = cudaMalloc + memset 0 of max(1, sched.nsplit) unsigned;
// per bspmm.BBB / BBF op (norm none: rowf = nullptr; norm mean: rowf = BgAdj rowf):
//   bspmm_bb_csr_kernel<C, 'B' or 'F', METHOD_POPC2><<<ceil(nitems/4), 128>>>(N, rowptr,
//       col, rowf, x, y, sched.items, sched.nitems, sched.chunk, partial, done);
// Launches that share partial/done must be stream-ordered (they are reset by the kernel).
// Measured on an H200 (docs/performance.md): POPC2 is fastest everywhere; ANDNOT 1.2-1.9x
// slower; IFELSE 3-7x slower; the FRDC kernel loses to CSR on graphs with ~1 edge per tile.
#ifndef BGNN_BSPMM_FAST_CUH
#define BGNN_BSPMM_FAST_CUH

#ifndef __CUDACC_RTC__ // host parts (schedule builders, FRDC) are for nvcc only, not NVRTC
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#endif

#include "bgnn_common.cuh"
#ifndef __CUDACC_RTC__
#include "frdc.cuh"
#endif

namespace bgnn {

enum { METHOD_IFELSE = 1, METHOD_ANDNOT = 2, METHOD_POPC2 = 3 }; // = BgMethod values

constexpr int BSPMM_PLANES = 12;      // bit-sliced counter planes: counts < 4096
constexpr int BSPMM_CSR_CHUNK = 2048; // max edges per CSR work item (< 2^PLANES)
constexpr int BSPMM_FRDC_CHUNK = 512; // max tiles per FRDC work item (4*chunk < 2^PLANES)

#ifndef __CUDACC_RTC__
// ---- schedule -----------------------------------------------------------------------------
struct BspmmSched {
    long long rows = 0;      // rows (CSR) or tile rows (FRDC) covered
    long long nitems = 0;
    long long nsplit = 0;    // rows split into > 1 item
    int chunk = 0;           // edges (CSR) or tiles (FRDC) per item at most
    int4 *items = nullptr;   // {row, k, nk, slot or -1}
};

namespace fast_detail {

__global__ void k_sched_count(long long rows, const long long *__restrict__ rowptr, int chunk,
                              long long *__restrict__ cnt) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i <= rows;
         i += (long long)gridDim.x * blockDim.x) {
        if (i == rows) { cnt[i] = 0; continue; }
        long long d = rowptr[i + 1] - rowptr[i];
        long long nk = d <= chunk ? 1 : (d + chunk - 1) / chunk;
        cnt[i] = nk | ((long long)(nk > 1) << 40); // items in bits 0..39, splits above
    }
}

__global__ void k_sched_fill(long long rows, const long long *__restrict__ pref,
                             int4 *__restrict__ items) {
    const long long M = (1LL << 40) - 1;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
         i += (long long)gridDim.x * blockDim.x) {
        long long b = pref[i] & M, nk = (pref[i + 1] & M) - b, slot = pref[i] >> 40;
        for (long long k = 0; k < nk; k++)
            items[b + k] = make_int4((int)i, (int)k, (int)nk, nk > 1 ? (int)slot : -1);
    }
}

} // namespace fast_detail
#endif // !__CUDACC_RTC__

namespace fast_detail {

__host__ __device__ constexpr int pow2ceil(long long v) {
    int p = 1;
    while (p < v) p *= 2;
    return p;
}

// Carry-save adder: a + b + c = l + 2h, bitwise (two LOP3s).
__device__ __forceinline__ void csa(u32 &h, u32 &l, u32 a, u32 b, u32 c) {
    u32 u = a ^ b;
    h = (a & b) | (u & c);
    l = u ^ c;
}

// 32 bit-sliced counters of P planes (plane q holds bit q of each of the 32 counts).
template <int P> struct Vc {
    u32 p[P];
    __device__ __forceinline__ void zero() {
#pragma unroll
        for (int q = 0; q < P; q++) p[q] = 0u;
    }
    // Adds 8 words (Harley-Seal: 7 CSAs into planes 0..2, the weight-8 carry rippled up).
    __device__ __forceinline__ void add8(const u32 *v) {
        u32 t2a, t2b, t4a, t4b, t8;
        csa(t2a, p[0], p[0], v[0], v[1]);
        csa(t2b, p[0], p[0], v[2], v[3]);
        csa(t4a, p[1], p[1], t2a, t2b);
        csa(t2a, p[0], p[0], v[4], v[5]);
        csa(t2b, p[0], p[0], v[6], v[7]);
        csa(t4b, p[1], p[1], t2a, t2b);
        csa(t8, p[2], p[2], t4a, t4b);
#pragma unroll
        for (int q = 3; q < P; q++) {
            u32 c = p[q] & t8;
            p[q] ^= t8;
            t8 = c;
        }
    }
    // this += the counter of lane (lane ^ off), for every off = first, 2*first, ... < last.
    __device__ __forceinline__ void reduce_xor(int first, int last) {
        for (int off = first; off < last; off <<= 1) {
            u32 c = 0u;
#pragma unroll
            for (int q = 0; q < P; q++) {
                u32 a = p[q], b = __shfl_xor_sync(0xffffffffu, p[q], off);
                u32 u = a ^ b;
                p[q] = u ^ c;
                c = (a & b) | (u & c);
            }
        }
    }
    __device__ __forceinline__ int count(int b) const {
        int n = 0;
#pragma unroll
        for (int q = 0; q < P; q++) n |= (int)((p[q] >> b) & 1u) << q;
        return n;
    }
    // Bit b set iff count(b) >= k (0 <= k < 2^P).
    __device__ __forceinline__ u32 ge(int k) const {
        u32 gt = 0u, eq = 0xffffffffu;
#pragma unroll
        for (int q = P - 1; q >= 0; q--) {
            u32 kb = ((k >> q) & 1) ? 0xffffffffu : 0u;
            gt |= eq & p[q] & ~kb;
            eq &= ~(p[q] ^ kb);
        }
        return gt | eq;
    }
    // Bit b set iff count(b) >= o.count(b).
    __device__ __forceinline__ u32 ge(const Vc &o) const {
        u32 gt = 0u, eq = 0xffffffffu;
#pragma unroll
        for (int q = P - 1; q >= 0; q--) {
            gt |= eq & p[q] & ~o.p[q];
            eq &= ~(p[q] ^ o.p[q]);
        }
        return gt | eq;
    }
};

template <bool NC> __device__ __forceinline__ u32 ld_x(const u32 *p) {
    if constexpr (NC) return __ldg(p);
    else return *p;
}

// Streaming (evict-first) load for the adjacency, read once; x stays cached.
__device__ __forceinline__ int ld_stream(const int *p) { return __ldcs(p); }

// After this warp added its partial sums of a split row: count it; the last warp of the row
// reads (and zeroes) the sums and writes the row.  rows_per = rows owned by the slot (1 for
// CSR, 4 for FRDC), row0 = first of them, rvalid = rows < n.
template <long long C, char Z>
__device__ __forceinline__ void split_finish(int slot, int nk, long long row0, int rows_per,
                                             long long n, int *partial, unsigned *done,
                                             const float *rowf, void *yp) {
    constexpr long long W = words_of(C);
    const int lane = threadIdx.x & 31;
    __threadfence();
    __syncwarp();
    unsigned last = 0;
    if (lane == 0) last = atomicAdd(&done[slot], 1u) == (unsigned)(nk - 1);
    last = __shfl_sync(0xffffffffu, last, 0);
    if (!last) return;
    __threadfence();
    int *ps = partial + (long long)slot * rows_per * C;
    for (int r = 0; r < rows_per; r++) {
        long long row = row0 + r;
        if (row >= n) break;
        for (long long w = 0; w < W; w++) {
            long long c = w * 32 + lane;
            int s = c < C ? atomicExch(&ps[r * C + c], 0) : 0;
            if constexpr (Z == 'B') {
                u32 word = __ballot_sync(0xffffffffu, c < C && s >= 0);
                if (lane == 0) ((u32 *)yp)[row * W + w] = word;
            } else {
                float rf = rowf ? rowf[row] : 1.0f;
                if (c < C) ((float *)yp)[row * C + c] = fmul(rf, (float)s);
            }
        }
    }
    if (lane == 0) done[slot] = 0u;
}

} // namespace fast_detail

#ifndef __CUDACC_RTC__
// Builds the schedule of `rows` rows with row pointer d_rowptr (CSR rowptr, or FRDC
// tile_rowptr) on the GPU; allocates sched.items (cudaMalloc; free with bspmm_sched_free)
// and synchronises `stream` once to learn the sizes (a per-graph step, like FRDC).
inline cudaError_t bspmm_sched_build(long long rows, const long long *d_rowptr, int chunk,
                                     BspmmSched *out, cudaStream_t stream = 0) {
    using namespace fast_detail;
    *out = BspmmSched{};
    out->rows = rows;
    out->chunk = chunk;
    if (rows < 0 || chunk < 1) return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    long long *cnt = nullptr, *pref = nullptr;
    void *tmp = nullptr;
    size_t tb = 0;
    cudaError_t err = cudaMalloc(&cnt, sizeof(long long) * (rows + 1) * 2);
    if (err != cudaSuccess) return err;
    pref = cnt + rows + 1;
    int blocks = (int)((rows + 256) / 256 > 65535 ? 65535 : (rows + 256) / 256);
    k_sched_count<<<blocks, 256, 0, stream>>>(rows, d_rowptr, chunk, cnt);
    cub::DeviceScan::ExclusiveSum(nullptr, tb, cnt, pref, (int)(rows + 1), stream);
    if ((err = cudaMalloc(&tmp, tb)) != cudaSuccess) { cudaFree(cnt); return err; }
    err = cub::DeviceScan::ExclusiveSum(tmp, tb, cnt, pref, (int)(rows + 1), stream);
    long long tot = 0;
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(&tot, pref + rows, sizeof tot, cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err == cudaSuccess) {
        out->nitems = tot & ((1LL << 40) - 1);
        out->nsplit = tot >> 40;
        err = cudaMalloc(&out->items, sizeof(int4) * out->nitems);
    }
    if (err == cudaSuccess) {
        k_sched_fill<<<blocks, 256, 0, stream>>>(rows, pref, out->items);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    cudaFree(tmp);
    cudaFree(cnt);
    return err;
}
inline void bspmm_sched_free(BspmmSched *s) {
    if (s->items) cudaFree(s->items);
    *s = BspmmSched{};
}
// int32 elements of the `partial` buffer (zero it once) and unsigned elements of `done`.
inline long long bspmm_partial_elems(const BspmmSched &s, long long C, int rows_per) {
    return (s.nsplit > 0 ? s.nsplit : 1) * rows_per * C;
}

#endif // !__CUDACC_RTC__

// ---- CSR kernel ---------------------------------------------------------------------------
// y = bspmm.BB{Z}(A, x) for the rows listed in items; see the file comment.
// NC: read x through the read-only (non-coherent) cache, for a kernel of its own; the
// generated fused kernel (x written earlier in the same kernel) passes false.
template <long long C, char Z, int METHOD, bool NC = true>
__device__ __forceinline__ void bspmm_bb_csr(long long n, const long long *__restrict__ rowptr,
                                             const int *__restrict__ col,
                                             const float *__restrict__ rowf,
                                             const u32 *x, void *__restrict__ yp,
                                             const int4 *__restrict__ items, long long nitems,
                                             int chunk, int *partial, unsigned *done) {
    using namespace fast_detail;
    static_assert(Z == 'B' || Z == 'F', "bspmm_bb_csr: output B or F");
    static_assert(METHOD >= 1 && METHOD <= 3, "bspmm_bb_csr: method");
    constexpr int P = BSPMM_PLANES;
    constexpr long long W = words_of(C);
    const int lane = threadIdx.x & 31;
    const long long warp0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long it = warp0; it < nitems; it += nwarps) {
        const int4 item = items[it];
        const long long row = item.x;
        const long long rs = rowptr[row], re = rowptr[row + 1];
        const long long e0 = rs + (long long)item.y * chunk;
        const long long e1 = e0 + chunk < re ? e0 + chunk : re;
        const int d = (int)(e1 - e0);
        const bool split = item.w >= 0;
        int *ps = split ? partial + (long long)item.w * C : nullptr;
        const float rf = (Z == 'F' && rowf) ? rowf[row] : 1.0f;
        if constexpr (METHOD == METHOD_IFELSE) {
            // One lane per feature of a group of 8 words; neighbours in order, +-1 per bit.
            constexpr long long WB = 8, NGI = (W + WB - 1) / WB;
            for (long long g = 0; g < NGI; g++) {
                int cnt[WB];
#pragma unroll
                for (int u = 0; u < WB; u++) cnt[u] = 0;
                for (long long base = e0; base < e1; base += 32) {
                    const long long e = base + lane;
                    const int mycol = e < e1 ? ld_stream(col + e) : 0;
                    const int m = e1 - base < 32 ? (int)(e1 - base) : 32;
                    for (int t = 0; t < m; t++) {
                        const long long j = __shfl_sync(0xffffffffu, mycol, t);
                        const u32 *xj = x + j * W + g * WB;
#pragma unroll
                        for (int u = 0; u < WB; u++)
                            if (g * WB + u < W) cnt[u] += ((ld_x<NC>(xj + u) >> lane) & 1u) ? 1 : -1;
                    }
                }
#pragma unroll
                for (int u = 0; u < WB; u++) {
                    const long long w = g * WB + u, c = w * 32 + lane;
                    if (w >= W) break;
                    if (split) {
                        if (c < C) atomicAdd(ps + c, cnt[u]);
                    } else if constexpr (Z == 'B') {
                        u32 word = __ballot_sync(0xffffffffu, c < C && cnt[u] >= 0);
                        if (lane == 0) ((u32 *)yp)[row * W + w] = word;
                    } else {
                        if (c < C) ((float *)yp)[row * C + c] = fmul(rf, (float)cnt[u]);
                    }
                }
            }
        } else {
            constexpr int WG = W >= 32 ? 32 : pow2ceil(W);
            constexpr int S = 32 / WG;
            constexpr long long NG = (W + WG - 1) / WG;
            const int s = lane / WG, wl = lane % WG;
            for (long long g = 0; g < NG; g++) {
                const long long w = g * WG + wl;
                const bool wvalid = w < W;
                const u32 mask = wvalid ? word_mask(C, w) : 0u;
                Vc<P> ones, zeros;
                ones.zero();
                if constexpr (METHOD == METHOD_ANDNOT) zeros.zero();
                // Batches of 8 rounds of S edges: 8 independent gathers in flight per lane.
                // (A variant that loads the column indices coalesced one batch ahead and hands
                // them out with shuffles measured no faster at C = 64/128 and slower at 256.)
                for (long long base = e0; base < e1; base += 8 * S) {
                    u32 v[8];
                    bool ok[8];
#pragma unroll
                    for (int k = 0; k < 8; k++) {
                        const long long e = base + s + S * k;
                        ok[k] = e < e1;
                        const long long j = ok[k] ? ld_stream(col + e) : 0;
                        v[k] = (ok[k] && wvalid) ? ld_x<NC>(x + j * W + w) : 0u;
                    }
                    ones.add8(v);
                    if constexpr (METHOD == METHOD_ANDNOT) {
#pragma unroll
                        for (int k = 0; k < 8; k++) v[k] = ok[k] ? (~v[k] & mask) : 0u;
                        zeros.add8(v);
                    }
                }
                ones.reduce_xor(WG, 32);
                if constexpr (METHOD == METHOD_ANDNOT) zeros.reduce_xor(WG, 32);
                if (!split && Z == 'B') {
                    u32 word = METHOD == METHOD_POPC2 ? ones.ge((d + 1) >> 1) : ones.ge(zeros);
                    if (s == 0 && wvalid) ((u32 *)yp)[row * W + w] = word & mask;
                } else {
                    // Lane (s, w) unpacks bits b = t*S + s of word w.
#pragma unroll
                    for (int t = 0; t < WG; t++) {
                        const int b = t * S + s;
                        const long long c = w * 32 + b;
                        if (!wvalid || c >= C) continue;
                        int sv = METHOD == METHOD_POPC2 ? 2 * ones.count(b) - d
                                                        : ones.count(b) - zeros.count(b);
                        if (split) atomicAdd(ps + c, sv);
                        else ((float *)yp)[row * C + c] = fmul(rf, (float)sv);
                    }
                }
            }
        }
        if (split) split_finish<C, Z>(item.w, item.z, row, 1, n, partial, done, rowf, yp);
    }
}

template <long long C, char Z, int METHOD>
__global__ void __launch_bounds__(128)
    bspmm_bb_csr_kernel(long long n, const long long *__restrict__ rowptr,
                        const int *__restrict__ col, const float *__restrict__ rowf,
                        const u32 *__restrict__ x, void *__restrict__ y,
                        const int4 *__restrict__ items, long long nitems, int chunk, int *partial,
                        unsigned *done) {
    bspmm_bb_csr<C, Z, METHOD>(n, rowptr, col, rowf, x, y, items, nitems, chunk, partial, done);
}

#ifndef __CUDACC_RTC__
// ---- FRDC kernel (POPC2) ------------------------------------------------------------------
// One warp per item of TILE rows; lane = r * 8 + slot * WG + w: r the row inside the tile
// row, WG = min(pow2ceil(W), 8) words, S = 8 / WG tiles per round.  A lane adds, for the
// 4 columns of each tile, the neighbour's word when its row's bit is set (a column shared by
// several rows of the tile row is gathered once per row lane group; L1 serves the repeats).
// partial holds 4*C ints per split slot.  Schedule: bspmm_sched_build over tile_rowptr with
// chunk <= BSPMM_FRDC_CHUNK.
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

#endif // !__CUDACC_RTC__

} // namespace bgnn

#endif // BGNN_BSPMM_FAST_CUH
