// bspmm_bench.cu - correctness and speed of the fast binary BSpMM kernels (the CSR kernel
// of templates/bspmm_fast.cuh, as the code generator uses it; the benchmark-only FRDC and
// hub kernels of bench/kernels/) against the CPU reference (reference/ref_ops.c
// bg_ref_bspmm, rows in parallel with bg_ref_bspmm_rows) and cuSPARSE FP32 SpMM, in one run.
// Build and run: bench/run_bench.sh.
//
// Graphs: Cora, CiteSeer, PubMed (graph.mtx under $BGNN_DATA_DIR, default .carry/data), a
// Reddit-sized R-MAT graph (bench/rmat.h, rmat_graph: 232,965 nodes, ~114.6M directed
// edges, symmetrised, seed 42), and awkward random shapes (N % 4 != 0, N % 32 != 0, isolated
// nodes, empty tile rows, a 15,000-neighbour row; C not a multiple of 32, C > 1024).
// Every graph is built by the product (loaders/graph.c bg_graph_from_coo), every adjacency
// is a BgAdj (bg_adj_build): self loops added (except where an awkward case says none, to get
// isolated nodes), norm none and mean.  Work schedules: the runtime's (plan/plan.c
// bg_plan_schedule), uploaded.
//
// Options: --quick (skip the R-MAT graphs), --rmat-only, --degord-only (only the R-MAT graph
// renumbered by degree on the GPU, bench/kernels/degree_order.cuh), --reps N, --rmat-edges M
// (stream length), --profile (three csr/popc2 launches for ncu; with --degord-only on the
// renumbered graph), --check-only (the awkward shapes at C = 33, 128, 1100 only, every
// variant, no timing: for compute-sanitizer).
#include <cuda_runtime.h>
#include <cusparse.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include "bg.h"
#include "plan.h"
#include "ref_ops.h"
}

#include "../templates/bspmm_fast.cuh"
#include "../templates/spmm.cuh"
#include "kernels/bspmm_frdc.cuh"
#include "kernels/bspmm_hub.cuh"
#include "kernels/degree_order.cuh"
#include "rmat.h"
#include "bench_util.cuh"

using bgnn::u32;

#define CKS(x) CK_STATUS(x, CUSPARSE_STATUS_SUCCESS, "cusparse")

static int g_reps = 50;
static int g_fail = 0;
static double g_bw = 0; // device-to-device bytes (read + write) per second

// ---------------------------------------------------------------------------------------------
struct HostGraph {
    std::string name;
    long long n = 0, nnz = 0;
    BgAdj adj{};                 // self loops as asked, norm none (pattern)
    BgAdj adjm{};                // the same pattern, norm mean (rowf = 1 / degree)
    bool bgref = true;           // also compare the reference's three methods (small graphs)
    float order_ms = 0;          // GPU degree renumbering time (rmat-degord only)
    int maxdeg = 0, isolated = 0;
};

static void finish_graph(HostGraph &h, const BgGraph &g, bool self_loops) {
    if (!bg_adj_build(&g, self_loops, BG_NORM_NONE, &h.adj) ||
        !bg_adj_build(&g, self_loops, BG_NORM_MEAN, &h.adjm)) {
        fprintf(stderr, "adj\n");
        exit(2);
    }
    h.n = h.adj.n;
    h.nnz = h.adj.nnz;
    for (long long i = 0; i < h.n; i++) {
        long long d = h.adj.rowptr[i + 1] - h.adj.rowptr[i];
        h.maxdeg = std::max(h.maxdeg, (int)d);
        h.isolated += d == 0;
    }
}

static void free_host(HostGraph &h) {
    bg_adj_free(&h.adj);
    bg_adj_free(&h.adjm);
}

static void die_diag(const char *what, BgDiagSink *d) {
    char *m = bg_diag_render(d);
    fprintf(stderr, "%s: %s\n", what, m ? m : "?");
    free(m);
    exit(2);
}

static bool load_mtx(HostGraph &h, const char *dir, const char *name) {
    std::string p = std::string(dir) + "/" + name + "/graph.mtx";
    BgDiagSink d;
    bg_diag_init(&d);
    BgCoo c;
    BgGraph g;
    if (!bg_mtx_load(p.c_str(), &c, &d) || !bg_graph_from_coo(&c, p.c_str(), &g, &d)) {
        char *m = bg_diag_render(&d);
        fprintf(stderr, "cannot load %s: %s\n", p.c_str(), m);
        free(m);
        return false;
    }
    h.name = name;
    finish_graph(h, g, true);
    bg_coo_free(&c);
    bg_graph_free(&g);
    bg_diag_free(&d);
    return true;
}

// Deterministic random graph from per-row degrees: deg_of(i) uniform column draws for row i,
// as COO entries; bg_graph_from_coo sorts the columns and merges repeated draws.
static void make_random(HostGraph &h, const char *name, long long n, bool self_loops,
                        std::function<int(long long)> deg_of, uint64_t seed) {
    std::vector<int64_t> rows, cols;
    for (long long i = 0; i < n; i++) {
        int d = deg_of(i);
        for (int k = 0; k < d; k++) {
            rows.push_back(i);
            cols.push_back((int)(rmat_mix64(seed ^ ((uint64_t)i << 20) ^ (uint64_t)k) % (uint64_t)n));
        }
    }
    BgCoo c{n, n, (int64_t)rows.size(), rows.data(), cols.data(), nullptr};
    BgDiagSink dg;
    bg_diag_init(&dg);
    BgGraph g;
    if (!bg_graph_from_coo(&c, name, &g, &dg)) die_diag(name, &dg);
    bg_diag_free(&dg);
    h.name = name;
    finish_graph(h, g, self_loops);
    bg_graph_free(&g);
}

