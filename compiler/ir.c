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
    for (int i = 0; i < BG_MAX_ARGS; i++) in->args[i] = i < nargs ? args[i] : BG_NONE;
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

char *bg_type_str(BgType t, char *buf, size_t n) {
    const char *k = t.kind == BG_TY_F32 ? "f32" : t.kind == BG_TY_B1 ? "b1" : t.kind == BG_TY_ADJ ? "adj" : "none";
    return bg_shape_str(k, t.rank, t.dim, buf, n);
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

BgRef bg_ir_insert(BgModule *m, int pos, const BgInst *in) {
    BgInst copy = *in; /* in may point into m->insts */
    bg_ir_add(m, BG_OP_OUTPUT, NULL, copy.type, NULL, 0, copy.loc); /* grows the array */
    memmove(&m->insts[pos + 1], &m->insts[pos], sizeof(BgInst) * (size_t)(m->ninsts - 1 - pos));
    m->insts[pos] = copy;
    for (int i = pos + 1; i < m->ninsts; i++)
        for (int k = 0; k < m->insts[i].nargs; k++)
            if (m->insts[i].args[k] != BG_NONE && m->insts[i].args[k] >= (BgRef)pos) m->insts[i].args[k]++;
    return (BgRef)pos;
}

void bg_ir_replace_uses(BgModule *m, BgRef from, BgRef to) {
    for (int i = (int)from + 1; i < m->ninsts; i++)
        for (int k = 0; k < m->insts[i].nargs; k++)
            if (m->insts[i].args[k] == from) m->insts[i].args[k] = to;
}

/* ---- steps (bg.h, BgStep) ------------------------------------------------------------ */

int bg_step_slots(BgStepKind k) {
    static const int slots[BG_STEP_COUNT] = {2, 1, 0, 1, 4, 0, 2, 0, 3};
    return (unsigned)k < BG_STEP_COUNT ? slots[k] : 0;
}

const char *bg_step_name(BgStepKind k) {
    static const char *const names[BG_STEP_COUNT] = {"scl", "add", "relu", "threshold", "batchnorm", "log_softmax", "center", "standardize", "add_scl"};
    return (unsigned)k < BG_STEP_COUNT ? names[k] : "?";
}

int bg_inst_nbase(const BgInst *in) {
    int n = in->nargs;
    for (int s = 0; s < in->nsteps; s++) n -= bg_step_slots((BgStepKind)in->steps[s].kind);
    return n;
}

int bg_inst_step_arg(const BgInst *in, int s) {
    int k = bg_inst_nbase(in);
    for (int j = 0; j < s; j++) k += bg_step_slots((BgStepKind)in->steps[j].kind);
    return k;
}

int bg_inst_noperands(const BgInst *in) {
    int n = 0;
    for (int k = 0; k < in->nargs; k++) n += in->args[k] != BG_NONE;
    return n;
}

bool *bg_ir_keep_new(BgModule *m) {
    bool *keep = bg_arena_alloc(m->arena, sizeof(bool) * (size_t)(m->ninsts + 1));
    for (int i = 0; i < m->ninsts; i++) keep[i] = true;
    return keep;
}

bool bg_ir_has_op(const BgModule *m, BgOp op) {
    for (int i = 0; i < m->ninsts; i++)
        if (m->insts[i].op == op) return true;
    return false;
}

bool bg_inst_add_step(BgInst *in, BgStepKind k, float eps, const BgRef *slots) {
    int ns = bg_step_slots(k);
    if (in->nsteps >= BG_MAX_STEPS || in->nargs + ns > BG_MAX_ARGS) return false;
    in->steps[in->nsteps].kind = (uint8_t)k;
    in->steps[in->nsteps].eps = eps;
    in->nsteps++;
    for (int j = 0; j < ns; j++) in->args[in->nargs++] = slots[j];
    return true;
}

bool bg_inst_add_prologue(BgInst *in, BgStepKind k, float eps, const BgRef *slots) {
    int ns = bg_step_slots(k);
    if (in->nsteps >= BG_MAX_STEPS || in->nargs + ns > BG_MAX_ARGS) return false;
    int at = bg_inst_step_arg(in, in->npro); /* first epilogue slot */
    memmove(&in->args[at + ns], &in->args[at], sizeof(BgRef) * (size_t)(in->nargs - at));
    for (int j = 0; j < ns; j++) in->args[at + j] = slots[j];
    in->nargs += ns;
    memmove(&in->steps[in->npro + 1], &in->steps[in->npro], sizeof(BgStep) * (size_t)(in->nsteps - in->npro));
    in->steps[in->npro].kind = (uint8_t)k;
    in->steps[in->npro].eps = eps;
    in->npro++;
    in->nsteps++;
    return true;
}

void bg_inst_mm_prec(const BgModule *m, const BgInst *in, char out[4]) {
    memcpy(out, "???", 4);
    for (int k = 0; k < 2; k++) {
        BgRef r = k + 1 < in->nargs ? in->args[k + 1] : BG_NONE;
        if (r != BG_NONE && (int)r < m->ninsts) {
            BgTyKind t = m->insts[r].type.kind;
            out[k] = t == BG_TY_B1 ? 'B' : t == BG_TY_F32 ? 'F' : '?';
        }
    }
    if (in->prec[0]) out[2] = in->prec[0];
}

bool bg_bmm_reads_input(const BgModule *m, const BgInst *in) {
    if (in->op != BG_OP_BMM || in->prec[0] != 'F' || in->prec[1] != 'B' || in->nargs < 1) return false;
    BgRef x = in->args[0];
    if (x == BG_NONE || (int)x >= m->ninsts || m->insts[x].op != BG_OP_INPUT) return false;
    return in->npro == 0 || (in->npro == 1 && in->steps[0].kind == BG_STEP_SCL);
}

int64_t bg_inst_bmm_k(const BgModule *m, const BgInst *in) {
    if (in->op != BG_OP_BMM || in->nargs < 1 || in->args[0] == BG_NONE || (int)in->args[0] >= m->ninsts)
        return 0;
    const BgType *t = &m->insts[in->args[0]].type;
    return t->rank == 2 ? t->dim[1] : 0;
}

/* An aggregation's sum is a float reduction unless it adds +-1 over unit column factors
 * (B activation, B adjacency, norm none or mean): an exact integer sum. */
static bool agg_reduces(const BgModule *m, const BgInst *in) {
    if (in->prec[0] != 'B' || in->prec[1] != 'B') return true;
    BgRef g = in->nargs > 0 ? in->args[0] : BG_NONE;
    if (g == BG_NONE || (int)g >= m->ninsts || m->insts[g].op != BG_OP_GRAPH) return true;
    return m->insts[g].attrs.norm == BG_NORM_SYM;
}

bool bg_op_row_sum(BgOp op) {
    return op == BG_OP_ABSMEAN || op == BG_OP_ROW_MEAN || op == BG_OP_STANDARDIZE || op == BG_OP_BIN_CENTER;
}

BgFpOrder bg_inst_fp(const BgModule *m, const BgInst *in) {
    bool reduces = false;
    switch (in->op) {
    case BG_OP_BMM: reduces = !(in->prec[0] == 'B' && in->prec[1] == 'B'); break;
    case BG_OP_BSPMM:
    case BG_OP_BSPMM_MM: reduces = agg_reduces(m, in); break;
    case BG_OP_READOUT: reduces = in->attrs.reduce != BG_RED_MAX; break;
    case BG_OP_ABSMEAN:
    case BG_OP_ROW_MEAN:
    case BG_OP_BN_SHIFT:
    case BG_OP_STANDARDIZE:
    case BG_OP_LOG_SOFTMAX:
    case BG_OP_BIN_CENTER: reduces = true; break;
    default: break;
    }
    BgFpOrder o = {0};
    if (!reduces) return o;
    o = in->attrs.fp;
    if (o.kind == BG_FP_NONE) o.kind = BG_FP_SEQ;
    return o;
}
