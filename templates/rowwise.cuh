// rowwise.cuh - per-row reductions (absmean, rowmean, standardize, bin.center: one warp per row, the
// float64 sums seq or lanes(L) as recorded; log_softmax: a warp a row, or seq over more than 32
// columns one thread a row) and
// readout (one thread per (graph, feature), nodes of the graph in order).
//
// Layouts (bgnn_common.cuh): x f32 [R][C] (readout: also b1 [N][ceil(C/32)], read as +-1);
// absmean y f32[R]; graph_ptr int64[G+1] (graph g owns rows graph_ptr[g]..graph_ptr[g+1]-1).
#ifndef BGNN_ROWWISE_CUH
#define BGNN_ROWWISE_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"
#include "std_quotient.cuh"

namespace bgnn {

// The sequential float64 sum of map(term(c)) over c = 0..C-1, from +0, by a whole warp: the
// lanes compute 32 consecutive float terms at a time in parallel, then every lane receives
// them in column order (one float shuffle each; the shuffles do not depend on the running
// sum, so they overlap the chain) and adds map(term) to its own copy of the sum.  Every lane
// returns the same sum, bit for bit the sequential one.  Shuffling the float rather than a
// double halves the shuffles, the limit of this loop (one warp shuffle a clock per SM).
template <long long C, class T, class Map>
__device__ __forceinline__ double warp_seq_sum(int lane, T term, Map map) {
    double s = 0.0;
    for (long long c0 = 0; c0 < C; c0 += 32) {
        const long long c = c0 + lane;
        const float v = c < C ? term(c) : 0.0f;
        if (c0 + 32 <= C) {
#pragma unroll
            for (int i = 0; i < 32; i++) s = dadd(s, map(__shfl_sync(0xffffffffu, v, i)));
        } else {
            for (int i = 0; i < (int)(C - c0); i++) s = dadd(s, map(__shfl_sync(0xffffffffu, v, i)));
        }
    }
    return s;
}

// Rows of at most LANES_REGS_MAX columns keep a lane's terms in registers (ceil(C / 32) floats):
// they are all requested before the first add, so a row costs one memory round trip, not one
// per unrolled batch of the loop (the kernels of these sums are one wave of warps on small
// graphs, so each warp's latency is the kernel's time).
constexpr long long LANES_REGS_MAX = 2048;

// Lane l's float64 sum (from +0) of map(v[i]) for its columns c = l + 32 i < C, in i order,
// then the warp's butterfly: warp_lanes_sum's order over terms already in registers.
template <long long C, class Map>
__device__ __forceinline__ double warp_lanes_sum_regs(int lane, const float (&v)[(C + 31) / 32], Map map) {
    double s = 0.0;
#pragma unroll
    for (int i = 0; i < (int)((C + 31) / 32); i++)
        if (lane + 32LL * i < C) s = dadd(s, map(v[i]));
#pragma unroll
    for (int h = 16; h >= 1; h /= 2) s = dadd(s, __shfl_xor_sync(0xffffffffu, s, h));
    return s;
}

// Lane l's terms term(c), c = l + 32 i < C, into registers (0 past the row's end).
template <long long C, class T>
__device__ __forceinline__ void warp_lanes_load(int lane, float (&v)[(C + 31) / 32], T term) {
#pragma unroll
    for (int i = 0; i < (int)((C + 31) / 32); i++) {
        const long long c = lane + 32LL * i;
        v[i] = c < C ? term(c) : 0.0f;
    }
}

// The float64 sum of map(term(c)) over c = 0..C-1 in the order lanes(L) (docs/semantics.md,
// section 2): lane l sums c = l, l + L, ... from +0 (loads coalesced, L dependent chains
// instead of one), then the warp's butterfly adds lane i + h into lane i for h = L/2, ..., 1
// (every lane ends with the same sum, bit for bit: IEEE addition commutes).  L = 32, a warp, or
// 256 (warp_vlanes_sum; base.h bg_fp_lanes_ok).  In lanes(32) rows up to LANES_REGS_MAX columns
// load every term first.
template <long long C, int L, class T, class Map>
__device__ __forceinline__ double warp_lanes_sum_loop(int lane, T term, Map map) {
    static_assert(L == 32, "lanes: a warp's 32");
    double s = 0.0;
    for (long long c = lane; c < C; c += L) s = dadd(s, map(term(c)));
#pragma unroll
    for (int h = L / 2; h >= 1; h /= 2) s = dadd(s, __shfl_xor_sync(0xffffffffu, s, h));
    return s;
}
// The combine of lanes(V * 32) in a warp that holds them as q[j] = lane l + 32 j's sum: the halves
// h = V * 16, ..., 32 within each lane (q[j] + q[j + h / 32]), then the warp's butterfly.
template <int V>
__device__ __forceinline__ double warp_vlanes_combine(double (&q)[V]) {
#pragma unroll
    for (int h = V / 2; h >= 1; h /= 2)
#pragma unroll
        for (int j = 0; j < h; j++) q[j] = dadd(q[j], q[j + h]);
    double s = q[0];
#pragma unroll
    for (int h = 16; h >= 1; h /= 2) s = dadd(s, __shfl_xor_sync(0xffffffffu, s, h));
    return s;
}
// lanes(L) for L = 256 (a block's threads: an absmean of a wide aggregation, whose row group
// computes it from the aggregation's registers, templates/spmm_wide_outs.cuh) in one warp: lane
// l takes the L / 32 lanes l + 32 j, each summing its columns from +0, then the same combine.
template <long long C, int L, class T, class Map>
__device__ __forceinline__ double warp_vlanes_sum(int lane, T term, Map map) {
    constexpr int V = L / 32;
    double q[V];
#pragma unroll
    for (int j = 0; j < V; j++) q[j] = 0.0;
    for (long long c0 = lane; c0 < C; c0 += L)
#pragma unroll
        for (int j = 0; j < V; j++)
            if (c0 + 32LL * j < C) q[j] = dadd(q[j], map(term(c0 + 32LL * j)));
    return warp_vlanes_combine<V>(q);
}
template <long long C, int L, class T, class Map>
__device__ __forceinline__ double warp_lanes_sum(int lane, T term, Map map) {
    static_assert(L == 32 || L == 256, "lanes: a warp's 32, or a block's 256");
    if constexpr (L == 256) {
        return warp_vlanes_sum<C, L>(lane, term, map);
    } else if constexpr (C > 0 && C <= LANES_REGS_MAX) {
        float v[(C + 31) / 32];
        warp_lanes_load<C>(lane, v, term);
        return warp_lanes_sum_regs<C>(lane, v, map);
    } else {
        return warp_lanes_sum_loop<C, L>(lane, term, map);
    }
}

// A row's float64 sum in its recorded order: lanes(L) when L > 0, else seq.
template <long long C, int L, class T, class Map>
__device__ __forceinline__ double warp_row_sum(int lane, T term, Map map) {
    if constexpr (L > 0) return warp_lanes_sum<C, L>(lane, term, map);
    else return warp_seq_sum<C>(lane, term, map);
}

// fl64(s / C), the mean of a row of C columns: for C a power of two the product with 1 / C
// (exact, 2^-k), the correctly rounded value of the same real number s / C, so the same
// double as the division, which costs some 40 instructions where the product is one.
template <long long C>
__device__ __forceinline__ double div_by_cols(double s) {
    if constexpr (C > 0 && (C & (C - 1)) == 0) return dmul(s, 1.0 / (double)C);
    else return ddiv(s, (double)C);
}

// The identity maps of csr_lanes_load (float) and warp_seq_sum (a float widened exactly), and
// the absolute value.
struct AsFloat { // the identity of csr_lanes_load's map
    __device__ __forceinline__ float operator()(float v) const { return v; }
};
struct AsDouble {
    __device__ __forceinline__ double operator()(float v) const { return (double)v; }
};
struct AbsDouble {
    __device__ __forceinline__ double operator()(float v) const { return fabs((double)v); }
};

// absmean: y[r] = fl(sum_c |x[r,c]| (float64, order: lanes(L), or seq when L = 0) / C); C = 0
// gives 0.  pro maps x[r,c] to the value summed (epilogue.cuh: ProNone, or ProBn, a batchnorm
// prologue).  One warp per row (the launch has 32 threads per row), the sum by warp_row_sum.
// TABLE (a launch's own kernel, or a row group's, cg_rows.c: rows up to 1,024 columns there): a batchnorm
// prologue's inv = 1 / sqrt(var + eps) (a correctly rounded division and square root) is
// computed once per column and block into shared memory, not once per element: the same
// values, so the same bits (rows up to ABSMEAN_INV_MAX columns, 32 KB).  In the fused and
// per-graph kernels, whose static shared memory is every phase's at once, it is computed per
// element as before.  The block's threads all pass both barriers.
// ABSMEAN_MEAN_MAX: the widest row whose column means are staged beside the inverses (below).
// Measured on an H200 (docs/performance.md, "The tensor-core product in small tiles"): gcn_full
// Cora (1,433 columns) 27.5 -> 27.0 us, PubMed-size (500) 106 -> 101 us, CiteSeer (3,703)
// 61.4 -> 66.7 us, so CiteSeer's width keeps the means in global memory.
constexpr long long ABSMEAN_INV_MAX = 8192, ABSMEAN_MEAN_MAX = 2048;
constexpr int ABSMEAN_FILL_BATCH = 8;
template <long long C, int L, bool TABLE, class Pro>
__device__ __forceinline__ void absmean(long long rows, float *y, const float *x, const Pro &pro) {
    const int lane = (int)(threadIdx.x & 31u);
    if constexpr (TABLE && Pro::kInv && C > 0 && C <= ABSMEAN_INV_MAX) {
        // the column means beside the inverses where both fit (rows of up to ABSMEAN_MEAN_MAX
        // columns): a row's only global loads are then its values, which leaves the registers
        // for them alone
        constexpr bool MS = C <= ABSMEAN_MEAN_MAX;
        __shared__ float inv_s[C], mean_s[MS ? C : 1];
        // ABSMEAN_FILL_BATCH columns a thread at a time: every load of the batch is issued before
        // the first square root, so the fill costs one memory round trip a batch, not two a column
        for (long long c0 = threadIdx.x; c0 < C; c0 += ABSMEAN_FILL_BATCH * (long long)blockDim.x) {
            float vv[ABSMEAN_FILL_BATCH], mv[ABSMEAN_FILL_BATCH];
#pragma unroll
            for (int u = 0; u < ABSMEAN_FILL_BATCH; u++) {
                const long long c = c0 + u * (long long)blockDim.x;
                vv[u] = c < C ? pro.inv_load(c) : 1.0f;
                if constexpr (MS) mv[u] = c < C ? pro.mean_of(c) : 0.0f;
            }
#pragma unroll
            for (int u = 0; u < ABSMEAN_FILL_BATCH; u++) {
                const long long c = c0 + u * (long long)blockDim.x;
                if (c < C) {
                    inv_s[c] = Pro::inv_from(vv[u]);
                    if constexpr (MS) mean_s[c] = mv[u];
                }
            }
        }
        __syncthreads();
        for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
            const float *xr = x + r * C;
            const double s = warp_row_sum<C, L>(lane, [&](long long c) {
                if constexpr (MS) return pro.with_inv_mean(c, xr[c], inv_s[c], mean_s[c]);
                else return pro.with_inv(c, xr[c], inv_s[c]);
            }, AbsDouble{});
            if (lane == 0) y[r] = __double2float_rn(div_by_cols<C>(s));
        }
        __syncthreads();
    } else {
        for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
            const float *xr = x + r * C;
            const double s = warp_row_sum<C, L>(lane, [&](long long c) { return pro(c, xr[c]); }, AbsDouble{});
            if (lane == 0) y[r] = C ? __double2float_rn(div_by_cols<C>(s)) : 0.0f;
        }
    }
}

