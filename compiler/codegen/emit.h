/* emit.h - a growable text buffer with indentation, and deterministic unique names, for
 * the code generator and the manifest writer (compiler/codegen only). */
#ifndef BG_EMIT_H
#define BG_EMIT_H

#include "bg.h"

typedef struct BgEmit {
    char *buf;     /* malloc'd, NUL-terminated */
    size_t len, cap;
    int indent;    /* current indentation in levels (4 spaces each) */
    bool bol;      /* at the beginning of a line */
} BgEmit;

void bg_emit_init(BgEmit *e);
void bg_emit_free(BgEmit *e);
/* Appends text; indentation is inserted at the start of every non-empty line. */
void bg_emit_raw(BgEmit *e, const char *s, size_t n);
void bg_emit_printf(BgEmit *e, const char *fmt, ...) BG_PRINTF(2, 3);
/* One whole line: indentation, the formatted text, '\n'. */
void bg_emit_line(BgEmit *e, const char *fmt, ...) BG_PRINTF(2, 3);
void bg_emit_indent(BgEmit *e, int delta);
/* Hands over the text (malloc'd) and resets e. */
char *bg_emit_take(BgEmit *e);

/* Deterministic unique names: the first request for a base gives the base itself, later
 * ones base_1, base_2, ...  Names live in the arena. */
typedef struct BgNames {
    const char **names;
    int n, cap;
    BgArena *a;
} BgNames;
void bg_names_init(BgNames *u, BgArena *a);
const char *bg_names_unique(BgNames *u, const char *base);

#endif /* BG_EMIT_H */
