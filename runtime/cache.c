/* cache.c - the on-disk JIT cache of cubins.
 * An entry is <dir>/<key>.cubin: a 50-byte header (magic "BGNNCACHE1", payload length as
 * u64 little-endian, sha256 of the payload) then the payload.  Entries are written to a
 * unique temporary name and renamed into place, so readers never see a partial entry; an
 * entry that fails any check is deleted and reported as corrupt so the caller rebuilds it.
 * Every path is malloc'd (no fixed buffers). */
#include "gpu.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static char *path_cat(const char *a, const char *b, const char *c) {
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *p = bg_xmalloc(la + lb + lc + 1);
    memcpy(p, a, la);
    memcpy(p + la, b, lb);
    memcpy(p + la + lb, c, lc + 1);
    return p;
}

char *bg_cache_key(const char *source, const char *options, const char *arch,
                   const char *nvrtc_version, char out[65]) {
    const char *parts[5] = {source ? source : "", options ? options : "", arch ? arch : "",
                            nvrtc_version ? nvrtc_version : "", BG_VERSION_STRING};
    BgSha256 s;
    bg_sha256_init(&s);
    for (int i = 0; i < 5; i++) {
        if (i) bg_sha256_update(&s, "", 1); /* the NUL separator */
        bg_sha256_update(&s, parts[i], strlen(parts[i]));
    }
    uint8_t h[32];
    bg_sha256_final(&s, h);
    return bg_hex(h, 32, out);
}

bool bg_cache_disabled(void) {
    const char *e = getenv("BGNN_CACHE_DISABLE");
    return e && *e && strcmp(e, "0") != 0;
}

char *bg_cache_default_dir(void) {
    const char *e = getenv("BGNN_CACHE_DIR");
    if (e && *e) return path_cat(e, "", "");
    e = getenv("XDG_CACHE_HOME");
    if (e && *e) return path_cat(e, "/", "bgnn");
    e = getenv("HOME");
    if (e && *e) return path_cat(e, "/", ".cache/bgnn");
    return NULL;
}

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

bool bg_cache_mkdirs(const char *dir) {
    if (!dir || !*dir) return false;
    if (is_dir(dir)) return true;
    char *p = path_cat(dir, "", "");
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char saved = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            p[i] = saved;
            free(p);
            return false;
        }
        p[i] = saved;
    }
    bool ok = is_dir(p);
    free(p);
    return ok;
}

static bool key_ok(const char *key) {
    if (!key || strlen(key) != 64) return false;
    for (int i = 0; i < 64; i++) {
        char c = key[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    }
    return true;
}

static void put_u64le(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_u64le(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static bool read_all(int fd, void *buf, size_t n) {
    uint8_t *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

static bool write_all(int fd, const void *buf, size_t n) {
    const uint8_t *p = buf;
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) errno = EIO;
        if (r <= 0) return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

bool bg_cache_load(const char *dir, const char *key, unsigned char **bytes, size_t *len,
                   BgCacheStatus *st) {
    BgCacheStatus dummy;
    if (!st) st = &dummy;
    *st = BG_CACHE_MISS;
    *bytes = NULL;
    *len = 0;
    if (bg_cache_disabled() || !dir || !*dir || !key_ok(key)) return false;

    char *path = path_cat(dir, "/", key);
    char *full = path_cat(path, ".cubin", "");
    free(path);
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        free(full);
        return false; /* missing or unreadable: a miss */
    }
    struct stat sb;
    uint8_t hdr[BG_CACHE_HEADER_BYTES];
    unsigned char *payload = NULL;
    bool corrupt = true;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        corrupt = false; /* not something we wrote; leave it alone */
        goto out;
    }
    if ((uint64_t)sb.st_size < BG_CACHE_HEADER_BYTES) goto out;
    if (!read_all(fd, hdr, sizeof hdr)) goto out;
    if (memcmp(hdr, BG_CACHE_MAGIC, 10) != 0) goto out;
    uint64_t plen = get_u64le(hdr + 10);
    if (plen > BG_CACHE_MAX_PAYLOAD || plen != (uint64_t)sb.st_size - BG_CACHE_HEADER_BYTES)
        goto out;
    payload = malloc(plen ? (size_t)plen : 1);
    if (!payload) {
        corrupt = false;
        goto out;
    }
    if (!read_all(fd, payload, (size_t)plen)) goto out;
    uint8_t h[32];
    bg_sha256(payload, (size_t)plen, h);
    if (memcmp(h, hdr + 18, 32) != 0) goto out;
    close(fd);
    free(full);
    *bytes = payload;
    *len = (size_t)plen;
    *st = BG_CACHE_HIT;
    return true;
out:
    close(fd);
    free(payload);
    if (corrupt) {
        unlink(full);
        *st = BG_CACHE_CORRUPT;
    }
    free(full);
    return false;
}

static unsigned long random_tag(const void *salt) {
    unsigned long t = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (!read_all(fd, &t, sizeof t)) t = 0;
        close(fd);
    }
    if (!t) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t = (unsigned long)ts.tv_nsec ^ ((unsigned long)ts.tv_sec << 20) ^
            (unsigned long)(uintptr_t)salt;
    }
    return t ? t : 1;
}

