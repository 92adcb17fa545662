/* io_zip.c - a minimal zip archive reader for .npz files (NumPy's savez / SciPy's save_npz).
 *
 * Reads the end-of-central-directory record (zip64 form included: numpy writes every member
 * with zip64 extras), the central directory, and on request one member: stored (method 0) or
 * deflated (method 8, through zlib when bgnn was built with it), checked against its CRC-32.
 * Every offset and size is checked against the archive's length before use; the size a
 * member inflates to is bounded by deflate's maximum ratio over its compressed size, so no
 * header number sizes an allocation on its own.  Encrypted, multi-disk and other methods are
 * refused with a message naming the archive and the member. */
#include "loaders.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef BG_HAVE_ZLIB
#include <zlib.h>
#endif

#define ZIP_MAX_CD ((uint64_t)64 << 20)     /* central directory bytes */
#define ZIP_MAX_ENTRIES 100000
#define ZIP_MAX_RATIO 1032                  /* deflate cannot expand more than ~1032:1 */

static uint16_t ld16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t ld32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t ld64(const unsigned char *p) { return (uint64_t)ld32(p) | (uint64_t)ld32(p + 4) << 32; }

static bool read_at(FILE *f, uint64_t off, void *buf, size_t n) {
    return fseeko(f, (off_t)off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n;
}

/* CRC-32 (IEEE, reflected), table built on first use. */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n) {
    static uint32_t table[256];
    static int ready;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static bool zerr(BgDiagSink *d, int code, const char *path, const char *fmt, ...) BG_PRINTF(4, 5);
static bool zerr(BgDiagSink *d, int code, const char *path, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    bg_diag_error(d, code, "%s: %s", path, buf);
    return false;
}

/* Locates the central directory: *cd_off, *cd_size, *count (zip64 when the plain record
 * says so). */
static bool find_cd(FILE *f, uint64_t size, const char *path, uint64_t *cd_off, uint64_t *cd_size,
                    uint64_t *count, uint64_t *cd_end_limit, BgDiagSink *d) {
    if (size < 22) return zerr(d, BG_E_FORMAT, path, "not a zip archive (%llu bytes, too short)", (unsigned long long)size);
    size_t tail = size < 22 + 65535 ? (size_t)size : 22 + 65535;
    unsigned char *buf = bg_xmalloc(tail);
    if (!read_at(f, size - tail, buf, tail)) {
        free(buf);
        return zerr(d, BG_E_IO, path, "read error");
    }
    long at = -1;
    for (long i = (long)tail - 22; i >= 0; i--)
        if (ld32(buf + i) == 0x06054b50u && (size_t)i + 22 + ld16(buf + i + 20) == tail) {
            at = i;
            break;
        }
    if (at < 0) {
        free(buf);
        return zerr(d, BG_E_FORMAT, path, "not a zip archive (no end-of-central-directory record)");
    }
    const unsigned char *e = buf + at;
    uint64_t eocd = size - tail + (uint64_t)at;
    if (ld16(e + 4) != 0 || ld16(e + 6) != 0 || ld16(e + 8) != ld16(e + 10)) {
        free(buf);
        return zerr(d, BG_E_FORMAT, path, "multi-disk zip archives are not supported");
    }
    *count = ld16(e + 10);
    *cd_size = ld32(e + 12);
    *cd_off = ld32(e + 16);
    *cd_end_limit = eocd;
    bool z64 = *count == 0xffff || *cd_size == 0xffffffffu || *cd_off == 0xffffffffu;
    free(buf);
    if (z64 || eocd >= 20) {
        unsigned char loc[20];
        if (eocd >= 20 && read_at(f, eocd - 20, loc, 20) && ld32(loc) == 0x07064b50u) {
            uint64_t r = ld64(loc + 8);
            unsigned char z[56];
            if (r > eocd - 20 || eocd - 20 - r < 56 || !read_at(f, r, z, 56) || ld32(z) != 0x06064b50u)
                return zerr(d, BG_E_FORMAT, path, "zip64 end-of-central-directory record missing or out of bounds");
            if (ld32(z + 16) != 0 || ld32(z + 20) != 0 || ld64(z + 24) != ld64(z + 32))
                return zerr(d, BG_E_FORMAT, path, "multi-disk zip archives are not supported");
            *count = ld64(z + 32);
            *cd_size = ld64(z + 40);
            *cd_off = ld64(z + 48);
            *cd_end_limit = r;
        } else if (z64) {
            return zerr(d, BG_E_FORMAT, path, "zip64 end-of-central-directory locator missing");
        }
    }
    if (*cd_off > *cd_end_limit || *cd_size > *cd_end_limit - *cd_off)
        return zerr(d, BG_E_FORMAT, path, "central directory [%llu, +%llu] out of bounds (archive %llu bytes)",
                    (unsigned long long)*cd_off, (unsigned long long)*cd_size, (unsigned long long)size);
    if (*cd_size > ZIP_MAX_CD || *count > ZIP_MAX_ENTRIES)
        return zerr(d, BG_E_LIMIT, path, "central directory of %llu entries (%llu bytes) over the limit",
                    (unsigned long long)*count, (unsigned long long)*cd_size);
    return true;
}

bool bg_zip_open(const char *path, BgZip *z, BgDiagSink *d) {
    memset(z, 0, sizeof *z);
    FILE *f = fopen(path, "rb");
    if (!f) {
        bg_diag_error(d, BG_E_IO, "%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        bg_diag_error(d, BG_E_IO, "%s: not a regular file", path);
        return false;
    }
    uint64_t size = (uint64_t)st.st_size, cd_off = 0, cd_size = 0, count = 0, limit = 0;
    if (!find_cd(f, size, path, &cd_off, &cd_size, &count, &limit, d)) {
        fclose(f);
        return false;
    }
    unsigned char *cd = bg_xmalloc(cd_size ? (size_t)cd_size : 1);
    BgZipEntry *ents = bg_xcalloc((size_t)count + 1, sizeof *ents);
    int n = 0;
    bool ok = read_at(f, cd_off, cd, (size_t)cd_size) || zerr(d, BG_E_IO, path, "read error in the central directory");
    uint64_t p = 0;
    for (uint64_t i = 0; ok && i < count; i++) {
        if (cd_size - p < 46 || ld32(cd + p) != 0x02014b50u) {
            ok = zerr(d, BG_E_FORMAT, path, "central directory entry %llu: bad signature or truncated", (unsigned long long)i);
            break;
        }
        const unsigned char *h = cd + p;
        uint16_t flags = ld16(h + 8), method = ld16(h + 10), nl = ld16(h + 28), xl = ld16(h + 30), cl = ld16(h + 32);
        if (cd_size - p - 46 < (uint64_t)nl + xl + cl) {
            ok = zerr(d, BG_E_FORMAT, path, "central directory entry %llu: name or extra field beyond the directory",
                      (unsigned long long)i);
            break;
        }
        BgZipEntry *e = &ents[n];
        e->name = bg_xmalloc((size_t)nl + 1);
        memcpy(e->name, h + 46, nl);
        e->name[nl] = 0;
        n++;
        if (memchr(e->name, 0, nl)) {
            ok = zerr(d, BG_E_FORMAT, path, "central directory entry %llu: NUL in the member name", (unsigned long long)i);
            break;
        }
        e->method = method;
        e->encrypted = flags & 1;
        e->crc = ld32(h + 16);
        e->csize = ld32(h + 20);
        e->usize = ld32(h + 24);
        e->offset = ld32(h + 42);
        /* zip64 extra (id 1): the 64-bit fields whose 32-bit slot is all ones, in order */
        const unsigned char *x = h + 46 + nl, *xe = x + xl;
        while (xe - x >= 4) {
            uint16_t id = ld16(x), sz = ld16(x + 2);
            if (xe - x - 4 < sz) break;
            if (id == 1) {
                const unsigned char *q = x + 4, *qe = q + sz;
                uint64_t *slots[3] = {&e->usize, &e->csize, &e->offset};
                for (int k = 0; k < 3; k++)
                    if (*slots[k] == 0xffffffffu) {
                        if (qe - q < 8) break;
                        *slots[k] = ld64(q);
                        q += 8;
                    }
            }
            x += 4 + sz;
        }
        if (e->usize == 0xffffffffu || e->csize == 0xffffffffu || e->offset == 0xffffffffu) {
            ok = zerr(d, BG_E_FORMAT, path, "member '%s': zip64 sizes missing from its extra field", e->name);
            break;
        }
        if (e->offset >= cd_off || e->csize > cd_off - e->offset) {
            ok = zerr(d, BG_E_FORMAT, path, "member '%s': data [%llu, +%llu] beyond the central directory at %llu",
                      e->name, (unsigned long long)e->offset, (unsigned long long)e->csize, (unsigned long long)cd_off);
            break;
        }
        p += 46 + (uint64_t)nl + xl + cl;
    }
    free(cd);
    if (!ok) {
        for (int i = 0; i < n; i++) free(ents[i].name);
        free(ents);
        fclose(f);
        return false;
    }
    z->path = bg_xmalloc(strlen(path) + 1);
    strcpy(z->path, path);
    z->f = f;
    z->size = cd_off; /* member data lies before the central directory */
    z->e = ents;
    z->n = n;
    return true;
}

const BgZipEntry *bg_zip_find(const BgZip *z, const char *name) {
    for (int i = 0; i < z->n; i++)
        if (strcmp(z->e[i].name, name) == 0) return &z->e[i];
    return NULL;
}

#ifdef BG_HAVE_ZLIB
static bool inflate_member(BgZip *z, const BgZipEntry *e, uint64_t data_off, unsigned char *out, BgDiagSink *d) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
        return zerr(d, BG_E_LIMIT, z->path, "member '%s': cannot start zlib", e->name);
    enum { CHUNK = 1 << 20 };
    unsigned char *in = bg_xmalloc(CHUNK);
    uint64_t left = e->csize, done_out = 0;
    bool ok = fseeko(z->f, (off_t)data_off, SEEK_SET) == 0 || zerr(d, BG_E_IO, z->path, "member '%s': seek error", e->name);
    int rc = Z_OK;
    while (ok && rc != Z_STREAM_END) {
        if (zs.avail_in == 0) {
            if (left == 0) {
                ok = zerr(d, BG_E_FORMAT, z->path, "member '%s': deflate stream truncated", e->name);
                break;
            }
            size_t k = left < CHUNK ? (size_t)left : CHUNK;
            if (fread(in, 1, k, z->f) != k) {
                ok = zerr(d, BG_E_IO, z->path, "member '%s': read error", e->name);
                break;
            }
            left -= k;
            zs.next_in = in;
            zs.avail_in = (uInt)k;
        }
        uint64_t room = e->usize - done_out;
        unsigned char spare;
        /* one spare byte past the end detects a stream longer than its stated size */
        zs.next_out = room ? out + done_out : &spare;
        zs.avail_out = room ? (uInt)(room < (1u << 30) ? room : (1u << 30)) : 1;
        uInt before = zs.avail_out;
        rc = inflate(&zs, Z_NO_FLUSH);
        if (!room && zs.avail_out != before) {
            ok = zerr(d, BG_E_FORMAT, z->path, "member '%s': inflates to more than its stated %llu bytes", e->name,
                      (unsigned long long)e->usize);
            break;
        }
        done_out += before - zs.avail_out;
        if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && zs.avail_in == 0 && left > 0)) {
            ok = zerr(d, BG_E_FORMAT, z->path, "member '%s': corrupt deflate data (%s)", e->name,
                      zs.msg ? zs.msg : "zlib error");
            break;
        }
    }
    if (ok && done_out != e->usize)
        ok = zerr(d, BG_E_FORMAT, z->path, "member '%s': inflates to %llu bytes, the directory says %llu", e->name,
                  (unsigned long long)done_out, (unsigned long long)e->usize);
    inflateEnd(&zs);
    free(in);
    return ok;
}
#endif

