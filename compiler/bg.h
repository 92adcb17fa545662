/* bg.h - bgnn's internal header: one section per source file, in pipeline order.
 *
 * Naming: internal functions are bg_<module>_<verb>, types BgCamel, constants BG_*.
 * Nothing here is exported; the public API is runtime/include/bgnn/bgnn.h.
 *
 * Ownership: compile-time objects (sources, AST, IR, strings) live in a BgArena and die
 * with it.  Host tensors and graphs own their buffers (malloc) and are released with their
 * *_free function.  No function here prints or exits: errors go to a BgDiagSink or come
 * back as a status; only the CLI (bgnnc.c) renders and exits. */
#ifndef BG_H
#define BG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#define BG_VERSION_STRING "0.1.0"
#define BG_MANIFEST_VERSION 1

#if defined(__GNUC__)
#define BG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define BG_PRINTF(a, b)
#endif

/* ===== arena.c: bump allocator; one per compilation ================================= */
typedef struct BgArena BgArena;
BgArena *bg_arena_new(void);
void bg_arena_free(BgArena *a);
void *bg_arena_alloc(BgArena *a, size_t n);            /* zeroed; aborts only on OOM */
char *bg_arena_strdup(BgArena *a, const char *s);
char *bg_arena_strndup(BgArena *a, const char *s, size_t n);
char *bg_arena_printf(BgArena *a, const char *fmt, ...) BG_PRINTF(2, 3);
void *bg_xmalloc(size_t n);                             /* malloc or abort (host buffers) */
void *bg_xcalloc(size_t n, size_t sz);

/* ===== strbuf.c: growable strings ===================================================== */
typedef struct BgStrBuf {
    char *p;      /* NUL-terminated once anything was appended; malloc'd */
    size_t n, cap;
} BgStrBuf;
void bg_sb_append(BgStrBuf *b, const char *s, size_t n);
void bg_sb_printf(BgStrBuf *b, const char *fmt, ...) BG_PRINTF(2, 3);
char *bg_sb_take(BgStrBuf *b); /* the string (never NULL; caller frees); b is reset */

/* ===== json.c: a JSON writer (bgnnc --json) ========================================= */
#define BG_JSON_MAX_DEPTH 16
typedef struct BgJson {
    BgStrBuf sb;
    int depth, overflow;
    bool in_array[BG_JSON_MAX_DEPTH];
    int count[BG_JSON_MAX_DEPTH];  /* values written at each level (for the commas) */
} BgJson;
void bg_json_init(BgJson *j);
/* Values: key names the member inside an object and is ignored inside an array (and at
 * the top).  Strings are escaped (invalid UTF-8 becomes U+FFFD); v NULL writes null. */
void bg_json_object(BgJson *j, const char *key);
void bg_json_end_object(BgJson *j);
void bg_json_array(BgJson *j, const char *key);
void bg_json_end_array(BgJson *j);
void bg_json_string(BgJson *j, const char *key, const char *v);
void bg_json_number(BgJson *j, const char *key, double v); /* NaN, inf: null */
void bg_json_int(BgJson *j, const char *key, long long v);
void bg_json_bool(BgJson *j, const char *key, bool v);
void bg_json_null(BgJson *j, const char *key);
/* Closes what is open, appends a newline; the text (caller frees); j is reset. */
char *bg_json_take(BgJson *j);

/* ===== source.c: source text and locations ========================================== */
typedef struct BgLoc {
    uint32_t off; /* byte offset of the first character */
    uint32_t len; /* length in bytes (0 = a point) */
} BgLoc;

typedef struct BgSource {
    const char *name;     /* file name as given (for diagnostics) */
    const char *text;     /* NUL-terminated copy of the contents */
    size_t len;           /* bytes, without the terminator */
    uint32_t *line_start; /* byte offset of each line */
    int nlines;
} BgSource;

BgSource *bg_source_new(BgArena *a, const char *name, const char *text, size_t len);
void bg_source_linecol(const BgSource *s, uint32_t off, int *line, int *col); /* 1-based */

