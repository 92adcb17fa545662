/* parser.y - the .bgnn grammar (pure bison parser; builds the AST of bg.h).
 *
 *   model gcn_bin
 *   graph  A  = adjacency(self_loops: true, norm: sym)
 *   input  X  : f32[N, 1433]
 *   param  W1 : b1[1433, 64] = "conv1.weight".T
 *   h = gcn_conv(X, A, W1) { mm: FBB, agg: BBB }
 *   output y = log_softmax(h)
 *
 * A call's callee may carry a variant (bmm.FBB): the grammar parses it as a member access
 * and ast.c turns member-then-call into a call with a variant, which keeps the grammar
 * LALR(1) with no conflicts.  Errors recover at the end of the statement, so one run
 * reports many.  Conflicts: none (%expect 0); use precedence, never accept a conflict. */
%code requires {
#include "parse_state.h"
typedef void *yyscan_t;
}

%code provides {
int bg_yylex(BG_YYSTYPE *lval, BgLoc *lloc, yyscan_t scanner);
void bg_yyerror(BgLoc *loc, yyscan_t scanner, BgParseState *ps, const char *msg);
}

%define api.pure full
%define api.prefix {bg_yy}
%define api.location.type {BgLoc}
%define parse.error detailed
%locations
%expect 0
%lex-param {yyscan_t scanner}
%parse-param {yyscan_t scanner} {BgParseState *ps}

%code {
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                                   \
    do {                                                                             \
        if (N) {                                                                     \
            (Cur).off = YYRHSLOC(Rhs, 1).off;                                        \
            (Cur).len = YYRHSLOC(Rhs, N).off + YYRHSLOC(Rhs, N).len - (Cur).off;     \
        } else {                                                                     \
            (Cur).off = YYRHSLOC(Rhs, 0).off + YYRHSLOC(Rhs, 0).len;                 \
            (Cur).len = 0;                                                           \
        }                                                                            \
    } while (0)
#define YYLOCATION_PRINT(File, Loc) ((void)0)
}

%union {
    BgTok tok;
    BgAstExpr *e;
    BgArgList *al;
    BgDimList dl;
    BgAstDim dim;
    BgAstType ty;
}

%token MODEL "'model'" GRAPH "'graph'" INPUT "'input'" PARAM "'param'" OUTPUT "'output'"
%token <tok> IDENT "identifier" NUMBER "number" STRING "string"
%token SEP "end of line"

%type <e> expr postfix primary
%type <al> args arglist attrs attrlist
%type <dl> dims
%type <dim> dim
%type <ty> type

%%

program
    : %empty
    | program line
    ;

line
    : SEP
    | stmt SEP
    | error SEP                       { yyerrok; }
    ;

stmt
    : MODEL IDENT                     { bg_ast_stmt(ps, BG_STMT_MODEL, @$, &$2, @2, NULL, NULL); }
    | GRAPH IDENT '=' expr            { bg_ast_stmt(ps, BG_STMT_GRAPH, @$, &$2, @2, NULL, $4); }
    | INPUT IDENT ':' type            { bg_ast_stmt(ps, BG_STMT_INPUT, @$, &$2, @2, &$4, NULL); }
    | INPUT IDENT ':' type '=' expr   { bg_ast_stmt(ps, BG_STMT_INPUT, @$, &$2, @2, &$4, $6); }
    | PARAM IDENT ':' type '=' expr   { bg_ast_stmt(ps, BG_STMT_PARAM, @$, &$2, @2, &$4, $6); }
    | IDENT '=' expr                  { bg_ast_stmt(ps, BG_STMT_LET, @$, &$1, @1, NULL, $3); }
    | OUTPUT expr                     { bg_ast_stmt(ps, BG_STMT_OUTPUT, @$, NULL, @1, NULL, $2); }
    | OUTPUT IDENT '=' expr           { bg_ast_stmt(ps, BG_STMT_OUTPUT, @$, &$2, @2, NULL, $4); }
    ;

type
    : IDENT '[' dims ']'              { $$ = bg_ast_type(ps, &$1, @1, &$3, @3); }
    ;

dims
    : dim                             { $$.n = 0; $$.too_many = false; $$.v[$$.n++] = $1; }
    | dims ',' dim                    { $$ = $1; if ($$.n < 4) $$.v[$$.n++] = $3; else $$.too_many = true; }
    ;

dim
    : IDENT                           { $$ = bg_ast_dim(ps, &$1, @1, true); }
    | NUMBER                          { $$ = bg_ast_dim(ps, &$1, @1, false); }
    ;

expr
    : postfix                         { $$ = $1; }
    | '-' NUMBER                      { $$ = bg_ast_number(ps, &$2, @$, true); }
    ;

postfix
    : primary                         { $$ = $1; }
    | postfix '.' IDENT               { $$ = bg_ast_member(ps, $1, &$3, @3, @$); }
    | postfix '(' args ')'            { $$ = bg_ast_call(ps, $1, $3, NULL, false, @$); }
    | postfix '(' args ')' attrs      { $$ = bg_ast_call(ps, $1, $3, $5, true, @$); }
    ;

primary
    : IDENT                           { $$ = bg_ast_ident(ps, &$1, @1); }
    | NUMBER                          { $$ = bg_ast_number(ps, &$1, @1, false); }
    | STRING                          { $$ = bg_ast_string(ps, &$1, @1); }
    ;

args
    : %empty                          { $$ = bg_ast_args_new(ps); }
    | arglist                         { $$ = $1; }
    | arglist ','                     { $$ = $1; }
    ;

arglist
    : expr                            { $$ = bg_ast_args_push(ps, bg_ast_args_new(ps), NULL, @1, $1); }
    | IDENT ':' expr                  { $$ = bg_ast_args_push(ps, bg_ast_args_new(ps), &$1, @1, $3); }
    | arglist ',' expr                { $$ = bg_ast_args_push(ps, $1, NULL, @3, $3); }
    | arglist ',' IDENT ':' expr      { $$ = bg_ast_args_push(ps, $1, &$3, @3, $5); }
    ;

attrs
    : '{' '}'                         { $$ = bg_ast_args_new(ps); }
    | '{' attrlist '}'                { $$ = $2; }
    | '{' attrlist ',' '}'            { $$ = $2; }
    ;

attrlist
    : IDENT ':' expr                  { $$ = bg_ast_args_push(ps, bg_ast_args_new(ps), &$1, @1, $3); }
    | attrlist ',' IDENT ':' expr     { $$ = bg_ast_args_push(ps, $1, &$3, @3, $5); }
    ;

%%
