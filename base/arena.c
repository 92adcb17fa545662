/* arena.c - bump allocator for everything a compilation creates (AST, IR, strings).
 * Blocks are chained and freed together by bg_arena_free; allocations are zeroed and
 * 16-byte aligned.  Out of memory aborts: there is no sensible recovery inside a pass. */
#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct BgBlock {
    struct BgBlock *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} BgBlock;

struct BgArena {
    BgBlock *head;
};

static void oom(size_t n) {
    fprintf(stderr, "bgnn: out of memory allocating %zu bytes\n", n);
    abort();
}

void *bg_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *bg_xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) oom(n * sz);
    return p;
}

BgArena *bg_arena_new(void) { return bg_xcalloc(1, sizeof(BgArena)); }

void bg_arena_free(BgArena *a) {
    if (!a) return;
    for (BgBlock *b = a->head, *nx; b; b = nx) {
        nx = b->next;
        free(b);
    }
    free(a);
}

void *bg_arena_alloc(BgArena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        BgBlock *b = malloc(sizeof(BgBlock) + cap);
        if (!b) oom(n);
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    memset(p, 0, n);
    return p;
}

char *bg_arena_strndup(BgArena *a, const char *s, size_t n) {
    char *p = bg_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *bg_arena_strdup(BgArena *a, const char *s) { return bg_arena_strndup(a, s, strlen(s)); }

char *bg_arena_printf(BgArena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = bg_arena_alloc(a, (size_t)(n < 0 ? 0 : n) + 1);
    if (n > 0) vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}