/* ===== diag.c: collected diagnostics ================================================ */
typedef enum {
#define DIAG(e, n, t) BG_##e = n,
#include "diag_codes.def"
#undef DIAG
} BgDiagCode;

typedef enum { BG_SEV_ERROR, BG_SEV_WARNING, BG_SEV_NOTE } BgSeverity;

typedef struct BgDiag {
    BgSeverity sev;
    int code;             /* BgDiagCode, 0 for notes */
    const BgSource *src;  /* NULL when the message is not about model source */
    BgLoc loc;
    char *msg;            /* owned by the sink */
} BgDiag;

typedef struct BgDiagSink {
    BgDiag *items;
    int n, cap;
    int nerrors;
    int max_errors; /* errors past this are dropped (one E0309 is added); default 20 */
} BgDiagSink;

void bg_diag_init(BgDiagSink *d);
void bg_diag_free(BgDiagSink *d);
/* Report at a source location (src may be NULL). */
void bg_diag_at(BgDiagSink *d, BgSeverity sev, int code, const BgSource *src, BgLoc loc,
                const char *fmt, ...) BG_PRINTF(6, 7);
void bg_diag_vat(BgDiagSink *d, BgSeverity sev, int code, const BgSource *src, BgLoc loc,
                 const char *fmt, va_list ap);
/* Errors about files other than the model: the message names the file and field/position. */
void bg_diag_error(BgDiagSink *d, int code, const char *fmt, ...) BG_PRINTF(3, 4);
void bg_diag_note_at(BgDiagSink *d, const BgSource *src, BgLoc loc, const char *fmt, ...)
    BG_PRINTF(4, 5);
/* gcc-style text: "file:line:col: error[E0203]: msg", source line, caret; notes after. */
char *bg_diag_render(const BgDiagSink *d); /* malloc'd */
const char *bg_diag_title(int code);

/* ===== fileio.c: reading and atomic writing ========================================== */
/* Reads a whole file (at most 16 MiB) into malloc'd memory, NUL-terminated. */
char *bg_read_file(const char *path, size_t *len, BgDiagSink *d);
/* Writes a whole file atomically (PATH.tmp.PID, then rename). */
bool bg_write_file_atomic(const char *path, const void *data, size_t len, BgDiagSink *d);
/* Streaming form: create the temp file, write to it, then finish: with ok, rename it over
 * path; without (or on any error), remove it and report.  finish frees tmp. */
FILE *bg_atomic_create(const char *path, char **tmp, BgDiagSink *d);
bool bg_atomic_finish(FILE *f, char *tmp, const char *path, bool ok, BgDiagSink *d);
/* Writes n floats little-endian whatever the host's byte order. */
bool bg_write_f32_le(FILE *f, const float *data, size_t n);

/* ===== tensor.c: host tensors ======================================================== */
typedef enum { BG_DT_F32, BG_DT_B1, BG_DT_I32, BG_DT_I64 } BgDType;

/* B1 host layout (the canonical one; kernels may repack): row-major, words_per_row =
 * ceil(cols/32) uint32 words per row, feature c of row r is bit (c % 32) of word
 * r*words_per_row + c/32 (LSB first); 1 means +1, 0 means -1; padding bits are 0. */
typedef struct BgTensor {
    BgDType dtype;
    int rank;            /* 1 or 2 */
    int64_t dim[2];      /* rank 1: dim[0] elements */
    int64_t words_per_row;
    void *data;          /* malloc'd, owned */
} BgTensor;

int64_t bg_tensor_rows(const BgTensor *t);   /* dim[0] */
int64_t bg_tensor_cols(const BgTensor *t);   /* rank 2: dim[1]; rank 1: dim[0] as one row */
size_t bg_tensor_bytes(const BgTensor *t);
bool bg_tensor_alloc(BgTensor *t, BgDType dt, int rank, int64_t d0, int64_t d1); /* zeroed */
void bg_tensor_free(BgTensor *t);
static inline int bg_bit_get(const uint32_t *w, int64_t wpr, int64_t r, int64_t c) {
    return (int)((w[r * wpr + c / 32] >> (c % 32)) & 1u);
}
static inline void bg_bit_set(uint32_t *w, int64_t wpr, int64_t r, int64_t c, int v) {
    uint32_t m = 1u << (c % 32);
    if (v) w[r * wpr + c / 32] |= m; else w[r * wpr + c / 32] &= ~m;
}

