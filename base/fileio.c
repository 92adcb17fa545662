/* fileio.c - whole-file reads with a size limit, and atomic writes: every output file of
 * bgnn (.cubin, .npy logits, .safetensors, cache entries, emitted text) is written to
 * "PATH.tmp.PID" in the same directory and renamed over PATH only when complete, so a
 * failure never leaves a partial file. */
#include "base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BG_MAX_READ (64u << 20) /* bg_read_file refuses files over 64 MiB (model sources, cubins) */

char *bg_read_file(const char *path, size_t *len, BgDiagSink *d) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        bg_diag_error(d, BG_E_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        bg_diag_error(d, BG_E_IO, "%s: not a regular file", path);
        fclose(f);
        return NULL;
    }
    if ((unsigned long long)st.st_size > BG_MAX_READ) {
        bg_diag_error(d, BG_E_LIMIT, "%s: file is %lld bytes; the limit is %u", path, (long long)st.st_size, BG_MAX_READ);
        fclose(f);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    char *buf = bg_xmalloc(n + 1);
    size_t got = fread(buf, 1, n, f);
    fclose(f);
    if (got != n) {
        bg_diag_error(d, BG_E_IO, "%s: short read (%zu of %zu bytes)", path, got, n);
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

FILE *bg_atomic_create(const char *path, char **tmp, BgDiagSink *d) {
    size_t n = strlen(path) + 32;
    *tmp = bg_xmalloc(n);
    snprintf(*tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(*tmp, "wb");
    if (!f) {
        bg_diag_error(d, BG_E_WRITE, "%s: cannot create '%s': %s", path, *tmp, strerror(errno));
        free(*tmp);
        *tmp = NULL;
    }
    return f;
}

bool bg_atomic_finish(FILE *f, char *tmp, const char *path, bool ok, BgDiagSink *d) {
    int err = ok ? 0 : errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        remove(tmp);
        bg_diag_error(d, BG_E_WRITE, "%s: write failed: %s", path, strerror(err ? err : EIO));
    }
    free(tmp);
    return ok;
}

bool bg_write_f32_le(FILE *f, const float *data, size_t n) {
    unsigned char buf[4096];
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        for (; k < sizeof buf / 4 && i < n; k++, i++) {
            uint32_t u;
            memcpy(&u, &data[i], 4);
            for (int q = 0; q < 4; q++) buf[4 * k + (size_t)q] = (unsigned char)(u >> (8 * q));
        }
        if (fwrite(buf, 4, k, f) != k) return false;
    }
    return true;
}

bool bg_write_file_atomic(const char *path, const void *data, size_t len, BgDiagSink *d) {
    char *tmp;
    FILE *f = bg_atomic_create(path, &tmp, d);
    if (!f) return false;
    return bg_atomic_finish(f, tmp, path, fwrite(data, 1, len, f) == len && fflush(f) == 0, d);
}
