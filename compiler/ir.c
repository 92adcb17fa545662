/* ir.c - building and editing the IR (typed SSA over tensors, see bg.h and docs/ir.md).
 * One instruction defines one value, named by its index; operands always precede users,
 * so a front-to-back walk is a valid execution order. */
#include "bg.h"

#include <stdio.h>
#include <string.h>

static const BgOpInfo op_info[BG_OP_COUNT] = {
#define OP(e, name, mn, mx, fl) {name, mn, mx, fl},
#include "ops.def"
#undef OP
};

const BgOpInfo *bg_op_info(BgOp op) { return &op_info[op]; }

BgModule *bg_module_new(BgArena *a, const BgSource *src, const char *name) {
    BgModule *m = bg_arena_alloc(a, sizeof *m);
    m->arena = a;
    m->src = src;
    m->name = name ? bg_arena_strdup(a, name) : "model";
    return m;
}

BgRef bg_ir_add(BgModule *m, BgOp op, const char *prec, BgType type, const BgRef *args,
                int nargs, BgLoc loc) {
    if (m->ninsts == m->cap) {
        int cap = m->cap ? m->cap * 2 : 32;
        BgInst *n = bg_arena_alloc(m->arena, sizeof(BgInst) * (size_t)cap);
        if (m->ninsts) memcpy(n, m->insts, sizeof(BgInst) * (size_t)m->ninsts);
        m->insts = n;
        m->cap = cap;
    }
    BgInst *in = &m->insts[m->ninsts];
    memset(in, 0, sizeof *in);
    in->op = op;
    if (prec) snprintf(in->prec, sizeof in->prec, "%s", prec);
    in->type = type;
    in->nargs = nargs;
    for (int i = 0; i < 8; i++) in->args[i] = i < nargs ? args[i] : BG_NONE;
    in->loc = loc;
    return (BgRef)m->ninsts++;
}

BgType bg_type_make(BgTyKind k, int rank, int64_t d0, int64_t d1) {
    BgType t = {k, rank, {d0, rank == 2 ? d1 : 0}};
    return t;
}

bool bg_type_eq(BgType a, BgType b) {
    return a.kind == b.kind && a.rank == b.rank && a.dim[0] == b.dim[0] && a.dim[1] == b.dim[1];
}

static void dim_str(int64_t d, char *buf, size_t n) {
    if (d == BG_DIM_N) snprintf(buf, n, "N");
    else if (d == BG_DIM_G) snprintf(buf, n, "G");
    else snprintf(buf, n, "%lld", (long long)d);
}

char *bg_type_str(BgType t, char *buf, size_t n) {
    const char *k = t.kind == BG_TY_F32 ? "f32" : t.kind == BG_TY_B1 ? "b1" : t.kind == BG_TY_ADJ ? "adj" : "none";
    if (t.rank == 0) {
        snprintf(buf, n, "%s", k);
    } else {
        char a[32], b[32];
        dim_str(t.dim[0], a, sizeof a);
        if (t.rank == 1) {
            snprintf(buf, n, "%s[%s]", k, a);
        } else {
            dim_str(t.dim[1], b, sizeof b);
            snprintf(buf, n, "%s[%s,%s]", k, a, b);
        }
    }
    return buf;
}

int bg_ir_use_count(const BgModule *m, BgRef r) {
    int n = 0;
    for (int i = 0; i < m->ninsts; i++)
        for (int k = 0; k < m->insts[i].nargs; k++)
            if (m->insts[i].args[k] == r) n++;
    return n;
}

void bg_ir_compact(BgModule *m, const bool *keep) {
    BgRef *map = bg_arena_alloc(m->arena, sizeof(BgRef) * (size_t)(m->ninsts ? m->ninsts : 1));
    int j = 0;
    for (int i = 0; i < m->ninsts; i++) {
        if (!keep[i]) {
            map[i] = BG_NONE;
            continue;
        }
        map[i] = (BgRef)j;
        BgInst in = m->insts[i];
        for (int k = 0; k < in.nargs; k++)
            if (in.args[k] != BG_NONE) in.args[k] = map[in.args[k]];
        m->insts[j++] = in;
    }
    m->ninsts = j;
}