// rowmean (fold-standardize-mm): y[r] = fl(sum_c x[r,c] (float64, order: lanes(L), or seq when
// L = 0) / C); C = 0 gives 0.  One warp per row, as absmean.
template <long long C, int L>
__device__ __forceinline__ void rowmean(long long rows, float *y, const float *x) {
    const int lane = (int)(threadIdx.x & 31u);
    for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
        const float *xr = x + r * C;
        const double s = warp_row_sum<C, L>(lane, [&](long long c) { return xr[c]; }, AsDouble{});
        if (lane == 0) y[r] = C ? __double2float_rn(div_by_cols<C>(s)) : 0.0f;
    }
}

// rowmean_csr: rowmean's result for F input features held as CSR (plan.h bg_features_csr: u32
// rowptr[rows + 1], CsrEnt ent[nnz] (column, value), ...; every value other than +0), the sparse
// variant of a rowmean of the features (BgPlanLaunch: kernel + BG_PLAN_SPARSE_SUFFIX).  A warp a
// row takes 32 stored entries at a time, one a lane, and passes them round in column order by
// shuffles: under lanes(32) lane l adds those of its columns (c % 32 == l), under seq every lane
// adds all, then the butterfly of warp_lanes_sum.  The same float64 operations in the same order
// as rowmean over the dense row, less the additions of +0, which change no sum that starts at
// +0 (such a sum is never -0).  Every lane of the warp calls it; any grid is correct.
// The float64 sum of a CSR row's stored values (entries b .. e - 1, columns ascending) in the
// order lanes(L) (seq when L = 0), every lane of the warp returning it: warp_row_sum's over the
// dense row, less its additions of +0 (see rowmean_csr).
template <int L>
__device__ __forceinline__ double csr_row_sum(int lane, u32 b, u32 e, const CsrEnt *ent) {
    static_assert(L == 0 || L == 32, "csr_row_sum: seq or lanes(32)");
    double s = 0.0;
    for (u32 p0 = b; p0 < e; p0 += (e - p0 < 32u ? e - p0 : 32u)) {
        const u32 n = e - p0 < 32u ? e - p0 : 32u; // entries this step (offsets never wrap)
        const bool mine = (u32)lane < n;
        const CsrEnt en = mine ? ent[p0 + (u32)lane] : CsrEnt{0u, 0.0f};
        const u32 c = en.col;
        const float v = en.val;
        for (int j = 0; j < (int)n; j++) {
            const u32 cj = __shfl_sync(0xffffffffu, c, j);
            const float vj = __shfl_sync(0xffffffffu, v, j);
            if (L == 0 || (int)(cj & 31u) == lane) s = dadd(s, (double)vj);
        }
    }
    if constexpr (L > 0) {
#pragma unroll
        for (int h = L / 2; h >= 1; h /= 2) s = dadd(s, __shfl_xor_sync(0xffffffffu, s, h));
    }
    return s;
}

