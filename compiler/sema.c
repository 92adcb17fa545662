/* sema.c - checks a parsed model and lowers it to IR in one walk.
 *
 * Declarations (graph, input, param) become leaf instructions; every expression is checked
 * (names, arity, attributes, shapes, precisions) and lowered to the low-level ops of
 * ops.def.  High-level layers expand here following docs/semantics.md section 5; the lowering
 * is deliberately naive (scales before bin, separate bias adds): the passes clean it up.
 *
 * Errors never stop the walk: a failed expression yields a poisoned value (ok = false) that
 * silences errors depending on it, so one run reports every independent mistake.
 *
 * Linear in the model: names, parameters (for their scales) and output names are found
 * through hash indexes (hashtab.h), never by scanning what came before. */
#include "bg.h"
#include "hashtab.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum { SYM_GRAPH, SYM_VALUE, SYM_PARAM } SymKind;

typedef struct Sym {
    const char *name;
    SymKind kind;
    BgLoc loc;     /* where it was defined */
    BgRef ref;
    BgRef scale;   /* PARAM_SCALE of a b1 param, created on first use */
} Sym;

typedef struct Val {
    bool ok;
    BgRef ref;
    BgType type;
    const char *name; /* the identifier it came from, for messages (or NULL) */
    BgLoc loc;        /* the expression */
} Val;

typedef struct Sema {
    BgArena *a;
    const BgSource *src;
    BgDiagSink *d;
    BgModule *m;
    Sym *syms;
    int nsyms, cap;
    int noutputs;
    BgHashTab by_name;   /* name -> index in syms */
    BgHashTab by_param;  /* PARAM ref -> index in syms */
    BgHashTab outputs;   /* output name -> its OUTPUT instruction */
} Sema;

static const Val POISON = {false, BG_NONE, {BG_TY_NONE, 0, {0, 0}}, NULL, {0, 0}};

/* ---- diagnostics helpers ------------------------------------------------------------ */

static void err(Sema *s, int code, BgLoc loc, const char *fmt, ...) BG_PRINTF(4, 5);
static void err(Sema *s, int code, BgLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bg_diag_vat(s->d, BG_SEV_ERROR, code, s->src, loc, fmt, ap);
    va_end(ap);
}

static const char *tystr(Sema *s, BgType t) {
    char buf[64];
    return bg_arena_strdup(s->a, bg_type_str(t, buf, sizeof buf));
}

static char letter(BgType t) { return t.kind == BG_TY_B1 ? 'B' : 'F'; }

static const char *describe(Sema *s, const Val *v) {
    if (v->name) return bg_arena_printf(s->a, "'%s'", v->name);
    return "the operand";
}

/* Note pointing at where a value was produced. */
static void note_origin(Sema *s, const Val *v) {
    if (v->ref == BG_NONE) return;
    const BgInst *in = &s->m->insts[v->ref];
    bg_diag_note_at(s->d, s->src, in->loc, "%s was produced here as %s",
                    v->name ? bg_arena_printf(s->a, "'%s'", v->name) : "the operand",
                    tystr(s, in->type));
}

/* ---- symbols ------------------------------------------------------------------------ */

static Sym *lookup(Sema *s, const char *name) {
    size_t it = 0;
    for (int32_t i; (i = bg_htab_next(&s->by_name, bg_hash_str(name), &it)) >= 0;)
        if (strcmp(s->syms[i].name, name) == 0) return &s->syms[i]; /* names are unique */
    return NULL;
}

static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 30 || lb > 30) return 99;
    size_t row[32];
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t best = prev + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[lb];
}

static void define(Sema *s, const char *name, BgLoc loc, SymKind kind, BgRef ref) {
    Sym *old = lookup(s, name);
    if (old) {
        err(s, BG_E_REDEFINED, loc, "'%s' is already defined", name);
        bg_diag_note_at(s->d, s->src, old->loc, "'%s' was first defined here", name);
        return;
    }
    if (s->nsyms == s->cap) {
        int cap = s->cap ? s->cap * 2 : 32;
        Sym *n = bg_arena_alloc(s->a, sizeof(Sym) * (size_t)cap);
        if (s->nsyms) memcpy(n, s->syms, sizeof(Sym) * (size_t)s->nsyms);
        s->syms = n;
        s->cap = cap;
    }
    bg_htab_put(&s->by_name, bg_hash_str(name), s->nsyms);
    if (kind == SYM_PARAM) bg_htab_put(&s->by_param, bg_hash_mix(0, ref), s->nsyms);
    s->syms[s->nsyms++] = (Sym){name, kind, loc, ref, BG_NONE};
}

/* ---- emitting IR -------------------------------------------------------------------- */

static Val emit(Sema *s, BgOp op, const char *prec, BgType t, const BgRef *args, int nargs,
                BgLoc loc) {
    Val v = {true, bg_ir_add(s->m, op, prec, t, args, nargs, loc), t, NULL, loc};
    return v;
}

static Val emit1(Sema *s, BgOp op, const char *prec, BgType t, BgRef a0, BgLoc loc) {
    return emit(s, op, prec, t, &a0, 1, loc);
}

static Val emit2(Sema *s, BgOp op, const char *prec, BgType t, BgRef a0, BgRef a1, BgLoc loc) {
    BgRef a[2] = {a0, a1};
    return emit(s, op, prec, t, a, 2, loc);
}

/* ---- attributes and arguments --------------------------------------------------------- */

typedef struct Call {
    const BgAstExpr *e;
    const char *what; /* "gcn_conv", "bmm.FBB" */
    bool *attr_seen;
} Call;

static const BgAstArg *find_attr(const Call *c, const char *key) {
    for (int i = 0; i < c->e->nattrs; i++)
        if (strcmp(c->e->attrs[i].key, key) == 0) {
            c->attr_seen[i] = true;
            return &c->e->attrs[i];
        }
    return NULL;
}

/* Reports attributes no handler asked for. allowed: comma-separated list for the message. */
static void check_attrs_used(Sema *s, const Call *c, const char *allowed) {
    for (int i = 0; i < c->e->nattrs; i++) {
        if (c->attr_seen[i]) continue;
        if (allowed && *allowed)
            err(s, BG_E_UNKNOWN_ATTR, c->e->attrs[i].key_loc,
                "unknown attribute '%s' for %s (allowed: %s)", c->e->attrs[i].key, c->what, allowed);
        else
            err(s, BG_E_UNKNOWN_ATTR, c->e->attrs[i].key_loc, "%s takes no attributes", c->what);
    }
    for (int i = 0; i < c->e->nattrs; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(c->e->attrs[i].key, c->e->attrs[j].key) == 0)
                err(s, BG_E_BAD_ATTR, c->e->attrs[i].key_loc, "attribute '%s' given twice",
                    c->e->attrs[i].key);
}

