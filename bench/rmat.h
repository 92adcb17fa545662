/* rmat.h - deterministic R-MAT edge stream (host and device), for the Reddit-sized
 * benchmark graph: 232,965 nodes, ~114.6M directed edges after symmetrisation.
 *
 * Edge k of the stream (k = 0..M-1) is a pure function of (seed, k): 2^scale x 2^scale
 * recursive quadrant choice with Graph500 probabilities a=0.57, b=0.19, c=0.19, d=0.05
 * (16-bit uniform draws from splitmix64), then both endpoints go through a fixed bijective
 * scramble of [0, 2^scale) (so hubs are spread over the id range, as Graph500 permutes
 * labels) and are scaled onto [0, n): node = (scramble(raw) * n) >> scale.
 * The graph = {(u,v), (v,u)} over all k with u != v, duplicates merged: rmat_graph (rmat.c,
 * the one builder of it, for bspmm_bench.cu and bgnn_time.c). */
#ifndef BGNN_BENCH_RMAT_H
#define BGNN_BENCH_RMAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "loaders.h"
/* The R-MAT graph of n nodes from the stream k = 0..M-1 (seed): every edge u != v in both
 * directions, built by the product's bg_graph_from_coo (loaders/graph.c: columns ascending,
 * duplicates merged), the stream generated and the rows built on all cores (OpenMP; parts
 * of the rows, one bg_graph_from_coo each, concatenated).  false with an error in d. */
bool rmat_graph(int64_t n, int64_t M, uint64_t seed, BgGraph *out, BgDiagSink *d);
#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#define RMAT_HD __host__ __device__ __forceinline__
#else
#define RMAT_HD static inline
#endif

RMAT_HD uint64_t rmat_mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

RMAT_HD uint32_t rmat_scramble(uint32_t x, int scale) {
    uint32_t m = (scale >= 32) ? 0xffffffffu : ((1u << scale) - 1u);
    x = (x * 0x9E3779B1u) & m;
    x ^= x >> (scale / 2 + 1);
    x = (x * 0x85EBCA6Bu) & m;
    x ^= x >> (scale / 3 + 1);
    x = (x * 0xC2B2AE35u) & m;
    return x;
}

/* Writes the endpoints of edge k (already mapped onto [0, n)). */
RMAT_HD void rmat_edge(uint64_t seed, uint64_t k, int scale, uint32_t n, uint32_t *u,
                       uint32_t *v) {
    uint32_t a = 0, b = 0;
    uint64_t h = 0;
    for (int l = 0; l < scale; l++) {
        if ((l & 3) == 0) h = rmat_mix64(seed * 0x100000001B3ull + k * 8 + (uint64_t)(l >> 2));
        uint32_t r = (uint32_t)(h >> (16 * (l & 3))) & 0xffffu;
        /* a = 0.57, a+b = 0.76, a+b+c = 0.95 of 65536 */
        uint32_t q = r < 37356u ? 0u : r < 49807u ? 1u : r < 62259u ? 2u : 3u;
        a = (a << 1) | (q >> 1);
        b = (b << 1) | (q & 1u);
    }
    *u = (uint32_t)(((uint64_t)rmat_scramble(a, scale) * n) >> scale);
    *v = (uint32_t)(((uint64_t)rmat_scramble(b, scale) * n) >> scale);
}

#endif
