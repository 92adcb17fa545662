/* compile.c - the front half of the pipeline as one call: read -> parse -> check and lower
 * -> verify -> passes. */
#include "bg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BG_MAX_SOURCE (64u << 20) /* model files larger than 64 MiB are refused (a million
                                    * statements of 60 bytes fit; compile time is linear) */

BgModule *bg_compile_text(BgArena *a, const char *name, const char *text, size_t len,
                          const BgCompileOpts *o, BgDiagSink *d) {
    if (len > BG_MAX_SOURCE) {
        bg_diag_error(d, BG_E_LIMIT, "%s: model source is %zu bytes; the limit is %u", name, len, BG_MAX_SOURCE);
        return NULL;
    }
    BgSource *src = bg_source_new(a, name, text, len);
    int before = d->nerrors;
    BgAst *ast = bg_parse(a, src, d);
    if (!ast || d->nerrors > before) return NULL;
    BgModule *m = bg_sema_lower(a, ast, d);
    if (!m || d->nerrors > before) return NULL;
    m->fp_strict = o && o->fp_strict;
    if (!bg_ir_verify(m, d)) return NULL;
    if (o && o->npasses == 0 && o->passes) return m; /* --passes= (empty): lowered IR */
    if (!bg_pass_run(m, o ? o->passes : NULL, o ? o->npasses : 0, d, o ? o->after : NULL, o ? o->ud : NULL))
        return NULL;
    return m;
}

BgModule *bg_compile_file(BgArena *a, const char *path, const BgCompileOpts *o, BgDiagSink *d) {
    size_t len;
    char *text = bg_read_file(path, &len, d);
    if (!text) return NULL;
    BgModule *m = bg_compile_text(a, path, text, len, o, d);
    free(text);
    return m;
}
