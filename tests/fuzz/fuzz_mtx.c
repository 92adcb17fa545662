/* fuzz_mtx.c - the Matrix Market loader (loaders/io_mtx.c) on hostile files, then the CSR
 * graph builder and every adjacency variant (loaders/graph.c) on what it accepts. */
#include "loaders.h"
#include "fuzz_util.h"

/* Graphs with more nodes than this are not built (the builder allocates O(n) for a header
 * that names n nodes; that is by design, not a finding). */
#define FUZZ_MAX_NODES ((int64_t)1 << 22)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = bg_fuzz_write("mtx", ".mtx", data, size);
    BgDiagSink d;
    bg_diag_init(&d);
    BgCoo c;
    memset(&c, 0, sizeof c);
    if (bg_mtx_load(path, &c, &d)) {
        if (c.nrows <= FUZZ_MAX_NODES && c.ncols <= FUZZ_MAX_NODES) {
            BgGraph g;
            memset(&g, 0, sizeof g);
            if (bg_graph_from_coo(&c, path, &g, &d)) {
                for (int sl = 0; sl < 2; sl++)
                    for (int norm = BG_NORM_NONE; norm <= BG_NORM_MEAN; norm++) {
                        BgAdj adj;
                        memset(&adj, 0, sizeof adj);
                        if (bg_adj_build(&g, sl, (BgNorm)norm, &adj)) bg_adj_free(&adj);
                    }
                bg_graph_free(&g);
            }
        }
        bg_coo_free(&c);
    }
    free(bg_diag_render(&d));
    bg_diag_free(&d);
    return 0;
}
