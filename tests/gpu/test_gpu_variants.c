/* test_gpu_variants.c - every kernel variant x every bspmm reconciliation method on the GPU
 * against the CPU reference interpreter, on awkward shapes.
 *
 * The matrix.  One model per width combination (K = the input width: F activations, bmm
 * inputs; M = the bmm output width: B activations), each holding every variant as its own
 * output: bin; bmm.XYZ for all 8 X, Y, Z (f32 weights plain and .T, b1 weights .T and plain);
 * bspmm.XYZ for X in {F (the input), B (bmm.FBB's bits)} x adjacency {B over norm none /
 * mean / sym, self loops off and on; F: per-edge weights of one declaration per model} x
 * Z in {F, B} x method {ifelse, andnot, popc2, auto}; add.FFF / add.FFB (tensor + tensor
 * and + bias vector), add.BBF, add.BBB; concat of F and of B values; log_softmax of K and of M
 * columns; and a few fused forms
 * the passes make (bspmm.BBB + bias per method, bspmm + relu, bmm + batchnorm prologue,
 * bmm.FBF / bmm.FBB / bmm.BBB + bias), and bmm.BBF / bmm.BBB / bmm.BBB + bias on the bit tensor cores (path: tc,
 * templates/bmm_bb_tc.cuh), and where K is a multiple of 128 the same and bmm.BBF with Bi-GCN's
 * row and column scales on the warpgroup tensor cores (path: wgmma, templates/bmm_bb_wgs.cuh;
 * on sm_90 only: elsewhere the plan gives them mma.sync's kernel).  Before anything runs, each output's producer in the compiled IR is
 * checked to be the op, precisions, adjacency and method it is meant to test.
 * Widths (K, M): (1, 1), (31, 32), (257, 7), (100, 130), (128, 33), (600, 33), (1000, 7: the
 * wide form of a row group, the aggregation's bin and absmean in its epilogue), (384, 288: the
 * wgmma product's whole 128 x 256 tiles, its permuted store, and a partial column tile); concat widths
 * 2 to 1233.  K = 257 and 600 give the bmm.FB* products the split-k order (splitk(2x256),
 * splitk(3x256): a last chunk of 1 and of 88 k; docs/semantics.md section 2), on the tiled
 * kernel (without an epilogue, and with a bias: bmm.FBF / bmm.FBB + bias in their own launches;
 * matmul.cuh's in a row group); bmm.FF* is seq+fma everywhere, on the tiled kernel where K >= 128
 * and M >= 32 (BG_PLAN_FBT_FF_MIN_K / _M; models 4, 5 and 7: partial output tiles, and several).
 * A shape is (model, graph): 8 models x 8 graphs (N = 1, 5, 31, 67, 1001 random with
 * isolated nodes, explicit self loops and duplicate edges; N = 33, 1000 power-law skewed
 * and directed, with empty rows; N = 10001 with a row of 10000 neighbours) = 64 shapes.
 *
 * Per shape: the model (JIT: code generator + NVRTC, compiled once per model, in parallel
 * threads; through the disk cache only when BGNN_CACHE_DIR is set) runs on a non-default stream in every execution mode (fused cooperative kernel, but
 * in a model with the wgmma product on sm_90, which has none,
 * CUDA graph, separate launches; temporaries but the prep outputs filled with 0xff before each) and EVERY value
 * buffer the plan keeps and every output is compared with bg_interp_run's values (as
 * test_gpu_examples): b1 bit for bit including padding bits, f32 within 1e-5 relative.
 * The reference checks itself too: the four methods give identical values, each B output
 * is bin() of its F twin, and (CPU-only mode, N <= 2000) the unoptimised model gives the
 * same outputs.
 * Printed: one line per shape, then per variant (and method) how many shapes passed, and the
 * total of differing elements.  Exit 1 on any mismatch, 77 without a GPU.
 *
 * Environment:
 *   BGNN_GPU_TEST_QUICK=1     compute-sanitizer runs: models 0 and 3 (each model has every
 *                             variant and method) and 7 (the wgmma product on sm_90) on N = 1,
 *                             5, 67 and the 10001-node hub graph: 12 shapes.
 *   BGNN_GPU_TEST_NO_COOP=1   skip the fused cooperative kernel (racecheck serialises
 *                             blocks, so its grid barrier would never complete).
 *   BGNN_EXEC=coop|graph|launches   run only that execution mode.
 *   BGNN_VARIANTS_ONLY=0,3    only these models (indices into `widths` below).
 *   BGNN_VARIANTS_GRAPHS=3    only these graphs (indices into quick_graphs or full_graphs
 *                             below; 3 of the quick set is the hub graph, whose racecheck
 *                             run is the long one).
 *   BGNN_VARIANTS_CPU_ONLY=1  no GPU needed (ctest unit.test_gpu_variants_cpu): every model
 *                             through the front end, the producer checks and the code
 *                             generator, and the reference with its self-checks on every graph
 *                             (64 shapes); NVRTC to an sm_90 cubin (its manifest must parse and
 *                             hold the fused kernel, or none where the plan has the wgmma
 *                             product) for models 0 and 3 only, since NVRTC takes
 *                             15-20 s per model (BGNN_VARIANTS_NVRTC_ALL=1: every model;
 *                             BGNN_VARIANTS_NVRTC_NONE=1: none, as the sanitizer build runs it).
 *   BGNN_VARIANTS_PRINT=1     print every model's source. */
#include "bgtest.h"
#include "gpu_compare.h"
#include "driver.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { NMETH = 4, NDECL = 6, MAX_OUTS = 160, MAX_KEYS = 96, MAX_MODELS = 8, MAX_GRAPHS = 8, MAX_LINES = 12 };

/* ---- the matrix ---------------------------------------------------------------------- */
static const char *const method_names[NMETH] = {"ifelse", "andnot", "popc2", "auto"};
static const BgMethod method_enum[NMETH] = {BG_METHOD_IFELSE, BG_METHOD_ANDNOT, BG_METHOD_POPC2, BG_METHOD_AUTO};

typedef struct Decl {
    const char *name, *label, *norm;
    bool loops;
    BgNorm n;
} Decl;
static const Decl decls[NDECL] = {
    {"Gn0", "none", "none", false, BG_NORM_NONE}, {"Gn1", "none+I", "none", true, BG_NORM_NONE},
    {"Gm0", "mean", "mean", false, BG_NORM_MEAN}, {"Gm1", "mean+I", "mean", true, BG_NORM_MEAN},
    {"Gs0", "sym", "sym", false, BG_NORM_SYM},    {"Gs1", "sym+I", "sym", true, BG_NORM_SYM},
};

/* k: F activations and bmm inputs; m: bmm outputs and B activations (bmm.FBB's bits, so
 * k >= 7 or m = 1 keeps them from being a rank-1 sign pattern); fdecl: the declaration whose
 * per-edge weights the adjacency-F variants use. */
typedef struct Widths {
    int k, m, fdecl;
} Widths;
static const Widths widths[] = {{1, 1, 5},   {31, 32, 2},  {257, 7, 1},  {100, 130, 4},
                                {128, 33, 3}, {600, 33, 0}, {1000, 7, 2}, {384, 288, 1}};
static const int quick_models[] = {0, 3, 7}; /* 7: the wgmma product (sm_90) under the sanitizers */
/* CPU only: the models NVRTC compiles (model 3 took 200 s of CI's 2 cores with its aggregations
 * in the order slots; test_codegen compiles bench/gcn_bin_reddit.bgnn's multi-word slots) */
static const int cubin_models[] = {0};

typedef enum { G_RANDOM, G_POWER, G_HUB } GraphKind;
typedef struct GraphSpec {
    GraphKind kind;
    int64_t n;
} GraphSpec;
static const GraphSpec full_graphs[] = {{G_RANDOM, 1},   {G_RANDOM, 5},    {G_RANDOM, 31},   {G_POWER, 33},
                                        {G_RANDOM, 67},  {G_POWER, 1000},  {G_RANDOM, 1001}, {G_HUB, 10001}};
