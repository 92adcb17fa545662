/* json.c - a small JSON writer for machine-readable output (bgnnc run --json, --stats --json).
 *
 * Values are appended in order into a growable string, two-space indented; the writer keeps
 * the commas and the nesting (up to BG_JSON_MAX_DEPTH levels; deeper values become null).  Strings are escaped per
 * RFC 8259 (quote, backslash, control characters) and must be UTF-8: each byte of an
 * invalid sequence becomes U+FFFD, so the output is always valid JSON whatever a path holds.
 * Numbers that JSON cannot express (NaN, infinities) are written as null. */
#include "base.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void bg_json_init(BgJson *j) { memset(j, 0, sizeof *j); }

static void indent(BgJson *j) {
    bg_sb_append(&j->sb, "\n", 1);
    for (int i = 0; i < j->depth; i++) bg_sb_append(&j->sb, "  ", 2);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
static int utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    int k;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) k = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) k = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) k = 4, min = 0x10000;
    else return 0;
    if (n < (size_t)k) return 0;
    unsigned v = c & (0x7f >> k);
    for (int i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    return k;
}

static void put_string(BgJson *j, const char *s) {
    bg_sb_append(&j->sb, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    while (n) {
        unsigned char c = *p;
        char e[8];
        if (c == '"' || c == '\\') {
            e[0] = '\\';
            e[1] = (char)c;
            bg_sb_append(&j->sb, e, 2);
        } else if (c < 0x20) {
            const char *short_esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : c == '\b' ? "\\b"
                                  : c == '\f' ? "\\f" : NULL;
            if (short_esc) bg_sb_append(&j->sb, short_esc, 2);
            else {
                snprintf(e, sizeof e, "\\u%04x", c);
                bg_sb_append(&j->sb, e, 6);
            }
        } else if (c >= 0x80) {
            int k = utf8_len(p, n);
            if (k) bg_sb_append(&j->sb, (const char *)p, (size_t)k);
            else bg_sb_append(&j->sb, "\\ufffd", 6);
            k = k ? k : 1;
            p += k;
            n -= (size_t)k;
            continue;
        } else {
            bg_sb_append(&j->sb, (const char *)p, 1);
        }
        p++;
        n--;
    }
    bg_sb_append(&j->sb, "\"", 1);
}

/* Separator, indentation and "key": before a value.  key is ignored inside arrays. */
static void value_start(BgJson *j, const char *key) {
    if (j->depth > 0) {
        if (j->count[j->depth - 1]++) bg_sb_append(&j->sb, ",", 1);
        indent(j);
        if (!j->in_array[j->depth - 1]) {
            put_string(j, key ? key : "");
            bg_sb_append(&j->sb, ": ", 2);
        }
    }
}

static void json_open(BgJson *j, const char *key, bool array) {
    value_start(j, key);
    if (j->depth >= BG_JSON_MAX_DEPTH) { /* a caller's bug: keep the output valid */
        bg_sb_append(&j->sb, "null", 4);
        j->overflow++;
        return;
    }
    bg_sb_append(&j->sb, array ? "[" : "{", 1);
    j->in_array[j->depth] = array;
    j->count[j->depth] = 0;
    j->depth++;
}

static void json_close(BgJson *j, bool array) {
    if (j->overflow) {
        j->overflow--;
        return;
    }
    if (j->depth == 0) return;
    j->depth--;
    if (j->count[j->depth]) indent(j);
    bg_sb_append(&j->sb, array ? "]" : "}", 1);
}

void bg_json_object(BgJson *j, const char *key) { json_open(j, key, false); }
void bg_json_array(BgJson *j, const char *key) { json_open(j, key, true); }
void bg_json_end_object(BgJson *j) { json_close(j, false); }
void bg_json_end_array(BgJson *j) { json_close(j, true); }

void bg_json_string(BgJson *j, const char *key, const char *v) {
    value_start(j, key);
    if (v) put_string(j, v);
    else bg_sb_append(&j->sb, "null", 4);
}

void bg_json_number(BgJson *j, const char *key, double v) {
    value_start(j, key);
    if (!isfinite(v)) {
        bg_sb_append(&j->sb, "null", 4);
        return;
    }
    char b[40];
    snprintf(b, sizeof b, "%.15g", v);
    if (strcmp(b, "-0") == 0) snprintf(b, sizeof b, "0");
    bg_sb_append(&j->sb, b, strlen(b));
}

void bg_json_int(BgJson *j, const char *key, long long v) {
    value_start(j, key);
    bg_sb_printf(&j->sb, "%lld", v);
}

void bg_json_bool(BgJson *j, const char *key, bool v) {
    value_start(j, key);
    bg_sb_append(&j->sb, v ? "true" : "false", v ? 4 : 5);
}

void bg_json_null(BgJson *j, const char *key) {
    value_start(j, key);
    bg_sb_append(&j->sb, "null", 4);
}

char *bg_json_take(BgJson *j) {
    j->overflow = 0;
    while (j->depth > 0) json_close(j, j->in_array[j->depth - 1]);
    bg_sb_append(&j->sb, "\n", 1);
    char *s = bg_sb_take(&j->sb);
    bg_json_init(j);
    return s;
}