/* ===== io_npy.c, io_mtx.c, io_safetensors.c: file loaders ============================
 * Every loader checks each size and offset against the real file length before use,
 * checks limits before allocating, and on failure reports one diagnostic whose message
 * starts with the file name and names the field or line ("cora/graph.mtx:3: ...",
 * "w.npy: header field 'shape': ...") and returns false with *out untouched. */
typedef struct BgNpy {
    BgDType dtype;   /* after conversion: F32 (from f32/f64), I64 (from i32/i64/u8/bool), or I32 */
    int rank;        /* 1 or 2 */
    int64_t dim[2];
    void *data;      /* malloc'd */
} BgNpy;
typedef enum { BG_NPY_AS_F32, BG_NPY_AS_I64 } BgNpyWant;
/* Reads .npy versions 1-3; dtypes <f4 <f8 <i4 <i8 |u1 |b1 (little-endian, C order or
 * 1-D/Fortran-trivial); converts to the wanted type (floats to integers: error). */
bool bg_npy_load(const char *path, BgNpyWant want, BgNpy *out, BgDiagSink *d);
/* The same from len bytes in memory (an .npz member); name stands for the file in messages. */
bool bg_npy_load_mem(const void *bytes, size_t len, const char *name, BgNpyWant want, BgNpy *out,
                     BgDiagSink *d);
/* Writes f32 (rank 1 or 2) as .npy v1.0 atomically (temp file + rename). */
bool bg_npy_save_f32(const char *path, const float *data, int rank, const int64_t *dim,
                     BgDiagSink *d);
void bg_npy_free(BgNpy *n);

typedef struct BgCoo {
    int64_t nrows, ncols, nnz;
    int64_t *row, *col;   /* 0-based; symmetric files are expanded to both triangles */
    double *val;          /* NULL for pattern files */
} BgCoo;
/* Matrix Market "matrix coordinate" with field pattern|real|integer and symmetry
 * general|symmetric.  Duplicate entries are kept (the graph builder merges them). */
bool bg_mtx_load(const char *path, BgCoo *out, BgDiagSink *d);
void bg_coo_free(BgCoo *c);

typedef struct BgStTensor {
    char *name;
    BgDType dtype;      /* always F32 after conversion (F32, F16, BF16) or I64 (I32, I64) */
    int rank;           /* 0..4 as stored */
    int64_t dim[4];
    int64_t numel;
    void *data;         /* converted, malloc'd */
} BgStTensor;
typedef struct BgSafetensors {
    char *path;
    BgStTensor *t;
    int n;
} BgSafetensors;
bool bg_safetensors_load(const char *path, BgSafetensors *out, BgDiagSink *d);
const BgStTensor *bg_safetensors_find(const BgSafetensors *s, const char *name);
/* Writes F32 tensors atomically. names[i], data[i] with rank[i] dims dim[i][]. */
bool bg_safetensors_save_f32(const char *path, int n, const char *const *names,
                             const float *const *data, const int *rank,
                             const int64_t (*dim)[4], BgDiagSink *d);
void bg_safetensors_free(BgSafetensors *s);

/* ===== graph.c: CSR graphs and derived adjacencies =================================== */
typedef struct BgGraph {
    int64_t n, nnz;
    int64_t *rowptr;    /* n+1 */
    int32_t *col;       /* nnz, ascending within a row, no duplicates */
    int64_t ngraphs;    /* batched graphs: graph g owns nodes graph_ptr[g]..graph_ptr[g+1]-1 */
    int64_t *graph_ptr; /* ngraphs+1, or NULL (then one graph of all nodes) */
} BgGraph;

typedef enum { BG_NORM_NONE, BG_NORM_SYM, BG_NORM_MEAN } BgNorm;