static const GraphSpec quick_graphs[] = {{G_RANDOM, 1}, {G_RANDOM, 5}, {G_POWER, 67}, {G_HUB, 10001}};

/* ---- models ---------------------------------------------------------------------------- */
typedef struct OutSpec {
    char name[32];  /* the value's and the output's name */
    char key[40];   /* the variant it checks: a row of the summary */
    int method;     /* index into method_names, -1 for ops without one */
    BgOp op;        /* what its producer must be after the default passes: the op, ... */
    char prec[4];   /* ... its precisions ("" for bin and concat), ... */
    int decl;       /* ... its graph (bspmm; -1 otherwise) ... */
    bool fused;     /* ... and whether it carries prologue / epilogue steps */
    int twin_f;     /* a B output's F twin (same op and operands): B must be bin(F); -1 */
    int twin_m;     /* the ifelse twin of a bspmm with another method: identical; -1 */
    int inst;       /* the producer's instruction in the compiled module */
    BgBmmPath path; /* bmm.BB*: the kernel its producer must ask for (AUTO: any) */
} OutSpec;

typedef struct Model {
    int idx;
    Widths w;
    char name[32];
    char *text;
    OutSpec outs[MAX_OUTS];
    int nouts;
    BgArena *arena;
    BgModule *mod;      /* default pipeline: what runs on the GPU */
    BgModule *lowered;  /* no passes but fp-order: the weights' layout, the reference self-check */
    char wpath[700];
    unsigned char *cubin;
    size_t len;
    BgJitInfo ji;
    bool want_cubin;    /* CPU only: NVRTC for a subset (cubin_models) */
    bool jit_ok;
    char *jit_err;
} Model;

static void dump(BgDiagSink *d) {
    char *t = bg_diag_render(d);
    if (t && *t) fprintf(stderr, "%s", t);
    free(t);
}

