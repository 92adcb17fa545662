/* fuzz_manifest.c - the manifest reader (plan/manifest.c, bg_manifest_read) on
 * hostile text, with the round trip it promises (write(read(text)) == text for every text it
 * accepts); and the cubin path (runtime: bg_elf_find_manifest, bg_cubin_plan) on the same
 * bytes as an ELF image. */
#include "rt.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgPlan *p = bg_manifest_read((const char *)data, size, "fuzz.manifest", a, &d);
    if (p) {
        char *back = bg_manifest_write(p);
        if (!back || strlen(back) != size || memcmp(back, data, size) != 0) {
            fprintf(stderr, "fuzz_manifest: accepted text does not round-trip\n");
            abort();
        }
        free(back);
    }
    free(bg_diag_render(&d));
    bg_diag_free(&d);
    bg_arena_free(a);

    /* The same bytes as a cubin. */
    a = bg_arena_new();
    bg_diag_init(&d);
    const unsigned char *mb;
    size_t mn;
    if (bg_elf_find_manifest(data, size, "fuzz.cubin", &mb, &mn, &d)) {
        if (mb < data || mn > size || (size_t)(mb - data) > size - mn) abort();
        (void)bg_cubin_plan(data, size, "fuzz.cubin", a, &d);
    }
    free(bg_diag_render(&d));
    bg_diag_free(&d);
    bg_arena_free(a);
    return 0;
}
