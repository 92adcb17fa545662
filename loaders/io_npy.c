/* io_npy.c - NumPy .npy reader (versions 1-3) and float32 writer.
 * The reader parses the header dict itself (keys in any order, Python 2 'L' suffixes,
 * trailing commas), validates every size against the real file length and the limits
 * before allocating, and converts the data to f32 or i64 in bounded chunks (from a file, or
 * from memory for the members of an .npz archive).  The writer
 * emits v1.0 with the header padded to 64 bytes, atomically (temp file + rename). */
#include "loaders.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_MAX_ROWS ((int64_t)0x7fffffff)
#define NPY_MAX_COLS ((int64_t)1 << 24)
#define NPY_MAX_BYTES ((int64_t)8 << 30)
#define NPY_MAX_HEADER (1 << 20) /* numpy itself writes a few hundred bytes */

typedef enum { SRC_F4, SRC_F8, SRC_I4, SRC_I8, SRC_U1, SRC_B1 } SrcType;
static const int src_size[] = {4, 8, 4, 8, 1, 1};

/* ---- header dict parsing -------------------------------------------------------- */
typedef struct {
    const char *p, *end;
    const char *path;
    BgDiagSink *d;
} Hdr;

static void skip_ws(Hdr *h) {
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

/* A quoted Python string ('...' or "..."); returns its span. */
static bool parse_str(Hdr *h, const char **s, size_t *n) {
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return false;
    char q = *h->p++;
    const char *b = h->p;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\' || *h->p == '\n') return false;
        h->p++;
    }
    if (h->p >= h->end) return false;
    *s = b;
    *n = (size_t)(h->p - b);
    h->p++;
    return true;
}