static bool is_prec(const char *p) {
    if (strlen(p) != 3) return false;
    for (int i = 0; i < 3; i++)
        if (p[i] != 'F' && p[i] != 'B') return false;
    return true;
}

/* A precision triple attribute such as mm: FBB; def when absent. */
static bool attr_prec(Sema *s, const Call *c, const char *key, const char *def, char out[4]) {
    const BgAstArg *a = find_attr(c, key);
    snprintf(out, 4, "%s", def);
    if (!a) return true;
    if (a->value->kind != BG_AST_IDENT || !is_prec(a->value->name)) {
        err(s, BG_E_BAD_ATTR, a->value->loc,
            "attribute '%s' must be a precision triple of F and B, such as FBB", key);
        return false;
    }
    snprintf(out, 4, "%s", a->value->name);
    return true;
}

/* An identifier attribute from a list ("absmean|sign"); returns the index or def / -2 on error. */
static int attr_choice(Sema *s, const Call *c, const char *key, const char *const *choices, int def) {
    const BgAstArg *a = find_attr(c, key);
    if (!a) return def;
    if (a->value->kind == BG_AST_IDENT)
        for (int i = 0; choices[i]; i++)
            if (strcmp(a->value->name, choices[i]) == 0) return i;
    char list[128] = "";
    for (int i = 0; choices[i]; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, choices[i], sizeof list - strlen(list) - 1);
    }
    err(s, BG_E_BAD_ATTR, a->value->loc, "attribute '%s' must be one of: %s", key, list);
    return -2;
}

static double attr_number(Sema *s, const Call *c, const char *key, double def, double lo, double hi) {
    const BgAstArg *a = find_attr(c, key);
    if (!a) return def;
    if (a->value->kind != BG_AST_NUMBER || !(a->value->num >= lo && a->value->num <= hi)) {
        err(s, BG_E_BAD_ATTR, a->value->loc, "attribute '%s' must be a number from %g to %g", key, lo, hi);
        return def;
    }
    return a->value->num;
}

/* Positional operands: at least min, at most max; keyword args are errors here unless
 * listed in kw (handled by the caller). */
static bool check_arity(Sema *s, const Call *c, int min, int max, const char *sig) {
    int npos = 0;
    for (int i = 0; i < c->e->nargs; i++) {
        if (c->e->args[i].key) {
            err(s, BG_E_ARITY, c->e->args[i].key_loc,
                "%s takes no keyword argument '%s' (use an attribute block { %s: ... } for options)",
                c->what, c->e->args[i].key, c->e->args[i].key);
            return false;
        }
        npos++;
    }
    if (npos < min || npos > max) {
        err(s, BG_E_ARITY, c->e->loc, "%s takes %s, got %d operand%s", c->what, sig, npos,
            npos == 1 ? "" : "s");
        return false;
    }
    return true;
}

/* ---- expressions -------------------------------------------------------------------- */

static Val eval(Sema *s, const BgAstExpr *e);

static Val eval_kind(Sema *s, const BgAstExpr *e, SymKind want, const char *what, const Call *c) {
    if (e->kind == BG_AST_IDENT) {
        Sym *y = lookup(s, e->name);
        if (y && y->kind != want && !(want == SYM_VALUE && y->kind == SYM_PARAM)) {
            err(s, BG_E_OPERAND_KIND, e->loc, "%s expects %s, but '%s' is %s", c->what, what, e->name,
                y->kind == SYM_GRAPH ? "a graph" : "a tensor");
            bg_diag_note_at(s->d, s->src, y->loc, "'%s' is defined here", e->name);
            return POISON;
        }
        if (y && want == SYM_PARAM && y->kind != SYM_PARAM) {
            err(s, BG_E_OPERAND_KIND, e->loc, "%s expects %s, but '%s' is a computed value", c->what,
                what, e->name);
            return POISON;
        }
    } else if (want == SYM_GRAPH || want == SYM_PARAM) {
        if (e->kind == BG_AST_CALL || e->kind == BG_AST_IDENT || e->kind == BG_AST_MEMBER) {
            err(s, BG_E_OPERAND_KIND, e->loc, "%s expects %s here, not an expression", c->what, what);
            return POISON;
        }
    }
    return eval(s, e);
}

static Val operand(Sema *s, const Call *c, int i) { return eval_kind(s, c->e->args[i].value, SYM_VALUE, "a tensor", c); }
static Val graph_operand(Sema *s, const Call *c, int i) { return eval_kind(s, c->e->args[i].value, SYM_GRAPH, "a graph", c); }
static Val param_operand(Sema *s, const Call *c, int i) { return eval_kind(s, c->e->args[i].value, SYM_PARAM, "a parameter", c); }

static bool want_prec(Sema *s, const Call *c, const Val *v, char p, const char *role) {
    if (!v->ok) return false;
    if (v->type.kind == BG_TY_ADJ) {
        err(s, BG_E_OPERAND_KIND, v->loc, "%s expects a tensor as %s, got a graph", c->what, role);
        return false;
    }
    if (letter(v->type) == p) return true;
    err(s, BG_E_PREC_MISMATCH, v->loc, "%s expects %s %s (%s), but %s is %s (%s)", c->what,
        p == 'F' ? "an F" : "a B", role, p == 'F' ? "f32" : "b1", describe(s, v),
        letter(v->type) == 'F' ? "F" : "B", tystr(s, v->type));
    note_origin(s, v);
    return false;
}

static bool want_rank2_nodes(Sema *s, const Call *c, const Val *v, const char *role) {
    if (!v->ok) return false;
    if (v->type.rank != 2 || v->type.dim[0] != BG_DIM_N) {
        err(s, BG_E_SHAPE_MISMATCH, v->loc, "%s expects node features [N, C] as %s, but %s is %s",
            c->what, role, describe(s, v), tystr(s, v->type));
        return false;
    }
    return true;
}

static bool want_vector(Sema *s, const Call *c, const Val *v, int64_t len, const char *role) {
    if (!v->ok) return false;
    if (v->type.kind != BG_TY_F32 || v->type.rank != 1 || v->type.dim[0] != len) {
        BgType t = bg_type_make(BG_TY_F32, 1, len, 0);
        err(s, BG_E_SHAPE_MISMATCH, v->loc, "%s expects %s of type %s, but %s is %s", c->what, role,
            tystr(s, t), describe(s, v), tystr(s, v->type));
        return false;
    }
    return true;
}

