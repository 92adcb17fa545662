// frdc.cuh - FRDC ("B2SR-4") adjacency: the 0/1 pattern of a CSR graph as 4x4 bit tiles,
// built on the GPU from the CSR in parallel (reference-notes section 3).  Benchmark-only
// (bench/bspmm_bench.cu, with the FRDC kernel of bspmm_frdc.cuh): the code generator uses the
// CSR kernel of templates/bspmm_fast.cuh.
//
// Input: the CSR of docs/semantics.md section 3 (BgAdj: rowptr int64[N+1], col int32[nnz],
// ascending and duplicate-free per row, self loops already present when the model asks for
// them).  Output:
//   tile_rowptr int64[ntr + 1], ntr = ceil(N/4): tiles of tile row R (rows 4R..4R+3) are
//               tile_rowptr[R] .. tile_rowptr[R+1]-1; tile_rowptr[ntr] = ntiles.
//   colind      int32[ntiles]: tile column T (columns 4T..4T+3), strictly ascending per
//               tile row; a tile exists iff its 4x4 block holds at least one edge.
//   payload     PAYLOAD_BYTES = 2 (bgnn's packed form, the default: 25% smaller index than the
//                 4-byte form and as fast to build and use, docs/performance.md):
//                 uint16[ntiles], bit (4*r + c) = edge (4R + r, 4T + c);
//               PAYLOAD_BYTES = 4 (the BitGNN authors' form):
//                 uint32[ntiles], byte r (bits 8r..8r+7) holds row r, its low nibble with
//                 column c at bit (3 - c) (column 0 at bit 3), the high nibble zero.
//   Rows / columns past N (the last tile row / column when N % 4 != 0) are zero bits.
//
// Construction (no per-row host work; every step is a kernel or a CUB scan):
//   1. one warp per CSR row, one lane per edge: edge e of row i (tile row R = i/4,
//      T = col[e]/4) OWNS tile (R, T) when it is the first edge of row i in tile column T
//      and no earlier row of the same tile row has an edge in columns 4T..4T+3 (binary
//      search in those <= 3 sorted rows).  flags[e] = owner.
//   2. exclusive scan of flags over all edges (the edges of one tile row are contiguous in
//      the CSR, so tile_rowptr[R] = pref[rowptr[4R]]).
//   3. each owner computes its tile's rank in its tile row (sum over the 4 rows of the
//      owners before lower_bound(4T) in that row) and the 16 payload bits (the <= 4 edges of
//      each row inside the tile), and writes colind / payload at tile_rowptr[R] + rank.
// Limits: nnz < 2^31 (the scan counts in int32; checked by frdc_build).
//
// Host API (all asynchronous on `stream`, no host synchronisation, no allocation):
//   size_t frdc_temp_bytes(long long nnz);
//   cudaError_t frdc_build(n, d_rowptr, d_col, nnz, payload_bytes, d_temp, temp_bytes,
//                          d_tile_rowptr /*ntr+1*/, d_colind /*cap nnz*/,
//                          d_payload /*cap nnz * payload_bytes*/, stream);
// colind and payload are sized for the worst case (ntiles <= nnz); the tile count is
// d_tile_rowptr[ntr] (copy it back when the exact size is needed).
#ifndef BGNN_BENCH_FRDC_CUH
#define BGNN_BENCH_FRDC_CUH

#include <cub/cub.cuh>
#include <cuda_runtime.h>

