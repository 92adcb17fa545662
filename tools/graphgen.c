/* graphgen.c - bgnn_graphgen, the synthetic graph corpus generator for the schedule auto-tuner
 * and the learned schedule predictor: writes one data directory that `bgnnc run --data DIR`
 * reads (graph.mtx, features.npy, labels.npy, train/val/test_idx.npy; the layout of
 * ../shared/data/README.md) for a graph of one of six families (er, rmat, grid, powerlaw, ba,
 * sbm), a pure function of the arguments: the same bytes on every run and machine (all
 * randomness from bench/rmat.h's splitmix64 hash; the few logarithms and powers computed by
 * series of IEEE basic operations here, never by libm, whose last bits vary between builds).
 * `bgnn_graphgen --check DIR` loads a data directory with the project's loaders and verifies
 * the invariants (sorted, symmetric, no self loops or duplicates, splits sorted and disjoint).
 * Like bgnnc, only this main prints; the graph is built by loaders/graph.c's bg_graph_from_coo. */
#include "loaders.h"
#include "../bench/rmat.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROG "bgnn_graphgen"
#define MAX_NODES ((int64_t)INT32_MAX)
#define MAX_ENTRIES ((int64_t)1000000000) /* directed entries of graph.mtx (4 GB of columns) */
#define MAX_FEATURES ((int64_t)1 << 24)   /* columns, loaders/io_npy.c's limit */
#ifndef PART_ENTRIES /* -DPART_ENTRIES=1000 exercises the multi-part build on small graphs */
#define PART_ENTRIES ((int64_t)1 << 24) /* entries per bg_graph_from_coo call (256 MB of COO) */
#endif

static const char usage_text[] =
    "usage: " PROG " KIND --nodes N [--degree D] [--seed S] [options] --out DIR [--force]\n"
    "       " PROG " --check DIR\n"
    "       " PROG " --help\n"
    "\n"
    "Writes DIR, a data directory `bgnnc run --data DIR` reads: graph.mtx (Matrix Market pattern,\n"
    "both directions, no self loops, no duplicates, sorted by row then column, one comment line\n"
    "naming the generator and its arguments), features.npy, labels.npy and train/val/test_idx.npy.\n"
    "The bytes are a function of the arguments alone (same on every run and machine).\n"
    "\n"
    "kinds (mean degree about D):\n"
    "  er        Erdos-Renyi G(N, p), p = D / (N - 1)\n"
    "  rmat      R-MAT (bench/rmat.h's edge stream) with --skew, drawn until N D / 2 distinct\n"
    "            edges (self loops and repeats skipped): the mean degree is D\n"
    "  grid      2-D near-square lattice, 4 neighbours (--dims 3: near-cube, 6); --diag: 8 (26);\n"
    "            D is ignored\n"
    "  powerlaw  Chung-Lu: expected degree of node i ~ (i+1)^(-1/(G-1)), exponent --gamma G,\n"
    "            mean D (endpoints drawn by weight until N D / 2 distinct edges, like rmat)\n"
    "  ba        Barabasi-Albert preferential attachment, m = round(D/2) edges per new node\n"
    "  sbm       stochastic block model: --blocks B blocks of consecutive ids, a fraction --mix\n"
    "            of the expected edges between blocks (p_in, p_out from D and --mix)\n"
    "\n"
    "options:\n"
    "  --nodes N          nodes, 1 .. 2147483647 (required)\n"
    "  --degree D         mean degree, >= 0 (default 16; at most N - 1: a complete graph)\n"
    "  --seed S           random seed, 0 .. 2^64-1 (default 1)\n"
    "  --skew a,b,c,d     rmat quadrant probabilities, >= 0, sum 1 (default 0.57,0.19,0.19,0.05)\n"
    "  --gamma G          powerlaw exponent, 1 < G <= 100 (default 2.1)\n"
    "  --dims 2|3         grid dimensions (default 2)\n"
    "  --diag             grid: diagonal neighbours too (8 in 2-D, 26 in 3-D)\n"
    "  --blocks B         sbm blocks, >= 1 (default 8; at most N)\n"
    "  --mix M            sbm fraction of edges between blocks, 0 .. 1 (default 0.1)\n"
    "  --shuffle          relabel the nodes by a random permutation (default for rmat,\n"
    "  --no-shuffle       powerlaw, ba; off for er, grid, sbm: blocks stay diagonal tiles)\n"
    "  --features F       feature columns of features.npy (default 0: no features.npy)\n"
    "  --density P        fraction of feature entries that are 1.0, the rest 0.0 (default 1)\n"
    "  --classes C        label classes, 1 .. 1000000 (default 7; sbm: the block mod C)\n"
    "  --out DIR          the directory to create (its parent must exist); written into\n"
    "                     DIR.tmp-XXXXXX and renamed, so DIR is never partial\n"
    "  --force            replace DIR if it is an earlier " PROG " output\n"
    "  --check DIR        load DIR with bgnn's loaders and verify: graph.mtx sorted, symmetric,\n"
    "                     no self loops or duplicates, one comment line; every file's node count;\n"
    "                     labels >= -1; splits sorted and disjoint.  Prints one line of statistics\n"
    "\n"
    "Splits: 20 nodes per class for train where there are enough, then 500 val and 1000 test\n"
    "(fewer when N runs out), drawn in a random order, each file sorted.\n"
    "Prints one line `wrote DIR: kind=... n=... nnz=... max_degree=...` (nnz: directed entries).\n"
    "exit status: 0 ok, 1 an error (I/O, memory, a failed check), 2 a usage error\n";

/* ---- messages ------------------------------------------------------------------------- */
_Noreturn static void usage_error(const char *fmt, ...) BG_PRINTF(1, 2);
_Noreturn static void usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, PROG ": error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(" PROG " --help for usage)\n");
    va_end(ap);
    exit(2);
}

static void note(const char *fmt, ...) BG_PRINTF(1, 2);
static void note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, PROG ": note: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

_Noreturn static void fatal(const char *fmt, ...) BG_PRINTF(1, 2);
_Noreturn static void fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, PROG ": error: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) fatal("out of memory (%zu bytes)", n);
    return p;
}
static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) fatal("out of memory (%zu x %zu bytes)", n, sz);
    return p;
}
static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) fatal("out of memory (%zu bytes)", n);
    return q;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- deterministic arithmetic ----------------------------------------------------------
 * Random numbers: splitmix64 (rmat_mix64 of a counter).  log and exp: range reduction
 * (frexp / ldexp are exact) and fixed-length series of +, -, *, /, every step rounded once
 * (the build has -ffp-contract=off), so every machine gets the same bits. */
typedef struct {
    uint64_t s;
} Rng;

static Rng rng_make(uint64_t seed, uint64_t stream) {
    return (Rng){rmat_mix64(seed ^ rmat_mix64(stream * 0xD1B54A32D192ED03ull))};
}
static uint64_t rng_next(Rng *r) {
    uint64_t x = rmat_mix64(r->s);
    r->s += 0x9E3779B97F4A7C15ull;
    return x;
}
static double u01(uint64_t x) { return (double)(x >> 11) * 0x1.0p-53; } /* [0, 1) */
static uint64_t below(uint64_t x, uint64_t n) { return ((x >> 32) * n) >> 32; } /* [0, n), n <= 2^32 */

enum { S_EDGES = 1, S_SHUFFLE, S_FEATURES, S_LABELS, S_SPLITS };

#define LN2 0.693147180559945309417232121458
#define SQRT_HALF 0.707106781186547524400844362105

