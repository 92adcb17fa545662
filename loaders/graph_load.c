/* graph_load.c - a graph from any supported file, and which file a data directory holds.
 *
 * The format is recognised by the file's first bytes: "%%MatrixMarket" (io_mtx.c), a zip
 * archive (an .npz of scipy.sparse.save_npz, io_npz.c), a .npy (edge_index [2, E], or
 * src.npy / dst.npy beside each other, io_edgelist.c), anything else an edge-list text
 * (io_edgelist.c).  Matrix Market and .npz state the node count; for the others it is the
 * largest node id + 1 unless the caller knows more (min_nodes; a data directory widens the
 * graph to its features' and labels' rows with bg_graph_add_nodes). */
#include "loaders.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* path with its base name replaced by name (malloc'd). */
static char *sibling(const char *path, const char *name) {
    size_t dl = (size_t)(base_name(path) - path), nl = strlen(name);
    char *r = bg_xmalloc(dl + nl + 1);
    memcpy(r, path, dl);
    memcpy(r + dl, name, nl + 1);
    return r;
}

bool bg_graph_load_file(const char *path, int64_t min_nodes, BgGraph *out, bool *n_stated, BgDiagSink *d) {
    memset(out, 0, sizeof *out);
    unsigned char head[16] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        bg_diag_error(d, BG_E_IO, "%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    size_t nh = fread(head, 1, sizeof head, f);
    fclose(f);
    BgCoo coo;
    memset(&coo, 0, sizeof coo);
    bool stated = true, ok;
    if (nh >= 14 && memcmp(head, "%%MatrixMarket", 14) == 0) {
        ok = bg_mtx_load(path, &coo, d);
    } else if (nh >= 4 && head[0] == 'P' && head[1] == 'K' &&
               ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6))) {
        ok = bg_npz_load(path, &coo, d);
    } else if (nh >= 6 && memcmp(head, "\x93NUMPY", 6) == 0) {
        stated = false;
        const char *b = base_name(path);
        if (strcmp(b, "src.npy") == 0 || strcmp(b, "dst.npy") == 0) {
            char *src = sibling(path, "src.npy"), *dst = sibling(path, "dst.npy");
            ok = bg_edge_npy_load(src, dst, &coo, d);
            free(src);
            free(dst);
        } else {
            ok = bg_edge_npy_load(path, NULL, &coo, d);
        }
    } else {
        ok = bg_edgelist_load(path, &coo, &stated, d);
    }
    if (!ok) return false;
    if (!stated && coo.nrows < min_nodes) coo.nrows = coo.ncols = min_nodes;
    ok = bg_graph_from_coo(&coo, path, out, d);
    bg_coo_free(&coo);
    if (ok && n_stated) *n_stated = stated;
    return ok;
}

bool bg_graph_add_nodes(BgGraph *g, int64_t n) {
    if (n <= g->n) return true;
    int64_t *rp = realloc(g->rowptr, sizeof(int64_t) * (size_t)(n + 1));
    if (!rp) return false;
    for (int64_t i = g->n + 1; i <= n; i++) rp[i] = rp[g->n];
    g->rowptr = rp;
    g->n = n;
    return true;
}

char *bg_dataset_graph_path(const char *dir) {
    static const char *const names[] = {"graph.mtx", "graph.npz", "edges.txt", "edge_index.npy", "src.npy"};
    size_t dl = strlen(dir);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t nl = strlen(names[i]);
        char *p = bg_xmalloc(dl + nl + 2);
        memcpy(p, dir, dl);
        size_t k = dl;
        if (dl && dir[dl - 1] != '/') p[k++] = '/';
        memcpy(p + k, names[i], nl + 1);
        if (is_file(p)) return p;
        free(p);
    }
    return NULL;
}
