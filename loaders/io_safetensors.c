/* io_safetensors.c - safetensors reader and float32 writer.
 * Layout: u64 LE header length, JSON header {name: {dtype, shape, data_offsets}, ...,
 * "__metadata__": {...}}, then the data section.  The JSON is parsed by a small strict
 * parser here; every offset is checked against the data section before any read, and
 * tensor sizes are bounded by the file size, so no header number sizes an allocation on
 * its own.  F32/F16/BF16 become f32 (exact half conversion), I32/I64 become i64. */
#include "loaders.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_MAX_HEADER ((uint64_t)100 * 1000 * 1000)
#define ST_MAX_DEPTH 64
#define ST_MAX_NUM ((int64_t)1 << 62)

typedef enum { ST_F32, ST_F16, ST_BF16, ST_I32, ST_I64 } StType;
static const char *const st_names[] = {"F32", "F16", "BF16", "I32", "I64"};
static const int st_size[] = {4, 2, 2, 4, 8};

/* ---- JSON ------------------------------------------------------------------------ */
typedef struct {
    const char *base, *p, *end;
    const char *path;
    BgDiagSink *d;
} J;

static bool jerr(J *j, const char *what) {
    bg_diag_error(j->d, BG_E_FORMAT, "%s: header JSON at byte %lld: %s", j->path,
                  (long long)(j->p - j->base), what);
    return false;
}

static void jws(J *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static bool jlit(J *j, char c) {
    jws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return true;
    }
    return false;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool hex4(J *j, unsigned *v) {
    if (j->end - j->p < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(j->p[i]);
        if (h < 0) return false;
        *v = *v << 4 | (unsigned)h;
    }
    j->p += 4;
    return true;
}

/* A JSON string, unescaped into a malloc'd NUL-terminated buffer (out may be NULL to
 * skip).  Embedded NULs are rejected. */
static bool jstring(J *j, char **out) {
    jws(j);
    if (j->p >= j->end || *j->p != '"') return jerr(j, "expected a string");
    j->p++;
    const char *b = j->p;
    while (j->p < j->end && *j->p != '"') j->p += *j->p == '\\' && j->end - j->p > 1 ? 2 : 1;
    if (j->p >= j->end) return jerr(j, "unterminated string");
    size_t cap = (size_t)(j->p - b) + 1; /* unescaping never grows */
    j->p = b;
    char *s = out ? bg_xmalloc(cap) : NULL;
    size_t n = 0;
    while (*j->p != '"') {
        unsigned char c = (unsigned char)*j->p++;
        if (c < 0x20) {
            free(s);
            return jerr(j, "control character in a string");
        }
        if (c != '\\') {
            if (s) s[n] = (char)c;
            n++;
            continue;
        }
        char e = *j->p++;
        unsigned u = 0;
        switch (e) {
        case '"': case '\\': case '/': u = (unsigned char)e; break;
        case 'b': u = '\b'; break;
        case 'f': u = '\f'; break;
        case 'n': u = '\n'; break;
        case 'r': u = '\r'; break;
        case 't': u = '\t'; break;
        case 'u':
            if (!hex4(j, &u)) goto bad;
            if (u >= 0xd800 && u < 0xdc00) { /* surrogate pair */
                unsigned lo;
                if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u') goto bad;
                j->p += 2;
                if (!hex4(j, &lo) || lo < 0xdc00 || lo > 0xdfff) goto bad;
                u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
            } else if (u >= 0xdc00 && u < 0xe000) {
                goto bad;
            }
            if (u == 0) {
                free(s);
                return jerr(j, "\\u0000 in a string");
            }
            break;
        default: goto bad;
        }
        /* UTF-8 encode u (<= 4 bytes; escapes are >= 2 source bytes, \u 6, pairs 12). */
        unsigned char enc[4];
        int k;
        if (u < 0x80) { enc[0] = (unsigned char)u; k = 1; }
        else if (u < 0x800) { enc[0] = (unsigned char)(0xc0 | u >> 6); enc[1] = (unsigned char)(0x80 | (u & 0x3f)); k = 2; }
        else if (u < 0x10000) {
            enc[0] = (unsigned char)(0xe0 | u >> 12); enc[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3f));
            enc[2] = (unsigned char)(0x80 | (u & 0x3f)); k = 3;
        } else {
            enc[0] = (unsigned char)(0xf0 | u >> 18); enc[1] = (unsigned char)(0x80 | ((u >> 12) & 0x3f));
            enc[2] = (unsigned char)(0x80 | ((u >> 6) & 0x3f)); enc[3] = (unsigned char)(0x80 | (u & 0x3f)); k = 4;
        }
        if (s) memcpy(s + n, enc, (size_t)k);
        n += (size_t)k;
    }
    j->p++;
    if (s) {
        s[n] = 0;
        *out = s;
    }
    return true;
bad:
    free(s);
    return jerr(j, "invalid escape in a string");
}

