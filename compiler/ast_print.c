/* ast_print.c - canonical text of an AST (bgnnc --emit=ast), used by golden tests.
 * Each statement is printed on one line in canonical spelling, prefixed by its
 * line:column, so the dump shows both what was parsed and where. */
#include "bg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef BgStrBuf Out;
#define put bg_sb_printf

static void print_string(Out *o, const char *s) {
    put(o, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') put(o, "\\%c", *s);
        else if (*s == '\n') put(o, "\\n");
        else if (*s == '\t') put(o, "\\t");
        else put(o, "%c", *s);
    }
    put(o, "\"");
}

static void print_expr(Out *o, const BgAstExpr *e);

static void print_args(Out *o, const BgAstArg *a, int n) {
    for (int i = 0; i < n; i++) {
        if (i) put(o, ", ");
        if (a[i].key) put(o, "%s: ", a[i].key);
        print_expr(o, a[i].value);
    }
}

static void print_expr(Out *o, const BgAstExpr *e) {
    switch (e->kind) {
    case BG_AST_IDENT: put(o, "%s", e->name); break;
    case BG_AST_NUMBER: put(o, "%s", e->text); break;
    case BG_AST_STRING: print_string(o, e->text); break;
    case BG_AST_MEMBER:
        print_expr(o, e->base);
        put(o, ".%s", e->name);
        break;
    case BG_AST_CALL:
        put(o, "%s%s%s(", e->name, e->variant ? "." : "", e->variant ? e->variant : "");
        print_args(o, e->args, e->nargs);
        put(o, ")");
        if (e->has_attr_block) {
            put(o, " {");
            if (e->nattrs) put(o, " ");
            print_args(o, e->attrs, e->nattrs);
            put(o, e->nattrs ? " }" : "}");
        }
        break;
    }
}

static void print_type(Out *o, const BgAstType *t) {
    put(o, "%s[", t->dtype);
    for (int i = 0; i < t->ndims; i++) {
        if (i) put(o, ", ");
        if (t->dims[i].symbolic) put(o, "%s", t->dims[i].sym);
        else put(o, "%lld", (long long)t->dims[i].value);
    }
    put(o, "]");
}

char *bg_ast_print(const BgAst *ast) {
    Out o = {0};
    for (int i = 0; i < ast->nstmts; i++) {
        const BgAstStmt *s = &ast->stmts[i];
        int line, col;
        bg_source_linecol(ast->src, s->loc.off, &line, &col);
        put(&o, "%d:%d ", line, col);
        switch (s->kind) {
        case BG_STMT_MODEL: put(&o, "model %s", s->name); break;
        case BG_STMT_GRAPH: put(&o, "graph %s = ", s->name); print_expr(&o, s->value); break;
        case BG_STMT_INPUT:
        case BG_STMT_PARAM:
            put(&o, "%s %s : ", s->kind == BG_STMT_INPUT ? "input" : "param", s->name);
            print_type(&o, &s->type);
            if (s->value) {
                put(&o, " = ");
                print_expr(&o, s->value);
            }
            break;
        case BG_STMT_LET: put(&o, "%s = ", s->name); print_expr(&o, s->value); break;
        case BG_STMT_OUTPUT:
            put(&o, "output ");
            if (s->name) put(&o, "%s = ", s->name);
            print_expr(&o, s->value);
            break;
        }
        put(&o, "\n");
    }
    return bg_sb_take(&o);
}
