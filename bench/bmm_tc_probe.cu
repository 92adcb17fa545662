// bmm_tc_probe.cu - what feeds mma.sync.m16n8k256 b1 at its peak: bare chains of independent mma,
// and the structures of a GEMM's inner loop (ldmatrix of a 64 x 64 warp tile's fragments from
// shared memory, a block barrier a step, the next step's fragments loaded while this one
// computes, two groups of warps with their own barriers), each over every SM for a fixed count
// of iterations, as P bit-op/s (2 x 16 x 8 x 256 bit-ops an mma).  No memory traffic beyond the
// shared block, whose contents are arbitrary (timing only; nothing is checked).  The numbers of
// docs/performance.md ("Bit tensor cores, a multistage pipeline") come from it:
// bench/run_bmm_tc_bench.sh builds it beside the benchmark (.carry/bench/bmm_tc_probe).
// Note: the "ldsm no bar" rows are what ptxas makes of a loop that reads an unchanging shared
// block with no barrier: it hoists the ldmatrix out of the loop, so they measure the mma of
// fragments in registers (as "regs only"), not a loop that reads shared memory.
#include <cstdio>
#include <cuda_runtime.h>
typedef unsigned u32;
__device__ __forceinline__ void mma(int (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
    asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void ldsm4(u32 (&r)[4], u32 addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
// A warp tile's fragments (MI m16 A tiles, NJ / 2 n16 B pairs) by ldmatrix at so bytes into the block.
template <int MI, int NJ>
__device__ __forceinline__ void load_frags(u32 (&a)[MI][4], u32 (&b)[NJ / 2][4], u32 aoff, u32 boff, u32 so) {
#pragma unroll
    for (int i = 0; i < MI; i++) ldsm4(a[i], aoff + so + 512 * i);
#pragma unroll
    for (int j = 0; j < NJ / 2; j++) ldsm4(b[j], boff + so + 512 * j);
}
// The warp tile's MI x NJ mma, B pair outer.
template <int MI, int NJ>
__device__ __forceinline__ void tile_mma(int (&acc)[MI][NJ][4], const u32 (&a)[MI][4], const u32 (&b)[NJ / 2][4]) {
#pragma unroll
    for (int j = 0; j < NJ / 2; j++)
#pragma unroll
        for (int i = 0; i < MI; i++) {
            mma(acc[i][2 * j], a[i], b[j][0], b[j][1]);
            mma(acc[i][2 * j + 1], a[i], b[j][2], b[j][3]);
        }
}
// MODE 0: C bare chains a warp.  Warp tiles of MI m16 x NJ n8 (warps 2 x 4 over a 128 x 256
// tile) from a two-stage shared block: 1: a barrier, the fragments by ldmatrix, MI x NJ mma; 2:
// as 1 with no barrier; 3: the next step's fragments loaded right after the barrier, the mma on
// this step's (two sets); 4: as 1 with a barrier every second step; 5 / 6: as 1 / 3 with two
// groups of 4 warps, each with its own named barrier; 7: as 3 with three fragment sets; 8: as 3
// with __syncwarp instead of the barrier; 9 / 10: the fragments in registers, loaded once (A
// changing each mma / fixed for 8).
template <int C, int MODE, int MI, int NJ>
__global__ void k(int iters, int *sink) {
    __shared__ __align__(16) u32 sm[2][384][8];
    for (int i = threadIdx.x; i < 2 * 384 * 8; i += blockDim.x) (&sm[0][0][0])[i] = i * 2654435761u;
    __syncthreads();
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u32 base = (u32)__cvta_generic_to_shared(&sm[0][0][0]);
    if constexpr (MODE == 0) {
        u32 a[4] = {0xaaaaaaaau ^ threadIdx.x, 0x55555555u, 0xccccccccu, 0x33333333u};
        int d[C][4] = {};
        for (int it = 0; it < iters; it++) {
#pragma unroll
            for (int j = 0; j < C; j++) mma(d[j], a, 0xf0f0f0f0u + it, 0x0f0f0f0fu);
        }
        int s = 0;
#pragma unroll
        for (int j = 0; j < C; j++) s += d[j][0] + d[j][1] + d[j][2] + d[j][3];
        sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
    } else {
        int acc[MI][NJ][4] = {};
        u32 aoff = base + (u32)(((warp & 1) * 64 + (lane & 15)) * 32 + (lane >> 4) * 16);
        u32 boff = base + (u32)((128 + (warp >> 1) * 64 + (lane & 15)) * 32 + (lane >> 4) * 16);
        if constexpr (MODE == 3 || MODE == 6 || MODE == 8) { // fragments of step it+1 loaded right after the barrier, mma on step it's
            u32 a[2][MI][4], b[2][NJ / 2][4];
            load_frags<MI, NJ>(a[0], b[0], aoff, boff, 0);
            for (int it = 0; it < iters; it += 2) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const u32 so = ((it + h + 1) & 1) * 384 * 32;
                    if (MODE == 6) asm volatile("bar.sync %0, 128;" :: "r"(1 + (warp >> 2)));
                    else if (MODE == 8) __syncwarp();
                    else __syncthreads();
                    load_frags<MI, NJ>(a[h ^ 1], b[h ^ 1], aoff, boff, so);
                    tile_mma<MI, NJ>(acc, a[h], b[h]);
                }
            }
        } else if constexpr (MODE == 7) { // 3 fragment sets: the registers an LDSM writes were read 2 steps ago
            u32 a[3][MI][4], b[3][NJ / 2][4];
            load_frags<MI, NJ>(a[0], b[0], aoff, boff, 0);
            for (int it = 0; it < iters; it += 3) {
#pragma unroll
                for (int h = 0; h < 3; h++) {
                    const int n = (h + 1) % 3;
                    const u32 so = ((it + h + 1) & 1) * 384 * 32;
                    __syncthreads();
                    load_frags<MI, NJ>(a[n], b[n], aoff, boff, so);
                    tile_mma<MI, NJ>(acc, a[h], b[h]);
                }
            }
        } else if constexpr (MODE == 9 || MODE == 10) { // fragments in registers, no smem: operand order
            u32 a[MI][4], b[NJ / 2][4];
            load_frags<MI, NJ>(a, b, aoff, boff, 0);
            for (int it = 0; it < iters; it++) {
                if (MODE == 9) {
                    tile_mma<MI, NJ>(acc, a, b);
                } else {
#pragma unroll
                    for (int i = 0; i < MI; i++)
#pragma unroll
                        for (int j = 0; j < NJ / 2; j++) {
                            mma(acc[i][2 * j], a[i], b[j][0], b[j][1]);
                            mma(acc[i][2 * j + 1], a[i], b[j][2], b[j][3]);
                        }
                }
#pragma unroll
                for (int i = 0; i < MI; i++) a[i][it & 3] ^= (u32)it; // new operand values each iteration
            }
        } else
        for (int it = 0; it < iters; it++) {
            const u32 so = (it & 1) * 384 * 32;
            if (MODE == 1 || (MODE == 4 && (it & 1) == 0)) __syncthreads();
            if (MODE == 5) asm volatile("bar.sync %0, 128;" :: "r"(1 + (warp >> 2)));
            u32 a[MI][4], b[NJ / 2][4];
            load_frags<MI, NJ>(a, b, aoff, boff, so);
            tile_mma<MI, NJ>(acc, a, b);
        }
        int s = 0;
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < NJ; j++) s += acc[i][j][0] + acc[i][j][1] + acc[i][j][2] + acc[i][j][3];
        sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
    }
}
template <int C, int MODE, int MI, int NJ>
void run(const char *name, int sms, int bps, int threads, int iters) {
    int *sink; cudaMalloc(&sink, sizeof(int) * sms * bps * threads);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    float best = 1e30f;
    for (int r = 0; r < 7; r++) {
        cudaEventRecord(e0);
        k<C, MODE, MI, NJ><<<sms * bps, threads>>>(iters, sink);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); if (r > 0 && ms < best) best = ms;
    }
    const double per = MODE == 0 ? C : MI * NJ;
    const double mmas = (double)sms * bps * threads / 32 * iters * per;
    printf("%-48s %8.3f ms  %6.2f P bit-op/s  err=%s\n", name, best, mmas * 65536 / (best * 1e-3) / 1e15, cudaGetErrorString(cudaGetLastError()));
    cudaFree(sink);
}
int main() {
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("bmm_tc_probe: no CUDA GPU available; nothing to run.\n");
        return 77;
    }
    cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); int sms = p.multiProcessorCount;
    printf("%s\n", p.name);
    run<16, 0, 1, 2>("bare 16 chains, 8 blk x 4 warps (peak)", sms, 8, 128, 4096);
    run<16, 0, 1, 2>("bare 16 chains, 1 blk x 8 warps (2/sched)", sms, 1, 256, 4096);
    run<32, 0, 1, 2>("bare 32 chains, 1 blk x 8 warps (2/sched)", sms, 1, 256, 4096);
    run<32, 0, 1, 2>("bare 32 chains, 1 blk x 4 warps (1/sched)", sms, 1, 128, 4096);
    run<8, 0, 1, 2>("bare 8 chains, 1 blk x 8 warps (2/sched)", sms, 1, 256, 4096);
    run<16, 0, 1, 2>("bare 16 chains, 2 blk x 8 warps (4/sched)", sms, 2, 256, 4096);
    run<1, 2, 4, 8>("ldsm no bar, 64x64 warp tile, 8 warps", sms, 1, 256, 4096);
    run<1, 3, 4, 8>("prefetched frags + bar, 64x64, 8 warps", sms, 1, 256, 4096);
    run<1, 3, 2, 8>("prefetched frags + bar, 32x64, 2x8 warps", sms, 2, 256, 4096);
    run<1, 4, 4, 8>("bar every 2nd step (512-bit), 64x64, 8 warps", sms, 1, 256, 4096);
    run<1, 9, 4, 8>("regs only, A changes each mma, 64x64, 8 warps", sms, 1, 256, 4096);
    run<1, 10, 4, 8>("regs only, A fixed for 8 mma, 64x64, 8 warps", sms, 1, 256, 4096);
    run<1, 7, 4, 8>("3 frag sets + bar, 64x64", sms, 1, 256, 3072);
    run<1, 8, 4, 8>("prefetch (2 sets), syncwarp only, 64x64", sms, 1, 256, 4096);
    run<1, 5, 4, 8>("2 groups of 4 warps, own bar, 64x64", sms, 1, 256, 4096);
    run<1, 6, 4, 8>("2 groups of 4 warps, own bar + prefetch, 64x64", sms, 1, 256, 4096);
    run<1, 1, 4, 8>("ldsm + bar, 64x64 warp tile, 8 warps", sms, 1, 256, 4096);
    run<1, 2, 2, 8>("ldsm no bar, 32x64 warp tile, 2x8 warps", sms, 2, 256, 4096);
    run<1, 1, 2, 8>("ldsm + bar, 32x64 warp tile, 2x8 warps", sms, 2, 256, 4096);
    run<1, 1, 4, 4>("ldsm + bar, 64x32 warp tile, 2x8 warps", sms, 2, 256, 4096);
    return 0;
}
