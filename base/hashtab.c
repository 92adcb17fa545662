/* hashtab.c - open addressing with linear probing over (hash, value) pairs, grown to keep the
 * load at most one half.  Values under one hash come back in the order they were put: probing
 * from the hash's home slot meets them in insertion order, and growing re-inserts in slot
 * order from each home, which keeps that order.  Out of memory aborts (bg_xmalloc). */
#include "hashtab.h"

#include "base.h"

#include <stdlib.h>
#include <string.h>

static void grow(BgHashTab *t) {
    size_t cap = t->cap ? 2 * t->cap : 64;
    uint64_t *hash = bg_xmalloc(sizeof *hash * cap);
    int32_t *val = bg_xmalloc(sizeof *val * cap);
    memset(val, 0xff, sizeof *val * cap);
    /* Re-insert in probe order: walk each old cluster from a slot that is empty, so that the
     * entries of one hash are met in the order they were put. */
    size_t start = 0;
    while (t->cap && t->val[start] >= 0) start++;
    for (size_t k = 0; k < t->cap; k++) {
        size_t i = (start + k) & (t->cap - 1);
        if (t->val[i] < 0) continue;
        size_t j = t->hash[i] & (cap - 1);
        while (val[j] >= 0) j = (j + 1) & (cap - 1);
        hash[j] = t->hash[i];
        val[j] = t->val[i];
    }
    free(t->hash);
    free(t->val);
    t->hash = hash;
    t->val = val;
    t->cap = cap;
}

void bg_htab_put(BgHashTab *t, uint64_t h, int32_t v) {
    if (2 * (t->n + 1) > t->cap) grow(t);
    size_t j = h & (t->cap - 1);
    while (t->val[j] >= 0) j = (j + 1) & (t->cap - 1);
    t->hash[j] = h;
    t->val[j] = v;
    t->n++;
}

int32_t bg_htab_next(const BgHashTab *t, uint64_t h, size_t *it) {
    if (!t->cap) return -1;
    for (;;) {
        size_t j = (h + *it) & (t->cap - 1);
        if (t->val[j] < 0 || *it >= t->cap) return -1;
        ++*it;
        if (t->hash[j] == h) return t->val[j];
    }
}

void bg_htab_free(BgHashTab *t) {
    free(t->hash);
    free(t->val);
    memset(t, 0, sizeof *t);
}

uint64_t bg_hash_str(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, then mixed */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return bg_hash_mix(h, 0);
}