/* 1/k for the series (exact decimal constants would round the same way everywhere too;
 * computed once by division, which IEEE rounds correctly). */
static double inv_odd[12], inv_fact[19];
static void det_init(void) {
    for (int j = 0; j < 12; j++) inv_odd[j] = 1.0 / (double)(2 * j + 1);
    inv_fact[0] = 1.0;
    for (int i = 1; i < 19; i++) inv_fact[i] = inv_fact[i - 1] / (double)i;
}

static double det_log(double x) { /* x > 0 finite; 0 -> -inf */
    if (x == 0.0) return -INFINITY;
    int e;
    double m = frexp(x, &e); /* [0.5, 1) */
    if (m < SQRT_HALF) {
        m *= 2.0;
        e--;
    } /* m in [sqrt(1/2), sqrt(2)): log m = 2 atanh(s) = 2 (s + s^3/3 + ...), s^2 <= 0.0295 */
    double s = (m - 1.0) / (m + 1.0), s2 = s * s, sum = inv_odd[11];
    for (int j = 10; j >= 0; j--) sum = sum * s2 + inv_odd[j];
    return 2.0 * s * sum + (double)e * LN2;
}

static double det_exp(double x) {
    if (x < -745.0) return 0.0;
    if (x > 709.0) x = 709.0;
    double k = floor(x / LN2 + 0.5), r = x - k * LN2; /* |r| <= ~0.35: 18 terms */
    double sum = inv_fact[18];
    for (int i = 17; i >= 0; i--) sum = sum * r + inv_fact[i];
    return ldexp(sum, (int)k);
}

/* ---- options ------------------------------------------------------------------------- */
typedef enum { K_ER, K_RMAT, K_GRID, K_POWERLAW, K_BA, K_SBM, K_COUNT } Kind;
static const char *const kind_names[K_COUNT] = {"er", "rmat", "grid", "powerlaw", "ba", "sbm"};

typedef struct {
    Kind kind;
    int64_t n;
    double degree;
    bool degree_set;
    uint64_t seed;
    double skew[4];
    bool skew_set;
    int dims;
    bool dims_set, diag;
    double gamma;
    bool gamma_set;
    int64_t blocks;
    bool blocks_set;
    double mix;
    bool mix_set;
    int shuffle; /* -1: the kind's default */
    int64_t features;
    double density;
    int64_t classes;
    const char *out;
    bool force;
} Opts;

static int64_t parse_int(const char *opt, const char *s, int64_t lo, int64_t hi) {
    char *e;
    errno = 0;
    long long v = strtoll(s, &e, 10);
    if (!*s || *e || errno == ERANGE || v < lo || v > hi)
        usage_error("%s expects a whole number %lld .. %lld, got '%s'", opt, (long long)lo, (long long)hi, s);
    return v;
}

static double parse_real(const char *opt, const char *s, double lo, double hi, bool lo_open) {
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (!*s || *e || errno == ERANGE || !isfinite(v) || v < lo || (lo_open && v == lo) || v > hi)
        usage_error("%s expects a number %s%g .. %g, got '%s'", opt, lo_open ? "> " : "", lo, hi, s);
    return v;
}

static uint64_t parse_seed(const char *s) {
    char *e;
    errno = 0;
    if (!*s || *s == '-' || *s == '+') usage_error("--seed expects a whole number 0 .. 2^64-1, got '%s'", s);
    unsigned long long v = strtoull(s, &e, 10);
    if (*e || errno == ERANGE) usage_error("--seed expects a whole number 0 .. 2^64-1, got '%s'", s);
    return v;
}

static void parse_skew(const char *s, double *p) {
    const char *q = s;
    double sum = 0.0;
    for (int i = 0; i < 4; i++) {
        char *e;
        errno = 0;
        p[i] = strtod(q, &e);
        if (e == q || errno == ERANGE || !isfinite(p[i]) || p[i] < 0.0 || (i < 3 ? *e != ',' : *e != 0))
            usage_error("--skew expects four probabilities a,b,c,d >= 0 summing to 1, got '%s'", s);
        sum += p[i];
        q = e + 1;
    }
    if (fabs(sum - 1.0) > 1e-6)
        usage_error("--skew expects four probabilities a,b,c,d >= 0 summing to 1, got '%s' (sum %g)", s, sum);
}