bool bg_zip_read(BgZip *z, const BgZipEntry *e, uint64_t max, unsigned char **data, size_t *len, BgDiagSink *d) {
    if (e->encrypted) return zerr(d, BG_E_FORMAT, z->path, "member '%s' is encrypted", e->name);
    if (e->method != 0 && e->method != 8)
        return zerr(d, BG_E_FORMAT, z->path, "member '%s': compression method %d not supported (stored or deflate)",
                    e->name, e->method);
    if (e->method == 0 && e->csize != e->usize)
        return zerr(d, BG_E_FORMAT, z->path, "member '%s': stored, but its sizes differ (%llu and %llu)", e->name,
                    (unsigned long long)e->csize, (unsigned long long)e->usize);
    if (e->usize > max)
        return zerr(d, BG_E_LIMIT, z->path, "member '%s': %llu bytes over the limit of %llu", e->name,
                    (unsigned long long)e->usize, (unsigned long long)max);
    if (e->method == 8 && e->usize / ZIP_MAX_RATIO > e->csize + 1)
        return zerr(d, BG_E_FORMAT, z->path, "member '%s': %llu compressed bytes cannot inflate to %llu", e->name,
                    (unsigned long long)e->csize, (unsigned long long)e->usize);
    unsigned char lh[30];
    if (!read_at(z->f, e->offset, lh, 30) || ld32(lh) != 0x04034b50u)
        return zerr(d, BG_E_FORMAT, z->path, "member '%s': no local header at offset %llu", e->name,
                    (unsigned long long)e->offset);
    uint64_t data_off = e->offset + 30 + ld16(lh + 26) + ld16(lh + 28);
    if (data_off > z->size || e->csize > z->size - data_off)
        return zerr(d, BG_E_FORMAT, z->path, "member '%s': data [%llu, +%llu] beyond the archive's data", e->name,
                    (unsigned long long)data_off, (unsigned long long)e->csize);
    unsigned char *buf = malloc(e->usize ? (size_t)e->usize : 1);
    if (!buf)
        return zerr(d, BG_E_LIMIT, z->path, "member '%s': out of memory for %llu bytes", e->name,
                    (unsigned long long)e->usize);
    bool ok;
    if (e->method == 0) {
        ok = read_at(z->f, data_off, buf, (size_t)e->usize) || zerr(d, BG_E_IO, z->path, "member '%s': read error", e->name);
    } else {
#ifdef BG_HAVE_ZLIB
        ok = inflate_member(z, e, data_off, buf, d);
#else
        ok = zerr(d, BG_E_FORMAT, z->path,
                  "member '%s' is compressed (deflate), and this bgnn was built without zlib: save with "
                  "scipy.sparse.save_npz(..., compressed=False), or rebuild bgnn with zlib (Debian: zlib1g-dev)",
                  e->name);
#endif
    }
    if (ok && crc32_update(0, buf, (size_t)e->usize) != e->crc)
        ok = zerr(d, BG_E_FORMAT, z->path, "member '%s': CRC-32 mismatch (corrupt archive)", e->name);
    if (!ok) {
        free(buf);
        return false;
    }
    *data = buf;
    *len = (size_t)e->usize;
    return true;
}

void bg_zip_close(BgZip *z) {
    if (!z) return;
    if (z->f) fclose(z->f);
    for (int i = 0; i < z->n; i++) free(z->e[i].name);
    free(z->e);
    free(z->path);
    memset(z, 0, sizeof *z);
}