template <long long C, int L>
__device__ __forceinline__ void rowmean_csr(long long rows, float *y, CsrRows csr) {
    const int lane = (int)(threadIdx.x & 31u);
    for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
        const double s = csr_row_sum<L>(lane, csr.rp[r], csr.rp[r + 1], csr.ent);
        if (lane == 0) y[r] = C ? __double2float_rn(div_by_cols<C>(s)) : 0.0f;
    }
}

// The OR of x over the warp's 32 lanes, every lane the result (redux.sync from sm_80, a butterfly
// of shuffles before).
__device__ __forceinline__ u32 warp_or(u32 x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#pragma unroll
    for (int h = 16; h >= 1; h /= 2) x |= __shfl_xor_sync(0xffffffffu, x, h);
    return x;
#else
    return __reduce_or_sync(0xffffffffu, x);
#endif
}

// Lane l's registers of a CSR row (entries b .. e - 1, columns ascending and distinct, every
// value other than +0 stored): v[i] = map(the value at column l + 32 i), fill where none is
// stored (0 and the identity: as warp_lanes_load leaves them from the dense row; each entry's
// map is computed once, by the lane that loads it).  The warp takes 32 entries at a time, one a
// lane (one round trip), then for each 32-column window i the chunk holds any of (a ballot): a
// warp OR gives the window's columns present, and lane l takes its value by a shuffle from the
// window's first entry + (its present columns below l).  The windows do not depend on each
// other (no running count), so their steps overlap.  Every lane of the warp calls it.
// Returns the windows that hold an entry (bit i: window i; the same in every lane).
template <long long C, class Map>
__device__ __forceinline__ u64 csr_lanes_load(int lane, float (&v)[(C + 31) / 32], u32 b, u32 e, const CsrEnt *ent,
                                              float fill, Map map) {
    constexpr int NI = (int)((C + 31) / 32);
    static_assert(NI <= 64, "csr_lanes_load: at most 64 windows (LANES_REGS_MAX columns)");
    u64 present = 0u;
#pragma unroll
    for (int i = 0; i < NI; i++) v[i] = fill;
    const u32 below = (1u << lane) - 1u;
    for (u32 p0 = b; p0 < e; p0 += 32u) {
        const u32 n = e - p0 < 32u ? e - p0 : 32u; // entries this step (offsets never wrap)
        const bool mine = (u32)lane < n;
        const CsrEnt en = mine ? ent[p0 + (u32)lane] : CsrEnt{0u, 0.0f};
        const u32 c = en.col;
        const float x = map(en.val);
        const u32 w = mine ? c >> 5 : 0xffffffffu; // this entry's window
#pragma unroll
        for (int i = 0; i < NI; i++) {
            const u32 in = __ballot_sync(0xffffffffu, w == (u32)i); // the window's entries: consecutive lanes
            if (in == 0u) continue;                                  // warp-uniform
            present |= 1ull << i;
            const u32 bits = warp_or(w == (u32)i ? 1u << (c & 31u) : 0u);
            const float t = __shfl_sync(0xffffffffu, x, (__ffs((int)in) - 1 + __popc(bits & below)) & 31);
            if ((bits >> lane) & 1u) v[i] = t;
        }
    }
    return present;
}