static bool env_on(const char *name) {
    const char *e = getenv(name);
    return e && *e && strcmp(e, "0") != 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Adds `name = expr` and `output name`; the spec's key defaults to op.prec. */
static OutSpec *emit(Model *md, BgStrBuf *b, const char *name, const char *expr, BgOp op, const char *prec) {
    if (md->nouts >= MAX_OUTS) abort();
    OutSpec *o = &md->outs[md->nouts++];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", name);
    snprintf(o->key, sizeof o->key, "%s%s%s", bg_op_info(op)->name, *prec ? "." : "", prec);
    snprintf(o->prec, sizeof o->prec, "%s", prec);
    o->op = op;
    o->method = o->decl = o->twin_f = o->twin_m = o->inst = -1;
    bg_sb_printf(b, "%s = %s\noutput %s\n", name, expr, name);
    return o;
}

static void gen_bmm(Model *md, BgStrBuf *b) {
    for (int v = 0; v < 8; v++) {
        char x = v & 4 ? 'B' : 'F', y = v & 2 ? 'B' : 'F', z = v & 1 ? 'B' : 'F';
        /* f32 weights plain (F activations) and .T (B); b1 weights .T (F) and plain (B) */
        const char *w = y == 'F' ? (x == 'F' ? "Wf" : "Wt") : (x == 'F' ? "Wb" : "Wc");
        char name[32], expr[64], prec[4] = {x, y, z, 0};
        snprintf(name, sizeof name, "bmm_%s", prec);
        snprintf(expr, sizeof expr, "bmm.%s(%s, %s)", prec, x == 'F' ? "X" : "xb", w);
        OutSpec *o = emit(md, b, name, expr, BG_OP_BMM, prec);
        if (z == 'B') o->twin_f = md->nouts - 2;
    }
    /* bmm.BB* on the bit tensor cores whatever the shape (auto picks them from K = 512 up), and
     * on the warpgroup tensor cores (path wgmma: K a multiple of 128; sm_90 only, elsewhere the
     * plan takes mma.sync's), that one also with a bias and with Bi-GCN's row and column scales */
    static const char *const paths[2] = {"tc", "wgmma"};
    for (int pi = 0; pi < 2; pi++)
        for (int v = 0; v < 2 && (pi == 0 || md->w.k % 128 == 0); v++) {
            char name[32], expr[64], prec[4] = {'B', 'B', v ? 'B' : 'F', 0};
            snprintf(name, sizeof name, "bmm_%s_%s", prec, pi ? "wg" : "tc");
            snprintf(expr, sizeof expr, "bmm.%s(xb, Wc) { path: %s }", prec, paths[pi]);
            OutSpec *o = emit(md, b, name, expr, BG_OP_BMM, prec);
            snprintf(o->key, sizeof o->key, "bmm.%s %s", prec, paths[pi]);
            o->path = pi ? BG_BMM_PATH_WGMMA : BG_BMM_PATH_TC;
            if (v) o->twin_f = md->nouts - 2;
        }
    if (md->w.k % 128 == 0) {
        /* (their own weights: a product shared with another output keeps its value, unfused) */
        OutSpec *o = emit(md, b, "ep_bmm_BBB_wg", "add.FFB(bmm.BBF(xb, Wb) { path: wgmma }, bm)", BG_OP_BMM, "BBB");
        snprintf(o->key, sizeof o->key, "bmm.BBB wgmma +bias");
        o->fused = true;
        o->path = BG_BMM_PATH_WGMMA;
        o = emit(md, b, "ep_bmm_BBF_wg_scl", "scl(bmm.BBF(xb, Wd) { path: wgmma }, rows: absmean(X), cols: scale(Wd))",
                 BG_OP_BMM, "BBF");
        snprintf(o->key, sizeof o->key, "bmm.BBF wgmma +scales");
        o->fused = true;
        o->path = BG_BMM_PATH_WGMMA;
    }
}

/* Every bspmm: activation X (width K) or bmm_FBB's bits (width M); adjacency B over each
 * declaration, or F (weights of declaration fdecl); output F and B; every method. */
static void gen_bspmm(Model *md, BgStrBuf *b) {
    for (int a = 0; a <= NDECL; a++) {
        int decl = a < NDECL ? a : md->w.fdecl;
        char y = a < NDECL ? 'B' : 'F';
        for (int xi = 0; xi < 2; xi++)
            for (int zi = 0; zi < 2; zi++)
                for (int mi = 0; mi < NMETH; mi++) {
                    char x = xi ? 'B' : 'F', z = zi ? 'B' : 'F', prec[4] = {x, y, z, 0};
                    char name[32], expr[96];
                    snprintf(name, sizeof name, "sp_%s_%s_%s", prec, decls[decl].name, method_names[mi]);
                    snprintf(expr, sizeof expr, "bspmm.%s(%s, %s) { method: %s }", prec, decls[decl].name,
                             x == 'F' ? "X" : "bmm_FBB", method_names[mi]);
                    OutSpec *o = emit(md, b, name, expr, BG_OP_BSPMM, prec);
                    o->method = mi;
                    o->decl = decl;
                    size_t kl = strlen(o->key);
                    snprintf(o->key + kl, sizeof o->key - kl, " %s", y == 'F' ? "weighted" : decls[decl].label);
                    if (z == 'B') o->twin_f = md->nouts - 1 - NMETH;
                    if (mi) o->twin_m = md->nouts - 1 - mi;
                }
    }
}

/* An output given by a table row: its value's name, expression, expected producer precisions
 * and summary key. */
typedef struct OutRow {
    const char *name, *expr, *prec, *key;
} OutRow;

/* Emits row r with producer op, its key set; returns it for the caller's other fields. */
static OutSpec *emit_row(Model *md, BgStrBuf *b, const OutRow *r, BgOp op) {
    OutSpec *o = emit(md, b, r->name, r->expr, op, r->prec);
    snprintf(o->key, sizeof o->key, "%s", r->key);
    return o;
}

static void gen_add_concat(Model *md, BgStrBuf *b) {
    static const OutRow adds[] = {
        {"add_FFF_t", "add.FFF(bmm_FFF, bmm_BBF)", "FFF", "add.FFF tensor"},
        {"add_FFF_v", "add.FFF(X, bk)", "FFF", "add.FFF bias"},
        {"add_FFB_t", "add.FFB(bmm_FBF, bmm_BFF)", "FFB", "add.FFB tensor"},
        {"add_FFB_v", "add.FFB(X, bk)", "", "add.FFB bias -> threshold"},
        {"add_BBF", "add.BBF(bmm_FBB, bmm_BBB)", "BBF", "add.BBF"},
        {"add_BBB", "add.BBB(bmm_FBB, bmm_BFB)", "BBB", "add.BBB"},
    };
    for (size_t i = 0; i < sizeof adds / sizeof adds[0]; i++) {
        /* fold-threshold makes bin(X) epilogue(threshold T) of an add.FFB of a bias */
        bool thr = !*adds[i].prec;
        emit_row(md, b, &adds[i], thr ? BG_OP_BIN : BG_OP_ADD)->fused = thr;
    }
    snprintf(emit(md, b, "cat_F", "concat(X, bmm_FFF)", BG_OP_CONCAT, "")->key, sizeof md->outs[0].key, "concat F");
    snprintf(emit(md, b, "cat_B", "concat(xb, bmm_FBB, xb)", BG_OP_CONCAT, "")->key, sizeof md->outs[0].key,
             "concat B");
    /* log_softmax of K and of M columns: a warp a row, past 32 columns in the order lanes(32)
     * (templates/rowwise.cuh log_softmax_lanes) */
    snprintf(emit(md, b, "lsm_k", "log_softmax(X)", BG_OP_LOG_SOFTMAX, "")->key, sizeof md->outs[0].key,
             "log_softmax of K");
    snprintf(emit(md, b, "lsm_m", "log_softmax(bmm_FBF)", BG_OP_LOG_SOFTMAX, "")->key, sizeof md->outs[0].key,
             "log_softmax of M");
}

/* Forms the fusion passes make from these ops (their operands differ from the plain
 * outputs', so that cse leaves them alone and each has one consumer). */
static void gen_fused(Model *md, BgStrBuf *b) {
    for (int mi = 0; mi < NMETH; mi++) {
        char name[32], expr[96];
        snprintf(name, sizeof name, "ep_BBB_%s", method_names[mi]);
        snprintf(expr, sizeof expr, "add.FFB(bspmm.BBF(Gn1, xb) { method: %s }, bk)", method_names[mi]);
        OutSpec *o = emit(md, b, name, expr, BG_OP_BSPMM, "BBB");
        snprintf(o->key, sizeof o->key, "bspmm.BBB none+I +bias");
        o->method = mi;
        o->decl = 1;
        o->fused = true;
        if (mi) o->twin_m = md->nouts - 1 - mi;
    }
    OutSpec *o = emit(md, b, "ep_FBF", "relu(bspmm.FBF(Gs1, bmm_FFF))", BG_OP_BSPMM, "FBF");
    snprintf(o->key, sizeof o->key, "bspmm.FBF sym+I +relu");
    o->decl = 5;
    o->fused = true;
    static const OutRow prods[] = {
        {"ep_bmm_bn", "bmm.FBF(batchnorm(relu(X), mu, var), Wb)", "FBF", "bmm.FBF +batchnorm"},
        /* a product of a float activation (not the input) with epilogue steps: the tiled FB
         * kernel's epilogue in its own launch (plan_build.c bg_plan_bmm_fb_tiled_kernel); their
         * activations differ, so that each product has one reader and takes the bias */
        {"ep_bmm_FBF_bias", "add.FFF(bmm.FBF(relu(X), Wb), bm)", "FBF", "bmm.FBF +bias"},
        {"ep_bmm_FBB_bias", "add.FFB(bmm.FBF(add.FFF(X, bk), Wb), bm)", "FBB", "bmm.FBB +bias"},
        /* of the input itself: fold-batchnorm-mm's column scale and constant (the row kernel) */
        {"ep_bmm_fold", "bmm.FBB(batchnorm(X, mu, var), Wb)", "FBB", "bmm.FBB +folded batchnorm"},
        /* of the standardized input: fold-standardize-mm's center step, the row means (rowmean,
         * with a sparse variant over the features' CSR) and the weights' column sums (signsum) */
        {"ep_bmm_std", "bmm.FBB(standardize(X), Wb)", "FBB", "bmm.FBB +folded standardize"},
    };
    for (size_t i = 0; i < sizeof prods / sizeof prods[0]; i++) emit_row(md, b, &prods[i], BG_OP_BMM)->fused = true;
    /* the same standardize's bin and absmean: with the product folded they read X themselves
     * (bin.center; absmean with a standardize prologue, absmean_std) */
    o = emit(md, b, "bc_std", "bin(standardize(X))", BG_OP_BIN_CENTER, "");
    snprintf(o->key, sizeof o->key, "bin.center of X");
    o = emit(md, b, "am_std", "absmean(standardize(X))", BG_OP_ABSMEAN, "");
    snprintf(o->key, sizeof o->key, "absmean of X +standardize");
    o->fused = true;
    /* a standardize of X kept as it is (its own eps, so no other use of standardize(X) is this
     * one): its sparse variant over the features' CSR (standardize_csr) */
    o = emit(md, b, "std_x", "standardize(X) { eps: 0.001 }", BG_OP_STANDARDIZE, "");
    snprintf(o->key, sizeof o->key, "standardize of X");
    /* its bin and absmean: in the row group of that sparse standardize, which then writes them
     * from its registers (cg_rows.c std_outs, rowwise.cuh StdRowOut) */
    o = emit(md, b, "std_x_bin", "bin(std_x)", BG_OP_BIN, "");
    snprintf(o->key, sizeof o->key, "bin of a standardize of X");
    o = emit(md, b, "std_x_am", "absmean(std_x)", BG_OP_ABSMEAN, "");
    snprintf(o->key, sizeof o->key, "absmean of a standardize of X");
    /* the bin and absmean of a float aggregation of X, not itself an output: at K = 1000 (a
     * wide aggregation of 256 threads a row) a row group in the wide form, whose kernel
     * computes them in the aggregation's epilogue (templates/spmm_wide_outs.cuh) */
    o = emit(md, b, "agg_x_bin", "bin(bspmm.FBF(Gs0, X))", BG_OP_BIN, "");
    snprintf(o->key, sizeof o->key, "bin of an aggregation of X");
    o = emit(md, b, "agg_x_am", "absmean(bspmm.FBF(Gs0, X))", BG_OP_ABSMEAN, "");
    snprintf(o->key, sizeof o->key, "absmean of an aggregation of X");
    /* absmean of the input itself, plain and with split-batchnorm's prologue (a bin of X has a
     * sparse variant over the features' CSR, bin_csr) */
    o = emit(md, b, "am_x", "absmean(X)", BG_OP_ABSMEAN, "");
    snprintf(o->key, sizeof o->key, "absmean of X");
    o = emit(md, b, "am_bn", "absmean(batchnorm(X, mu, var))", BG_OP_ABSMEAN, "");
    snprintf(o->key, sizeof o->key, "absmean of X +batchnorm");
    o->fused = true;
    o = emit(md, b, "ep_bmm_BBB", "add.FFB(bmm.BBF(xb, Wb), bm)", BG_OP_BMM, "BBB");
    snprintf(o->key, sizeof o->key, "bmm.BBB +bias");
    o->fused = true;
    o = emit(md, b, "ep_bmm_BBB_tc", "add.FFB(bmm.BBF(xb, Wb) { path: tc }, bm)", BG_OP_BMM, "BBB");
    snprintf(o->key, sizeof o->key, "bmm.BBB tc +bias");
    o->fused = true;
    o->path = BG_BMM_PATH_TC;
}

/* The source of model idx. */
static void gen_model(Model *md, int idx) {
    memset(md, 0, sizeof *md);
    md->idx = idx;
    md->w = widths[idx];
    snprintf(md->name, sizeof md->name, "variants%d", idx);
    BgStrBuf b;
    memset(&b, 0, sizeof b);
    int k = md->w.k, m = md->w.m;
    bg_sb_printf(&b, "# test_gpu_variants model %d: K = %d (F activations), M = %d (B activations)\n", idx, k, m);
    bg_sb_printf(&b, "model %s\n", md->name);
    for (int i = 0; i < NDECL; i++)
        bg_sb_printf(&b, "graph %s = adjacency(self_loops: %s, norm: %s)\n", decls[i].name,
                     decls[i].loops ? "true" : "false", decls[i].norm);
    bg_sb_printf(&b, "input X : f32[N, %d]\n", k);
    bg_sb_printf(&b, "param Wf : f32[%d, %d] = \"wf\"\nparam Wt : f32[%d, %d] = \"wt\".T\n", k, m, k, m);
    bg_sb_printf(&b, "param Wb : b1[%d, %d] = \"wb\".T\nparam Wc : b1[%d, %d] = \"wc\"\n", k, m, k, m);
    bg_sb_printf(&b, "param bk : f32[%d] = \"bk\"\nparam bm : f32[%d] = \"bm\"\n", k, m);
    if (k % 128 == 0) bg_sb_printf(&b, "param Wd : b1[%d, %d] = \"wd\".T\n", k, m); /* gen_bmm's wgmma + scales */
    bg_sb_printf(&b, "param mu : f32[%d] = \"bn.mean\"\nparam var : f32[%d] = \"bn.var\"\n", k, k);
    emit(md, &b, "xb", "bin(X)", BG_OP_BIN, "");
    gen_bmm(md, &b);
    gen_bspmm(md, &b);
    gen_add_concat(md, &b);
    gen_fused(md, &b);
    md->text = bg_sb_take(&b);
}

/* Whether p (the producer of o in module m) is what o is meant to test; else why not. */
static bool producer_ok(const BgModule *m, const OutSpec *o, const BgInst *p, char *why, size_t n) {
    if (p->op != o->op || (o->prec[0] && strcmp(p->prec, o->prec) != 0)) {
        snprintf(why, n, "is %s%s%s", bg_op_info(p->op)->name, p->prec[0] ? "." : "", p->prec);
        return false;
    }
    if (o->path != BG_BMM_PATH_AUTO && p->attrs.path != o->path) {
        snprintf(why, n, "asks for path %d", (int)p->attrs.path);
        return false;
    }
    if ((p->nsteps > 0) != o->fused) {
        snprintf(why, n, "has %d fused steps", p->nsteps);
        return false;
    }
    if (o->decl >= 0) {
        const BgInst *g = &m->insts[p->args[0]];
        if (g->op != BG_OP_GRAPH || g->attrs.self_loops != decls[o->decl].loops || g->attrs.norm != decls[o->decl].n) {
            snprintf(why, n, "reads another adjacency");
            return false;
        }
        /* The method picks a kernel for B activations over a 0/1 adjacency with unit
         * column factors; elsewhere a pass may ignore it (auto may be resolved). */
        bool unit = decls[o->decl].n != BG_NORM_SYM && o->prec[0] == 'B' && o->prec[1] == 'B';
        if (unit && o->method >= 0 && method_enum[o->method] != BG_METHOD_AUTO &&
            p->attrs.method != method_enum[o->method]) {
            snprintf(why, n, "has method %d", (int)p->attrs.method);
            return false;
        }
    }
    return true;
}

/* Records each output's producer and checks it is the variant it is meant to test. */
static bool check_producers(Model *md) {
    const BgModule *m = md->mod;
    int j = 0;
    bool ok = true;
    for (int i = 0; i < m->ninsts; i++) {
        const BgInst *in = &m->insts[i];
        if (in->op != BG_OP_OUTPUT) continue;
        if (j >= md->nouts || strcmp(in->attrs.name, md->outs[j].name) != 0) {
            fprintf(stderr, "%s: output %d is '%s', expected '%s'\n", md->name, j, in->attrs.name,
                    j < md->nouts ? md->outs[j].name : "(none)");
            return false;
        }
        OutSpec *o = &md->outs[j++];
        o->inst = (int)in->args[0];
        char why[96];
        if (!producer_ok(m, o, &m->insts[o->inst], why, sizeof why)) {
            fprintf(stderr, "%s: output '%s' should test %s%s%s, but after the passes its producer %s\n", md->name,
                    o->name, o->key, o->method >= 0 ? " " : "", o->method >= 0 ? method_names[o->method] : "", why);
            ok = false;
        }
    }
    if (j != md->nouts) {
        fprintf(stderr, "%s: %d outputs, expected %d\n", md->name, j, md->nouts);
        ok = false;
    }
    return ok;
}

/* Front end: the model through the default pipeline and without passes (but the two that
 * change rounding, fold-batchnorm-mm and fp-order, so that both compute the same sums in the
 * same recorded orders: the default, non-strict ones, which the GPU kernels must reproduce);
 * random weights. */
static bool compile_model(Model *md, const char *tmpdir) {
    BgDiagSink d;
    bg_diag_init(&d);
    md->arena = bg_arena_new();
    static const char *const none[2] = {"fold-batchnorm-mm", "fp-order"};
    BgCompileOpts lo = {0};
    lo.passes = none;
    lo.npasses = 2;
    size_t len = strlen(md->text);
    md->lowered = bg_compile_text(md->arena, md->name, md->text, len, &lo, &d);
    md->mod = bg_compile_text(md->arena, md->name, md->text, len, NULL, &d);
    snprintf(md->wpath, sizeof md->wpath, "%s/%s.safetensors", tmpdir, md->name);
    bool ok = md->lowered && md->mod &&
              bg_gen_weights(md->lowered, 100 + (unsigned long long)md->idx, md->wpath, NULL, &d);
    if (!ok) {
        fprintf(stderr, "%s: cannot compile the model or write its weights; the model:\n%s", md->name, md->text);
        dump(&d);
    }
    bg_diag_free(&d);
    return ok && check_producers(md);
}

/* ---- JIT, in parallel: NVRTC is the slow part --------------------------------------------- */
typedef struct JitQueue {
    Model **models;
    int n, next;
    pthread_mutex_t lock;
    const BgNvrtc *nv;
    const char *arch, *cache_dir;
} JitQueue;

/* The cubin (through the disk cache in cache_dir, when not NULL), or just the generated CUDA. */
static void jit_one(Model *md, const BgNvrtc *nv, const char *arch, const char *cache_dir) {
    BgDiagSink d;
    bg_diag_init(&d);
    if (md->want_cubin) {
        md->jit_ok = bg_jit_cubin(md->mod, arch, nv, cache_dir, &md->cubin, &md->len, &md->ji, &d);
    } else {
        char *cu = bg_codegen_cuda(md->mod, arch, &d);
        md->jit_ok = cu != NULL;
        free(cu);
    }
    if (!md->jit_ok) md->jit_err = bg_diag_render(&d);
    bg_diag_free(&d);
}

static void *jit_worker(void *arg) {
    JitQueue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        int i = q->next++;
        pthread_mutex_unlock(&q->lock);
        if (i >= q->n) return NULL;
        jit_one(q->models[i], q->nv, q->arch, q->cache_dir);
    }
}

