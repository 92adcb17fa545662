/* ir_uses.c - use counts and deferred replace-all-uses (ir_uses.h): what keeps the fusion
 * passes linear in the size of the module. */
#include "ir_uses.h"

int *bg_uses_count(const BgModule *m, int size) {
    if (size < m->ninsts) size = m->ninsts;
    int *c = bg_arena_alloc(m->arena, sizeof(int) * (size_t)(size + 1));
    for (int i = 0; i < m->ninsts; i++) bg_uses_take(c, &m->insts[i]);
    return c;
}

void bg_uses_drop(int *counts, const BgInst *in) {
    for (int k = 0; k < in->nargs; k++)
        if (in->args[k] != BG_NONE) counts[in->args[k]]--;
}

void bg_uses_take(int *counts, const BgInst *in) {
    for (int k = 0; k < in->nargs; k++)
        if (in->args[k] != BG_NONE) counts[in->args[k]]++;
}

BgRef *bg_uses_forward_new(const BgModule *m) {
    BgRef *f = bg_arena_alloc(m->arena, sizeof(BgRef) * (size_t)(m->ninsts + 1));
    for (int i = 0; i <= m->ninsts; i++) f[i] = BG_NONE;
    return f;
}

void bg_uses_forward(BgRef *forward, int *counts, BgRef from, BgRef to) {
    forward[from] = to;
    counts[to] += counts[from];
    counts[from] = 0;
}

void bg_uses_resolve(const BgRef *forward, BgInst *in) {
    for (int k = 0; k < in->nargs; k++)
        while (in->args[k] != BG_NONE && forward[in->args[k]] != BG_NONE) in->args[k] = forward[in->args[k]];
}