/* The adjacency a GRAPH instruction denotes: the pattern (plus the diagonal when
 * self_loops), and positive factor vectors: sym r = c = d^-1/2; mean r = 1/d, c = 1;
 * none r = c = 1; d = entries in the row (self loop counted); d = 0 gives r = c = 0.
 * w (per edge, CSR order) = fl(r_i * c_j), used by adjacency-F variants. */
typedef struct BgAdj {
    int64_t n, nnz;
    int64_t *rowptr;
    int32_t *col;
    float *rowf, *colf; /* n each */
    float *w;           /* nnz */
    bool self_loops;
    BgNorm norm;
} BgAdj;

/* Builds a CSR graph from COO: checks square, indices in range, merges duplicates,
 * sorts columns.  what names the file for messages. */
bool bg_graph_from_coo(const BgCoo *c, const char *what, BgGraph *out, BgDiagSink *d);
bool bg_adj_build(const BgGraph *g, bool self_loops, BgNorm norm, BgAdj *out);
void bg_graph_free(BgGraph *g);
void bg_adj_free(BgAdj *a);
const char *bg_norm_name(BgNorm n);

/* ===== io_edgelist.c, io_zip.c, io_npz.c, graph_load.c: more graph formats ===========
 * docs/formats.md.  Edge lists and .npy edge arrays follow PyG: an edge (src, dst) is a
 * message from src to dst, the entry A[dst][src] (the transpose of Matrix Market's "i j"). */
/* Text, one "src dst [weight]" per line (0-based; '#' / '%' comments).  A comment
 * "# nodes: N" states the node count (*n_stated true), else it is the largest id + 1. */
bool bg_edgelist_load(const char *path, BgCoo *out, bool *n_stated, BgDiagSink *d);
/* edge_index [2, E] (dst_path NULL) or the 1-D pair path (sources) / dst_path (targets);
 * node count the largest id + 1. */
bool bg_edge_npy_load(const char *path, const char *dst_path, BgCoo *out, BgDiagSink *d);

typedef struct BgZipEntry {
    char *name;
    uint64_t offset;      /* of its local header */
    uint64_t csize, usize;
    uint32_t crc;
    int method;           /* 0 stored, 8 deflate */
    bool encrypted;
} BgZipEntry;
typedef struct BgZip {
    char *path;
    FILE *f;
    uint64_t size;        /* bytes before the central directory (where member data may lie) */
    BgZipEntry *e;
    int n;
} BgZip;
/* Reads the central directory (zip64 included). */
bool bg_zip_open(const char *path, BgZip *z, BgDiagSink *d);
const BgZipEntry *bg_zip_find(const BgZip *z, const char *name);
/* A member's bytes, malloc'd (stored, or deflate when built with zlib; CRC-32 checked);
 * members over max bytes are refused. */
bool bg_zip_read(BgZip *z, const BgZipEntry *e, uint64_t max, unsigned char **data, size_t *len,
                 BgDiagSink *d);
void bg_zip_close(BgZip *z);
/* scipy.sparse.save_npz (csr, csc or coo; compressed or not): COO of the stored entries,
 * A[i][j] as stored; the values are ignored. */
bool bg_npz_load(const char *path, BgCoo *out, BgDiagSink *d);

/* Any graph file (format by its first bytes: Matrix Market, .npz, .npy edge arrays, else an
 * edge list) as a CSR graph.  Formats that do not state the node count get
 * max(largest id + 1, min_nodes) nodes; *n_stated (may be NULL) says which it was. */
bool bg_graph_load_file(const char *path, int64_t min_nodes, BgGraph *out, bool *n_stated,
                        BgDiagSink *d);
/* Widens g to n nodes (the new ones isolated); false when out of memory. */
bool bg_graph_add_nodes(BgGraph *g, int64_t n);
/* A data directory's graph file: graph.mtx, graph.npz, edges.txt, edge_index.npy or src.npy
 * (with dst.npy), the first that exists (malloc'd), or NULL. */