static void jit_all(Model **models, int n, const BgNvrtc *nv, const char *arch, const char *cache_dir) {
    JitQueue q = {models, n, 0, PTHREAD_MUTEX_INITIALIZER, nv, arch, cache_dir};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = (int)(cpus < 1 ? 1 : cpus > n ? n : cpus);
    pthread_t t[MAX_MODELS];
    int started = 0;
    for (int i = 0; i < nt; i++)
        if (pthread_create(&t[started], NULL, jit_worker, &q) == 0) started++;
    if (started == 0) jit_worker(&q);
    for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
    pthread_mutex_destroy(&q.lock);
}

/* ---- graphs and features ------------------------------------------------------------------- */
static void push_edge(BgCoo *c, int64_t *cap, int64_t i, int64_t j) {
    if (c->nnz == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        c->row = realloc(c->row, (size_t)*cap * sizeof *c->row);
        c->col = realloc(c->col, (size_t)*cap * sizeof *c->col);
        if (!c->row || !c->col) abort();
    }
    c->row[c->nnz] = i;
    c->col[c->nnz++] = j;
}

static int64_t rnd_below(unsigned long long *s, int64_t n) {
    return (int64_t)(bg_test_rand(s) % (unsigned long long)n);
}

static double rnd_unit(unsigned long long *s) { /* (0, 1] */
    return ((double)(bg_test_rand(s) >> 11) + 1.0) / 9007199254740992.0;
}

