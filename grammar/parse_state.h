/* parse_state.h - state shared by the scanner (lexer.l) and the parser (parser.y).
 * One BgParseState lives for one parse; everything it allocates is in the arena. */
#ifndef BG_PARSE_STATE_H
#define BG_PARSE_STATE_H
#include "bg.h"

typedef struct BgTok {
    const char *s; /* text (arena; strings unescaped) */
    size_t n;
    double num;
    bool is_int;
} BgTok;

typedef struct BgArgList {
    BgAstArg *v;
    int n, cap;
} BgArgList;

typedef struct BgDimList {
    BgAstDim v[4];
    int n;
    bool too_many;
} BgDimList;

typedef struct BgParseState {
    BgArena *a;
    const BgSource *src;
    BgDiagSink *d;
    size_t offset;      /* byte offset of the next character */
    int depth;          /* open brackets */
    int last_was_sep;
    char open_ch[64];   /* innermost open brackets (for "unclosed" hints) */
    BgLoc open_loc[64];
    BgAstStmt *stmts;
    int nstmts, cap;
    int lex_errors;
    int eof_unclosed;   /* an unclosed bracket was reported at end of input */
} BgParseState;

BgTok bg_lex_tok(BgParseState *ps, const char *s, size_t n);
BgTok bg_lex_number(BgParseState *ps, const char *s, size_t n, BgLoc loc, int is_float);
BgTok bg_lex_string(BgParseState *ps, const char *s, size_t n, BgLoc loc);
bool bg_lex_check_utf8(BgParseState *ps, const char *s, size_t n, BgLoc loc);
void bg_lex_open(BgParseState *ps, char c, BgLoc loc);
void bg_lex_close(BgParseState *ps, char c);
void bg_lex_eof(BgParseState *ps);
void bg_lex_error(BgParseState *ps, BgLoc loc, int code, const char *fmt, ...) BG_PRINTF(4, 5);

/* ast.c: AST constructors used by the grammar actions. */
void bg_ast_stmt(BgParseState *ps, BgStmtKind k, BgLoc loc, const BgTok *name, BgLoc name_loc,
                 const BgAstType *type, BgAstExpr *value);
BgAstType bg_ast_type(BgParseState *ps, const BgTok *dtype, BgLoc loc, const BgDimList *dims,
                      BgLoc dims_loc);
BgAstDim bg_ast_dim(BgParseState *ps, const BgTok *t, BgLoc loc, bool symbolic);
BgAstExpr *bg_ast_ident(BgParseState *ps, const BgTok *t, BgLoc loc);
BgAstExpr *bg_ast_number(BgParseState *ps, const BgTok *t, BgLoc loc, bool negate);
BgAstExpr *bg_ast_string(BgParseState *ps, const BgTok *t, BgLoc loc);
BgAstExpr *bg_ast_member(BgParseState *ps, BgAstExpr *base, const BgTok *name, BgLoc name_loc,
                         BgLoc loc);
BgAstExpr *bg_ast_call(BgParseState *ps, BgAstExpr *callee, BgArgList *args, BgArgList *attrs,
                       bool has_block, BgLoc loc);
BgArgList *bg_ast_args_new(BgParseState *ps);
BgArgList *bg_ast_args_push(BgParseState *ps, BgArgList *l, const BgTok *key, BgLoc key_loc,
                            BgAstExpr *value);
#endif
