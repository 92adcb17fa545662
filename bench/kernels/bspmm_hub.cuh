// bspmm_hub.cuh - benchmark-only (bench/bspmm_bench.cu): the CSR aggregation kernel of
// templates/bspmm_fast.cuh with the hub rows of x in shared memory, for graphs renumbered by
// decreasing degree (degree_order.cuh).  Same semantics, schedule and split-row buffers as
// bspmm_bb_csr; built from its steps (count_item, group_rows, split_finish).  Measured in
// docs/performance.md ("Degree renumbering, hub rows in shared memory, grouped small rows").
// Not used by the code generator: using it needs bind-time renumbering and a launch of its
// own (1024 threads, 192 KB of shared memory) outside the fused kernel.
#ifndef BGNN_BENCH_BSPMM_HUB_CUH
#define BGNN_BENCH_BSPMM_HUB_CUH

#include <cuda_runtime.h>

#include "../../templates/bspmm_fast.cuh"

namespace bgnn {

namespace fast_detail {
__global__ void k_hub_ends(long long n, const long long *__restrict__ rowptr,
                           const int *__restrict__ col, int H, int *__restrict__ hub_end) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long lo = rowptr[i], hi = rowptr[i + 1], b = lo;
        while (lo < hi) { // first edge with col >= H
            long long mid = (lo + hi) >> 1;
            if (col[mid] < H) lo = mid + 1;
            else hi = mid;
        }
        hub_end[i] = (int)(lo - b);
    }
}
} // namespace fast_detail
// hub_end[i] = number of neighbours of row i with id < H (a prefix: columns ascending), for
// bspmm_bb_csr_hub_kernel; one thread per row, asynchronous on `stream`.
inline cudaError_t bspmm_hub_ends(long long n, const long long *d_rowptr, const int *d_col, int H,
                                  int *d_hub_end, cudaStream_t stream = 0) {
    if (n <= 0) return cudaSuccess;
    int blocks = (int)((n + 255) / 256 > 65535 ? 65535 : (n + 255) / 256);
    fast_detail::k_hub_ends<<<blocks, 256, 0, stream>>>(n, d_rowptr, d_col, H, d_hub_end);
    return cudaGetLastError();
}


// ---- CSR kernel with the hub rows in shared memory (POPC2 / ANDNOT) ------------------------
// For a graph renumbered by decreasing degree (degree_order.cuh) the rows of x of the H
// first nodes (the hubs) take most gathers.  Each block copies x[0, H) into shared memory
// once, then its warps take items from a queue until none is left.  The columns of a row are
// ascending, so the hub neighbours of every row are a prefix of it: hub_end[row] (built once
// per graph, bspmm_hub_ends) splits each item into a shared-memory part and a global part,
// with no per-edge branch.  Correct for any graph with ascending columns and any H <= N;
// fast only where low ids are the hot ones.
// queue: unsigned[2] {next item, warps done}, zeroed once at allocation; the last warp to
// finish resets both, so back-to-back launches need no memset (they must be stream-ordered).
// Launch: blockDim 1024 (32 warps: one block per SM holds the whole hub copy), grid = the
// SM count (any grid >= 1 is correct), dynamic shared memory H * words_of(C) * 4 bytes.
template <long long C, char Z, int METHOD>
__global__ void __launch_bounds__(1024, 1)
    bspmm_bb_csr_hub_kernel(long long n, const long long *__restrict__ rowptr,
                            const int *__restrict__ col, const float *__restrict__ rowf,
                            const u32 *__restrict__ x, void *__restrict__ yp,
                            const int4 *__restrict__ items, long long nitems, int chunk,
                            int *partial, unsigned *done, const int *__restrict__ hub_end, int H,
                            unsigned *queue) {
    using namespace fast_detail;
    static_assert(Z == 'B' || Z == 'F', "bspmm_bb_csr_hub: output B or F");
    static_assert(METHOD == METHOD_POPC2 || METHOD == METHOD_ANDNOT, "bspmm_bb_csr_hub: method");
    constexpr long long W = words_of(C);
    extern __shared__ u32 xs[];
    for (long long i = threadIdx.x; i < (long long)H * W; i += blockDim.x) xs[i] = __ldg(x + i);
    __syncthreads();
    const int lane = threadIdx.x & 31;
    auto loadh = [&](long long j, long long w) { return xs[j * W + w]; };
    auto loadg = [&](long long j, long long w) { return __ldg(x + j * W + w); };
    for (;;) {
        unsigned it = 0;
        if (lane == 0) it = atomicAdd(&queue[0], 1u);
        it = __shfl_sync(0xffffffffu, it, 0);
        if (it >= (unsigned long long)nitems) break;
        const int4 item = items[it];
        if (item.z == 0) { // group item
            group_rows<C, Z, METHOD>(item.x, item.y, rowptr, col, rowf, hub_end, yp, loadh, loadg);
            continue;
        }
        const long long row = item.x;
        const long long rs = rowptr[row], re = rowptr[row + 1], hb = rs + hub_end[row];
        const long long e0 = rs + (long long)item.y * chunk;
        const long long e1 = e0 + chunk < re ? e0 + chunk : re;
        const long long m = hb < e0 ? e0 : hb > e1 ? e1 : hb; // hub edges: [e0, m)
        const bool split = item.w >= 0;
        int *ps = split ? partial + (long long)item.w * C : nullptr;
        const float rf = (Z == 'F' && rowf) ? rowf[row] : 1.0f;
        count_item<C, Z, METHOD>(col, e0, m, e1, row, split, ps, rf, yp, loadh, loadg);
        if (split) split_finish<C, Z>(item.w, item.z, row, 1, n, partial, done, rowf, yp);
    }
    if (lane == 0) {
        __threadfence();
        const unsigned nw = gridDim.x * (blockDim.x >> 5);
        if (atomicAdd(&queue[1], 1u) == nw - 1) {
            queue[0] = 0u;
            queue[1] = 0u;
        }
    }
}

} // namespace bgnn

#endif // BGNN_BENCH_BSPMM_HUB_CUH
