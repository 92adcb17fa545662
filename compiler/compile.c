/* compile.c - the front half of the pipeline as one call: read -> parse -> check and lower
 * -> verify -> passes.  Also the two file helpers every writer uses: whole-file reads with
 * a size limit, and atomic writes (temp file in the same directory, then rename), so a
 * failure never leaves a partial output. */
#include "bg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BG_MAX_SOURCE (16u << 20) /* model files larger than 16 MiB are refused */

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
    if ((unsigned long long)st.st_size > BG_MAX_SOURCE) {
        bg_diag_error(d, BG_E_LIMIT, "%s: file is %lld bytes; the limit is %u", path, (long long)st.st_size, BG_MAX_SOURCE);
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

bool bg_write_file_atomic(const char *path, const void *data, size_t len, BgDiagSink *d) {
    size_t n = strlen(path) + 64;
    char *tmp = bg_xmalloc(n);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        bg_diag_error(d, BG_E_WRITE, "%s: cannot create: %s", path, strerror(errno));
        free(tmp);
        return false;
    }
    bool ok = fwrite(data, 1, len, f) == len;
    ok &= fflush(f) == 0;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        bg_diag_error(d, BG_E_WRITE, "%s: cannot write: %s", path, strerror(errno));
        remove(tmp);
        free(tmp);
        return false;
    }
    free(tmp);
    return true;
}

BgModule *bg_compile_text(BgArena *a, const char *name, const char *text, size_t len,
                          const BgCompileOpts *o, BgDiagSink *d) {
    if (len > BG_MAX_SOURCE) {
        bg_diag_error(d, BG_E_LIMIT, "%s: model source is %zu bytes; the limit is %u", name, len, BG_MAX_SOURCE);
        return NULL;
    }
    BgSource *src = bg_source_new(a, name, text, len);
    int before = d->nerrors;
    BgAst *ast = bg_parse(a, src, d);
    if (!ast || d->nerrors > before) return NULL;
    BgModule *m = bg_sema_lower(a, ast, d);
    if (!m || d->nerrors > before) return NULL;
    if (!bg_ir_verify(m, d)) return NULL;
    if (o && o->npasses == 0 && o->passes) return m; /* --passes= (empty): lowered IR */
    if (!bg_pass_run(m, o ? o->passes : NULL, o ? o->npasses : 0, d, o ? o->after : NULL, o ? o->ud : NULL))
        return NULL;
    return m;
}

BgModule *bg_compile_file(BgArena *a, const char *path, const BgCompileOpts *o, BgDiagSink *d) {
    size_t len;
    char *text = bg_read_file(path, &len, d);
    if (!text) return NULL;
    BgModule *m = bg_compile_text(a, path, text, len, o, d);
    free(text);
    return m;
}
