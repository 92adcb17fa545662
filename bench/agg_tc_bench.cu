// agg_tc_bench.cu - bspmm.BB{B,F} on the bit tensor cores (bench/kernels/bspmm_bb_tc.cuh, QGTC-style
// dense 16 x 256 adjacency tiles) against bgnn's fast CSR aggregation (templates/bspmm_fast.cuh,
// METHOD_POPC2, plain and grouped schedules as plan/plan.c builds them), checked against the
// CPU reference (reference/ref_ops.c bg_ref_bspmm_rows) in the same run.
// Build and run: bench/run_agg_tc_bench.sh.
//
// Graphs (self loops added, as GCN's A + I, except where an awkward case says none):
//   real: Cora, PubMed (graph.mtx under --data DIR, default .carry/data), MUTAG, PROTEINS, NCI1
//         (TU datasets: every graph of the dataset as one block-diagonal batch), Cora and
//         PubMed renumbered by reverse Cuthill-McKee (bench/kernels/bspmm_tiles.h bgt_rcm);
//   synthetic: 65536 nodes in dense diagonal blocks of 16, 64, 256, 1024 nodes, each pair of a
//         block an (undirected) edge with probability 1 %, 5 %, 20 %, 50 %;
//   awkward (checks only): N = 0, N = 1 with and without a self loop, 17 nodes with isolated
//         ones, 1000 nodes with a 500-neighbour row, a 300-node block at 60 %, 4097 nodes in
//         blocks of 48, 2500 nodes of random sparse rows; at C = 1, 33, 64, 100, 128, 300.
// Checks (bit for bit, every word of the output, padding bits included; outputs poisoned
// first): the tensor-core kernel (transpose + aggregation) == bg_ref_bspmm for BBB, BBF (norm
// none) and BBF (norm mean: rowf = 1/deg); the CSR popc2 kernels (plain, grouped schedule) ==
// the reference (the baselines are right too); with a fused epilogue (row and column scales
// and a bias: Bi-GCN's), the tensor-core kernel == spmm.cuh's bspmm_adjb with the same
// epilogue, BBF and BBB.
// Timing (C = 64 and 128, real and synthetic graphs), two ways: a launch timed alone (median of
// --reps launches, default 100, CUDA events, 3 warm-ups: bench_util.cuh median_ms), which on
// graphs this small is mostly launch latency; and a launch's share of a burst of 20
// back-to-back launches (median of max(10, reps / 5) bursts), the GPU time a kernel costs in a
// stream of kernels.  The transpose of x (bspmm_tc_xt) is timed separately and together with
// the aggregation (two launches), since a product pays it unless the previous layer writes xt.
// Options: --data DIR, --reps N, --check-only (the awkward cases only, no timing: for
// compute-sanitizer), --only SUBSTR (graphs whose name contains SUBSTR).
// Exit status: 0 all checks passed, 1 a check failed, 2 a CUDA or setup error, 77 no GPU.
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

extern "C" {
#include "bg.h"
#include "plan.h"
#include "ref_ops.h"
}

#include "../templates/bgnn_common.cuh"
#include "../templates/epilogue.cuh"
#include "../templates/spmm.cuh"
#include "../templates/bspmm_fast.cuh"
#include "kernels/bspmm_bb_tc.cuh"
#include "bench_util.cuh"
#include "kernels/bspmm_tiles.h"
#include "rmat.h"

using bgnn::u32;

static int g_reps = 100;
static bool g_check_only = false;
static std::string g_only;
static int g_ok = 0, g_fail = 0;

static void report(const std::string &what, bool ok, const std::string &note = "") {
    if (!ok) printf("  check %-64s FAIL%s\n", what.c_str(), note.c_str());
    (ok ? g_ok : g_fail)++;
}

// ---- graphs ------------------------------------------------------------------------------
struct HostGraph {
    std::string name;
    bool timed = false;
    BgAdj adj{}, adjm{}; // norm none, norm mean (same pattern)
    BgTiles tiles{};
    long long n = 0, nnz = 0;
};

static void die(const char *what) {
    fprintf(stderr, "%s\n", what);
    exit(2);
}
static void die_diag(const char *what, BgDiagSink *d) {
    char *m = bg_diag_render(d);
    fprintf(stderr, "%s: %s\n", what, m ? m : "?");
    free(m);
    exit(2);
}