bool bg_cache_store(const char *dir, const char *key, const void *bytes, size_t len,
                    unsigned long tag, BgDiagSink *d) {
    if (bg_cache_disabled()) return true;
    if (!dir || !*dir || !key_ok(key)) {
        bg_diag_at(d, BG_SEV_WARNING, BG_E_WRITE, NULL, (BgLoc){0, 0},
                   "JIT cache: not storing an entry with an invalid directory or key");
        return false;
    }
    if ((uint64_t)len > BG_CACHE_MAX_PAYLOAD) {
        bg_diag_at(d, BG_SEV_WARNING, BG_E_WRITE, NULL, (BgLoc){0, 0},
                   "JIT cache: entry of %zu bytes is over the %llu-byte limit; not cached",
                   len, (unsigned long long)BG_CACHE_MAX_PAYLOAD);
        return false;
    }
    if (!bg_cache_mkdirs(dir)) {
        bg_diag_at(d, BG_SEV_WARNING, BG_E_WRITE, NULL, (BgLoc){0, 0},
                   "JIT cache: cannot create directory %s: %s", dir, strerror(errno));
        return false;
    }
    char *base = path_cat(dir, "/", key);
    char *final = path_cat(base, ".cubin", "");
    if (!tag) tag = random_tag(&tag);
    int n = snprintf(NULL, 0, "%s.tmp.%ld.%lu", final, (long)getpid(), tag);
    char *tmp = bg_xmalloc((size_t)n + 1);
    snprintf(tmp, (size_t)n + 1, "%s.tmp.%ld.%lu", final, (long)getpid(), tag);
    free(base);

    uint8_t hdr[BG_CACHE_HEADER_BYTES];
    memcpy(hdr, BG_CACHE_MAGIC, 10);
    put_u64le(hdr + 10, (uint64_t)len);
    bg_sha256(bytes, len, hdr + 18);

    bool ok = false;
    const char *step = "create";
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
        step = "write";
        ok = write_all(fd, hdr, sizeof hdr) && write_all(fd, bytes, len);
        int saved = errno;
        if (close(fd) != 0 && ok) {
            ok = false;
            saved = errno;
        }
        errno = saved;
        if (ok) {
            step = "rename";
            ok = rename(tmp, final) == 0;
        }
    }
    if (!ok) {
        int saved = errno;
        bg_diag_at(d, BG_SEV_WARNING, BG_E_WRITE, NULL, (BgLoc){0, 0},
                   "JIT cache: cannot %s %s: %s (continuing without caching)", step,
                   strcmp(step, "rename") == 0 ? final : tmp, strerror(saved));
        if (fd >= 0) unlink(tmp);
    }
    free(tmp);
    free(final);
    return ok;
}
