// prototype: bit aggregation in slot order (S = 32 edge slots, masked sums, 2P - S)
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cuda_runtime.h>
typedef unsigned u32;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(2); } } while (0)

struct Item { int row; int deg; long long e0; };

template <int NV, int N>
__device__ __forceinline__ void rs_level(float (&acc)[NV], int lane, int h) {
    if constexpr (N >= 2) {
        const bool up = lane & h;
#pragma unroll
        for (int j = 0; j < N / 2; j++) {
            const float send = up ? acc[j] : acc[j + N / 2];
            const float keep = up ? acc[j + N / 2] : acc[j];
            acc[j] = __fadd_rn(keep, __shfl_xor_sync(0xffffffffu, send, h));
        }
    }
}
// lanes = slots; each lane keeps WPL words x 32 masked sums of its slot's edges
template <int CW, int WPL, int PF>
__global__ void __launch_bounds__(256) agg_slots(const Item *items, int nitems, const int *col, const float *colf,
                                                 const float *rowf, const u32 *x, float *y) {
    const int lane = threadIdx.x & 31;
    constexpr int SPLIT = CW / WPL;
    long long wid = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const long long nw = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long it = wid; it < (long long)nitems * SPLIT; it += nw) {
        const Item I = items[it / SPLIT];
        const int w0 = (int)(it % SPLIT) * WPL;
        float acc[WPL * 32];
#pragma unroll
        for (int k = 0; k < WPL * 32; k++) acc[k] = 0.f;
        float s = 0.f;
        // pipeline PF steps deep
        int jq[PF];
        float fq[PF];
        u32 wq[PF][WPL];
#pragma unroll
        for (int p = 0; p < PF; p++) {
            const int t = lane + 32 * p;
            jq[p] = t < I.deg ? col[I.e0 + t] : -1;
        }
#pragma unroll
        for (int p = 0; p < PF; p++) {
            fq[p] = 0.f;
#pragma unroll
            for (int k = 0; k < WPL; k++) wq[p][k] = 0u;
            if (jq[p] >= 0) {
                fq[p] = colf[jq[p]];
                if constexpr (WPL == 4) {
                    uint4 v = *(const uint4 *)(x + (long long)jq[p] * CW + w0);
                    wq[p][0] = v.x; wq[p][1] = v.y; wq[p][2] = v.z; wq[p][3] = v.w;
                } else {
#pragma unroll
                    for (int k = 0; k < WPL; k++) wq[p][k] = x[(long long)jq[p] * CW + w0 + k];
                }
            }
        }
        for (int t0 = 0; t0 < I.deg; t0 += 32 * PF) {
#pragma unroll
            for (int p = 0; p < PF; p++) {
                const float f = fq[p];
                u32 ww[WPL];
#pragma unroll
                for (int k = 0; k < WPL; k++) ww[k] = wq[p][k];
                // refill slot p with step t0 + 32 (PF + p)
                const int t = t0 + 32 * (PF + p) + lane;
                int jn = t < I.deg ? col[I.e0 + t] : -1;
                fq[p] = 0.f;
#pragma unroll
                for (int k = 0; k < WPL; k++) wq[p][k] = 0u;
                if (jn >= 0) {
                    fq[p] = colf[jn];
                    if constexpr (WPL == 4) {
                        uint4 v = *(const uint4 *)(x + (long long)jn * CW + w0);
                        wq[p][0] = v.x; wq[p][1] = v.y; wq[p][2] = v.z; wq[p][3] = v.w;
                    } else {
#pragma unroll
                        for (int k = 0; k < WPL; k++) wq[p][k] = x[(long long)jn * CW + w0 + k];
                    }
                }
                s = __fadd_rn(s, f);  // f = 0 for an absent edge: s + 0 = s (no -0 arises)
#pragma unroll
                for (int k = 0; k < WPL; k++)
#pragma unroll
                    for (int b = 0; b < 32; b++)
                        if (ww[k] & (1u << b)) acc[k * 32 + b] = __fadd_rn(acc[k * 32 + b], f);
            }
        }
        // reduce-scatter over the 32 slots: level h, lane keeps half
        constexpr int NV = WPL * 32;
        rs_level<NV, NV>(acc, lane, 16);
        rs_level<NV, NV / 2>(acc, lane, 8);
        rs_level<NV, NV / 4>(acc, lane, 4);
        rs_level<NV, NV / 8>(acc, lane, 2);
        rs_level<NV, NV / 16>(acc, lane, 1);
#pragma unroll
        for (int h = 16; h >= 1; h >>= 1) s = __fadd_rn(s, __shfl_xor_sync(0xffffffffu, s, h));
        const float rf = rowf[I.row];
        float *yr = y + (long long)I.row * CW * 32 + w0 * 32;
        // lane holds NV/32 columns: lane*(NV/32) ..
        constexpr int PER = NV / 32 > 0 ? NV / 32 : 1;
        if constexpr (NV >= 32) {
#pragma unroll
            for (int k = 0; k < PER; k++) yr[lane * PER + k] = __fmul_rn(rf, __fsub_rn(__fadd_rn(acc[k], acc[k]), s));
        }
    }
}


