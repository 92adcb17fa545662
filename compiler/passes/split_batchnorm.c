/* split_batchnorm.c - a batchnorm read by several ops that can each absorb it becomes one
 * copy per reader, so that fold-threshold (a bin reading it: a threshold compare) and
 * fuse-batchnorm (a bmm.F?? or an absmean reading it: an input prologue) fuse every copy
 * into its reader and the normalised matrix is never stored.
 *
 *   y = batchnorm(x, ...) ; b = bin(y) ; a = absmean(y)
 *     ->  b = bin(batchnorm(x, ...)) ; a = absmean(batchnorm(x, ...))
 *
 * Exact: every copy computes the same values from the same operands (batchnorm is
 * elementwise); each is placed right before its reader.  It fires only when every reader can
 * absorb its copy (otherwise the matrix is stored anyway and the copies would be extra work),
 * and only for a batchnorm without steps. */
#include "bg.h"

#include <stdlib.h>

/* Can instruction u absorb a batchnorm r it reads?  r must be its operand 0 only. */
static bool absorbs(const BgModule *m, const BgInst *u, BgRef r) {
    int uses = 0;
    for (int k = 0; k < u->nargs; k++) uses += u->args[k] == r;
    if (uses != 1 || u->nargs < 1 || u->args[0] != r || u->nsteps) return false;
    switch (u->op) {
    case BG_OP_BIN:
    case BG_OP_ABSMEAN: return m->insts[r].type.rank == 2;
    case BG_OP_BMM: return u->prec[0] == 'F';
    default: return false;
    }
}

bool bg_pass_split_batchnorm(BgModule *m, BgDiagSink *d) {
    (void)d;
    int n = m->ninsts;
    /* readers of every batchnorm, and whether all of them absorb it: one walk */
    int *nuse = calloc((size_t)n + 1, sizeof *nuse);
    bool *ok = malloc(((size_t)n + 1) * sizeof *ok);
    if (!nuse || !ok) abort();
    for (int i = 0; i < n; i++) ok[i] = m->insts[i].op == BG_OP_BATCHNORM && m->insts[i].nsteps == 0;
    for (int j = 0; j < n; j++) {
        const BgInst *u = &m->insts[j];
        for (int k = 0; k < u->nargs; k++) {
            BgRef r = u->args[k];
            if (r == BG_NONE || (int)r >= n || !ok[r]) continue;
            nuse[r]++;
            if (!absorbs(m, u, r)) ok[r] = false;
        }
    }
    /* readers to give a copy (all but the first reader of each split batchnorm), in order */
    int ncopies = 0;
    for (int i = 0; i < n; i++)
        if (ok[i] && nuse[i] > 1) ncopies += nuse[i] - 1;
    if (ncopies == 0) {
        free(nuse);
        free(ok);
        return true;
    }
    /* rebuild the instruction list once: a copy of the batchnorm right before each later
     * reader; old index -> new index for every operand */
    BgInst *old = malloc(sizeof *old * (size_t)n);
    int *remap = malloc(sizeof *remap * ((size_t)n + 1));
    bool *seen = calloc((size_t)n + 1, sizeof *seen);
    if (!old || !remap || !seen) abort();
    for (int i = 0; i < n; i++) old[i] = m->insts[i];
    m->ninsts = 0;
    for (int j = 0; j < n; j++) {
        BgInst u = old[j];
        for (int k = 0; k < u.nargs; k++)
            if (u.args[k] != BG_NONE) u.args[k] = (BgRef)remap[u.args[k]];
        BgRef r = old[j].nargs > 0 ? old[j].args[0] : BG_NONE;
        if (r != BG_NONE && (int)r < n && ok[r] && nuse[r] > 1) {
            if (seen[r]) { /* a later reader: its own copy */
                BgInst c = old[r];
                for (int k = 0; k < c.nargs; k++)
                    if (c.args[k] != BG_NONE) c.args[k] = (BgRef)remap[c.args[k]];
                BgRef cr = bg_ir_add(m, c.op, c.prec, c.type, c.args, c.nargs, c.loc);
                m->insts[cr] = c;
                u.args[0] = cr;
            }
            seen[r] = true;
        }
        BgRef nr = bg_ir_add(m, u.op, u.prec, u.type, u.args, u.nargs, u.loc);
        m->insts[nr] = u;
        remap[j] = (int)nr;
    }
    free(old);
    free(remap);
    free(seen);
    free(nuse);
    free(ok);
    return true;
}
