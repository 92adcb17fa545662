// bench_util.cuh - what the microbenchmarks (bspmm_bench.cu, bmm_bench.cu) share: the CUDA
// error checks CK and CK_STATUS, the median of event-timed launches, the measured device copy
// bandwidth, and a CPU reference of the product (reference/ref_ops.c) run over row blocks in
// parallel.
#ifndef BGNN_BENCH_UTIL_CUH
#define BGNN_BENCH_UTIL_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

extern "C" {
#include "bg.h"
}

#define CK(x)                                                                                 \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

// A library call returning status OK (cuSPARSE, cuBLAS), else exit(2) naming LIB and the status.
#define CK_STATUS(x, OK, LIB)                                                                 \
    do {                                                                                      \
        auto s_ = (x);                                                                        \
        if (s_ != (OK)) {                                                                     \
            fprintf(stderr, "%s:%d: %s: %s status %d\n", __FILE__, __LINE__, #x, LIB, (int)s_); \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

// Median ms of `reps` calls of f, each timed alone with CUDA events after `warm` untimed ones;
// f gets the call's index (warm-ups 0..warm-1, then warm..warm+reps-1), e.g. to rotate inputs.
static inline float median_ms(const std::function<void(int)> &f, int warm, int reps) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < warm; i++) f(i);
    std::vector<float> t;
    for (int i = 0; i < reps; i++) {
        CK(cudaEventRecord(a));
        f(warm + i);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Device-to-device copy of 1 GiB: bytes read + written per second (median of 10).
static inline double measure_bw() {
    const size_t bytes = 1ull << 30;
    void *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(a, 1, bytes));
    float ms = median_ms([&](int) { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); }, 2, 10);
    CK(cudaFree(a));
    CK(cudaFree(b));
    return 2.0 * bytes / (ms * 1e-3);
}

// Rows [0, R) of a CPU reference result, computed in blocks of 64 rows in parallel (OpenMP;
// the rows are independent): ref(r0, r1, &y) puts rows r0 .. r1-1 into a new tensor y of opr
// 32-bit words per row (b1 words or f32 bits); out = the words of all rows, R x opr.  false
// when ref refused a block.
template <class Ref> static bool ref_rows(long long R, long long opr, std::vector<uint32_t> &out, Ref ref) {
    out.assign((size_t)std::max(1LL, R * opr), 0u);
    const long long CH = 64, nch = (R + CH - 1) / CH;
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : bad)
    for (long long c = 0; c < nch; c++) {
        const long long r0 = c * CH, r1 = std::min(R, r0 + CH);
        BgTensor y;
        if (!ref(r0, r1, &y)) {
            bad++;
            continue;
        }
        memcpy(&out[(size_t)(r0 * opr)], y.data, sizeof(uint32_t) * (size_t)((r1 - r0) * opr));
        bg_tensor_free(&y);
    }
    return bad == 0;
}

#endif