/* A non-negative JSON integer (no fraction or exponent). */
static bool jint(J *j, int64_t *v, const char *tname, const char *field) {
    jws(j);
    const char *b = j->p;
    if (j->p < j->end && *j->p == '-') {
        bg_diag_error(j->d, BG_E_FORMAT, "%s: tensor '%s': field '%s': negative number", j->path, tname, field);
        return false;
    }
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') {
        bg_diag_error(j->d, BG_E_FORMAT, "%s: tensor '%s': field '%s': expected a non-negative integer", j->path,
                      tname, field);
        return false;
    }
    int64_t x = 0;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
        if (x > ST_MAX_NUM / 10) {
            bg_diag_error(j->d, BG_E_LIMIT, "%s: tensor '%s': field '%s': number too large", j->path, tname, field);
            return false;
        }
        x = x * 10 + (*j->p++ - '0');
    }
    if ((j->p - b > 1 && *b == '0') ||
        (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E'))) {
        bg_diag_error(j->d, BG_E_FORMAT, "%s: tensor '%s': field '%s': expected a plain non-negative integer",
                      j->path, tname, field);
        return false;
    }
    *v = x;
    return true;
}

/* Skips any JSON value (used for __metadata__). */
static bool jskip(J *j, int depth) {
    if (depth > ST_MAX_DEPTH) return jerr(j, "nesting too deep");
    jws(j);
    if (j->p >= j->end) return jerr(j, "expected a value");
    char c = *j->p;
    if (c == '"') return jstring(j, NULL);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        j->p++;
        if (jlit(j, close)) return true;
        do {
            if (c == '{') {
                if (!jstring(j, NULL)) return false;
                if (!jlit(j, ':')) return jerr(j, "expected ':'");
            }
            if (!jskip(j, depth + 1)) return false;
        } while (jlit(j, ','));
        if (!jlit(j, close)) return jerr(j, c == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
        return true;
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(j->end - j->p) >= n && memcmp(j->p, words[i], n) == 0) {
            j->p += n;
            return true;
        }
    }
    /* number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
    const char *b = j->p;
    if (j->p < j->end && *j->p == '-') j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') { j->p = b; return jerr(j, "expected a value"); }
    if (*j->p == '0') j->p++;
    else while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9') return jerr(j, "malformed number");
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9') return jerr(j, "malformed number");
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    }
    return true;
}

/* ---- header entries -------------------------------------------------------------- */
typedef struct {
    char *name;
    StType type;
    int rank;
    int64_t dim[4];
    int64_t numel;
    int64_t begin, end;
} Info;

static bool field_err(J *j, const char *tname, const char *field, const char *msg) {
    bg_diag_error(j->d, BG_E_FORMAT, "%s: tensor '%s': field '%s': %s", j->path, tname, field, msg);
    return false;
}