static bool word_is(const char *s, size_t n, const char *w) {
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* Maps a descr string to a source type; false when unsupported. */
static bool descr_type(const char *s, size_t n, SrcType *t) {
    static const struct { const char *name; SrcType t; } tab[] = {
        {"<f4", SRC_F4}, {"=f4", SRC_F4}, {"<f8", SRC_F8}, {"=f8", SRC_F8},
        {"<i4", SRC_I4}, {"=i4", SRC_I4}, {"<i8", SRC_I8}, {"=i8", SRC_I8},
        {"|u1", SRC_U1}, {"<u1", SRC_U1}, {"=u1", SRC_U1}, {"u1", SRC_U1},
        {"|b1", SRC_B1}, {"<b1", SRC_B1}, {"=b1", SRC_B1}, {"b1", SRC_B1}, {"?", SRC_B1},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (word_is(s, n, tab[i].name)) {
            *t = tab[i].t;
            return true;
        }
    return false;
}

typedef struct {
    SrcType type;
    bool fortran;
    int rank;
    int64_t dim[2];
} NpyHeader;

static bool hdr_err(Hdr *h, int code, const char *field, const char *msg) {
    if (field)
        bg_diag_error(h->d, code, "%s: header field '%s': %s", h->path, field, msg);
    else
        bg_diag_error(h->d, code, "%s: header: %s", h->path, msg);
    return false;
}

/* shape: '(' [int {',' int}] [','] ')' ; ints may carry a Python 2 'L' suffix. */
static bool parse_shape(Hdr *h, NpyHeader *o) {
    if (h->p >= h->end || *h->p != '(') return hdr_err(h, BG_E_FORMAT, "shape", "expected a tuple");
    h->p++;
    int rank = 0;
    int64_t dim[3] = {0, 0, 0};
    for (;;) {
        skip_ws(h);
        if (h->p < h->end && *h->p == ')') break;
        if (h->p >= h->end || *h->p < '0' || *h->p > '9')
            return hdr_err(h, BG_E_FORMAT, "shape", "expected a non-negative integer");
        int64_t v = 0;
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            if (v > ((int64_t)1 << 58))
                return hdr_err(h, BG_E_LIMIT, "shape", "dimension too large");
            v = v * 10 + (*h->p++ - '0');
        }
        if (h->p < h->end && (*h->p == 'L' || *h->p == 'l')) h->p++;
        if (rank < 3) dim[rank] = v;
        rank++;
        skip_ws(h);
        if (h->p < h->end && *h->p == ',') {
            h->p++;
            continue;
        }
        if (h->p < h->end && *h->p == ')') break;
        return hdr_err(h, BG_E_FORMAT, "shape", "expected ',' or ')'");
    }
    h->p++;
    if (rank == 0 || rank > 2) {
        char m[96];
        snprintf(m, sizeof m, "rank %d not supported (1 or 2 dimensions)", rank);
        return hdr_err(h, BG_E_FORMAT, "shape", m);
    }
    o->rank = rank;
    o->dim[0] = dim[0];
    o->dim[1] = rank == 2 ? dim[1] : 0;
    return true;
}

static bool parse_header(Hdr *h, NpyHeader *o) {
    bool seen[3] = {false, false, false}; /* descr, fortran_order, shape */
    skip_ws(h);
    if (h->p >= h->end || *h->p != '{') return hdr_err(h, BG_E_FORMAT, NULL, "expected '{'");
    h->p++;
    for (;;) {
        skip_ws(h);
        if (h->p < h->end && *h->p == '}') break;
        const char *k;
        size_t kn;
        if (!parse_str(h, &k, &kn)) return hdr_err(h, BG_E_FORMAT, NULL, "expected a quoted key or '}'");
        skip_ws(h);
        if (h->p >= h->end || *h->p != ':') return hdr_err(h, BG_E_FORMAT, NULL, "expected ':' after a key");
        h->p++;
        skip_ws(h);
        int which = word_is(k, kn, "descr") ? 0 : word_is(k, kn, "fortran_order") ? 1
                  : word_is(k, kn, "shape") ? 2 : -1;
        if (which < 0) {
            char m[128];
            snprintf(m, sizeof m, "unknown key '%.*s'", (int)(kn > 40 ? 40 : kn), k);
            return hdr_err(h, BG_E_FORMAT, NULL, m);
        }
        static const char *names[] = {"descr", "fortran_order", "shape"};
        if (seen[which]) return hdr_err(h, BG_E_FORMAT, names[which], "given twice");
        seen[which] = true;
        if (which == 0) {
            const char *s;
            size_t sn;
            if (!parse_str(h, &s, &sn))
                return hdr_err(h, BG_E_FORMAT, "descr", "expected a type string (structured dtypes are not supported)");
            if (!descr_type(s, sn, &o->type)) {
                char m[160];
                snprintf(m, sizeof m, "unsupported dtype '%.*s' (expected <f4 <f8 <i4 <i8 |u1 |b1, little-endian)",
                         (int)(sn > 40 ? 40 : sn), s);
                return hdr_err(h, BG_E_FORMAT, "descr", m);
            }
        } else if (which == 1) {
            if (h->end - h->p >= 4 && memcmp(h->p, "True", 4) == 0) {
                o->fortran = true;
                h->p += 4;
            } else if (h->end - h->p >= 5 && memcmp(h->p, "False", 5) == 0) {
                o->fortran = false;
                h->p += 5;
            } else {
                return hdr_err(h, BG_E_FORMAT, "fortran_order", "expected True or False");
            }
        } else if (!parse_shape(h, o)) {
            return false;
        }
        skip_ws(h);
        if (h->p < h->end && *h->p == ',') {
            h->p++;
            continue;
        }
        if (h->p < h->end && *h->p == '}') break;
        return hdr_err(h, BG_E_FORMAT, NULL, "expected ',' or '}'");
    }
    h->p++;
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r' || *h->p == 0))
        h->p++;
    if (h->p != h->end) return hdr_err(h, BG_E_FORMAT, NULL, "unexpected text after the dict");
    static const char *names[] = {"descr", "fortran_order", "shape"};
    for (int i = 0; i < 3; i++)
        if (!seen[i]) return hdr_err(h, BG_E_FORMAT, names[i], "missing");
    if (o->fortran && o->rank == 2 && o->dim[0] > 1 && o->dim[1] > 1)
        return hdr_err(h, BG_E_FORMAT, "fortran_order", "Fortran (column-major) order is not supported for 2-D arrays");
    return true;
}

/* ---- reading --------------------------------------------------------------------- */
static bool read_exact(FILE *f, void *buf, size_t n) { return fread(buf, 1, n, f) == n; }

static uint32_t ld32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t ld64(const unsigned char *p) { return (uint64_t)ld32(p) | (uint64_t)ld32(p + 4) << 32; }

static void convert(SrcType t, BgNpyWant w, const unsigned char *src, size_t n, void *dst) {
    float *of = dst;
    int64_t *oi = dst;
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case SRC_F4: {
            uint32_t u = ld32(src + 4 * i);
            memcpy(&of[i], &u, 4);
            break;
        }
        case SRC_F8: {
            uint64_t u = ld64(src + 8 * i);
            double v;
            memcpy(&v, &u, 8);
            of[i] = (float)v;
            break;
        }
        case SRC_I4: {
            int32_t v = (int32_t)ld32(src + 4 * i);
            if (w == BG_NPY_AS_F32) of[i] = (float)v; else oi[i] = v;
            break;
        }
        case SRC_I8: {
            int64_t v = (int64_t)ld64(src + 8 * i);
            if (w == BG_NPY_AS_F32) of[i] = (float)v; else oi[i] = v;
            break;
        }
        case SRC_U1:
        case SRC_B1: {
            int v = t == SRC_B1 ? src[i] != 0 : src[i];
            if (w == BG_NPY_AS_F32) of[i] = (float)v; else oi[i] = v;
            break;
        }
        }
    }
}

