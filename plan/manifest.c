/* manifest.c - the plan (plan.h) as versioned, line-based text, and its validating reader.
 *
 * Format (every line ends in '\n'; fields are single-space separated key=value pairs in the
 * fixed order below; strings are "..." with \" \\ and \xHH escapes; shapes are "-" (rank 0)
 * or comma-separated dims, N and G for the run-time dims; rows are N, N+1, G, G+1,
 * nnz(g), items(g), items1(g), splits(g) (graph g's schedule sizes, plan.h) or a decimal constant):
 *
 *   bgnn-manifest 8
 *   bgnn 0.1.0
 *   model gcn_bin
 *   arch sm_90                       ("-" when none)
 *   fp-strict false                  (compiled with --fp-strict: true)
 *   graphs 2
 *   graph 0 self_loops=true norm=none inst=0 chunk=2048 group=auto
 *                                    (chunk, group: the fast aggregation's work schedule, plan.h
 *                                     BgPlanGraph; group auto, always or never)
 *   buffers 14
 *   buffer 0 kind=f32 role=input rows=N cols=1433 width=1433 shape=N,1433 name="X"
 *            transposed=false graph=-1 garr=- inst=2          (one line)
 *   launches 9
 *   launch 0 kernel=bgnn_k8_batchnorm inst=8 op=batchnorm rows=N tpr=1433 block=256 args=3,0,1,2 fp=-
 *            prep=false alt=- alt_tpr=0 grid=0 fb=auto smem=0
 *                                    (one line; fp: the float order, base.h bg_fp_order_str: "-"
 *                                     none, seq, seq+fma, splitk(SxL), splitk(SxL)+fma; prep: run
 *                                     once after binding, plan.h: constant rows, reads only
 *                                     parameters and earlier prep outputs; alt: a second kernel
 *                                     of the same launch and its threads per row, plan.h; grid:
 *                                     blocks per SM at most, 0 none; fb: auto, rows, tiled or
 *                                     sparse, only with alt; docs/tuning.md; smem: dynamic
 *                                     shared bytes a block, 0 none, at most
 *                                     BG_PLAN_SMEM_MAX)
 *   fused 1 kernel=bgnn_model block=256   (the one-kernel form; "fused 0 kernel=- block=0")
 *   blocks 1 kernel=bgnn_graphs block=256 (the per-graph kernel; "blocks 0 kernel=- block=0")
 *   rowgroups 1
 *   rowgroup 0 kernel=bgnn_rows7 first=7 count=5 block=256 csr=-1 rows=n warp=0 wide=-1
 *                                    (the row groups, plan.h: launches first .. first+count-1
 *                                     in one kernel; ascending, disjoint, bg_plan_rowgroup_ok:
 *                                     row-local launches, the first maybe a gather (a bspmm,
 *                                     or a readout in a group of graph rows); csr:
 *                                     the INPUT buffer every sparse variant in it reads, or -1;
 *                                     rows: n, tiles of node rows, or g, of graph rows;
 *                                     warp: 1, the warp-rows form, csr -1; wide: the wide
 *                                     form's counters buffer, -1 in every other form)
 *   outputs 1
 *   output 0 name="logits" buf=13 type=f32 shape=N,7
 *   params 5
 *   param name="conv1.weight" prec=b1 shape=1433,64 transposed=true inst=5
 *   end
 *
 * params lists each PARAM / PARAM_SCALE instruction the buffers hold (prec f32, b1 or
 * scale), in buffer order; it is derived from the buffers and checked against them when
 * read.  The reader trusts nothing: every count, index and number is range-checked, every
 * line must be exactly one of the expected ones, lines are at most BG_MANIFEST_MAX_LINE
 * bytes, and write(read(text)) == text for every text it accepts. */
#include "plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BG_MANIFEST_MAX_LINE 4096
#define MAX_GRAPHS 256
#define MAX_BUFS 65536
#define MAX_LAUNCHES 65536
#define MAX_OUTPUTS 4096
#define MAX_STR 1024
#define MAX_DIM (1ll << 40)
#define MAX_INST (1ll << 30)

/* ---- writer ------------------------------------------------------------------------- */

/* One whole line: the formatted text and '\n'. */
static void line(BgStrBuf *e, const char *fmt, ...) BG_PRINTF(2, 3);
static void line(BgStrBuf *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bg_sb_vprintf(e, fmt, ap);
    va_end(ap);
    bg_sb_append(e, "\n", 1);
}

static void put_str(BgStrBuf *e, const char *s) {
    if (!s) {
        bg_sb_append(e, "-", 1);
        return;
    }
    bg_sb_append(e, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char b[2] = {'\\', (char)*p};
            bg_sb_append(e, b, 2);
        } else if (*p >= 0x20 && *p < 0x7f) {
            bg_sb_append(e, (const char *)p, 1);
        } else {
            bg_sb_printf(e, "\\x%02x", *p);
        }
    }
    bg_sb_append(e, "\"", 1);
}

static void put_dim(BgStrBuf *e, int64_t d) {
    if (d == BG_DIM_N) bg_sb_append(e, "N", 1);
    else if (d == BG_DIM_G) bg_sb_append(e, "G", 1);
    else bg_sb_printf(e, "%lld", (long long)d);
}

static void put_shape(BgStrBuf *e, int rank, const int64_t *dim) {
    if (rank == 0) {
        bg_sb_append(e, "-", 1);
        return;
    }
    for (int k = 0; k < rank; k++) {
        if (k) bg_sb_append(e, ",", 1);
        put_dim(e, dim[k]);
    }
}

static void put_rows(BgStrBuf *e, BgRowExpr r) {
    switch (r.kind) {
    case BG_ROWS_CONST: bg_sb_printf(e, "%lld", (long long)r.value); break;
    case BG_ROWS_N: bg_sb_append(e, "N", 1); break;
    case BG_ROWS_N1: bg_sb_append(e, "N+1", 3); break;
    case BG_ROWS_G: bg_sb_append(e, "G", 1); break;
    case BG_ROWS_G1: bg_sb_append(e, "G+1", 3); break;
    case BG_ROWS_NNZ: bg_sb_printf(e, "nnz(%d)", r.graph); break;
    case BG_ROWS_ITEMS: bg_sb_printf(e, "items(%d)", r.graph); break;
    case BG_ROWS_ITEMS1: bg_sb_printf(e, "items1(%d)", r.graph); break;
    case BG_ROWS_SPLITS: bg_sb_printf(e, "splits(%d)", r.graph); break;
    case BG_ROWS_SLOTS1: bg_sb_printf(e, "slots1(%d)", r.graph); break;
    }
}