// A row's standardize statistics from a lane's registers (lanes(32), 2 to LANES_REGS_MAX
// columns): mu and den = sd + eps, every lane the same, given which 32-column windows may hold a
// value other than +0 (present: csr_lanes_load's or csr_row_stage's windows with an entry; every
// window for a dense row, std_stats_regs).  A window without one holds +0 in every lane, whose
// term adds nothing to the sum of the values (s + 0 = s; s, from +0, is never -0) and d0 =
// (0 - mu)^2 to the squares: the same float64 operations where they matter, in the same order,
// so the same mu and den, without widening and squaring each +0 (bag-of-words rows are mostly
// such windows: a Cora row 30.4 of its 45 on average; its standardize 13.6 -> 12.8 us on an
// H200, docs/performance.md).  Warp-uniform branches (present is the same in every lane).
template <long long C>
__device__ __forceinline__ void std_stats_regs_masked(int lane, const float (&v)[(C + 31) / 32], u64 present,
                                                      double eps, double *mu_out, double *den_out) {
    constexpr int NI = (int)((C + 31) / 32);
    double s = 0.0;
#pragma unroll
    for (int i = 0; i < NI; i++)
        if (((present >> i) & 1u) && lane + 32LL * i < C) s = dadd(s, (double)v[i]);
#pragma unroll
    for (int h = 16; h >= 1; h /= 2) s = dadd(s, __shfl_xor_sync(0xffffffffu, s, h));
    const double mu = ddiv(s, (double)C);
    const double dz = dsub(0.0, mu), d0 = dmul(dz, dz);
    double q = 0.0;
#pragma unroll
    for (int i = 0; i < NI; i++) {
        if (lane + 32LL * i >= C) continue;
        if ((present >> i) & 1u) {
            const double dv = dsub((double)v[i], mu);
            q = dadd(q, dmul(dv, dv));
        } else {
            q = dadd(q, d0);
        }
    }
#pragma unroll
    for (int h = 16; h >= 1; h /= 2) q = dadd(q, __shfl_xor_sync(0xffffffffu, q, h));
    *mu_out = mu;
    *den_out = dadd(dsqrt(ddiv(q, (double)(C - 1))), eps);
}

// The same for a dense row's registers (warp_lanes_load): every window may hold a value.
template <long long C>
__device__ __forceinline__ void std_stats_regs(int lane, const float (&v)[(C + 31) / 32], double eps, double *mu_out,
                                               double *den_out) {
    std_stats_regs_masked<C>(lane, v, ~0ull, eps, mu_out, den_out);
}

// Whether a row of C columns in the order lanes(L) keeps its lanes' terms in registers.
template <long long C, int L>
constexpr bool std_in_regs = L == 32 && C > 1 && C <= LANES_REGS_MAX;

// A row's standardize statistics, by the whole warp: mu and den = sd + eps (every lane the
// same, bit for bit).
template <long long C, int L>
__device__ __forceinline__ void std_stats(int lane, const float *xr, double eps, double *mu_out, double *den_out) {
    const auto xc = [&](long long c) { return xr[c]; };
    if constexpr (std_in_regs<C, L>) { // both sums from registers
        float v[(C + 31) / 32];
        warp_lanes_load<C>(lane, v, xc);
        std_stats_regs<C>(lane, v, eps, mu_out, den_out);
    } else {
        const double sum = warp_row_sum<C, L>(lane, xc, AsDouble{});
        const double mu = C ? ddiv(sum, (double)C) : 0.0;
        const double ss = warp_row_sum<C, L>(lane, xc, [&](float v) {
            const double dv = dsub((double)v, mu);
            return dmul(dv, dv);
        });
        const double sd = C > 1 ? dsqrt(ddiv(ss, (double)(C - 1))) : 0.0;
        *mu_out = mu;
        *den_out = dadd(sd, eps);
    }
}

// standardize: mu = sum/C, sd = sqrt(sum (x-mu)^2 / (C-1)) (0 when C <= 1), all float64, both
// sums in the order lanes(L) (seq when L = 0); y = fl((x - mu) / (sd + eps)).  One warp per
// row (32 threads a row): both sums by warp_row_sum, then the lanes write 32 consecutive
// columns at a time.  In lanes(32) order rows of 2 to LANES_REGS_MAX columns are read once
// into registers for both sums (the outputs read the row again, from the cache: the unrolled
// divisions from registers took 122 registers a thread); the same operations in the same order.
// standardize's stored value of x: fl((x - mu) / den) in float64.
__device__ __forceinline__ float std_value(float x, double mu, double den) {
    return __double2float_rn(ddiv(dsub((double)x, mu), den));
}
// The same value by a multiply, given rden = std_rden(den) = fl64(1 / den) (once a row):
// fl32(fl64((x - mu) rden)), which std_quotient.cuh shows to be std_value's where it clears no
// flag; where it clears `exact` (about 1 value in 10^7 of real data) the caller computes the
// row again with std_value.  The flag starts as std_rden_ok(rden), the rule's precondition.
// One DMUL and a few integer operations in place of a division a value; the redo keeps the
// division's code out of the common path's registers.
__device__ __forceinline__ double std_rden(double den) { return ddiv(1.0, den); }
__device__ __forceinline__ bool std_rden_ok(double rden) {
    return bg_std_rden_normal((unsigned long long)__double_as_longlong(rden)) != 0;
}
__device__ __forceinline__ float std_value_mul(float x, double mu, double rden, bool &exact) {
    const double q = dmul(dsub((double)x, mu), rden);
    exact &= bg_std_quotient_exact((unsigned long long)__double_as_longlong(q)) != 0;
    return __double2float_rn(q);
}

template <long long C, unsigned EPS_BITS, int L>
__device__ __forceinline__ void standardize(long long rows, float *y, const float *x) {
    const double eps = (double)f32_from_bits(EPS_BITS);
    const int lane = (int)(threadIdx.x & 31u);
    for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
        const float *xr = x + r * C;
        double mu, den;
        std_stats<C, L>(lane, xr, eps, &mu, &den);
        const double rden = std_rden(den);
        const bool rok = std_rden_ok(rden);
        for (long long c = lane; c < C; c += 32) {
            bool exact = rok;
            const float v = std_value_mul(xr[c], mu, rden, exact);
            y[r * C + c] = exact ? v : std_value(xr[c], mu, den);
        }
    }
}