static bool parse_tensor(J *j, Info *t) {
    const char *tn = t->name;
    bool seen[3] = {false, false, false};
    if (!jlit(j, '{')) return field_err(j, tn, "(entry)", "expected an object");
    if (!jlit(j, '}')) {
        do {
            char *k;
            if (!jstring(j, &k)) return false;
            int w = !strcmp(k, "dtype") ? 0 : !strcmp(k, "shape") ? 1 : !strcmp(k, "data_offsets") ? 2 : -1;
            if (w < 0) {
                bg_diag_error(j->d, BG_E_FORMAT, "%s: tensor '%s': unknown field '%s'", j->path, tn, k);
                free(k);
                return false;
            }
            free(k);
            static const char *const fn[] = {"dtype", "shape", "data_offsets"};
            if (seen[w]) return field_err(j, tn, fn[w], "given twice");
            seen[w] = true;
            if (!jlit(j, ':')) return jerr(j, "expected ':'");
            if (w == 0) {
                char *s;
                jws(j);
                if (j->p >= j->end || *j->p != '"') return field_err(j, tn, "dtype", "expected a string");
                if (!jstring(j, &s)) return false;
                int found = -1;
                for (int i = 0; i < 5; i++)
                    if (!strcmp(s, st_names[i])) found = i;
                if (found < 0) {
                    bg_diag_error(j->d, BG_E_FORMAT,
                                  "%s: tensor '%s': field 'dtype': unsupported dtype '%.40s' (F32, F16, BF16, I32 or I64)",
                                  j->path, tn, s);
                    free(s);
                    return false;
                }
                free(s);
                t->type = (StType)found;
            } else {
                int64_t v[5];
                int n = 0, maxn = w == 1 ? 4 : 2;
                if (!jlit(j, '[')) return field_err(j, tn, fn[w], "expected an array");
                if (!jlit(j, ']')) {
                    do {
                        if (n == maxn)
                            return field_err(j, tn, fn[w], w == 1 ? "more than 4 dimensions" : "expected [begin, end]");
                        if (!jint(j, &v[n], tn, fn[w])) return false;
                        n++;
                    } while (jlit(j, ','));
                    if (!jlit(j, ']')) return field_err(j, tn, fn[w], "expected ',' or ']'");
                }
                if (w == 1) {
                    t->rank = n;
                    t->numel = 1;
                    for (int i = 0; i < n; i++) {
                        t->dim[i] = v[i];
                        if (v[i] != 0 && t->numel > ST_MAX_NUM / v[i]) {
                            bg_diag_error(j->d, BG_E_LIMIT, "%s: tensor '%s': field 'shape': element count overflows",
                                          j->path, tn);
                            return false;
                        }
                        t->numel *= v[i];
                    }
                } else {
                    if (n != 2) return field_err(j, tn, "data_offsets", "expected [begin, end]");
                    t->begin = v[0];
                    t->end = v[1];
                }
            }
        } while (jlit(j, ','));
        if (!jlit(j, '}')) return jerr(j, "expected ',' or '}'");
    }
    static const char *const fn2[] = {"dtype", "shape", "data_offsets"};
    for (int i = 0; i < 3; i++)
        if (!seen[i]) return field_err(j, tn, fn2[i], "missing");
    return true;
}