// in-warp slots: lane = s * CWP + w (S = 32 / CWP slots, CWP words), masked sums, 2P - S
template <int CW, int PF>
__global__ void __launch_bounds__(256) agg_s8(const Item *items, int i0, int i1, const int *col, const float *colf,
                                             const float *rowf, const u32 *x, float *y) {
    constexpr int CWP = CW;  // prototype: CW a power of two <= 8
    constexpr int S = 32 / CWP;
    const int lane = threadIdx.x & 31;
    const int w = lane % CWP, sl = lane / CWP;
    long long wid = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const long long nw = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long it = i0 + wid; it < i1; it += nw) {
        const Item I = items[it];
        float acc[32];
#pragma unroll
        for (int k = 0; k < 32; k++) acc[k] = 0.f;
        float s = 0.f;
        float fq[PF];
        u32 wq[PF];
#pragma unroll
        for (int p = 0; p < PF; p++) {
            const int t = sl + S * p;
            const int j = t < I.deg ? col[I.e0 + t] : -1;
            fq[p] = j >= 0 ? colf[j] : 0.f;
            wq[p] = j >= 0 ? x[(long long)j * CW + w] : 0u;
        }
        for (int t0 = 0; t0 < I.deg; t0 += S * PF) {
#pragma unroll
            for (int p = 0; p < PF; p++) {
                const float f = fq[p];
                const u32 ww = wq[p];
                const int t = t0 + S * (PF + p) + sl;
                const int j = t < I.deg ? col[I.e0 + t] : -1;
                fq[p] = j >= 0 ? colf[j] : 0.f;
                wq[p] = j >= 0 ? x[(long long)j * CW + w] : 0u;
                s = __fadd_rn(s, f);
#pragma unroll
                for (int b = 0; b < 32; b++)
                    if (ww & (1u << b)) acc[b] = __fadd_rn(acc[b], f);
            }
        }
        // reduce-scatter over the S slots: level h splits on column bit h
#pragma unroll
        for (int h = S / 2; h >= 1; h >>= 1) {
            const bool up = sl & h;
#pragma unroll
            for (int b = 0; b < 32; b++) {
                if ((b & h) || (b & (S - 1) & ~(2 * h - 1))) continue;  // pairs (b, b | h) among live indices
                const float send = up ? acc[b] : acc[b | h];
                const float keep = up ? acc[b | h] : acc[b];
                acc[b] = __fadd_rn(keep, __shfl_xor_sync(0xffffffffu, send, h * CWP));
            }
        }
#pragma unroll
        for (int h = S / 2; h >= 1; h >>= 1) s = __fadd_rn(s, __shfl_xor_sync(0xffffffffu, s, h * CWP));
        const float rf = rowf[I.row];
        float *yr = y + (long long)I.row * CW * 32 + w * 32;
#pragma unroll
        for (int m = 0; m < 32 / S; m++) yr[sl + S * m] = __fmul_rn(rf, __fsub_rn(__fadd_rn(acc[S * m], acc[S * m]), s));
    }
}

static void ref_row(int deg, const int *c, const float *colf, const u32 *x, int CW, float rf, float *out, int S) {
    const int C = CW * 32;
    std::vector<float> v((size_t)32 * C, 0.f);
    float sv[32] = {0};
    for (int t = 0; t < deg; t++) {
        const int sl = t % S;
        const int j = c[t];
        const float f = colf[j];
        sv[sl] = sv[sl] + f;
        for (int q = 0; q < C; q++)
            if (x[(size_t)j * CW + q / 32] >> (q % 32) & 1) v[(size_t)sl * C + q] += f;
    }
    for (int h = S / 2; h >= 1; h >>= 1)
        for (int sl = 0; sl < h; sl++) {
            sv[sl] = sv[sl] + sv[sl + h];
            for (int q = 0; q < C; q++) v[(size_t)sl * C + q] = v[(size_t)sl * C + q] + v[(size_t)(sl + h) * C + q];
        }
    for (int q = 0; q < C; q++) out[q] = rf * ((v[q] + v[q]) - sv[0]);
}