static const char *descr_name(SrcType t) {
    static const char *n[] = {"<f4", "<f8", "<i4", "<i8", "|u1", "|b1"};
    return n[t];
}

/* The whole reader over an open stream of fsize bytes (a file, or memory: bg_npy_load_mem). */
static bool npy_read(FILE *f, int64_t fsize, const char *path, BgNpyWant want, BgNpy *out, BgDiagSink *d) {
    bool ok = false;
    char *hbuf = NULL;
    unsigned char *chunk = NULL;
    void *data = NULL;
    unsigned char pre[12];
    if (fsize < 10 || !read_exact(f, pre, 10)) {
        bg_diag_error(d, BG_E_FORMAT, "%s: file too short for a .npy preamble (%lld bytes)", path, (long long)fsize);
        goto done;
    }
    if (memcmp(pre, "\x93NUMPY", 6) != 0) {
        bg_diag_error(d, BG_E_FORMAT, "%s: not a .npy file (bad magic)", path);
        goto done;
    }
    int major = pre[6];
    int64_t hoff, hlen;
    if (major == 1) {
        hlen = pre[8] | pre[9] << 8;
        hoff = 10;
    } else if (major == 2 || major == 3) {
        if (fsize < 12 || !read_exact(f, pre + 10, 2)) {
            bg_diag_error(d, BG_E_FORMAT, "%s: file too short for a .npy v%d preamble", path, major);
            goto done;
        }
        hlen = (int64_t)ld32(pre + 8);
        hoff = 12;
    } else {
        bg_diag_error(d, BG_E_FORMAT, "%s: unsupported .npy version %d.%d (1, 2 or 3)", path, major, pre[7]);
        goto done;
    }
    if (hlen > fsize - hoff) {
        bg_diag_error(d, BG_E_FORMAT, "%s: header length %lld goes beyond the end of the file (%lld bytes)",
                      path, (long long)hlen, (long long)fsize);
        goto done;
    }
    if (hlen > NPY_MAX_HEADER) {
        bg_diag_error(d, BG_E_LIMIT, "%s: header length %lld over the limit of %d bytes", path,
                      (long long)hlen, NPY_MAX_HEADER);
        goto done;
    }
    hbuf = bg_xmalloc((size_t)hlen + 1);
    if (!read_exact(f, hbuf, (size_t)hlen)) {
        bg_diag_error(d, BG_E_IO, "%s: read error in the header", path);
        goto done;
    }
    hbuf[hlen] = 0;
    NpyHeader h = {0};
    Hdr hp = {hbuf, hbuf + hlen, path, d};
    if (!parse_header(&hp, &h)) goto done;

    if (want == BG_NPY_AS_I64 && (h.type == SRC_F4 || h.type == SRC_F8)) {
        bg_diag_error(d, BG_E_DATA_SHAPE, "%s: header field 'descr': '%s' is a float type but integer data is expected",
                      path, descr_name(h.type));
        goto done;
    }
    /* Limits before any allocation. */
    if (h.dim[0] > NPY_MAX_ROWS) {
        bg_diag_error(d, BG_E_LIMIT, "%s: header field 'shape': %lld rows over the limit of %lld", path,
                      (long long)h.dim[0], (long long)NPY_MAX_ROWS);
        goto done;
    }
    if (h.rank == 2 && h.dim[1] > NPY_MAX_COLS) {
        bg_diag_error(d, BG_E_LIMIT, "%s: header field 'shape': %lld columns over the limit of %lld", path,
                      (long long)h.dim[1], (long long)NPY_MAX_COLS);
        goto done;
    }
    int64_t numel = h.rank == 2 ? h.dim[0] * h.dim[1] : h.dim[0]; /* < 2^55: no overflow */
    int isz = src_size[h.type];
    int osz = want == BG_NPY_AS_F32 ? 4 : 8;
    if (numel > NPY_MAX_BYTES / isz || numel > NPY_MAX_BYTES / osz) {
        bg_diag_error(d, BG_E_LIMIT, "%s: header field 'shape': %lld elements over the limit of 8 GiB", path,
                      (long long)numel);
        goto done;
    }
    int64_t want_bytes = numel * isz, have = fsize - hoff - hlen;
    if (have != want_bytes) {
        bg_diag_error(d, BG_E_FORMAT, "%s: data is %lld bytes but header field 'shape' (%lld elements of %s) needs %lld (file %s)",
                      path, (long long)have, (long long)numel, descr_name(h.type), (long long)want_bytes,
                      have < want_bytes ? "truncated" : "has trailing bytes");
        goto done;
    }
    data = malloc(numel ? (size_t)(numel * osz) : 1);
    if (!data) {
        bg_diag_error(d, BG_E_LIMIT, "%s: out of memory for %lld elements", path, (long long)numel);
        goto done;
    }
    size_t per = (size_t)(1 << 20) / (size_t)isz;
    chunk = bg_xmalloc(per * (size_t)isz);
    for (int64_t i = 0; i < numel;) {
        size_t n = (size_t)(numel - i) < per ? (size_t)(numel - i) : per;
        if (!read_exact(f, chunk, n * (size_t)isz)) {
            bg_diag_error(d, BG_E_IO, "%s: read error in the data", path);
            goto done;
        }
        convert(h.type, want, chunk, n, (char *)data + (size_t)i * (size_t)osz);
        i += (int64_t)n;
    }
    out->dtype = want == BG_NPY_AS_F32 ? BG_DT_F32 : BG_DT_I64;
    out->rank = h.rank;
    out->dim[0] = h.dim[0];
    out->dim[1] = h.dim[1];
    out->data = data;
    data = NULL;
    ok = true;
done:
    free(data);
    free(chunk);
    free(hbuf);
    return ok;
}

