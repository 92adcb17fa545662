/* diag.c - collecting and rendering diagnostics.
 * The library never prints: diagnostics accumulate in a BgDiagSink (errors capped at
 * max_errors, then one E0309) and bg_diag_render turns them into gcc/clang-style text:
 *     model.bgnn:12:9: error[E0203]: message
 *        12 |   h2 = bin(h1)
 *           |            ^~
 * Notes follow the error they explain.  Diagnostics about data files carry no source; their
 * message starts with the file name and position or field. */
#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bg_diag_init(BgDiagSink *d) {
    memset(d, 0, sizeof *d);
    d->max_errors = 20;
}

void bg_diag_free(BgDiagSink *d) {
    for (int i = 0; i < d->n; i++) free(d->items[i].msg);
    free(d->items);
    memset(d, 0, sizeof *d);
}

static char *vfmt(const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *p = bg_xmalloc((size_t)(n < 0 ? 0 : n) + 1);
    vsnprintf(p, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

static void push(BgDiagSink *d, BgSeverity sev, int code, const BgSource *src, BgLoc loc,
                 char *msg) {
    if (sev == BG_SEV_ERROR) {
        if (d->nerrors >= d->max_errors) {
            free(msg);
            if (d->nerrors++ == d->max_errors) {
                char *m2 = bg_xmalloc(64);
                snprintf(m2, 64, "too many errors; stopping after %d", d->max_errors);
                sev = BG_SEV_NOTE;
                code = BG_E_TOO_MANY_ERRORS;
                src = NULL;
                msg = m2;
                goto append;
            }
            return;
        }
        d->nerrors++;
    } else if (d->nerrors > d->max_errors) {
        free(msg); /* notes of dropped errors */
        return;
    }
append:
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 16;
        d->items = realloc(d->items, sizeof(BgDiag) * (size_t)d->cap);
        if (!d->items) abort();
    }
    d->items[d->n++] = (BgDiag){sev, code, src, loc, msg};
}

void bg_diag_vat(BgDiagSink *d, BgSeverity sev, int code, const BgSource *src, BgLoc loc,
                 const char *fmt, va_list ap) {
    push(d, sev, code, src, loc, vfmt(fmt, ap));
}

void bg_diag_at(BgDiagSink *d, BgSeverity sev, int code, const BgSource *src, BgLoc loc,
                const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bg_diag_vat(d, sev, code, src, loc, fmt, ap);
    va_end(ap);
}

void bg_diag_error(BgDiagSink *d, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bg_diag_vat(d, BG_SEV_ERROR, code, NULL, (BgLoc){0, 0}, fmt, ap);
    va_end(ap);
}

void bg_diag_note_at(BgDiagSink *d, const BgSource *src, BgLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bg_diag_vat(d, BG_SEV_NOTE, 0, src, loc, fmt, ap);
    va_end(ap);
}

const char *bg_diag_title(int code) {
    switch (code) {
#define DIAG(e, n, t) case n: return t;
#include "diag_codes.def"
#undef DIAG
    default: return "unknown";
    }
}

#define bput bg_sb_printf

static void render_source_line(BgStrBuf *b, const BgSource *s, BgLoc loc) {
    int line, col;
    bg_source_linecol(s, loc.off, &line, &col);
    uint32_t start = s->line_start[line - 1];
    uint32_t end = start;
    while (end < s->len && s->text[end] != '\n' && s->text[end] != '\r') end++;
    bput(b, "%5d | %.*s\n", line, (int)(end - start), s->text + start);
    bput(b, "      | ");
    for (uint32_t i = start; i < loc.off && i < end; i++) bput(b, "%c", s->text[i] == '\t' ? '\t' : ' ');
    bput(b, "^");
    uint32_t last = loc.off + (loc.len ? loc.len : 1);
    if (last > end) last = end;
    for (uint32_t i = loc.off + 1; i < last; i++) bput(b, "~");
    bput(b, "\n");
}

char *bg_diag_render(const BgDiagSink *d) {
    BgStrBuf b = {0};
    for (int i = 0; i < d->n; i++) {
        const BgDiag *g = &d->items[i];
        const char *sev = g->sev == BG_SEV_ERROR ? "error" : g->sev == BG_SEV_WARNING ? "warning" : "note";
        if (g->src) {
            int line, col;
            bg_source_linecol(g->src, g->loc.off, &line, &col);
            bput(&b, "%s:%d:%d: ", g->src->name, line, col);
        }
        if (g->code && g->sev != BG_SEV_NOTE)
            bput(&b, "%s[E%04d]: %s\n", sev, g->code, g->msg);
        else
            bput(&b, "%s: %s\n", sev, g->msg);
        if (g->src) render_source_line(&b, g->src, g->loc);
    }
    return bg_sb_take(&b);
}