template <class K>
static float timeit(const char *name, K launch, const void *fn, int reps) {
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, fn));
    cudaEvent_t a, b;
    cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<float> ts;
    for (int r = 0; r < reps + 3; r++) {
        cudaEventRecord(a);
        launch();
        cudaEventRecord(b);
        CK(cudaEventSynchronize(b));
        float ms; cudaEventElapsedTime(&ms, a, b);
        if (r >= 3) ts.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(ts.begin(), ts.end());
    printf("%-36s regs %3d spill %4d B  median %.3f ms  min %.3f\n", name, fa.numRegs, (int)fa.localSizeBytes, ts[ts.size() / 2], ts[0]);
    return ts[ts.size() / 2];
}
template <int CW, int WPL, int PF>
static float run(const char *name, const Item *d_items, int nitems, const int *d_col, const float *d_colf, const float *d_rowf,
                 const u32 *d_x, float *d_y, int reps) {
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int bps = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, agg_slots<CW, WPL, PF>, 256, 0));
    const int grid = sms * bps;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, agg_slots<CW, WPL, PF>));
    cudaEvent_t a, b;
    cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<float> ts;
    for (int r = 0; r < reps + 3; r++) {
        cudaEventRecord(a);
        agg_slots<CW, WPL, PF><<<grid, 256>>>(d_items, nitems, d_col, d_colf, d_rowf, d_x, d_y);
        cudaEventRecord(b);
        CK(cudaEventSynchronize(b));
        float ms; cudaEventElapsedTime(&ms, a, b);
        if (r >= 3) ts.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(ts.begin(), ts.end());
    printf("%-28s regs %3d spill %4d B  blocks/SM %d  median %.3f ms  min %.3f\n", name, fa.numRegs, (int)fa.localSizeBytes, bps,
           ts[ts.size() / 2], ts[0]);
    return ts[ts.size() / 2];
}

