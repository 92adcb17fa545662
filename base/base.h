/* base.h - the lowest layer of bgnn, used by every other: arenas, strings, source text and
 * locations, collected diagnostics, whole-file and atomic I/O, host tensors.  One section
 * per source file of base/.
 *
 * Layers (docs/architecture.md; tests/check_layers.py enforces them):
 *   base/ <- loaders/ <- plan/ <- compiler/, runtime/ (beside each other) ; reference/ over
 *   compiler/ ; api/ and cli/ on top of all.
 *
 * Naming: internal functions are bg_<module>_<verb>, types BgCamel, constants BG_*.
 * Nothing here is exported; the public API is include/bgnn/bgnn.h.
 *
 * Ownership: compile-time objects (sources, AST, IR, strings) live in a BgArena and die
 * with it.  Host tensors and graphs own their buffers (malloc) and are released with their
 * *_free function.  No function of the library prints or exits: errors go to a BgDiagSink
 * or come back as a status; only the CLI (cli/bgnnc.c) renders and exits. */
#ifndef BG_BASE_H
#define BG_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#define BG_VERSION_STRING "0.1.0"

#if defined(__GNUC__)
#define BG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define BG_PRINTF(a, b)
#endif

/* Run-time dimensions in shapes (IR types, plan buffers, leaf specs). */
#define BG_DIM_N (-1) /* number of nodes, known at run time */
#define BG_DIM_G (-2) /* number of graphs in a batch, known at run time */

/* ===== fporder.c: the order of a float reduction (docs/semantics.md, section 2) ======
 * Chosen per IR instruction by the compiler (pass fp-order), printed in the IR (`fp=...`),
 * carried per launch in the plan and its manifest, and followed exactly by the CPU reference
 * and the CUDA templates.  NONE: the instruction does no float reduction.  SEQ: from +0.0f,
 * k ascending, every step rounded.  SPLITK: k cut into `split` chunks of `chunk` consecutive
 * k (the last one shorter; split = ceil(K / chunk)), each summed as SEQ from +0.0f, the partial
 * sums combined by the left fold ((p0 + p1) + p2) + ...  LANES: term k goes to lane k mod
 * `split` (32 in the IR: a warp; 256: a block's threads); each lane sums its terms as SEQ from +0, and the lanes are
 * combined by halves (p[i] = p[i] + p[i + h] for h = split/2, ..., 1; the result is p[0]): a
 * warp's butterfly, for the float64 row sums of absmean, standardize and bin.center.  fma: each
 * step of a product is
 * acc = fmaf(x, w, acc) (one rounding) instead of fl(acc + fl(x * w)).  SLOTS (an aggregation
 * of bit activations only): a row of at most `chunk` (T) edges as SEQ; a longer one's edges
 * go to `split` (S) slots, 4 S for a row of at least `hub` (H) edges, edge t to slot t mod
 * slots; each slot sums from +0 the factors of its edges whose bit is set (P) and all its
 * factors (Q); the slots are combined pairwise, p[s] = p[s] + p[s + h] for s a multiple of
 * 2h, h = 1, 2, 4, ...; the sum is fl(fl(P + P) - Q) (docs/semantics.md, section 2). */
typedef enum { BG_FP_NONE, BG_FP_SEQ, BG_FP_SPLITK, BG_FP_LANES, BG_FP_SLOTS } BgFpKind;
typedef struct BgFpOrder {
    uint8_t kind;   /* BgFpKind */
    bool fma;
    int32_t split;  /* SPLITK: number of chunks (>= 2); LANES: number of lanes; SLOTS: slots S; else 0 */
    int32_t chunk;  /* SPLITK: k per chunk (>= 1); SLOTS: the longest row summed as SEQ (T); else 0 */
    int32_t hub;    /* SLOTS: the shortest row of 4 S slots (H > T); else 0 */
} BgFpOrder;
/* "-", "seq", "seq+fma", "splitk(6x256)", "splitk(6x256)+fma", "lanes(32)", "slots(8,16,4096)"
 * into buf (returns buf; n >= 40). */
char *bg_fp_order_str(BgFpOrder o, char *buf, size_t n);
/* Parses that text; false when malformed (counts 1 .. 2^24; lanes 32 or 256). */
bool bg_fp_order_parse(const char *s, BgFpOrder *o);
bool bg_fp_order_eq(BgFpOrder a, BgFpOrder b);
/* A lane count LANES may have in the IR and the manifest: 32 (a warp), or 256 (a block of 256
 * threads: an absmean of a wide float aggregation, computed in that aggregation's epilogue,
 * templates/spmm_wide_outs.cuh), the ones the kernels implement (the reference's sums take any
 * power of two up to 256). */
bool bg_fp_lanes_ok(int32_t lanes);
/* A slot count SLOTS may have: 32 / G for the G = 1, 2, 4 or 8 words a warp's lanes take of
 * a row at once (templates/spmm_bits_slots.cuh). */
bool bg_fp_slots_ok(int32_t slots);
/* The slots of a row of cols columns: 32 / G, G = min(8, ceil(words) to a power of two). */
int32_t bg_fp_slots_for_cols(int64_t cols);
/* The rows SLOTS sums as SEQ (at most T edges) and the shortest of 4 S slots (H), the ones the
 * kernels take (templates/spmm_bits_slots.cuh; the runtime's row list counts the rows of at
 * least H edges, plan/row_order.c). */
#define BG_FP_SLOTS_SEQ_MAX 16
#define BG_FP_SLOTS_HUB_MIN 4096

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
void bg_sb_vprintf(BgStrBuf *b, const char *fmt, va_list ap);
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
/* Reads a whole file (at most 64 MiB) into malloc'd memory, NUL-terminated. */
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
}/* "f32[N,64]", "b1[1433,64]", "adj": a kind name and a shape (dims may be BG_DIM_N / G);
 * rank 0 gives the kind alone.  Returns buf. */
char *bg_shape_str(const char *kind, int rank, const int64_t *dim, char *buf, size_t n);
/* F32 -> B1 bits in the canonical layout (bit = sign bit clear, i.e. x >= +0 or NaN
 * without sign); a B1 input is copied.  false (y zeroed) on a bad input or no memory. */
bool bg_tensor_to_bits(const BgTensor *x, BgTensor *y);

#endif /* BG_BASE_H */