/* PARAM_SCALE of a b1 parameter value (one per parameter). */
static BgRef param_scale(Sema *s, const Val *w) {
    size_t it = 0;
    for (int32_t i; (i = bg_htab_next(&s->by_param, bg_hash_mix(0, w->ref), &it)) >= 0;) {
        Sym *y = &s->syms[i];
        if (y->kind == SYM_PARAM && y->ref == w->ref) {
            if (y->scale == BG_NONE) {
                BgInst *p = &s->m->insts[w->ref];
                BgType t = bg_type_make(BG_TY_F32, 1, p->type.dim[1], 0);
                BgRef r = bg_ir_add(s->m, BG_OP_PARAM_SCALE, NULL, t, NULL, 0, p->loc);
                s->m->insts[r].attrs = s->m->insts[w->ref].attrs;
                y->scale = r;
            }
            return y->scale;
        }
    }
    return BG_NONE;
}

typedef enum { BINM_NONE = -1, BINM_ABSMEAN = 0, BINM_SIGN = 1 } BinMode;
static const char *const bin_modes[] = {"absmean", "sign", NULL};

/* linear(x, W[, b]) {mm, bin} per docs/semantics.md section 5. */
static Val lower_linear(Sema *s, const Call *c, Val x, Val w, Val b, const char *mm, BinMode bm,
                        BgLoc loc) {
    if (!x.ok || !w.ok) return POISON;
    if (w.type.rank != 2) {
        err(s, BG_E_SHAPE_MISMATCH, w.loc, "%s expects a weight matrix [K, M], but %s is %s", c->what,
            describe(s, &w), tystr(s, w.type));
        return POISON;
    }
    if (!want_prec(s, c, &w, mm[1], "weight")) return POISON;
    if (x.type.rank != 2 || x.type.kind == BG_TY_ADJ) {
        err(s, BG_E_SHAPE_MISMATCH, x.loc, "%s expects a matrix [R, K] as activation, but %s is %s",
            c->what, describe(s, &x), tystr(s, x.type));
        return POISON;
    }
    if (x.type.dim[1] != w.type.dim[0]) {
        err(s, BG_E_SHAPE_MISMATCH, x.loc,
            "%s: activation %s has %lld columns but weight %s has %lld rows", c->what,
            describe(s, &x), (long long)x.type.dim[1], describe(s, &w), (long long)w.type.dim[0]);
        return POISON;
    }
    BgRef xin = x.ref, alpha = BG_NONE;
    if (mm[0] == 'B' && x.type.kind == BG_TY_F32) {
        if (bm == BINM_NONE) {
            err(s, BG_E_PREC_MISMATCH, x.loc,
                "%s with mm: %s expects a B activation, but %s is F (%s); add { bin: absmean } "
                "(Bi-GCN scaling) or { bin: sign }, or binarise it first",
                c->what, mm, describe(s, &x), tystr(s, x.type));
            note_origin(s, &x);
            return POISON;
        }
        BgType bt = x.type;
        bt.kind = BG_TY_B1;
        xin = emit1(s, BG_OP_BIN, NULL, bt, x.ref, loc).ref;
        if (bm == BINM_ABSMEAN)
            alpha = emit1(s, BG_OP_ABSMEAN, NULL, bg_type_make(BG_TY_F32, 1, x.type.dim[0], 0), x.ref, loc).ref;
    } else if (!want_prec(s, c, &x, mm[0], "activation")) {
        return POISON;
    } else if (bm != BINM_NONE) {
        err(s, BG_E_BAD_ATTR, loc, "%s: 'bin' applies only to an F activation under a B matmul (mm: B..)",
            c->what);
        return POISON;
    }
    BgRef cols = mm[1] == 'B' ? param_scale(s, &w) : BG_NONE;
    bool has_bias = b.ok;
    if (has_bias && !want_vector(s, c, &b, w.type.dim[1], "a bias")) return POISON;
    BgType ft = bg_type_make(BG_TY_F32, 2, x.type.dim[0], w.type.dim[1]);
    char p[4] = {mm[0], mm[1], 'F', 0};
    Val t = emit2(s, BG_OP_BMM, p, ft, xin, w.ref, loc);
    if (alpha != BG_NONE || cols != BG_NONE) {
        BgRef a3[3] = {t.ref, alpha, cols};
        t = emit(s, BG_OP_SCL, NULL, ft, a3, 3, loc);
    }
    if (has_bias) t = emit2(s, BG_OP_ADD, "FFF", ft, t.ref, b.ref, loc);
    if (mm[2] == 'B') {
        BgType bt = ft;
        bt.kind = BG_TY_B1;
        t = emit1(s, BG_OP_BIN, NULL, bt, t.ref, loc);
    }
    return t;
}

/* bspmm.Q(A, x) with an optional bias added before a B output. */
static Val lower_agg(Sema *s, const Call *c, Val A, Val x, Val b, const char *q, BgLoc loc) {
    if (!A.ok || !x.ok) return POISON;
    if (!want_prec(s, c, &x, q[0], "activation") || !want_rank2_nodes(s, c, &x, "activation"))
        return POISON;
    BgType ft = bg_type_make(BG_TY_F32, 2, BG_DIM_N, x.type.dim[1]);
    bool has_bias = b.ok;
    if (has_bias && !want_vector(s, c, &b, x.type.dim[1], "a bias")) return POISON;
    char p[4] = {q[0], q[1], (has_bias || q[2] == 'F') ? 'F' : 'B', 0};
    BgType ot = ft;
    if (p[2] == 'B') ot.kind = BG_TY_B1;
    Val y = emit2(s, BG_OP_BSPMM, p, ot, A.ref, x.ref, loc);
    if (has_bias) y = emit2(s, BG_OP_ADD, "FFF", ft, y.ref, b.ref, loc);
    if (q[2] == 'B' && has_bias) {
        BgType bt = ft;
        bt.kind = BG_TY_B1;
        y = emit1(s, BG_OP_BIN, NULL, bt, y.ref, loc);
    }
    return y;
}