/* The shortest decimal that reads back as v (for the comment line). */
static void fmt_real(char *buf, size_t n, double v) {
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static bool default_shuffle(Kind k) { return k == K_RMAT || k == K_POWERLAW || k == K_BA; }

/* The canonical argument list (every effective value; no --out): graph.mtx's comment line
 * and the summary, so the same graph always carries the same text. */
static char *canonical_args(const Opts *o) {
    BgStrBuf b = {0};
    char r[4][40];
    bg_sb_printf(&b, "%s --nodes %lld", kind_names[o->kind], (long long)o->n);
    if (o->kind != K_GRID) {
        fmt_real(r[0], sizeof r[0], o->degree);
        bg_sb_printf(&b, " --degree %s", r[0]);
    }
    bg_sb_printf(&b, " --seed %llu", (unsigned long long)o->seed);
    if (o->kind == K_RMAT) {
        for (int i = 0; i < 4; i++) fmt_real(r[i], sizeof r[i], o->skew[i]);
        bg_sb_printf(&b, " --skew %s,%s,%s,%s", r[0], r[1], r[2], r[3]);
    }
    if (o->kind == K_GRID) bg_sb_printf(&b, " --dims %d%s", o->dims, o->diag ? " --diag" : "");
    if (o->kind == K_POWERLAW) {
        fmt_real(r[0], sizeof r[0], o->gamma);
        bg_sb_printf(&b, " --gamma %s", r[0]);
    }
    if (o->kind == K_SBM) {
        fmt_real(r[0], sizeof r[0], o->mix);
        bg_sb_printf(&b, " --blocks %lld --mix %s", (long long)o->blocks, r[0]);
    }
    bg_sb_printf(&b, " %s", o->shuffle ? "--shuffle" : "--no-shuffle");
    bg_sb_printf(&b, " --features %lld", (long long)o->features);
    if (o->features > 0) {
        fmt_real(r[0], sizeof r[0], o->density);
        bg_sb_printf(&b, " --density %s", r[0]);
    }
    bg_sb_printf(&b, " --classes %lld", (long long)o->classes);
    return bg_sb_take(&b);
}

/* ---- edge lists ---------------------------------------------------------------------- */
typedef struct {
    uint32_t *u, *v;
    int64_t n, cap;
} Edges;

static void edges_reserve(Edges *e, int64_t want) {
    if (want <= e->cap) return;
    int64_t c = e->cap ? e->cap : 1024;
    while (c < want) c *= 2;
    e->u = xrealloc(e->u, sizeof(uint32_t) * (size_t)c);
    e->v = xrealloc(e->v, sizeof(uint32_t) * (size_t)c);
    e->cap = c;
}
static inline void edge_push(Edges *e, int64_t u, int64_t v) {
    if (e->n == e->cap) edges_reserve(e, e->n + 1);
    e->u[e->n] = (uint32_t)u;
    e->v[e->n] = (uint32_t)v;
    e->n++;
}
static void edges_free(Edges *e) {
    free(e->u);
    free(e->v);
    memset(e, 0, sizeof *e);
}

/* The CSR graph of the undirected edges (u, v), u != v, both directions: bg_graph_from_coo
 * (loaders/graph.c) on parts of the rows at most PART_ENTRIES entries each (as bench/rmat.c
 * does; bounds the COO's memory), the parts' rows one after the other. */
static void build_graph(int64_t n, const Edges *e, BgGraph *g) {
    int64_t *cnt = xcalloc((size_t)n, sizeof(int64_t));
    int64_t total = 0;
    for (int64_t k = 0; k < e->n; k++)
        if (e->u[k] != e->v[k]) {
            cnt[e->u[k]]++;
            cnt[e->v[k]]++;
            total += 2;
        }
    memset(g, 0, sizeof *g);
    g->n = n;
    g->ngraphs = 1;
    g->rowptr = xmalloc(sizeof(int64_t) * (size_t)(n + 1));
    g->col = xmalloc(sizeof(int32_t) * (size_t)(total ? total : 1));
    int64_t cap = total < PART_ENTRIES ? total : PART_ENTRIES;
    for (int64_t i = 0; i < n; i++) cap = cnt[i] > cap ? cnt[i] : cap;
    BgCoo c = {n, n, 0, xmalloc(sizeof(int64_t) * (size_t)(cap ? cap : 1)),
               xmalloc(sizeof(int64_t) * (size_t)(cap ? cap : 1)), NULL};
    int64_t w = 0;
    g->rowptr[0] = 0;
    for (int64_t lo = 0; lo < n;) {
        int64_t hi = lo, sum = 0;
        while (hi < n && (hi == lo || sum + cnt[hi] <= PART_ENTRIES)) sum += cnt[hi++];
        c.nnz = 0;
        if (lo == 0 && hi == n) { /* one part: no range test */
            for (int64_t k = 0; k < e->n; k++) {
                int64_t u = e->u[k], v = e->v[k];
                if (u == v) continue;
                c.row[c.nnz] = u, c.col[c.nnz++] = v;
                c.row[c.nnz] = v, c.col[c.nnz++] = u;
            }
        } else {
            for (int64_t k = 0; k < e->n; k++) {
                int64_t u = e->u[k], v = e->v[k];
                if (u == v) continue;
                if (u >= lo && u < hi) c.row[c.nnz] = u, c.col[c.nnz++] = v;
                if (v >= lo && v < hi) c.row[c.nnz] = v, c.col[c.nnz++] = u;
            }
        }
        BgGraph p;
        BgDiagSink d;
        bg_diag_init(&d);
        if (!bg_graph_from_coo(&c, "generated graph", &p, &d)) {
            char *m = bg_diag_render(&d);
            fatal("%s", m ? m : "building the graph failed");
        }
        bg_diag_free(&d);
        for (int64_t i = lo; i < hi; i++) {
            int64_t len = p.rowptr[i + 1] - p.rowptr[i];
            memcpy(g->col + w, p.col + p.rowptr[i], sizeof(int32_t) * (size_t)len);
            w += len;
            g->rowptr[i + 1] = w;
        }
        bg_graph_free(&p);
        lo = hi;
    }
    free(c.row);
    free(c.col);
    free(cnt);
    g->nnz = w;
    if (w < total && w > 0) g->col = xrealloc(g->col, sizeof(int32_t) * (size_t)w);
}

/* ---- the generators ------------------------------------------------------------------ */
/* Geometric skip of Bernoulli(p) trials: failures before the next success (lq = log(1-p)). */
static int64_t geo_skip(Rng *r, double p, double lq) {
    if (p >= 1.0) return 0;
    double g = floor(det_log(1.0 - u01(rng_next(r))) / lq);
    return g > 4e18 ? (int64_t)4e18 : (int64_t)g;
}

/* The block of node i: block b holds nodes b n / B .. (b + 1) n / B - 1 (integer division). */
static int64_t sbm_block(int64_t i, int64_t blocks, int64_t n) { return ((i + 1) * blocks - 1) / n; }

/* Every pair w < v of nodes lo..hi-1 independently with probability p (Batagelj-Brandes skips,
 * pairs in the order (1,0), (2,0), (2,1), ...).  With blocks > 0 (sbm's edges between blocks),
 * pairs inside one block of the n nodes are dropped. */

static void sweep_pairs(Rng *r, int64_t lo, int64_t hi, double p, int64_t blocks, int64_t n, Edges *e) {
    int64_t s = hi - lo;
    if (p <= 0.0 || s < 2) return;
    if (p > 1.0) p = 1.0;
    double lq = p < 1.0 ? det_log(1.0 - p) : -INFINITY;
    int64_t v = 1, w = -1;
    while (v < s) {
        w += 1 + geo_skip(r, p, lq);
        while (w >= v && v < s) {
            w -= v;
            v++;
        }
        if (v < s && !(blocks > 0 && sbm_block(lo + v, blocks, n) == sbm_block(lo + w, blocks, n)))
            edge_push(e, lo + v, lo + w);
    }
}

/* The wanted number of undirected edges: N D / 2, at most N (N - 1) / 2. */
static int64_t target_edges(const Opts *o) {
    double pairs = (double)o->n * (double)(o->n - 1) / 2.0;
    double m = floor((double)o->n * o->degree / 2.0 + 0.5);
    return (int64_t)(m < pairs ? m : pairs);
}

static void gen_er(const Opts *o, Edges *e) {
    if (o->n < 2) return;
    Rng r = rng_make(o->seed, S_EDGES);
    double p = o->degree / (double)(o->n - 1);
    edges_reserve(e, target_edges(o) + 1024);
    sweep_pairs(&r, 0, o->n, p, 0, o->n, e);
}

static void gen_sbm(const Opts *o, Edges *e) {
    const int64_t n = o->n, B = o->blocks;
    if (n < 2) return;
    double in_pairs = 0.0, all_pairs = (double)n * (double)(n - 1) / 2.0;
    for (int64_t b = 0; b < B; b++) {
        double s = (double)((b + 1) * n / B - b * n / B);
        in_pairs += s * (s - 1.0) / 2.0;
    }
    double out_pairs = all_pairs - in_pairs, m = (double)n * o->degree / 2.0;
    double p_in = in_pairs > 0 ? (1.0 - o->mix) * m / in_pairs : 0.0;
    double p_out = out_pairs > 0 ? o->mix * m / out_pairs : 0.0;
    if (p_in > 1.0) note("sbm: p_in = %g capped at 1 (blocks too small for --degree and --mix)", p_in);
    if (p_out > 1.0) note("sbm: p_out = %g capped at 1", p_out);
    edges_reserve(e, target_edges(o) + 1024);
    Rng r = rng_make(o->seed, S_EDGES);
    for (int64_t b = 0; b < B; b++) sweep_pairs(&r, b * n / B, (b + 1) * n / B, p_in, 0, n, e);
    if (B > 1) sweep_pairs(&r, 0, n, p_out, B, n, e);
}

static void gen_grid(const Opts *o, Edges *e) {
    const int64_t n = o->n;
    int64_t ext[3] = {1, 1, 1}, side = 1;
    if (o->dims == 2) {
        while (side * side < n) side++;
        ext[0] = side;
        ext[1] = (n + side - 1) / side;
    } else {
        while (side * side * side < n) side++;
        ext[0] = ext[1] = side;
        ext[2] = (n + side * side - 1) / (side * side);
    }
    /* half of the neighbour offsets: the last nonzero component positive */
    int off[13][3], noff = 0;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                if (o->dims == 2 && dz != 0) continue;
                int last = dz ? dz : dy ? dy : dx;
                if (last <= 0) continue;
                if (!o->diag && abs(dx) + abs(dy) + abs(dz) != 1) continue;
                off[noff][0] = dx, off[noff][1] = dy, off[noff][2] = dz;
                noff++;
            }
    edges_reserve(e, n * noff);
    for (int64_t i = 0; i < n; i++) {
        int64_t x = i % ext[0], y = i / ext[0] % ext[1], z = i / (ext[0] * ext[1]);
        for (int k = 0; k < noff; k++) {
            int64_t X = x + off[k][0], Y = y + off[k][1], Z = z + off[k][2];
            if (X < 0 || X >= ext[0] || Y < 0 || Y >= ext[1] || Z < 0 || Z >= ext[2]) continue;
            int64_t j = (Z * ext[1] + Y) * ext[0] + X;
            if (j < n) edge_push(e, i, j);
        }
    }
}