namespace bgnn {

struct Frdc {
    long long n = 0, ntr = 0, ntiles = 0;
    const long long *tile_rowptr = nullptr;
    const int *colind = nullptr;
    const void *payload = nullptr;
    int payload_bytes = 2;
};

__host__ __device__ constexpr long long frdc_tile_rows(long long n) { return (n + 3) / 4; }

namespace frdc_detail {

// First index p in [lo, hi) with col[p] >= key (hi when none).
__device__ __forceinline__ long long lower_bound(const int *col, long long lo, long long hi,
                                                 int key) {
    while (lo < hi) {
        long long mid = lo + ((hi - lo) >> 1);
        if (col[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

__global__ void k_owner_flags(long long n, const long long *__restrict__ rowptr,
                              const int *__restrict__ col, int *__restrict__ flags,
                              long long nnz) {
    const int lane = threadIdx.x & 31;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    if (warp == 0 && lane == 0) flags[nnz] = 0; // the scan's total slot
    for (long long i = warp; i < n; i += nwarps) {
        const long long rs = rowptr[i], re = rowptr[i + 1];
        const long long r0 = i & ~3LL;
        for (long long e = rs + lane; e < re; e += 32) {
            const int T = col[e] >> 2;
            int own = (e == rs) || ((col[e - 1] >> 2) != T);
            for (long long q = r0; own && q < i; q++) {
                const long long qs = rowptr[q], qe = rowptr[q + 1];
                long long p = lower_bound(col, qs, qe, T << 2);
                if (p < qe && (col[p] >> 2) == T) own = 0;
            }
            flags[e] = own;
        }
    }
}

template <int PB>
__global__ void k_fill(long long n, const long long *__restrict__ rowptr,
                       const int *__restrict__ col, const int *__restrict__ pref,
                       long long *__restrict__ tile_rowptr, int *__restrict__ colind,
                       void *__restrict__ payload) {
    const int lane = threadIdx.x & 31;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    const long long ntr = frdc_tile_rows(n);
    // tile_rowptr (R = 0..ntr): the exclusive owner prefix at the tile row's first edge.
    for (long long R = warp * 32 + lane; R <= ntr; R += nwarps * 32) {
        long long r = R * 4 < n ? R * 4 : n;
        tile_rowptr[R] = pref[rowptr[r]];
    }
    for (long long i = warp; i < n; i += nwarps) {
        const long long rs = rowptr[i], re = rowptr[i + 1];
        const long long r0 = i & ~3LL;
        const long long r1 = r0 + 4 < n ? r0 + 4 : n;
        for (long long e = rs + lane; e < re; e += 32) {
            if (pref[e + 1] == pref[e]) continue; // not an owner
            const int T = col[e] >> 2;
            long long rank = 0;
            unsigned bits = 0;
            for (long long q = r0; q < r1; q++) {
                const long long qs = rowptr[q], qe = rowptr[q + 1];
                long long p = q == i ? e : lower_bound(col, qs, qe, T << 2);
                rank += pref[p] - pref[qs];
                const int rr = (int)(q - r0);
                for (; p < qe && col[p] < (T << 2) + 4; p++) {
                    const int c = col[p] & 3;
                    if (PB == 2) bits |= 1u << (4 * rr + c);
                    else bits |= 1u << (8 * rr + (3 - c));
                }
            }
            const long long pos = pref[rowptr[r0]] + rank; // tile_rowptr[R] + rank
            colind[pos] = T;
            if (PB == 2) ((unsigned short *)payload)[pos] = (unsigned short)bits;
            else ((unsigned *)payload)[pos] = bits;
        }
    }
}

inline size_t scan_temp_bytes(long long nnz) {
    size_t b = 0;
    cub::DeviceScan::ExclusiveSum(nullptr, b, (const int *)nullptr, (int *)nullptr,
                                  (int)(nnz + 1));
    return b;
}

inline size_t align256(size_t b) { return (b + 255) & ~(size_t)255; }

} // namespace frdc_detail

// Scratch needed by frdc_build: flags + prefix (int32[nnz+1] each) + CUB's scan storage.
inline size_t frdc_temp_bytes(long long nnz) {
    using namespace frdc_detail;
    return 2 * align256(sizeof(int) * (size_t)(nnz + 1)) + align256(scan_temp_bytes(nnz));
}

inline cudaError_t frdc_build(long long n, const long long *d_rowptr, const int *d_col,
                              long long nnz, int payload_bytes, void *d_temp,
                              size_t temp_bytes, long long *d_tile_rowptr, int *d_colind,
                              void *d_payload, cudaStream_t stream = 0) {
    using namespace frdc_detail;
    if (n < 0 || nnz < 0 || nnz >= (1LL << 31) - 1) return cudaErrorInvalidValue;
    if (payload_bytes != 2 && payload_bytes != 4) return cudaErrorInvalidValue;
    if (temp_bytes < frdc_temp_bytes(nnz)) return cudaErrorInvalidValue;
    char *t = (char *)d_temp;
    int *flags = (int *)t;
    t += align256(sizeof(int) * (size_t)(nnz + 1));
    int *pref = (int *)t;
    t += align256(sizeof(int) * (size_t)(nnz + 1));
    size_t sb = scan_temp_bytes(nnz);
    const int threads = 256;
    long long want = (n * 32 + threads - 1) / threads;
    int blocks = (int)(want < 1 ? 1 : want > (1 << 20) ? (1 << 20) : want);
    k_owner_flags<<<blocks, threads, 0, stream>>>(n, d_rowptr, d_col, flags, nnz);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    err = cub::DeviceScan::ExclusiveSum(t, sb, flags, pref, (int)(nnz + 1), stream);
    if (err != cudaSuccess) return err;
    if (payload_bytes == 2)
        k_fill<2><<<blocks, threads, 0, stream>>>(n, d_rowptr, d_col, pref, d_tile_rowptr,
                                                  d_colind, d_payload);
    else
        k_fill<4><<<blocks, threads, 0, stream>>>(n, d_rowptr, d_col, pref, d_tile_rowptr,
                                                  d_colind, d_payload);
    return cudaGetLastError();
}

// The 4-bit row nibble of a tile (bit c = column c), whatever the payload form.
template <int PB>
__device__ __forceinline__ unsigned frdc_row_nibble(const void *payload, long long t, int r) {
    if constexpr (PB == 2) {
        return (((const unsigned short *)payload)[t] >> (4 * r)) & 15u;
    } else {
        unsigned b = (((const unsigned *)payload)[t] >> (8 * r)) & 15u; // column c at bit 3-c
        return __brev(b) >> 28;
    }
}

} // namespace bgnn

#endif // BGNN_BENCH_FRDC_CUH
