/* dataset.c - loads a data directory: a graph file (required: graph.mtx, or another format,
 * graph_load.c), features.npy, labels.npy, train/val/test_idx.npy, graph_ptr.npy and
 * graph_labels.npy (optional), checking every file against the graph's node count.
 * Layout: /work/shared/data/README.md; graph formats: docs/formats.md. */
#include "loaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *p = bg_xmalloc(a + b + 2);
    memcpy(p, dir, a);
    size_t k = a;
    if (a && dir[a - 1] != '/') p[k++] = '/';
    memcpy(p + k, name, b + 1);
    return p;
}

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* Loads an optional rank-1 integer file; *present = false when absent. */
static bool load_ints(const char *dir, const char *name, BgNpy *v, bool *present, BgDiagSink *d) {
    char *p = join(dir, name);
    *present = exists(p);
    bool ok = true;
    if (*present) {
        ok = bg_npy_load(p, BG_NPY_AS_I64, v, d);
        if (ok && v->rank != 1) {
            bg_diag_error(d, BG_E_DATA_SHAPE, "%s: expected a 1-D array, got shape (%lld, %lld)", p,
                          (long long)v->dim[0], (long long)v->dim[1]);
            bg_npy_free(v);
            ok = false;
        }
    }
    free(p);
    return ok;
}

/* int64 values -> int32 array; each value must be in [lo, hi]. */
static int32_t *to_i32(const BgNpy *v, int64_t lo, int64_t hi, const char *dir, const char *name,
                       const char *what, BgDiagSink *d) {
    const int64_t *x = v->data;
    for (int64_t i = 0; i < v->dim[0]; i++)
        if (x[i] < lo || x[i] > hi) {
            char *p = join(dir, name);
            bg_diag_error(d, BG_E_DATA_SHAPE, "%s: entry %lld: %s %lld out of range %lld..%lld", p, (long long)i,
                          what, (long long)x[i], (long long)lo, (long long)hi);
            free(p);
            return NULL;
        }
    int32_t *o = bg_xmalloc(sizeof(int32_t) * (size_t)(v->dim[0] ? v->dim[0] : 1));
    for (int64_t i = 0; i < v->dim[0]; i++) o[i] = (int32_t)x[i];
    return o;
}

static bool count_err(const char *dir, const char *name, int64_t got, const char *what, int64_t want,
                      BgDiagSink *d) {
    char *p = join(dir, name);
    bg_diag_error(d, BG_E_DATA_SHAPE, "%s: %lld entries but %s has %lld", p, (long long)got, what, (long long)want);
    free(p);
    return false;
}

bool bg_dataset_load(const char *dir, BgDataset *out, BgDiagSink *d) {
    return bg_dataset_load_graph(dir, NULL, out, d);
}