static void gen_ba(const Opts *o, Edges *e) {
    const int64_t n = o->n;
    int64_t m = (int64_t)floor(o->degree / 2.0 + 0.5);
    if (m > n - 1) m = n - 1;
    if (m < 1) return;
    edges_reserve(e, m * (m + 1) / 2 + (n - m - 1) * m + 1);
    for (int64_t v = 1; v <= m; v++) /* a clique of nodes 0..m */
        for (int64_t w = 0; w < v; w++) edge_push(e, v, w);
    Rng r = rng_make(o->seed, S_EDGES);
    int64_t *pick = xmalloc(sizeof(int64_t) * (size_t)m);
    for (int64_t v = m + 1; v < n; v++) {
        /* m distinct targets, each an endpoint of a uniform edge end: probability ~ degree */
        int64_t got = 0;
        while (got < m) {
            uint64_t x = rng_next(&r);
            int64_t k = (int64_t)below(x, (uint64_t)e->n);
            int64_t t = (x & 1u) ? e->u[k] : e->v[k];
            bool dup = false;
            for (int64_t q = 0; q < got && !dup; q++) dup = pick[q] == t;
            if (!dup) pick[got++] = t;
        }
        for (int64_t q = 0; q < m; q++) edge_push(e, v, pick[q]);
    }
    free(pick);
}

/* R-MAT edge k: bench/rmat.h's rmat_edge with the quadrant thresholds of --skew and without its
 * scramble (ids keep the recursive order; --shuffle relabels), raw ids scaled onto [0, n). */
static void rmat_draw(const Opts *o, int scale, const uint32_t thr[3], uint64_t k, int64_t *u, int64_t *v) {
    uint64_t a = 0, b = 0, h = 0;
    for (int l = 0; l < scale; l++) {
        if ((l & 3) == 0) h = rmat_mix64(o->seed * 0x100000001B3ull + k * 8 + (uint64_t)(l >> 2));
        uint32_t x = (uint32_t)(h >> (16 * (l & 3))) & 0xffffu;
        uint32_t q = (uint32_t)(x >= thr[0]) + (uint32_t)(x >= thr[1]) + (uint32_t)(x >= thr[2]); /* no branch */
        a = (a << 1) | (q >> 1);
        b = (b << 1) | (q & 1u);
    }
    *u = (int64_t)((a * (uint64_t)o->n) >> scale);
    *v = (int64_t)((b * (uint64_t)o->n) >> scale);
}

/* Walker's alias table of the powerlaw weights (Vose's construction). */
typedef struct {
    double *prob;
    uint32_t *alias;
} Alias;

static Alias powerlaw_alias(const Opts *o) {
    const int64_t n = o->n;
    double beta = 1.0 / (o->gamma - 1.0), sum = 0.0;
    double *w = xmalloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        w[i] = det_exp(-beta * det_log((double)(i + 1)));
        sum += w[i];
    }
    Alias a = {xmalloc(sizeof(double) * (size_t)n), xmalloc(sizeof(uint32_t) * (size_t)n)};
    uint32_t *small = xmalloc(sizeof(uint32_t) * (size_t)n), *large = xmalloc(sizeof(uint32_t) * (size_t)n);
    int64_t ns = 0, nl = 0;
    for (int64_t i = 0; i < n; i++) {
        w[i] = w[i] * (double)n / sum;
        if (w[i] < 1.0) small[ns++] = (uint32_t)i;
        else large[nl++] = (uint32_t)i;
    }
    while (ns > 0 && nl > 0) {
        uint32_t s = small[--ns], l = large[--nl];
        a.prob[s] = w[s];
        a.alias[s] = l;
        w[l] = (w[l] + w[s]) - 1.0;
        if (w[l] < 1.0) small[ns++] = l;
        else large[nl++] = l;
    }
    while (nl > 0) {
        uint32_t l = large[--nl];
        a.prob[l] = 1.0, a.alias[l] = l;
    }
    while (ns > 0) {
        uint32_t s = small[--ns];
        a.prob[s] = 1.0, a.alias[s] = s;
    }
    free(w);
    free(small);
    free(large);
    return a;
}

static inline int64_t alias_draw(const Alias *a, Rng *r, int64_t n) {
    uint64_t x = rng_next(r);
    int64_t i = (int64_t)below(x, (uint64_t)n);
    return (double)(x & 0xffffffffu) * 0x1.0p-32 < a->prob[i] ? i : a->alias[i];
}

/* A set of undirected edges (open addressing; key min << 32 | max, never 0). */
typedef struct {
    uint64_t *slot;
    uint64_t mask;
} EdgeSet;

static bool set_insert(EdgeSet *s, uint64_t key, uint64_t h) { /* h = rmat_mix64(key) & mask */
    while (s->slot[h]) {
        if (s->slot[h] == key) return false;
        h = (h + 1) & s->mask;
    }
    s->slot[h] = key;
    return true;
}

/* rmat and powerlaw: edges drawn with replacement (R-MAT edge k, or two endpoints by weight)
 * until N D / 2 distinct ones (self loops and repeats skipped): the first that many distinct
 * edges of the stream.  At most 16 N D / 2 + 1024 draws (a saturated skew gets fewer edges). */
static void gen_sampled(const Opts *o, Edges *e) {
    const int64_t n = o->n, target = target_edges(o);
    if (target == 0) return;
    int scale = 0;
    while (((int64_t)1 << scale) < n) scale++;
    uint32_t thr[3] = {0, 0, 0};
    double acc = 0.0;
    for (int i = 0; i < 3; i++) {
        acc += o->skew[i];
        double t = floor(acc * 65536.0 + 0.5);
        thr[i] = (uint32_t)(t > 65536.0 ? 65536.0 : t);
    }
    Alias al = {NULL, NULL};
    if (o->kind == K_POWERLAW) al = powerlaw_alias(o);
    Rng r = rng_make(o->seed, S_EDGES);
    uint64_t cap = 1024;
    while (cap / 4 * 3 < (uint64_t)target) cap *= 2;
    /* zeroed, on huge pages where the kernel allows (random probes: TLB misses dominate) */
    EdgeSet set = {NULL, cap - 1};
    if (posix_memalign((void **)&set.slot, (size_t)1 << 21, (size_t)cap * sizeof(uint64_t)) != 0)
        fatal("out of memory (%llu edge slots)", (unsigned long long)cap);
#ifdef MADV_HUGEPAGE
    madvise(set.slot, (size_t)cap * sizeof(uint64_t), MADV_HUGEPAGE);
#endif
    memset(set.slot, 0, (size_t)cap * sizeof(uint64_t));
    edges_reserve(e, target);
    const int64_t limit = 16 * target + 1024;
    int64_t k = 0;
    enum { BATCH = 64 }; /* draws hashed and their slots prefetched ahead, inserted in order */
    uint64_t key[BATCH], slot[BATCH];
    int64_t bu[BATCH], bv[BATCH];
    while (k < limit && e->n < target) {
        int nb = limit - k < BATCH ? (int)(limit - k) : BATCH;
        for (int i = 0; i < nb; i++) {
            int64_t u, v;
            if (o->kind == K_RMAT) rmat_draw(o, scale, thr, (uint64_t)(k + i), &u, &v);
            else u = alias_draw(&al, &r, n), v = alias_draw(&al, &r, n);
            bu[i] = u, bv[i] = v;
            key[i] = u < v ? (uint64_t)u << 32 | (uint64_t)v : (uint64_t)v << 32 | (uint64_t)u;
            slot[i] = rmat_mix64(key[i]) & set.mask;
#if defined(__GNUC__)
            __builtin_prefetch(&set.slot[slot[i]], 1);
#endif
        }
        for (int i = 0; i < nb && e->n < target; i++, k++)
            if (bu[i] != bv[i] && set_insert(&set, key[i], slot[i])) edge_push(e, bu[i], bv[i]);
    }
    if (e->n < target)
        note("%s: %lld distinct edges after %lld draws, not %lld (the distribution saturates)", kind_names[o->kind],
             (long long)e->n, (long long)k, (long long)target);
    free(set.slot);
    free(al.prob);
    free(al.alias);
}