char *bg_dataset_graph_path(const char *dir);

/* ===== dataset.c: a data directory (graph.mtx, features.npy, labels, splits) ======== */
typedef struct BgDataset {
    char *dir;
    BgGraph graph;
    BgTensor features;       /* f32 [N, F]; dim[0] = 0 when features.npy is absent */
    int32_t *labels;         /* [N] node labels (-1 = none) or NULL */
    int64_t *split[3];       /* train, val, test node ids, or NULL */
    int64_t nsplit[3];
    int32_t *graph_labels;   /* [ngraphs] for batched datasets, or NULL */
} BgDataset;
/* Loads what exists; a graph file is required (bg_dataset_graph_path).  Errors name the file. */
bool bg_dataset_load(const char *dir, BgDataset *out, BgDiagSink *d);
/* The same with the graph from graph_path (any bg_graph_load_file format) when not NULL. */
bool bg_dataset_load_graph(const char *dir, const char *graph_path, BgDataset *out, BgDiagSink *d);
void bg_dataset_free(BgDataset *ds);
const char *bg_default_data_root(void); /* $BGNN_DATA_DIR or "../shared/data" */

/* ===== ast.c, ast_print.c: the syntax tree (grammar/parser.y builds it) ============= */
typedef enum {
    BG_AST_IDENT,   /* name */
    BG_AST_NUMBER,  /* num, text */
    BG_AST_STRING,  /* text (unescaped) */
    BG_AST_CALL,    /* callee[.variant](args) {attrs} */
    BG_AST_MEMBER,  /* base.name, e.g. "conv1.weight".T */
} BgAstKind;

typedef struct BgAstExpr BgAstExpr;
typedef struct BgAstArg {
    const char *key;      /* NULL for positional, else "key: value" */
    BgLoc key_loc;
    BgAstExpr *value;
} BgAstArg;

struct BgAstExpr {
    BgAstKind kind;
    BgLoc loc;            /* whole expression */
    const char *name;     /* IDENT name; CALL callee; MEMBER member name */
    const char *variant;  /* CALL: text after the dot in bmm.FBB, or NULL */
    BgLoc name_loc;       /* CALL callee (with variant) / MEMBER name */
    const char *text;     /* NUMBER spelling; STRING contents */
    double num;
    BgAstExpr *base;      /* MEMBER */
    BgAstArg *args;       /* CALL */
    int nargs;
    BgAstArg *attrs;      /* CALL: the { key: value, ... } block (keys always set) */
    int nattrs;
    bool has_attr_block;
};

typedef struct BgAstDim {
    bool symbolic;        /* N, G, ... */
    const char *sym;
    int64_t value;
    BgLoc loc;
} BgAstDim;

typedef struct BgAstType {
    const char *dtype;    /* "f32", "b1", ... as written */
    BgLoc loc;
    BgAstDim dims[4];
    int ndims;
} BgAstType;

typedef enum {
    BG_STMT_MODEL,   /* model NAME */
    BG_STMT_GRAPH,   /* graph NAME = expr */
    BG_STMT_INPUT,   /* input NAME : type [= expr] */
    BG_STMT_PARAM,   /* param NAME : type = expr */
    BG_STMT_LET,     /* NAME = expr */
    BG_STMT_OUTPUT,  /* output [NAME =] expr */
} BgStmtKind;

typedef struct BgAstStmt {
    BgStmtKind kind;
    BgLoc loc;
    const char *name;     /* may be NULL for OUTPUT without a name */
    BgLoc name_loc;
    BgAstType type;       /* INPUT, PARAM */
    bool has_type;
    BgAstExpr *value;     /* may be NULL for INPUT */
} BgAstStmt;

typedef struct BgAst {
    const BgSource *src;
    BgAstStmt *stmts;
    int nstmts;
} BgAst;

/* grammar/parser.y: parses src; returns NULL only when nothing could be recovered.
 * Syntax errors go to d (several per run, with recovery). */
BgAst *bg_parse(BgArena *a, const BgSource *src, BgDiagSink *d);
char *bg_ast_print(const BgAst *ast); /* deterministic text, malloc'd */

