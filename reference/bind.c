/* bind.c - resolves a module's leaves against a graph, node features and weights, for the
 * CPU reference: every GRAPH / INPUT / PARAM / PARAM_SCALE instruction is described as a
 * BgLeafSpec (its attributes, its type as used, its source location) and bound by
 * bg_leaves_bind (loaders/leaves.c), so the reference and the runtime report the same
 * messages for the same bad input.  Values are indexed by instruction. */
#include "reference.h"

#include <stdlib.h>
#include <string.h>

static BgLeafKind leaf_kind(BgOp op) {
    switch (op) {
    case BG_OP_GRAPH: return BG_LEAF_GRAPH;
    case BG_OP_INPUT: return BG_LEAF_INPUT;
    case BG_OP_PARAM: return BG_LEAF_PARAM;
    case BG_OP_PARAM_SCALE: return BG_LEAF_PARAM_SCALE;
    default: return BG_LEAF_NONE;
    }
}

BgLeafSpec bg_leaf_spec_of(const BgModule *m, const BgInst *in) {
    BgLeafSpec s;
    memset(&s, 0, sizeof s);
    s.kind = leaf_kind(in->op);
    s.name = in->attrs.name;
    s.file = in->attrs.file;
    s.transposed = in->attrs.transposed;
    s.dtype = in->type.kind == BG_TY_B1 ? BG_DT_B1 : BG_DT_F32;
    s.rank = in->type.rank;
    s.dim[0] = in->type.dim[0];
    s.dim[1] = in->type.dim[1];
    s.self_loops = in->attrs.self_loops;
    s.norm = in->attrs.norm;
    s.src = m->src;
    s.loc = in->loc;
    return s;
}

bool bg_bind(const BgModule *m, BgGraph *g, const BgTensor *features, const char *weights,
             BgBindings *out, BgDiagSink *d) {
    return bg_bind_mem(m, g, features, weights, NULL, out, d);
}

bool bg_bind_mem(const BgModule *m, BgGraph *g, const BgTensor *features, const char *weights,
                 const BgSafetensors *wmem, BgBindings *out, BgDiagSink *d) {
    memset(out, 0, sizeof *out);
    out->m = m;
    out->graph = g;
    out->n = g ? g->n : 0;
    out->ngraphs = g && g->graph_ptr ? g->ngraphs : 1;
    out->adj = bg_xcalloc((size_t)m->ninsts + 1, sizeof(BgAdj));
    out->leaf = bg_xcalloc((size_t)m->ninsts + 1, sizeof(BgTensor));
    BgLeafSpec *spec = bg_xcalloc((size_t)m->ninsts + 1, sizeof *spec);
    for (int i = 0; i < m->ninsts; i++) spec[i] = bg_leaf_spec_of(m, &m->insts[i]);
    bool ok = bg_leaves_bind(spec, m->ninsts, g, features, weights, wmem, out->adj, out->leaf, d);
    free(spec);
    if (!ok) {
        bg_bindings_free(out);
        return false;
    }
    return true;
}

void bg_bindings_free(BgBindings *b) {
    if (!b) return;
    if (b->m) {
        for (int i = 0; i < b->m->ninsts; i++) {
            if (b->adj && b->adj[i].rowptr) bg_adj_free(&b->adj[i]);
            if (b->leaf) bg_tensor_free(&b->leaf[i]);
        }
    }
    free(b->adj);
    free(b->leaf);
    memset(b, 0, sizeof *b);
}
