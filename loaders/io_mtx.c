/* io_mtx.c - Matrix Market "matrix coordinate" reader (pattern|real|integer,
 * general|symmetric) into 0-based COO.  Streams the file line by line; every error names
 * the file and line.  Header numbers never size an allocation directly: arrays grow as
 * entries are read, and the first reservation is capped by what the file could hold. */
#include "loaders.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define MTX_MAX_DIM ((int64_t)0x7fffffff)
#define MTX_MAX_NNZ ((int64_t)1 << 32)

typedef enum { F_PATTERN, F_REAL, F_INTEGER } Field;

typedef struct {
    FILE *f;
    const char *path;
    char *line;
    size_t cap;
    size_t len;
    int64_t lineno;
    BgDiagSink *d;
} Reader;

/* Next line without its terminator; false at end of file. */
static bool next_line(Reader *r) {
    ssize_t n = getline(&r->line, &r->cap, r->f);
    if (n < 0) return false;
    r->lineno++;
    size_t k = (size_t)n;
    while (k > 0 && (r->line[k - 1] == '\n' || r->line[k - 1] == '\r')) k--;
    r->line[k] = 0;
    for (size_t i = 0; i < k; i++)
        if (r->line[i] == 0) r->line[i] = '?'; /* an embedded NUL never parses as a number */
    r->len = k;
    return true;
}

/* Splits the current line into at most max whitespace-separated tokens; returns the count
 * (max + 1 when there are more). */
static int split(Reader *r, char **tok, int max) {
    int n = 0;
    char *p = r->line, *end = r->line + r->len;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        if (p >= end) break;
        if (n == max) return max + 1;
        tok[n++] = p;
        while (p < end && *p != ' ' && *p != '\t') p++;
        if (p < end) *p++ = 0;
    }
    return n;
}

static bool blank(const Reader *r) {
    for (size_t i = 0; i < r->len; i++)
        if (r->line[i] != ' ' && r->line[i] != '\t') return false;
    return true;
}

/* Strict integer: the whole token, decimal, no overflow. */
static bool parse_i64(const char *s, int64_t *v) {
    if (!*s || isspace((unsigned char)*s)) return false;
    errno = 0;
    char *e;
    long long x = strtoll(s, &e, 10);
    if (*e || errno == ERANGE) return false;
    *v = x;
    return true;
}

static bool parse_f64(const char *s, double *v) {
    if (!*s || isspace((unsigned char)*s)) return false;
    errno = 0;
    char *e;
    double x = strtod(s, &e);
    if (*e || errno == ERANGE || !isfinite(x)) return false;
    *v = x;
    return true;
}

typedef struct {
    int64_t *row, *col;
    double *val;
    int64_t n, cap;
} Arr;

static bool arr_push(Arr *a, int64_t i, int64_t j, double v, bool vals) {
    if (a->n == a->cap) {
        int64_t nc = a->cap ? a->cap * 2 : 1024;
        int64_t *r2 = realloc(a->row, (size_t)nc * sizeof(int64_t));
        if (!r2) return false;
        a->row = r2;
        int64_t *c2 = realloc(a->col, (size_t)nc * sizeof(int64_t));
        if (!c2) return false;
        a->col = c2;
        if (vals) {
            double *v2 = realloc(a->val, (size_t)nc * sizeof(double));
            if (!v2) return false;
            a->val = v2;
        }
        a->cap = nc;
    }
    a->row[a->n] = i;
    a->col[a->n] = j;
    if (vals) a->val[a->n] = v;
    a->n++;
    return true;
}

