// spmm_csr.cuh - benchmark-only (bench/spmm_csr_probe.cu): a sparse variant of a float aggregation
// of standardized sparse features, y = A x over an adjacency B (pattern, rowf, colf), x = the
// standardize of the input features X, with X's CSR block (templates/bgnn_common.cuh csr_rows)
// beside x.  Exact (docs/logs/emu_spmm_csr_test_2026-11-30.cpp; in the product,
// docs/logs/gather_csr_not_kept_2026-11-30.patch: the quick GPU suite, sage_full and indgcn_full in
// every mode, test_gpu_variants' widths 128 to 600, memcheck, racecheck, synccheck, initcheck) but slower than the dense template on
// an H200: Cora's 1,433-wide aggregation 58 us against 31 (docs/performance.md, "Tried and not
// kept: a sparse aggregation of standardized features"), so the product keeps spmm.cuh's.
//
// The same sums as spmm.cuh spmm_adjb_elem, so the same bits: y[i, c] = fl(rowf[i] * s), s the
// terms fl(colf[j] * x[j, c]) added from +0 in edge order.  What changes is where x[j, c] comes
// from.  A column c where X's row j stores no entry holds +0, and the standardize maps every +0
// of a row to one value (its operations depend on the value and the row's statistics alone), so
// x[j, c] there equals x[j, z_j], z_j the row's first column without an entry.  A neighbour then
// costs its entries' columns, x at those columns and x[j, z_j] (Cora: about 150 bytes, not the
// dense row's 5.7 KB).
//
// A block of SGC_BLOCK threads takes a row at a time; thread t owns the outputs t + SGC_BLOCK m.
// The row's edges go in windows of up to SGC_BLOCK edges whose entries fit SGC_LIST:
//   1. a thread an edge: the neighbour j, colf[j], its entries' range, the term of x[j, 0]
//      (z_j's guess: a row whose first entry is not at column 0), and the entries' offsets in the
//      window (a block scan);
//   2. the window's entries, a thread an entry, four loads a thread in flight: the column and
//      fl(colf[j] * x[j, col]) into the list; the thread of an edge's first entry, when that is
//      at column 0, finds z_j (the first k with no entry at column k, the entries sorted) and
//      the edge's fill term;
//   3. the ordered adds, SgcShape::E edges a step: the stage's rows filled with each edge's fill
//      term, its entries' terms written over them, then each thread adds its columns' E terms in
//      edge order.  Every load of the window was issued before its first add, so a hub row's
//      steps wait on shared memory alone.
// An edge with more than SGC_LIST entries (a window of that edge alone) reads its entries past
// the list from memory while staging.  Every thread of the block calls it; any grid is correct
// (a block a row, grid-stride); the block is SGC_BLOCK threads.
#ifndef BGNN_BENCH_SPMM_CSR_CUH
#define BGNN_BENCH_SPMM_CSR_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"

