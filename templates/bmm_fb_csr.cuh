// bmm_fb_csr.cuh - bmm.FB{F,B} of the model's input features held as CSR (their nonzeros
// only), one warp per row: bmm_fb_rows.cuh's result, bit for bit, without reading the zeros.
//
// The runtime builds the CSR when it uploads sparse features (runtime/exec.c, plan.h
// BgPlanLaunch.alt) and passes it in place of the dense features:
//     u32 rowptr[rows + 1]; u32 col[nnz]; float val[nnz]    (nnz = rowptr[rows])
// one block of memory, the columns of a row ascending, every value not +-0 (a NaN is kept).
//
// y[r,o] = sum over k ascending from +0.0f of v(w[k,o]) * x'[r,k], x' = pro(k, x[r,k]), the
// terms with x' = +-0 skipped: bmm_fb_rows' order and rule.  The zeros the CSR leaves out give
// x' = pro(k, +-0), which is +-0 (skipped there too) for ProNone, and for ProScl unless s[k] is
// infinite or NaN: then x' is NaN, the row kernel adds it and its sums end NaN.  So each block
// first looks for such columns (a scan of s, almost always empty); when there are some, a row
// lacking any of them in its CSR gets NaN sums (the GPU's NaN, the one the row kernel's adds
// give) before its epilogue.
//
// Work: warp per row (grid-stride over warps); lane l owns outputs o = l, l + 32, ... (MJ =
// ceil(M/32) accumulators).  A step loads 32 nonzeros of the row, one a lane, each with its
// weight row (canonical b1 [K][ceil(M/32)]), all at once; then they are added in column order,
// each value and weight row broadcast from its lane by __shfl_sync.  The first row's first step
// is loaded before the block waits on its scan of s.
#ifndef BGNN_BMM_FB_CSR_CUH
#define BGNN_BMM_FB_CSR_CUH

#include "bgnn_common.cuh"
#include "epilogue.cuh"
#include "bmm_fb_rows.cuh"

namespace bgnn {

// The prologues this kernel takes, and whether pro(k, +-0) can be other than +-0 for some k
// (checked): ProNone never, ProScl for a non-finite scale.
template <class Pro>
struct CsrZeroTerms {
    static constexpr bool supported = false, checked = false;
};
template <>
struct CsrZeroTerms<ProNone> {
    static constexpr bool supported = true, checked = false;
};
template <>
struct CsrZeroTerms<ProScl> {
    static constexpr bool supported = true, checked = true;
    __device__ __forceinline__ static bool bad(const ProScl &p, long long k) { return !isfinite(p.s[k]); }
};

template <char Z, long long K, long long M, class Pro = ProNone, class Epi = EpEnd>
__device__ __forceinline__ void bmm_fb_csr(long long rows, void *yp, const float *csr, const u32 *w,
                                           Pro pro = Pro(), Epi epi = Epi()) {
    static_assert(CsrZeroTerms<Pro>::supported,
                  "bmm_fb_csr: a prologue whose zero terms it cannot account for");
    constexpr long long MW = words_of(M);
    constexpr int MJ = M > 0 ? (int)MW : 1;
    if constexpr (M == 0) return;
    const u32 *rp = (const u32 *)csr, *col = rp + rows + 1;
    const float *val = (const float *)(col + rp[rows]);
    const unsigned lane = threadIdx.x & 31u, sh = 31u - lane;
    const long long warps = thread_stride() >> 5;
    // A step of a row: 32 of its nonzeros, lane l's value x' and weight row (all loaded at once).
    struct Step {
        float xv;
        u32 k, wv[MJ];
    };
    auto load = [&](u32 e, u32 end, Step &st) {
        st.k = e < end ? col[e] : 0u;
        st.xv = e < end ? pro((long long)st.k, val[e]) : 0.0f;
#pragma unroll
        for (int j = 0; j < MJ; j++) st.wv[j] = 0u;
        if (st.xv != 0.0f) fb_rows_weights<MJ>(w + (long long)st.k * MW, st.wv);
    };
    long long r = thread_index() >> 5;
    u32 beg = 0, end = 0;
    Step st;
    if (r < rows) { // the first row's first step, loaded before the scan below waits on its loads
        beg = rp[r];
        end = rp[r + 1];
        load(beg + lane, end, st);
    }
    bool any_bad = false; // a column whose zero term is NaN (ProScl with a non-finite scale)
    if constexpr (CsrZeroTerms<Pro>::checked) {
        bool b = false;
        for (long long k = threadIdx.x; k < K; k += blockDim.x) b |= CsrZeroTerms<Pro>::bad(pro, k);
        any_bad = __syncthreads_or(b) != 0;
    }
    for (bool first = true; r < rows; r += warps, first = false) {
        if (!first) {
            beg = rp[r];
            end = rp[r + 1];
            load(beg + lane, end, st);
        }
        float acc[MJ];
#pragma unroll
        for (int j = 0; j < MJ; j++) acc[j] = 0.0f;
        for (u32 e0 = beg; e0 < end; e0 += 32u) {
            if (e0 != beg) load(e0 + lane, end, st);
            u32 nz = __ballot_sync(0xffffffffu, st.xv != 0.0f); // NaN counts as nonzero
            while (nz) { // in column order: lane b's value and weight row, broadcast
                const int b = __ffs(nz) - 1;
                nz &= nz - 1u;
                const u32 nt = __float_as_uint(__shfl_sync(0xffffffffu, st.xv, b)) ^ 0x80000000u;
#pragma unroll
                for (int j = 0; j < MJ; j++)
                    acc[j] = fadd(acc[j], signed_by_shifted(nt, __shfl_sync(0xffffffffu, st.wv[j], b), sh));
            }
        }
        if constexpr (CsrZeroTerms<Pro>::checked) {
            if (any_bad) { // rare: is some column with a NaN zero term absent from this row?
                bool nan = false;
                for (long long k0 = 0; k0 < K && !nan; k0 += 32) {
                    const long long k = k0 + lane;
                    bool miss = false;
                    if (k < K && CsrZeroTerms<Pro>::bad(pro, k)) {
                        miss = true;
                        for (u32 e = beg; e < end; e++)
                            if (col[e] == (u32)k) {
                                miss = false;
                                break;
                            }
                    }
                    nan = __any_sync(0xffffffffu, miss);
                }
                if (nan)
#pragma unroll
                    for (int j = 0; j < MJ; j++) acc[j] = __uint_as_float(0x7fffffffu);
            }
        }
        fb_rows_store<Z, M, MJ>(r, yp, acc, lane, epi);
    }
}

} // namespace bgnn

#endif // BGNN_BMM_FB_CSR_CUH