static bool header(Reader *r, Field *field, bool *sym) {
    const char *p = r->path;
    if (!next_line(r)) {
        bg_diag_error(r->d, BG_E_FORMAT, "%s:1: empty file (expected a %%%%MatrixMarket header)", p);
        return false;
    }
    char *t[6];
    int n = split(r, t, 5);
    if (n < 1 || strcasecmp(t[0], "%%MatrixMarket") != 0) {
        bg_diag_error(r->d, BG_E_FORMAT, "%s:1: expected a '%%%%MatrixMarket' header line", p);
        return false;
    }
    if (n != 5) {
        bg_diag_error(r->d, BG_E_FORMAT, "%s:1: header needs 4 words after %%%%MatrixMarket (matrix coordinate FIELD SYMMETRY)", p);
        return false;
    }
    if (strcasecmp(t[1], "matrix") != 0) {
        bg_diag_error(r->d, BG_E_FORMAT, "%s:1: object '%s' not supported (only 'matrix')", p, t[1]);
        return false;
    }
    if (strcasecmp(t[2], "coordinate") != 0) {
        bg_diag_error(r->d, BG_E_FORMAT, "%s:1: format '%s' not supported (only 'coordinate'; 'array' is dense)", p, t[2]);
        return false;
    }
    if (strcasecmp(t[3], "pattern") == 0) *field = F_PATTERN;
    else if (strcasecmp(t[3], "real") == 0) *field = F_REAL;
    else if (strcasecmp(t[3], "integer") == 0) *field = F_INTEGER;
    else {
        bg_diag_error(r->d, BG_E_FORMAT, "%s:1: field '%s' not supported (pattern, real or integer)", p, t[3]);
        return false;
    }
    if (strcasecmp(t[4], "general") == 0) *sym = false;
    else if (strcasecmp(t[4], "symmetric") == 0) *sym = true;
    else {
        bg_diag_error(r->d, BG_E_FORMAT, "%s:1: symmetry '%s' not supported (general or symmetric)", p, t[4]);
        return false;
    }
    return true;
}