// Adjacencies (norm none and mean) and tiles of graph g.
static void finish(HostGraph &h, const BgGraph &g, bool self_loops) {
    if (!bg_adj_build(&g, self_loops, BG_NORM_NONE, &h.adj) || !bg_adj_build(&g, self_loops, BG_NORM_MEAN, &h.adjm))
        die("bg_adj_build failed");
    h.n = h.adj.n;
    h.nnz = h.adj.nnz;
    if (!bgt_build(h.adj.n, h.adj.rowptr, h.adj.col, &h.tiles)) die("bgt_build refused the graph");
    if (h.tiles.nbits != h.nnz) die("bgt_build: bits != edges");
}

// A graph from CSR arrays (columns ascending, no repeats).
static void from_csr(HostGraph &h, const char *name, long long n, std::vector<int64_t> &rp, std::vector<int32_t> &col,
                     bool self_loops, bool timed) {
    if (col.empty()) col.push_back(0); // a valid pointer; rp[n] = 0 edges
    BgGraph g{};
    g.n = n;
    g.nnz = rp[n];
    g.rowptr = rp.data();
    g.col = col.data();
    h.name = name;
    h.timed = timed;
    finish(h, g, self_loops);
}

// A graph from COO entries: bg_graph_from_coo sorts and merges repeats.
static void from_coo(HostGraph &h, const char *name, long long n, std::vector<int64_t> &r, std::vector<int64_t> &c,
                     bool self_loops, bool timed) {
    if (r.empty()) { // a valid pointer for zero entries
        r.push_back(0);
        c.push_back(0);
        r.pop_back();
        c.pop_back();
    }
    BgCoo coo{n, n, (int64_t)r.size(), r.data(), c.data(), nullptr};
    BgDiagSink d;
    bg_diag_init(&d);
    BgGraph g;
    if (!bg_graph_from_coo(&coo, name, &g, &d)) die_diag(name, &d);
    bg_diag_free(&d);
    h.name = name;
    h.timed = timed;
    finish(h, g, self_loops);
    bg_graph_free(&g);
}

// graph.mtx of a dataset folder; rcm: renumbered by reverse Cuthill-McKee first.
static bool load_mtx(HostGraph &h, const std::string &dir, const char *ds, bool rcm) {
    const std::string p = dir + "/" + ds + "/graph.mtx";
    BgDiagSink d;
    bg_diag_init(&d);
    BgCoo c;
    BgGraph g;
    if (!bg_mtx_load(p.c_str(), &c, &d) || !bg_graph_from_coo(&c, p.c_str(), &g, &d)) {
        char *m = bg_diag_render(&d);
        fprintf(stderr, "cannot load %s: %s (skipped)\n", p.c_str(), m ? m : "?");
        free(m);
        bg_diag_free(&d);
        return false;
    }
    bg_coo_free(&c);
    bg_diag_free(&d);
    h.name = std::string(ds) + (rcm ? "-rcm" : "");
    h.timed = true;
    if (rcm) {
        std::vector<int32_t> perm((size_t)std::max<int64_t>(1, g.n)), col2((size_t)std::max<int64_t>(1, g.nnz));
        std::vector<int64_t> rp2((size_t)g.n + 1);
        if (!bgt_rcm(g.n, g.rowptr, g.col, perm.data()) ||
            !bgt_permute(g.n, g.rowptr, g.col, perm.data(), rp2.data(), col2.data()))
            die("rcm failed");
        BgGraph g2 = g;
        g2.rowptr = rp2.data();
        g2.col = col2.data();
        finish(h, g2, true);
    } else {
        finish(h, g, true);
    }
    bg_graph_free(&g);
    return true;
}

