/* fuzz_util.h - shared by the libFuzzer targets in tests/fuzz (see tests/fuzz/CMakeLists.txt
 * and docs/reliability.md).  The file loaders take a path, so each input is written to one
 * temp file per process (the pid in the name keeps concurrent fuzzers / -fork workers apart). */
#ifndef BG_FUZZ_UTIL_H
#define BG_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char bg_fuzz_path_buf[512];
static void bg_fuzz_cleanup(void) { unlink(bg_fuzz_path_buf); }

/* $TMPDIR/bgnn-fuzz-<tag>-<pid><suffix>; built once per process, removed at a normal exit. */
static inline const char *bg_fuzz_path(const char *tag, const char *suffix) {
    if (!bg_fuzz_path_buf[0]) {
        const char *dir = getenv("TMPDIR");
        if (!dir || !*dir) dir = "/tmp";
        snprintf(bg_fuzz_path_buf, sizeof bg_fuzz_path_buf, "%s/bgnn-fuzz-%s-%ld%s", dir, tag,
                 (long)getpid(), suffix);
        atexit(bg_fuzz_cleanup);
    }
    return bg_fuzz_path_buf;
}

/* Writes the input to the per-process temp file; aborts if that fails (not a finding). */
static inline const char *bg_fuzz_write(const char *tag, const char *suffix, const uint8_t *data, size_t size) {
    const char *path = bg_fuzz_path(tag, suffix);
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(path);
        abort();
    }
    return path;
}

#endif
