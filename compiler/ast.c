/* ast.c - AST constructors called from the grammar actions (grammar/parser.y).
 * All nodes live in the parse arena.  A call on a member of an identifier (bmm.FBB(...))
 * becomes a call with a variant; any other call target is reported here (E0104). */
#include "parse_state.h"

#include <string.h>

static BgAstExpr *new_expr(BgParseState *ps, BgAstKind k, BgLoc loc) {
    BgAstExpr *e = bg_arena_alloc(ps->a, sizeof *e);
    e->kind = k;
    e->loc = loc;
    return e;
}

void bg_ast_stmt(BgParseState *ps, BgStmtKind k, BgLoc loc, const BgTok *name, BgLoc name_loc,
                 const BgAstType *type, BgAstExpr *value) {
    if (ps->nstmts == ps->cap) {
        int cap = ps->cap ? ps->cap * 2 : 32;
        BgAstStmt *n = bg_arena_alloc(ps->a, sizeof(BgAstStmt) * (size_t)cap);
        if (ps->nstmts) memcpy(n, ps->stmts, sizeof(BgAstStmt) * (size_t)ps->nstmts);
        ps->stmts = n;
        ps->cap = cap;
    }
    BgAstStmt *s = &ps->stmts[ps->nstmts++];
    memset(s, 0, sizeof *s);
    s->kind = k;
    s->loc = loc;
    s->name = name ? name->s : NULL;
    s->name_loc = name_loc;
    if (type) {
        s->type = *type;
        s->has_type = true;
    }
    s->value = value;
}

BgAstType bg_ast_type(BgParseState *ps, const BgTok *dtype, BgLoc loc, const BgDimList *dims,
                      BgLoc dims_loc) {
    BgAstType t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype->s;
    t.loc = loc;
    t.ndims = dims->n;
    memcpy(t.dims, dims->v, sizeof t.dims);
    if (dims->too_many)
        bg_diag_at(ps->d, BG_SEV_ERROR, BG_E_BAD_DIM, ps->src, dims_loc,
                   "a tensor type has at most 4 dimensions");
    return t;
}

BgAstDim bg_ast_dim(BgParseState *ps, const BgTok *t, BgLoc loc, bool symbolic) {
    BgAstDim d;
    memset(&d, 0, sizeof d);
    d.loc = loc;
    d.symbolic = symbolic;
    if (symbolic) {
        d.sym = t->s;
    } else if (!t->is_int || t->num < 0 || t->num > 1e9) {
        bg_diag_at(ps->d, BG_SEV_ERROR, BG_E_BAD_DIM, ps->src, loc,
                   "a dimension must be a whole number from 0 to 1000000000");
        d.value = 1;
    } else {
        d.value = (int64_t)t->num;
    }
    return d;
}

BgAstExpr *bg_ast_ident(BgParseState *ps, const BgTok *t, BgLoc loc) {
    BgAstExpr *e = new_expr(ps, BG_AST_IDENT, loc);
    e->name = t->s;
    e->name_loc = loc;
    return e;
}

BgAstExpr *bg_ast_number(BgParseState *ps, const BgTok *t, BgLoc loc, bool negate) {
    BgAstExpr *e = new_expr(ps, BG_AST_NUMBER, loc);
    e->num = negate ? -t->num : t->num;
    e->text = negate ? bg_arena_printf(ps->a, "-%s", t->s) : t->s;
    return e;
}

BgAstExpr *bg_ast_string(BgParseState *ps, const BgTok *t, BgLoc loc) {
    BgAstExpr *e = new_expr(ps, BG_AST_STRING, loc);
    e->text = t->s;
    return e;
}

BgAstExpr *bg_ast_member(BgParseState *ps, BgAstExpr *base, const BgTok *name, BgLoc name_loc,
                         BgLoc loc) {
    BgAstExpr *e = new_expr(ps, BG_AST_MEMBER, loc);
    e->base = base;
    e->name = name->s;
    e->name_loc = name_loc;
    return e;
}

BgAstExpr *bg_ast_call(BgParseState *ps, BgAstExpr *callee, BgArgList *args, BgArgList *attrs,
                       bool has_block, BgLoc loc) {
    BgAstExpr *e = new_expr(ps, BG_AST_CALL, loc);
    if (callee->kind == BG_AST_IDENT) {
        e->name = callee->name;
        e->name_loc = callee->loc;
    } else if (callee->kind == BG_AST_MEMBER && callee->base->kind == BG_AST_IDENT) {
        e->name = callee->base->name;
        e->variant = callee->name;
        e->name_loc = callee->loc;
    } else {
        bg_diag_at(ps->d, BG_SEV_ERROR, BG_E_SYNTAX, ps->src, callee->loc,
                   "only a name (or name.VARIANT) can be called");
        e->name = "?";
        e->name_loc = callee->loc;
    }
    e->args = args->v;
    e->nargs = args->n;
    if (attrs) {
        e->attrs = attrs->v;
        e->nattrs = attrs->n;
    }
    e->has_attr_block = has_block;
    return e;
}

BgArgList *bg_ast_args_new(BgParseState *ps) { return bg_arena_alloc(ps->a, sizeof(BgArgList)); }

BgArgList *bg_ast_args_push(BgParseState *ps, BgArgList *l, const BgTok *key, BgLoc key_loc,
                            BgAstExpr *value) {
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 4;
        BgAstArg *n = bg_arena_alloc(ps->a, sizeof(BgAstArg) * (size_t)cap);
        if (l->n) memcpy(n, l->v, sizeof(BgAstArg) * (size_t)l->n);
        l->v = n;
        l->cap = cap;
    }
    l->v[l->n++] = (BgAstArg){key ? key->s : NULL, key_loc, value};
    return l;
}