static Val lower_add(Sema *s, const Call *c, Val a, Val b, const char *r, BgLoc loc) {
    if (!a.ok || !b.ok) return POISON;
    if (r[0] != r[1]) {
        err(s, BG_E_BAD_PREC, loc,
            "%s: mixed-precision add (%c + %c) has no meaning; use add.FFF/add.FFB or add.BBF/add.BBB",
            c->what, r[0], r[1]);
        return POISON;
    }
    if (!want_prec(s, c, &a, r[0], "first addend") || !want_prec(s, c, &b, r[1], "second addend"))
        return POISON;
    bool row_vec = b.type.rank == 1 && a.type.rank == 2 && b.type.dim[0] == a.type.dim[1] && r[1] == 'F';
    if (!bg_type_eq(a.type, b.type) && !row_vec) {
        err(s, BG_E_SHAPE_MISMATCH, b.loc, "%s: shapes %s and %s do not match", c->what,
            tystr(s, a.type), tystr(s, b.type));
        return POISON;
    }
    BgType t = a.type;
    t.kind = r[2] == 'B' ? BG_TY_B1 : BG_TY_F32;
    char p[4] = {r[0], r[1], r[2], 0};
    return emit2(s, BG_OP_ADD, p, t, a.ref, b.ref, loc);
}

static Val opt_operand(Sema *s, const Call *c, int i) {
    if (i >= c->e->nargs) return POISON;
    return operand(s, c, i);
}

static bool variant_ok(Sema *s, const Call *c, bool needs) {
    const BgAstExpr *e = c->e;
    if (needs && (!e->variant || !is_prec(e->variant))) {
        err(s, BG_E_BAD_PREC, e->name_loc,
            "%s needs a precision variant of three letters F/B, such as %s.FBB", e->name, e->name);
        return false;
    }
    if (!needs && e->variant) {
        err(s, BG_E_BAD_PREC, e->name_loc, "%s takes no precision variant", e->name);
        return false;
    }
    return true;
}

static Val call_layer(Sema *s, Call *c) {
    const BgAstExpr *e = c->e;
    const char *n = e->name;
    BgLoc loc = e->loc;
    char mm[4], agg[4], add[4];

    if (strcmp(n, "linear") == 0) {
        if (!variant_ok(s, c, false) || !check_arity(s, c, 2, 3, "(x, W[, bias])")) return POISON;
        bool okp = attr_prec(s, c, "mm", "FFF", mm);
        int bm = attr_choice(s, c, "bin", bin_modes, BINM_NONE);
        check_attrs_used(s, c, "mm, bin");
        Val x = operand(s, c, 0), w = param_operand(s, c, 1), b = opt_operand(s, c, 2);
        if (!okp || bm == -2) return POISON;
        return lower_linear(s, c, x, w, b, mm, (BinMode)bm, loc);
    }
    if (strcmp(n, "gcn_conv") == 0) {
        if (!variant_ok(s, c, false) || !check_arity(s, c, 3, 4, "(x, A, W[, bias])")) return POISON;
        bool okp = attr_prec(s, c, "mm", "FFF", mm);
        okp = attr_prec(s, c, "agg", "FFF", agg) && okp; /* both checked: every error reported */
        int bm = attr_choice(s, c, "bin", bin_modes, BINM_NONE);
        check_attrs_used(s, c, "mm, agg, bin");
        Val x = operand(s, c, 0), A = graph_operand(s, c, 1), w = param_operand(s, c, 2);
        Val b = opt_operand(s, c, 3);
        if (!okp || bm == -2) return POISON;
        if (mm[2] != agg[0]) {
            err(s, BG_E_PREC_MISMATCH, loc,
                "gcn_conv: the matmul's output precision (mm: %s gives %c) must equal the "
                "aggregation's input precision (agg: %s takes %c)", mm, mm[2], agg, agg[0]);
            return POISON;
        }
        Val t = lower_linear(s, c, x, w, POISON, mm, (BinMode)bm, loc);
        t.name = NULL;
        return lower_agg(s, c, A, t, b, agg, loc);
    }
    if (strcmp(n, "sage_conv") == 0 || strcmp(n, "graph_conv") == 0) {
        bool sage = n[0] == 's';
        if (!variant_ok(s, c, false) || !check_arity(s, c, 4, 5, "(x, A, W, W_root[, bias])")) return POISON;
        bool okp = attr_prec(s, c, "mm", "FFF", mm);
        okp = attr_prec(s, c, "agg", "FFF", agg) && okp;
        okp = attr_prec(s, c, "add", "FFF", add) && okp;
        int bm = attr_choice(s, c, "bin", bin_modes, BINM_NONE);
        check_attrs_used(s, c, "mm, agg, add, bin");
        Val x = operand(s, c, 0), A = graph_operand(s, c, 1);
        Val w = param_operand(s, c, 2), wr = param_operand(s, c, 3), b = opt_operand(s, c, 4);
        if (!okp || bm == -2 || !x.ok || !A.ok || !w.ok || !wr.ok) return POISON;
        Val u, v;
        if (sage) {
            /* the root branch first: its row-local steps (bin, absmean of x) then follow x's
             * producer, where a row group may take them, and its product may run beside the
             * aggregation (plan.h bg_plan_launch_beside_prev) */
            v = lower_linear(s, c, x, wr, POISON, mm, (BinMode)bm, loc);
            Val a = lower_agg(s, c, A, x, POISON, agg, loc);
            u = lower_linear(s, c, a, w, b, mm, (BinMode)bm, loc);
        } else {
            if (mm[2] != agg[0]) {
                err(s, BG_E_PREC_MISMATCH, loc,
                    "graph_conv: the matmul's output precision (mm: %s gives %c) must equal the "
                    "aggregation's input precision (agg: %s takes %c)", mm, mm[2], agg, agg[0]);
                return POISON;
            }
            Val t = lower_linear(s, c, x, w, POISON, mm, (BinMode)bm, loc);
            u = lower_agg(s, c, A, t, POISON, agg, loc);
            v = lower_linear(s, c, x, wr, b, mm, (BinMode)bm, loc);
        }
        if (!u.ok || !v.ok) return POISON;
        if (letter(u.type) != add[0] || letter(v.type) != add[1]) {
            err(s, BG_E_PREC_MISMATCH, loc,
                "%s: the branches give %c and %c, but add: %s takes %c and %c", n, letter(u.type),
                letter(v.type), add, add[0], add[1]);
            return POISON;
        }
        return lower_add(s, c, u, v, add, loc);
    }
    return POISON;
}