/* ---- relabelling, labels, splits ------------------------------------------------------ */
static uint32_t *random_permutation(int64_t n, uint64_t seed, uint64_t stream) {
    uint32_t *p = xmalloc(sizeof(uint32_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) p[i] = (uint32_t)i;
    Rng r = rng_make(seed, stream);
    for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int64_t j = (int64_t)below(rng_next(&r), (uint64_t)(i + 1));
        uint32_t t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    return p;
}

/* ---- output files ------------------------------------------------------------------- */
static const char *const out_files[] = {"graph.mtx", "features.npy", "labels.npy",
                                        "train_idx.npy", "val_idx.npy", "test_idx.npy"};
#define NOUT ((int)(sizeof out_files / sizeof out_files[0]))

/* The temporary directory and its files, removed by the signal handler (async-signal-safe
 * unlink / rmdir on paths made before any file is written). */
static char *g_tmpdir;
static char *g_tmpfile[NOUT];

static void remove_tmp(void) {
    if (!g_tmpdir) return;
    for (int i = 0; i < NOUT; i++)
        if (g_tmpfile[i]) unlink(g_tmpfile[i]);
    rmdir(g_tmpdir);
}

static void on_signal(int sig) {
    remove_tmp();
    signal(sig, SIG_DFL);
    raise(sig);
}

static char *join(const char *dir, const char *name) {
    BgStrBuf b = {0};
    bg_sb_printf(&b, "%s/%s", dir, name);
    return bg_sb_take(&b);
}

/* .npy v1.0 header, as bg_npy_save_f32 writes it (loaders/io_npy.c): padded to 64 bytes. */
static bool npy_header(FILE *f, const char *descr, int rank, const int64_t *dim) {
    char hdr[256];
    int n = rank == 1 ? snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld,), }",
                                 descr, (long long)dim[0])
                      : snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %lld), }",
                                 descr, (long long)dim[0], (long long)dim[1]);
    int total = (10 + n + 1 + 63) / 64 * 64, hlen = total - 10;
    unsigned char pre[320];
    memcpy(pre, "\x93NUMPY\x01\x00", 8);
    pre[8] = (unsigned char)(hlen & 0xff);
    pre[9] = (unsigned char)(hlen >> 8);
    memcpy(pre + 10, hdr, (size_t)n);
    memset(pre + 10 + n, ' ', (size_t)(hlen - n - 1));
    pre[total - 1] = '\n';
    return fwrite(pre, 1, (size_t)total, f) == (size_t)total;
}

/* Little-endian integers of `bytes` bytes each. */
static bool write_ints_le(FILE *f, const int64_t *v, int64_t n, int bytes) {
    unsigned char buf[8192];
    size_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t x = (uint64_t)v[i];
        for (int q = 0; q < bytes; q++) buf[k++] = (unsigned char)(x >> (8 * q));
        if (k + 8 > sizeof buf) {
            if (fwrite(buf, 1, k, f) != k) return false;
            k = 0;
        }
    }
    return fwrite(buf, 1, k, f) == k;
}