bool bg_mtx_load(const char *path, BgCoo *out, BgDiagSink *d) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        bg_diag_error(d, BG_E_IO, "%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    Reader r = {f, path, NULL, 0, 0, 0, d};
    Arr a = {0};
    bool ok = false;
    Field field;
    bool sym;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        bg_diag_error(d, BG_E_IO, "%s: not a regular file", path);
        goto done;
    }
    if (!header(&r, &field, &sym)) goto done;

    /* Comments, then the size line. */
    int64_t m = 0, n = 0, nnz = 0;
    for (;;) {
        if (!next_line(&r)) {
            bg_diag_error(d, BG_E_FORMAT, "%s:%lld: missing size line 'M N NNZ'", path, (long long)r.lineno + 1);
            goto done;
        }
        if (r.line[0] == '%' || blank(&r)) continue;
        char *t[4];
        int k = split(&r, t, 3);
        if (k != 3 || !parse_i64(t[0], &m) || !parse_i64(t[1], &n) || !parse_i64(t[2], &nnz)) {
            bg_diag_error(d, BG_E_FORMAT, "%s:%lld: expected the size line 'M N NNZ' (three integers)", path,
                          (long long)r.lineno);
            goto done;
        }
        break;
    }
    int64_t sline = r.lineno;
    if (m < 0 || n < 0 || nnz < 0) {
        bg_diag_error(d, BG_E_FORMAT, "%s:%lld: negative number in the size line", path, (long long)sline);
        goto done;
    }
    if (m > MTX_MAX_DIM || n > MTX_MAX_DIM) {
        bg_diag_error(d, BG_E_LIMIT, "%s:%lld: matrix %lld x %lld over the limit of %lld rows/columns", path,
                      (long long)sline, (long long)m, (long long)n, (long long)MTX_MAX_DIM);
        goto done;
    }
    if (nnz > MTX_MAX_NNZ) {
        bg_diag_error(d, BG_E_LIMIT, "%s:%lld: %lld entries over the limit of %lld", path, (long long)sline,
                      (long long)nnz, (long long)MTX_MAX_NNZ);
        goto done;
    }
    if (nnz > m * n) { /* m, n < 2^31: no overflow */
        bg_diag_error(d, BG_E_FORMAT, "%s:%lld: %lld entries do not fit a %lld x %lld matrix", path,
                      (long long)sline, (long long)nnz, (long long)m, (long long)n);
        goto done;
    }
    if (sym && m != n) {
        bg_diag_error(d, BG_E_FORMAT, "%s:%lld: a symmetric matrix must be square, got %lld x %lld", path,
                      (long long)sline, (long long)m, (long long)n);
        goto done;
    }
    /* First reservation: capped by what the rest of the file can hold (>= 4 bytes each). */
    long here = ftell(f);
    int64_t room = here >= 0 && (int64_t)st.st_size > here ? ((int64_t)st.st_size - here) / 4 : 0;
    int64_t res = nnz < room ? nnz : room;
    if (res > 0) {
        a.cap = res;
        a.row = malloc((size_t)res * sizeof(int64_t));
        a.col = malloc((size_t)res * sizeof(int64_t));
        a.val = field != F_PATTERN ? malloc((size_t)res * sizeof(double)) : NULL;
        if (!a.row || !a.col || (field != F_PATTERN && !a.val)) {
            bg_diag_error(d, BG_E_LIMIT, "%s: out of memory for %lld entries", path, (long long)nnz);
            goto done;
        }
    }
    int want = field == F_PATTERN ? 2 : 3;
    int64_t got = 0;
    while (next_line(&r)) {
        if (r.line[0] == '%' || blank(&r)) continue;
        if (got == nnz) {
            bg_diag_error(d, BG_E_FORMAT, "%s:%lld: more entries than the %lld given in the size line (line %lld)",
                          path, (long long)r.lineno, (long long)nnz, (long long)sline);
            goto done;
        }
        char *t[4];
        int k = split(&r, t, 3);
        if (k != want) {
            bg_diag_error(d, BG_E_FORMAT, "%s:%lld: expected %d fields (%s), found %s%d", path, (long long)r.lineno,
                          want, want == 2 ? "row column" : "row column value", k > want ? "more than " : "",
                          k > want ? want : k);
            goto done;
        }
        int64_t i, j;
        double v = 1.0;
        if (!parse_i64(t[0], &i)) {
            bg_diag_error(d, BG_E_FORMAT, "%s:%lld: row index '%.40s' is not an integer", path, (long long)r.lineno, t[0]);
            goto done;
        }
        if (!parse_i64(t[1], &j)) {
            bg_diag_error(d, BG_E_FORMAT, "%s:%lld: column index '%.40s' is not an integer", path, (long long)r.lineno, t[1]);
            goto done;
        }
        if (i < 1 || i > m) {
            bg_diag_error(d, BG_E_FORMAT, "%s:%lld: row index %lld out of range 1..%lld", path, (long long)r.lineno,
                          (long long)i, (long long)m);
            goto done;
        }
        if (j < 1 || j > n) {
            bg_diag_error(d, BG_E_FORMAT, "%s:%lld: column index %lld out of range 1..%lld", path, (long long)r.lineno,
                          (long long)j, (long long)n);
            goto done;
        }
        if (field == F_REAL && !parse_f64(t[2], &v)) {
            bg_diag_error(d, BG_E_FORMAT, "%s:%lld: value '%.40s' is not a finite real number", path,
                          (long long)r.lineno, t[2]);
            goto done;
        }
        if (field == F_INTEGER) {
            int64_t iv;
            if (!parse_i64(t[2], &iv)) {
                bg_diag_error(d, BG_E_FORMAT, "%s:%lld: value '%.40s' is not an integer", path, (long long)r.lineno, t[2]);
                goto done;
            }
            v = (double)iv;
        }
        bool vals = field != F_PATTERN;
        if (!arr_push(&a, i - 1, j - 1, v, vals) || (sym && i != j && !arr_push(&a, j - 1, i - 1, v, vals))) {
            bg_diag_error(d, BG_E_LIMIT, "%s:%lld: out of memory", path, (long long)r.lineno);
            goto done;
        }
        got++;
    }
    if (ferror(f)) {
        bg_diag_error(d, BG_E_IO, "%s:%lld: read error", path, (long long)r.lineno);
        goto done;
    }
    if (got < nnz) {
        bg_diag_error(d, BG_E_FORMAT, "%s:%lld: file ends after %lld of the %lld entries given in the size line", path,
                      (long long)r.lineno, (long long)got, (long long)nnz);
        goto done;
    }
    out->nrows = m;
    out->ncols = n;
    out->nnz = a.n;
    out->row = a.row ? a.row : bg_xmalloc(sizeof(int64_t));
    out->col = a.col ? a.col : bg_xmalloc(sizeof(int64_t));
    out->val = field == F_PATTERN ? NULL : a.val ? a.val : bg_xmalloc(sizeof(double));
    a.row = a.col = NULL;
    a.val = NULL;
    ok = true;
done:
    free(a.row);
    free(a.col);
    free(a.val);
    free(r.line);
    fclose(f);
    return ok;
}

void bg_coo_free(BgCoo *c) {
    if (!c) return;
    free(c->row);
    free(c->col);
    free(c->val);
    memset(c, 0, sizeof *c);
}
