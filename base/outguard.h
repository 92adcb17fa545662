/* outguard.h - outputs never clobber inputs (outguard.c): the files a command reads, and the
 * check that an output path names none of them. */
#ifndef BG_OUTGUARD_H
#define BG_OUTGUARD_H

#include "base.h"

typedef struct BgInputFile {
    char *path;       /* as the command will open it (malloc'd) */
    const char *what; /* "the model", "the weights file", ... (static text) */
} BgInputFile;

typedef struct BgInputSet {
    BgInputFile *v;
    int n, cap;
} BgInputSet; /* zero-initialised = empty */

/* Adds one input file (a path that does not exist is kept and simply never matches). */
void bg_inputs_add(BgInputSet *s, const char *path, const char *what);
/* Adds every regular file directly inside dir (nothing when dir is not a directory). */
void bg_inputs_add_dir(BgInputSet *s, const char *dir, const char *what);
/* The input that writing `out` would overwrite, or NULL.  Two paths name the same file when
 * stat() gives the same st_dev and st_ino: a "./" prefix, a symlink (either side) and a hard
 * link are all caught.  An output that does not exist yet clobbers nothing. */
const BgInputFile *bg_inputs_clobbered(const BgInputSet *s, const char *out);
void bg_inputs_free(BgInputSet *s);

#endif /* BG_OUTGUARD_H */