/* Random symmetric edges (1-4 per node), every 7th node isolated, every 5th with an explicit
 * self loop, some edges given twice (merged). */
static void edges_random(BgCoo *c, int64_t *cap, int64_t n, unsigned long long *s) {
    for (int64_t i = 0; i < n && n > 1; i++) {
        if (i % 7 == 3) continue;
        if (i % 5 == 1) push_edge(c, cap, i, i);
        for (int64_t k = 0, deg = 1 + rnd_below(s, 4); k < deg; k++) {
            int64_t j = rnd_below(s, n);
            if (j % 7 == 3 || j == i) continue;
            push_edge(c, cap, i, j);
            push_edge(c, cap, j, i);
            if (k == 2) push_edge(c, cap, i, j);
        }
    }
}

/* Directed, power-law out-degrees, targets skewed to low ids (in-degree hubs); every 9th
 * row empty (such nodes still appear as columns: sym gives them a zero factor). */
static void edges_power(BgCoo *c, int64_t *cap, int64_t n, unsigned long long *s) {
    for (int64_t i = 0; i < n; i++) {
        if (i % 9 == 4) continue;
        double dd = 1.0 / pow(rnd_unit(s), 0.9);
        int64_t deg = dd > (double)(n / 2 + 1) ? n / 2 + 1 : (int64_t)dd;
        for (int64_t k = 0; k < deg; k++) {
            int64_t j = (int64_t)((double)n * pow(rnd_unit(s), 3.0));
            push_edge(c, cap, i, j >= n ? n - 1 : j);
        }
    }
}

/* Node n/2 adjacent to every other node (a row of n - 1 neighbours), plus sparse edges. */
static void edges_hub(BgCoo *c, int64_t *cap, int64_t n, unsigned long long *s) {
    int64_t h = n / 2;
    for (int64_t j = 0; j < n; j++)
        if (j != h) {
            push_edge(c, cap, h, j);
            push_edge(c, cap, j, h);
        }
    for (int64_t i = 0; i < n; i += 3) {
        int64_t j = rnd_below(s, n);
        push_edge(c, cap, i, j);
        push_edge(c, cap, j, i);
    }
}

static bool make_graph(const GraphSpec *gs, unsigned long long seed, BgGraph *g, char *what, size_t nwhat) {
    static const char *const kind_names[] = {"random", "power-law", "hub"};
    BgCoo c = {gs->n, gs->n, 0, NULL, NULL, NULL};
    int64_t cap = 0;
    unsigned long long s = seed;
    if (gs->kind == G_RANDOM) edges_random(&c, &cap, gs->n, &s);
    else if (gs->kind == G_POWER) edges_power(&c, &cap, gs->n, &s);
    else edges_hub(&c, &cap, gs->n, &s);
    BgDiagSink d;
    bg_diag_init(&d);
    memset(g, 0, sizeof *g);
    bool ok = bg_graph_from_coo(&c, "synthetic", g, &d);
    if (!ok) dump(&d);
    bg_diag_free(&d);
    bg_coo_free(&c);
    g->ngraphs = 1;
    int64_t maxdeg = 0, empty = 0;
    for (int64_t i = 0; ok && i < g->n; i++) {
        int64_t dg = g->rowptr[i + 1] - g->rowptr[i];
        maxdeg = dg > maxdeg ? dg : maxdeg;
        empty += dg == 0;
    }
    snprintf(what, nwhat, "N=%lld %s", (long long)gs->n, kind_names[gs->kind]);
    printf("graph %-18s %7lld edges, max row %5lld, %4lld empty rows\n", what, (long long)g->nnz,
           (long long)maxdeg, (long long)empty);
    return ok;
}

/* Features in [-4, 4) with exact +0 and -0 (the bit rule's edge).  Every other seed they are
 * sparse, as bag-of-words features are: about 1 in 16 nonzero, every fifth row all +0 (the
 * sparse variants' rows of no entry; rows of more than 32 entries where K is wide). */
static void make_features(BgTensor *t, int64_t n, int64_t k, unsigned long long seed) {
    bg_tensor_alloc(t, BG_DT_F32, 2, n, k);
    float *x = t->data;
    unsigned long long s = seed;
    const bool sparse = seed % 2 == 1;
    for (int64_t q = 0; q < n * k; q++) {
        unsigned long long r = bg_test_rand(&s);
        if (sparse && ((q / k) % 5 == 0 || r % 16 != 0)) x[q] = 0.0f;
        else x[q] = r % 13 == 0 ? 0.0f : r % 17 == 0 ? -0.0f : bg_test_randf(&s) * (q % 3 ? 1.0f : 4.0f);
    }
}

/* ---- comparing ----------------------------------------------------------------------------- */
/* Elements (bits of b1 words, f32 values) whose bits differ; -1: wrong type or size. */
static int64_t count_diff_exact(const BgTensor *a, const BgTensor *b) {
    if (a->dtype != b->dtype || bg_tensor_bytes(a) != bg_tensor_bytes(b)) return -1;
    const uint32_t *x = a->data, *y = b->data;
    int64_t bad = 0;
    for (size_t i = 0, n = bg_tensor_bytes(a) / 4; i < n; i++)
        if (x[i] != y[i]) bad += a->dtype == BG_DT_B1 ? __builtin_popcount(x[i] ^ y[i]) : 1;
    return bad;
}

/* Bits of B that are not bin() of F (same shape); -1 on a shape mismatch. */
static int64_t count_not_bin(const BgTensor *bt, const BgTensor *ft) {
    if (bt->dtype != BG_DT_B1 || ft->dtype != BG_DT_F32 || bt->rank != 2 || ft->rank != 2 ||
        bt->dim[0] != ft->dim[0] || bt->dim[1] != ft->dim[1])
        return -1;
    const uint32_t *w = bt->data;
    const float *f = ft->data;
    int64_t bad = 0, cols = ft->dim[1];
    for (int64_t r = 0; r < ft->dim[0]; r++)
        for (int64_t c = 0; c < cols; c++)
            bad += bg_bit_get(w, bt->words_per_row, r, c) != !signbit(f[r * cols + c]);
    return bad;
}

/* ---- the tally --------------------------------------------------------------------------- */
typedef struct Tally {
    char key[MAX_KEYS][40];
    int pass[MAX_KEYS][NMETH + 1], total[MAX_KEYS][NMETH + 1]; /* column 0: no method */
    int nkeys, shapes, nlines;
    long long mismatches, values;
    double worst_f32;
} Tally;

static void tally_add(Tally *t, const OutSpec *o, bool ok) {
    int k = 0;
    while (k < t->nkeys && strcmp(t->key[k], o->key) != 0) k++;
    if (k == t->nkeys) {
        if (k == MAX_KEYS) abort();
        snprintf(t->key[t->nkeys++], sizeof t->key[0], "%s", o->key);
    }
    t->total[k][o->method + 1]++;
    t->pass[k][o->method + 1] += ok;
}