namespace bgnn {

constexpr int SGC_BLOCK = 256;               // threads a block, edges a window at most
constexpr int SGC_LIST = 1536;               // a window's entries staged in shared memory
constexpr long long SGC_STAGE_FLOATS = 6144; // the stage: E rows of the row width (24 KB)

template <long long C>
struct SgcShape {
    static constexpr long long CP = (C + 3) / 4 * 4; // a stage row (float4 fills)
    static constexpr int E = CP * 4 <= SGC_STAGE_FLOATS ? 4 : CP * 2 <= SGC_STAGE_FLOATS ? 2 : 1;
    static constexpr int CPT = (int)((C + SGC_BLOCK - 1) / SGC_BLOCK); // a thread's outputs
    static_assert(C >= 1 && CP <= SGC_STAGE_FLOATS, "spmm_csr: rows of 1 to SGC_STAGE_FLOATS columns");
};

template <long long C>
struct SgcShared {
    float4 stage[SgcShape<C>::E][SgcShape<C>::CP / 4];
    u32 lcol[SGC_LIST];
    float lterm[SGC_LIST];
    int j[SGC_BLOCK];
    float cj[SGC_BLOCK], tz[SGC_BLOCK];
    u32 b[SGC_BLOCK], n[SGC_BLOCK], off[SGC_BLOCK + 1];
    u32 wsum[SGC_BLOCK / 32];
};

// The window edge that owns list position p: the last k < nw with off[k] <= p (edges without
// entries share their successor's offset and own nothing).
__device__ __forceinline__ int sgc_edge_of(const u32 *off, int nw, u32 p) {
    int lo = 0, hi = nw - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (off[mid] <= p) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

template <char Z, long long C, class Epi = EpEnd>
__device__ __forceinline__ void bspmm_csr_adjb(long long rows, float *y, const long long *rowptr, const int *col,
                                               const float *rowf, const float *colf, const float *x, CsrRows csr,
                                               Epi epi = Epi()) {
    static_assert(Z == 'F', "bspmm_csr: float outputs");
    using S = SgcShape<C>;
    constexpr int E = S::E, CPT = S::CPT;
    constexpr long long CP4 = S::CP / 4;
    __shared__ SgcShared<C> sh;
    const int t = (int)threadIdx.x, lane = t & 31, wib = t >> 5;
    float *const stagef = (float *)sh.stage;
    for (long long i = blockIdx.x; i < rows; i += gridDim.x) { // block-uniform
        const long long e0 = rowptr[i], e1 = rowptr[i + 1];
        float acc[CPT];
#pragma unroll
        for (int m = 0; m < CPT; m++) acc[m] = 0.0f;
        for (long long w0 = e0; w0 < e1;) { // a window, block-uniform
            // 1. a thread an edge; the previous window's (or row's) readers are past their last
            // barrier's reads only after this one
            __syncthreads();
            u32 nk = 0;
            if (w0 + t < e1) {
                const int j = col[w0 + t];
                const u32 b = csr.rp[j];
                nk = csr.rp[j + 1] - b;
                const float cj = colf[j];
                sh.j[t] = j;
                sh.cj[t] = cj;
                sh.b[t] = b;
                sh.n[t] = nk;
                sh.tz[t] = fmul(cj, x[(long long)j * C]);
            }
            // the entries' offsets: an exclusive scan of nk over the block
            u32 inc = nk;
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) {
                const u32 v = __shfl_up_sync(0xffffffffu, inc, d);
                if (lane >= d) inc += v;
            }
            if (lane == 31) sh.wsum[wib] = inc;
            __syncthreads();
            u32 before = 0;
#pragma unroll
            for (int w = 0; w < SGC_BLOCK / 32; w++)
                if (w < wib) before += sh.wsum[w];
            const u32 off = before + inc - nk;
            sh.off[t] = off;
            const bool fits = w0 + t < e1 && off + nk <= (u32)SGC_LIST;
            int nw = __syncthreads_count(fits); // the window: the edges whose entries fit
            if (nw == 0) nw = 1;                // one edge of more than SGC_LIST entries
            const u32 tot = sh.off[nw - 1] + sh.n[nw - 1], tl = tot < (u32)SGC_LIST ? tot : (u32)SGC_LIST;
            // 2. the listed entries, four a thread in flight
            for (u32 p0 = (u32)t; p0 < tl; p0 += 4u * SGC_BLOCK) {
                int kk[4];
                u32 cc[4];
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const u32 p = p0 + (u32)u * SGC_BLOCK;
                    kk[u] = p < tl ? sgc_edge_of(sh.off, nw, p) : 0;
                    cc[u] = p < tl ? csr.ent[sh.b[kk[u]] + (p - sh.off[kk[u]])].col : 0u;
                }
                float xv[4];
#pragma unroll
                for (int u = 0; u < 4; u++)
                    xv[u] = p0 + (u32)u * SGC_BLOCK < tl ? x[(long long)sh.j[kk[u]] * C + cc[u]] : 0.0f;
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const u32 p = p0 + (u32)u * SGC_BLOCK;
                    if (p >= tl) continue;
                    const int k = kk[u];
                    sh.lcol[p] = cc[u];
                    sh.lterm[p] = fmul(sh.cj[k], xv[u]);
                    if (p == sh.off[k] && cc[u] == 0u) { // the row stores column 0: z_j is its first
                        const u32 b = sh.b[k], n = sh.n[k]; // column q without entry q (rare)
                        u32 q = 1;
                        while (q < n && csr.ent[b + q].col == q) q++;
                        if ((long long)q < C) sh.tz[k] = fmul(sh.cj[k], x[(long long)sh.j[k] * C + q]);
                    }
                }
            }
            // 3. the ordered adds, E edges a step
            for (int s = 0; s < nw; s += E) {
                const int ns = nw - s < E ? nw - s : E;
                __syncthreads(); // the fill terms are known; the stage's last step is added
                for (int q = t; q < ns * (int)CP4; q += SGC_BLOCK) {
                    const int k = q / (int)CP4;
                    const float v = sh.tz[s + k];
                    sh.stage[k][q - k * (int)CP4] = make_float4(v, v, v, v);
                }
                __syncthreads();
                const u32 pe = sh.off[s + ns - 1] + sh.n[s + ns - 1];
                for (u32 p = sh.off[s] + (u32)t; p < pe; p += SGC_BLOCK) {
                    int k = s;
                    while (k + 1 < s + ns && sh.off[k + 1] <= p) k++;
                    u32 c;
                    float v;
                    if (p < (u32)SGC_LIST) {
                        c = sh.lcol[p];
                        v = sh.lterm[p];
                    } else { // past the list: the window's one edge, from memory
                        c = csr.ent[sh.b[k] + (p - sh.off[k])].col;
                        v = fmul(sh.cj[k], x[(long long)sh.j[k] * C + c]);
                    }
                    stagef[(long long)(k - s) * S::CP + c] = v;
                }
                __syncthreads();
#pragma unroll
                for (int m = 0; m < CPT; m++) {
                    const long long c = t + (long long)SGC_BLOCK * m;
                    if (c < C)
#pragma unroll
                        for (int k = 0; k < E; k++)
                            if (k < ns) acc[m] = fadd(acc[m], stagef[(long long)k * S::CP + c]);
                }
            }
            w0 += nw;
        }
        const float rf = rowf[i];
#pragma unroll
        for (int m = 0; m < CPT; m++) {
            const long long c = t + (long long)SGC_BLOCK * m;
            if (c < C) y[i * C + c] = ep_val(epi, i, c, fmul(rf, acc[m]));
        }
    }
}

} // namespace bgnn

#endif // BGNN_BENCH_SPMM_CSR_CUH