/* ===== ir.c, ir_print.c, ir_verify.c: typed SSA over tensors ========================
 * One instruction defines one value; a value is named by its instruction's index
 * (BgRef).  Instructions are in definition order (operands always precede users). */
typedef enum {
#define OP(e, name, mn, mx, fl) BG_OP_##e,
#include "ops.def"
#undef OP
    BG_OP_COUNT
} BgOp;

enum { BG_OPF_LEAF = 1, BG_OPF_ELEMWISE = 2, BG_OPF_PREC = 4, BG_OPF_SINK = 8 };

typedef struct BgOpInfo {
    const char *name;
    int min_args, max_args;
    unsigned flags;
} BgOpInfo;
const BgOpInfo *bg_op_info(BgOp op);

typedef uint32_t BgRef;
#define BG_NONE ((BgRef)0xffffffffu)

#define BG_DIM_N (-1) /* number of nodes, known at run time */
#define BG_DIM_G (-2) /* number of graphs in a batch, known at run time */

typedef enum { BG_TY_F32, BG_TY_B1, BG_TY_ADJ, BG_TY_NONE } BgTyKind;
typedef struct BgType {
    BgTyKind kind;
    int rank;        /* 0 (ADJ, sinks), 1 or 2 */
    int64_t dim[2];  /* >= 0 concrete, or BG_DIM_N / BG_DIM_G */
} BgType;

typedef enum { BG_RED_SUM, BG_RED_MEAN, BG_RED_MAX } BgReduce;
/* How a BSPMM with 0/1 adjacency and b1 activations reduces +-1 values (reference-notes
 * section 4); the result is the same, the kernels differ. */
typedef enum { BG_METHOD_AUTO, BG_METHOD_IFELSE, BG_METHOD_ANDNOT, BG_METHOD_POPC2 } BgMethod;

typedef struct BgAttrs {
    const char *name;   /* INPUT/OUTPUT: model-level name; PARAM/PARAM_SCALE: tensor name */
    const char *file;   /* INPUT: data file; PARAM: .npy file (NULL = safetensors by name) */
    bool transposed;    /* PARAM/PARAM_SCALE: stored as [M,K] (PyTorch Linear), used as [K,M] */
    bool self_loops;    /* GRAPH */
    BgNorm norm;        /* GRAPH */
    float eps;          /* BATCHNORM, STANDARDIZE */
    BgReduce reduce;    /* READOUT */
    BgMethod method;    /* BSPMM */
} BgAttrs;

/* Steps: the fused prologue / epilogue of an instruction and the chain of a THRESHOLD
 * (docs/ir.md, section 4.1).  Each step owns a fixed number of operand slots (BG_NONE for an
 * absent optional one), laid out in step order after the op's own operands.
 *   SCL        rows f32[R] | none, cols f32[C] | none   v = fl(fl(v * rows[r]) * cols[c])
 *   ADD        f32[C] (bias) or f32[R,C]                v = fl(v + b)
 *   RELU       -                                        v = v > 0 ? v : +0
 *   THRESHOLD  f32[2,C] (a THRESHOLD's table)           bit by the table (last step, B result)
 *   BATCHNORM  mean, var, gamma | none, beta | none; eps  batchnorm (a BMM's prologue on its
 *              F activation, or a step of a THRESHOLD's chain) */
typedef enum {
    BG_STEP_SCL,
    BG_STEP_ADD,
    BG_STEP_RELU,
    BG_STEP_THRESHOLD,
    BG_STEP_BATCHNORM,
    BG_STEP_COUNT
} BgStepKind;

typedef struct BgStep {
    uint8_t kind;       /* BgStepKind */
    float eps;          /* BATCHNORM */
} BgStep;

#define BG_MAX_ARGS 16  /* operands of one instruction, step slots included */
#define BG_MAX_STEPS 8  /* prologue + epilogue (or chain) steps of one instruction */
/* Fusion passes keep the non-none operands of a fused instruction at or below this, so
 * that its launch fits the plan's argument limit (codegen/plan.h, BG_PLAN_MAX_ARGS = 12:
 * the output, up to 4 graph arrays for an adjacency operand, the rest). */