bool bg_npy_load(const char *path, BgNpyWant want, BgNpy *out, BgDiagSink *d) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        bg_diag_error(d, BG_E_IO, "%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    struct stat st;
    bool ok = false;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        bg_diag_error(d, BG_E_IO, "%s: not a regular file", path);
    else
        ok = npy_read(f, (int64_t)st.st_size, path, want, out, d);
    fclose(f);
    return ok;
}

bool bg_npy_load_mem(const void *bytes, size_t len, const char *name, BgNpyWant want, BgNpy *out,
                     BgDiagSink *d) {
    if (len < 10) {
        bg_diag_error(d, BG_E_FORMAT, "%s: file too short for a .npy preamble (%zu bytes)", name, len);
        return false;
    }
    FILE *f = fmemopen((void *)(uintptr_t)bytes, len, "rb");
    if (!f) {
        bg_diag_error(d, BG_E_LIMIT, "%s: cannot read from memory: %s", name, strerror(errno));
        return false;
    }
    bool ok = npy_read(f, (int64_t)len, name, want, out, d);
    fclose(f);
    return ok;
}

void bg_npy_free(BgNpy *n) {
    if (!n) return;
    free(n->data);
    memset(n, 0, sizeof *n);
}

/* ---- writing --------------------------------------------------------------------- */
bool bg_npy_save_f32(const char *path, const float *data, int rank, const int64_t *dim,
                     BgDiagSink *d) {
    if (rank < 1 || rank > 2 || dim[0] < 0 || (rank == 2 && dim[1] < 0) ||
        dim[0] > NPY_MAX_ROWS || (rank == 2 && dim[1] > NPY_MAX_COLS)) {
        bg_diag_error(d, BG_E_WRITE, "%s: cannot write a rank-%d array of this shape as .npy", path, rank);
        return false;
    }
    char hdr[256];
    int n;
    if (rank == 1)
        n = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld,), }",
                     (long long)dim[0]);
    else
        n = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld, %lld), }",
                     (long long)dim[0], (long long)dim[1]);
    int total = (10 + n + 1 + 63) / 64 * 64; /* preamble + dict + '\n', padded to 64 */
    int hlen = total - 10;
    unsigned char pre[256];
    memcpy(pre, "\x93NUMPY\x01\x00", 8);
    pre[8] = (unsigned char)(hlen & 0xff);
    pre[9] = (unsigned char)(hlen >> 8);
    memcpy(pre + 10, hdr, (size_t)n);
    memset(pre + 10 + n, ' ', (size_t)(hlen - n - 1));
    pre[total - 1] = '\n';
    size_t numel = (size_t)(rank == 2 ? dim[0] * dim[1] : dim[0]);

    char *tmp;
    FILE *f = bg_atomic_create(path, &tmp, d);
    if (!f) return false;
    bool ok = fwrite(pre, 1, (size_t)total, f) == (size_t)total && bg_write_f32_le(f, data, numel);
    return bg_atomic_finish(f, tmp, path, ok, d);
}
