// bgnn_common.cuh - types and helpers shared by every bgnn kernel template.
//
// Device layouts (identical to the host layouts of compiler/bg.h and plan.h):
//   f32 [R][C]  float row-major.
//   b1  [R][W]  W = ceil(C/32) uint32 words per row; feature c is bit c%32 of word c/32
//               (LSB first); bit 1 = +1, bit 0 = -1; padding bits are ZERO, every kernel
//               writing b1 keeps them zero and every reader masks them or uses the real C.
//   b1t [M][KW] a b1 BMM weight W[K][M] transposed: bit k%32 of word o*KW + k/32 = W[k][o].
//   CSR graph   rowptr int64[N+1], col int32[nnz] (ascending per row), rowf/colf float[N],
//               w float[nnz] (w = fl(rowf[i] * colf[j])).
//
// Float arithmetic follows docs/semantics.md exactly: every product and sum rounded on its
// own (__fmul_rn/__fadd_rn, never contracted), each reduction in the order its instruction
// records (section 2: seq in index order from +0.0f; seq+fma with __fmaf_rn; split-k chunks
// folded left to right), division and square root correctly rounded.  The bit rule is bit = !signbit(t).
//
// Kernels are grid-stride loops over (row, sub) pairs: thread t handles row t / TPR and
// sub-index t % TPR; any grid size >= 1 is correct.  Kernels with b1 outputs use one warp
// per output word (TPR a multiple of 32, blockDim a multiple of 32) and __ballot_sync, so
// the loop condition is uniform across each warp.  store_all is that loop for a kernel
// with one output element per (row, column).
#ifndef BGNN_COMMON_CUH
#define BGNN_COMMON_CUH