// absmean_std's row sum with the divisions (the rare row std_value_mul does not give exactly),
// out of line: its code and registers stay out of the common path.
template <long long C, int L>
__device__ __noinline__ double absmean_std_exact(int lane, const float *xr, double mu, double den) {
    return warp_row_sum<C, L>(lane, [&](long long c) { return std_value(xr[c], mu, den); }, AbsDouble{});
}

// absmean of a standardize (an absmean with a standardize prologue, fold-standardize-mm): per row
// standardize's statistics (std_stats), then the float64 sum in the order lanes(L) (seq when L
// = 0) of |fl((x - mu) / den)|, each term the float standardize stores, and y[r] = fl(sum /
// C) as absmean: the same operations as the two ops, without the standardized row in memory.
// One warp per row.
template <long long C, unsigned EPS_BITS, int L>
__device__ __forceinline__ void absmean_std(long long rows, float *y, const float *x) {
    const double eps = (double)f32_from_bits(EPS_BITS);
    const int lane = (int)(threadIdx.x & 31u);
    for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
        const float *xr = x + r * C;
        double mu, den;
        std_stats<C, L>(lane, xr, eps, &mu, &den);
        const double rden = std_rden(den);
        bool exact = std_rden_ok(rden);
        double s = warp_row_sum<C, L>(
            lane, [&](long long c) { return std_value_mul(xr[c], mu, rden, exact); }, AbsDouble{});
        if (!__all_sync(0xffffffffu, exact)) s = absmean_std_exact<C, L>(lane, xr, mu, den); // rare
        if (lane == 0) y[r] = C ? __double2float_rn(div_by_cols<C>(s)) : 0.0f;
    }
}

// A CSR row as a warp's dense row in shared memory (row: C floats, 16-byte aligned): fill in
// every column, then map(value) at each entry's column, one a lane (C / 128 four-float stores
// and an entry's store a lane, where csr_lanes_load takes a ballot and a branch per window);
// returns csr_lanes_load's windows with an entry.  Every lane of the warp calls it; the row is
// complete (__syncwarp) when it returns.
template <long long C, class Map>
__device__ __forceinline__ u64 csr_row_stage(int lane, float *row, u32 b, u32 e, const CsrEnt *ent, float fill,
                                             Map map) {
    static_assert((C + 31) / 32 <= 64, "csr_row_stage: at most 64 windows (LANES_REGS_MAX columns)");
    const float4 f4 = make_float4(fill, fill, fill, fill);
    for (int q = lane; q < (int)(C / 4); q += 32) reinterpret_cast<float4 *>(row)[q] = f4;
    for (int c = (int)(C / 4) * 4 + lane; c < (int)C; c += 32) row[c] = fill;
    __syncwarp();
    u32 lo = 0u, hi = 0u;
    for (u32 p0 = b; p0 < e; p0 += 32u) {
        const u32 n = e - p0 < 32u ? e - p0 : 32u; // entries this step (offsets never wrap)
        u32 w = 64u;
        if ((u32)lane < n) {
            const CsrEnt en = ent[p0 + (u32)lane];
            row[en.col] = map(en.val);
            w = en.col >> 5;
        }
        lo |= warp_or(w < 32u ? 1u << w : 0u);
        hi |= warp_or(w >= 32u && w < 64u ? 1u << (w - 32u) : 0u);
    }
    __syncwarp();
    return (u64)lo | ((u64)hi << 32);
}

// The staged rows of a launch's own kernel (blocks of 256: 8 warps), C floats a warp rounded up
// to 4 (Cora: 8 x 1,436 floats, 45.9 KB); wider rows keep csr_lanes_load.
constexpr long long STD_STAGE_MAX_BYTES = 46 * 1024;
template <long long C>
constexpr bool std_stage_fits = 8 * ((C + 3) / 4 * 4) * 4 <= STD_STAGE_MAX_BYTES;

// A standardize's row also as the bin and the absmean of the stored values (a row group's bin
// and absmean launches that read the standardize's output: cg_rows.c std_outs), each written
// where its pointer is not null.  v: lane l's values of columns l + 32 i (read at c < C only),
// the row as stored.  StdNoOut: neither (standardize_csr calls row only when active).
// bin's bits (bin_rows with EpEnd: ep_bit of each value, a ballot a 32-column word, padding
// bits 0) and absmean's lanes(32) sum of |v| (warp_lanes_sum_regs, as absmean reads a row of up
// to LANES_REGS_MAX columns into the same registers): the same operations, so the same bits.
struct StdNoOut {
    static constexpr bool active = false;
};
template <long long C>
struct StdRowOut {
    static constexpr bool active = true;
    u32 *bits; // b1 [R][words_of(C)], or null
    float *am; // f32 [R], or null
    template <long long CC>
    __device__ __forceinline__ void row(int lane, long long r, const float (&v)[(CC + 31) / 32]) const {
        static_assert(CC == C && words_of(C) <= 64, "StdRowOut: the standardize's row, at most 64 words");
        constexpr int NI = (int)((C + 31) / 32);
        if (bits) {
            u32 w0 = 0u, w1 = 0u; // lane j stores words j and j + 32
#pragma unroll
            for (int i = 0; i < NI; i++) {
                const long long c = lane + 32LL * i;
                const u32 word = __ballot_sync(0xffffffffu, c < C && ep_bit(EpEnd{}, r, c, v[i]) != 0u);
                if (lane == (i & 31)) {
                    if (i < 32) w0 = word;
                    else w1 = word;
                }
            }
            if (lane < NI) bits[r * NI + lane] = w0;
            if (lane + 32 < NI) bits[r * NI + lane + 32] = w1;
        }
        if (am) {
            const double s = warp_lanes_sum_regs<C>(lane, v, AbsDouble{});
            if (lane == 0) am[r] = __double2float_rn(div_by_cols<C>(s));
        }
    }
};

