/* loadcheck.h - the loaders' error contract, checked once for every loader test: a failed
 * load reports exactly one diagnostic whose message starts with the file's path (code and
 * text handed back for further checks); a successful one reports nothing.  Frees d. */
#ifndef BG_LOADCHECK_H
#define BG_LOADCHECK_H
#include "loaders.h"
#include "bgtest.h"

static void check_load_diag(bool ok, BgDiagSink *d, const char *path, int *code, char *msg, size_t msz) {
    if (!ok) {
        CHECK_EQ_INT(d->n, 1);
        if (d->n) {
            CHECK(strncmp(d->items[0].msg, path, strlen(path)) == 0);
            if (code) *code = d->items[0].code;
            if (msg) snprintf(msg, msz, "%s", d->items[0].msg);
        }
    } else {
        CHECK_EQ_INT(d->n, 0);
    }
    bg_diag_free(d);
}
#endif
