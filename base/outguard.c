/* outguard.c - outputs never clobber inputs.  A command collects the files it reads in a
 * BgInputSet; before writing an output it asks bg_inputs_clobbered whether the output path is
 * one of them, comparing files (device and inode), not spellings.  bgnnc refuses such an
 * output as a usage error before doing any work, so the input is never touched. */
#include "outguard.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void bg_inputs_add(BgInputSet *s, const char *path, const char *what) {
    if (!path) return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 8;
        BgInputFile *v = bg_xmalloc(sizeof *v * (size_t)s->cap);
        if (s->n) memcpy(v, s->v, sizeof *v * (size_t)s->n);
        free(s->v);
        s->v = v;
    }
    size_t len = strlen(path);
    char *p = bg_xmalloc(len + 1);
    memcpy(p, path, len + 1);
    s->v[s->n++] = (BgInputFile){p, what};
}

void bg_inputs_add_dir(BgInputSet *s, const char *dir, const char *what) {
    struct dirent **names = NULL;
    int n = dir ? scandir(dir, &names, NULL, alphasort) : -1; /* sorted: deterministic messages */
    if (n < 0) return;
    size_t dl = strlen(dir);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
            size_t len = dl + strlen(name) + 2;
            char *p = bg_xmalloc(len);
            snprintf(p, len, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", name);
            struct stat st;
            if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) bg_inputs_add(s, p, what);
            free(p);
        }
        free(names[i]);
    }
    free(names);
}

const BgInputFile *bg_inputs_clobbered(const BgInputSet *s, const char *out) {
    struct stat so;
    if (!out || stat(out, &so) != 0) return NULL;
    for (int i = 0; i < s->n; i++) {
        struct stat si;
        if (stat(s->v[i].path, &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
            return &s->v[i];
    }
    return NULL;
}

void bg_inputs_free(BgInputSet *s) {
    for (int i = 0; i < s->n; i++) free(s->v[i].path);
    free(s->v);
    memset(s, 0, sizeof *s);
}