static void tally_print(const Tally *t, bool gpu) {
    printf("\n%s, per variant: shapes passed / run\n", gpu ? "GPU vs CPU reference" : "CPU reference self-checks");
    printf("%-26s %-11s %-11s %-11s %s\n", "variant", method_names[0], method_names[1], method_names[2],
           method_names[3]);
    for (int k = 0; k < t->nkeys; k++) {
        char cells[NMETH + 1][24];
        for (int c = 0; c <= NMETH; c++)
            snprintf(cells[c], sizeof cells[c], "%d/%d%s", t->pass[k][c], t->total[k][c],
                     t->pass[k][c] != t->total[k][c] ? " FAIL" : "");
        if (t->total[k][0]) printf("%-26s %s\n", t->key[k], cells[0]);
        else printf("%-26s %-11s %-11s %-11s %s\n", t->key[k], cells[1], cells[2], cells[3], cells[4]);
    }
    printf("%d shapes, %d variants x methods, %lld values compared, %lld elements differ in total, "
           "max f32 relative error %.3g\n",
           t->shapes, t->nkeys, t->values, t->mismatches, t->worst_f32);
}

/* A mismatch: a failed check, counted, reported (the first MAX_LINES per shape), and the
 * output fails. */
static void mismatch(Tally *t, bool *ok, int oi, int64_t bad, const char *fmt, ...) BG_PRINTF(5, 6);
static void mismatch(Tally *t, bool *ok, int oi, int64_t bad, const char *fmt, ...) {
    bgt_fail++; /* bgtest.h's count, without CHECK's line: the message below says more */
    t->mismatches += bad > 0 ? bad : 1;
    if (oi >= 0) ok[oi] = false;
    if (t->nlines++ >= MAX_LINES) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

/* ---- one shape ----------------------------------------------------------------------------- */
typedef struct Gpu {
    BgGpu *g;            /* NULL: CPU only */
    BgCUstream stream;
    bool mode_on[3];     /* coop, graph, launches */
} Gpu;

static const BgExecMode modes[3] = {BG_EXEC_COOP, BG_EXEC_GRAPH, BG_EXEC_LAUNCHES};
static const char *const mode_names[3] = {"coop", "graph", "launches"};

/* The reference checks itself: methods agree, B = bin(F twin), and (when low has outputs)
 * the lowered model gives the optimised one's outputs. */
static void self_check(const Model *md, const BgInterpResult *res, const BgInterpResult *low, bool *ok,
                       const char *what, Tally *t) {
    for (int i = 0; i < md->nouts && i < res->noutputs; i++) {
        const OutSpec *o = &md->outs[i];
        int64_t bad;
        if (o->twin_m >= 0 && (bad = count_diff_exact(&res->outputs[i], &res->outputs[o->twin_m])) != 0)
            mismatch(t, ok, i, bad, "  %s on %s: reference '%s' differs from '%s': %lld elements\n", md->name, what,
                     o->name, md->outs[o->twin_m].name, (long long)bad);
        if (o->twin_f >= 0 && (bad = count_not_bin(&res->outputs[i], &res->outputs[o->twin_f])) != 0)
            mismatch(t, ok, i, bad, "  %s on %s: reference '%s' is not bin('%s'): %lld bits\n", md->name, what,
                     o->name, md->outs[o->twin_f].name, (long long)bad);
        if (i < low->noutputs && (bad = count_diff_exact(&res->outputs[i], &low->outputs[i])) != 0)
            mismatch(t, ok, i, bad, "  %s on %s: reference '%s' differs without passes: %lld elements\n", md->name,
                     what, o->name, (long long)bad);
        t->values += (i < low->noutputs) + (o->twin_m >= 0) + (o->twin_f >= 0);
    }
}

/* Buffer k (a temp) or output i of the plan against the reference; marks the outputs it
 * feeds on a mismatch.  Returns false when it could not be read. */
static bool check_value(const Gpu *gp, const Model *md, const BgPlan *p, BgGpuRun *run, int k, int i,
                        const BgTensor *ref, bool *ok, const char *what, const char *mode, Tally *t) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgTensor v;
    bool read;
    if (k >= 0) {
        const BgPlanBuf *pb = &p->bufs[k];
        int64_t dim[2];
        for (int j = 0; j < 2; j++)
            dim[j] = pb->dim[j] == BG_DIM_N ? run->n : pb->dim[j] == BG_DIM_G ? run->ngraphs : pb->dim[j];
        read = bg_gpu_run_read_buf(gp->g, p, run, k, pb->rank, dim, &v, &d);
    } else {
        read = bg_gpu_run_read_output(gp->g, p, run, i, &v, &d);
    }
    CHECK(read);
    if (!read) {
        dump(&d);
        bg_diag_free(&d);
        return false;
    }
    int64_t where;
    int64_t bad = bg_gpu_compare(&v, ref, &t->worst_f32, &where);
    t->values++;
    int inst = k >= 0 ? p->bufs[k].inst : md->outs[i].inst;
    if (bad != 0) {
        int first = i;
        for (int j = 0; j < md->nouts; j++)
            if (md->outs[j].inst == inst) {
                ok[j] = false;
                if (first < 0) first = j;
            }
        const OutSpec *o = first >= 0 ? &md->outs[first] : NULL;
        bool bits = v.dtype == BG_DT_B1;
        mismatch(t, ok, i, bad, "  %s on %s [%s]: %s %s%d (%s%s%s) differs: %lld %s, first at %s %lld\n", md->name,
                 what, mode, k >= 0 ? "value" : "output", k >= 0 ? "%" : "#", k >= 0 ? inst : i,
                 o ? o->key : bg_op_info(md->mod->insts[inst].op)->name, o && o->method >= 0 ? " " : "",
                 o && o->method >= 0 ? method_names[o->method] : "", (long long)bad, bits ? "bits" : "floats",
                 bits ? "word" : "element", (long long)where);
    }
    bg_tensor_free(&v);
    bg_diag_free(&d);
    return true;
}

/* Every execution mode: every temp buffer and every output against the reference. */
static int gpu_check(const Gpu *gp, const Model *md, const BgGpuModel *gm, BgGraph *graph, const BgTensor *feat,
                     BgTensor *all, const BgInterpResult *res, bool *ok, const char *what, Tally *t) {
    BgDiagSink d;
    bg_diag_init(&d);
    const BgPlan *p = gm->plan;
    BgGpuRun run;
    memset(&run, 0, sizeof run);
    int nmodes = 0;
    /* a bmm of the features has three kernels (plan.h BgPlanLaunch.alt: rows, tiled and the
     * sparse variant over their CSR), chosen by the features' density, the same bits each:
     * every third shape runs each */
    static int calls;
    static const char *const fk[] = {"rows", "tiled", "sparse"};
    setenv("BGNN_FEATURES_KERNEL", fk[calls++ % 3], 1);
    bool bound = bg_gpu_run_bind(gp->g, gm, md->mod, graph, feat, 0, md->wpath, &run, NULL, &d);
    unsetenv("BGNN_FEATURES_KERNEL");
    CHECK(bound);
    for (int mi = 0; mi < 3 && bound; mi++) {
        if (!gp->mode_on[mi] || (modes[mi] == BG_EXEC_COOP && !gm->fused_fn)) continue;
        for (int k = 0; k < p->nbufs; k++)
            if (p->bufs[k].role == BG_ROLE_TEMP && run.bytes[k] && !bg_plan_prep_output(p, k)) /* prep: once */
                CHECK(gp->g->cu.cuMemsetD8_v2(run.ptr[k], 0xff, run.bytes[k]) == BG_CUDA_SUCCESS);
        CHECK(gp->g->cu.cuCtxSynchronize() == BG_CUDA_SUCCESS);
        run.mode = modes[mi];
        run.coop_refused[0] = 0;
        run.coop_grid_request = 0;
        bool launched = bg_gpu_run_launch(gp->g, gm, &run, gp->stream, &d);
        CHECK(launched);
        CHECK(!launched || run.used == modes[mi]);
        if (!launched) {
            for (int i = 0; i < md->nouts; i++) ok[i] = false;
            t->mismatches++;
            continue;
        }
        nmodes++;
        for (int k = 0; k < p->nbufs; k++) {
            const BgPlanBuf *pb = &p->bufs[k];
            if (pb->role != BG_ROLE_TEMP || (pb->kind != BG_BUF_F32 && pb->kind != BG_BUF_B1)) continue;
            if (pb->inst < 0 || pb->inst >= md->mod->ninsts || !all[pb->inst].data) continue;
            if (!bg_gpu_run_buf_in_memory(gm, &run, k)) continue; /* held in registers only by this run */
            if (!check_value(gp, md, p, &run, k, -1, &all[pb->inst], ok, what, mode_names[mi], t)) break;
        }
        CHECK_EQ_INT(res->noutputs, p->noutputs);
        for (int i = 0; i < p->noutputs && i < res->noutputs && i < md->nouts; i++) {
            CHECK(strcmp(p->outputs[i].name, md->outs[i].name) == 0);
            if (!check_value(gp, md, p, &run, -1, i, &res->outputs[i], ok, what, mode_names[mi], t)) break;
        }
    }
    if (!bound) {
        for (int i = 0; i < md->nouts; i++) ok[i] = false;
        t->mismatches++;
    }
    if (d.nerrors) dump(&d);
    bg_gpu_run_free(gp->g, &run);
    bg_diag_free(&d);
    return nmodes;
}