static FILE *open_out(int i) {
    FILE *f = fopen(g_tmpfile[i], "wb");
    if (!f) {
        fprintf(stderr, PROG ": error: %s: cannot create: %s\n", g_tmpfile[i], strerror(errno));
        return NULL;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}
static bool close_out(FILE *f, int i, bool ok) {
    if (fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, PROG ": error: %s: write failed: %s\n", g_tmpfile[i], strerror(errno));
    return ok;
}

static char *put_u64(char *p, uint64_t x) {
    char t[24];
    int k = 0;
    do t[k++] = (char)('0' + x % 10);
    while ((x /= 10) != 0);
    while (k) *p++ = t[--k];
    return p;
}

static bool write_mtx(const BgGraph *g, const char *comment) {
    FILE *f = open_out(0);
    if (!f) return false;
    bool ok = fprintf(f, "%%%%MatrixMarket matrix coordinate pattern general\n%% %s\n%lld %lld %lld\n", comment,
                      (long long)g->n, (long long)g->n, (long long)g->nnz) > 0;
    enum { CAP = 1 << 20 };
    char *buf = xmalloc(CAP + 64), *p = buf;
    for (int64_t i = 0; i < g->n && ok; i++) {
        char row[24];
        char *re = put_u64(row, (uint64_t)i + 1);
        *re++ = ' ';
        size_t rl = (size_t)(re - row);
        for (int64_t k = g->rowptr[i]; k < g->rowptr[i + 1]; k++) {
            memcpy(p, row, rl);
            p = put_u64(p + rl, (uint64_t)g->col[k] + 1);
            *p++ = '\n';
            if (p - buf > CAP) {
                ok = fwrite(buf, 1, (size_t)(p - buf), f) == (size_t)(p - buf);
                p = buf;
                if (!ok) break;
            }
        }
    }
    if (ok && p > buf) ok = fwrite(buf, 1, (size_t)(p - buf), f) == (size_t)(p - buf);
    free(buf);
    return close_out(f, 0, ok);
}

/* Feature (i, c) is 1.0 with probability P: a hash of (seed, i * F + c) below P * 2^53. */
static bool write_features(const Opts *o) {
    FILE *f = open_out(1);
    if (!f) return false;
    const int64_t n = o->n, F = o->features;
    int64_t dim[2] = {n, F};
    bool ok = npy_header(f, "<f4", 2, dim);
    const uint64_t thr = (uint64_t)(o->density * 0x1.0p53);
    const bool constant = o->density <= 0.0 || o->density >= 1.0;
    const uint64_t key = rmat_mix64(o->seed ^ 0x6665617475726573ull);
    int64_t rows = (1 << 20) / (4 * F) + 1; /* rows per write */
    if (rows > n) rows = n;
    float *buf = xmalloc(sizeof(float) * (size_t)(rows * F));
    if (constant)
        for (int64_t k = 0; k < rows * F; k++) buf[k] = o->density >= 1.0 ? 1.0f : 0.0f;
    for (int64_t i0 = 0; i0 < n && ok; i0 += rows) {
        int64_t i1 = i0 + rows < n ? i0 + rows : n;
        if (!constant)
            for (int64_t i = i0; i < i1; i++)
                for (int64_t c = 0; c < F; c++)
                    buf[(i - i0) * F + c] = (rmat_mix64(key + (uint64_t)(i * F + c)) >> 11) < thr ? 1.0f : 0.0f;
        ok = bg_write_f32_le(f, buf, (size_t)((i1 - i0) * F));
    }
    free(buf);
    return close_out(f, 1, ok);
}

static bool write_ints(int i, const int64_t *v, int64_t n, int bytes) {
    FILE *f = open_out(i);
    if (!f) return false;
    bool ok = npy_header(f, bytes == 4 ? "<i4" : "<i8", 1, &n) && write_ints_le(f, v, n, bytes);
    return close_out(f, i, ok);
}

/* ---- the output directory ------------------------------------------------------------ */
/* Whether dir is an earlier output of this tool (its graph.mtx's second line names it) and
 * holds only the files it writes. */
static bool is_our_dir(const char *dir) {
    char *p = join(dir, "graph.mtx");
    FILE *f = fopen(p, "rb");
    free(p);
    if (!f) return false;
    char l1[128], l2[64];
    bool ok = fgets(l1, sizeof l1, f) && fgets(l2, sizeof l2, f) && strncmp(l2, "% " PROG " ", strlen(PROG) + 3) == 0;
    fclose(f);
    return ok;
}

static bool remove_our_dir(const char *dir) {
    for (int i = 0; i < NOUT; i++) {
        char *p = join(dir, out_files[i]);
        if (unlink(p) != 0 && errno != ENOENT) {
            fprintf(stderr, PROG ": error: %s: cannot remove: %s\n", p, strerror(errno));
            free(p);
            return false;
        }
        free(p);
    }
    if (rmdir(dir) != 0) {
        fprintf(stderr, PROG ": error: %s: cannot remove (files other than " PROG "'s?): %s\n", dir,
                strerror(errno));
        return false;
    }
    return true;
}

/* ---- generate ------------------------------------------------------------------------ */
/* Edges first..e->n-1 renamed: node i becomes perm[i] (--shuffle). */
static void relabel(Edges *e, int64_t first, const uint32_t *perm) {
    if (!perm) return;
    for (int64_t k = first; k < e->n; k++) {
        e->u[k] = perm[e->u[k]];
        e->v[k] = perm[e->v[k]];
    }
}

static int generate(Opts *o) {
    double t0 = now_s();
    const int64_t n = o->n;
    Edges e = {0};
    BgGraph g;
    uint32_t *perm = o->shuffle && n > 1 ? random_permutation(n, o->seed, S_SHUFFLE) : NULL;
    if (o->kind == K_ER) gen_er(o, &e);
    else if (o->kind == K_SBM) gen_sbm(o, &e);
    else if (o->kind == K_GRID) gen_grid(o, &e);
    else if (o->kind == K_BA) gen_ba(o, &e);
    else gen_sampled(o, &e);
    relabel(&e, 0, perm);
    build_graph(n, &e, &g);
    edges_free(&e);
    /* labels (in the generated ids, then renamed): sbm the block mod C, else uniform */
    int64_t *lab = xmalloc(sizeof(int64_t) * (size_t)n);
    Rng rl = rng_make(o->seed, S_LABELS);
    for (int64_t i = 0; i < n; i++) {
        int64_t l = o->kind == K_SBM ? sbm_block(i, o->blocks, n) % o->classes
                                     : (int64_t)below(rng_next(&rl), (uint64_t)o->classes);
        lab[perm ? perm[i] : (uint32_t)i] = l;
    }
    free(perm);

    /* splits: nodes in a random order; 20 per class to train, then 500 val, 1000 test */
    uint8_t *which = xcalloc((size_t)n, 1);
    {
        uint32_t *ord = random_permutation(n, o->seed, S_SPLITS);
        int64_t *per = xcalloc((size_t)o->classes, sizeof(int64_t));
        for (int64_t k = 0; k < n; k++)
            if (per[lab[ord[k]]] < 20) {
                per[lab[ord[k]]]++;
                which[ord[k]] = 1;
            }
        int64_t nv = 0, nt = 0;
        for (int64_t k = 0; k < n && nt < 1000; k++) {
            if (which[ord[k]]) continue;
            if (nv < 500) which[ord[k]] = 2, nv++;
            else which[ord[k]] = 3, nt++;
        }
        free(per);
        free(ord);
    }
    int64_t nsplit[3] = {0, 0, 0};
    int64_t *split[3] = {xmalloc(sizeof(int64_t) * (size_t)(20 * o->classes < n ? 20 * o->classes : n)),
                         xmalloc(sizeof(int64_t) * 500), xmalloc(sizeof(int64_t) * 1000)};
    for (int64_t i = 0; i < n; i++)
        if (which[i]) split[which[i] - 1][nsplit[which[i] - 1]++] = i;
    free(which);

    /* write DIR.tmp-XXXXXX, then rename it to DIR; the signals that remove it are held from
     * before it exists until their handler is in place (a SIGTERM in between left it behind) */
    char *args = canonical_args(o);
    sigset_t held, before;
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGTERM);
    sigaddset(&held, SIGHUP);
    sigprocmask(SIG_BLOCK, &held, &before);
    BgStrBuf tb = {0};
    bg_sb_printf(&tb, "%s.tmp-XXXXXX", o->out);
    g_tmpdir = bg_sb_take(&tb);
    if (!mkdtemp(g_tmpdir)) fatal("--out %s: cannot create %s: %s", o->out, g_tmpdir, strerror(errno));
    mode_t mask = umask(0);
    umask(mask);
    chmod(g_tmpdir, 0777 & ~mask); /* mkdtemp's 0700 -> as mkdir would make it */
    for (int i = 0; i < NOUT; i++) g_tmpfile[i] = join(g_tmpdir, out_files[i]);
    atexit(remove_tmp); /* a fatal error (out of memory) while writing */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigprocmask(SIG_SETMASK, &before, NULL); /* one that came meanwhile runs on_signal now */
    char comment[1024];
    snprintf(comment, sizeof comment, PROG " %s", args);
    bool ok = write_mtx(&g, comment);

    if (ok && o->features > 0) ok = write_features(o);
    ok = ok && write_ints(2, lab, n, 4);
    for (int s = 0; s < 3 && ok; s++) ok = write_ints(3 + s, split[s], nsplit[s], 8);
    if (ok) {
        struct stat st;
        char *old = NULL;
        if (lstat(o->out, &st) == 0) { /* --force (checked at the start): move the old one aside */
            BgStrBuf ob = {0};
            bg_sb_printf(&ob, "%s.old-XXXXXX", o->out);
            old = bg_sb_take(&ob);
            if (!mkdtemp(old) || rename(o->out, old) != 0) {
                fprintf(stderr, PROG ": error: --out %s: cannot move the old directory aside: %s\n", o->out,
                        strerror(errno));
                if (old) rmdir(old);
                ok = false;
            }
        }
        if (ok && rename(g_tmpdir, o->out) != 0) {
            fprintf(stderr, PROG ": error: --out %s: cannot rename %s to it: %s\n", o->out, g_tmpdir, strerror(errno));
            ok = false;
            if (old) rename(old, o->out);
        }
        if (ok && old && !remove_our_dir(old)) note("the replaced directory is left at %s", old);
        free(old);
    }
    if (!ok) remove_tmp();
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    int64_t maxdeg = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t d = g.rowptr[i + 1] - g.rowptr[i];
        maxdeg = d > maxdeg ? d : maxdeg;
    }
    if (ok)
        printf("wrote %s: kind=%s n=%lld nnz=%lld mean_degree=%.3f max_degree=%lld features=%lld classes=%lld "
               "train=%lld val=%lld test=%lld seconds=%.2f args=\"%s\"\n",
               o->out, kind_names[o->kind], (long long)n, (long long)g.nnz, (double)g.nnz / (double)n,
               (long long)maxdeg, (long long)o->features, (long long)o->classes, (long long)nsplit[0],
               (long long)nsplit[1], (long long)nsplit[2], now_s() - t0, args);
    free(args);
    char *tmpdir = g_tmpdir;
    g_tmpdir = NULL; /* renamed or removed: nothing left for remove_tmp */
    free(tmpdir);
    for (int i = 0; i < NOUT; i++) free(g_tmpfile[i]), g_tmpfile[i] = NULL;
    for (int s = 0; s < 3; s++) free(split[s]);
    free(lab);
    bg_graph_free(&g);
    return ok ? 0 : 1;
}