static const char *bool_name(bool b) { return b ? "true" : "false"; }

/* The schedule's names: a graph's group (-1, 0, 1 at index group + 1) and a launch's fb (BgPlanFb). */
static const char *const groups[] = {"never", "auto", "always"};
static const char *const fbs[] = {"auto", "rows", "tiled", "sparse"};

/* The params list: indices of the first buffer of each distinct PARAM / PARAM_SCALE inst. */
static int param_bufs(const BgPlan *p, int *out) {
    int n = 0;
    for (int i = 0; i < p->nbufs; i++) {
        const BgPlanBuf *b = &p->bufs[i];
        if (b->role != BG_ROLE_PARAM && b->role != BG_ROLE_PARAM_SCALE) continue;
        bool seen = false;
        for (int k = 0; k < n && !seen; k++) {
            const BgPlanBuf *o = &p->bufs[out[k]];
            seen = o->inst == b->inst && o->role == b->role;
        }
        if (!seen) out[n++] = i;
    }
    return n;
}

static const char *param_prec(const BgPlanBuf *b) {
    if (b->role == BG_ROLE_PARAM_SCALE) return "scale";
    return b->kind == BG_BUF_F32 ? "f32" : "b1";
}

char *bg_manifest_write(const BgPlan *p) {
    BgStrBuf e = {0};
    line(&e, "bgnn-manifest %d", BG_MANIFEST_VERSION);
    line(&e, "bgnn %s", p->version ? p->version : BG_VERSION_STRING);
    line(&e, "model %s", p->model ? p->model : "model");
    line(&e, "arch %s", p->arch ? p->arch : "-");
    line(&e, "fp-strict %s", bool_name(p->fp_strict));
    line(&e, "graphs %d", p->ngraphs);
    for (int i = 0; i < p->ngraphs; i++)
        line(&e, "graph %d self_loops=%s norm=%s inst=%d chunk=%d group=%s", i,
                     bool_name(p->graphs[i].self_loops), bg_norm_name(p->graphs[i].norm),
                     p->graphs[i].inst, p->graphs[i].chunk, groups[p->graphs[i].group + 1]);
    line(&e, "buffers %d", p->nbufs);
    for (int i = 0; i < p->nbufs; i++) {
        const BgPlanBuf *b = &p->bufs[i];
        bg_sb_printf(&e, "buffer %d kind=%s role=%s rows=", i, bg_plan_kind_name(b->kind),
                       bg_plan_role_name(b->role));
        put_rows(&e, b->rows);
        bg_sb_printf(&e, " cols=%lld width=%lld shape=", (long long)b->cols, (long long)b->width);
        put_shape(&e, b->rank, b->dim);
        bg_sb_append(&e, " name=", 6);
        put_str(&e, b->name);
        bg_sb_printf(&e, " transposed=%s graph=%d garr=%s inst=%d\n", bool_name(b->transposed),
                       b->graph, b->role == BG_ROLE_GRAPH ? bg_plan_garr_name(b->garr) : "-",
                       b->inst);
    }
    line(&e, "launches %d", p->nlaunches);
    for (int i = 0; i < p->nlaunches; i++) {
        const BgPlanLaunch *l = &p->launches[i];
        bg_sb_printf(&e, "launch %d kernel=%s inst=%d op=%s rows=", i, l->kernel, l->inst, l->op);
        put_rows(&e, l->rows);
        bg_sb_printf(&e, " tpr=%d block=%d args=", l->threads_per_row, l->block_size);
        for (int k = 0; k < l->nargs; k++) bg_sb_printf(&e, k ? ",%d" : "%d", l->args[k]);
        char fb[48];
        bg_sb_printf(&e, " fp=%s prep=%s alt=%s alt_tpr=%d grid=%d fb=%s smem=%d\n", bg_fp_order_str(l->fp, fb, sizeof fb),
                     bool_name(l->prep), l->alt ? l->alt : "-", l->alt_tpr, l->grid_per_sm, fbs[l->fb], l->smem);
    }
    if (p->fused) line(&e, "fused 1 kernel=%s block=%d", p->fused_kernel, p->fused_block);
    else line(&e, "fused 0 kernel=- block=0");
    if (p->blocks) line(&e, "blocks 1 kernel=%s block=%d", p->blocks_kernel, p->blocks_block);
    else line(&e, "blocks 0 kernel=- block=0");
    line(&e, "rowgroups %d", p->nrowgroups);
    for (int i = 0; i < p->nrowgroups; i++) {
        const BgPlanRowGroup *g = &p->rowgroups[i];
        line(&e, "rowgroup %d kernel=%s first=%d count=%d block=%d csr=%d rows=%s warp=%d wide=%d", i, g->kernel,
             g->first, g->count, g->block, g->csr, g->rows == BG_ROWS_G ? "g" : "n", g->warp ? 1 : 0,
             g->wide ? g->counters : -1);
    }
    line(&e, "outputs %d", p->noutputs);
    for (int i = 0; i < p->noutputs; i++) {
        const BgPlanOutput *o = &p->outputs[i];
        bg_sb_printf(&e, "output %d name=", i);
        put_str(&e, o->name);
        bg_sb_printf(&e, " buf=%d type=%s shape=", o->buf, o->type == BG_DT_B1 ? "b1" : "f32");
        put_shape(&e, o->rank, o->dim);
        bg_sb_append(&e, "\n", 1);
    }
    int *pb = bg_xcalloc((size_t)p->nbufs + 1, sizeof(int));
    int np = param_bufs(p, pb);
    line(&e, "params %d", np);
    for (int i = 0; i < np; i++) {
        const BgPlanBuf *b = &p->bufs[pb[i]];
        bg_sb_append(&e, "param name=", 11);
        put_str(&e, b->name);
        bg_sb_printf(&e, " prec=%s shape=", param_prec(b));
        put_shape(&e, b->rank, b->dim);
        bg_sb_printf(&e, " transposed=%s inst=%d\n", bool_name(b->transposed), b->inst);
    }
    free(pb);
    line(&e, "end");
    return bg_sb_take(&e);
}

