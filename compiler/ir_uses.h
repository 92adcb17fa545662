/* ir_uses.h - use counts for passes that rewrite as they walk (ir_uses.c).  bg_ir_use_count
 * scans the whole module for one value; a pass asking it per instruction is quadratic.  These
 * count every value once, and a pass keeps the counts exact by dropping an instruction's
 * operands before it edits the instruction and taking them after. */
#ifndef BG_IR_USES_H
#define BG_IR_USES_H

#include "bg.h"

/* counts[r] = the operand slots naming r (as bg_ir_use_count), for r < ninsts, in an arena
 * array of `size` entries (>= ninsts; the rest zero, for values a pass adds). */
int *bg_uses_count(const BgModule *m, int size);
/* The operands of in stop / start counting (BG_NONE slots are skipped). */
void bg_uses_drop(int *counts, const BgInst *in);
void bg_uses_take(int *counts, const BgInst *in);

/* Deferred replace-all-uses for a pass walking front to back: after bg_uses_forward(f, c,
 * from, to), every later use of `from` counts as a use of `to`, and bg_uses_resolve(f, in)
 * rewrites in's operands when the walk reaches it, so that each instruction is rewritten once
 * instead of the whole tail per replacement (bg_ir_replace_uses).  forward is an arena array
 * of ninsts entries, all BG_NONE at first (bg_uses_forward_new). */
BgRef *bg_uses_forward_new(const BgModule *m);
void bg_uses_forward(BgRef *forward, int *counts, BgRef from, BgRef to);
void bg_uses_resolve(const BgRef *forward, BgInst *in);

#endif /* BG_IR_USES_H */