// standardize_csr: standardize's result for F input features held as CSR (plan.h
// bg_plan_launch_row_csr: lanes(32), 2 to LANES_REGS_MAX columns), the sparse variant of a
// standardize of the features.  csr_lanes_load rebuilds each lane's registers of the dense row
// (+0 where no entry is stored), so the statistics are the dense kernel's float64 operations in
// its order (std_stats_regs_masked: less those that change nothing, in windows without an
// entry); then a second csr_lanes_load puts each column's standardized value in the
// registers: a stored entry's computed by the lane that holds the entry (one division a lane for
// 32 entries), every +0 column's the row's one value of +0, computed once.  The same values, so
// the same bits as standardize; neither the dense row's reads nor its divisions.
// STAGE (the launch's own kernel, blocks of 256): both rebuilds through the warp's row in shared
// memory instead (csr_row_stage), the same registers and values: its kernel 12.8 -> 9.9 us on
// Cora, two thirds of the instructions (H200, docs/performance.md).
// (The same for absmean_std measured slower than its dense reads: docs/performance.md.)
// Out: the row's bin and absmean as well (StdRowOut; a row group's bin and absmean of this
// standardize, cg_rows.c), from the stored row's values in the lanes' registers.
// Every lane of the warp calls it; any grid is correct.
template <long long C, unsigned EPS_BITS, int L, bool STAGE = false, class Out = StdNoOut>
__device__ __forceinline__ void standardize_csr(long long rows, float *y, CsrRows csr, Out out = Out()) {
    static_assert(std_in_regs<C, L>, "standardize_csr: lanes(32), 2 to LANES_REGS_MAX columns");
    const double eps = (double)f32_from_bits(EPS_BITS);
    const int lane = (int)(threadIdx.x & 31u);
    if constexpr (STAGE && std_stage_fits<C>) {
        // STAGE (the launch's own kernel, blocks of 256): each row through a warp's stage in
        // shared memory, the same values in the same registers and stores (the same bits)
        constexpr long long CP = (C + 3) / 4 * 4;
        __shared__ __align__(16) float stage[8][CP];
        if (blockDim.x > 256) __trap(); // the code generator emits STAGE for blocks of 256 only
        float *row = stage[threadIdx.x >> 5];
        for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) { // warp-uniform
            const u32 b = csr.rp[r], e = csr.rp[r + 1];
            float v[(C + 31) / 32];
            const u64 present = csr_row_stage<C>(lane, row, b, e, csr.ent, 0.0f, AsFloat{});
#pragma unroll
            for (int i = 0; i < (int)((C + 31) / 32); i++) v[i] = lane + 32LL * i < C ? row[lane + 32 * i] : 0.0f;
            double mu, den;
            std_stats_regs_masked<C>(lane, v, present, eps, &mu, &den);
            const double rden = std_rden(den);
            bool exact = std_rden_ok(rden);
            const float v0 = std_value_mul(0.0f, mu, rden, exact);
            __syncwarp(); // the row is read before it is filled again
            csr_row_stage<C>(lane, row, b, e, csr.ent, v0, [&](float t) { return std_value_mul(t, mu, rden, exact); });
            if (!__all_sync(0xffffffffu, exact)) { // rare: the row again with the divisions
                __syncwarp();
                csr_row_stage<C>(lane, row, b, e, csr.ent, std_value(0.0f, mu, den),
                                 [&](float t) { return std_value(t, mu, den); });
            }
            for (int c = lane; c < (int)C; c += 32) y[r * C + c] = row[c];
            if constexpr (Out::active) {
#pragma unroll
                for (int i = 0; i < (int)((C + 31) / 32); i++) v[i] = lane + 32LL * i < C ? row[lane + 32 * i] : 0.0f;
                out.template row<C>(lane, r, v);
            }
            __syncwarp(); // the row is stored before the next one fills it
        }
        return;
    }
    for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
        const u32 b = csr.rp[r], e = csr.rp[r + 1];
        float v[(C + 31) / 32];
        const u64 present = csr_lanes_load<C>(lane, v, b, e, csr.ent, 0.0f, AsFloat{});
        double mu, den;
        std_stats_regs_masked<C>(lane, v, present, eps, &mu, &den);
        const double rden = std_rden(den);
        bool exact = std_rden_ok(rden);
        const float v0 = std_value_mul(0.0f, mu, rden, exact);
        csr_lanes_load<C>(lane, v, b, e, csr.ent, v0,
                          [&](float t) { return std_value_mul(t, mu, rden, exact); });
        if (!__all_sync(0xffffffffu, exact)) // rare: the row again with the divisions
            csr_lanes_load<C>(lane, v, b, e, csr.ent, std_value(0.0f, mu, den),
                              [&](float t) { return std_value(t, mu, den); });
#pragma unroll
        for (int i = 0; i < (int)((C + 31) / 32); i++) {
            const long long c = lane + 32LL * i;
            if (c < C) y[r * C + c] = v[i];
        }
        if constexpr (Out::active) out.template row<C>(lane, r, v); // reads v at c < C only
    }
}

