/* fuzz_npz.c - the .npz loader (loaders/io_npz.c) with its zip reader (io_zip.c: the
 * end-of-central-directory and zip64 records, the central directory, stored and deflated
 * members, CRC-32) and the .npy reader from memory, on hostile archives; then the CSR graph
 * builder on what it accepts. */
#include "loaders.h"
#include "fuzz_util.h"

#define FUZZ_MAX_NODES ((int64_t)1 << 22) /* as fuzz_mtx.c: shape.npy may ask for O(N) memory */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = bg_fuzz_write("npz", ".npz", data, size);
    BgDiagSink d;
    bg_diag_init(&d);
    BgCoo c;
    memset(&c, 0, sizeof c);
    if (bg_npz_load(path, &c, &d)) {
        if (c.nrows <= FUZZ_MAX_NODES && c.ncols <= FUZZ_MAX_NODES) {
            BgGraph g;
            memset(&g, 0, sizeof g);
            if (bg_graph_from_coo(&c, path, &g, &d)) bg_graph_free(&g);
        }
        bg_coo_free(&c);
    }
    free(bg_diag_render(&d));
    bg_diag_free(&d);
    return 0;
}
