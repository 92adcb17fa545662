/* pass.c - the pass table and the pipeline runner.
 * The default pipeline is passes.def read top to bottom; --passes=a,b runs a chosen list.
 * The verifier runs after every pass; a hook sees the IR after each one (--print-after). */
#include "bg.h"

#include <string.h>

#define PASS(fn, name, def, help) bool bg_pass_##fn(BgModule *m, BgDiagSink *d);
#include "passes.def"
#undef PASS

static const BgPass pass_table[] = {
#define PASS(fn, name, def, help) {name, help, bg_pass_##fn, def},
#include "passes.def"
#undef PASS
};

const BgPass *bg_pass_table(int *n) {
    *n = (int)(sizeof pass_table / sizeof pass_table[0]);
    return pass_table;
}

const BgPass *bg_pass_find(const char *name) {
    for (size_t i = 0; i < sizeof pass_table / sizeof pass_table[0]; i++)
        if (strcmp(pass_table[i].name, name) == 0) return &pass_table[i];
    return NULL;
}

static bool run_one(BgModule *m, const BgPass *p, BgDiagSink *d,
                    void (*after)(const char *, const BgModule *, void *), void *ud) {
    if (!p->fn(m, d)) return false;
    if (!bg_ir_verify(m, d)) return false;
    if (after) after(p->name, m, ud);
    return true;
}

bool bg_pass_run(BgModule *m, const char *const *names, int nnames, BgDiagSink *d,
                 void (*after)(const char *pass, const BgModule *m, void *ud), void *ud) {
    if (!names) {
        int n;
        const BgPass *t = bg_pass_table(&n);
        for (int i = 0; i < n; i++)
            if (t[i].in_default && !run_one(m, &t[i], d, after, ud)) return false;
        return true;
    }
    for (int i = 0; i < nnames; i++) {
        const BgPass *p = bg_pass_find(names[i]);
        if (!p) {
            bg_diag_error(d, BG_E_OPTION, "unknown pass '%s' (bgnnc --list-passes shows them)", names[i]);
            return false;
        }
        if (!run_one(m, p, d, after, ud)) return false;
    }
    return true;
}

/* check-types: the verifier is the check. */
bool bg_pass_check_types(BgModule *m, BgDiagSink *d) { return bg_ir_verify(m, d); }