#define BG_FUSE_MAX_OPERANDS 8

typedef struct BgInst {
    BgOp op;
    char prec[4];       /* "FBB" for BMM/BSPMM/ADD, "" otherwise */
    BgType type;        /* type of the value defined */
    BgRef args[BG_MAX_ARGS]; /* BG_NONE for an absent optional operand (SCL, BATCHNORM, steps) */
    int nargs;          /* the op's own operands, then the step slots */
    BgAttrs attrs;
    BgLoc loc;          /* model source that produced it (kept through rewrites) */
    BgStep steps[BG_MAX_STEPS]; /* [0, npro): prologue (a BSPMM_MM: its product's mm steps);
                                 * [npro, nsteps): epilogue or chain */
    uint8_t npro, nsteps;
} BgInst;

typedef struct BgModule {
    BgArena *arena;
    const BgSource *src;
    const char *name;   /* model name */
    BgInst *insts;
    int ninsts, cap;
    const char *arch;   /* target attribute, e.g. "sm_90" (NULL = none) */
    bool fused;         /* fuse-model ran: the GPU runs the whole model as one kernel */
} BgModule;

BgModule *bg_module_new(BgArena *a, const BgSource *src, const char *name);
BgRef bg_ir_add(BgModule *m, BgOp op, const char *prec, BgType type, const BgRef *args,
                int nargs, BgLoc loc);
static inline BgInst *bg_ir_inst(BgModule *m, BgRef r) { return &m->insts[r]; }
BgType bg_type_make(BgTyKind k, int rank, int64_t d0, int64_t d1);
bool bg_type_eq(BgType a, BgType b);
/* "f32[N,64]", "b1[1433,64]", "adj" into buf (returns buf). */
char *bg_type_str(BgType t, char *buf, size_t n);
char *bg_ir_print(const BgModule *m); /* deterministic text, malloc'd */
/* Structural checks (operand order, arity, types, precisions); reports E9002. */
bool bg_ir_verify(const BgModule *m, BgDiagSink *d);
/* Removes instructions marked dead (keep[i] == false) and renumbers operands. */
void bg_ir_compact(BgModule *m, const bool *keep);
int bg_ir_use_count(const BgModule *m, BgRef r);
/* Inserts a copy of *in at index pos (later instructions move up by one, every operand
 * renumbered); in's own operands must be < pos.  Returns pos. */
BgRef bg_ir_insert(BgModule *m, int pos, const BgInst *in);
/* Every operand equal to `from` in instructions after `from` becomes `to`. */
void bg_ir_replace_uses(BgModule *m, BgRef from, BgRef to);
/* Steps (see BgStep): slots of a kind, its name in the IR text, the number of the op's own
 * operands (nargs minus the step slots), the index in args of step s's first slot, the
 * number of operands that are not none. */
int bg_step_slots(BgStepKind k);
const char *bg_step_name(BgStepKind k);
int bg_inst_nbase(const BgInst *in);
int bg_inst_step_arg(const BgInst *in, int s);
int bg_inst_noperands(const BgInst *in);
/* Appends an epilogue step with its slots; false (nothing changed) when the limits
 * (BG_MAX_STEPS, BG_MAX_ARGS) would be exceeded. */
bool bg_inst_add_step(BgInst *in, BgStepKind k, float eps, const BgRef *slots);
/* The same for a prologue step (after the existing prologue, before the epilogue). */
bool bg_inst_add_prologue(BgInst *in, BgStepKind k, float eps, const BgRef *slots);
/* The letters "PQX" of a BSPMM_MM's product bmm.PQX(x, W): the kinds of its operands x and W
 * and the aggregation's activation letter prec[0] (docs/ir.md, section 4.2); "???" when an
 * operand is missing. */
void bg_inst_mm_prec(const BgModule *m, const BgInst *in, char out[4]);