// bin.center: mu = sum/C in float64 (standardize's mean, operation for operation, in the
// order lanes(L), seq when L = 0), then bit = 1 iff d = fl64(x - mu) has its sign bit clear
// and is not NaN.  One warp per row: the mean by warp_row_sum, then one __ballot_sync per
// 32-column word, padding bits zero.
// bin.center's bit of one value: fl64(v - mu) has its sign bit clear and is not NaN.
__device__ __forceinline__ bool center_bit(float v, double mu) {
    const u64 d = (u64)__double_as_longlong(dsub((double)v, mu));
    const bool nan = (d & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    return !nan && (d >> 63) == 0u;
}

// Rows of up to LANES_REGS_MAX columns in lanes(32) keep the lane's values in registers from
// the mean to the bits (word i from v[i]): one memory round trip a row, where a load a word
// before each ballot made 45 (Cora's 1433 columns: 17.5 us alone).
template <long long C, int L>
__device__ __forceinline__ void bin_center(long long rows, u32 *y, const float *x) {
    constexpr long long CW = words_of(C);
    const int lane = (int)(threadIdx.x & 31u);
    for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
        const float *xr = x + r * C;
        const auto xc = [&](long long c) { return xr[c]; };
        if constexpr (L == 32 && C > 0 && C <= LANES_REGS_MAX) {
            float v[(C + 31) / 32];
            warp_lanes_load<C>(lane, v, xc);
            const double mu = ddiv(warp_lanes_sum_regs<C>(lane, v, AsDouble{}), (double)C);
#pragma unroll
            for (int w = 0; w < (int)CW; w++) {
                const u32 word = __ballot_sync(0xffffffffu, 32LL * w + lane < C && center_bit(v[w], mu));
                if (lane == 0) y[r * CW + w] = word;
            }
        } else {
            const double sum = warp_row_sum<C, L>(lane, xc, AsDouble{});
            const double mu = C ? ddiv(sum, (double)C) : 0.0;
            for (long long w = 0; w < CW; w++) {
                const long long c = w * 32 + lane;
                const u32 word = __ballot_sync(0xffffffffu, c < C && center_bit(xr[c], mu));
                if (lane == 0) y[r * CW + w] = word;
            }
        }
    }
}

// bin_center_csr: bin.center's result for F input features held as CSR (plan.h
// bg_features_csr; every value other than +0 stored, -0 and NaN kept), the sparse variant of a
// bin.center of the features.  A warp a row: the mean by csr_row_sum (the dense kernel's float64
// operations in its order, less the additions of +0), then the row's image starts as the bit of
// a +0 column (the same for every column of the row) and each stored entry, one a lane, flips
// its column where its bit differs (distinct columns: the flips commute), as bin_csr.  At most
// BIN_CSR_WORDS_MAX words a row (bin_ops.cuh); any grid is correct.
template <long long C, int L>
__device__ __forceinline__ void bin_center_csr(long long rows, u32 *y, CsrRows csr) {
    constexpr long long CW = words_of(C);
    static_assert(CW >= 1 && CW <= 128, "bin_center_csr: 1 to 128 words a row");
    __shared__ u32 img[32][CW]; // a row image per warp (blocks of up to 1024 threads)
    const int lane = (int)(threadIdx.x & 31u), warp = (int)(threadIdx.x >> 5);
    const CsrEnt *ent = csr.ent;
    u32 *im = img[warp];
    for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
        const u32 b = csr.rp[r], e = csr.rp[r + 1];
        const double mu = C ? ddiv(csr_row_sum<L>(lane, b, e, ent), (double)C) : 0.0;
        const bool zb = center_bit(0.0f, mu);
        for (long long w = lane; w < CW; w += 32) {
            const u32 full = zb ? 0xffffffffu : 0u;
            im[w] = w == CW - 1 && C % 32 != 0 ? full & ((1u << (C % 32)) - 1u) : full; // padding bits 0
        }
        __syncwarp();
        for (u32 p = b + (u32)lane; p < e; p += 32) {
            const CsrEnt en = ent[p];
            const u32 c = en.col;
            if (center_bit(en.val, mu) != zb) atomicXor(&im[c >> 5], 1u << (c & 31u));
        }
        __syncwarp();
        for (long long w = lane; w < CW; w += 32) y[r * CW + w] = im[w];
        __syncwarp(); // the image is read before the next row's overwrites it
    }
}

// log_softmax: m = max (float32, the first maximum in column order), s = sum exp(x - m) (float64,
// in the recorded order), y = fl(x - m - log s) in float64.  Rows of at most 32 columns (seq):
// one warp a row (the plan's 32 threads a row), lane c holding column c: the exponentials in
// parallel, the maximum and the sum taken in column order by every lane through shuffles
// (epilogue.cuh lsm_warp), the same operations in the same order as one thread would do them.
// Wider rows in lanes(32) (L = 32, fp_order.c): a warp a row too (log_softmax_lanes).  Wider
// rows in seq (--fp-strict): one thread a row.
template <long long C>
__device__ __forceinline__ void log_softmax_lanes(long long rows, float *y, const float *x);
template <long long C, int L = 0>
__device__ __forceinline__ void log_softmax(long long rows, float *y, const float *x) {
    static_assert(L == 0 || L == 32, "log_softmax: seq or lanes(32)");
    if constexpr (C >= 1 && C <= 32) {
        const int lane = (int)(threadIdx.x & 31u);
        for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) {
            const float v = lane < C ? x[r * C + lane] : 0.0f;
            const float o = lsm_warp<C>(lane, v); // epilogue.cuh
            if (lane < C) y[r * C + lane] = o;
        }
    } else if constexpr (L == 32) {
        log_softmax_lanes<C>(rows, y, x);
    } else {
        for (long long r = thread_index(); r < rows; r += thread_stride()) {
            const float *xr = x + r * C;
            if (C == 0) continue;
            float m = xr[0];
            for (long long c = 1; c < C; c++)
                if (xr[c] > m) m = xr[c];
            double s = 0.0;
            for (long long c = 0; c < C; c++) s = dadd(s, exp(dsub((double)xr[c], (double)m)));
            double ls = log(s);
            for (long long c = 0; c < C; c++)
                y[r * C + c] = __double2float_rn(dsub(dsub((double)xr[c], (double)m), ls));
        }
    }
}