/* One shape: the reference (and its self-checks), then the GPU in every mode; tallied. */
static void run_shape(const Gpu *gp, const Model *md, const BgGpuModel *gm, BgGraph *graph, const char *what,
                      unsigned long long seed, Tally *t) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgTensor feat;
    make_features(&feat, graph->n, md->w.k, seed);
    BgBindings b, bl;
    memset(&b, 0, sizeof b);
    memset(&bl, 0, sizeof bl);
    BgInterpResult res, low;
    memset(&res, 0, sizeof res);
    memset(&low, 0, sizeof low);
    BgTensor *all = NULL;
    bool *ok = bg_xcalloc((size_t)md->nouts, sizeof *ok);
    for (int i = 0; i < md->nouts; i++) ok[i] = true;
    long long bad0 = t->mismatches, vals0 = t->values;
    t->nlines = 0;
    double t0 = now_s();
    /* the unoptimised model only without a GPU, up to 2000 nodes: it doubles the reference's time */
    bool lowered = !gp->g && graph->n <= 2000;
    bool cpu = bg_bind(md->mod, graph, &feat, md->wpath, &b, &d) && bg_interp_run(md->mod, &b, &res, &all, &d) &&
               (!lowered || (bg_bind(md->lowered, graph, &feat, md->wpath, &bl, &d) &&
                             bg_interp_run(md->lowered, &bl, &low, NULL, &d)));
    CHECK(cpu);
    CHECK_EQ_INT(res.noutputs, md->nouts);
    int nmodes = 0;
    if (!cpu) {
        dump(&d);
        for (int i = 0; i < md->nouts; i++) ok[i] = false;
        t->mismatches++;
    } else {
        self_check(md, &res, &low, ok, what, t);
        if (gp->g) nmodes = gpu_check(gp, md, gm, graph, &feat, all, &res, ok, what, t);
    }
    if (t->nlines > MAX_LINES) fprintf(stderr, "  ... %d more mismatches on this shape\n", t->nlines - MAX_LINES);
    int nfail = 0;
    for (int i = 0; i < md->nouts; i++) {
        tally_add(t, &md->outs[i], ok[i]);
        nfail += !ok[i];
    }
    t->shapes++;
    char ran[32] = "reference";
    if (gp->g) snprintf(ran, sizeof ran, "%d GPU modes", nmodes);
    printf("  %-9s K=%-3d M=%-3d %-18s %-11s %5lld values, %lld differ, %d of %d outputs fail (%.2f s)\n",
           md->name, md->w.k, md->w.m, what, ran, t->values - vals0, t->mismatches - bad0, nfail, md->nouts,
           now_s() - t0);
    free(ok);
    bg_interp_values_free(md->mod, all);
    bg_interp_result_free(&res);
    bg_interp_result_free(&low);
    bg_bindings_free(&b);
    bg_bindings_free(&bl);
    bg_tensor_free(&feat);
    bg_diag_free(&d);
}

/* ---- setup ------------------------------------------------------------------------------- */
/* The indices below `bound` listed in the environment variable NAME ("0,3"), at most `max`
 * into idx; -1 when NAME is unset or empty. */
static int env_indices(const char *name, int bound, int max, int *idx) {
    const char *list = getenv(name);
    if (!list || !*list) return -1;
    int n = 0;
    for (const char *s = list; *s && n < max;) {
        char *e;
        long v = strtol(s, &e, 10);
        if (e == s) break;
        if (v >= 0 && v < bound) idx[n++] = (int)v;
        s = *e == ',' ? e + 1 : e;
    }
    return n;
}

/* The models to run: BGNN_VARIANTS_ONLY, else quick's or all. */
static int pick_models(bool quick, int *idx) {
    int nw = (int)(sizeof widths / sizeof widths[0]);
    int n = env_indices("BGNN_VARIANTS_ONLY", nw, MAX_MODELS, idx);
    if (n >= 0) return n;
    n = 0;
    if (quick) {
        for (size_t i = 0; i < sizeof quick_models / sizeof quick_models[0]; i++) idx[n++] = quick_models[i];
        return n;
    }
    for (int i = 0; i < nw; i++) idx[n++] = i;
    return n;
}

static bool is_cubin_model(int idx) {
    for (size_t i = 0; i < sizeof cubin_models / sizeof cubin_models[0]; i++)
        if (cubin_models[i] == idx) return true;
    return false;
}

/* Which execution modes run: all, less coop under BGNN_GPU_TEST_NO_COOP, or BGNN_EXEC's. */
static void pick_modes(Gpu *gp) {
    for (int i = 0; i < 3; i++) gp->mode_on[i] = true;
    BgExecMode only;
    const char *e = getenv("BGNN_EXEC");
    if (e && *e && bg_exec_mode_parse(e, &only) && only != BG_EXEC_AUTO)
        for (int i = 0; i < 3; i++) gp->mode_on[i] = modes[i] == only;
    /* racecheck serialises blocks, so a grid-wide barrier never completes under it; the
     * fused kernel's phases are the separate kernels' code. */
    if (getenv("BGNN_GPU_TEST_NO_COOP")) gp->mode_on[0] = false;
}

/* What the CPU-only mode can check of a cubin: ELF, a plan in its manifest, the fused kernel. */
static void check_cubin(const Model *md) {
    CHECK(md->len > 4 && memcmp(md->cubin, "\177ELF", 4) == 0);
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgPlan *p = bg_cubin_plan(md->cubin, md->len, md->name, a, &d);
    CHECK(p != NULL);
    if (p) {
        CHECK(bg_plan_has_smem(p) ? !p->fused : p->fused); /* the wgmma product (sm_90): no fused kernel */
        CHECK_EQ_INT(p->noutputs, md->nouts);
        printf("%s: K=%d M=%d, %d outputs, %d kernels + %s, cubin %zu bytes, nvrtc %.0f ms\n", md->name, md->w.k,
               md->w.m, md->nouts, p->nlaunches, p->fused ? "fused" : "no fused kernel", md->len, md->ji.nvrtc_ms);
    } else {
        dump(&d);
    }
    bg_diag_free(&d);
    bg_arena_free(a);
}