bool bg_dataset_load_graph(const char *dir, const char *graph_path, BgDataset *out, BgDiagSink *d) {
    struct stat st;
    if (stat(dir, &st) != 0) {
        bg_diag_error(d, BG_E_IO, "data directory '%s' not found (set --data or BGNN_DATA_DIR)", dir);
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        bg_diag_error(d, BG_E_IO, "data directory '%s' is not a directory (set --data or BGNN_DATA_DIR)", dir);
        return false;
    }
    BgDataset ds;
    memset(&ds, 0, sizeof ds);
    BgNpy v;
    memset(&v, 0, sizeof v);
    bool present;

    /* the graph: graph.mtx, or another format (graph_load.c) */
    char *p = graph_path ? join("", graph_path) : bg_dataset_graph_path(dir);
    if (!p) {
        p = join(dir, "graph.mtx");
        bg_diag_error(d, BG_E_IO, "%s: not found (every data directory needs graph.mtx, graph.npz, edges.txt, "
                      "edge_index.npy or src.npy + dst.npy)", p);
        free(p);
        return false;
    }
    bool stated = true;
    bool ok = bg_graph_load_file(p, 0, &ds.graph, &stated, d);
    const char *slash = strrchr(p, '/');
    char gname[256];
    snprintf(gname, sizeof gname, "%s", slash ? slash + 1 : p);
    free(p);
    if (!ok) return false;
    int64_t n = ds.graph.n;

    /* features.npy */
    p = join(dir, "features.npy");
    if (exists(p)) {
        if (!bg_npy_load(p, BG_NPY_AS_F32, &v, d)) goto fail_p;
        if (v.rank != 2) {
            bg_diag_error(d, BG_E_DATA_SHAPE, "%s: expected shape (N, F), got a 1-D array of %lld", p,
                          (long long)v.dim[0]);
            goto fail_p;
        }
        if (v.dim[0] > n && !stated && bg_graph_add_nodes(&ds.graph, v.dim[0])) n = v.dim[0];
        if (v.dim[0] != n) {
            bg_diag_error(d, BG_E_DATA_SHAPE, "%s: %lld rows but %s has %lld nodes", p, (long long)v.dim[0], gname,
                          (long long)n);
            goto fail_p;
        }
        ds.features.dtype = BG_DT_F32;
        ds.features.rank = 2;
        ds.features.dim[0] = v.dim[0];
        ds.features.dim[1] = v.dim[1];
        ds.features.data = v.data;
        memset(&v, 0, sizeof v);
    }
    free(p);
    p = NULL;

    /* labels.npy: -1 = no label */
    if (!load_ints(dir, "labels.npy", &v, &present, d)) goto fail;
    if (present) {
        if (v.dim[0] > n && !stated && bg_graph_add_nodes(&ds.graph, v.dim[0])) n = v.dim[0];
        if (v.dim[0] != n) {
            char what[300];
            snprintf(what, sizeof what, "%s (nodes)", gname);
            count_err(dir, "labels.npy", v.dim[0], what, n, d);
            goto fail;
        }
        ds.labels = to_i32(&v, -1, INT32_MAX, dir, "labels.npy", "label", d);
        if (!ds.labels) goto fail;
        bg_npy_free(&v);
    }

    static const char *const splits[3] = {"train_idx.npy", "val_idx.npy", "test_idx.npy"};
    for (int s = 0; s < 3; s++) {
        if (!load_ints(dir, splits[s], &v, &present, d)) goto fail;
        if (!present) continue;
        const int64_t *x = v.data;
        for (int64_t i = 0; i < v.dim[0]; i++)
            if (x[i] < 0 || x[i] >= n) {
                p = join(dir, splits[s]);
                bg_diag_error(d, BG_E_DATA_SHAPE, "%s: entry %lld: node id %lld out of range 0..%lld", p,
                              (long long)i, (long long)x[i], (long long)n - 1);
                goto fail_p;
            }
        ds.split[s] = v.data;
        ds.nsplit[s] = v.dim[0];
        memset(&v, 0, sizeof v);
    }

    /* graph_ptr.npy: G+1 offsets from 0 to N, non-decreasing */
    if (!load_ints(dir, "graph_ptr.npy", &v, &present, d)) goto fail;
    if (present) {
        const int64_t *x = v.data;
        p = join(dir, "graph_ptr.npy");
        if (v.dim[0] < 1) {
            bg_diag_error(d, BG_E_DATA_SHAPE, "%s: empty (expected G+1 offsets)", p);
            goto fail_p;
        }
        if (x[0] != 0) {
            bg_diag_error(d, BG_E_DATA_SHAPE, "%s: entry 0 is %lld, expected 0", p, (long long)x[0]);
            goto fail_p;
        }
        for (int64_t i = 1; i < v.dim[0]; i++)
            if (x[i] < x[i - 1]) {
                bg_diag_error(d, BG_E_DATA_SHAPE, "%s: entry %lld (%lld) is less than entry %lld (%lld)", p,
                              (long long)i, (long long)x[i], (long long)i - 1, (long long)x[i - 1]);
                goto fail_p;
            }
        if (x[v.dim[0] - 1] != n) {
            bg_diag_error(d, BG_E_DATA_SHAPE, "%s: last entry is %lld but %s has %lld nodes", p,
                          (long long)x[v.dim[0] - 1], gname, (long long)n);
            goto fail_p;
        }
        free(p);
        p = NULL;
        ds.graph.ngraphs = v.dim[0] - 1;
        ds.graph.graph_ptr = v.data;
        memset(&v, 0, sizeof v);
    }

    /* graph_labels.npy: one per graph */
    if (!load_ints(dir, "graph_labels.npy", &v, &present, d)) goto fail;
    if (present) {
        if (v.dim[0] != ds.graph.ngraphs) {
            count_err(dir, "graph_labels.npy", v.dim[0],
                      ds.graph.graph_ptr ? "graph_ptr.npy (graphs)" : "the dataset (one graph; no graph_ptr.npy)",
                      ds.graph.ngraphs, d);
            goto fail;
        }
        ds.graph_labels = to_i32(&v, -1, INT32_MAX, dir, "graph_labels.npy", "label", d);
        if (!ds.graph_labels) goto fail;
        bg_npy_free(&v);
    }

    ds.dir = bg_xmalloc(strlen(dir) + 1);
    strcpy(ds.dir, dir);
    *out = ds;
    return true;
fail_p:
    free(p);
fail:
    bg_npy_free(&v);
    bg_dataset_free(&ds);
    return false;
}

void bg_dataset_free(BgDataset *ds) {
    if (!ds) return;
    free(ds->dir);
    bg_graph_free(&ds->graph);
    bg_tensor_free(&ds->features);
    free(ds->labels);
    for (int i = 0; i < 3; i++) free(ds->split[i]);
    free(ds->graph_labels);
    memset(ds, 0, sizeof *ds);
}

const char *bg_default_data_root(void) {
    const char *e = getenv("BGNN_DATA_DIR");
    return e && *e ? e : "../shared/data";
}

const char *bg_dataset_file(int i) {
    static const char *const files[] = {"graph.mtx",     "graph.npz",    "edges.txt",     "edge_index.npy",
                                        "src.npy",       "dst.npy",      "features.npy",  "labels.npy",
                                        "train_idx.npy", "val_idx.npy",  "test_idx.npy",  "graph_ptr.npy",
                                        "graph_labels.npy"};
    return i >= 0 && i < (int)(sizeof files / sizeof files[0]) ? files[i] : NULL;
}