static Val call_op(Sema *s, Call *c) {
    const BgAstExpr *e = c->e;
    const char *n = e->name;
    BgLoc loc = e->loc;

    if (strcmp(n, "bmm") == 0) {
        if (!variant_ok(s, c, true) || !check_arity(s, c, 2, 2, "(x, W)")) return POISON;
        static const char *const paths[] = {"auto", "popc", "tc", "wgmma", NULL};
        int path = attr_choice(s, c, "path", paths, 0);
        check_attrs_used(s, c, "path");
        Val x = operand(s, c, 0), w = param_operand(s, c, 1);
        if (!x.ok || !w.ok || path == -2) return POISON;
        if (path != BG_BMM_PATH_AUTO && (e->variant[0] != 'B' || e->variant[1] != 'B')) {
            err(s, BG_E_BAD_ATTR, loc, "%s: path applies to bmm.BB* only (b1 activations and b1 weights)", c->what);
            return POISON;
        }
        if (!want_prec(s, c, &x, e->variant[0], "activation") || !want_prec(s, c, &w, e->variant[1], "weight"))
            return POISON;
        if (x.type.rank != 2 || w.type.rank != 2 || x.type.dim[1] != w.type.dim[0]) {
            err(s, BG_E_SHAPE_MISMATCH, loc, "%s: cannot multiply %s by %s", c->what, tystr(s, x.type),
                tystr(s, w.type));
            return POISON;
        }
        if (path == BG_BMM_PATH_WGMMA && x.type.dim[1] % 128 != 0) {
            err(s, BG_E_BAD_ATTR, loc, "%s: path=wgmma needs K a multiple of 128 (K = %lld)", c->what,
                (long long)x.type.dim[1]);
            return POISON;
        }
        BgType t = bg_type_make(e->variant[2] == 'B' ? BG_TY_B1 : BG_TY_F32, 2, x.type.dim[0], w.type.dim[1]);
        Val v = emit2(s, BG_OP_BMM, e->variant, t, x.ref, w.ref, loc);
        s->m->insts[v.ref].attrs.path = (BgBmmPath)path;
        return v;
    }
    if (strcmp(n, "bspmm") == 0) {
        if (!variant_ok(s, c, true) || !check_arity(s, c, 2, 2, "(A, x)")) return POISON;
        static const char *const methods[] = {"auto", "ifelse", "andnot", "popc2", NULL};
        int method = attr_choice(s, c, "method", methods, 0);
        check_attrs_used(s, c, "method");
        Val A = graph_operand(s, c, 0), x = operand(s, c, 1);
        if (!A.ok || !x.ok || method == -2) return POISON;
        if (!want_prec(s, c, &x, e->variant[0], "activation") || !want_rank2_nodes(s, c, &x, "activation"))
            return POISON;
        BgType t = bg_type_make(e->variant[2] == 'B' ? BG_TY_B1 : BG_TY_F32, 2, BG_DIM_N, x.type.dim[1]);
        Val v = emit2(s, BG_OP_BSPMM, e->variant, t, A.ref, x.ref, loc);
        s->m->insts[v.ref].attrs.method = (BgMethod)method;
        return v;
    }
    if (strcmp(n, "add") == 0) {
        if (!variant_ok(s, c, true) || !check_arity(s, c, 2, 2, "(a, b)")) return POISON;
        check_attrs_used(s, c, "");
        Val a = operand(s, c, 0), b = operand(s, c, 1);
        return lower_add(s, c, a, b, e->variant, loc);
    }
    if (strcmp(n, "bin") == 0 || strcmp(n, "absmean") == 0 || strcmp(n, "relu") == 0 ||
        strcmp(n, "log_softmax") == 0 || strcmp(n, "standardize") == 0) {
        if (!variant_ok(s, c, false) || !check_arity(s, c, 1, 1, "one operand")) return POISON;
        double eps = 0;
        if (n[0] == 's') eps = attr_number(s, c, "eps", 1e-4, 0, 1);
        check_attrs_used(s, c, n[0] == 's' ? "eps" : "");
        Val x = operand(s, c, 0);
        if (!want_prec(s, c, &x, 'F', "input")) return POISON;
        if (x.type.rank != 2) {
            err(s, BG_E_SHAPE_MISMATCH, x.loc, "%s expects a matrix, but %s is %s", n, describe(s, &x),
                tystr(s, x.type));
            return POISON;
        }
        BgType t = x.type;
        BgOp op = BG_OP_RELU;
        if (n[0] == 'b') { op = BG_OP_BIN; t.kind = BG_TY_B1; }
        else if (n[0] == 'a') { op = BG_OP_ABSMEAN; t = bg_type_make(BG_TY_F32, 1, x.type.dim[0], 0); }
        else if (n[0] == 'l') op = BG_OP_LOG_SOFTMAX;
        else if (n[0] == 's') op = BG_OP_STANDARDIZE;
        Val v = emit1(s, op, NULL, t, x.ref, loc);
        s->m->insts[v.ref].attrs.eps = (float)eps;
        return v;
    }
    if (strcmp(n, "scale") == 0) {
        if (!variant_ok(s, c, false) || !check_arity(s, c, 1, 1, "one b1 parameter")) return POISON;
        check_attrs_used(s, c, "");
        Val w = param_operand(s, c, 0);
        if (!w.ok) return POISON;
        if (w.type.kind != BG_TY_B1 || w.type.rank != 2) {
            err(s, BG_E_OPERAND_KIND, w.loc, "scale() takes a b1 weight matrix, but %s is %s",
                describe(s, &w), tystr(s, w.type));
            return POISON;
        }
        BgRef r = param_scale(s, &w);
        Val v = {true, r, s->m->insts[r].type, NULL, loc};
        return v;
    }
    if (strcmp(n, "scl") == 0) {
        if (!variant_ok(s, c, false)) return POISON;
        check_attrs_used(s, c, "");
        const BgAstExpr *slot[3] = {NULL, NULL, NULL};
        int npos = 0;
        for (int i = 0; i < e->nargs; i++) {
            const BgAstArg *a = &e->args[i];
            int k = -1;
            if (!a->key) k = npos++;
            else if (strcmp(a->key, "rows") == 0) k = 1;
            else if (strcmp(a->key, "cols") == 0) k = 2;
            if (k < 0 || k > 2 || slot[k]) {
                err(s, BG_E_ARITY, a->key ? a->key_loc : a->value->loc,
                    "scl takes (x, rows, cols); rows and cols may be given as rows: and cols:");
                return POISON;
            }
            slot[k] = a->value;
        }
        if (!slot[0] || (!slot[1] && !slot[2])) {
            err(s, BG_E_ARITY, loc, "scl needs a tensor and at least one of rows:, cols:");
            return POISON;
        }
        Val x = eval(s, slot[0]); /* f32, or b1 read as +-1 (the result is f32) */
        if (x.type.rank != 2) {
            err(s, BG_E_SHAPE_MISMATCH, x.loc, "scl expects a matrix, but %s is %s", describe(s, &x), tystr(s, x.type));
            return POISON;
        }
        BgRef f[2] = {BG_NONE, BG_NONE};
        for (int k = 1; k <= 2; k++) {
            if (!slot[k] || (slot[k]->kind == BG_AST_IDENT && strcmp(slot[k]->name, "none") == 0)) continue;
            Val v = eval(s, slot[k]);
            if (!want_vector(s, c, &v, x.type.dim[k - 1], k == 1 ? "rows" : "cols")) return POISON;
            f[k - 1] = v.ref;
        }
        if (f[0] == BG_NONE && f[1] == BG_NONE) {
            err(s, BG_E_ARITY, loc, "scl needs at least one factor that is not none");
            return POISON;
        }
        BgRef a3[3] = {x.ref, f[0], f[1]};
        BgType ft = x.type;
        ft.kind = BG_TY_F32;
        return emit(s, BG_OP_SCL, NULL, ft, a3, 3, loc);
    }
    if (strcmp(n, "concat") == 0) {
        if (!variant_ok(s, c, false) || !check_arity(s, c, 2, 8, "2 to 8 operands")) return POISON;
        check_attrs_used(s, c, "");
        BgRef refs[8];
        Val first = POISON;
        int64_t cols = 0;
        bool ok = true;
        for (int i = 0; i < e->nargs; i++) {
            Val v = operand(s, c, i);
            if (!v.ok) { ok = false; continue; }
            if (i == 0) first = v;
            if (v.type.rank != 2) {
                err(s, BG_E_SHAPE_MISMATCH, v.loc, "concat expects matrices, but %s is %s", describe(s, &v), tystr(s, v.type));
                ok = false;
                continue;
            }
            if (first.ok && i > 0) {
                if (v.type.kind != first.type.kind) {
                    err(s, BG_E_PREC_MISMATCH, v.loc, "concat operands must all be F or all be B, but %s is %c and the first is %c",
                        describe(s, &v), letter(v.type), letter(first.type));
                    ok = false;
                } else if (v.type.dim[0] != first.type.dim[0]) {
                    err(s, BG_E_SHAPE_MISMATCH, v.loc, "concat operands must have the same rows: %s vs %s",
                        tystr(s, first.type), tystr(s, v.type));
                    ok = false;
                }
            }
            refs[i] = v.ref;
            cols += v.type.dim[1];
        }
        if (!ok || !first.ok) return POISON;
        BgType t = bg_type_make(first.type.kind, 2, first.type.dim[0], cols);
        return emit(s, BG_OP_CONCAT, NULL, t, refs, e->nargs, loc);
    }
    if (strcmp(n, "batchnorm") == 0) {
        if (!variant_ok(s, c, false) || !check_arity(s, c, 3, 5, "(x, mean, var[, gamma, beta])")) return POISON;
        double eps = attr_number(s, c, "eps", 1e-5, 0, 1);
        check_attrs_used(s, c, "eps");
        Val x = operand(s, c, 0);
        if (!want_prec(s, c, &x, 'F', "input")) return POISON;
        if (x.type.rank != 2) {
            err(s, BG_E_SHAPE_MISMATCH, x.loc, "batchnorm expects a matrix, but %s is %s", describe(s, &x), tystr(s, x.type));
            return POISON;
        }
        static const char *const roles[] = {"", "running mean", "running variance", "gamma", "beta"};
        BgRef args[5] = {x.ref, BG_NONE, BG_NONE, BG_NONE, BG_NONE};
        for (int i = 1; i < e->nargs; i++) {
            Val v = param_operand(s, c, i);
            if (!want_vector(s, c, &v, x.type.dim[1], roles[i])) return POISON;
            args[i] = v.ref;
        }
        Val v = emit(s, BG_OP_BATCHNORM, NULL, x.type, args, e->nargs, loc);
        s->m->insts[v.ref].attrs.eps = (float)eps;
        return v;
    }
    if (strcmp(n, "readout") == 0) {
        if (!variant_ok(s, c, false) || !check_arity(s, c, 2, 2, "(x, A)")) return POISON;
        static const char *const ops[] = {"sum", "mean", "max", NULL};
        int op = attr_choice(s, c, "op", ops, -3);
        if (op == -3) {
            err(s, BG_E_MISSING_ATTR, loc, "readout needs { op: sum | mean | max }");
            op = -2;
        }
        check_attrs_used(s, c, "op");
        Val x = operand(s, c, 0), A = graph_operand(s, c, 1);
        if (!x.ok || !A.ok || op < 0) return POISON;
        if (!want_prec(s, c, &x, 'F', "input") || !want_rank2_nodes(s, c, &x, "input")) return POISON;
        BgType t = bg_type_make(BG_TY_F32, 2, BG_DIM_G, x.type.dim[1]);
        Val v = emit2(s, BG_OP_READOUT, NULL, t, x.ref, A.ref, loc);
        s->m->insts[v.ref].attrs.reduce = (BgReduce)op;
        return v;
    }
    return call_layer(s, c);
}

