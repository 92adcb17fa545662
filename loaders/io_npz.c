/* io_npz.c - a SciPy sparse matrix saved with scipy.sparse.save_npz, as COO entries.
 *
 * The archive (io_zip.c) holds format.npy ('csr', 'csc' or 'coo', as bytes or str),
 * shape.npy (2 integers) and the index arrays: indptr.npy + indices.npy (csr, csc) or
 * row.npy + col.npy (coo); data.npy (the values) is not read: every stored entry is an edge,
 * A[i][j] as stored (row i aggregates column j, as in Matrix Market).  Each member is parsed
 * by the .npy reader from memory; every index is checked against the shape, with messages
 * naming the archive, the member and the entry. */
#include "loaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPZ_MAX_MEMBER ((uint64_t)8 << 30)

/* Reads member name into a BgNpy (integers); *present false (and true returned) when it is
 * absent and optional. */
static bool member_ints(BgZip *z, const char *name, bool optional, bool *present, BgNpy *out, BgDiagSink *d) {
    memset(out, 0, sizeof *out);
    if (present) *present = false;
    const BgZipEntry *e = bg_zip_find(z, name);
    if (!e) {
        if (optional) return true;
        bg_diag_error(d, BG_E_FORMAT, "%s: no member '%s' (not a scipy.sparse.save_npz archive?)", z->path, name);
        return false;
    }
    unsigned char *buf;
    size_t len;
    if (!bg_zip_read(z, e, NPZ_MAX_MEMBER, &buf, &len, d)) return false;
    char what[1024];
    snprintf(what, sizeof what, "%s: member '%s'", z->path, name);
    bool ok = bg_npy_load_mem(buf, len, what, BG_NPY_AS_I64, out, d);
    free(buf);
    if (ok && out->rank != 1) {
        bg_diag_error(d, BG_E_FORMAT, "%s: expected a 1-D array, got shape (%lld, %lld)", what,
                      (long long)out->dim[0], (long long)out->dim[1]);
        bg_npy_free(out);
        return false;
    }
    if (ok && present) *present = true;
    return ok;
}

/* format.npy: a 0-d array of 3 ASCII bytes ('|S3') or 3 UTF-32LE characters ('<U3'). */
static bool read_format(BgZip *z, char fmt[4], BgDiagSink *d) {
    const BgZipEntry *e = bg_zip_find(z, "format.npy");
    if (!e) {
        fmt[0] = 0; /* inferred from the members present */
        return true;
    }
    unsigned char *buf;
    size_t len;
    if (!bg_zip_read(z, e, 4096, &buf, &len, d)) return false;
    size_t hoff = 0, hlen = 0;
    if (len >= 10 && memcmp(buf, "\x93NUMPY", 6) == 0) {
        if (buf[6] == 1) {
            hlen = (size_t)(buf[8] | buf[9] << 8);
            hoff = 10;
        } else if (len >= 12) {
            hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
            hoff = 12;
        }
    }
    bool ok = hoff && hlen <= len - hoff;
    const unsigned char *p = buf + hoff + hlen;
    size_t n = ok ? len - hoff - hlen : 0;
    if (ok && n == 3) {
        memcpy(fmt, p, 3);
    } else if (ok && n == 12 && !p[1] && !p[2] && !p[3] && !p[5] && !p[6] && !p[7] && !p[9] && !p[10] && !p[11]) {
        fmt[0] = (char)p[0];
        fmt[1] = (char)p[4];
        fmt[2] = (char)p[8];
    } else {
        ok = false;
    }
    fmt[3] = 0;
    free(buf);
    if (!ok)
        bg_diag_error(d, BG_E_FORMAT, "%s: member 'format.npy': expected a 3-letter format string such as 'csr'",
                      z->path);
    return ok;
}

static bool check_range(const BgZip *z, const char *member, const BgNpy *v, int64_t limit, const char *what,
                        BgDiagSink *d) {
    const int64_t *x = v->data;
    for (int64_t i = 0; i < v->dim[0]; i++)
        if (x[i] < 0 || x[i] >= limit) {
            bg_diag_error(d, BG_E_FORMAT, "%s: member '%s': entry %lld: %s %lld out of range 0..%lld", z->path, member,
                          (long long)i, what, (long long)x[i], (long long)limit - 1);
            return false;
        }
    return true;
}