/* An op name as the IR spells them: 1 to 40 of [a-z0-9_.], starting with a letter. */
static bool is_op_name(const char *s) {
    size_t n = strlen(s);
    if (n < 1 || n > 40 || !(s[0] >= 'a' && s[0] <= 'z')) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.')) return false;
    return true;
}

/* ---- reader ------------------------------------------------------------------------- */

#define MAX_TOKS 16

typedef struct Rd {
    const char *s;
    size_t len, pos;
    int line;                 /* 1-based number of the current line */
    const char *what;
    BgArena *a;
    BgDiagSink *d;
    char buf[BG_MANIFEST_MAX_LINE + 1];
    char *tok[MAX_TOKS];      /* tokens of the current line (point into buf) */
    int ntok;
    bool failed;
} Rd;

static bool fail(Rd *r, const char *fmt, ...) BG_PRINTF(2, 3);
static bool fail(Rd *r, const char *fmt, ...) {
    if (r->failed) return false;
    r->failed = true;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->line > 0)
        bg_diag_error(r->d, BG_E_MANIFEST, "%s: manifest line %d: %s", r->what, r->line, msg);
    else
        bg_diag_error(r->d, BG_E_MANIFEST, "%s: manifest: %s", r->what, msg);
    return false;
}

/* Reads the next line into buf and splits it into tokens (single spaces, outside quotes). */
static bool next_line(Rd *r) {
    if (r->failed) return false;
    r->line++;
    if (r->pos >= r->len) return fail(r, "unexpected end of manifest (truncated?)");
    const char *start = r->s + r->pos;
    size_t avail = r->len - r->pos;
    const char *nl = memchr(start, '\n', avail < BG_MANIFEST_MAX_LINE + 1 ? avail : BG_MANIFEST_MAX_LINE + 1);
    if (!nl) {
        if (avail > BG_MANIFEST_MAX_LINE) return fail(r, "line longer than %d bytes", BG_MANIFEST_MAX_LINE);
        return fail(r, "last line has no newline (truncated?)");
    }
    size_t n = (size_t)(nl - start);
    if (memchr(start, 0, n)) return fail(r, "NUL byte in line");
    if (n && start[n - 1] == '\r') return fail(r, "carriage return in line");
    memcpy(r->buf, start, n);
    r->buf[n] = 0;
    r->pos += n + 1;
    r->ntok = 0;
    if (n == 0) return fail(r, "empty line");
    char *p = r->buf;
    while (*p) {
        if (r->ntok == MAX_TOKS) return fail(r, "too many fields");
        if (*p == ' ') return fail(r, "unexpected space");
        r->tok[r->ntok++] = p;
        bool q = false;
        for (; *p && (q || *p != ' '); p++) {
            if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) return fail(r, "control or non-ASCII byte");
            if (q && *p == '\\') {
                if (!p[1]) break;
                p++;
            } else if (*p == '"') {
                q = !q;
            }
        }
        if (q) return fail(r, "unterminated string");
        if (*p == ' ') {
            *p++ = 0;
            if (!*p) return fail(r, "trailing space");
        }
    }
    return true;
}

/* The line must have exactly n tokens and start with word. */
static bool expect_line(Rd *r, const char *word, int n) {
    if (!next_line(r)) return false;
    if (strcmp(r->tok[0], word) != 0) return fail(r, "expected '%s', found '%.40s'", word, r->tok[0]);
    if (r->ntok != n) return fail(r, "'%s' line has %d fields, expected %d", word, r->ntok, n);
    return true;
}

/* The value of token k, which must be key=VALUE. */
static const char *val(Rd *r, int k, const char *key) {
    if (r->failed) return NULL;
    size_t kl = strlen(key);
    if (strncmp(r->tok[k], key, kl) != 0 || r->tok[k][kl] != '=') {
        fail(r, "field %d: expected '%s=', found '%.40s'", k + 1, key, r->tok[k]);
        return NULL;
    }
    return r->tok[k] + kl + 1;
}

/* A decimal integer in [lo, hi] (optional leading '-'; no leading zeros, no '+'). */
static bool parse_int(Rd *r, const char *s, const char *what, long long lo, long long hi, long long *out) {
    if (!s) return false;
    const char *p = s;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    if (!*p || (p[0] == '0' && p[1]) || (neg && p[0] == '0'))
        return fail(r, "%s: malformed number '%.40s'", what, s);
    unsigned long long v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return fail(r, "%s: malformed number '%.40s'", what, s);
        if (v > (1ull << 62)) return fail(r, "%s: number out of range", what);
        v = v * 10 + (unsigned long long)(*p - '0');
    }
    if (v > (1ull << 62)) return fail(r, "%s: number out of range", what);
    long long x = neg ? -(long long)v : (long long)v;
    if (x < lo || x > hi) return fail(r, "%s %lld out of range [%lld, %lld]", what, x, lo, hi);
    *out = x;
    return true;
}

static bool parse_int_field(Rd *r, int k, const char *key, long long lo, long long hi, long long *out) {
    return parse_int(r, val(r, k, key), key, lo, hi, out);
}

static bool parse_bool(Rd *r, int k, const char *key, bool *out) {
    const char *v = val(r, k, key);
    if (!v) return false;
    if (strcmp(v, "true") == 0) *out = true;
    else if (strcmp(v, "false") == 0) *out = false;
    else return fail(r, "%s: expected true or false, found '%.40s'", key, v);
    return true;
}

/* Launch i (prep) has constant rows and reads only parameters and outputs of earlier prep
 * launches (plan.h, BgPlanLaunch.prep). */
static bool prep_reads_ok(const BgPlan *p, int i) {
    const BgPlanLaunch *l = &p->launches[i];
    if (l->rows.kind != BG_ROWS_CONST) return false;
    for (int k = 1; k < l->nargs; k++) {
        const BgPlanBuf *b = &p->bufs[l->args[k]];
        bool ok = b->role == BG_ROLE_PARAM || b->role == BG_ROLE_PARAM_SCALE;
        for (int j = 0; j < i && !ok; j++) ok = p->launches[j].prep && p->launches[j].args[0] == l->args[k];
        if (!ok) return false;
    }
    return true;
}

