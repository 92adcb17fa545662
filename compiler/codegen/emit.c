/* emit.c - text buffer with indentation and deterministic unique names (emit.h). */
#include "emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bg_emit_init(BgEmit *e) {
    memset(e, 0, sizeof *e);
    e->cap = 256;
    e->buf = bg_xmalloc(e->cap);
    e->buf[0] = 0;
    e->bol = true;
}

void bg_emit_free(BgEmit *e) {
    free(e->buf);
    memset(e, 0, sizeof *e);
}

static void put(BgEmit *e, const char *s, size_t n) {
    if (e->len + n + 1 > e->cap) {
        size_t nc = e->cap ? e->cap : 256;
        while (e->len + n + 1 > nc) nc *= 2;
        char *nb = bg_xmalloc(nc);
        memcpy(nb, e->buf, e->len);
        free(e->buf);
        e->buf = nb;
        e->cap = nc;
    }
    memcpy(e->buf + e->len, s, n);
    e->len += n;
    e->buf[e->len] = 0;
}

void bg_emit_raw(BgEmit *e, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) + 1 : n;
        if (e->bol && s[i] != '\n')
            for (int k = 0; k < e->indent; k++) put(e, "    ", 4);
        put(e, s + i, end - i);
        e->bol = nl != NULL;
        i = end;
    }
}

static void vemit(BgEmit *e, const char *fmt, va_list ap) {
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n < sizeof small) {
        bg_emit_raw(e, small, (size_t)n);
    } else {
        char *big = bg_xmalloc((size_t)n + 1);
        vsnprintf(big, (size_t)n + 1, fmt, ap2);
        bg_emit_raw(e, big, (size_t)n);
        free(big);
    }
    va_end(ap2);
}

void bg_emit_printf(BgEmit *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vemit(e, fmt, ap);
    va_end(ap);
}

void bg_emit_line(BgEmit *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vemit(e, fmt, ap);
    va_end(ap);
    bg_emit_raw(e, "\n", 1);
}

void bg_emit_indent(BgEmit *e, int delta) {
    e->indent += delta;
    if (e->indent < 0) e->indent = 0;
}

char *bg_emit_take(BgEmit *e) {
    char *s = e->buf;
    memset(e, 0, sizeof *e);
    return s;
}

void bg_names_init(BgNames *u, BgArena *a) {
    memset(u, 0, sizeof *u);
    u->a = a;
}

static bool taken(const BgNames *u, const char *s) {
    for (int i = 0; i < u->n; i++)
        if (strcmp(u->names[i], s) == 0) return true;
    return false;
}

const char *bg_names_unique(BgNames *u, const char *base) {
    const char *name = base;
    for (int k = 1; taken(u, name); k++) name = bg_arena_printf(u->a, "%s_%d", base, k);
    name = bg_arena_strdup(u->a, name);
    if (u->n == u->cap) {
        int nc = u->cap ? 2 * u->cap : 16;
        const char **nn = bg_arena_alloc(u->a, sizeof *nn * (size_t)nc);
        if (u->n) memcpy(nn, u->names, sizeof *nn * (size_t)u->n);
        u->names = nn;
        u->cap = nc;
    }
    u->names[u->n++] = name;
    return name;
}