static const char *const known_calls[] = {
    "linear", "gcn_conv", "sage_conv", "graph_conv", "batchnorm", "standardize", "relu",
    "concat", "log_softmax", "readout", "bmm", "bspmm", "add", "bin", "absmean", "scl",
    "scale", NULL};

static Val eval(Sema *s, const BgAstExpr *e) {
    switch (e->kind) {
    case BG_AST_IDENT: {
        Sym *y = lookup(s, e->name);
        if (!y) {
            const char *best = NULL;
            size_t bd = (strlen(e->name) + 1) / 3 + 1; /* suggest only close names */
            /* (not when the sink drops this error anyway: a scan per error is quadratic) */
            for (int i = 0; i < s->nsyms && s->d->nerrors < s->d->max_errors; i++) {
                size_t dd = edit_distance(e->name, s->syms[i].name);
                if (dd < bd) { bd = dd; best = s->syms[i].name; }
            }
            if (best)
                err(s, BG_E_UNDEFINED, e->loc, "unknown name '%s'; did you mean '%s'?", e->name, best);
            else
                err(s, BG_E_UNDEFINED, e->loc, "unknown name '%s'", e->name);
            return POISON;
        }
        if (y->ref == BG_NONE) return POISON;
        Val v = {true, y->ref, s->m->insts[y->ref].type, y->name, e->loc};
        return v;
    }
    case BG_AST_NUMBER:
    case BG_AST_STRING:
        err(s, BG_E_OPERAND_KIND, e->loc, "expected a tensor, got a %s",
            e->kind == BG_AST_NUMBER ? "number" : "string");
        return POISON;
    case BG_AST_MEMBER:
        err(s, BG_E_OPERAND_KIND, e->loc, "'.%s' is only valid on a parameter's tensor name (\"name\".T)", e->name);
        return POISON;
    case BG_AST_CALL: {
        bool known = false;
        for (int i = 0; known_calls[i]; i++)
            if (strcmp(known_calls[i], e->name) == 0) known = true;
        if (!known) {
            const char *best = NULL;
            size_t bd = 3;
            for (int i = 0; known_calls[i]; i++) {
                size_t dd = edit_distance(e->name, known_calls[i]);
                if (dd < bd) { bd = dd; best = known_calls[i]; }
            }
            if (strcmp(e->name, "adjacency") == 0 || strcmp(e->name, "npy") == 0)
                err(s, BG_E_UNKNOWN_OP, e->name_loc, "%s(...) is only valid in a %s declaration", e->name,
                    e->name[0] == 'a' ? "graph" : "param");
            else if (best)
                err(s, BG_E_UNKNOWN_OP, e->name_loc, "unknown operation '%s'; did you mean '%s'?", e->name, best);
            else
                err(s, BG_E_UNKNOWN_OP, e->name_loc, "unknown operation '%s'", e->name);
            return POISON;
        }
        Call c = {e, e->variant ? bg_arena_printf(s->a, "%s.%s", e->name, e->variant) : e->name,
                  bg_arena_alloc(s->a, sizeof(bool) * (size_t)(e->nattrs + 1))};
        Val v = call_op(s, &c);
        v.loc = e->loc;
        v.name = NULL;
        return v;
    }
    }
    return POISON;
}