static int cmp_name(const void *a, const void *b) {
    return strcmp((*(const Info *const *)a)->name, (*(const Info *const *)b)->name);
}
static int cmp_begin(const void *a, const void *b) {
    const Info *x = *(const Info *const *)a, *y = *(const Info *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : 0;
}

/* ---- conversion ------------------------------------------------------------------ */
static uint32_t ld32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* IEEE binary16 -> binary32, exact for every input (subnormals, inf, NaN payloads). */
static float half_to_float(uint16_t h) {
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu;
    if (e == 0) {
        if (m == 0) return bits_float(s);
        e = 113; /* 127 - 15 + 1, then normalise */
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        return bits_float(s | e << 23 | (m & 0x3ffu) << 13);
    }
    if (e == 31) return bits_float(s | 0x7f800000u | m << 13);
    return bits_float(s | (e + 112) << 23 | m << 13);
}

static void convert(StType t, const unsigned char *src, int64_t n, void *dst) {
    float *of = dst;
    int64_t *oi = dst;
    /* In-place conversions (src == dst) keep the element width, so forward order is safe. */
    for (int64_t i = 0; i < n; i++) {
        switch (t) {
        case ST_F32: of[i] = bits_float(ld32(src + 4 * i)); break;
        case ST_F16: of[i] = half_to_float((uint16_t)(src[2 * i] | src[2 * i + 1] << 8)); break;
        case ST_BF16: of[i] = bits_float((uint32_t)(src[2 * i] | src[2 * i + 1] << 8) << 16); break;
        case ST_I32: oi[i] = (int32_t)ld32(src + 4 * i); break;
        case ST_I64: oi[i] = (int64_t)((uint64_t)ld32(src + 8 * i) | (uint64_t)ld32(src + 8 * i + 4) << 32); break;
        }
    }
}

/* ---- load ------------------------------------------------------------------------ */
static void free_infos(Info *v, int n) {
    for (int i = 0; i < n; i++) free(v[i].name);
    free(v);
}

bool bg_safetensors_load(const char *path, BgSafetensors *out, BgDiagSink *d) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        bg_diag_error(d, BG_E_IO, "%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    bool ok = false;
    char *hdr = NULL;
    Info *inf = NULL, **ord = NULL;
    int n = 0, cap = 0;
    BgStTensor *ts = NULL;
    int nts = 0;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        bg_diag_error(d, BG_E_IO, "%s: not a regular file", path);
        goto done;
    }
    uint64_t fsize = (uint64_t)st.st_size;
    unsigned char lenb[8];
    if (fsize < 8 || fread(lenb, 1, 8, f) != 8) {
        bg_diag_error(d, BG_E_FORMAT, "%s: file too short for the 8-byte header length (%llu bytes)", path,
                      (unsigned long long)fsize);
        goto done;
    }
    uint64_t hlen = (uint64_t)ld32(lenb) | (uint64_t)ld32(lenb + 4) << 32;
    if (hlen > fsize - 8) {
        bg_diag_error(d, BG_E_FORMAT, "%s: header length %llu goes beyond the end of the file (%llu bytes)", path,
                      (unsigned long long)hlen, (unsigned long long)fsize);
        goto done;
    }
    if (hlen > ST_MAX_HEADER) {
        bg_diag_error(d, BG_E_LIMIT, "%s: header length %llu over the limit of %llu bytes", path,
                      (unsigned long long)hlen, (unsigned long long)ST_MAX_HEADER);
        goto done;
    }
    hdr = bg_xmalloc((size_t)hlen + 1);
    if (fread(hdr, 1, (size_t)hlen, f) != hlen) {
        bg_diag_error(d, BG_E_IO, "%s: read error in the header", path);
        goto done;
    }
    hdr[hlen] = 0;
    int64_t dsize = (int64_t)(fsize - 8 - hlen);

    J j = {hdr, hdr, hdr + hlen, path, d};
    if (!jlit(&j, '{')) {
        jerr(&j, "expected '{'");
        goto done;
    }
    bool meta = false;
    if (!jlit(&j, '}')) {
        do {
            char *name;
            if (!jstring(&j, &name)) goto done;
            if (!jlit(&j, ':')) {
                free(name);
                jerr(&j, "expected ':'");
                goto done;
            }
            if (!strcmp(name, "__metadata__")) {
                free(name);
                if (meta) {
                    jerr(&j, "'__metadata__' given twice");
                    goto done;
                }
                meta = true;
                if (!jskip(&j, 0)) goto done;
                continue;
            }
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                inf = realloc(inf, sizeof(Info) * (size_t)cap);
                if (!inf) abort();
            }
            memset(&inf[n], 0, sizeof(Info));
            inf[n].name = name;
            n++;
            if (!parse_tensor(&j, &inf[n - 1])) goto done;
        } while (jlit(&j, ','));
        if (!jlit(&j, '}')) {
            jerr(&j, "expected ',' or '}'");
            goto done;
        }
    }
    jws(&j);
    if (j.p != j.end) {
        jerr(&j, "unexpected text after the header object");
        goto done;
    }

    /* Names unique; offsets inside the data section, sized right, not overlapping. */
    ord = bg_xmalloc(sizeof(Info *) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) ord[i] = &inf[i];
    qsort(ord, (size_t)n, sizeof *ord, cmp_name);
    for (int i = 1; i < n; i++)
        if (!strcmp(ord[i - 1]->name, ord[i]->name)) {
            bg_diag_error(d, BG_E_FORMAT, "%s: tensor '%s' appears twice in the header", path, ord[i]->name);
            goto done;
        }
    for (int i = 0; i < n; i++) {
        Info *t = &inf[i];
        if (t->begin > t->end) {
            bg_diag_error(d, BG_E_FORMAT, "%s: tensor '%s': field 'data_offsets': begin %lld after end %lld", path,
                          t->name, (long long)t->begin, (long long)t->end);
            goto done;
        }
        if (t->end > dsize) {
            bg_diag_error(d, BG_E_FORMAT, "%s: tensor '%s': field 'data_offsets': end %lld beyond the data section (%lld bytes)",
                          path, t->name, (long long)t->end, (long long)dsize);
            goto done;
        }
        if (t->numel > dsize / st_size[t->type]) {
            bg_diag_error(d, BG_E_FORMAT,
                          "%s: tensor '%s': field 'shape': %lld elements of %s do not fit the data section (%lld bytes)",
                          path, t->name, (long long)t->numel, st_names[t->type], (long long)dsize);
            goto done;
        }
        int64_t need = t->numel * st_size[t->type];
        if (t->end - t->begin != need) {
            bg_diag_error(d, BG_E_FORMAT,
                          "%s: tensor '%s': field 'data_offsets': %lld bytes but field 'shape' (%lld elements of %s) needs %lld",
                          path, t->name, (long long)(t->end - t->begin), (long long)t->numel, st_names[t->type],
                          (long long)need);
            goto done;
        }
    }
    qsort(ord, (size_t)n, sizeof *ord, cmp_begin);
    {
        const Info *prev = NULL;
        for (int i = 0; i < n; i++) {
            if (ord[i]->begin == ord[i]->end) continue;
            if (prev && ord[i]->begin < prev->end) {
                bg_diag_error(d, BG_E_FORMAT,
                              "%s: tensor '%s': field 'data_offsets': [%lld, %lld] overlaps tensor '%s' [%lld, %lld]",
                              path, ord[i]->name, (long long)ord[i]->begin, (long long)ord[i]->end, prev->name,
                              (long long)prev->begin, (long long)prev->end);
                goto done;
            }
            prev = ord[i];
        }
    }

    /* Read and convert, in header order. */
    ts = bg_xcalloc((size_t)(n ? n : 1), sizeof(BgStTensor));
    for (int i = 0; i < n; i++) {
        Info *t = &inf[i];
        BgStTensor *o = &ts[i];
        bool is_f = t->type == ST_F32 || t->type == ST_F16 || t->type == ST_BF16;
        size_t obytes = (size_t)t->numel * (is_f ? 4 : 8), ibytes = (size_t)(t->end - t->begin);
        o->data = malloc(obytes ? obytes : 1);
        unsigned char *raw = obytes == ibytes ? o->data : malloc(ibytes ? ibytes : 1);
        if (!o->data || !raw) {
            if (raw != o->data) free(raw);
            bg_diag_error(d, BG_E_LIMIT, "%s: tensor '%s': out of memory for %lld elements", path, t->name,
                          (long long)t->numel);
            nts = i + 1;
            goto done;
        }
        nts = i + 1;
        if (fseeko(f, (off_t)(8 + hlen + (uint64_t)t->begin), SEEK_SET) != 0 || fread(raw, 1, ibytes, f) != ibytes) {
            if (raw != o->data) free(raw);
            bg_diag_error(d, BG_E_IO, "%s: tensor '%s': read error", path, t->name);
            goto done;
        }
        convert(t->type, raw, t->numel, o->data);
        if (raw != o->data) free(raw);
        o->name = t->name;
        t->name = NULL;
        o->dtype = is_f ? BG_DT_F32 : BG_DT_I64;
        o->rank = t->rank;
        memcpy(o->dim, t->dim, sizeof o->dim);
        o->numel = t->numel;
    }
    out->path = bg_xmalloc(strlen(path) + 1);
    strcpy(out->path, path);
    out->t = ts;
    out->n = n;
    ts = NULL;
    ok = true;