/* A quoted string (decoded into the arena) or "-" for none (*out = NULL). */
static bool parse_str(Rd *r, int k, const char *key, const char **out) {
    const char *v = val(r, k, key);
    if (!v) return false;
    if (strcmp(v, "-") == 0) {
        *out = NULL;
        return true;
    }
    size_t n = strlen(v);
    if (n < 2 || v[0] != '"' || v[n - 1] != '"') return fail(r, "%s: expected a quoted string", key);
    char tmp[MAX_STR + 1];
    size_t o = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (o == MAX_STR) return fail(r, "%s: string longer than %d bytes", key, MAX_STR);
        if (c == '"') return fail(r, "%s: stray quote in string", key);
        if (c != '\\') {
            tmp[o++] = (char)c;
            continue;
        }
        if (i + 2 >= n) return fail(r, "%s: bad escape", key);
        char e = v[++i];
        if (e == '"' || e == '\\') {
            tmp[o++] = e;
        } else if (e == 'x' && i + 3 < n) {
            unsigned x = 0;
            for (int h = 0; h < 2; h++) {
                char c2 = v[++i];
                x <<= 4;
                if (c2 >= '0' && c2 <= '9') x |= (unsigned)(c2 - '0');
                else if (c2 >= 'a' && c2 <= 'f') x |= (unsigned)(c2 - 'a' + 10);
                else return fail(r, "%s: bad \\x escape", key);
            }
            /* Only what the writer escapes: no NUL, and never a printable character. */
            if (x == 0 || (x >= 0x20 && x < 0x7f)) return fail(r, "%s: bad \\x escape", key);
            tmp[o++] = (char)x;
        } else {
            return fail(r, "%s: bad escape", key);
        }
    }
    tmp[o] = 0;
    *out = bg_arena_strndup(r->a, tmp, o);
    return true;
}

/* An identifier token (model name, kernel name, op name): [A-Za-z_][A-Za-z0-9_.]*, <= 128. */
static bool ident_ok(const char *s, bool allow_dot) {
    size_t n = strlen(s);
    if (n == 0 || n > 128) return false;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || (allow_dot && c == '.');
        if (!ok) return false;
    }
    return true;
}

static bool parse_dim(Rd *r, const char *s, const char *what, int64_t *out) {
    if (strcmp(s, "N") == 0) *out = BG_DIM_N;
    else if (strcmp(s, "G") == 0) *out = BG_DIM_G;
    else {
        long long v;
        if (!parse_int(r, s, what, 0, MAX_DIM, &v)) return false;
        *out = v;
    }
    return true;
}

static bool parse_shape(Rd *r, int k, int *rank, int64_t *dim) {
    const char *v = val(r, k, "shape");
    if (!v) return false;
    dim[0] = dim[1] = 0;
    if (strcmp(v, "-") == 0) {
        *rank = 0;
        return true;
    }
    char tmp[64];
    if (strlen(v) >= sizeof tmp) return fail(r, "shape: too long");
    strcpy(tmp, v);
    char *comma = strchr(tmp, ',');
    if (comma) {
        *comma = 0;
        if (strchr(comma + 1, ',')) return fail(r, "shape: more than 2 dims");
        *rank = 2;
        return parse_dim(r, tmp, "shape", &dim[0]) && parse_dim(r, comma + 1, "shape", &dim[1]);
    }
    *rank = 1;
    return parse_dim(r, tmp, "shape", &dim[0]);
}

static bool parse_rows(Rd *r, int k, int ngraphs, BgRowExpr *out) {
    const char *v = val(r, k, "rows");
    if (!v) return false;
    memset(out, 0, sizeof *out);
    out->graph = -1;
    if (strcmp(v, "N") == 0) out->kind = BG_ROWS_N;
    else if (strcmp(v, "N+1") == 0) out->kind = BG_ROWS_N1;
    else if (strcmp(v, "G") == 0) out->kind = BG_ROWS_G;
    else if (strcmp(v, "G+1") == 0) out->kind = BG_ROWS_G1;
    else if (strncmp(v, "nnz(", 4) == 0 || strncmp(v, "items(", 6) == 0 || strncmp(v, "items1(", 7) == 0 ||
             strncmp(v, "splits(", 7) == 0 || strncmp(v, "slots1(", 7) == 0) {
        /* a per-graph count: NAME(graph) */
        static const struct { const char *pre; BgRowKind kind; } fns[] = {
            {"nnz(", BG_ROWS_NNZ},       {"items(", BG_ROWS_ITEMS},   {"items1(", BG_ROWS_ITEMS1},
            {"splits(", BG_ROWS_SPLITS}, {"slots1(", BG_ROWS_SLOTS1}};
        size_t n = strlen(v), f = 0;
        while (strncmp(v, fns[f].pre, strlen(fns[f].pre)) != 0) f++;
        size_t pl = strlen(fns[f].pre);
        char tmp[32];
        if (v[n - 1] != ')' || n < pl + 2 || n - pl - 1 >= sizeof tmp) return fail(r, "rows: malformed '%.40s'", v);
        memcpy(tmp, v + pl, n - pl - 1);
        tmp[n - pl - 1] = 0;
        long long g;
        if (!parse_int(r, tmp, "rows: graph", 0, ngraphs - 1, &g)) return false;
        out->kind = fns[f].kind;
        out->graph = (int)g;
    } else {
        long long c;
        if (!parse_int(r, v, "rows", 0, MAX_DIM, &c)) return false;
        out->kind = BG_ROWS_CONST;
        out->value = c;
    }
    return true;
}

static bool parse_count(Rd *r, const char *word, long long max, int *out) {
    if (!expect_line(r, word, 2)) return false;
    long long v;
    if (!parse_int(r, r->tok[1], word, 0, max, &v)) return false;
    *out = (int)v;
    return true;
}

/* "WORD i ..." with i the expected ordinal. */
static bool expect_item(Rd *r, const char *word, int nfields, int i) {
    if (!expect_line(r, word, nfields)) return false;
    long long v;
    if (!parse_int(r, r->tok[1], word, 0, MAX_BUFS, &v)) return false;
    if (v != i) return fail(r, "%s %lld out of order (expected %d)", word, v, i);
    return true;
}