/* ---- declarations ------------------------------------------------------------------- */

static void decl_graph(Sema *s, const BgAstStmt *st) {
    const BgAstExpr *e = st->value;
    BgAttrs at = {0};
    at.norm = BG_NORM_NONE;
    bool ok = true;
    if (e->kind != BG_AST_CALL || strcmp(e->name, "adjacency") != 0 || e->variant) {
        err(s, BG_E_OPERAND_KIND, e->loc, "a graph is declared as adjacency(self_loops: true|false, norm: none|sym|mean)");
        ok = false;
    } else {
        if (e->has_attr_block)
            err(s, BG_E_UNKNOWN_ATTR, e->loc, "adjacency takes its options as arguments: adjacency(self_loops: ..., norm: ...)");
        for (int i = 0; i < e->nargs; i++) {
            const BgAstArg *a = &e->args[i];
            const BgAstExpr *v = a->value;
            if (!a->key) {
                err(s, BG_E_ARITY, v->loc, "adjacency takes only named options: self_loops:, norm:");
                ok = false;
            } else if (strcmp(a->key, "self_loops") == 0) {
                if (v->kind == BG_AST_IDENT && (strcmp(v->name, "true") == 0 || strcmp(v->name, "false") == 0))
                    at.self_loops = v->name[0] == 't';
                else { err(s, BG_E_BAD_ATTR, v->loc, "self_loops must be true or false"); ok = false; }
            } else if (strcmp(a->key, "norm") == 0) {
                if (v->kind == BG_AST_IDENT && strcmp(v->name, "none") == 0) at.norm = BG_NORM_NONE;
                else if (v->kind == BG_AST_IDENT && strcmp(v->name, "sym") == 0) at.norm = BG_NORM_SYM;
                else if (v->kind == BG_AST_IDENT && strcmp(v->name, "mean") == 0) at.norm = BG_NORM_MEAN;
                else { err(s, BG_E_BAD_ATTR, v->loc, "norm must be none, sym or mean"); ok = false; }
            } else {
                err(s, BG_E_UNKNOWN_ATTR, a->key_loc, "unknown adjacency option '%s' (allowed: self_loops, norm)", a->key);
                ok = false;
            }
        }
    }
    BgRef r = bg_ir_add(s->m, BG_OP_GRAPH, NULL, bg_type_make(BG_TY_ADJ, 0, 0, 0), NULL, 0, st->loc);
    s->m->insts[r].attrs = at;
    s->m->insts[r].attrs.name = st->name;
    (void)ok;
    define(s, st->name, st->name_loc, SYM_GRAPH, r);
}

/* Converts a declared type; symbolic dims: N only (inputs); params concrete. */
static bool decl_type(Sema *s, const BgAstType *t, bool is_input, BgType *out) {
    BgTyKind k;
    if (strcmp(t->dtype, "f32") == 0) k = BG_TY_F32;
    else if (strcmp(t->dtype, "b1") == 0) k = BG_TY_B1;
    else {
        err(s, BG_E_BAD_DTYPE, t->loc, "unknown element type '%s' (use f32 or b1)", t->dtype);
        return false;
    }
    if (t->ndims < 1 || t->ndims > 2) {
        err(s, BG_E_BAD_DIM, t->loc, "tensors have 1 or 2 dimensions, got %d", t->ndims);
        return false;
    }
    int64_t d[2] = {0, 0};
    for (int i = 0; i < t->ndims; i++) {
        const BgAstDim *dm = &t->dims[i];
        if (dm->symbolic) {
            if (strcmp(dm->sym, "N") != 0) {
                err(s, BG_E_BAD_DIM, dm->loc, "unknown dimension '%s': N (the number of nodes) is the only symbolic size", dm->sym);
                return false;
            }
            if (!is_input || i != 0) {
                err(s, BG_E_BAD_DIM, dm->loc, "N is allowed only as the first dimension of an input");
                return false;
            }
            d[i] = BG_DIM_N;
        } else {
            if (dm->value < 1 || dm->value > (1 << 24)) {
                err(s, BG_E_BAD_DIM, dm->loc, "dimension %lld out of range 1..16777216", (long long)dm->value);
                return false;
            }
            d[i] = dm->value;
        }
    }
    if (is_input && (k != BG_TY_F32 || t->ndims != 2 || d[0] != BG_DIM_N)) {
        err(s, BG_E_BAD_DIM, t->loc, "an input must be node features f32[N, C]");
        return false;
    }
    if (!is_input && k == BG_TY_B1 && t->ndims != 2) {
        err(s, BG_E_BAD_DIM, t->loc, "a b1 parameter must be a matrix [K, M]");
        return false;
    }
    *out = bg_type_make(k, t->ndims, d[0], d[1]);
    return true;
}

