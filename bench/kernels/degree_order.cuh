// degree_order.cuh - renumber a CSR graph's nodes by decreasing degree, on the GPU.
// Benchmark-only (bench/bspmm_bench.cu --degord-only; the runtime binds graphs in the
// caller's node order).
//
// Why: bspmm.BB* on a large skewed graph is bound by L2 sector requests, one per edge (the
// neighbour's activation row, 16 bytes at hidden 128).  When node ids are scrambled (R-MAT,
// Graph500) a hub's row shares its 128-byte line with seven cold rows, so hub rows cannot
// stay in L1.  Renumbered by degree, the hub rows are contiguous: the few thousand rows that
// carry half the edges fill a few hundred lines, which L1 keeps (docs/performance.md).
//
// Input: CSR rowptr int64[n+1], col int32[nnz] (any order within a row).
// Output: perm int32[n] (new id -> old id), inv int32[n] (old id -> new id),
//         rowptr2 int64[n+1], col2 int32[nnz]: the same graph with node v renamed inv[v],
//         rows in new-id order, columns ascending within each row (the CSR contract of
//         docs/semantics.md section 3).  New ids: decreasing degree, ties by increasing old
//         id (the radix sort is stable), so the order is deterministic.
// Every step is a kernel or a CUB primitive; nothing runs row by row on the host.
//
// Host API (asynchronous on `stream`, no allocation, no host synchronisation):
//   size_t degree_order_temp_bytes(long long n, long long nnz);
//   cudaError_t degree_order(n, d_rowptr, d_col, nnz, d_temp, temp_bytes, d_perm, d_inv,
//                            d_rowptr2, d_col2, stream);
// Limits: n < 2^31, nnz < 2^31 (CUB's segmented sort counts in int).
#ifndef BGNN_BENCH_DEGREE_ORDER_CUH
#define BGNN_BENCH_DEGREE_ORDER_CUH

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>

namespace bgnn {

__global__ void k_do_degrees(long long n, const long long *rp, int *deg, int *ids) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        deg[i] = (int)(rp[i + 1] - rp[i]);
        ids[i] = (int)i;
    }
}

__global__ void k_do_inverse(long long n, const int *perm, const int *sdeg, int *inv,
                             long long *ndeg) {
    for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r <= n;
         r += (long long)gridDim.x * blockDim.x) {
        if (r < n) inv[perm[r]] = (int)r;
        ndeg[r] = r < n ? sdeg[r] : 0;
    }
}

// One warp per new row: its old row's columns, renamed.
__global__ void k_do_relabel(long long n, const int *perm, const int *inv, const long long *rp,
                             const int *col, const long long *rp2, int *col2) {
    const int lane = threadIdx.x & 31;
    for (long long r = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5; r < n;
         r += ((long long)gridDim.x * blockDim.x) >> 5) {
        long long b = rp[perm[r]], e = rp[perm[r] + 1], o = rp2[r];
        for (long long k = b + lane; k < e; k += 32) col2[o + (k - b)] = inv[col[k]];
    }
}

struct DegreeOrderTemp {
    size_t sort_bytes, scan_bytes, seg_bytes, total;
};

inline DegreeOrderTemp degree_order_layout(long long n, long long nnz) {
    DegreeOrderTemp t{};
    cub::DeviceRadixSort::SortPairsDescending(nullptr, t.sort_bytes, (int *)nullptr,
                                              (int *)nullptr, (int *)nullptr, (int *)nullptr,
                                              (int)n);
    cub::DeviceScan::ExclusiveSum(nullptr, t.scan_bytes, (long long *)nullptr,
                                  (long long *)nullptr, (int)(n + 1));
    cub::DeviceSegmentedSort::SortKeys(nullptr, t.seg_bytes, (int *)nullptr, (int *)nullptr,
                                       (int)nnz, (int)n, (long long *)nullptr,
                                       (long long *)nullptr);
    auto al = [](size_t b) { return (b + 255) & ~(size_t)255; };
    // deg, ids, sorted deg: 3 x int[n]; ndeg: long long[n+1]; unsorted col2: int[nnz]
    t.total = 3 * al(4 * (size_t)n) + al(8 * (size_t)(n + 1)) + al(4 * (size_t)nnz) +
              al(std::max(t.sort_bytes, std::max(t.scan_bytes, t.seg_bytes)));
    return t;
}

inline size_t degree_order_temp_bytes(long long n, long long nnz) {
    return degree_order_layout(n, nnz).total;
}

inline cudaError_t degree_order(long long n, const long long *d_rowptr, const int *d_col,
                                long long nnz, void *d_temp, size_t temp_bytes, int *d_perm,
                                int *d_inv, long long *d_rowptr2, int *d_col2,
                                cudaStream_t stream = 0) {
    if (n <= 0) return cudaSuccess;
    if (n >= (1LL << 31) || nnz >= (1LL << 31)) return cudaErrorInvalidValue;
    DegreeOrderTemp t = degree_order_layout(n, nnz);
    if (temp_bytes < t.total) return cudaErrorInvalidValue;
    auto al = [](size_t b) { return (b + 255) & ~(size_t)255; };
    char *p = (char *)d_temp;
    int *deg = (int *)p;            p += al(4 * (size_t)n);
    int *ids = (int *)p;            p += al(4 * (size_t)n);
    int *sdeg = (int *)p;           p += al(4 * (size_t)n);
    long long *ndeg = (long long *)p; p += al(8 * (size_t)(n + 1));
    int *unsorted = (int *)p;       p += al(4 * (size_t)nnz);
    void *cubtmp = p;
    size_t cb = std::max(t.sort_bytes, std::max(t.scan_bytes, t.seg_bytes));
    const int T = 256;
    int g = (int)std::min<long long>((n + T) / T, 1 << 16);
    k_do_degrees<<<g, T, 0, stream>>>(n, d_rowptr, deg, ids);
    cudaError_t e = cub::DeviceRadixSort::SortPairsDescending(cubtmp, cb, deg, sdeg, ids, d_perm,
                                                              (int)n, 0, 32, stream);
    if (e != cudaSuccess) return e;
    k_do_inverse<<<g, T, 0, stream>>>(n, d_perm, sdeg, d_inv, ndeg);
    e = cub::DeviceScan::ExclusiveSum(cubtmp, cb, ndeg, d_rowptr2, (int)(n + 1), stream);
    if (e != cudaSuccess) return e;
    int gw = (int)std::min<long long>((32 * n + T - 1) / T, 1 << 16);
    k_do_relabel<<<gw, T, 0, stream>>>(n, d_perm, d_inv, d_rowptr, d_col, d_rowptr2, unsorted);
    if (nnz == 0) return cudaGetLastError();
    e = cub::DeviceSegmentedSort::SortKeys(cubtmp, cb, unsorted, d_col2, (int)nnz, (int)n,
                                           d_rowptr2, d_rowptr2 + 1, stream);
    if (e != cudaSuccess) return e;
    return cudaGetLastError();
}

} // namespace bgnn

#endif
