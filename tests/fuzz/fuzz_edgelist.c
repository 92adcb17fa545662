/* fuzz_edgelist.c - the edge-list text loader and the .npy edge-array loader
 * (loaders/io_edgelist.c; an input starting with the .npy magic goes to the latter, as
 * graph_load.c routes it) on hostile files, then the CSR graph builder and every adjacency
 * variant (loaders/graph.c) on what they accept. */
#include "loaders.h"
#include "fuzz_util.h"

/* Graphs with more nodes than this are not built: a "# nodes: N" comment or one large id
 * asks for O(N) memory and time (by design, not a finding), and unlike a Matrix Market
 * header an id is one mutation away, so the limit is lower than fuzz_mtx's (a 3M-node
 * graph's six adjacencies took 14 s under ASan: a libFuzzer timeout). */
#define FUZZ_MAX_NODES ((int64_t)1 << 16)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    bool npy = size >= 6 && memcmp(data, "\x93NUMPY", 6) == 0;
    const char *path = bg_fuzz_write("edgelist", npy ? ".npy" : ".txt", data, size);
    BgDiagSink d;
    bg_diag_init(&d);
    BgCoo c;
    memset(&c, 0, sizeof c);
    bool stated = false;
    bool ok = npy ? bg_edge_npy_load(path, NULL, &c, &d) : bg_edgelist_load(path, &c, &stated, &d);
    if (ok) {
        if (c.nrows <= FUZZ_MAX_NODES) {
            BgGraph g;
            memset(&g, 0, sizeof g);
            if (bg_graph_from_coo(&c, path, &g, &d)) {
                for (int sl = 0; sl < 2; sl++)
                    for (int norm = BG_NORM_NONE; norm <= BG_NORM_MEAN; norm++) {
                        BgAdj adj;
                        memset(&adj, 0, sizeof adj);
                        if (bg_adj_build(&g, sl, (BgNorm)norm, &adj)) bg_adj_free(&adj);
                    }
                (void)bg_graph_add_nodes(&g, g.n + 3);
                bg_graph_free(&g);
            }
        }
        bg_coo_free(&c);
    }
    free(bg_diag_render(&d));
    bg_diag_free(&d);
    return 0;
}