/* ---- --check ------------------------------------------------------------------------- */
static int check_fail(const char *dir, const char *fmt, ...) BG_PRINTF(2, 3);
static int check_fail(const char *dir, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, PROG ": error: --check %s: ", dir);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static int check_dir(const char *dir) {
    char *path = join(dir, "graph.mtx");
    /* the header, exactly one comment line, then the size line */
    FILE *f = fopen(path, "rb");
    if (!f) {
        int rc = check_fail(dir, "%s: cannot open: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    char *l[3] = {NULL, NULL, NULL};
    size_t cap[3] = {0, 0, 0};
    bool three = getline(&l[0], &cap[0], f) > 0 && getline(&l[1], &cap[1], f) > 0 && getline(&l[2], &cap[2], f) > 0;
    fclose(f);
    bool good = three && strncmp(l[0], "%%MatrixMarket matrix coordinate pattern general", 48) == 0 &&
                l[1][0] == '%' && l[2][0] != '%';
    for (int i = 0; i < 3; i++) free(l[i]);
    if (!good) {
        int rc = check_fail(dir, "graph.mtx: expected the pattern general header, one %% comment line, then the "
                                 "size line");
        free(path);
        return rc;
    }
    BgDiagSink d;
    bg_diag_init(&d);
    BgCoo c;
    BgGraph g = {0};
    BgDataset ds;
    memset(&ds, 0, sizeof ds);
    int rc = 0;
    if (!bg_mtx_load(path, &c, &d)) {
        char *m = bg_diag_render(&d);
        rc = check_fail(dir, "%s", m ? m : "graph.mtx does not load");
        free(m);
        bg_diag_free(&d);
        free(path);
        return rc;
    }
    free(path);
    if (c.nrows != c.ncols) rc = check_fail(dir, "graph.mtx: %lld x %lld is not square", (long long)c.nrows, (long long)c.ncols);
    for (int64_t k = 0; k < c.nnz && !rc; k++) {
        if (c.row[k] == c.col[k])
            rc = check_fail(dir, "graph.mtx: entry %lld is a self loop (%lld %lld)", (long long)k + 1,
                            (long long)c.row[k] + 1, (long long)c.col[k] + 1);
        else if (k > 0 && (c.row[k] < c.row[k - 1] || (c.row[k] == c.row[k - 1] && c.col[k] <= c.col[k - 1])))
            rc = check_fail(dir, "graph.mtx: entry %lld (%lld %lld) %s entry %lld (%lld %lld)", (long long)k + 1,
                            (long long)c.row[k] + 1, (long long)c.col[k] + 1,
                            c.row[k] == c.row[k - 1] && c.col[k] == c.col[k - 1] ? "duplicates" : "is not sorted after",
                            (long long)k, (long long)c.row[k - 1] + 1, (long long)c.col[k - 1] + 1);
    }
    if (!rc && !bg_graph_from_coo(&c, "graph.mtx", &g, &d)) {
        char *m = bg_diag_render(&d);
        rc = check_fail(dir, "%s", m ? m : "graph.mtx: not a graph");
        free(m);
    }
    bg_coo_free(&c);
    int64_t maxdeg = 0, isolated = 0;
    for (int64_t i = 0; i < g.n && !rc; i++) {
        int64_t deg = g.rowptr[i + 1] - g.rowptr[i];
        maxdeg = deg > maxdeg ? deg : maxdeg;
        isolated += deg == 0;
        for (int64_t k = g.rowptr[i]; k < g.rowptr[i + 1] && !rc; k++) {
            int64_t j = g.col[k], lo = g.rowptr[j], hi = g.rowptr[j + 1];
            while (lo < hi) { /* i in row j */
                int64_t mid = lo + (hi - lo) / 2;
                if (g.col[mid] < i) lo = mid + 1;
                else hi = mid;
            }
            if (lo == g.rowptr[j + 1] || g.col[lo] != i)
                rc = check_fail(dir, "graph.mtx: not symmetric: (%lld %lld) without (%lld %lld)", (long long)i + 1,
                                (long long)j + 1, (long long)j + 1, (long long)i + 1);
        }
    }
    /* every file as bgnnc run --data reads it */
    if (!rc && !bg_dataset_load(dir, &ds, &d)) {
        char *m = bg_diag_render(&d);
        rc = check_fail(dir, "%s", m ? m : "does not load");
        free(m);
    }
    if (!rc && ds.graph.nnz != g.nnz) rc = check_fail(dir, "the data directory's graph differs from graph.mtx");
    int64_t classes = 0, nonzero = 0, F = ds.features.rank == 2 ? ds.features.dim[1] : 0;
    if (!rc && ds.labels)
        for (int64_t i = 0; i < g.n; i++) classes = ds.labels[i] + 1 > classes ? ds.labels[i] + 1 : classes;
    if (!rc && F > 0) {
        const float *x = ds.features.data;
        for (int64_t k = 0; k < g.n * F; k++) nonzero += x[k] != 0.0f;
    }
    uint8_t *seen = rc ? NULL : xcalloc((size_t)g.n, 1);
    static const char *const sname[3] = {"train_idx.npy", "val_idx.npy", "test_idx.npy"};
    for (int s = 0; s < 3 && !rc; s++)
        for (int64_t k = 0; k < ds.nsplit[s] && !rc; k++) {
            int64_t v = ds.split[s][k];
            if (k > 0 && v <= ds.split[s][k - 1])
                rc = check_fail(dir, "%s: entry %lld (%lld) is not greater than entry %lld (%lld)", sname[s],
                                (long long)k, (long long)v, (long long)k - 1, (long long)ds.split[s][k - 1]);
            else if (seen[v])
                rc = check_fail(dir, "%s: node %lld is in %s too", sname[s], (long long)v, sname[seen[v] - 1]);
            else seen[v] = (uint8_t)(s + 1);
        }
    free(seen);
    if (!rc)
        printf("ok %s: n=%lld nnz=%lld mean_degree=%.3f max_degree=%lld isolated=%lld features=%lld density=%.4f "
               "classes=%lld train=%lld val=%lld test=%lld\n",
               dir, (long long)g.n, (long long)g.nnz, g.n ? (double)g.nnz / (double)g.n : 0.0, (long long)maxdeg,
               (long long)isolated, (long long)F, F && g.n ? (double)nonzero / ((double)g.n * (double)F) : 0.0,
               (long long)classes, (long long)ds.nsplit[0], (long long)ds.nsplit[1], (long long)ds.nsplit[2]);
    bg_dataset_free(&ds);
    bg_graph_free(&g);
    bg_diag_free(&d);
    return rc;
}

/* ---- main ----------------------------------------------------------------------------- */
int main(int argc, char **argv) {
    det_init();
    Opts o = {.kind = K_COUNT, .n = -1, .degree = 16.0, .seed = 1, .skew = {0.57, 0.19, 0.19, 0.05}, .dims = 2,
              .gamma = 2.1, .blocks = 8, .mix = 0.1, .shuffle = -1, .features = 0, .density = 1.0, .classes = 7};
    const char *check = NULL;
    bool density_set = false, other = false;
    if (argc < 2) {
        fputs(usage_text, stderr);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        char name[64];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (strncmp(a, "--check", 7) != 0) other = true;
        if (a[0] != '-' || a[1] == 0) { /* the kind */
            if (o.kind != K_COUNT) usage_error("one KIND only, got '%s' and '%s'", kind_names[o.kind], a);
            for (int k = 0; k < K_COUNT; k++)
                if (strcmp(a, kind_names[k]) == 0) o.kind = (Kind)k;
            if (o.kind == K_COUNT) usage_error("unknown KIND '%s' (er, rmat, grid, powerlaw, ba or sbm)", a);
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (nl >= sizeof name) usage_error("unknown option '%s'", a);
        memcpy(name, a, nl);
        name[nl] = 0;
        /* flags */
        if (strcmp(name, "--diag") == 0 || strcmp(name, "--shuffle") == 0 || strcmp(name, "--no-shuffle") == 0 ||
            strcmp(name, "--force") == 0) {
            if (eq) usage_error("%s takes no value", name);
            if (name[2] == 'd') o.diag = true;
            else if (name[2] == 's') o.shuffle = 1;
            else if (name[2] == 'n') o.shuffle = 0;
            else o.force = true;
            continue;
        }
        static const char *const valued[] = {"--nodes",  "--degree", "--seed",    "--skew",    "--gamma",
                                             "--dims",   "--blocks", "--mix",     "--features", "--density",
                                             "--classes", "--out",   "--check"};
        bool known = false;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) known = known || strcmp(name, valued[k]) == 0;
        if (!known) usage_error("unknown option '%s'", a);
        if (eq) val = eq + 1;
        else if (i + 1 < argc) val = argv[++i];
        else usage_error("%s needs a value", name);
        if (strcmp(name, "--nodes") == 0) o.n = parse_int(name, val, 1, MAX_NODES);
        else if (strcmp(name, "--degree") == 0) o.degree = parse_real(name, val, 0.0, 1e9, false), o.degree_set = true;
        else if (strcmp(name, "--seed") == 0) o.seed = parse_seed(val);
        else if (strcmp(name, "--skew") == 0) parse_skew(val, o.skew), o.skew_set = true;
        else if (strcmp(name, "--gamma") == 0) o.gamma = parse_real(name, val, 1.0, 100.0, true), o.gamma_set = true;
        else if (strcmp(name, "--dims") == 0) o.dims = (int)parse_int(name, val, 2, 3), o.dims_set = true;
        else if (strcmp(name, "--blocks") == 0) o.blocks = parse_int(name, val, 1, MAX_NODES), o.blocks_set = true;
        else if (strcmp(name, "--mix") == 0) o.mix = parse_real(name, val, 0.0, 1.0, false), o.mix_set = true;
        else if (strcmp(name, "--features") == 0) o.features = parse_int(name, val, 0, MAX_FEATURES);
        else if (strcmp(name, "--density") == 0) o.density = parse_real(name, val, 0.0, 1.0, false), density_set = true;
        else if (strcmp(name, "--classes") == 0) o.classes = parse_int(name, val, 1, 1000000);
        else if (strcmp(name, "--out") == 0) {
            if (!*val) usage_error("--out needs a directory name");
            o.out = val;
        } else check = val;
    }
    if (check) {
        if (other) usage_error("--check DIR takes no other arguments");
        return check_dir(check);
    }
    if (o.kind == K_COUNT) usage_error("no KIND given (er, rmat, grid, powerlaw, ba or sbm)");
    if (o.n < 0) usage_error("--nodes N is required");
    if (!o.out) usage_error("--out DIR is required");
    /* options that belong to another kind */
    struct {
        bool set;
        const char *opt;
        Kind kind;
    } own[] = {{o.skew_set, "--skew", K_RMAT},     {o.gamma_set, "--gamma", K_POWERLAW}, {o.dims_set, "--dims", K_GRID},
               {o.diag, "--diag", K_GRID},         {o.blocks_set, "--blocks", K_SBM},     {o.mix_set, "--mix", K_SBM}};
    for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
        if (own[k].set && o.kind != own[k].kind)
            usage_error("%s applies to %s graphs only, not %s", own[k].opt, kind_names[own[k].kind], kind_names[o.kind]);
    if (density_set && o.features == 0) usage_error("--density needs --features F > 0");
    if (o.kind == K_GRID && o.degree_set) note("--degree is ignored for grid graphs (the lattice fixes the degree)");
    if (o.kind == K_BA && o.degree < 1.0) usage_error("--degree must be at least 1 for ba (m = round(D/2) >= 1 edges a node)");
    if (o.kind != K_GRID && o.degree > (double)(o.n - 1)) {
        if (o.degree_set) note("--degree %g is over N - 1 = %lld: a complete graph", o.degree, (long long)o.n - 1);
        o.degree = (double)(o.n - 1);
    }
    if (o.kind == K_SBM && o.blocks > o.n) {
        if (o.blocks_set) note("--blocks %lld is over --nodes %lld: %lld blocks", (long long)o.blocks, (long long)o.n,
                               (long long)o.n);
        o.blocks = o.n;
    }
    if (o.shuffle < 0) o.shuffle = default_shuffle(o.kind);
    double entries = o.kind == K_GRID ? (double)o.n * (o.diag ? (o.dims == 2 ? 8 : 26) : 2 * o.dims)
                                      : (double)o.n * o.degree;
    if (entries > (double)MAX_ENTRIES)
        usage_error("--nodes %lld with --degree %g gives about %.3g directed edges, over the limit of %lld",
                    (long long)o.n, o.degree, entries, (long long)MAX_ENTRIES);
    if ((double)o.n * (double)o.features > (double)((int64_t)1 << 31))
        usage_error("--features %lld with --nodes %lld is %.3g floats, over the limit of 2^31 (8 GiB)",
                    (long long)o.features, (long long)o.n, (double)o.n * (double)o.features);
    /* the output path: no trailing '/', the parent must exist, DIR must not (unless --force) */
    size_t ol = strlen(o.out);
    char *out = xmalloc(ol + 1);
    memcpy(out, o.out, ol + 1);
    while (ol > 1 && out[ol - 1] == '/') out[--ol] = 0;
    o.out = out;
    struct stat st;
    if (lstat(out, &st) == 0) {
        if (!o.force) usage_error("--out %s already exists (--force replaces an earlier " PROG " output)", out);
        if (!S_ISDIR(st.st_mode) || !is_our_dir(out))
            usage_error("--out %s exists and is not an earlier " PROG " output: not replaced", out);
    }
    {
        char *parent = xmalloc(ol + 2);
        memcpy(parent, out, ol + 1);
        char *slash = strrchr(parent, '/');
        if (!slash) strcpy(parent, ".");
        else if (slash == parent) parent[1] = 0;
        else *slash = 0;
        if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
            usage_error("--out %s: the parent directory %s does not exist", out, parent);
        free(parent);
    }
    int rc = generate(&o);
    free(out);
    return rc;
}