// Renumbers g by decreasing degree on the GPU (bench/kernels/degree_order.cuh), timed as the
// median of 5 builds; the checks and timings then run on the renumbered graph unchanged.
static void degree_renumber(BgGraph &g, HostGraph &h) {
    long long n = g.n, nnz = g.nnz;
    long long *rp, *rp2;
    int *cl, *cl2, *perm, *inv;
    CK(cudaMalloc(&rp, sizeof(long long) * (n + 1)));
    CK(cudaMalloc(&rp2, sizeof(long long) * (n + 1)));
    CK(cudaMalloc(&cl, sizeof(int) * std::max(1LL, nnz)));
    CK(cudaMalloc(&cl2, sizeof(int) * std::max(1LL, nnz)));
    CK(cudaMalloc(&perm, sizeof(int) * n));
    CK(cudaMalloc(&inv, sizeof(int) * n));
    CK(cudaMemcpy(rp, g.rowptr, sizeof(long long) * (n + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(cl, g.col, sizeof(int) * nnz, cudaMemcpyHostToDevice));
    size_t tb = bgnn::degree_order_temp_bytes(n, nnz);
    void *tmp;
    CK(cudaMalloc(&tmp, tb));
    h.order_ms = median_ms([&](int) { CK(bgnn::degree_order(n, rp, cl, nnz, tmp, tb, perm, inv, rp2, cl2)); }, 1, 5);
    std::vector<int> hp(n), hi(n);
    CK(cudaMemcpy(hp.data(), perm, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hi.data(), inv, sizeof(int) * n, cudaMemcpyDeviceToHost));
    std::vector<long long> orp(g.rowptr, g.rowptr + n + 1);
    std::vector<int> ocol(g.col, g.col + nnz);
    CK(cudaMemcpy(g.rowptr, rp2, sizeof(long long) * (n + 1), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g.col, cl2, sizeof(int) * nnz, cudaMemcpyDeviceToHost));
    // Check: a permutation, degrees non-increasing, every row the renamed, sorted old row.
    bool ok = g.rowptr[n] == nnz;
    std::vector<char> seen(n, 0);
    for (long long r = 0; r < n && ok; r++) {
        int o = hp[r];
        ok = o >= 0 && o < n && !seen[o] && hi[o] == r;
        if (!ok) break;
        seen[o] = 1;
        long long d = orp[o + 1] - orp[o];
        ok = g.rowptr[r + 1] - g.rowptr[r] == d && (r == 0 || d <= g.rowptr[r] - g.rowptr[r - 1]);
    }
    long long bad = 0;
    if (ok) {
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : bad)
        for (long long r = 0; r < n; r++) {
            int o = hp[r];
            long long d = orp[o + 1] - orp[o];
            std::vector<int> want(d);
            for (long long k = 0; k < d; k++) want[k] = hi[ocol[orp[o] + k]];
            std::sort(want.begin(), want.end());
            for (long long k = 0; k < d; k++) bad += g.col[g.rowptr[r] + k] != want[k];
        }
    }
    ok = ok && bad == 0;
    if (!ok) g_fail++;
    printf("degree renumbering on the GPU: %.2f ms (median of 5), check %s\n", h.order_ms,
           ok ? "ok" : "FAIL");
    h.name = "rmat-degord";
    CK(cudaFree(tmp));
    CK(cudaFree(rp));
    CK(cudaFree(rp2));
    CK(cudaFree(cl));
    CK(cudaFree(cl2));
    CK(cudaFree(perm));
    CK(cudaFree(inv));
}

static void make_rmat(HostGraph &h, long long n, long long M, uint64_t seed, bool degord = false) {
    auto t0 = std::chrono::steady_clock::now();
    BgDiagSink dg;
    bg_diag_init(&dg);
    BgGraph g;
    if (!rmat_graph(n, M, seed, &g, &dg)) die_diag("rmat", &dg);
    bg_diag_free(&dg);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    printf("rmat: n=%lld stream M=%lld -> %lld directed edges (no self loops), built on the host "
           "(rmat_graph, %d threads) in %.1f ms\n", n, M, (long long)g.nnz, omp_get_max_threads(), ms);
    h.name = "rmat-reddit";
    if (degord) degree_renumber(g, h);
    h.bgref = false;
    finish_graph(h, g, true);
    bg_graph_free(&g);
}

// ---- device graph ----------------------------------------------------------------------------
// A work schedule of the runtime's bg_plan_schedule (plan/plan.c) on the device:
// its ITEMS array (a header row {nitems, nsplit, chunk, 0}, then one int4 per item), as the
// runtime uploads it for the generated code.
struct Sched {
    long long nitems = 0, nsplit = 0;
    int chunk = 0;
    int *buf = nullptr;
    const int4 *items() const { return (const int4 *)buf + 1; }
};

// The schedule of `rows` rows with row pointer rowptr (host memory), uploaded; group_min_rows
// as bg_plan_schedule takes it (0: no group items, 1: group items on every graph).  Returns
// the host time of bg_plan_schedule (both passes) in ms.
static double sched_build(const int64_t *rowptr, long long rows, int chunk, long long group_min_rows, Sched &s) {
    auto t0 = std::chrono::steady_clock::now();
    int64_t ns = 0, ni = bg_plan_schedule(rowptr, rows, chunk, group_min_rows, nullptr, &ns);
    if (ni < 0) {
        fprintf(stderr, "bg_plan_schedule: %lld rows do not fit the schedule's int32 fields\n", rows);
        exit(2);
    }
    std::vector<int32_t> it((size_t)(4 * (ni + 1)));
    bg_plan_schedule(rowptr, rows, chunk, group_min_rows, it.data(), &ns);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    s.nitems = ni;
    s.nsplit = ns;
    s.chunk = chunk;
    CK(cudaMalloc(&s.buf, sizeof(int32_t) * it.size()));
    CK(cudaMemcpy(s.buf, it.data(), sizeof(int32_t) * it.size(), cudaMemcpyHostToDevice));
    return ms;
}

struct DevGraph {
    long long n = 0, nnz = 0, ntiles = 0, ntr = 0;
    long long *rowptr = nullptr;
    int *col = nullptr;
    float *rowf = nullptr;
    Sched sched, gsched, fsched; // gsched: small rows grouped (BG_PLAN_GROUP per item)
    long long *trp = nullptr;
    int *colind = nullptr;
    void *pay[2] = {nullptr, nullptr}; // 2-byte, 4-byte payloads
    int *partial = nullptr;            // zeroed once
    unsigned *done = nullptr;
    float frdc_ms[2] = {0, 0}, sched_ms = 0;
    mutable std::map<int, int *> hub_end; // per hub count H (csr-hub kernel), built on first use
    unsigned *queue = nullptr;    // csr-hub work queue, zeroed once
};

static float elapsed(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

static void upload(const HostGraph &h, DevGraph &d, long long maxC) {
    d.n = h.n;
    d.nnz = h.nnz;
    d.ntr = bgnn::frdc_tile_rows(h.n);
    CK(cudaMalloc(&d.rowptr, sizeof(long long) * (h.n + 1)));
    CK(cudaMalloc(&d.col, sizeof(int) * std::max(1LL, h.nnz)));
    CK(cudaMalloc(&d.rowf, sizeof(float) * std::max(1LL, h.n)));
    CK(cudaMemcpy(d.rowptr, h.adj.rowptr, sizeof(long long) * (h.n + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.col, h.adj.col, sizeof(int) * h.nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.rowf, h.adjm.rowf, sizeof(float) * h.n, cudaMemcpyHostToDevice));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    // FRDC, both payload forms; time = median of 5 builds (scratch allocated outside).
    size_t tb = bgnn::frdc_temp_bytes(h.nnz);
    void *tmp;
    CK(cudaMalloc(&tmp, tb));
    CK(cudaMalloc(&d.trp, sizeof(long long) * (d.ntr + 1)));
    CK(cudaMalloc(&d.colind, sizeof(int) * std::max(1LL, h.nnz)));
    for (int p = 0; p < 2; p++) {
        CK(cudaMalloc(&d.pay[p], (size_t)(p ? 4 : 2) * std::max(1LL, h.nnz)));
        std::vector<float> t;
        for (int r = 0; r < 6; r++) {
            CK(cudaEventRecord(a));
            CK(bgnn::frdc_build(h.n, d.rowptr, d.col, h.nnz, p ? 4 : 2, tmp, tb, d.trp, d.colind,
                                d.pay[p]));
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            if (r) t.push_back(elapsed(a, b));
        }
        std::sort(t.begin(), t.end());
        d.frdc_ms[p] = t[t.size() / 2];
    }
    CK(cudaFree(tmp));
    std::vector<int64_t> trp(d.ntr + 1);
    CK(cudaMemcpy(trp.data(), d.trp, sizeof(long long) * (d.ntr + 1), cudaMemcpyDeviceToHost));
    d.ntiles = trp[d.ntr];
    // The runtime's schedules: plain, grouped (every graph here, whatever its size), and over
    // the FRDC tile rows.
    d.sched_ms = (float)sched_build(h.adj.rowptr, h.n, BG_PLAN_BSPMM_CHUNK, 0, d.sched);
    sched_build(h.adj.rowptr, h.n, BG_PLAN_BSPMM_CHUNK, 1, d.gsched);
    sched_build(trp.data(), d.ntr, bgnn::BSPMM_FRDC_CHUNK, 0, d.fsched);
    // partial: C ints (4 C for FRDC) per split slot, at least one slot; done: one per slot
    long long pe = maxC * std::max({std::max(1LL, d.sched.nsplit), std::max(1LL, d.gsched.nsplit),
                                    4 * std::max(1LL, d.fsched.nsplit)});
    long long ns = std::max({1LL, d.sched.nsplit, d.gsched.nsplit, d.fsched.nsplit});
    CK(cudaMalloc(&d.partial, sizeof(int) * pe));
    CK(cudaMemset(d.partial, 0, sizeof(int) * pe));
    CK(cudaMalloc(&d.done, sizeof(unsigned) * ns));
    CK(cudaMemset(d.done, 0, sizeof(unsigned) * ns));
    CK(cudaMalloc(&d.queue, sizeof(unsigned) * 2));
    CK(cudaMemset(d.queue, 0, sizeof(unsigned) * 2));
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
}

static void free_dev(DevGraph &d) {
    cudaFree(d.rowptr);
    cudaFree(d.col);
    cudaFree(d.rowf);
    cudaFree(d.trp);
    cudaFree(d.colind);
    cudaFree(d.pay[0]);
    cudaFree(d.pay[1]);
    cudaFree(d.partial);
    cudaFree(d.done);
    cudaFree(d.queue);
    for (auto &kv : d.hub_end) cudaFree(kv.second);
    cudaFree(d.sched.buf);
    cudaFree(d.gsched.buf);
    cudaFree(d.fsched.buf);
}

// Checks the GPU FRDC (both payload forms) against a CPU construction, tile row by tile row.
static bool check_frdc(const HostGraph &h, const DevGraph &d) {
    long long ntr = d.ntr;
    std::vector<long long> trp(ntr + 1);
    std::vector<int> ci(d.ntiles);
    std::vector<uint16_t> p2(d.ntiles);
    std::vector<uint32_t> p4(d.ntiles);
    CK(cudaMemcpy(trp.data(), d.trp, sizeof(long long) * (ntr + 1), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ci.data(), d.colind, sizeof(int) * d.ntiles, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(p2.data(), d.pay[0], 2 * d.ntiles, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(p4.data(), d.pay[1], 4 * d.ntiles, cudaMemcpyDeviceToHost));
    long long bad = 0;
    if (trp[0] != 0) bad++;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : bad)
    for (long long R = 0; R < ntr; R++) {
        std::vector<std::pair<int, int>> e; // (T, bit 4r+c)
        for (long long i = 4 * R; i < std::min(h.n, 4 * R + 4); i++)
            for (long long k = h.adj.rowptr[i]; k < h.adj.rowptr[i + 1]; k++)
                e.push_back({h.adj.col[k] >> 2, (int)(4 * (i - 4 * R) + (h.adj.col[k] & 3))});
        std::sort(e.begin(), e.end());
        long long t = trp[R];
        for (size_t a = 0; a < e.size();) {
            unsigned bits = 0, b4 = 0;
            size_t z = a;
            for (; z < e.size() && e[z].first == e[a].first; z++) {
                bits |= 1u << e[z].second;
                b4 |= 1u << (8 * (e[z].second / 4) + 3 - (e[z].second & 3));
            }
            if (t >= trp[R + 1] || ci[t] != e[a].first || p2[t] != bits || p4[t] != b4) bad++;
            t++;
            a = z;
        }
        if (t != trp[R + 1]) bad++;
    }
    return bad == 0;
}

// ---- reference -------------------------------------------------------------------------------
// y = bspmm.{prec}(a, x) by the project's oracle, bg_ref_bspmm (reference/ref_ops.c), its rows
// in blocks in parallel (bg_ref_bspmm_rows; method ANDNOT, which needs no transpose of x per
// block): the raw words of y (b1 words or f32 bits), n x (B ? W : C).
static void ref_bspmm(const char *prec, const BgAdj &a, const BgTensor &x, std::vector<u32> &y) {
    const long long C = x.dim[1], opr = prec[2] == 'B' ? (C + 31) / 32 : C;
    if (!ref_rows(a.n, opr, y, [&](long long r0, long long r1, BgTensor *out) {
            return bg_ref_bspmm_rows(prec, &a, &x, r0, r1, out, BG_METHOD_ANDNOT);
        })) {
        fprintf(stderr, "bg_ref_bspmm_rows(%s) refused the operands\n", prec);
        exit(2);
    }
}

static void random_bits(std::vector<u32> &x, long long n, long long C, uint64_t seed) {
    long long W = (C + 31) / 32;
    x.resize((size_t)std::max(1LL, n * W));
    for (long long i = 0; i < n; i++)
        for (long long w = 0; w < W; w++)
            x[i * W + w] = (u32)rmat_mix64(seed + (uint64_t)(i * W + w)) & bgnn::word_mask(C, w);
}

static BgTensor tensor_b1(const std::vector<u32> &x, long long n, long long C) {
    BgTensor t;
    bg_tensor_alloc(&t, BG_DT_B1, 2, n, C);
    memcpy(t.data, x.data(), sizeof(u32) * n * ((C + 31) / 32));
    return t;
}

// ---- kernels under test ----------------------------------------------------------------------
enum Kind { K_CSR_IFELSE, K_CSR_ANDNOT, K_CSR_POPC2, K_FRDC2, K_FRDC4, K_SIMPLE, K_CSR_HUB,
            K_CSR_IFELSEG, K_CSR_ANDNOTG, K_CSR_POPC2G }; // ...G: grouped schedule
static const char *kind_name(Kind k) {
    switch (k) {
    case K_CSR_IFELSE: return "csr/ifelse";
    case K_CSR_ANDNOT: return "csr/andnot";
    case K_CSR_POPC2: return "csr/popc2";
    case K_CSR_HUB: return "csr-hub/popc2";
    case K_CSR_IFELSEG: return "csr-grouped/ifelse";
    case K_CSR_ANDNOTG: return "csr-grouped/andnot";
    case K_CSR_POPC2G: return "csr-grouped/popc2";
    case K_FRDC2: return "frdc16/popc2";
    case K_FRDC4: return "frdc32/popc2";
    default: return "simple(spmm.cuh)";
    }
}

// The CSR kernel of templates/bspmm_fast.cuh in a kernel of its own, x read through the
// read-only cache (NC = true; the generated kernels call bspmm_bb_csr with NC = false).
template <long long C, char Z, int METHOD>
__global__ void __launch_bounds__(128)
    bspmm_bb_csr_kernel(long long n, const long long *__restrict__ rowptr,
                        const int *__restrict__ col, const float *__restrict__ rowf,
                        const u32 *__restrict__ x, void *__restrict__ y,
                        const int4 *__restrict__ items, long long nitems, int chunk, int *partial,
                        unsigned *done) {
    bgnn::bspmm_bb_csr<C, Z, METHOD>(n, rowptr, col, rowf, x, y, items, nitems, chunk, partial, done);
}

template <long long C> __global__ void k_simple_bbb(long long n, u32 *y, const long long *rp,
                                                    const int *col, const float *rf,
                                                    const float *cf, const u32 *x) {
    bgnn::bspmm_adjb<'B', 'B', C, true, 0>(n, y, rp, col, rf, cf, x);
}

template <long long C>
static void launch(Kind k, char Z, const DevGraph &d, const float *rowf, const u32 *x, void *y,
                   const float *ones_f) {
    const int T = 128;
    auto grid = [](long long items) {
        long long b = (items + 3) / 4;
        return (int)std::max(1LL, std::min(b, 1LL << 30));
    };
    const bool grouped = k == K_CSR_POPC2G || k == K_CSR_ANDNOTG || k == K_CSR_IFELSEG;
    const Sched &cs = grouped ? d.gsched : d.sched;
    long long ni = cs.nitems, nf = d.fsched.nitems;
    int g = grid(ni), gf = grid(nf);
    if (d.n == 0) return;
#define CSR(M, ZZ)                                                                            \
    bspmm_bb_csr_kernel<C, ZZ, M><<<g, T>>>(d.n, d.rowptr, d.col, rowf, x, y, cs.items(),    \
                                                  ni, cs.chunk, d.partial, d.done)
#define FRDC(PB, ZZ)                                                                          \
    bgnn::bspmm_bb_frdc_kernel<C, ZZ, PB><<<gf, T>>>(d.n, d.trp, d.colind, d.pay[PB == 4],   \
                                                     rowf, x, y, d.fsched.items(), nf,         \
                                                     d.fsched.chunk, d.partial, d.done)
    switch (k) {
    case K_CSR_IFELSEG:
    case K_CSR_IFELSE: if (Z == 'B') CSR(bgnn::METHOD_IFELSE, 'B'); else CSR(bgnn::METHOD_IFELSE, 'F'); break;
    case K_CSR_ANDNOTG:
    case K_CSR_ANDNOT: if (Z == 'B') CSR(bgnn::METHOD_ANDNOT, 'B'); else CSR(bgnn::METHOD_ANDNOT, 'F'); break;
    case K_CSR_POPC2G:
    case K_CSR_POPC2: if (Z == 'B') CSR(bgnn::METHOD_POPC2, 'B'); else CSR(bgnn::METHOD_POPC2, 'F'); break;
    case K_FRDC2: if (Z == 'B') FRDC(2, 'B'); else FRDC(2, 'F'); break;
    case K_FRDC4: if (Z == 'B') FRDC(4, 'B'); else FRDC(4, 'F'); break;
    case K_CSR_HUB: {
        // Hub rows in shared memory: 192 KB per block, one 1024-thread block per SM.
        const long long Wd = (C + 31) / 32;
        const int H = (int)std::min(d.n, 196608LL / (4 * Wd));
        auto itH = d.hub_end.find(H);
        if (itH == d.hub_end.end()) {
            int *he;
            CK(cudaMalloc(&he, sizeof(int) * std::max(1LL, d.n)));
            CK(bgnn::bspmm_hub_ends(d.n, d.rowptr, d.col, H, he));
            itH = d.hub_end.emplace(H, he).first;
        }
        static int nsm = 0;
        if (!nsm) CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
        const size_t sm = sizeof(u32) * (size_t)H * Wd;
#define HUB(ZZ)                                                                               \
    do {                                                                                      \
        static bool attr = false;                                                             \
        if (!attr) CK(cudaFuncSetAttribute(bgnn::bspmm_bb_csr_hub_kernel<C, ZZ, bgnn::METHOD_POPC2>, \
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, 196608)); \
        attr = true;                                                                          \
        bgnn::bspmm_bb_csr_hub_kernel<C, ZZ, bgnn::METHOD_POPC2><<<nsm, 1024, sm>>>(          \
            d.n, d.rowptr, d.col, rowf, x, y, d.gsched.items(), d.gsched.nitems, d.gsched.chunk, \
            d.partial, d.done, itH->second, H, d.queue);                                                \
    } while (0)
        if (Z == 'B') HUB('B'); else HUB('F');
#undef HUB
        break;
    }
    case K_SIMPLE: {
        long long thr = d.n * bgnn::b1_tpr(C);
        int gb = (int)std::min((thr + 255) / 256, 1LL << 20);
        k_simple_bbb<C><<<gb, 256>>>(d.n, (u32 *)y, d.rowptr, d.col, ones_f, ones_f, x);
        break;
    }
    }
#undef CSR
#undef FRDC
    CK(cudaGetLastError());
}

// Correctness of every variant on one graph at width C.
template <long long C> static void check_graph(const HostGraph &h, DevGraph &d, uint64_t seed) {
    const long long n = h.n, W = (C + 31) / 32;
    std::vector<u32> x;
    random_bits(x, n, C, seed);
    BgTensor xt = tensor_b1(x, n, C);
    std::vector<u32> yb, yf_none, yf_mean; // the reference: b1 words, f32 bits (norm none, mean)
    ref_bspmm("BBB", h.adj, xt, yb);
    ref_bspmm("BBF", h.adj, xt, yf_none);
    ref_bspmm("BBF", h.adjm, xt, yf_mean);
    int fails = 0;
    std::string note;
    if (h.bgref) { // the reference's other methods (whole graph at once) give the same bits
        for (BgMethod m : {BG_METHOD_IFELSE, BG_METHOD_POPC2}) {
            BgTensor yb1, yf1, yf2;
            if (!bg_ref_bspmm("BBB", &h.adj, &xt, &yb1, m) || !bg_ref_bspmm("BBF", &h.adj, &xt, &yf1, m) ||
                !bg_ref_bspmm("BBF", &h.adjm, &xt, &yf2, m)) {
                fails++;
                continue;
            }
            if (n && (memcmp(yb1.data, yb.data(), 4 * n * W) || memcmp(yf1.data, yf_none.data(), 4 * n * C) ||
                      memcmp(yf2.data, yf_mean.data(), 4 * n * C))) {
                fails++;
                note += " bg_ref_bspmm-method" + std::to_string((int)m) + "-differs";
            }
            bg_tensor_free(&yb1);
            bg_tensor_free(&yf1);
            bg_tensor_free(&yf2);
        }
    }
    bg_tensor_free(&xt);
    u32 *dx;
    void *dy;
    CK(cudaMalloc(&dx, sizeof(u32) * std::max(1LL, n * W)));
    CK(cudaMalloc(&dy, sizeof(float) * std::max(1LL, n * C)));
    CK(cudaMemcpy(dx, x.data(), sizeof(u32) * n * W, cudaMemcpyHostToDevice));
    std::vector<u32> gb(n * W);
    std::vector<float> gf(n * C);
    int nvar = 0;
    for (Kind k : {K_CSR_IFELSE, K_CSR_ANDNOT, K_CSR_POPC2, K_FRDC2, K_FRDC4, K_CSR_HUB, K_CSR_IFELSEG,
                   K_CSR_ANDNOTG, K_CSR_POPC2G}) {
        for (int z = 0; z < 3; z++) { // B, F none, F mean
            if ((k == K_FRDC2 || k == K_FRDC4) && z == 1) continue;
            for (int rep = 0; rep < 2; rep++) { // twice: the split buffers must be clean again
                CK(cudaMemset(dy, 0xA5, sizeof(float) * std::max(1LL, n * C))); // poison
                launch<C>(k, z ? 'F' : 'B', d, z == 2 ? d.rowf : nullptr, dx, dy, nullptr);
                CK(cudaDeviceSynchronize());
                bool ok;
                if (z == 0) {
                    CK(cudaMemcpy(gb.data(), dy, 4 * n * W, cudaMemcpyDeviceToHost));
                    ok = n == 0 || !memcmp(gb.data(), yb.data(), 4 * n * W);
                } else {
                    CK(cudaMemcpy(gf.data(), dy, 4 * n * C, cudaMemcpyDeviceToHost));
                    ok = n == 0 || !memcmp(gf.data(), (z == 1 ? yf_none : yf_mean).data(), 4 * n * C);
                }
                nvar++;
                if (!ok) {
                    fails++;
                    note += std::string(" ") + kind_name(k) + (z == 0 ? ".BBB" : z == 1 ? ".BBF" : ".BBF-mean") + "-WRONG";
                }
            }
        }
    }
    // cuSPARSE-free sanity: the simple template kernel as well (BBB).
    if (n * C <= (1LL << 26)) {
        float *onesf;
        CK(cudaMalloc(&onesf, sizeof(float) * std::max(1LL, n)));
        std::vector<float> o(n, 1.0f);
        CK(cudaMemcpy(onesf, o.data(), 4 * n, cudaMemcpyHostToDevice));
        CK(cudaMemset(dy, 0xA5, sizeof(float) * std::max(1LL, n * C)));
        launch<C>(K_SIMPLE, 'B', d, nullptr, dx, dy, onesf);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(gb.data(), dy, 4 * n * W, cudaMemcpyDeviceToHost));
        if (n && memcmp(gb.data(), yb.data(), 4 * n * W)) { fails++; note += " simple-WRONG"; }
        CK(cudaFree(onesf));
    }
    CK(cudaFree(dx));
    CK(cudaFree(dy));
    printf("check %-14s N=%-7lld nnz=%-10lld C=%-5lld %2d GPU runs%s: %s%s\n", h.name.c_str(), n,
           h.nnz, C, nvar, h.bgref ? " + bg_ref_bspmm x3 methods" : "",
           fails ? "FAIL" : "ok", note.c_str());
    fflush(stdout);
    g_fail += fails;
}

// ---- timing ----------------------------------------------------------------------------------

// Random gathers of W-word rows from a table of n rows (indices hashed: no index traffic),
// laid out like the CSR kernel (lane = slot * WG + w, 8 gathers in flight per lane).
template <int W> __global__ void __launch_bounds__(128)
    k_gather(long long G, unsigned n, const u32 *__restrict__ tab, u32 *out) {
    constexpr int WG = W >= 32 ? 32 : bgnn::fast_detail::pow2ceil(W), S = 32 / WG,
                  NG = (W + WG - 1) / WG;
    const int lane = threadIdx.x & 31, s = lane / WG, wl = lane % WG;
    const long long warp0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nw = ((long long)gridDim.x * blockDim.x) >> 5;
    const long long nb = (G + 8 * S - 1) / (8 * S);
    u32 acc = 0;
    for (long long b = warp0; b < nb; b += nw) {
#pragma unroll
        for (int k = 0; k < 8; k++) {
            long long gi = b * 8 * S + k * S + s;
            unsigned h = (unsigned)rmat_mix64((uint64_t)gi);
            unsigned j = __umulhi(h, n);
            for (int g = 0; g < NG; g++) {
                int w = g * WG + wl;
                if (gi < G && w < W) acc ^= __ldg(tab + (long long)j * W + w);
            }
        }
    }
    out[warp0 * 32 + lane] = acc;
}

// The access pattern of the CSR kernel without its arithmetic: every edge's column index
// read once (coalesced, streamed, prefetched one batch ahead) and the neighbour's W words
// gathered, XOR-folded; warps take 2048-edge chunks.  Its time is the floor for any kernel
// that gathers each neighbour's row once per edge.
template <int W> __global__ void __launch_bounds__(128)
    k_gather_csr(long long nnz, const int *__restrict__ col, const u32 *__restrict__ x, u32 *out) {
    constexpr int WG = W >= 32 ? 32 : bgnn::fast_detail::pow2ceil(W), S = 32 / WG,
                  NG = (W + WG - 1) / WG, EB = 8 * S, NQ = (EB + 31) / 32;
    const int lane = threadIdx.x & 31, s = lane / WG, wl = lane % WG;
    const long long warp0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nw = ((long long)gridDim.x * blockDim.x) >> 5;
    u32 acc = 0;
    for (long long e0 = warp0 * 2048; e0 < nnz; e0 += nw * 2048) {
        const long long e1 = e0 + 2048 < nnz ? e0 + 2048 : nnz;
        for (int g = 0; g < NG; g++) {
            const int w = g * WG + wl;
            int cq[NQ], cn[NQ] = {};
#pragma unroll
            for (int q = 0; q < NQ; q++) {
                long long e = e0 + 32 * q + lane;
                cq[q] = (32 * q + lane < EB && e < e1) ? __ldcs(col + e) : 0;
            }
            for (long long base = e0; base < e1; base += EB) {
                if (base + EB < e1) {
#pragma unroll
                    for (int q = 0; q < NQ; q++) {
                        long long e = base + EB + 32 * q + lane;
                        cn[q] = (32 * q + lane < EB && e < e1) ? __ldcs(col + e) : 0;
                    }
                }
#pragma unroll
                for (int k = 0; k < 8; k++) {
                    const int t = s + S * k;
                    const long long j = __shfl_sync(0xffffffffu, cq[(S * k) / 32], t & 31);
                    if (base + t < e1 && w < W) acc ^= __ldg(x + j * W + w);
                }
#pragma unroll
                for (int q = 0; q < NQ; q++) cq[q] = cn[q];
            }
        }
    }
    out[warp0 * 32 + lane] = acc;
}

template <int W> static double pattern_floor_us(long long nnz, const int *col, const u32 *x) {
    u32 *out;
    long long warps = (nnz + 2047) / 2048;
    int blocks = (int)std::max(1LL, (warps + 3) / 4);
    CK(cudaMalloc(&out, sizeof(u32) * blocks * 128));
    float ms = median_ms([&](int) { k_gather_csr<W><<<blocks, 128>>>(nnz, col, x, out); CK(cudaGetLastError()); }, 3, 20);
    CK(cudaFree(out));
    return ms * 1e3;
}

template <int W> static double gather_rate(long long G, long long n) {
    u32 *tab, *out;
    CK(cudaMalloc(&tab, sizeof(u32) * n * W));
    CK(cudaMemset(tab, 0x5a, sizeof(u32) * n * W));
    int blocks = 132 * 16;
    CK(cudaMalloc(&out, sizeof(u32) * blocks * 128));
    float ms = median_ms([&](int) { k_gather<W><<<blocks, 128>>>(G, (unsigned)n, tab, out); CK(cudaGetLastError()); }, 3, 10);
    CK(cudaFree(tab));
    CK(cudaFree(out));
    return G / (ms * 1e-3);
}


struct Row {
    std::string graph, kernel;
    long long C;
    double us, mb, floor_bw_us, floor_g_us, cusp_us;
};
static std::vector<Row> g_rows;

template <long long C> static void time_graph(const HostGraph &h, DevGraph &d, cusparseHandle_t sp) {
    const long long n = h.n, W = (C + 31) / 32, nnz = h.nnz;
    // Rotate input/output copies (up to 16, at most ~1 GB) so small graphs are not timed from
    // one L2-resident buffer only.
    long long xb = 4 * n * W, yfb = 4 * n * C;
    int nrot = (int)std::max(1LL, std::min(16LL, (1LL << 30) / (xb + yfb + 1)));
    std::vector<u32 *> dx(nrot);
    std::vector<void *> dy(nrot);
    std::vector<u32> x;
    for (int r = 0; r < nrot; r++) {
        random_bits(x, n, C, 1000 + r);
        CK(cudaMalloc(&dx[r], xb));
        CK(cudaMalloc(&dy[r], yfb));
        CK(cudaMemcpy(dx[r], x.data(), xb, cudaMemcpyHostToDevice));
    }
    int reps = g_reps;
    double gr = W == 2 ? gather_rate<2>(nnz, n) : W == 4 ? gather_rate<4>(nnz, n) : gather_rate<8>(nnz, n);
    double pat_us = W == 2 ? pattern_floor_us<2>(nnz, d.col, dx[0]) : W == 4 ? pattern_floor_us<4>(nnz, d.col, dx[0])
                           : pattern_floor_us<8>(nnz, d.col, dx[0]);
    // cuSPARSE FP32 SpMM: A (values 1) x X (+-1 floats) row-major; best of the CSR algorithms.
    int *rp32;
    float *vals;
    CK(cudaMalloc(&rp32, sizeof(int) * (n + 1)));
    CK(cudaMalloc(&vals, sizeof(float) * nnz));
    {
        std::vector<int> r32(n + 1);
        for (long long i = 0; i <= n; i++) r32[i] = (int)h.adj.rowptr[i];
        CK(cudaMemcpy(rp32, r32.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
        std::vector<float> one(nnz, 1.0f);
        CK(cudaMemcpy(vals, one.data(), sizeof(float) * nnz, cudaMemcpyHostToDevice));
    }
    int nrf = (int)std::max(1LL, std::min((long long)nrot, (1LL << 31) / (2 * yfb + 1)));
    std::vector<float *> fx(nrf), fy(nrf);
    for (int r = 0; r < nrf; r++) {
        random_bits(x, n, C, 1000 + r);
        std::vector<float> xf(n * C);
        for (long long i = 0; i < n; i++)
            for (long long c = 0; c < C; c++) xf[i * C + c] = ((x[i * W + c / 32] >> (c % 32)) & 1u) ? 1.0f : -1.0f;
        CK(cudaMalloc(&fx[r], yfb));
        CK(cudaMalloc(&fy[r], yfb));
        CK(cudaMemcpy(fx[r], xf.data(), yfb, cudaMemcpyHostToDevice));
    }
    cusparseSpMatDescr_t A;
    CKS(cusparseCreateCsr(&A, n, n, nnz, rp32, d.col, vals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    std::vector<cusparseDnMatDescr_t> DX(nrf), DY(nrf);
    for (int r = 0; r < nrf; r++) {
        CKS(cusparseCreateDnMat(&DX[r], n, C, C, fx[r], CUDA_R_32F, CUSPARSE_ORDER_ROW));
        CKS(cusparseCreateDnMat(&DY[r], n, C, C, fy[r], CUDA_R_32F, CUSPARSE_ORDER_ROW));
    }
    float alpha = 1.0f, beta = 0.0f;
    double cusp_ms = 1e30;
    std::string cusp_alg;
    struct { cusparseSpMMAlg_t a; const char *nm; } algs[] = {
        {CUSPARSE_SPMM_ALG_DEFAULT, "default"}, {CUSPARSE_SPMM_CSR_ALG1, "csr_alg1"},
        {CUSPARSE_SPMM_CSR_ALG2, "csr_alg2"}, {CUSPARSE_SPMM_CSR_ALG3, "csr_alg3"}};
    std::vector<u32> sref; // the exact integer sums as floats: bspmm.BBF, norm none
    {
        BgTensor xt = tensor_b1(x, n, C); // x = copy nrf-1's bits
        ref_bspmm("BBF", h.adj, xt, sref);
        bg_tensor_free(&xt);
    }
    for (auto &al : algs) {
        size_t bs = 0;
        if (cusparseSpMM_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                    &alpha, A, DX[0], &beta, DY[0], CUDA_R_32F, al.a, &bs) != CUSPARSE_STATUS_SUCCESS) {
            printf("  cusparse %s: unsupported\n", al.nm);
            continue;
        }
        void *buf = nullptr;
        CK(cudaMalloc(&buf, std::max<size_t>(bs, 16)));
        bool okp = true;
        if (al.a == CUSPARSE_SPMM_CSR_ALG3)
            for (int r = 0; r < nrf && okp; r++)
                okp = cusparseSpMM_preprocess(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                              &alpha, A, DX[r], &beta, DY[r], CUDA_R_32F, al.a, buf) == CUSPARSE_STATUS_SUCCESS;
        cusparseStatus_t st = CUSPARSE_STATUS_SUCCESS;
        float ms = median_ms([&](int i) {
            int r = i % nrf;
            cusparseStatus_t s2 = cusparseSpMM(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                               &alpha, A, DX[r], &beta, DY[r], CUDA_R_32F, al.a, buf);
            if (s2 != CUSPARSE_STATUS_SUCCESS) st = s2;
        }, 3, okp ? reps : 1);
        CK(cudaDeviceSynchronize());
        if (!okp || st != CUSPARSE_STATUS_SUCCESS) {
            printf("  cusparse %s: failed (%d)\n", al.nm, (int)st);
            CK(cudaFree(buf));
            continue;
        }
        // result check: exact integers (copy nrf-1 computed once more: with few reps the timed
        // calls need not have reached it)
        if (cusparseSpMM(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A,
                         DX[nrf - 1], &beta, DY[nrf - 1], CUDA_R_32F, al.a, buf) != CUSPARSE_STATUS_SUCCESS)
            g_fail++;
        CK(cudaDeviceSynchronize());
        std::vector<float> out(n * C);
        CK(cudaMemcpy(out.data(), fy[nrf - 1], yfb, cudaMemcpyDeviceToHost));
        long long bad = 0;
        for (long long i = 0; i < n * C; i++) {
            float want;
            memcpy(&want, &sref[i], 4);
            bad += out[i] != want;
        }
        printf("  %-12s C=%-4lld cusparse SpMM FP32 %-9s %10.1f us  (result %s)\n", h.name.c_str(), C, al.nm,
               ms * 1e3, bad ? "WRONG" : "exact");
        if (bad) g_fail++;
        if (ms < cusp_ms) { cusp_ms = ms; cusp_alg = al.nm; }
        CK(cudaFree(buf));
    }
    double gr_f = C == 64 ? gather_rate<64>(nnz, n) : C == 128 ? gather_rate<128>(nnz, n) : gather_rate<256>(nnz, n);
    {
        double mb = (4.0 * (n + 1) + 8.0 * nnz + 2.0 * 4 * n * C) / 1e6;
        g_rows.push_back({h.name, "cusparse-fp32 (" + cusp_alg + ")", C, cusp_ms * 1e3, mb,
                          mb * 1e6 / g_bw * 1e6, nnz / gr_f * 1e6, cusp_ms * 1e3});
    }
    // Our kernels.
    struct V { Kind k; char z; bool mean; };
    std::vector<V> vs = {{K_CSR_POPC2, 'B', false}, {K_CSR_POPC2G, 'B', false}, {K_CSR_HUB, 'B', false},
                         {K_CSR_ANDNOT, 'B', false},
                         {K_CSR_IFELSE, 'B', false}, {K_CSR_POPC2, 'F', true}, {K_CSR_HUB, 'F', true},
                         {K_FRDC2, 'B', false}, {K_FRDC4, 'B', false}};
    if (C == 128) vs.push_back({K_SIMPLE, 'B', false});
    float *onesf;
    CK(cudaMalloc(&onesf, sizeof(float) * std::max(1LL, n)));
    {
        std::vector<float> o(n, 1.0f);
        CK(cudaMemcpy(onesf, o.data(), 4 * n, cudaMemcpyHostToDevice));
    }
    for (auto &v : vs) {
        int rr = v.k == K_SIMPLE ? std::max(3, reps / 10) : reps;
        float ms = median_ms([&](int i) {
            launch<C>(v.k, v.z, d, v.mean ? d.rowf : nullptr, dx[i % nrot], dy[i % nrot], onesf);
        }, 3, rr);
        double ybytes = v.z == 'B' ? 4.0 * n * W : 4.0 * n * C + 4.0 * n;
        double adjb = (v.k == K_FRDC2 || v.k == K_FRDC4)
                          ? 8.0 * (d.ntr + 1) + (4.0 + (v.k == K_FRDC2 ? 2 : 4)) * d.ntiles + 16.0 * d.fsched.nitems
                          : 8.0 * (n + 1) + 4.0 * nnz +
                                16.0 * (v.k == K_CSR_POPC2G || v.k == K_CSR_HUB ? d.gsched : d.sched).nitems;
        if (v.k == K_SIMPLE) adjb = 8.0 * (n + 1) + 4.0 * nnz;
        if (v.k == K_CSR_HUB) adjb += 4.0 * n; // hub_end
        double mb = (adjb + 4.0 * n * W + ybytes) / 1e6;
        std::string nm = std::string(kind_name(v.k)) + (v.z == 'B' ? " BBB" : " BBF-mean");
        g_rows.push_back({h.name, nm, C, ms * 1e3, mb, mb * 1e6 / g_bw * 1e6, pat_us, cusp_ms * 1e3});
        printf("  %-12s C=%-4lld %-24s %10.1f us  %8.1f MB  floor(bw) %8.1f us  floor(gather pattern) %8.1f us  (random-gather %8.1f us)  x%.1f vs cuSPARSE\n",
               h.name.c_str(), C, nm.c_str(), ms * 1e3, mb, mb * 1e6 / g_bw * 1e6, pat_us, nnz / gr * 1e6, cusp_ms / ms);
        fflush(stdout);
    }
    printf("  %-12s C=%-4lld gather rate (random %lld-byte rows, %lld-row table): %.1f G/s; float rows %.1f G/s\n",
           h.name.c_str(), C, 4 * W, n, gr / 1e9, gr_f / 1e9);
    CK(cudaFree(onesf));
    for (int r = 0; r < nrf; r++) {
        cusparseDestroyDnMat(DX[r]);
        cusparseDestroyDnMat(DY[r]);
        CK(cudaFree(fx[r]));
        CK(cudaFree(fy[r]));
    }
    cusparseDestroySpMat(A);
    CK(cudaFree(rp32));
    CK(cudaFree(vals));
    for (int r = 0; r < nrot; r++) {
        CK(cudaFree(dx[r]));
        CK(cudaFree(dy[r]));
    }
}

static void graph_stats(const HostGraph &h, const DevGraph &d) {
    bool fok = check_frdc(h, d);
    if (!fok) g_fail++;
    double csr_mb = (8.0 * (h.n + 1) + 4.0 * h.nnz) / 1e6;
    double f2 = (8.0 * (d.ntr + 1) + 6.0 * d.ntiles) / 1e6, f4 = (8.0 * (d.ntr + 1) + 8.0 * d.ntiles) / 1e6;
    printf("graph %-14s N=%lld nnz=%lld (self loops incl.) maxdeg=%d isolated=%d | FRDC: %lld tile rows, "
           "%lld tiles, %.3f edges/tile | CSR %.2f MB, FRDC-16 %.2f MB, FRDC-32 %.2f MB | build on GPU: "
           "16-bit %.3f ms, 32-bit %.3f ms (median of 5) | schedule (bg_plan_schedule, host) %lld items "
           "(%lld split rows) %.3f ms, grouped %lld items | "
           "FRDC check %s\n",
           h.name.c_str(), h.n, h.nnz, h.maxdeg, h.isolated, d.ntr, d.ntiles,
           d.ntiles ? (double)h.nnz / d.ntiles : 0.0, csr_mb, f2, f4, d.frdc_ms[0], d.frdc_ms[1],
           d.sched.nitems, d.sched.nsplit, d.sched_ms, d.gsched.nitems, fok ? "ok" : "FAIL");
    fflush(stdout);
}

template <long long... Cs> static void check_all(const HostGraph &h, DevGraph &d, uint64_t seed) {
    (check_graph<Cs>(h, d, seed + Cs), ...);
}

int main(int argc, char **argv) {
    bool quick = false, rmat_only = false, degord_only = false, check_only = false;
    long long M = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--rmat-only")) rmat_only = true;
        else if (!strcmp(argv[i], "--degord-only")) degord_only = true;
        else if (!strcmp(argv[i], "--check-only")) check_only = true;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rmat-edges") && i + 1 < argc) M = atoll(argv[++i]);
    }
    bool profile = false;
    for (int i = 1; i < argc; i++) if (!strcmp(argv[i], "--profile")) profile = true;
    if (M == 0) M = 90500000LL; // calibrated: ~114.6M directed edges
    const char *dd = getenv("BGNN_DATA_DIR");
    if (!dd) dd = ".carry/data";
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("GPU: %s, %d SMs, L2 %d MB, CUDA runtime %d; OpenMP threads %d\n", prop.name,
           prop.multiProcessorCount, prop.l2CacheSize >> 20, CUDART_VERSION, omp_get_max_threads());
    if (!check_only) {
        g_bw = measure_bw();
        printf("device-to-device copy: %.0f GB/s (bytes read + written)\n", g_bw / 1e9);
    }
    cusparseHandle_t sp;
    CKS(cusparseCreate(&sp));
    const long long maxC = 1100;

    if (profile) { // for ncu: three launches of csr/popc2 BBB C=128 on the R-MAT graph
        HostGraph h;
        make_rmat(h, 232965, M, 42, degord_only);
        DevGraph d;
        upload(h, d, 128);
        std::vector<u32> x;
        random_bits(x, h.n, 128, 5);
        u32 *dx;
        void *dy;
        CK(cudaMalloc(&dx, 16 * h.n));
        CK(cudaMalloc(&dy, 16 * h.n));
        CK(cudaMemcpy(dx, x.data(), 16 * h.n, cudaMemcpyHostToDevice));
        for (int i = 0; i < 3; i++) launch<128>(K_CSR_POPC2, 'B', d, nullptr, dx, dy, nullptr);
        CK(cudaDeviceSynchronize());
        return 0;
    }
    // 1. awkward shapes: every variant, every width, against bg_ref_bspmm.
    if (!rmat_only) {
        std::vector<HostGraph> gs(6);
        make_random(gs[0], "one-isolated", 1, false, [](long long) { return 0; }, 1);
        make_random(gs[1], "n5-loops", 5, true, [](long long i) { return (int)(i % 3); }, 2);
        make_random(gs[2], "n37", 37, false, [](long long i) { return (int)((i * 7) % 6); }, 3);
        make_random(gs[3], "n1001-iso", 1001, false,
                    [](long long i) { return (i >= 100 && i < 200) || i % 17 == 0 ? 0 : (int)(i % 11); }, 4);
        make_random(gs[4], "n20003-skew", 20003, true, [](long long i) {
            return i == 7 ? 15000 : i == 20001 ? 10001 : i == 5 ? 4097 : (int)(rmat_mix64(i) % 9); }, 5);
        make_random(gs[5], "n2050-dense", 2050, false, [](long long i) { return (int)(i % 700); }, 6);
        for (auto &h : gs) {
            DevGraph d;
            upload(h, d, maxC);
            graph_stats(h, d);
            if (check_only) check_all<33, 128, 1100>(h, d, 77);
            else check_all<1, 33, 64, 100, 128, 256, 300, 1100>(h, d, 77);
            free_dev(d);
            free_host(h);
        }
    }
    if (check_only) { // for compute-sanitizer: the awkward shapes only, no timing
        printf("%s: %d failures\n", g_fail ? "FAIL" : "ALL CHECKS PASSED", g_fail);
        return g_fail ? 1 : 0;
    }
    // 2. real graphs + R-MAT: check at 64/128/256 (and 100), then time.
    std::vector<std::string> names = {"cora", "citeseer", "pubmed"};
    if (!quick) names.push_back("rmat");
    if (!quick) names.push_back("rmat-degord");
    if (rmat_only) names = {"rmat", "rmat-degord"};
    if (degord_only) names = {"rmat-degord"};
    for (auto &nm : names) {
        HostGraph h;
        if (nm == "rmat") make_rmat(h, 232965, M, 42);
        else if (nm == "rmat-degord") make_rmat(h, 232965, M, 42, true);
        else if (!load_mtx(h, dd, nm.c_str())) { g_fail++; continue; }
        DevGraph d;
        upload(h, d, 256);
        graph_stats(h, d);
        check_all<64, 100, 128, 256>(h, d, 99);
        time_graph<64>(h, d, sp);
        time_graph<128>(h, d, sp);
        time_graph<256>(h, d, sp);
        free_dev(d);
        free_host(h);
    }
    cusparseDestroy(sp);

    printf("\n==== BSpMM microbenchmarks on %s (median of %d launches, CUDA events) ====\n", prop.name, g_reps);
    printf("floorBW = minimum DRAM bytes / measured copy bandwidth %.0f GB/s; floorGat = measured time of the same gathers\n"
           "(k_gather_csr: the graph's own column stream + one W-word gather per edge, no arithmetic; for cuSPARSE:\n"
           "nnz random float-row gathers at the measured rate); x_floor = time / max(floorBW, floorGat).\n", g_bw / 1e9);
    printf("%-12s %4s %-30s %10s %9s %9s %9s %7s %9s\n", "graph", "C", "kernel", "time_us", "MB", "floorBW", "floorGat",
           "x_floor", "vs_cuSP");
    for (auto &r : g_rows) {
        double fl = std::max(r.floor_bw_us, r.floor_g_us);
        printf("%-12s %4lld %-30s %10.1f %9.1f %9.1f %9.1f %7.2f %9.1f\n", r.graph.c_str(), r.C, r.kernel.c_str(), r.us,
               r.mb, r.floor_bw_us, r.floor_g_us, r.us / fl, r.cusp_us / r.us);
    }
    printf("%s: %d failures\n", g_fail ? "FAIL" : "ALL CHECKS PASSED", g_fail);
    return g_fail ? 1 : 0;
}
