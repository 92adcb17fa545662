/* hashtab.h - a hash index for the compiler's lookups (hashtab.c): names in sema, identical
 * instructions in cse, identical threshold tables in fold-threshold.  It maps a 64-bit hash to
 * int32 values (>= 0) and keeps every value put; a lookup walks the values stored under the
 * same hash and the caller compares the real keys, so collisions cost time, never correctness. */
#ifndef BG_HASHTAB_H
#define BG_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct BgHashTab {
    uint64_t *hash;
    int32_t *val; /* -1 = empty slot */
    size_t cap, n; /* cap: 0 or a power of two */
} BgHashTab;       /* zero-initialised = empty */

void bg_htab_put(BgHashTab *t, uint64_t h, int32_t v);
/* The values stored under h, one per call, in the order put; -1 when there are no more.
 *     size_t it = 0; for (int32_t v; (v = bg_htab_next(t, h, &it)) >= 0;) ... */
int32_t bg_htab_next(const BgHashTab *t, uint64_t h, size_t *it);
void bg_htab_free(BgHashTab *t);

/* Hashing helpers: a string, and one 64-bit word mixed into a running hash. */
uint64_t bg_hash_str(const char *s);
static inline uint64_t bg_hash_mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

#endif /* BG_HASHTAB_H */
