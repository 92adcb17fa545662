/* cse.c - common-subexpression elimination: an instruction equal to an earlier one (same op,
 * precisions, operands, fused steps, attributes and type) is replaced by it.  Every op is a
 * pure function of its operands and attributes, so this is exact; for leaves it means one load of a
 * parameter used twice and one preprocessing of identical graph declarations.  Outputs are
 * never merged.  The replaced instructions are deleted.  Linear: candidates are found through
 * a hash of everything `same` compares (hashtab.h), not by comparing with every earlier one. */
#include "bg.h"
#include "hashtab.h"

#include <string.h>

static bool str_eq(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static bool attrs_eq(BgOp op, const BgAttrs *a, const BgAttrs *b) {
    /* A graph's name is only its source spelling; what it denotes is self_loops + norm. */
    if (op != BG_OP_GRAPH && (!str_eq(a->name, b->name) || !str_eq(a->file, b->file))) return false;
    return a->transposed == b->transposed && a->self_loops == b->self_loops && a->norm == b->norm &&
           a->eps == b->eps && a->reduce == b->reduce && a->method == b->method && a->path == b->path &&
           bg_fp_order_eq(a->fp, b->fp);
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

static uint64_t hash_float(uint64_t h, float x) {
    if (x == 0.0f) x = 0.0f; /* -0 == +0 */
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return bg_hash_mix(h, u);
}

static uint64_t hash_str(uint64_t h, const char *s) { return bg_hash_mix(h, s ? bg_hash_str(s) : 0); }

/* Equal under `same` => equal hashes. */
static uint64_t hash_inst(const BgInst *x) {
    uint64_t h = bg_hash_mix(0, (uint64_t)x->op);
    h = bg_hash_mix(h, (uint64_t)x->nargs);
    h = hash_str(h, x->prec);
    h = bg_hash_mix(h, (uint64_t)x->type.kind);
    h = bg_hash_mix(h, (uint64_t)x->type.rank);
    h = bg_hash_mix(h, (uint64_t)x->type.dim[0]);
    h = bg_hash_mix(h, (uint64_t)x->type.dim[1]);
    for (int k = 0; k < x->nargs; k++) h = bg_hash_mix(h, x->args[k]);
    h = bg_hash_mix(h, (uint64_t)x->npro * 256u + x->nsteps);
    for (int s = 0; s < x->nsteps; s++) h = hash_float(bg_hash_mix(h, x->steps[s].kind), x->steps[s].eps);
    const BgAttrs *a = &x->attrs;
    if (x->op != BG_OP_GRAPH) h = hash_str(hash_str(h, a->name), a->file);
    h = bg_hash_mix(h, (uint64_t)a->transposed * 2u + a->self_loops);
    h = bg_hash_mix(h, ((uint64_t)a->path << 24) ^ ((uint64_t)a->norm << 16) ^ ((uint64_t)a->reduce << 8) ^ (uint64_t)a->method);
    return hash_float(h, a->eps);
}

bool bg_pass_cse(BgModule *m, BgDiagSink *d) {
    (void)d;
    int n = m->ninsts;
    bool *keep = bg_arena_alloc(m->arena, sizeof(bool) * (size_t)(n + 1));
    BgRef *repl = bg_arena_alloc(m->arena, sizeof(BgRef) * (size_t)(n + 1));
    bool changed = false;
    BgHashTab seen = {0}; /* the kept instructions by hash_inst */
    for (int i = 0; i < n; i++) {
        BgInst *in = &m->insts[i];
        keep[i] = true;
        repl[i] = (BgRef)i;
        for (int k = 0; k < in->nargs; k++)
            if (in->args[k] != BG_NONE) in->args[k] = repl[in->args[k]];
        if (in->op == BG_OP_OUTPUT) continue;
        /* The kept instructions are pairwise different, so at most one candidate is equal:
         * the earliest equal one, as a scan would find. */
        uint64_t h = hash_inst(in);
        size_t it = 0;
        for (int32_t j; (j = bg_htab_next(&seen, h, &it)) >= 0;) {
            if (keep[j] && same(&m->insts[j], in)) {
                repl[i] = (BgRef)j;
                keep[i] = false;
                changed = true;
                break;
            }
        }
        if (keep[i]) bg_htab_put(&seen, h, i);
    }
    bg_htab_free(&seen);
    if (changed) bg_ir_compact(m, keep);
    return true;
}