// log_softmax of rows of C > 32 columns in the order lanes(32), a warp a row, lane l holding
// columns l + 32 i (in registers up to LSM_REGS_MAX columns, else read again for each pass).
// The maximum is the sequential scan's (m = x[0], then x[c] where x[c] > m): the largest
// value that is not NaN, the first in column order among equal ones (+0 and -0), or x[0]
// when x[0] is NaN.  Each lane takes its columns' first largest (NaN skipped), then the
// warp's butterfly keeps the larger value, on equal values the lower column: a total order,
// so every lane ends with the same column.  The float64 sum of exp(x - m) in lanes(32)
// (warp_lanes_sum_regs / warp_lanes_sum_loop: each lane's columns in order from +0, then the
// butterfly), then y = fl(x - m - log s) as in seq.
constexpr long long LSM_REGS_MAX = 512;
template <long long C>
__device__ __forceinline__ void log_softmax_lanes(long long rows, float *y, const float *x) {
    static_assert(C > 32, "log_softmax_lanes: rows of more than 32 columns");
    const int lane = (int)(threadIdx.x & 31u);
    for (long long r = thread_index() / 32; r < rows; r += thread_stride() / 32) { // warp-uniform
        const float *xr = x + r * C;
        auto term = [&](long long c) { return xr[c]; };
        float best = __int_as_float((int)0xff800000u); // -inf
        int bc = 0x7fffffff; // no column yet
        auto take = [&](float v, long long c) {
            if (!isnan(v) && (bc == 0x7fffffff || v > best)) {
                best = v;
                bc = (int)c;
            }
        };
        constexpr bool REGS = C <= LSM_REGS_MAX;
        float v[REGS ? (C + 31) / 32 : 1];
        if constexpr (REGS) {
            warp_lanes_load<C>(lane, v, term);
#pragma unroll
            for (int i = 0; i < (int)((C + 31) / 32); i++)
                if (lane + 32LL * i < C) take(v[i], lane + 32LL * i);
        } else {
            for (long long c = lane; c < C; c += 32) take(xr[c], c);
        }
#pragma unroll
        for (int h = 16; h >= 1; h /= 2) {
            const float ob = __shfl_xor_sync(0xffffffffu, best, h);
            const int oc = __shfl_xor_sync(0xffffffffu, bc, h);
            if (ob > best || (ob == best && oc < bc)) {
                best = ob;
                bc = oc;
            }
        }
        const float x0 = __shfl_sync(0xffffffffu, REGS ? v[0] : xr[0], 0);
        const float m = isnan(x0) ? x0 : best;
        auto ex = [&](float t) { return exp(dsub((double)t, (double)m)); };
        double s;
        if constexpr (REGS) s = warp_lanes_sum_regs<C>(lane, v, ex);
        else s = warp_lanes_sum_loop<C, 32>(lane, term, ex);
        const double ls = log(s);
        if constexpr (REGS) {
#pragma unroll
            for (int i = 0; i < (int)((C + 31) / 32); i++) {
                const long long c = lane + 32LL * i;
                if (c < C) y[r * C + c] = __double2float_rn(dsub(dsub((double)v[i], (double)m), ls));
            }
        } else {
            for (long long c = lane; c < C; c += 32)
                y[r * C + c] = __double2float_rn(dsub(dsub((double)xr[c], (double)m), ls));
        }
    }
}

// readout's value of node v at column c: a bit as +-1, or the float
template <char X, long long C, int REDUCE>
__device__ __forceinline__ float readout_val(const void *xp, long long v, long long c) {
    if constexpr (X == 'B') return pm1(get_bit((const u32 *)xp + v * words_of(C), c));
    else return ((const float *)xp)[v * C + c];
}

// One graph's readout at column c over its nodes lo .. hi - 1 (0 for an empty graph): REDUCE
// 0 = sum (sequential from +0.0f in node order), 1 = mean (fl(sum / count)), 2 = max (the first
// maximum).  A sum requests AHEAD nodes' values together, then adds them in node order: one
// memory round trip per AHEAD nodes, not per node; REST requests the last fewer than AHEAD
// together too (else one at a time).
template <char X, long long C, int REDUCE, int AHEAD, bool REST>
__device__ __forceinline__ float readout_graph(const void *xp, long long lo, long long hi, long long c) {
    static_assert(REDUCE >= 0 && REDUCE <= 2, "readout: sum, mean or max");
    float acc = 0.0f;
    if (hi <= lo) return acc;
    if constexpr (REDUCE == 2) {
        acc = readout_val<X, C, REDUCE>(xp, lo, c);
        for (long long v = lo + 1; v < hi; v++) {
            float tv = readout_val<X, C, REDUCE>(xp, v, c);
            if (tv > acc) acc = tv;
        }
    } else {
        long long v = lo;
        for (; v + AHEAD <= hi; v += AHEAD) {
            float t[AHEAD];
#pragma unroll
            for (int k = 0; k < AHEAD; k++) t[k] = readout_val<X, C, REDUCE>(xp, v + k, c);
#pragma unroll
            for (int k = 0; k < AHEAD; k++) acc = fadd(acc, t[k]);
        }
        if constexpr (REST) {
            if (v < hi) {
                float t[AHEAD];
#pragma unroll
                for (int k = 0; k < AHEAD; k++) t[k] = v + k < hi ? readout_val<X, C, REDUCE>(xp, v + k, c) : 0.0f;
#pragma unroll
                for (int k = 0; k < AHEAD; k++)
                    if (v + k < hi) acc = fadd(acc, t[k]);
            }
        } else {
            for (; v < hi; v++) acc = fadd(acc, readout_val<X, C, REDUCE>(xp, v, c));
        }
        if constexpr (REDUCE == 1) acc = fdiv(acc, (float)(hi - lo));
    }
    return acc;
}

// readout: y[g,c] over the nodes graph_ptr gives graph g (rows = G), 8 nodes ahead.
template <char X, long long C, int REDUCE>
__device__ __forceinline__ void readout(long long rows, float *y, const void *xp,
                                        const long long *graph_ptr) {
    store_all<'F', C>(rows, y, [&](long long g, long long c) {
        return readout_graph<X, C, REDUCE, 8, false>(xp, graph_ptr[g], graph_ptr[g + 1], c);
    });
}

// readout_nodes: readout's value for one graph whose nodes are rows lo .. hi - 1 of x (the
// per-graph kernel, which knows them: no graph_ptr round trip), into y[0, c]; 16 nodes ahead,
// the rest together too.
template <char X, long long C, int REDUCE>
__device__ __forceinline__ void readout_nodes(float *y, const void *xp, long long lo, long long hi) {
    store_all<'F', C>(1, y, [&](long long, long long c) { return readout_graph<X, C, REDUCE, 16, true>(xp, lo, hi, c); });
}

} // namespace bgnn

#endif // BGNN_ROWWISE_CUH