// n nodes in diagonal blocks of b (the last one shorter); pair {i, j} of a block (i != j) an
// edge in both directions with probability fill (a hash of the pair: symmetric).
static void block_diag(HostGraph &h, const char *name, long long n, long long b, double fill, uint64_t seed,
                       bool timed) {
    const uint64_t thr = (uint64_t)(fill * 18446744073709551616.0 * (1.0 - 1e-12));
    auto edge = [&](long long i, long long j) {
        const long long a = std::min(i, j), z = std::max(i, j);
        return rmat_mix64(seed ^ rmat_mix64(((uint64_t)a << 32) | (uint64_t)z)) < thr;
    };
    std::vector<int64_t> rp((size_t)n + 1, 0);
#pragma omp parallel for schedule(dynamic, 256)
    for (long long i = 0; i < n; i++) {
        const long long b0 = i / b * b, b1 = std::min(n, b0 + b);
        long long d = 0;
        for (long long j = b0; j < b1; j++) d += j != i && edge(i, j);
        rp[(size_t)i + 1] = d;
    }
    for (long long i = 0; i < n; i++) rp[(size_t)i + 1] += rp[(size_t)i];
    std::vector<int32_t> col((size_t)rp[(size_t)n]);
#pragma omp parallel for schedule(dynamic, 256)
    for (long long i = 0; i < n; i++) {
        const long long b0 = i / b * b, b1 = std::min(n, b0 + b);
        long long k = rp[(size_t)i];
        for (long long j = b0; j < b1; j++)
            if (j != i && edge(i, j)) col[(size_t)k++] = (int32_t)j;
    }
    from_csr(h, name, n, rp, col, true, timed);
}

// ---- device side -------------------------------------------------------------------------
struct Sched {
    long long nitems = 0, nsplit = 0;
    int chunk = 0;
    int *buf = nullptr;
    const int4 *items() const { return (const int4 *)buf + 1; }
};
static void sched_build(const int64_t *rowptr, long long rows, long long group_min_rows, Sched &s) {
    int64_t ns = 0, ni = bg_plan_schedule(rowptr, rows, BG_PLAN_BSPMM_CHUNK, group_min_rows, nullptr, &ns);
    if (ni < 0) die("bg_plan_schedule: too many rows");
    std::vector<int32_t> it((size_t)(4 * (ni + 1)));
    bg_plan_schedule(rowptr, rows, BG_PLAN_BSPMM_CHUNK, group_min_rows, it.data(), &ns);
    s.nitems = ni;
    s.nsplit = ns;
    s.chunk = BG_PLAN_BSPMM_CHUNK;
    CK(cudaMalloc(&s.buf, sizeof(int32_t) * it.size()));
    CK(cudaMemcpy(s.buf, it.data(), sizeof(int32_t) * it.size(), cudaMemcpyHostToDevice));
}

