/* fuse_add.c - ADD, SCL and RELU into the epilogue of the producing BMM / BSPMM.
 *
 * Y = add.FFZ(X, b) or add.FFZ(b, X) (b an f32[C] bias or a second f32 tensor of X's shape),
 * Y = scl(X, rows, cols) or Y = relu(X), where X = bmm|bspmm.??F(...) (with or without an
 * epilogue) and Y is X's only consumer, becomes X = op.??Z(...) epilogue(...; add b | scl
 * rows, cols | relu): the same float operations in the same order, done as X's value is
 * produced, so X is never stored (docs/semantics.md, section 7; for b + X the sum is
 * computed as X + b, the same value: IEEE addition commutes).  An add.FFB gives the fused op
 * a B result (bit by the sign).  The fused instruction stays where X was, or moves to Y's
 * place when an operand it gains is defined after X.  Repeats along a chain (scl, then add,
 * then relu) while the operand limit (BG_FUSE_MAX_OPERANDS) allows.  When the other addend is
 * S = scl(h, rows, cols) of a b1 matrix h (GIN's (1 + eps) h term) and the add is S's only
 * use, the step is add_scl h, rows, cols: the same scl and add done on h's bit as X's value is
 * produced, so S's float is never stored either.  Linear: use counts are kept up to date
 * (ir_uses.h) and Y's uses are redirected to X as the walk reaches them. */
#include "bg.h"
#include "ir_uses.h"

static bool producer(const BgModule *m, const int *uses, BgRef x) {
    const BgInst *p = &m->insts[x];
    return (p->op == BG_OP_BMM || p->op == BG_OP_BSPMM) && p->prec[2] == 'F' && uses[x] == 1;
}

/* Moves the fused instruction f (X = x, consumer i) into the IR; `late` is the largest
 * operand f gained. */
static void place(BgModule *m, bool *keep, int *uses, BgRef *fwd, BgRef x, int i, const BgInst *f, BgRef late) {
    bg_uses_drop(uses, &m->insts[x]);
    bg_uses_drop(uses, &m->insts[i]); /* dead or replaced: its operands no longer count as uses */
    if (late == BG_NONE || late < x) {
        m->insts[x] = *f;
        bg_uses_take(uses, &m->insts[x]);
        bg_uses_forward(fwd, uses, (BgRef)i, x); /* Y's users read X */
        keep[i] = false;
        m->insts[i].nargs = 0;
        m->insts[i].nsteps = m->insts[i].npro = 0;
    } else {
        m->insts[i] = *f;
        bg_uses_take(uses, &m->insts[i]);
        keep[x] = false;
        m->insts[x].nargs = 0;
        m->insts[x].nsteps = m->insts[x].npro = 0;
    }
}

bool bg_pass_fuse_add(BgModule *m, BgDiagSink *d) {
    (void)d;
    bool *keep = bg_ir_keep_new(m);
    int *uses = bg_uses_count(m, m->ninsts);
    BgRef *fwd = bg_uses_forward_new(m);
    bool changed = false;
    for (int i = 0; i < m->ninsts; i++) {
        bg_uses_resolve(fwd, &m->insts[i]);
        const BgInst *in = &m->insts[i];
        if (in->nsteps) continue;
        BgRef x = BG_NONE, sl[3] = {BG_NONE, BG_NONE, BG_NONE}, dead = BG_NONE;
        BgStepKind k;
        if (in->op == BG_OP_SCL) {
            if (m->insts[in->args[0]].type.kind != BG_TY_F32) continue; /* scales +-1, not the producer's float */
            k = BG_STEP_SCL;
            x = in->args[0];
            sl[0] = in->args[1];
            sl[1] = in->args[2];
        } else if (in->op == BG_OP_RELU) {
            k = BG_STEP_RELU;
            x = in->args[0];
        } else if (in->op == BG_OP_ADD && in->prec[0] == 'F') {
            k = BG_STEP_ADD;
            for (int j = 0; j < 2 && x == BG_NONE; j++) {
                BgRef other = in->args[1 - j];
                const BgType *to = &m->insts[other].type;
                bool vec = to->rank == 1; /* only ever operand 1 (the verifier's rule) */
                if (producer(m, uses, in->args[j]) && in->args[0] != in->args[1] && (j == 0 || !vec)) {
                    x = in->args[j];
                    sl[0] = other;
                }
            }
            if (x == BG_NONE) continue;
            const BgInst *o = &m->insts[sl[0]];
            if (o->op == BG_OP_SCL && o->type.rank == 2 && uses[sl[0]] == 1 &&
                m->insts[o->args[0]].type.kind == BG_TY_B1) { /* add_scl: the scl of bits goes too */
                k = BG_STEP_ADD_SCL;
                dead = sl[0];
                for (int j = 0; j < 3; j++) sl[j] = o->args[j];
            }
        } else {
            continue;
        }
        if (!producer(m, uses, x)) continue;
        BgInst f = m->insts[x];
        int gained = 0;
        BgRef late = BG_NONE;
        for (int j = 0; j < bg_step_slots(k); j++)
            if (sl[j] != BG_NONE) {
                gained++;
                if (late == BG_NONE || sl[j] > late) late = sl[j];
            }
        if (bg_inst_noperands(&f) + gained > BG_FUSE_MAX_OPERANDS || !bg_inst_add_step(&f, k, 0.0f, sl)) continue;
        f.type = in->type; /* an add.FFB gives a b1 result */
        if (in->op == BG_OP_ADD) f.prec[2] = in->prec[2];
        if (dead != BG_NONE) { /* the scl's only use was the add */
            bg_uses_drop(uses, &m->insts[dead]);
            keep[dead] = false;
            m->insts[dead].nargs = 0;
        }
        place(m, keep, uses, fwd, x, i, &f, late);
        changed = true;
    }
    if (changed) bg_ir_compact(m, keep);
    return true;
}
