/* io_edgelist.c - graphs as edge-list text and as .npy edge arrays, into COO entries.
 *
 * Edge list: one edge "src dst" per line (0-based node ids separated by spaces, tabs or one
 * comma; an optional third column, a weight, is checked as a number and ignored), blank lines
 * and comment lines starting with '#' or '%'.  A comment "# nodes: N" (SNAP writes
 * "# Nodes: N Edges: E") states the node count; else it is the largest id + 1.
 * .npy: edge_index [2, E] (PyG: row 0 the sources, row 1 the targets) or two 1-D arrays
 * src / dst of the same length; integer dtypes only.
 * Both follow PyG's convention: an edge is a message from src to dst, so it is the entry
 * A[dst][src] (row dst aggregates column src), the transpose of Matrix Market's "i j".
 * Errors name the file and the line (text) or the entry (.npy). */
#include "loaders.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EL_MAX_ID ((int64_t)INT32_MAX - 1) /* ids index a CSR graph of at most INT32_MAX nodes */

typedef struct {
    int64_t *src, *dst;
    int64_t n, cap;
} Edges;

static bool push(Edges *e, int64_t s, int64_t t) {
    if (e->n == e->cap) {
        int64_t cap = e->cap ? e->cap * 2 : 1024;
        int64_t *a = realloc(e->src, sizeof(int64_t) * (size_t)cap);
        if (!a) return false;
        e->src = a;
        int64_t *b = realloc(e->dst, sizeof(int64_t) * (size_t)cap);
        if (!b) return false;
        e->dst = b;
        e->cap = cap;
    }
    e->src[e->n] = s;
    e->dst[e->n] = t;
    e->n++;
    return true;
}

/* A non-negative decimal id; *end past it. */
static bool parse_id(const char *s, const char **end, int64_t *v) {
    if (!isdigit((unsigned char)*s)) return false;
    int64_t x = 0;
    while (isdigit((unsigned char)*s)) {
        if (x > (INT64_MAX - 9) / 10) return false;
        x = x * 10 + (*s++ - '0');
    }
    *end = s;
    *v = x;
    return true;
}

static const char *skip_sep(const char *s, bool *comma) {
    *comma = false;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == ',') {
        *comma = true;
        s++;
        while (*s == ' ' || *s == '\t') s++;
    }
    return s;
}

/* "# nodes: N" / "# Nodes: N Edges: E" (after the comment character). */
static bool nodes_comment(const char *s, int64_t *n) {
    while (*s == ' ' || *s == '\t') s++;
    if (strncasecmp(s, "nodes", 5) != 0) return false;
    s += 5;
    while (*s == ' ' || *s == '\t' || *s == ':' || *s == '=') s++;
    const char *e;
    return parse_id(s, &e, n) && (*e == 0 || isspace((unsigned char)*e));
}

static void coo_from_edges(Edges *e, int64_t n, BgCoo *out) {
    out->nrows = out->ncols = n;
    out->nnz = e->n;
    out->row = e->dst; /* A[dst][src] */
    out->col = e->src;
    out->val = NULL;
    if (!out->row) out->row = bg_xcalloc(1, sizeof(int64_t));
    if (!out->col) out->col = bg_xcalloc(1, sizeof(int64_t));
}

bool bg_edgelist_load(const char *path, BgCoo *out, bool *n_stated, BgDiagSink *d) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        bg_diag_error(d, BG_E_IO, "%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    Edges e = {NULL, NULL, 0, 0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long long lineno = 0, stated_line = 0;
    int64_t stated = -1, maxid = -1;
    bool ok = true;
    while (ok && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if ((size_t)len != strlen(line)) {
            bg_diag_error(d, BG_E_FORMAT, "%s:%lld: NUL byte in the line (not a text edge list?)", path, lineno);
            ok = false;
            break;
        }
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        const char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == 0) continue;
        if (*s == '#' || *s == '%') {
            int64_t n;
            if (stated < 0 && nodes_comment(s + 1, &n)) {
                if (n > EL_MAX_ID + 1) {
                    bg_diag_error(d, BG_E_LIMIT, "%s:%lld: %lld nodes over the limit of %lld", path, lineno, (long long)n,
                                  (long long)EL_MAX_ID + 1);
                    ok = false;
                }
                stated = n;
                stated_line = lineno;
                if (ok && maxid >= stated) {
                    bg_diag_error(d, BG_E_FORMAT, "%s:%lld: states %lld nodes, but an earlier line uses node id %lld", path,
                                  lineno, (long long)n, (long long)maxid);
                    ok = false;
                }
            }
            continue;
        }
        int64_t v[2];
        const char *p = s, *end;
        bool comma;
        for (int k = 0; k < 2 && ok; k++) {
            if (*p == '-') {
                bg_diag_error(d, BG_E_FORMAT, "%s:%lld: node id '%.32s' is negative (ids are 0-based)", path, lineno, p);
                ok = false;
            } else if (!parse_id(p, &end, &v[k]) || (*end && *end != ' ' && *end != '\t' && *end != ',')) {
                bg_diag_error(d, BG_E_FORMAT, "%s:%lld: expected two node ids 'src dst', got '%.60s'", path, lineno, s);
                ok = false;
            } else if (v[k] > EL_MAX_ID) {
                bg_diag_error(d, BG_E_LIMIT, "%s:%lld: node id %lld over the limit of %lld", path, lineno, (long long)v[k],
                              (long long)EL_MAX_ID);
                ok = false;
            } else if (stated >= 0 && v[k] >= stated) {
                bg_diag_error(d, BG_E_FORMAT, "%s:%lld: node id %lld out of range for %lld nodes (stated on line %lld)", path,
                              lineno, (long long)v[k], (long long)stated, stated_line);
                ok = false;
            } else {
                p = skip_sep(end, &comma);
                if (k == 0 && *p == 0) {
                    bg_diag_error(d, BG_E_FORMAT, "%s:%lld: expected two node ids 'src dst', got '%.60s'", path, lineno, s);
                    ok = false;
                }
            }
        }
        if (!ok) break;
        if (*p) { /* an optional weight */
            char *wend;
            errno = 0;
            strtod(p, &wend);
            const char *q = wend;
            while (*q == ' ' || *q == '\t') q++;
            if (wend == p || *q) {
                bg_diag_error(d, BG_E_FORMAT, "%s:%lld: expected 'src dst' or 'src dst weight', got '%.60s'", path, lineno, s);
                ok = false;
                break;
            }
        }
        if (!push(&e, v[0], v[1])) {
            bg_diag_error(d, BG_E_LIMIT, "%s:%lld: out of memory after %lld edges", path, lineno, (long long)e.n);
            ok = false;
            break;
        }
        if (v[0] > maxid) maxid = v[0];
        if (v[1] > maxid) maxid = v[1];
    }
    if (ok && ferror(f)) {
        bg_diag_error(d, BG_E_IO, "%s: read error after line %lld", path, lineno);
        ok = false;
    }
    free(line);
    fclose(f);
    if (!ok) {
        free(e.src);
        free(e.dst);
        return false;
    }
    if (n_stated) *n_stated = stated >= 0;
    coo_from_edges(&e, stated >= 0 ? stated : maxid + 1, out);
    return true;
}