bool bg_npz_load(const char *path, BgCoo *out, BgDiagSink *d) {
    BgZip z;
    if (!bg_zip_open(path, &z, d)) return false;
    BgNpy shape, a, b;
    memset(&shape, 0, sizeof shape);
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    BgCoo c = {0, 0, 0, NULL, NULL, NULL};
    int64_t nr, nc, nnz;
    bool ok = false;
    char fmt[4];
    if (!read_format(&z, fmt, d) || !member_ints(&z, "shape.npy", false, NULL, &shape, d)) goto done;
    if (!fmt[0]) strcpy(fmt, bg_zip_find(&z, "indptr.npy") ? "csr" : "coo");
    if (shape.dim[0] != 2) {
        bg_diag_error(d, BG_E_FORMAT, "%s: member 'shape.npy': expected 2 entries, got %lld", path, (long long)shape.dim[0]);
        goto done;
    }
    nr = ((int64_t *)shape.data)[0];
    nc = ((int64_t *)shape.data)[1];
    if (nr < 0 || nc < 0 || nr > INT32_MAX || nc > INT32_MAX) {
        bg_diag_error(d, BG_E_LIMIT, "%s: member 'shape.npy': shape (%lld, %lld) out of range 0..%d", path,
                      (long long)nr, (long long)nc, INT32_MAX);
        goto done;
    }
    bool compressed = !strcmp(fmt, "csr") || !strcmp(fmt, "csc");
    if (!compressed && strcmp(fmt, "coo") != 0) {
        bg_diag_error(d, BG_E_FORMAT, "%s: sparse format '%s' not supported (csr, csc or coo: save m.tocsr())", path, fmt);
        goto done;
    }
    c.nrows = nr;
    c.ncols = nc;
    if (compressed) {
        bool csr = fmt[2] == 'r';
        int64_t outer = csr ? nr : nc, inner = csr ? nc : nr;
        if (!member_ints(&z, "indptr.npy", false, NULL, &a, d) || !member_ints(&z, "indices.npy", false, NULL, &b, d))
            goto done;
        const int64_t *ptr = a.data;
        nnz = b.dim[0];
        if (a.dim[0] != outer + 1) {
            bg_diag_error(d, BG_E_FORMAT, "%s: member 'indptr.npy': %lld entries, but shape (%lld, %lld) of a %s matrix needs %lld",
                          path, (long long)a.dim[0], (long long)nr, (long long)nc, fmt, (long long)outer + 1);
            goto done;
        }
        if (ptr[0] != 0 || ptr[outer] != nnz) {
            bg_diag_error(d, BG_E_FORMAT, "%s: member 'indptr.npy': must run from 0 to %lld (the entries of indices.npy), "
                          "runs from %lld to %lld", path, (long long)nnz, (long long)ptr[0], (long long)ptr[outer]);
            goto done;
        }
        for (int64_t i = 0; i < outer; i++)
            if (ptr[i + 1] < ptr[i]) {
                bg_diag_error(d, BG_E_FORMAT, "%s: member 'indptr.npy': entry %lld (%lld) is less than entry %lld (%lld)",
                              path, (long long)i + 1, (long long)ptr[i + 1], (long long)i, (long long)ptr[i]);
                goto done;
            }
        if (!check_range(&z, "indices.npy", &b, inner, csr ? "column" : "row", d)) goto done;
        c.row = malloc(sizeof(int64_t) * (size_t)(nnz ? nnz : 1));
        c.col = malloc(sizeof(int64_t) * (size_t)(nnz ? nnz : 1));
        if (!c.row || !c.col) {
            bg_coo_free(&c);
            bg_diag_error(d, BG_E_LIMIT, "%s: out of memory for %lld entries", path, (long long)nnz);
            goto done;
        }
        const int64_t *idx = b.data;
        for (int64_t i = 0; i < outer; i++)
            for (int64_t k = ptr[i]; k < ptr[i + 1]; k++) {
                c.row[k] = csr ? i : idx[k];
                c.col[k] = csr ? idx[k] : i;
            }
    } else {
        if (!member_ints(&z, "row.npy", false, NULL, &a, d) || !member_ints(&z, "col.npy", false, NULL, &b, d)) goto done;
        if (a.dim[0] != b.dim[0]) {
            bg_diag_error(d, BG_E_FORMAT, "%s: members 'row.npy' (%lld entries) and 'col.npy' (%lld) differ in length", path,
                          (long long)a.dim[0], (long long)b.dim[0]);
            goto done;
        }
        if (!check_range(&z, "row.npy", &a, nr, "row", d) || !check_range(&z, "col.npy", &b, nc, "column", d)) goto done;
        nnz = a.dim[0];
        c.row = a.data; /* take ownership */
        c.col = b.data;
        a.data = b.data = NULL;
    }
    c.nnz = nnz;
    *out = c;
    ok = true;
done:
    bg_npy_free(&shape);
    bg_npy_free(&a);
    bg_npy_free(&b);
    bg_zip_close(&z);
    return ok;
}
