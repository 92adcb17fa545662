/* source.c - model source text and byte-offset -> line/column mapping.
 * Locations in the AST and IR are byte offsets (BgLoc); lines and columns are computed
 * only when a diagnostic is rendered.  Columns count bytes, 1-based. */
#include "base.h"

#include <string.h>

BgSource *bg_source_new(BgArena *a, const char *name, const char *text, size_t len) {
    BgSource *s = bg_arena_alloc(a, sizeof *s);
    s->name = bg_arena_strdup(a, name);
    s->text = bg_arena_strndup(a, text, len);
    s->len = len;
    int n = 1;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n') n++;
    s->line_start = bg_arena_alloc(a, sizeof(uint32_t) * (size_t)n);
    s->nlines = 0;
    s->line_start[s->nlines++] = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n') s->line_start[s->nlines++] = (uint32_t)(i + 1);
    return s;
}

void bg_source_linecol(const BgSource *s, uint32_t off, int *line, int *col) {
    int lo = 0, hi = s->nlines - 1;
    while (lo < hi) { /* last line whose start <= off */
        int mid = (lo + hi + 1) / 2;
        if (s->line_start[mid] <= off) lo = mid; else hi = mid - 1;
    }
    *line = lo + 1;
    *col = (int)(off - s->line_start[lo]) + 1;
}
