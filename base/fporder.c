/* fporder.c - the recorded order of a float reduction (BgFpOrder, base.h) as text: the
 * spelling the IR dump, the manifest and `bgnnc --stats` share, and its parser (the
 * manifest reader's).  docs/semantics.md section 2 defines each order. */
#include "base.h"

#include <stdlib.h>
#include <string.h>

#define FP_MAX_COUNT (1 << 24)

char *bg_fp_order_str(BgFpOrder o, char *buf, size_t n) {
    const char *fma = o.fma ? "+fma" : "";
    if (o.kind == BG_FP_SEQ) snprintf(buf, n, "seq%s", fma);
    else if (o.kind == BG_FP_SPLITK) snprintf(buf, n, "splitk(%dx%d)%s", (int)o.split, (int)o.chunk, fma);
    else if (o.kind == BG_FP_LANES) snprintf(buf, n, "lanes(%d)%s", (int)o.split, fma);
    else if (o.kind == BG_FP_SLOTS) snprintf(buf, n, "slots(%d,%d,%d)%s", (int)o.split, (int)o.chunk, (int)o.hub, fma);
    else snprintf(buf, n, "-");
    return buf;
}

/* A decimal count 1 .. FP_MAX_COUNT (0 .. with zero) at *s, up to the character stop; advances
 * *s past it. */
static bool count_at0(const char **s, char stop, int32_t *v, bool zero) {
    const char *p = *s;
    long long x = 0;
    if (zero && p[0] == '0' && p[1] == stop) {
        *v = 0;
        *s = p + 2;
        return true;
    }
    if (*p < '1' || *p > '9') return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        x = x * 10 + (*p - '0');
        if (x > FP_MAX_COUNT) return false;
    }
    if (*p != stop) return false;
    *v = (int32_t)x;
    *s = p + 1;
    return true;
}
static bool count_at(const char **s, char stop, int32_t *v) { return count_at0(s, stop, v, false); }

bool bg_fp_order_parse(const char *s, BgFpOrder *o) {
    memset(o, 0, sizeof *o);
    if (strcmp(s, "-") == 0) return true;
    if (strncmp(s, "seq", 3) == 0) {
        o->kind = BG_FP_SEQ;
        s += 3;
    } else if (strncmp(s, "splitk(", 7) == 0) {
        o->kind = BG_FP_SPLITK;
        s += 7;
        if (!count_at(&s, 'x', &o->split) || !count_at(&s, ')', &o->chunk) || o->split < 2) return false;
    } else if (strncmp(s, "lanes(", 6) == 0) {
        o->kind = BG_FP_LANES;
        s += 6;
        if (!count_at(&s, ')', &o->split) || !bg_fp_lanes_ok(o->split)) return false;
    } else if (strncmp(s, "slots(", 6) == 0) {
        o->kind = BG_FP_SLOTS;
        s += 6;
        if (!count_at(&s, ',', &o->split) || !count_at0(&s, ',', &o->chunk, true) || !count_at(&s, ')', &o->hub) ||
            !bg_fp_slots_ok(o->split) || o->hub <= o->chunk)
            return false;
    } else {
        return false;
    }
    if (strcmp(s, "+fma") == 0) o->fma = true;
    else if (*s) return false;
    return true;
}

bool bg_fp_lanes_ok(int32_t lanes) { return lanes == 32 || lanes == 256; }

bool bg_fp_slots_ok(int32_t slots) { return slots == 4 || slots == 8 || slots == 16 || slots == 32; }

int32_t bg_fp_slots_for_cols(int64_t cols) {
    const int64_t words = (cols + 31) / 32;
    const int g = words <= 1 ? 1 : words <= 2 ? 2 : words <= 4 ? 4 : 8;
    return 32 / g;
}

bool bg_fp_order_eq(BgFpOrder a, BgFpOrder b) {
    return a.kind == b.kind && a.fma == b.fma && a.split == b.split && a.chunk == b.chunk && a.hub == b.hub;
}