int main(int argc, char **argv) {
    const char *path = argv[1];
    FILE *f = fopen(path, "rb");
    int64_t hdr[2];
    if (!f || fread(hdr, sizeof hdr, 1, f) != 1) { printf("bad csr\n"); return 2; }
    const int64_t n = hdr[0], m = hdr[1];
    std::vector<int64_t> rp(n + 1);
    std::vector<int32_t> c0(m);
    if (fread(rp.data(), 8, n + 1, f) != (size_t)(n + 1) || fread(c0.data(), 4, m, f) != (size_t)m) { printf("bad csr\n"); return 2; }
    fclose(f);
    // A + I: insert self loops in column order
    std::vector<long long> rp2(n + 1);
    std::vector<int> col;
    col.reserve(m + n);
    rp2[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        bool put = false;
        for (int64_t e = rp[i]; e < rp[i + 1]; e++) {
            if (!put && c0[e] > i) { col.push_back((int)i); put = true; }
            if (c0[e] != i) col.push_back(c0[e]);
        }
        if (!put) col.push_back((int)i);
        rp2[i + 1] = (long long)col.size();
    }
    const int CW = 4;
    std::vector<float> colf(n), rowf(n);
    for (int64_t i = 0; i < n; i++) colf[i] = rowf[i] = 1.0f / sqrtf((float)(rp2[i + 1] - rp2[i]));
    std::vector<u32> x((size_t)n * CW);
    uint64_t st = 12345;
    for (auto &w : x) { st = st * 6364136223846793005ull + 1442695040888963407ull; w = (u32)(st >> 32); }
    std::vector<Item> items(n);
    for (int64_t i = 0; i < n; i++) items[i] = {(int)i, (int)(rp2[i + 1] - rp2[i]), rp2[i]};
    std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) { return a.deg != b.deg ? a.deg > b.deg : a.row < b.row; });
    printf("n %lld nnz %zu max deg %d\n", (long long)n, col.size(), items[0].deg);
    Item *d_items; int *d_col; float *d_colf, *d_rowf, *d_y; u32 *d_x;
    CK(cudaMalloc(&d_items, n * sizeof(Item)));
    CK(cudaMalloc(&d_col, col.size() * 4));
    CK(cudaMalloc(&d_colf, n * 4)); CK(cudaMalloc(&d_rowf, n * 4));
    CK(cudaMalloc(&d_x, x.size() * 4)); CK(cudaMalloc(&d_y, (size_t)n * CW * 32 * 4));
    CK(cudaMemcpy(d_items, items.data(), n * sizeof(Item), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_col, col.data(), col.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_colf, colf.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_rowf, rowf.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_x, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
    const int reps = 20;
    std::vector<float> y((size_t)n * CW * 32), yr(CW * 32);
    auto check = [&](const char *name, int S) {
        CK(cudaMemcpy(y.data(), d_y, y.size() * 4, cudaMemcpyDeviceToHost));
        long bad = 0, rows = 0;
        for (int64_t k = 0; k < n; k += (k < 300 ? 1 : 211)) {
            const int i = items[k].row;
            ref_row(items[k].deg, col.data() + rp2[i], colf.data(), x.data(), CW, rowf[i], yr.data(), S);
            rows++;
            if (memcmp(yr.data(), y.data() + (size_t)i * CW * 32, CW * 32 * 4)) bad++;
        }
        printf("  check %s: %ld of %ld rows differ\n", name, bad, rows);
    };
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int hubs = 0; while (hubs < n && items[hubs].deg >= 4096) hubs++;
    printf("rows of >= 4096 edges: %d\n", hubs);
    auto grid_of = [&](const void *fn) { int b = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, fn, 256, 0)); return sms * b; };
    const int g32 = grid_of((const void *)agg_slots<4, 1, 4>);
    const int g8a = grid_of((const void *)agg_s8<4, 2>), g8b = grid_of((const void *)agg_s8<4, 4>), g8c = grid_of((const void *)agg_s8<4, 8>);
    CK(cudaMemset(d_y, 0xff, y.size() * 4));
    timeit("S32 word-warps pf4 all", [&] { agg_slots<4, 1, 4><<<g32, 256>>>(d_items, n, d_col, d_colf, d_rowf, d_x, d_y); }, (const void *)agg_slots<4, 1, 4>, reps);
    check("S32", 32);
    CK(cudaMemset(d_y, 0xff, y.size() * 4));
    timeit("S8 in-warp pf2 all", [&] { agg_s8<4, 2><<<g8a, 256>>>(d_items, 0, n, d_col, d_colf, d_rowf, d_x, d_y); }, (const void *)agg_s8<4, 2>, reps);
    check("S8 pf2", 8);
    CK(cudaMemset(d_y, 0xff, y.size() * 4));
    timeit("S8 in-warp pf4 all", [&] { agg_s8<4, 4><<<g8b, 256>>>(d_items, 0, n, d_col, d_colf, d_rowf, d_x, d_y); }, (const void *)agg_s8<4, 4>, reps);
    check("S8 pf4", 8);
    timeit("S8 in-warp pf8 all", [&] { agg_s8<4, 8><<<g8c, 256>>>(d_items, 0, n, d_col, d_colf, d_rowf, d_x, d_y); }, (const void *)agg_s8<4, 8>, reps);
    check("S8 pf8", 8);
    timeit("S8 pf4 rows < 4096 only", [&] { agg_s8<4, 4><<<g8b, 256>>>(d_items, hubs, n, d_col, d_colf, d_rowf, d_x, d_y); }, (const void *)agg_s8<4, 4>, reps);
    timeit("S32 pf4 rows >= 4096 only", [&] { agg_slots<4, 1, 4><<<g32, 256>>>(d_items, hubs, d_col, d_colf, d_rowf, d_x, d_y); }, (const void *)agg_slots<4, 1, 4>, reps);
    timeit("S8 pf4 rows >= 4096 only", [&] { agg_s8<4, 4><<<g8b, 256>>>(d_items, 0, hubs, d_col, d_colf, d_rowf, d_x, d_y); }, (const void *)agg_s8<4, 4>, reps);
    timeit("both (two launches)", [&] { agg_slots<4, 1, 4><<<g32, 256>>>(d_items, hubs, d_col, d_colf, d_rowf, d_x, d_y);
                                        agg_s8<4, 4><<<g8b, 256>>>(d_items, hubs, n, d_col, d_colf, d_rowf, d_x, d_y); }, (const void *)agg_s8<4, 4>, reps);
    return 0;
}
