/* fuzz_npy.c - the .npy loader (loaders/io_npy.c) on hostile files, both conversions. */
#include "loaders.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = bg_fuzz_write("npy", ".npy", data, size);
    for (int want = 0; want < 2; want++) {
        BgDiagSink d;
        bg_diag_init(&d);
        BgNpy n;
        memset(&n, 0, sizeof n);
        if (bg_npy_load(path, want ? BG_NPY_AS_I64 : BG_NPY_AS_F32, &n, &d)) {
            /* Touch every element (ASan checks the buffer matches the shape). */
            int64_t numel = n.dim[0] * (n.rank == 2 ? n.dim[1] : 1);
            size_t esz = n.dtype == BG_DT_I32 ? 4 : n.dtype == BG_DT_I64 ? 8 : 4;
            volatile unsigned char acc = 0;
            const unsigned char *p = n.data;
            for (int64_t i = 0; i < numel; i++) acc ^= p[i * (int64_t)esz + (int64_t)esz - 1];
            (void)acc;
            bg_npy_free(&n);
        }
        free(bg_diag_render(&d));
        bg_diag_free(&d);
    }
    return 0;
}