template <class T> static T *dalloc(size_t n) {
    T *p = nullptr;
    CK(cudaMalloc(&p, std::max<size_t>(1, n) * sizeof(T)));
    return p;
}
template <class T> static T *upload(const T *h, size_t n) {
    T *d = dalloc<T>(n);
    if (n) CK(cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

struct DevGraph {
    long long n = 0;
    long long *rowptr = nullptr;
    int *col = nullptr;
    float *rowf = nullptr, *ones = nullptr;
    Sched sched, gsched; // plain; grouped (every graph, whatever its size)
    int *partial = nullptr;
    unsigned *done = nullptr;
    int *rbptr = nullptr, *tcol = nullptr;
    uint4 *tiles = nullptr;
};

static void dev_upload(const HostGraph &h, DevGraph &d, long long maxC) {
    d.n = h.n;
    d.rowptr = upload((const long long *)h.adj.rowptr, (size_t)h.n + 1);
    d.col = upload(h.adj.col, (size_t)h.nnz);
    d.rowf = upload(h.adjm.rowf, (size_t)h.n);
    std::vector<float> one((size_t)std::max(1LL, h.n), 1.0f);
    d.ones = upload(one.data(), one.size());
    sched_build(h.adj.rowptr, h.n, 0, d.sched);
    sched_build(h.adj.rowptr, h.n, 1, d.gsched);
    const long long ns = std::max({1LL, d.sched.nsplit, d.gsched.nsplit});
    d.partial = dalloc<int>((size_t)(ns * maxC));
    CK(cudaMemset(d.partial, 0, sizeof(int) * (size_t)(ns * maxC)));
    d.done = dalloc<unsigned>((size_t)ns);
    CK(cudaMemset(d.done, 0, sizeof(unsigned) * (size_t)ns));
    d.rbptr = upload(h.tiles.rbptr, (size_t)h.tiles.nrb + 1);
    d.tcol = upload(h.tiles.tcol, (size_t)h.tiles.ntiles);
    d.tiles = upload((const uint4 *)h.tiles.tiles, (size_t)h.tiles.ntiles * 32);
}
static void dev_free(DevGraph &d) {
    for (void *p : {(void *)d.rowptr, (void *)d.col, (void *)d.rowf, (void *)d.ones, (void *)d.sched.buf,
                    (void *)d.gsched.buf, (void *)d.partial, (void *)d.done, (void *)d.rbptr, (void *)d.tcol,
                    (void *)d.tiles})
        CK(cudaFree(p));
}

// ---- kernels under test ------------------------------------------------------------------
template <long long C, char Z>
__global__ void __launch_bounds__(128) k_csr(long long n, const long long *__restrict__ rowptr, const int *__restrict__ col,
                                             const float *__restrict__ rowf, const u32 *__restrict__ x, void *__restrict__ y,
                                             const int4 *__restrict__ items, long long nitems, int chunk, int *partial,
                                             unsigned *done) {
    bgnn::bspmm_bb_csr<C, Z, bgnn::METHOD_POPC2>(n, rowptr, col, rowf, x, y, items, nitems, chunk, partial, done);
}
template <long long C>
__global__ void __launch_bounds__(256) k_xt(long long n, uint4 *xt, const u32 *x) {
    bgnn::bspmm_tc_xt<C>(n, xt, x);
}
template <long long C, char Z, class Epi = bgnn::EpEnd>
__global__ void __launch_bounds__(128) k_tc(long long n, const int *__restrict__ rbptr, const int *__restrict__ tcol,
                                            const uint4 *__restrict__ tiles, const uint4 *__restrict__ xt,
                                            const float *__restrict__ rowf, void *__restrict__ y, Epi epi = Epi()) {
    bgnn::bspmm_bb_tc<C, Z, Epi>(n, rbptr, tcol, tiles, xt, rowf, y, epi);
}
// Bi-GCN's epilogue: row and column scales, then a bias.
template <long long C> using EpBiGcn = bgnn::EpScl<true, true, bgnn::EpAdd<C, false, bgnn::EpEnd>>;
template <long long C, char Z>
__global__ void k_simple_epi(long long n, void *y, const long long *rp, const int *col, const float *rowf,
                             const float *ones, const u32 *x, EpBiGcn<C> epi) {
    bgnn::bspmm_adjb<'B', Z, C, true, 0, EpBiGcn<C>>(n, y, rp, col, rowf, ones, x, epi);
}

static unsigned blocks_for(long long threads, int bs) {
    return (unsigned)std::max(1LL, std::min((threads + bs - 1) / bs, 1LL << 30));
}
template <long long C, char Z> static void launch_csr(const DevGraph &d, const Sched &s, const float *rowf, const u32 *x, void *y) {
    if (d.n == 0) return;
    k_csr<C, Z><<<blocks_for(32 * s.nitems, 128), 128>>>(d.n, d.rowptr, d.col, rowf, x, y, s.items(), s.nitems, s.chunk,
                                                         d.partial, d.done);
    CK(cudaGetLastError());
}
template <long long C> static void launch_xt(const DevGraph &d, uint4 *xt, const u32 *x) {
    if (d.n == 0) return;
    k_xt<C><<<blocks_for(32 * bgnn::bspmm_tc_nkt(d.n) * 8 * bgnn::words_of(C), 256), 256>>>(d.n, xt, x);
    CK(cudaGetLastError());
}
template <long long C, char Z, class Epi = bgnn::EpEnd>
static void launch_tc(const DevGraph &d, const uint4 *xt, const float *rowf, void *y, Epi epi = Epi()) {
    if (d.n == 0) return;
    k_tc<C, Z, Epi><<<blocks_for(32 * ((d.n + 15) / 16), 128), 128>>>(d.n, d.rbptr, d.tcol, d.tiles, xt, rowf, y, epi);
    CK(cudaGetLastError());
}

// ---- reference -------------------------------------------------------------------------------
static void ref_bspmm(const char *prec, const BgAdj &a, const BgTensor &x, std::vector<u32> &y) {
    const long long C = x.dim[1], opr = prec[2] == 'B' ? (C + 31) / 32 : C;
    if (!ref_rows(a.n, opr, y, [&](long long r0, long long r1, BgTensor *out) {
            return bg_ref_bspmm_rows(prec, &a, &x, r0, r1, out, BG_METHOD_ANDNOT);
        }))
        die("bg_ref_bspmm_rows refused the operands");
}

// ---- one graph at one width: checks, then timing -------------------------------------------
enum { T_POPC_B, T_POPCG_B, T_POPC_F, T_POPCG_F, T_XT, T_TC_B, T_TC_F, T_XTTC_B, T_N };
struct Row {
    std::string graph;
    long long n, nnz, ntiles, nrb, C;
    double one[T_N], burst[T_N]; // us: a launch timed alone; a launch's share of a burst of BURST
};
constexpr int BURST = 20;
static std::vector<Row> g_rows;

template <long long C> static void run(const HostGraph &h, const DevGraph &d) {
    constexpr long long W = bgnn::words_of(C);
    const long long n = h.n;
    std::vector<u32> x((size_t)std::max(1LL, n * W));
    for (long long i = 0; i < n * W; i++)
        x[(size_t)i] = (u32)rmat_mix64(0x5eedULL * (uint64_t)C + (uint64_t)i) & bgnn::word_mask(C, i % W);
    u32 *dx = upload(x.data(), x.size());
    uint4 *xt = dalloc<uint4>((size_t)bgnn::bspmm_tc_xt_elems(n, C));
    void *y = dalloc<float>((size_t)std::max(1LL, n * C));
    const size_t ybytes = sizeof(float) * (size_t)std::max(1LL, n * C);
    std::string tag = h.name + " C=" + std::to_string(C);
    // reference
    std::vector<u32> rb, rfn, rfm; // BBB words, BBF none, BBF mean (f32 bits)
    if (n > 0) {
        BgTensor tx;
        if (!bg_tensor_alloc(&tx, BG_DT_B1, 2, n, C)) die("host allocation");
        memcpy(tx.data, x.data(), sizeof(u32) * (size_t)(n * W));
        ref_bspmm("BBB", h.adj, tx, rb);
        ref_bspmm("BBF", h.adj, tx, rfn);
        ref_bspmm("BBF", h.adjm, tx, rfm);
        bg_tensor_free(&tx);
    }
    std::vector<u32> got((size_t)std::max(1LL, n * C));
    auto check = [&](const char *what, const std::vector<u32> &want, long long words, const std::function<void()> &go) {
        CK(cudaMemset(y, 0xA5, ybytes));
        go();
        CK(cudaDeviceSynchronize());
        long long bad = 0, first = -1;
        if (words > 0) {
            CK(cudaMemcpy(got.data(), y, sizeof(u32) * (size_t)words, cudaMemcpyDeviceToHost));
            for (long long i = 0; i < words; i++)
                if (got[(size_t)i] != want[(size_t)i]) {
                    if (first < 0) first = i;
                    bad++;
                }
        }
        char note[128] = "";
        if (bad) snprintf(note, sizeof note, ": %lld of %lld words differ, first at %lld", bad, words, first);
        report(tag + " " + what, bad == 0, note);
        return bad == 0;
    };
    launch_xt<C>(d, xt, dx);
    const long long wb = n * W, wf = n * C;
    check("tc BBB == ref", rb, wb, [&] { launch_tc<C, 'B'>(d, xt, nullptr, y); });
    check("tc BBF == ref", rfn, wf, [&] { launch_tc<C, 'F'>(d, xt, nullptr, y); });
    check("tc BBF mean == ref", rfm, wf, [&] { launch_tc<C, 'F'>(d, xt, d.rowf, y); });
    check("tc BBF mean (xt again) == ref", rfm, wf, [&] {
        CK(cudaMemset(xt, 0x5A, sizeof(uint4) * (size_t)std::max(1LL, bgnn::bspmm_tc_xt_elems(n, C))));
        launch_xt<C>(d, xt, dx); // every xt word is written: the poison must not matter
        launch_tc<C, 'F'>(d, xt, d.rowf, y);
    });
    for (int g = 0; g < 2; g++) {
        const Sched &s = g ? d.gsched : d.sched;
        const std::string k = g ? "csr-grouped/popc2" : "csr/popc2";
        check((k + " BBB == ref").c_str(), rb, wb, [&] { launch_csr<C, 'B'>(d, s, nullptr, dx, y); });
        check((k + " BBF == ref").c_str(), rfn, wf, [&] { launch_csr<C, 'F'>(d, s, nullptr, dx, y); });
        check((k + " BBF mean == ref").c_str(), rfm, wf, [&] { launch_csr<C, 'F'>(d, s, d.rowf, dx, y); });
    }
    { // fused epilogue: tc == spmm.cuh's bspmm_adjb with the same epilogue
        std::vector<float> rs((size_t)std::max(1LL, n)), cs(C), bias(C);
        for (size_t i = 0; i < rs.size(); i++) rs[i] = (float)(rmat_mix64(11 + i) >> 40) / 16777216.0f - 0.25f;
        for (long long c = 0; c < C; c++) {
            cs[(size_t)c] = (float)(rmat_mix64(12 + (uint64_t)c) >> 40) / 16777216.0f - 0.25f;
            bias[(size_t)c] = (float)(rmat_mix64(13 + (uint64_t)c) >> 40) / 16777216.0f - 0.5f;
        }
        float *drs = upload(rs.data(), (size_t)n), *dcs = upload(cs.data(), (size_t)C), *db = upload(bias.data(), (size_t)C);
        const EpBiGcn<C> e{drs, dcs, {db, {}}};
        for (int z = 0; z < 2; z++) {
            const long long words = z ? wb : wf;
            std::vector<u32> want((size_t)std::max(1LL, words));
            CK(cudaMemset(y, 0xA5, ybytes));
            if (n > 0) {
                const long long thr = n * (z ? bgnn::b1_tpr(C) : bgnn::f32_tpr(C));
                if (z) k_simple_epi<C, 'B'><<<blocks_for(thr, 256), 256>>>(n, y, d.rowptr, d.col, d.rowf, d.ones, dx, e);
                else k_simple_epi<C, 'F'><<<blocks_for(thr, 256), 256>>>(n, y, d.rowptr, d.col, d.rowf, d.ones, dx, e);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(want.data(), y, sizeof(u32) * (size_t)words, cudaMemcpyDeviceToHost));
            }
            if (z) check("tc BBB mean +scales +bias == spmm.cuh", want, words, [&] { launch_tc<C, 'B'>(d, xt, d.rowf, y, e); });
            else check("tc BBF mean +scales +bias == spmm.cuh", want, words, [&] { launch_tc<C, 'F'>(d, xt, d.rowf, y, e); });
        }
        for (float *p : {drs, dcs, db}) CK(cudaFree(p));
    }
    if (h.timed && !g_check_only && n > 0) {
        Row r{h.name, n, h.nnz, h.tiles.ntiles, h.tiles.nrb, C, {}, {}};
        const std::function<void()> fs[T_N] = {
            [&] { launch_csr<C, 'B'>(d, d.sched, nullptr, dx, y); },
            [&] { launch_csr<C, 'B'>(d, d.gsched, nullptr, dx, y); },
            [&] { launch_csr<C, 'F'>(d, d.sched, nullptr, dx, y); },
            [&] { launch_csr<C, 'F'>(d, d.gsched, nullptr, dx, y); },
            [&] { launch_xt<C>(d, xt, dx); },
            [&] { launch_tc<C, 'B'>(d, xt, nullptr, y); },
            [&] { launch_tc<C, 'F'>(d, xt, nullptr, y); },
            [&] {
                launch_xt<C>(d, xt, dx);
                launch_tc<C, 'B'>(d, xt, nullptr, y);
            },
        };
        for (int k = 0; k < T_N; k++) {
            r.one[k] = 1e3 * median_ms([&](int) { fs[k](); }, 3, g_reps);
            r.burst[k] = 1e3 * median_ms([&](int) { for (int i = 0; i < BURST; i++) fs[k](); }, 2,
                                          std::max(10, g_reps / 5)) / BURST;
        }
        g_rows.push_back(r);
        for (int m = 0; m < 2; m++) {
            const double *t = m ? r.burst : r.one;
            printf("  %-14s C=%-4lld %-6s popc2 B %7.2f grouped B %7.2f tc B %7.2f xt %7.2f xt+tc B %7.2f | popc2 F %7.2f "
                   "grouped F %7.2f tc F %7.2f us\n",
                   h.name.c_str(), C, m ? "burst" : "alone", t[T_POPC_B], t[T_POPCG_B], t[T_TC_B], t[T_XT], t[T_XTTC_B],
                   t[T_POPC_F], t[T_POPCG_F], t[T_TC_F]);
        }
        fflush(stdout);
    }
    CK(cudaFree(dx));
    CK(cudaFree(xt));
    CK(cudaFree(y));
}

static void run_graph(HostGraph &h, const std::vector<long long> &widths) {
    if (!strstr(h.name.c_str(), g_only.c_str())) return;
    const int f0 = g_fail, o0 = g_ok;
    const double fill = h.tiles.ntiles ? 100.0 * (double)h.nnz / (4096.0 * (double)h.tiles.ntiles) : 0.0;
    printf("%s: N %lld, nnz %lld (self loops %s), row blocks %lld, tiles %lld (%.2f a row block), tile fill %.2f %%\n",
           h.name.c_str(), h.n, h.nnz, h.adj.self_loops ? "added" : "none", (long long)h.tiles.nrb,
           (long long)h.tiles.ntiles, h.tiles.nrb ? (double)h.tiles.ntiles / (double)h.tiles.nrb : 0.0, fill);
    fflush(stdout);
    DevGraph d;
    dev_upload(h, d, 320);
    for (long long C : widths) {
        switch (C) {
        case 1: run<1>(h, d); break;
        case 33: run<33>(h, d); break;
        case 64: run<64>(h, d); break;
        case 100: run<100>(h, d); break;
        case 128: run<128>(h, d); break;
        case 300: run<300>(h, d); break;
        default: die("width not instantiated");
        }
    }
    dev_free(d);
    printf("  checks %d OK, %d FAIL\n", g_ok - o0, g_fail - f0);
    fflush(stdout);
}

static void free_host(HostGraph &h) {
    bg_adj_free(&h.adj);
    bg_adj_free(&h.adjm);
    bgt_free(&h.tiles);
}

// The awkward cases (checks only).
static void awkward() {
    const std::vector<long long> widths = {1, 33, 64, 100, 128, 300};
    auto one = [&](HostGraph &h) {
        run_graph(h, widths);
        free_host(h);
    };
    {
        HostGraph h;
        std::vector<int64_t> r, c;
        from_coo(h, "awk-empty", 0, r, c, true, false);
        one(h);
    }
    for (int sl = 0; sl < 2; sl++) {
        HostGraph h;
        std::vector<int64_t> r, c;
        from_coo(h, sl ? "awk-1node-self" : "awk-1node-bare", 1, r, c, sl == 1, false);
        one(h);
    }
    { // isolated nodes: random rows of 0..3 draws, no self loops
        HostGraph h;
        std::vector<int64_t> r, c;
        for (int i = 0; i < 17; i++)
            for (int k = 0; k < (int)(rmat_mix64(100 + i) % 4); k++) {
                r.push_back(i);
                c.push_back((int64_t)(rmat_mix64(200 + 7 * i + k) % 17));
            }
        from_coo(h, "awk-iso17", 17, r, c, false, false);
        one(h);
    }
    { // a 500-neighbour row (every even node) among sparse rows, no self loops
        HostGraph h;
        std::vector<int64_t> r, c;
        for (int i = 0; i < 1000; i++) {
            if (i == 501) {
                for (int j = 0; j < 1000; j += 2) {
                    r.push_back(i);
                    c.push_back(j);
                }
                continue;
            }
            for (int k = 0; k < (int)(rmat_mix64(300 + i) % 7); k++) {
                r.push_back(i);
                c.push_back((int64_t)(rmat_mix64(400 + 11 * i + k) % 1000));
            }
        }
        from_coo(h, "awk-hub1000", 1000, r, c, false, false);
        one(h);
    }
    {
        HostGraph h;
        block_diag(h, "awk-dense300", 300, 300, 0.6, 7, false);
        one(h);
    }
    {
        HostGraph h;
        block_diag(h, "awk-bd4097", 4097, 48, 0.3, 8, false);
        one(h);
    }
    { // random sparse rows over the whole id range (many tiles of one or two edges)
        HostGraph h;
        std::vector<int64_t> r, c;
        for (int i = 0; i < 2500; i++)
            for (int k = 0; k < 1 + (int)(rmat_mix64(500 + i) % 8); k++) {
                r.push_back(i);
                c.push_back((int64_t)(rmat_mix64(600 + 13 * i + k) % 2500));
            }
        from_coo(h, "awk-rand2500", 2500, r, c, true, false);
        one(h);
    }
}

int main(int argc, char **argv) {
    std::string data = ".carry/data";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = std::max(1, atoi(argv[++i]));
        else if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) g_only = argv[++i];
        else if (!strcmp(argv[i], "--check-only")) g_check_only = true;
        else {
            fprintf(stderr, "usage: %s [--data DIR] [--reps N] [--only SUBSTR] [--check-only]\n", argv[0]);
            return 2;
        }
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("agg_tc_bench: no CUDA GPU available; nothing to run.\n");
        return 77;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major < 8) {
        printf("agg_tc_bench: %s is sm_%d%d; b1 mma needs sm_80 or later.\n", prop.name, prop.major, prop.minor);
        return 77;
    }
    printf("GPU: %s (sm_%d%d), %d SMs; %d host threads; timing: median of %d launches (CUDA events) after 3 warm-ups\n",
           prop.name, prop.major, prop.minor, prop.multiProcessorCount, omp_get_max_threads(), g_reps);
    awkward();
    if (!g_check_only) {
        const std::vector<long long> widths = {64, 128};
        for (const char *ds : {"cora", "pubmed", "mutag", "proteins", "nci1"}) {
            HostGraph h;
            if (load_mtx(h, data, ds, false)) {
                run_graph(h, widths);
                free_host(h);
            } else {
                g_fail++;
            }
        }
        for (const char *ds : {"cora", "pubmed"}) {
            HostGraph h;
            if (load_mtx(h, data, ds, true)) {
                run_graph(h, widths);
                free_host(h);
            }
        }
        for (long long b : {16LL, 64LL, 256LL, 1024LL})
            for (double f : {0.01, 0.05, 0.20, 0.50}) {
                char name[64];
                snprintf(name, sizeof name, "bd%lld-%g%%", b, 100 * f);
                HostGraph h;
                block_diag(h, name, 65536, b, f, 1000 + (uint64_t)b, true);
                run_graph(h, widths);
                free_host(h);
            }
    }
    for (int m = 0; m < 2 && !g_rows.empty(); m++) {
        printf("\n==== bspmm.BB on bit tensor cores vs bgnn's CSR popc2, %s, us %s ====\n", prop.name,
               m ? "per launch in bursts of 20 back-to-back launches (median of the bursts)"
                 : "per launch timed alone (median of the launches)");
        printf("best = the faster of csr/popc2 and csr-grouped/popc2; tc = the aggregation alone (xt given); xt+tc = "
               "the transpose and the aggregation\n");
        printf("%-14s %6s %9s %6s %6s %6s %4s | %7s %7s %7s %7s %7s %7s %7s | %7s %7s %7s\n", "graph", "N", "nnz", "tiles",
               "t/rb", "fill%", "C", "popc2B", "groupB", "tcB", "xt", "xt+tcB", "best/tc", "best/x+", "bestF", "tcF",
               "best/tc");
        for (const Row &r : g_rows) {
            const double *t = m ? r.burst : r.one;
            const double bb = std::min(t[T_POPC_B], t[T_POPCG_B]), bf = std::min(t[T_POPC_F], t[T_POPCG_F]);
            printf("%-14s %6lld %9lld %6lld %6.2f %6.2f %4lld | %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f | %7.2f %7.2f "
                   "%7.2f\n",
                   r.graph.c_str(), r.n, r.nnz, r.ntiles, (double)r.ntiles / (double)std::max(1LL, r.nrb),
                   100.0 * (double)r.nnz / (4096.0 * (double)std::max(1LL, r.ntiles)), r.C, t[T_POPC_B], t[T_POPCG_B],
                   t[T_TC_B], t[T_XT], t[T_XTTC_B], bb / t[T_TC_B], bb / t[T_XTTC_B], bf, t[T_TC_F], bf / t[T_TC_F]);
        }
    }
    printf("checks: %d OK, %d FAIL\n%s\n", g_ok, g_fail, g_fail ? "FAIL" : "ALL CHECKS PASSED");
    return g_fail ? 1 : 0;
}