static void free_model(Model *md) {
    free(md->text);
    free(md->cubin);
    free(md->jit_err);
    bg_arena_free(md->arena);
    if (md->wpath[0]) unlink(md->wpath);
}

/* Opens the GPU and NVRTC (or only NVRTC for the CPU-only mode); exits 77 when missing. */
static void open_target(bool cpu_only, BgGpu *g, BgNvrtc *nv) {
    BgDiagSink d;
    bg_diag_init(&d);
    if (!cpu_only && !bg_gpu_open(g, 0, &d)) {
        int code = d.n ? d.items[0].code : 0;
        dump(&d);
        bg_diag_free(&d);
        if (code == BG_E_NO_DEVICE) bg_test_skip("no CUDA device (BGNN_VARIANTS_CPU_ONLY=1 checks the rest)");
        CHECK(!"bg_gpu_open failed for a reason other than a missing device");
        exit(bg_test_finish());
    }
    if (!bg_nvrtc_load(cpu_only ? nv : &g->nv, &d)) {
        dump(&d);
        if (!cpu_only) bg_gpu_close(g);
        bg_diag_free(&d);
        bg_test_skip("NVRTC cannot be loaded");
    }
    bg_diag_free(&d);
}

int main(void) {
    bool cpu_only = env_on("BGNN_VARIANTS_CPU_ONLY");
    bool quick = env_on("BGNN_GPU_TEST_QUICK");
    double t_start = now_s();
    BgGpu g;
    BgNvrtc cpu_nv;
    memset(&g, 0, sizeof g);
    memset(&cpu_nv, 0, sizeof cpu_nv);
    open_target(cpu_only, &g, &cpu_nv);
    Gpu gp = {cpu_only ? NULL : &g, NULL, {false, false, false}};
    pick_modes(&gp);
    const char *arch = cpu_only ? "sm_90" : g.arch;
    if (cpu_only)
        printf("CPU only: models compiled for %s, reference self-checks%s\n", arch, quick ? ", quick mode" : "");
    else printf("device %s (%s), %d SMs%s\n", g.name, g.arch, g.nsm, quick ? ", quick mode" : "");

    char tmpdir[512];
    snprintf(tmpdir, sizeof tmpdir, "%s/test_gpu_variants.%ld", bg_test_tmpdir(), (long)getpid());
    mkdir(tmpdir, 0755);
    int idx[MAX_MODELS];
    int nm = pick_models(quick, idx);
    CHECK(nm > 0);
    Model *models = bg_xcalloc((size_t)(nm > 0 ? nm : 1), sizeof *models);
    Model *todo[MAX_MODELS];
    int ntodo = 0;
    for (int i = 0; i < nm; i++) {
        gen_model(&models[i], idx[i]);
        if (env_on("BGNN_VARIANTS_PRINT")) printf("%s\n", models[i].text);
        models[i].want_cubin = !cpu_only || env_on("BGNN_VARIANTS_NVRTC_ALL") ||
                               (is_cubin_model(idx[i]) && !env_on("BGNN_VARIANTS_NVRTC_NONE"));
        bool ok = compile_model(&models[i], tmpdir);
        CHECK(ok);
        if (ok) todo[ntodo++] = &models[i];
    }
    double t_jit = now_s();
    /* GPU runs use BGNN_CACHE_DIR when set (tools/gpu_suite.sh: the sanitizer runs reuse the
     * cubins of the plain run); the CPU-only mode always runs NVRTC, which it is there to check. */
    const char *cache = getenv("BGNN_CACHE_DIR");
    jit_all(todo, ntodo, cpu_only ? &cpu_nv : &g.nv, arch, !cpu_only && cache && *cache ? cache : NULL);
    printf("%d models compiled (code generator%s, %s) in %.1f s\n", ntodo, cpu_only ? "; NVRTC for some" : " + NVRTC",
           arch, now_s() - t_jit);

    const GraphSpec *gs = quick ? quick_graphs : full_graphs;
    int ng = quick ? (int)(sizeof quick_graphs / sizeof quick_graphs[0])
                   : (int)(sizeof full_graphs / sizeof full_graphs[0]);
    BgGraph graphs[MAX_GRAPHS];
    char what[MAX_GRAPHS][48];
    for (int j = 0; j < ng; j++)
        CHECK(make_graph(&gs[j], 1000 + (unsigned long long)j, &graphs[j], what[j], sizeof what[j]));
    bool run_graph[MAX_GRAPHS]; /* BGNN_VARIANTS_GRAPHS, else every graph */
    int gidx[MAX_GRAPHS], ngsel = env_indices("BGNN_VARIANTS_GRAPHS", ng, MAX_GRAPHS, gidx);
    for (int j = 0; j < ng; j++) run_graph[j] = ngsel < 0;
    for (int k = 0; k < ngsel; k++) run_graph[gidx[k]] = true;
    CHECK(ngsel != 0); /* a list that names no graph of this mode runs nothing */
    if (!cpu_only) {
        BgDiagSink d;
        bg_diag_init(&d);
        CHECK(bg_cuda_check(&g.cu, g.cu.cuStreamCreate(&gp.stream, BG_CU_STREAM_NON_BLOCKING), "cuStreamCreate", &d));
        dump(&d);
        bg_diag_free(&d);
    }

    Tally *t = bg_xcalloc(1, sizeof *t);
    for (int i = 0; i < ntodo; i++) {
        Model *md = todo[i];
        CHECK(md->jit_ok);
        if (!md->jit_ok) {
            fprintf(stderr, "%s: the code generator or NVRTC failed:\n%s\nthe model:\n%s", md->name,
                    md->jit_err ? md->jit_err : "", md->text);
            continue;
        }
        BgGpuModel gm;
        memset(&gm, 0, sizeof gm);
        if (cpu_only && md->want_cubin) {
            check_cubin(md);
        } else if (cpu_only) {
            printf("%s: K=%d M=%d, %d outputs, CUDA generated (NVRTC: BGNN_VARIANTS_NVRTC_ALL=1)\n", md->name, md->w.k,
                   md->w.m, md->nouts);
        } else {
            BgDiagSink d;
            bg_diag_init(&d);
            bool loaded = bg_gpu_model_load(&g, md->cubin, md->len, md->name, &gm, &d);
            CHECK(loaded);
            if (!loaded) {
                dump(&d);
                bg_diag_free(&d);
                bg_gpu_model_free(&g, &gm);
                continue;
            }
            bg_diag_free(&d);
            /* so that the coop mode runs; a plan with the wgmma product (sm_90: its own blocks
             * and shared memory, BgPlanLaunch.smem) has no fused kernel */
            CHECK(bg_plan_has_smem(gm.plan) ? gm.fused_fn == NULL : gm.fused_fn != NULL);
            printf("%s: K=%d M=%d, %d outputs, %d kernels%s, %s %.0f ms\n", md->name, md->w.k, md->w.m, md->nouts,
                   gm.plan->nlaunches, gm.fused_fn ? " + fused" : "", md->ji.cache_hit ? "cache hit, nvrtc" : "nvrtc",
                   md->ji.nvrtc_ms);
        }
        for (int j = 0; j < ng; j++)
            if (run_graph[j])
                run_shape(&gp, md, &gm, &graphs[j], what[j], 77 + 31 * (unsigned long long)(md->idx * MAX_GRAPHS + j), t);
        if (!cpu_only) bg_gpu_model_free(&g, &gm);
    }
    tally_print(t, !cpu_only);
    printf("total %.1f s\n", now_s() - t_start);

    free(t);
    for (int j = 0; j < ng; j++) bg_graph_free(&graphs[j]);
    for (int i = 0; i < nm; i++) free_model(&models[i]);
    free(models);
    rmdir(tmpdir);
    if (cpu_only) {
        bg_nvrtc_unload(&cpu_nv);
    } else {
        if (gp.stream) g.cu.cuStreamDestroy(gp.stream);
        bg_gpu_close(&g);
    }
    return bg_test_finish();
}
