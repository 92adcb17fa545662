/* fuzz_safetensors.c - the safetensors loader (loaders/io_safetensors.c): the JSON header,
 * offsets, dtypes and conversions, on hostile files. */
#include "loaders.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = bg_fuzz_write("st", ".safetensors", data, size);
    BgDiagSink d;
    bg_diag_init(&d);
    BgSafetensors s;
    memset(&s, 0, sizeof s);
    if (bg_safetensors_load(path, &s, &d)) {
        volatile unsigned char acc = 0;
        for (int i = 0; i < s.n; i++) {
            const BgStTensor *t = &s.t[i];
            if (bg_safetensors_find(&s, t->name) == NULL) abort(); /* every name is found */
            size_t esz = t->dtype == BG_DT_I64 ? 8 : 4;
            const unsigned char *p = t->data;
            for (int64_t k = 0; k < t->numel; k++) acc ^= p[k * (int64_t)esz + (int64_t)esz - 1];
        }
        (void)acc;
        (void)bg_safetensors_find(&s, "no such tensor");
        bg_safetensors_free(&s);
    }
    free(bg_diag_render(&d));
    bg_diag_free(&d);
    return 0;
}
