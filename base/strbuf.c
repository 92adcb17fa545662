/* strbuf.c - a growable, NUL-terminated string: the one text builder behind diagnostics
 * rendering, the AST and IR printers and the loaders' writers.  Out of memory aborts (as
 * every host allocation in bgnn, bg_xmalloc). */
#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bg_sb_append(BgStrBuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p) abort();
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void bg_sb_vprintf(BgStrBuf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int k = vsnprintf(NULL, 0, fmt, ap);
    if (k > 0) {
        bg_sb_append(b, "", 0); /* make room for the terminator first */
        if (b->n + (size_t)k + 1 > b->cap) {
            size_t cap = (b->n + (size_t)k + 1) * 2;
            char *p = realloc(b->p, cap);
            if (!p) abort();
            b->p = p;
            b->cap = cap;
        }
        vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap2);
        b->n += (size_t)k;
    }
    va_end(ap2);
}

void bg_sb_printf(BgStrBuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bg_sb_vprintf(b, fmt, ap);
    va_end(ap);
}

char *bg_sb_take(BgStrBuf *b) {
    if (!b->p) bg_sb_append(b, "", 0);
    char *p = b->p;
    memset(b, 0, sizeof *b);
    return p;
}