namespace bgnn {

typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

// ---- bits ---------------------------------------------------------------------------
// The bit rule: +1 (bit 1) when the sign bit of t is clear (t >= 0 except -0.0 / NaN sign).
__device__ __forceinline__ u32 bit_of(float t) { return (__float_as_uint(t) >> 31) ^ 1u; }
// Valid-bit mask of word w of a row of `cols` bits (0 when the word is all padding).
__host__ __device__ constexpr u32 word_mask(long long cols, long long w) {
    return cols - w * 32 >= 32 ? 0xffffffffu : cols - w * 32 <= 0 ? 0u
                                             : ((1u << (u32)(cols - w * 32)) - 1u);
}
__host__ __device__ constexpr long long words_of(long long cols) { return (cols + 31) / 32; }
__device__ __forceinline__ int popc(u32 v) { return __popc(v); }
__device__ __forceinline__ u32 get_bit(const u32 *row, long long c) {
    return (row[c >> 5] >> (c & 31)) & 1u;
}
// v(bit) * t exactly: t with its sign flipped for a 0 bit (an exact negation).
__device__ __forceinline__ float signed_by(float t, u32 bit) {
    return __uint_as_float(__float_as_uint(t) ^ ((bit ^ 1u) << 31));
}
__device__ __forceinline__ float pm1(u32 bit) { return bit ? 1.0f : -1.0f; }
// signed_by(t, bit sh' of w) for a lane that reads bit 31 - sh of word w, given nt = the bits
// of -t: one shift and one three-input logic operation (the exact sign flip of signed_by).
__device__ __forceinline__ float signed_by_shifted(u32 nt, u32 w, u32 sh) {
    return __uint_as_float(nt ^ ((w << sh) & 0x80000000u));
}
// The same sign flip with the shift as a multiply by m = 2^sh (IMAD, on the FMA pipe, in PTX so
// that the compiler does not turn it back into a shift): the same bits, one operation fewer on
// the integer ALU pipe, which runs at half the FMA pipe's rate on sm_80 / sm_90 and bounds a
// long loop of these; its latency is longer, so short chains keep the shift.
__device__ __forceinline__ float signed_by_mul(u32 nt, u32 w, u32 m) {
    u32 p;
    asm("mul.lo.u32 %0, %1, %2;" : "=r"(p) : "r"(w), "r"(m));
    return __uint_as_float(nt ^ (p & 0x80000000u));
}

// ---- the work list SLOTS (plan.h bg_plan_mm_slots) --------------------------------------
// A block of 256 threads walks the list: block b takes slots b, b + grid, ...; warp w reads entry
// w of a slot in one 16-byte load {row, edges, first edge lo, hi}.  A hub slot's row (row field
// -1 - row, the same entry in every warp) goes to hub(i, e0, e1), which every thread calls; any
// other entry's row to row(i, e0, e1) of its warp; padding (edges < 0) is skipped.  The header
// and the block's first slot are requested at once: the list has at least ceil(rows / 8) slots.
// (mm_spmm.cuh's bspmm_mm and spmm.cuh's float aggregation a warp a row.)
template <class Hub, class Row>
__device__ __forceinline__ void slots_walk(long long rows, const int4 *slots, int wib, Hub hub, Row row) {
    const long long s0 = blockIdx.x, nfirst = (rows + 7) / 8;
    int4 it = s0 < nfirst ? slots[1 + 8 * s0 + wib] : make_int4(0, -1, 0, 0);
    const long long ns = slots[0].x;
    for (long long s = s0; s < ns; s += gridDim.x) { // block-uniform
        if (s != s0 || s0 >= nfirst) it = slots[1 + 8 * s + wib];
        const long long e0 = (long long)(((unsigned long long)(unsigned)it.w << 32) | (unsigned)it.z);
        if (it.x < 0) hub(-1LL - it.x, e0, e0 + it.y);
        else if (it.y >= 0) row((long long)it.x, e0, e0 + it.y);
    }
}

// ---- programmatic dependent launch ---------------------------------------------------
// First statement of every per-launch kernel.  Launched with programmatic stream
// serialization (runtime exec.c launch_kernel: each kernel of a run after its first, sm_90
// and newer), the grid is launched as soon as every block of the kernel before it has
// exited, and waits here until that kernel has finished and its writes are visible: the
// order of a plain launch, with the next grid's launch taken off the chain (Cora gcn_bin
// 17.3 -> 16.5 us on an H200).  Launched plainly, it is a no-op.  No kernel triggers its
// dependents early (griddepcontrol.launch_dependents first thing measured slower: the
// waiting grid's blocks held the SMs, Cora 17.3 -> 18.1 us, saint_bin 48.4 -> 53.1 us).
__device__ __forceinline__ void pdl_enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// After its own pdl_enter, a kernel whose next kernel reads and writes nothing of its own
// (plan.h bg_plan_launch_beside_prev) lets that one launch now: the next grid's blocks run
// beside this one's and call pdl_enter at their end, so the kernel after them still starts
// after both.  Launched plainly, a no-op.
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// ---- float helpers (no FMA contraction possible) --------------------------------------
__device__ __forceinline__ float fadd(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float fsub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float fmul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float fdiv(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float fsqrt(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double dadd(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double dsub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double dmul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double ddiv(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ double dsqrt(double a) { return __dsqrt_rn(a); }
__device__ __forceinline__ float f32_from_bits(u32 b) { return __uint_as_float(b); }

// ---- iteration ------------------------------------------------------------------------
__device__ __forceinline__ long long thread_index() {
    return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ long long thread_stride() {
    return (long long)gridDim.x * blockDim.x;
}
// Threads per row of a b1 output of `cols` bits: one warp per word (at least one warp).
__host__ __device__ constexpr long long b1_tpr(long long cols) {
    return words_of(cols) > 0 ? 32 * words_of(cols) : 32;
}
// Threads per row of an f32 output of `cols` columns (at least one).
// Named barrier id (1 .. 15) of `threads` threads (a multiple of 32) of the block: a group of
// warps waits for its own members only (bar.sync id, threads; host emulation: its own).
#ifndef BGNN_HOST_EMULATION
__device__ __forceinline__ void bar_named(unsigned id, unsigned threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
#endif

__host__ __device__ constexpr long long f32_tpr(long long cols) { return cols > 0 ? cols : 1; }

// Stores one output bit per lane: lane c%32 of the warp owning word c/32 of `row` holds the
// bit of feature c (0 for padding); lane 0 writes the word.
#ifndef BGNN_HOST_EMULATION
__device__ __forceinline__ void store_bits(u32 *y_row, long long word, u32 bit) {
    u32 w = __ballot_sync(0xffffffffu, bit != 0u);
    if ((threadIdx.x & 31u) == 0u) y_row[word] = w;
}
#else
// Host emulation for testing the templates on a CPU (threads run one by one; the output
// must be zeroed first): each lane ORs its own bit in.
inline void store_bits(u32 *y_row, long long word, u32 bit) {
    y_row[word] |= (bit != 0u ? 1u : 0u) << (threadIdx.x & 31u);
}
#endif

// Every output element (r, c) of a [rows][C] result, one thread per (row, sub-index) as
// above.  Z == 'B': elem(r, c) is the bit of feature c (one warp per output word, b1_tpr(C)
// threads per row, padding lanes give 0 so padding bits stay zero); Z == 'F': elem(r, c) is
// the float (f32_tpr(C) threads per row).  elem runs only for c < C.
template <char Z, long long C, class F>
__device__ __forceinline__ void store_all(long long rows, void *yp, F elem) {
    if constexpr (Z == 'B') {
        constexpr long long TPR = b1_tpr(C), CW = words_of(C);
        u32 *y = (u32 *)yp;
        for (long long t = thread_index(); t < rows * TPR; t += thread_stride()) {
            long long r = t / TPR, c = t % TPR;
            u32 bit = 0u;
            if (c < C) bit = elem(r, c);
            if (CW > 0) store_bits(y + r * CW, c >> 5, bit);
        }
    } else {
        constexpr long long TPR = f32_tpr(C);
        float *y = (float *)yp;
        for (long long t = thread_index(); t < rows * TPR; t += thread_stride()) {
            long long r = t / TPR, c = t % TPR;
            if (c < C) y[r * C + c] = elem(r, c);
        }
    }
}

// ---- the input features' CSR block (plan/plan.h bg_features_csr) ------------------
// u32 rowptr[n + 1], u32 col[nnz], float val[nnz], u32 order[n] as its arrays, seen from a
// first row: rp[r] is the view's row r's first entry (an offset into col and val, which are
// the whole block's), order the rows by their nonzeros (the block's row numbers), or nullptr
// in a row group's tile (rows in index order).
struct alignas(8) CsrEnt { // a stored entry: its column and value, one 8-byte load
    u32 col;
    float val;
};
struct alignas(8) CsrRange { // the entries [beg, end) of a row
    u32 beg, end;
};
struct CsrRows {
    const u32 *rp;         // rowptr, index order (a tile's: from its first row)
    const CsrEnt *ent;     // the entries, each row's columns ascending
    const u32 *order;      // the rows by their entries, most first; nullptr: index order
    const CsrRange *range; // with order: range[p] is row order[p]'s entries
};
// The whole block of n rows (plan.h bg_features_csr): range[n], rowptr[n + 1], order[n], a pad
// word where needed, then the entries.  Every address follows from n alone, so a kernel's first
// loads (a row set's order and range, one round trip) wait on nothing else.
__device__ __forceinline__ CsrRows csr_rows(const void *block, long long n) {
    const u32 *w = (const u32 *)block, *rp = w + 2 * n, *order = rp + n + 1;
    return CsrRows{rp, (const CsrEnt *)(w + 4 * n + 2), order, (const CsrRange *)w};
}
// Rows r0, r0 + 1, ... of the block of n rows (a row group's tile), in index order.
__device__ __forceinline__ CsrRows csr_tile(const void *block, long long n, long long r0) {
    CsrRows c = csr_rows(block, n);
    c.rp += r0;
    c.order = nullptr;
    c.range = nullptr;
    return c;
}

// ---- the grid-wide barrier of the fused kernel (plan/plan.h) ----------------
// Every block of a cooperative launch arrives once; block 0 adds 2^31 - (blocks - 1), the
// others 1, so the counter's top bit flips exactly when the last block arrives and the low
// bits return to their value before the barrier: the same word serves every barrier of
// every run without being reset.  The fences order each block's writes before its arrival
// and the waiting block's later reads after the flip.
#ifndef BGNN_HOST_EMULATION
__device__ __forceinline__ void grid_sync(unsigned *bar) {
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned inc = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1u) : 1u;
        __threadfence();
        const unsigned old = atomicAdd(bar, inc);
        while (((old ^ *(volatile unsigned *)bar) & 0x80000000u) == 0u) __nanosleep(32);
        __threadfence();
    }
    __syncthreads();
}
#endif

// ---- a table staged in shared memory without a register (the per-graph kernel's copy) ------
// stage_async: dst (shared) = src (global), one float, by cp.async where the machine has it
// (sm_80 on), so that the thread goes on without waiting for the load; stage_wait: every
// stage_async of this thread done (before the barrier after which the block reads dst).
__device__ __forceinline__ void stage_async(float *dst, const float *src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"((u32)__cvta_generic_to_shared(dst)), "l"(src) : "memory");
#else
    *dst = *src;
#endif
}
__device__ __forceinline__ void stage_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

} // namespace bgnn

#endif // BGNN_COMMON_CUH