/* Loads an integer .npy for the edge arrays. */
static bool load_int_npy(const char *path, BgNpy *v, BgDiagSink *d) {
    return bg_npy_load(path, BG_NPY_AS_I64, v, d);
}

static bool check_ids(const char *path, const int64_t *x, int64_t n, int row, bool two_d, int64_t *maxid, BgDiagSink *d) {
    for (int64_t i = 0; i < n; i++) {
        if (x[i] < 0 || x[i] > EL_MAX_ID) {
            char where[64];
            if (two_d) snprintf(where, sizeof where, "(%d, %lld)", row, (long long)i);
            else snprintf(where, sizeof where, "%lld", (long long)i);
            if (x[i] < 0)
                bg_diag_error(d, BG_E_FORMAT, "%s: entry %s: node id %lld is negative (ids are 0-based)", path, where,
                              (long long)x[i]);
            else
                bg_diag_error(d, BG_E_LIMIT, "%s: entry %s: node id %lld over the limit of %lld", path, where,
                              (long long)x[i], (long long)EL_MAX_ID);
            return false;
        }
        if (x[i] > *maxid) *maxid = x[i];
    }
    return true;
}

bool bg_edge_npy_load(const char *path, const char *dst_path, BgCoo *out, BgDiagSink *d) {
    BgNpy a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    int64_t maxid = -1;
    Edges e = {NULL, NULL, 0, 0};
    if (!load_int_npy(path, &a, d)) return false;
    if (!dst_path) {
        if (a.rank != 2 || a.dim[0] != 2) {
            bool transposed = a.rank == 2 && a.dim[1] == 2;
            char sh[64];
            if (a.rank == 2) snprintf(sh, sizeof sh, "(%lld, %lld)", (long long)a.dim[0], (long long)a.dim[1]);
            else snprintf(sh, sizeof sh, "(%lld,)", (long long)a.dim[0]);
            bg_diag_error(d, BG_E_FORMAT, "%s: edge_index must have shape (2, E), got %s%s", path, sh,
                          transposed ? " (transpose it: PyG's layout is [2, E])" : "");
            bg_npy_free(&a);
            return false;
        }
        int64_t ne = a.dim[1];
        const int64_t *x = a.data;
        if (!check_ids(path, x, ne, 0, true, &maxid, d) || !check_ids(path, x + ne, ne, 1, true, &maxid, d)) {
            bg_npy_free(&a);
            return false;
        }
        e.src = bg_xmalloc(sizeof(int64_t) * (size_t)(ne ? ne : 1));
        memcpy(e.src, x, sizeof(int64_t) * (size_t)ne);
        e.dst = a.data; /* rows 0 and 1: move row 1 to the front */
        memmove(e.dst, x + ne, sizeof(int64_t) * (size_t)ne);
        a.data = NULL;
        e.n = ne;
    } else {
        if (!load_int_npy(dst_path, &b, d)) {
            bg_npy_free(&a);
            return false;
        }
        const char *bad = a.rank != 1 ? path : b.rank != 1 ? dst_path : NULL;
        if (bad || a.dim[0] != b.dim[0] ||
            !check_ids(path, a.data, a.dim[0], 0, false, &maxid, d) ||
            !check_ids(dst_path, b.data, b.dim[0], 0, false, &maxid, d)) {
            if (bad)
                bg_diag_error(d, BG_E_FORMAT, "%s: expected a 1-D array of node ids", bad);
            else if (a.dim[0] != b.dim[0])
                bg_diag_error(d, BG_E_FORMAT, "%s: %lld entries, but %s has %lld", dst_path, (long long)b.dim[0], path,
                              (long long)a.dim[0]);
            bg_npy_free(&a);
            bg_npy_free(&b);
            return false;
        }
        e.src = a.data;
        e.dst = b.data;
        e.n = a.dim[0];
        a.data = b.data = NULL;
    }
    bg_npy_free(&a);
    bg_npy_free(&b);
    coo_from_edges(&e, maxid + 1, out);
    return true;
}
