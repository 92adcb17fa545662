/* parse.c - drives the flex scanner and bison parser (grammar/) over one source, and holds
 * the scanner's helpers: token text, numbers, string unescaping, UTF-8 checks, bracket
 * tracking for "unclosed '(' opened here" hints. */
#include "parse_state.h"
#include "parser.h"
#define YYSTYPE BG_YYSTYPE
#define YYLTYPE BgLoc
#include "lexer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void bg_lex_error(BgParseState *ps, BgLoc loc, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bg_diag_vat(ps->d, BG_SEV_ERROR, code, ps->src, loc, fmt, ap);
    va_end(ap);
    ps->lex_errors++;
}

BgTok bg_lex_tok(BgParseState *ps, const char *s, size_t n) {
    BgTok t = {bg_arena_strndup(ps->a, s, n), n, 0, false};
    return t;
}

BgTok bg_lex_number(BgParseState *ps, const char *s, size_t n, BgLoc loc, int is_float) {
    BgTok t = bg_lex_tok(ps, s, n);
    if (n == 0) {
        t.s = "0";
        t.is_int = true;
        return t;
    }
    errno = 0;
    char *end;
    t.num = strtod(t.s, &end);
    t.is_int = !is_float;
    if (errno == ERANGE || *end) {
        bg_lex_error(ps, loc, BG_E_LEX_NUMBER, "number '%s' is out of range", t.s);
        t.num = 0;
    }
    return t;
}

/* Length of the UTF-8 sequence at s (n bytes available), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t k;
    unsigned min;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) { k = 2; min = 0x80; c &= 0x1F; }
    else if ((c & 0xF0) == 0xE0) { k = 3; min = 0x800; c &= 0x0F; }
    else if ((c & 0xF8) == 0xF0) { k = 4; min = 0x10000; c &= 0x07; }
    else return 0;
    if (k > n) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    return k;
}

bool bg_lex_check_utf8(BgParseState *ps, const char *s, size_t n, BgLoc loc) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len(u + i, n - i);
        if (!k) {
            BgLoc at = {loc.off + (uint32_t)i, 1};
            bg_lex_error(ps, at, BG_E_LEX_UTF8, "invalid UTF-8 byte 0x%02x", u[i]);
            return false;
        }
        i += k;
    }
    return true;
}

BgTok bg_lex_string(BgParseState *ps, const char *s, size_t n, BgLoc loc) {
    bg_lex_check_utf8(ps, s, n, loc);
    char *out = bg_arena_alloc(ps->a, n);
    size_t k = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        if (s[i] != '\\') {
            out[k++] = s[i];
            continue;
        }
        char c = s[++i];
        switch (c) {
        case 'n': out[k++] = '\n'; break;
        case 't': out[k++] = '\t'; break;
        case '\\': out[k++] = '\\'; break;
        case '"': out[k++] = '"'; break;
        default: {
            BgLoc at = {loc.off + (uint32_t)i - 1, 2};
            bg_lex_error(ps, at, BG_E_LEX_STRING, "unknown escape '\\%c' in string", c);
        }
        }
    }
    out[k] = 0;
    BgTok t = {out, k, 0, false};
    return t;
}

void bg_lex_open(BgParseState *ps, char c, BgLoc loc) {
    if (ps->depth < 64) {
        ps->open_ch[ps->depth] = c;
        ps->open_loc[ps->depth] = loc;
    }
    ps->depth++;
}

void bg_lex_close(BgParseState *ps, char c) {
    (void)c;
    if (ps->depth > 0) ps->depth--;
}

void bg_lex_eof(BgParseState *ps) {
    if (ps->depth > 0 && !ps->last_was_sep) {
        int i = ps->depth <= 64 ? ps->depth - 1 : 63;
        bg_lex_error(ps, ps->open_loc[i], BG_E_UNCLOSED, "unclosed '%c' opened here", ps->open_ch[i]);
        ps->eof_unclosed = 1;
    }
}

void bg_yyerror(BgLoc *loc, yyscan_t scanner, BgParseState *ps, const char *msg) {
    (void)scanner;
    /* A lexical error at the same place already explains it. */
    if (ps->lex_errors && ps->d->n && ps->d->items[ps->d->n - 1].loc.off == loc->off) return;
    /* At the end of input an unclosed bracket was already reported. */
    if (ps->eof_unclosed) return;
    const char *m = strncmp(msg, "syntax error, ", 14) == 0 ? msg + 14 : msg;
    bg_diag_at(ps->d, BG_SEV_ERROR, BG_E_SYNTAX, ps->src, *loc, "syntax error: %s", m);
    if (ps->depth > 0 && ps->depth <= 64)
        bg_diag_note_at(ps->d, ps->src, ps->open_loc[ps->depth - 1], "inside the '%c' opened here",
                        ps->open_ch[ps->depth - 1]);
}

BgAst *bg_parse(BgArena *a, const BgSource *src, BgDiagSink *d) {
    BgParseState ps;
    memset(&ps, 0, sizeof ps);
    ps.a = a;
    ps.src = src;
    ps.d = d;
    ps.last_was_sep = 1;
    if (memchr(src->text, 0, src->len)) {
        bg_diag_at(d, BG_SEV_ERROR, BG_E_LEX_CHAR, src,
                   (BgLoc){(uint32_t)((const char *)memchr(src->text, 0, src->len) - src->text), 1},
                   "NUL byte in model source");
        return NULL;
    }
    yyscan_t scanner;
    if (bg_yylex_init_extra(&ps, &scanner)) return NULL;
    YY_BUFFER_STATE buf = bg_yy_scan_bytes(src->text, (int)src->len, scanner);
    bg_yyparse(scanner, &ps);
    bg_yy_delete_buffer(buf, scanner);
    bg_yylex_destroy(scanner);
    BgAst *ast = bg_arena_alloc(a, sizeof *ast);
    ast->src = src;
    ast->stmts = ps.stmts;
    ast->nstmts = ps.nstmts;
    return ast;
}