static void decl_input(Sema *s, const BgAstStmt *st) {
    BgType t;
    bool ok = decl_type(s, &st->type, true, &t);
    const char *file = NULL;
    if (st->value) {
        if (st->value->kind != BG_AST_STRING || !*st->value->text) {
            err(s, BG_E_OPERAND_KIND, st->value->loc, "an input's source is a file name in the data directory, such as \"features.npy\"");
            ok = false;
        } else if (strcmp(st->value->text, "features.npy") != 0) {
            /* The runtime binds one feature file per graph; say so rather than ignore it. */
            err(s, BG_E_BAD_ATTR, st->value->loc,
                "inputs are read from the data directory's features.npy; other files (\"%s\") are not supported yet",
                st->value->text);
            ok = false;
        } else {
            file = st->value->text;
        }
    }
    if (!ok) t = bg_type_make(BG_TY_F32, 2, BG_DIM_N, 1);
    BgRef r = bg_ir_add(s->m, BG_OP_INPUT, NULL, t, NULL, 0, st->loc);
    s->m->insts[r].attrs.name = st->name;
    s->m->insts[r].attrs.file = file ? file : "features.npy";
    define(s, st->name, st->name_loc, SYM_VALUE, r);
}

static void decl_param(Sema *s, const BgAstStmt *st) {
    BgType t;
    bool ok = decl_type(s, &st->type, false, &t);
    const BgAstExpr *e = st->value;
    bool transposed = false;
    if (e->kind == BG_AST_MEMBER) {
        if (strcmp(e->name, "T") != 0) {
            err(s, BG_E_OPERAND_KIND, e->name_loc, "unknown suffix '.%s' (only .T, stored transposed)", e->name);
            ok = false;
        }
        transposed = true;
        e = e->base;
    }
    const char *name = NULL, *file = NULL;
    if (e->kind == BG_AST_STRING && *e->text) {
        name = e->text;
    } else if (e->kind == BG_AST_CALL && strcmp(e->name, "npy") == 0 && !e->variant && e->nargs == 1 &&
               !e->args[0].key && e->args[0].value->kind == BG_AST_STRING && *e->args[0].value->text) {
        file = e->args[0].value->text;
        name = file;
    } else {
        err(s, BG_E_OPERAND_KIND, e->loc,
            "a parameter loads from a tensor name (\"conv1.weight\", \"conv1.weight\".T) or npy(\"file.npy\")");
        ok = false;
    }
    if (ok && transposed && t.rank != 2) {
        err(s, BG_E_BAD_DIM, st->value->loc, ".T applies only to a matrix parameter");
        ok = false;
    }
    if (!ok) t = bg_type_make(BG_TY_F32, 1, 1, 0);
    BgRef r = bg_ir_add(s->m, BG_OP_PARAM, NULL, t, NULL, 0, st->loc);
    s->m->insts[r].attrs.name = name ? name : st->name;
    s->m->insts[r].attrs.file = file;
    s->m->insts[r].attrs.transposed = transposed;
    define(s, st->name, st->name_loc, SYM_PARAM, r);
}

BgModule *bg_sema_lower(BgArena *a, const BgAst *ast, BgDiagSink *d) {
    Sema s;
    memset(&s, 0, sizeof s);
    s.a = a;
    s.src = ast->src;
    s.d = d;
    const char *mname = "model";
    for (int i = 0; i < ast->nstmts; i++) {
        if (ast->stmts[i].kind != BG_STMT_MODEL) continue;
        if (i != 0)
            err(&s, BG_E_SYNTAX, ast->stmts[i].loc, "'model NAME' must be the first statement");
        mname = ast->stmts[i].name;
    }
    s.m = bg_module_new(a, ast->src, mname);
    int errors_before = d->nerrors;
    for (int i = 0; i < ast->nstmts; i++) {
        const BgAstStmt *st = &ast->stmts[i];
        switch (st->kind) {
        case BG_STMT_MODEL: break;
        case BG_STMT_GRAPH: decl_graph(&s, st); break;
        case BG_STMT_INPUT: decl_input(&s, st); break;
        case BG_STMT_PARAM: decl_param(&s, st); break;
        case BG_STMT_LET: {
            Val v = eval(&s, st->value);
            if (v.ok && v.type.kind == BG_TY_ADJ) {
                err(&s, BG_E_OPERAND_KIND, st->value->loc, "graphs are declared with 'graph NAME = adjacency(...)'");
                v = POISON;
            }
            if (v.ok) define(&s, st->name, st->name_loc, SYM_VALUE, v.ref);
            else {
                /* A poisoned name: later uses are silent instead of cascading. */
                define(&s, st->name, st->name_loc, SYM_VALUE, BG_NONE);
            }
            break;
        }
        case BG_STMT_OUTPUT: {
            Val v = eval(&s, st->value);
            if (!v.ok) break;
            if (v.type.kind == BG_TY_ADJ) {
                err(&s, BG_E_OPERAND_KIND, st->value->loc, "a graph cannot be a model output");
                break;
            }
            const char *oname = st->name ? st->name
                                : st->value->kind == BG_AST_IDENT ? st->value->name
                                : bg_arena_printf(a, "output%d", s.noutputs);
            uint64_t h = bg_hash_str(oname);
            size_t it = 0;
            for (int32_t k; (k = bg_htab_next(&s.outputs, h, &it)) >= 0;) /* one error per earlier one */
                if (strcmp(s.m->insts[k].attrs.name, oname) == 0)
                    err(&s, BG_E_REDEFINED, st->loc, "output '%s' is declared twice", oname);
            BgRef r = bg_ir_add(s.m, BG_OP_OUTPUT, NULL, v.type, &v.ref, 1, st->loc);
            s.m->insts[r].attrs.name = oname;
            bg_htab_put(&s.outputs, h, (int32_t)r);
            s.noutputs++;
            break;
        }
        }
    }
    if (s.noutputs == 0 && d->nerrors == errors_before)
        err(&s, BG_E_NO_OUTPUT, (BgLoc){(uint32_t)(ast->src->len ? ast->src->len - 1 : 0), 0},
            "the model declares no output (add: output NAME)");
    bg_htab_free(&s.by_name);
    bg_htab_free(&s.by_param);
    bg_htab_free(&s.outputs);
    return d->nerrors == errors_before ? s.m : NULL;
}
