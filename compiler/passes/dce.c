/* dce.c - dead-code elimination: keeps what some OUTPUT depends on, deletes the rest
 * (unused parameters included, so they are not loaded or bound). */
#include "bg.h"

bool bg_pass_dce(BgModule *m, BgDiagSink *d) {
    (void)d;
    bool *live = bg_arena_alloc(m->arena, sizeof(bool) * (size_t)(m->ninsts + 1));
    for (int i = m->ninsts - 1; i >= 0; i--) {
        BgInst *in = &m->insts[i];
        if (in->op == BG_OP_OUTPUT) live[i] = true;
        if (!live[i]) continue;
        for (int k = 0; k < in->nargs; k++)
            if (in->args[k] != BG_NONE) live[in->args[k]] = true;
    }
    bg_ir_compact(m, live);
    return true;
}