/* ===== sema.c: check the AST and lower it to IR ===================================== */
BgModule *bg_sema_lower(BgArena *a, const BgAst *ast, BgDiagSink *d);

/* ===== passes/: the pass table ====================================================== */
typedef bool (*BgPassFn)(BgModule *m, BgDiagSink *d);
typedef struct BgPass {
    const char *name;      /* "fuse-add" */
    const char *help;
    BgPassFn fn;
    bool in_default;       /* part of the default pipeline */
} BgPass;
const BgPass *bg_pass_table(int *n);
/* fuse_model.c: the phases of the one-kernel form.  phase[i] = phase of computing
 * instruction i (0, 1, ...), -1 for leaves and outputs; an instruction starts a new phase
 * when it reads a value computed in the current one (a grid-wide sync separates phases).
 * Returns the number of phases (0 when nothing is computed). */
int bg_ir_phases(const BgModule *m, int *phase);
const BgPass *bg_pass_find(const char *name);
/* Runs the named passes (NULL = default pipeline), verifying after each; calls
 * after(name, m, ud) after each one (for --print-after). */
bool bg_pass_run(BgModule *m, const char *const *names, int nnames, BgDiagSink *d,
                 void (*after)(const char *pass, const BgModule *m, void *ud), void *ud);

/* ===== compile.c: source text -> verified, optimised IR ============================= */
typedef struct BgCompileOpts {
    const char *const *passes; /* NULL = default pipeline */
    int npasses;
    void (*after)(const char *pass, const BgModule *m, void *ud);
    void *ud;
} BgCompileOpts;
/* Reads (if text == NULL) and parses, checks, lowers and runs passes. */
BgModule *bg_compile_file(BgArena *a, const char *path, const BgCompileOpts *o, BgDiagSink *d);
BgModule *bg_compile_text(BgArena *a, const char *name, const char *text, size_t len,
                          const BgCompileOpts *o, BgDiagSink *d);

/* ===== bind.c: resolve a module's leaves against data and weights ==================== */
typedef struct BgBindings {
    const BgModule *m;
    BgGraph *graph;        /* borrowed */
    BgAdj *adj;            /* per inst (only GRAPH entries set), owned */
    BgTensor *leaf;        /* per inst: INPUT, PARAM, PARAM_SCALE values, owned */
    int64_t n;             /* nodes */
    int64_t ngraphs;
} BgBindings;
/* weights: a .safetensors file or a directory (for npy(...) sources; relative npy paths
 * resolve against the directory of the safetensors file or the directory itself). */
bool bg_bind(const BgModule *m, BgGraph *g, const BgTensor *features, const char *weights,
             BgBindings *out, BgDiagSink *d);
/* The same with named tensors from wmem (borrowed; its path names it in messages) instead of
 * a weights file; npy(...) parameters then resolve against the working directory. */
bool bg_bind_mem(const BgModule *m, BgGraph *g, const BgTensor *features, const char *weights,
                 const BgSafetensors *wmem, BgBindings *out, BgDiagSink *d);
void bg_bindings_free(BgBindings *b);

/* ===== interp.c: the CPU reference interpreter ======================================= */
typedef struct BgInterpResult {
    int noutputs;
    const char **names;    /* borrowed from the module */
    BgTensor *outputs;     /* owned */
} BgInterpResult;
/* Runs every instruction; values[i] may be requested (for tests) via keep_all. */
bool bg_interp_run(const BgModule *m, const BgBindings *b, BgInterpResult *out,
                   BgTensor **all_values, BgDiagSink *d);
void bg_interp_result_free(BgInterpResult *r);
void bg_interp_values_free(const BgModule *m, BgTensor *values);

/* ===== codegen/: IR -> CUDA C++ (details in compiler/codegen/plan.h) ================== */
/* The generated translation unit for a module: deterministic text, one specialised kernel per
 * launch, provenance comments, the manifest embedded.  arch: "sm_80", "sm_90", ... */
char *bg_codegen_cuda(const BgModule *m, const char *arch, BgDiagSink *d); /* malloc'd */

#endif /* BG_H */