done:
    if (ts) {
        for (int i = 0; i < nts; i++) {
            free(ts[i].name);
            free(ts[i].data);
        }
        free(ts);
    }
    free(ord);
    free_infos(inf, n);
    free(hdr);
    fclose(f);
    return ok;
}

const BgStTensor *bg_safetensors_find(const BgSafetensors *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->t[i].name, name)) return &s->t[i];
    return NULL;
}

void bg_safetensors_free(BgSafetensors *s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        free(s->t[i].name);
        free(s->t[i].data);
    }
    free(s->t);
    free(s->path);
    memset(s, 0, sizeof *s);
}

/* ---- save ------------------------------------------------------------------------ */
typedef struct {
    char *p;
    size_t n, cap;
} Buf;

static void bput(Buf *b, const char *s, size_t k) {
    if (b->n + k + 1 > b->cap) {
        b->cap = (b->n + k + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->n, s, k);
    b->n += k;
    b->p[b->n] = 0;
}
static void bputs(Buf *b, const char *s) { bput(b, s, strlen(s)); }

static void put_json_string(Buf *b, const char *s) {
    bputs(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char e[8];
        if (c == '"' || c == '\\') {
            e[0] = '\\';
            e[1] = (char)c;
            bput(b, e, 2);
        } else if (c < 0x20) {
            snprintf(e, sizeof e, "\\u%04x", c);
            bputs(b, e);
        } else {
            bput(b, (const char *)&c, 1);
        }
    }
    bputs(b, "\"");
}

bool bg_safetensors_save_f32(const char *path, int n, const char *const *names,
                             const float *const *data, const int *rank,
                             const int64_t (*dim)[4], BgDiagSink *d) {
    Buf b = {0};
    int64_t off = 0;
    int64_t *numel = bg_xmalloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    bputs(&b, "{");
    for (int i = 0; i < n; i++) {
        const char *why = NULL;
        if (!names[i] || !*names[i] || !strcmp(names[i], "__metadata__")) why = "invalid tensor name";
        for (int k = 0; !why && k < i; k++)
            if (!strcmp(names[k], names[i])) why = "tensor name given twice";
        if (!why && (rank[i] < 0 || rank[i] > 4)) why = "rank must be 0..4";
        int64_t ne = 1;
        for (int k = 0; !why && k < rank[i]; k++) {
            if (dim[i][k] < 0) why = "negative dimension";
            else if (dim[i][k] && ne > (ST_MAX_NUM / 4) / dim[i][k]) why = "too many elements";
            else ne *= dim[i][k];
        }
        if (!why && ne && !data[i]) why = "no data";
        if (why) {
            bg_diag_error(d, BG_E_WRITE, "%s: tensor %d ('%s'): %s", path, i, names[i] ? names[i] : "(null)", why);
            free(b.p);
            free(numel);
            return false;
        }
        numel[i] = ne;
        char tmp[128];
        if (i) bputs(&b, ",");
        put_json_string(&b, names[i]);
        bputs(&b, ":{\"dtype\":\"F32\",\"shape\":[");
        for (int k = 0; k < rank[i]; k++) {
            snprintf(tmp, sizeof tmp, "%s%lld", k ? "," : "", (long long)dim[i][k]);
            bputs(&b, tmp);
        }
        snprintf(tmp, sizeof tmp, "],\"data_offsets\":[%lld,%lld]}", (long long)off, (long long)(off + ne * 4));
        bputs(&b, tmp);
        off += ne * 4;
    }
    bputs(&b, "}");
    while (b.n % 8) bputs(&b, " ");

    char *tmpname;
    FILE *f = bg_atomic_create(path, &tmpname, d);
    if (!f) {
        free(b.p);
        free(numel);
        return false;
    }
    unsigned char lenb[8];
    for (int k = 0; k < 8; k++) lenb[k] = (unsigned char)((uint64_t)b.n >> (8 * k));
    bool ok = fwrite(lenb, 1, 8, f) == 8 && fwrite(b.p, 1, b.n, f) == b.n;
    for (int i = 0; ok && i < n; i++) ok = bg_write_f32_le(f, data[i], (size_t)numel[i]);
    ok = bg_atomic_finish(f, tmpname, path, ok, d);
    free(b.p);
    free(numel);
    return ok;
}
