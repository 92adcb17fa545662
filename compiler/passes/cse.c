/* cse.c - common-subexpression elimination: an instruction equal to an earlier one (same op,
 * precisions, operands, fused steps, attributes and type) is replaced by it.  Every op is a
 * pure function of its operands and attributes, so this is exact; for leaves it means one load of a
 * parameter used twice and one preprocessing of identical graph declarations.  Outputs are
 * never merged.  The replaced instructions are deleted. */
#include "bg.h"

#include <string.h>

static bool str_eq(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static bool attrs_eq(BgOp op, const BgAttrs *a, const BgAttrs *b) {
    /* A graph's name is only its source spelling; what it denotes is self_loops + norm. */
    if (op != BG_OP_GRAPH && (!str_eq(a->name, b->name) || !str_eq(a->file, b->file))) return false;
    return a->transposed == b->transposed && a->self_loops == b->self_loops && a->norm == b->norm &&
           a->eps == b->eps && a->reduce == b->reduce && a->method == b->method;
}

static bool same(const BgInst *x, const BgInst *y) {
    if (x->op != y->op || x->nargs != y->nargs || strcmp(x->prec, y->prec) != 0 || !bg_type_eq(x->type, y->type))
        return false;
    for (int k = 0; k < x->nargs; k++)
        if (x->args[k] != y->args[k]) return false;
    if (x->npro != y->npro || x->nsteps != y->nsteps) return false;
    for (int s = 0; s < x->nsteps; s++)
        if (x->steps[s].kind != y->steps[s].kind || x->steps[s].eps != y->steps[s].eps) return false;
    return attrs_eq(x->op, &x->attrs, &y->attrs);
}

bool bg_pass_cse(BgModule *m, BgDiagSink *d) {
    (void)d;
    int n = m->ninsts;
    bool *keep = bg_arena_alloc(m->arena, sizeof(bool) * (size_t)(n + 1));
    BgRef *repl = bg_arena_alloc(m->arena, sizeof(BgRef) * (size_t)(n + 1));
    bool changed = false;
    for (int i = 0; i < n; i++) {
        BgInst *in = &m->insts[i];
        keep[i] = true;
        repl[i] = (BgRef)i;
        for (int k = 0; k < in->nargs; k++)
            if (in->args[k] != BG_NONE) in->args[k] = repl[in->args[k]];
        if (in->op == BG_OP_OUTPUT) continue;
        for (int j = 0; j < i; j++) {
            if (keep[j] && same(&m->insts[j], in)) {
                repl[i] = (BgRef)j;
                keep[i] = false;
                changed = true;
                break;
            }
        }
    }
    if (changed) bg_ir_compact(m, keep);
    return true;
}