static int lookup(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static bool parse_enum(Rd *r, int k, const char *key, const char *const *names, int n, int *out) {
    const char *v = val(r, k, key);
    if (!v) return false;
    *out = lookup(v, names, n);
    if (*out < 0) return fail(r, "%s: unknown value '%.40s'", key, v);
    return true;
}

static bool check_buf(Rd *r, const BgPlan *p, const BgPlanBuf *b, int i) {
    int64_t expect_width;
    switch (b->kind) {
    case BG_BUF_F32: expect_width = b->cols; break;
    case BG_BUF_B1:
    case BG_BUF_B1T: expect_width = (b->cols + 31) / 32; break;
    default: expect_width = b->cols; break; /* i64 / i32: one element per column */
    }
    if (b->width != expect_width)
        return fail(r, "buffer %d: width %lld does not fit kind %s with %lld columns", i,
                    (long long)b->width, bg_plan_kind_name(b->kind), (long long)b->cols);
    bool named = b->role == BG_ROLE_INPUT || b->role == BG_ROLE_PARAM || b->role == BG_ROLE_PARAM_SCALE;
    if (named != (b->name != NULL))
        return fail(r, "buffer %d: role %s %s a name", i, bg_plan_role_name(b->role),
                    named ? "needs" : "takes no");
    if (b->transposed && b->role != BG_ROLE_PARAM && b->role != BG_ROLE_PARAM_SCALE)
        return fail(r, "buffer %d: only params can be transposed", i);
    if ((b->role == BG_ROLE_GRAPH) != (b->graph >= 0))
        return fail(r, "buffer %d: graph index only for graph arrays", i);
    if ((b->rows.kind == BG_ROWS_NNZ || b->rows.kind == BG_ROWS_ITEMS || b->rows.kind == BG_ROWS_ITEMS1 ||
         b->rows.kind == BG_ROWS_SPLITS || b->rows.kind == BG_ROWS_SLOTS1) &&
        b->role != BG_ROLE_GRAPH)
        return fail(r, "buffer %d: per-graph rows only for graph arrays", i);
    bool ok;
    switch (b->role) {
    case BG_ROLE_TEMP: ok = b->kind == BG_BUF_F32 || b->kind == BG_BUF_B1; break;
    case BG_ROLE_INPUT: ok = b->kind == BG_BUF_F32; break;
    case BG_ROLE_PARAM: ok = b->kind == BG_BUF_F32 || b->kind == BG_BUF_B1 || b->kind == BG_BUF_B1T; break;
    case BG_ROLE_PARAM_SCALE: ok = b->kind == BG_BUF_F32; break;
    case BG_ROLE_GRAPH_PTR: ok = b->kind == BG_BUF_I64 && b->rows.kind == BG_ROWS_G1; break;
    case BG_ROLE_GRAPH: {
        if (b->graph >= p->ngraphs) return fail(r, "buffer %d: graph %d of %d", i, b->graph, p->ngraphs);
        switch (b->garr) {
        case BG_GARR_ROWPTR: ok = b->kind == BG_BUF_I64 && b->rows.kind == BG_ROWS_N1; break;
        case BG_GARR_COL: ok = b->kind == BG_BUF_I32 && b->rows.kind == BG_ROWS_NNZ && b->rows.graph == b->graph; break;
        case BG_GARR_W: ok = b->kind == BG_BUF_F32 && b->rows.kind == BG_ROWS_NNZ && b->rows.graph == b->graph; break;
        case BG_GARR_ITEMS:
            ok = b->kind == BG_BUF_I32 && b->rows.kind == BG_ROWS_ITEMS1 && b->rows.graph == b->graph && b->width == 4;
            break;
        case BG_GARR_ORDER: ok = b->kind == BG_BUF_I32 && b->rows.kind == BG_ROWS_N1 && b->width == 4; break;
        case BG_GARR_SLOTS:
            ok = b->kind == BG_BUF_I32 && b->rows.kind == BG_ROWS_SLOTS1 && b->rows.graph == b->graph && b->width == 4;
            break;
        case BG_GARR_PARTIAL:
        case BG_GARR_DONE: /* the fast aggregation's split rows, or (DONE) the wide form's rows */
            ok = b->kind == BG_BUF_I32 && b->width >= 1 && (b->garr == BG_GARR_PARTIAL || b->width == 1) &&
                 ((b->rows.kind == BG_ROWS_SPLITS && b->rows.graph == b->graph) ||
                  (b->garr == BG_GARR_DONE && b->rows.kind == BG_ROWS_N));
            break;
        default: ok = b->kind == BG_BUF_F32 && b->rows.kind == BG_ROWS_N; break;
        }
        break;
    }
    default: ok = false;
    }
    if (!ok)
        return fail(r, "buffer %d: kind %s, rows or array do not fit role %s", i,
                    bg_plan_kind_name(b->kind), bg_plan_role_name(b->role));
    bool shaped = b->role != BG_ROLE_GRAPH && b->role != BG_ROLE_GRAPH_PTR;
    if (!shaped && b->rank != 0) return fail(r, "buffer %d: graph arrays have no shape", i);
    if (shaped && b->rank == 0) return fail(r, "buffer %d: needs a shape", i);
    return true;
}

BgPlan *bg_manifest_read(const char *text, size_t len, const char *what, BgArena *a,
                         BgDiagSink *d) {
    Rd *r = bg_xcalloc(1, sizeof *r);
    r->s = text;
    r->len = text ? len : 0;
    r->what = what ? what : "manifest";
    r->a = a;
    r->d = d;
    BgPlan *p = bg_arena_alloc(a, sizeof *p);
    static const char *const kinds[] = {"f32", "b1", "b1t", "i64", "i32"};
    static const char *const roles[] = {"temp", "input", "param", "param_scale", "graph", "graph_ptr"};
    static const char *const garrs[] = {"rowptr", "col", "rowf", "colf", "w", "items", "partial", "done", "order", "slots"};
    static const char *const norms[] = {"none", "sym", "mean"};
    long long v;

    /* Header: the version first, so a future format is refused with a clear message. */
    if (!next_line(r)) goto fail;
    if (r->ntok != 2 || strcmp(r->tok[0], "bgnn-manifest") != 0) {
        fail(r, "not a bgnn manifest (first line must be 'bgnn-manifest %d')", BG_MANIFEST_VERSION);
        goto fail;
    }
    if (!parse_int(r, r->tok[1], "manifest version", 0, 1000000, &v)) goto fail;
    if (v != BG_MANIFEST_VERSION) {
        fail(r, "manifest version %lld is not supported by this bgnn %s (it reads version %d); "
                "recompile the model", v, BG_VERSION_STRING, BG_MANIFEST_VERSION);
        goto fail;
    }
    if (!expect_line(r, "bgnn", 2)) goto fail;
    if (strlen(r->tok[1]) > 64) {
        fail(r, "version string too long");
        goto fail;
    }
    p->version = bg_arena_strdup(a, r->tok[1]);
    if (!expect_line(r, "model", 2)) goto fail;
    if (!ident_ok(r->tok[1], false)) {
        fail(r, "malformed model name");
        goto fail;
    }
    p->model = bg_arena_strdup(a, r->tok[1]);
    if (!expect_line(r, "arch", 2)) goto fail;
    if (strcmp(r->tok[1], "-") != 0) {
        int sm;
        if (strlen(r->tok[1]) > 16 || !bg_arch_parse(r->tok[1], &sm)) {
            fail(r, "malformed architecture '%.40s'", r->tok[1]);
            goto fail;
        }
        p->arch = bg_arena_strdup(a, r->tok[1]);
    }
    if (!expect_line(r, "fp-strict", 2)) goto fail;
    if (strcmp(r->tok[1], "true") == 0) p->fp_strict = true;
    else if (strcmp(r->tok[1], "false") != 0) {
        fail(r, "fp-strict must be true or false");
        goto fail;
    }

    if (!parse_count(r, "graphs", MAX_GRAPHS, &p->ngraphs)) goto fail;
    p->graphs = bg_arena_alloc(a, sizeof *p->graphs * (size_t)(p->ngraphs + 1));
    for (int i = 0; i < p->ngraphs; i++) {
        BgPlanGraph *g = &p->graphs[i];
        int norm;
        int group;
        long long chunk;
        if (!expect_item(r, "graph", 7, i) || !parse_bool(r, 2, "self_loops", &g->self_loops) ||
            !parse_enum(r, 3, "norm", norms, 3, &norm) ||
            !parse_int_field(r, 4, "inst", 0, MAX_INST, &v) ||
            !parse_int_field(r, 5, "chunk", 32, BG_PLAN_BSPMM_CHUNK, &chunk) ||
            !parse_enum(r, 6, "group", groups, 3, &group))
            goto fail;
        g->chunk = (int)chunk;
        g->group = group - 1;
        g->norm = norm == 0 ? BG_NORM_NONE : norm == 1 ? BG_NORM_SYM : BG_NORM_MEAN;
        if (strcmp(bg_norm_name(g->norm), norms[norm]) != 0) {
            fail(r, "norm: internal name mismatch");
            goto fail;
        }
        g->inst = (int)v;
    }

    if (!parse_count(r, "buffers", MAX_BUFS, &p->nbufs)) goto fail;
    p->bufs = bg_arena_alloc(a, sizeof *p->bufs * (size_t)(p->nbufs + 1));
    for (int i = 0; i < p->nbufs; i++) {
        BgPlanBuf *b = &p->bufs[i];
        int kind, role, garr = -1;
        if (!expect_item(r, "buffer", 13, i) || !parse_enum(r, 2, "kind", kinds, 5, &kind) ||
            !parse_enum(r, 3, "role", roles, 6, &role) || !parse_rows(r, 4, p->ngraphs, &b->rows))
            goto fail;
        b->kind = (BgBufKind)kind;
        b->role = (BgBufRole)role;
        long long cols, width, graph, inst;
        if (!parse_int_field(r, 5, "cols", 0, MAX_DIM, &cols) ||
            !parse_int_field(r, 6, "width", 0, MAX_DIM, &width) ||
            !parse_shape(r, 7, &b->rank, b->dim) || !parse_str(r, 8, "name", &b->name) ||
            !parse_bool(r, 9, "transposed", &b->transposed) ||
            !parse_int_field(r, 10, "graph", -1, MAX_GRAPHS, &graph))
            goto fail;
        const char *gv = val(r, 11, "garr");
        if (!gv) goto fail;
        if (strcmp(gv, "-") != 0 && (garr = lookup(gv, garrs, BG_GARR_COUNT)) < 0) {
            fail(r, "garr: unknown value '%.40s'", gv);
            goto fail;
        }
        if ((garr >= 0) != (b->role == BG_ROLE_GRAPH)) {
            fail(r, "buffer %d: garr is for graph arrays only (and required there)", i);
            goto fail;
        }
        if (!parse_int_field(r, 12, "inst", -1, MAX_INST, &inst)) goto fail;
        b->cols = cols;
        b->width = width;
        b->graph = (int)graph;
        b->garr = garr >= 0 ? (BgGraphArr)garr : BG_GARR_ROWPTR;
        b->inst = (int)inst;
        if (!check_buf(r, p, b, i)) goto fail;
        if (b->role == BG_ROLE_GRAPH_PTR) p->uses_graph_ptr = true;
    }

    if (!parse_count(r, "launches", MAX_LAUNCHES, &p->nlaunches)) goto fail;
    p->launches = bg_arena_alloc(a, sizeof *p->launches * (size_t)(p->nlaunches + 1));
    for (int i = 0; i < p->nlaunches; i++) {
        BgPlanLaunch *l = &p->launches[i];
        if (!expect_item(r, "launch", 16, i)) goto fail;
        const char *kv = val(r, 2, "kernel");
        if (!kv) goto fail;
        if (!ident_ok(kv, false)) {
            fail(r, "malformed kernel name");
            goto fail;
        }
        l->kernel = bg_arena_strdup(a, kv);
        if (!parse_int_field(r, 3, "inst", 0, MAX_INST, &v)) goto fail;
        l->inst = (int)v;
        const char *ov = val(r, 4, "op");
        if (!ov) goto fail;
        if (!is_op_name(ov)) { /* an IR op name (its variants: plan.h BgPlanLaunch.op), checked for its form */
            fail(r, "malformed op name '%.40s'", ov);
            goto fail;
        }
        l->op = bg_arena_strdup(a, ov);
        long long tpr, block;
        if (!parse_rows(r, 5, p->ngraphs, &l->rows) ||
            !parse_int_field(r, 6, "tpr", 1, 1 << 24, &tpr) ||
            !parse_int_field(r, 7, "block", 32, 1024, &block))
            goto fail;
        if (block % 32) {
            fail(r, "block %lld is not a multiple of 32", block);
            goto fail;
        }
        if (l->rows.kind == BG_ROWS_NNZ || l->rows.kind == BG_ROWS_ITEMS1 || l->rows.kind == BG_ROWS_SPLITS ||
            l->rows.kind == BG_ROWS_SLOTS1) {
            fail(r, "launch rows cannot be nnz, items1, splits or slots1");
            goto fail;
        }
        l->threads_per_row = (int)tpr;
        l->block_size = (int)block;
        const char *av = val(r, 8, "args");
        if (!av) goto fail;
        char tmp[BG_MANIFEST_MAX_LINE + 1];
        strcpy(tmp, av);
        char *save = tmp;
        l->nargs = 0;
        for (;;) {
            char *comma = strchr(save, ',');
            if (comma) *comma = 0;
            if (l->nargs == BG_PLAN_MAX_ARGS) {
                fail(r, "more than %d arguments", BG_PLAN_MAX_ARGS);
                goto fail;
            }
            if (!parse_int(r, save, "argument", 0, MAX_BUFS, &v)) goto fail;
            if (v >= p->nbufs) {
                fail(r, "launch refers to buffer %lld of %d", v, p->nbufs);
                goto fail;
            }
            l->args[l->nargs++] = (int)v;
            if (!comma) break;
            save = comma + 1;
        }
        const char *fv = val(r, 9, "fp");
        if (!fv) goto fail;
        if (!bg_fp_order_parse(fv, &l->fp)) {
            fail(r, "malformed float order '%.40s'", fv);
            goto fail;
        }
        if (!parse_bool(r, 10, "prep", &l->prep)) goto fail;
        const char *alt = val(r, 11, "alt");
        long long atpr;
        if (!alt || !parse_int_field(r, 12, "alt_tpr", 0, 1 << 24, &atpr)) goto fail;
        if (strcmp(alt, "-") == 0) {
            if (atpr != 0) {
                fail(r, "alt_tpr without an alternative kernel");
                goto fail;
            }
        } else if (!ident_ok(alt, false) || atpr < 1) {
            fail(r, "malformed alternative kernel");
            goto fail;
        } else {
            l->alt = bg_arena_strdup(a, alt);
            l->alt_tpr = (int)atpr;
        }
        long long gps;
        if (!parse_int_field(r, 13, "grid", 0, 1024, &gps) || !parse_enum(r, 14, "fb", fbs, 4, &l->fb)) goto fail;
        l->grid_per_sm = (int)gps;
        long long smem;
        if (!parse_int_field(r, 15, "smem", 0, BG_PLAN_SMEM_MAX, &smem)) goto fail;
        l->smem = (int)smem;
        if (l->fb != BG_PLAN_FB_AUTO && !l->alt) {
            fail(r, "fb=%s without an alternative kernel", fbs[l->fb]);
            goto fail;
        }
        if (p->bufs[l->args[0]].role != BG_ROLE_TEMP) {
            fail(r, "launch writes buffer %d, which is not a temporary", l->args[0]);
            goto fail;
        }
        if (l->prep && !prep_reads_ok(p, i)) {
            fail(r, "prep launch %d has non-constant rows or reads a buffer that is neither a parameter nor a "
                    "prep output", i);
            goto fail;
        }
        for (int k = 1; k < l->nargs; k++)
            if (l->args[k] == l->args[0]) {
                fail(r, "launch reads its own output buffer %d", l->args[0]);
                goto fail;
            }
    }

    {
        long long fz, fb;
        if (!expect_line(r, "fused", 4) || !parse_int(r, r->tok[1], "fused", 0, 1, &fz)) goto fail;
        const char *fk = val(r, 2, "kernel");
        if (!fk || !parse_int_field(r, 3, "block", 0, 1024, &fb)) goto fail;
        if (fz) {
            if (!ident_ok(fk, false) || fb < 32 || fb % 32 || p->nlaunches == 0 ||
                p->nbufs > BG_PLAN_FUSED_MAX_BUFS) {
                fail(r, "malformed fused kernel line");
                goto fail;
            }
            if (bg_plan_has_smem(p)) { /* its own blocks and shared memory (plan.h) */
                fail(r, "a fused kernel beside a launch with dynamic shared memory");
                goto fail;
            }
            p->fused = true;
            p->fused_kernel = bg_arena_strdup(a, fk);
            p->fused_block = (int)fb;
        } else if (strcmp(fk, "-") != 0 || fb != 0) {
            fail(r, "malformed fused kernel line");
            goto fail;
        }
    }
    {
        long long bz, bb;
        if (!expect_line(r, "blocks", 4) || !parse_int(r, r->tok[1], "blocks", 0, 1, &bz)) goto fail;
        const char *bk = val(r, 2, "kernel");
        if (!bk || !parse_int_field(r, 3, "block", 0, 1024, &bb)) goto fail;
        if (bz) {
            if (!ident_ok(bk, false) || bb < 32 || bb % 32 || !bg_plan_blocks_ok(p)) {
                fail(r, "malformed per-graph kernel line (or a plan that cannot have one)");
                goto fail;
            }
            p->blocks = true;
            p->blocks_kernel = bg_arena_strdup(a, bk);
            p->blocks_block = (int)bb;
        } else if (strcmp(bk, "-") != 0 || bb != 0) {
            fail(r, "malformed per-graph kernel line");
            goto fail;
        }
    }
    if (!parse_count(r, "rowgroups", MAX_LAUNCHES, &p->nrowgroups)) goto fail;
    p->rowgroups = bg_arena_alloc(a, sizeof *p->rowgroups * (size_t)(p->nrowgroups + 1));
    for (int i = 0, next = 0; i < p->nrowgroups; i++) {
        BgPlanRowGroup *g = &p->rowgroups[i];
        long long first, count, block, csr, warp, wide;
        if (!expect_item(r, "rowgroup", 10, i)) goto fail;
        const char *k = val(r, 2, "kernel");
        if (!k || !parse_int_field(r, 3, "first", 0, MAX_LAUNCHES, &first) ||
            !parse_int_field(r, 4, "count", 2, MAX_LAUNCHES, &count) || !parse_int_field(r, 5, "block", 32, 1024, &block) ||
            !parse_int_field(r, 6, "csr", -1, MAX_BUFS, &csr) || !parse_int_field(r, 8, "warp", 0, 1, &warp) ||
            !parse_int_field(r, 9, "wide", -1, MAX_BUFS, &wide))
            goto fail;
        const char *rk = val(r, 7, "rows");
        if (!rk) goto fail;
        if (strcmp(rk, "n") != 0 && strcmp(rk, "g") != 0) {
            fail(r, "row group %d: rows=%.20s, expected n or g", i, rk);
            goto fail;
        }
        const BgRowKind kind = rk[0] == 'g' ? BG_ROWS_G : BG_ROWS_N;
        if (kind == BG_ROWS_G && csr >= 0) {
            fail(r, "row group %d: csr= in a group of graph rows", i);
            goto fail;
        }
        if (warp && csr >= 0) {
            fail(r, "row group %d: warp=1 with csr=%lld (the warp-rows form has no sparse variant)", i, csr);
            goto fail;
        }
        if (csr >= p->nbufs || (csr >= 0 && p->bufs[csr].role != BG_ROLE_INPUT)) {
            fail(r, "row group %d: csr=%lld is not an input buffer", i, csr);
            goto fail;
        }
        if (!ident_ok(k, false) || block % 32) {
            fail(r, "malformed row group line");
            goto fail;
        }
        if (first < next || first + count > p->nlaunches) {
            fail(r, "row group %d (launches %lld..%lld) overlaps another or runs past the %d launches", i, first,
                 first + count - 1, p->nlaunches);
            goto fail;
        }
        int members = 0, bad;
        bool sparse = false;
        if (!bg_plan_rowgroup_ok(p, (int)first, (int)count, kind, &bad) && bad >= 0) {
            fail(r, "row group %d: launch %d cannot run in a row group", i, bad);
            goto fail;
        }
        for (long long j = first; j < first + count; j++) {
            const BgPlanLaunch *l = &p->launches[j];
            if (l->prep) continue;
            members++;
            if (bg_plan_sparse_tpr(p, l) > 0) {
                sparse = true;
                if (l->args[1] != csr) {
                    fail(r, "row group %d: launch %lld's sparse variant reads buffer %d, not csr=%lld", i, j,
                         l->args[1], csr);
                    goto fail;
                }
            }
        }
        if (members < 2 || (csr >= 0 && !sparse)) {
            fail(r, "row group %d: %s", i, members < 2 ? "fewer than two launches to run" : "csr= without a sparse variant");
            goto fail;
        }
        if (p->nbufs > BG_PLAN_FUSED_MAX_BUFS) {
            fail(r, "row group %d: %d buffers are more than a kernel of every buffer takes", i, p->nbufs);
            goto fail;
        }
        g->first = (int)first;
        g->count = (int)count;
        g->block = (int)block;
        g->kernel = bg_arena_strdup(a, k);
        g->csr = (int)csr;
        g->rows = kind;
        g->warp = warp != 0;
        g->wide = wide >= 0;
        g->counters = (int)wide;
        if (g->wide && !bg_plan_rowgroup_wide_ok(p, g)) {
            fail(r, "row group %d: wide=%lld, but the launches or the buffer do not fit the wide form", i, wide);
            goto fail;
        }
        next = (int)(first + count);
    }
    /* a DONE array of N rows is the counters of exactly one group in the wide form, and no
     * launch's argument (a fast aggregation's has SPLITS rows) */
    for (int b = 0; b < p->nbufs; b++) {
        const BgPlanBuf *pb = &p->bufs[b];
        if (pb->role != BG_ROLE_GRAPH || pb->garr != BG_GARR_DONE || pb->rows.kind != BG_ROWS_N) continue;
        int owners = 0;
        for (int i = 0; i < p->nrowgroups; i++) owners += p->rowgroups[i].wide && p->rowgroups[i].counters == b;
        for (int i = 0; i < p->nlaunches; i++)
            for (int k = 0; k < p->launches[i].nargs; k++) owners += 2 * (p->launches[i].args[k] == b);
        if (owners != 1) {
            fail(r, "buffer %d: a done array of N rows must be one wide row group's counters (wide=) and no launch's", b);
            goto fail;
        }
    }
    if (!parse_count(r, "outputs", MAX_OUTPUTS, &p->noutputs)) goto fail;
    p->outputs = bg_arena_alloc(a, sizeof *p->outputs * (size_t)(p->noutputs + 1));
    for (int i = 0; i < p->noutputs; i++) {
        BgPlanOutput *o = &p->outputs[i];
        static const char *const types[] = {"f32", "b1"};
        int ty;
        if (!expect_item(r, "output", 6, i) || !parse_str(r, 2, "name", &o->name) ||
            !parse_int_field(r, 3, "buf", 0, MAX_BUFS, &v))
            goto fail;
        if (!o->name) {
            fail(r, "output needs a name");
            goto fail;
        }
        if (v >= p->nbufs) {
            fail(r, "output refers to buffer %lld of %d", v, p->nbufs);
            goto fail;
        }
        o->buf = (int)v;
        if (!parse_enum(r, 4, "type", types, 2, &ty) || !parse_shape(r, 5, &o->rank, o->dim)) goto fail;
        o->type = ty ? BG_DT_B1 : BG_DT_F32;
        BgBufKind want = ty ? BG_BUF_B1 : BG_BUF_F32;
        if (p->bufs[o->buf].kind != want || o->rank == 0) {
            fail(r, "output type does not fit buffer %d", o->buf);
            goto fail;
        }
    }

    /* params: must be exactly the list the buffers imply. */
    int np;
    if (!parse_count(r, "params", MAX_BUFS, &np)) goto fail;
    int *pb = bg_xcalloc((size_t)p->nbufs + 1, sizeof(int));
    int want_np = param_bufs(p, pb);
    if (np != want_np) {
        free(pb);
        fail(r, "%d params listed, the buffers hold %d", np, want_np);
        goto fail;
    }
    for (int i = 0; i < np; i++) {
        const BgPlanBuf *b = &p->bufs[pb[i]];
        const char *name;
        int rank;
        int64_t dim[2];
        bool tr;
        const char *pv;
        bool ok = expect_line(r, "param", 6) && parse_str(r, 1, "name", &name) &&
                  (pv = val(r, 2, "prec")) && parse_shape(r, 3, &rank, dim) &&
                  parse_bool(r, 4, "transposed", &tr) && parse_int_field(r, 5, "inst", 0, MAX_INST, &v);
        if (ok && (!name || strcmp(name, b->name) != 0 || strcmp(pv, param_prec(b)) != 0 ||
                   rank != b->rank || (rank > 0 && dim[0] != b->dim[0]) ||
                   (rank > 1 && dim[1] != b->dim[1]) || tr != b->transposed || v != b->inst))
            ok = fail(r, "param does not match the buffers");
        if (!ok) {
            free(pb);
            goto fail;
        }
    }
    free(pb);
    if (!expect_line(r, "end", 1)) goto fail;
    if (r->pos != r->len) {
        r->line++;
        fail(r, "text after 'end'");
        goto fail;
    }
    free(r);
    return p;
fail:
    free(r);
    return NULL;
}
