/* test_graph_formats.c - the graph formats besides Matrix Market (loaders/io_edgelist.c,
 * io_zip.c, io_npz.c, graph_load.c; docs/formats.md).
 *
 * Cora's graph.mtx is converted here, on the fly, into every other format (edge lists with
 * and without a node-count comment, edge_index.npy, src.npy + dst.npy, .npz as csr / csc /
 * coo, stored and deflated), each is loaded back, and gcn_bin with the trained weights must
 * give bit-identical logits to the Matrix Market graph.  Then the edge direction on a
 * directed graph, the scipy-written fixtures of tests/diag/data, the node count widened by a
 * data directory's labels, and malformed files: each message names the file and the line,
 * member or entry. */
#include "reference.h"
#include "bgtest.h"

#include <sys/stat.h>
#ifdef BG_HAVE_ZLIB
#include <zlib.h>
#endif

static char tmp[512];

static const char *tpath(const char *name) {
    static char p[4][800];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", tmp, name);
    return p[k];
}

static void write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}

/* ---- generators ------------------------------------------------------------------------- */
typedef struct {
    unsigned char *p;
    size_t n, cap;
} Buf;

static void put(Buf *b, const void *s, size_t k) {
    if (b->n + k > b->cap) {
        b->cap = (b->n + k) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) exit(2);
    }
    memcpy(b->p + b->n, s, k);
    b->n += k;
}
static void put16(Buf *b, unsigned v) {
    unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    put(b, x, 2);
}
static void put32(Buf *b, uint32_t v) {
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    put(b, x, 4);
}

/* An integer .npy (<i8 or <i4) of rank 1 (d1 < 0) or 2, in memory. */
static Buf npy_ints(const int64_t *v, int64_t d0, int64_t d1, bool i32) {
    char dict[160];
    if (d1 < 0)
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld,), }", i32 ? "<i4" : "<i8",
                 (long long)d0);
    else
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %lld), }",
                 i32 ? "<i4" : "<i8", (long long)d0, (long long)d1);
    size_t dl = strlen(dict), total = (10 + dl + 1 + 63) / 64 * 64, hlen = total - 10;
    Buf b = {0};
    put(&b, "\x93NUMPY\x01\x00", 8);
    put16(&b, (unsigned)hlen);
    put(&b, dict, dl);
    for (size_t i = dl; i < hlen - 1; i++) put(&b, " ", 1);
    put(&b, "\n", 1);
    int64_t n = d0 * (d1 < 0 ? 1 : d1);
    for (int64_t i = 0; i < n; i++) {
        if (i32) put32(&b, (uint32_t)(int32_t)v[i]);
        else {
            put32(&b, (uint32_t)(uint64_t)v[i]);
            put32(&b, (uint32_t)((uint64_t)v[i] >> 32));
        }
    }
    return b;
}

/* format.npy as scipy writes it: a 0-d '|S3' array. */
static Buf npy_format(const char *fmt) {
    const char *dict = "{'descr': '|S3', 'fortran_order': False, 'shape': (), }";
    size_t dl = strlen(dict), total = (10 + dl + 1 + 63) / 64 * 64, hlen = total - 10;
    Buf b = {0};
    put(&b, "\x93NUMPY\x01\x00", 8);
    put16(&b, (unsigned)hlen);
    put(&b, dict, dl);
    for (size_t i = dl; i < hlen - 1; i++) put(&b, " ", 1);
    put(&b, "\n", 1);
    put(&b, fmt, 3);
    return b;
}

static uint32_t crc32_of(const unsigned char *p, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
    }
    return ~c;
}

/* A zip of n members (stored, or raw deflate when deflate and zlib are available). */
static void write_zip(const char *path, int n, const char *const *names, Buf *data, bool compress) {
    Buf z = {0}, cd = {0};
    for (int i = 0; i < n; i++) {
        Buf comp = data[i];
        int method = 0;
#ifdef BG_HAVE_ZLIB
        if (compress) {
            z_stream s;
            memset(&s, 0, sizeof s);
            deflateInit2(&s, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
            uLong bound = deflateBound(&s, (uLong)data[i].n);
            comp.p = malloc(bound);
            s.next_in = data[i].p;
            s.avail_in = (uInt)data[i].n;
            s.next_out = comp.p;
            s.avail_out = (uInt)bound;
            deflate(&s, Z_FINISH);
            comp.n = s.total_out;
            deflateEnd(&s);
            method = 8;
        }
#else
        (void)compress;
#endif
        uint32_t crc = crc32_of(data[i].p, data[i].n), off = (uint32_t)z.n;
        size_t nl = strlen(names[i]);
        put32(&z, 0x04034b50u); put16(&z, 20); put16(&z, 0); put16(&z, (unsigned)method); put16(&z, 0); put16(&z, 0);
        put32(&z, crc); put32(&z, (uint32_t)comp.n); put32(&z, (uint32_t)data[i].n);
        put16(&z, (unsigned)nl); put16(&z, 0); put(&z, names[i], nl); put(&z, comp.p, comp.n);
        put32(&cd, 0x02014b50u); put16(&cd, 20); put16(&cd, 20); put16(&cd, 0); put16(&cd, (unsigned)method);
        put16(&cd, 0); put16(&cd, 0); put32(&cd, crc); put32(&cd, (uint32_t)comp.n); put32(&cd, (uint32_t)data[i].n);
        put16(&cd, (unsigned)nl); put16(&cd, 0); put16(&cd, 0); put16(&cd, 0); put16(&cd, 0); put32(&cd, 0);
        put32(&cd, off); put(&cd, names[i], nl);
        if (comp.p != data[i].p) free(comp.p);
    }
    uint32_t cdoff = (uint32_t)z.n;
    put(&z, cd.p, cd.n);
    put32(&z, 0x06054b50u); put16(&z, 0); put16(&z, 0); put16(&z, (unsigned)n); put16(&z, (unsigned)n);
    put32(&z, (uint32_t)cd.n); put32(&z, cdoff); put16(&z, 0);
    write_bytes(path, z.p, z.n);
    free(z.p);
    free(cd.p);
}

/* Matrix entries (row i aggregates column j) of g. */
static void entries(const BgGraph *g, int64_t **ri, int64_t **cj) {
    *ri = bg_xmalloc(sizeof(int64_t) * (size_t)(g->nnz + 1));
    *cj = bg_xmalloc(sizeof(int64_t) * (size_t)(g->nnz + 1));
    for (int64_t i = 0; i < g->n; i++)
        for (int64_t k = g->rowptr[i]; k < g->rowptr[i + 1]; k++) {
            (*ri)[k] = i;
            (*cj)[k] = g->col[k];
        }
}

/* .npz of g as scipy's csr, csc or coo. */
static void write_npz(const char *path, const BgGraph *g, const char *fmt, bool deflate) {
    int64_t *ri, *cj;
    entries(g, &ri, &cj);
    int64_t shape[2] = {g->n, g->n};
    Buf m[4];
    const char *names[4] = {"format.npy", "shape.npy", NULL, NULL};
    m[0] = npy_format(fmt);
    m[1] = npy_ints(shape, 2, -1, false);
    if (fmt[2] == 'o') { /* coo */
        names[2] = "row.npy";
        names[3] = "col.npy";
        m[2] = npy_ints(ri, g->nnz, -1, true);
        m[3] = npy_ints(cj, g->nnz, -1, true);
    } else {
        bool csr = fmt[2] == 'r';
        int64_t *ptr = bg_xcalloc((size_t)g->n + 1, sizeof(int64_t)), *idx = bg_xmalloc(sizeof(int64_t) * (size_t)(g->nnz + 1));
        if (csr) {
            memcpy(ptr, g->rowptr, sizeof(int64_t) * (size_t)(g->n + 1));
            memcpy(idx, cj, sizeof(int64_t) * (size_t)g->nnz);
        } else { /* by column: the transpose's CSR */
            for (int64_t k = 0; k < g->nnz; k++) ptr[cj[k] + 1]++;
            for (int64_t j = 0; j < g->n; j++) ptr[j + 1] += ptr[j];
            int64_t *fill = bg_xmalloc(sizeof(int64_t) * (size_t)(g->n + 1));
            memcpy(fill, ptr, sizeof(int64_t) * (size_t)(g->n + 1));
            for (int64_t k = 0; k < g->nnz; k++) idx[fill[cj[k]]++] = ri[k];
            free(fill);
        }
        names[2] = "indices.npy";
        names[3] = "indptr.npy";
        m[2] = npy_ints(idx, g->nnz, -1, true);
        m[3] = npy_ints(ptr, g->n + 1, -1, true);
        free(ptr);
        free(idx);
    }
    write_zip(path, 4, names, m, deflate);
    for (int i = 0; i < 4; i++) free(m[i].p);
    free(ri);
    free(cj);
}

/* Edge list text: "src dst" = entry A[dst][src]. */
static void write_edges(const char *path, const BgGraph *g, bool header) {
    FILE *f = fopen(path, "w");
    if (!f) exit(2);
    fprintf(f, "# generated by test_graph_formats\n");
    if (header) fprintf(f, "# Nodes: %lld Edges: %lld\n", (long long)g->n, (long long)g->nnz);
    for (int64_t i = 0; i < g->n; i++)
        for (int64_t k = g->rowptr[i]; k < g->rowptr[i + 1]; k++) fprintf(f, "%d\t%lld\n", g->col[k], (long long)i);
    fclose(f);
}

static void write_edge_npy(const BgGraph *g, const char *ei_path, const char *src_path, const char *dst_path) {
    int64_t *ri, *cj;
    entries(g, &ri, &cj);
    int64_t *ei = bg_xmalloc(sizeof(int64_t) * (size_t)(2 * g->nnz + 1));
    memcpy(ei, cj, sizeof(int64_t) * (size_t)g->nnz);          /* row 0: sources */
    memcpy(ei + g->nnz, ri, sizeof(int64_t) * (size_t)g->nnz); /* row 1: targets */
    Buf b = npy_ints(ei, 2, g->nnz, false);
    write_bytes(ei_path, b.p, b.n);
    free(b.p);
    b = npy_ints(cj, g->nnz, -1, true); /* int32 sources, int64 targets */
    write_bytes(src_path, b.p, b.n);
    free(b.p);
    b = npy_ints(ri, g->nnz, -1, false);
    write_bytes(dst_path, b.p, b.n);
    free(b.p);
    free(ei);
    free(ri);
    free(cj);
}

static bool same_graph(const BgGraph *a, const BgGraph *b) {
    return a->n == b->n && a->nnz == b->nnz &&
           memcmp(a->rowptr, b->rowptr, sizeof(int64_t) * (size_t)(a->n + 1)) == 0 &&
           memcmp(a->col, b->col, sizeof(int32_t) * (size_t)(a->nnz ? a->nnz : 0)) == 0;
}

/* gcn_bin's logits on Cora with the graph from graph_path (NULL: graph.mtx); malloc'd. */
static float *cora_logits(const BgModule *m, const char *cora, const char *weights, const char *graph_path,
                          int64_t *count) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgDataset ds;
    BgBindings b;
    BgInterpResult r;
    memset(&r, 0, sizeof r);
    float *out = NULL;
    if (bg_dataset_load_graph(cora, graph_path, &ds, &d)) {
        if (bg_bind(m, &ds.graph, &ds.features, weights, &b, &d)) {
            if (bg_interp_run(m, &b, &r, NULL, &d)) {
                *count = r.outputs[0].dim[0] * r.outputs[0].dim[1];
                out = bg_xmalloc(sizeof(float) * (size_t)*count);
                memcpy(out, r.outputs[0].data, sizeof(float) * (size_t)*count);
                bg_interp_result_free(&r);
            }
            bg_bindings_free(&b);
        }
        bg_dataset_free(&ds);
    }
    if (d.nerrors) {
        char *t = bg_diag_render(&d);
        fprintf(stderr, "%s", t);
        free(t);
    }
    bg_diag_free(&d);
    return out;
}

static void cora_formats(void) {
    char cora[600];
    snprintf(cora, sizeof cora, "%s/cora", bg_default_data_root());
    struct stat st;
    if (stat(cora, &st) != 0) {
        printf("note: %s absent; the Cora conversions are skipped\n", cora);
        return;
    }
    const char *src_dir = getenv("BGNN_SOURCE_DIR");
    char model[700], weights[700];
    snprintf(model, sizeof model, "%s/examples/gcn_bin.bgnn", src_dir ? src_dir : ".");
    snprintf(weights, sizeof weights, "%s/examples/weights/gcn_bin_cora.safetensors", src_dir ? src_dir : ".");
    BgDiagSink d;
    bg_diag_init(&d);
    BgArena *a = bg_arena_new();
    BgModule *m = bg_compile_file(a, model, NULL, &d);
    BgDataset ref;
    CHECK(m && bg_dataset_load(cora, &ref, &d));
    if (!m || d.nerrors) {
        bg_arena_free(a);
        bg_diag_free(&d);
        return;
    }
    int64_t nref = 0;
    float *want = cora_logits(m, cora, weights, NULL, &nref);
    CHECK(want && nref == 2708 * 7);

    mkdir(tpath("cora_pair"), 0755);
    write_edges(tpath("cora_edges.txt"), &ref.graph, true);
    write_edges(tpath("cora_edges_nohdr.txt"), &ref.graph, false);
    write_edge_npy(&ref.graph, tpath("cora_edge_index.npy"), tpath("cora_pair/src.npy"), tpath("cora_pair/dst.npy"));
    write_npz(tpath("cora_csr.npz"), &ref.graph, "csr", false);
    write_npz(tpath("cora_csc.npz"), &ref.graph, "csc", false);
    write_npz(tpath("cora_coo.npz"), &ref.graph, "coo", false);
    write_npz(tpath("cora_csr_deflate.npz"), &ref.graph, "csr", true);
    static const char *const files[] = {"cora_edges.txt", "cora_edges_nohdr.txt", "cora_edge_index.npy",
                                        "cora_pair/src.npy", "cora_pair/dst.npy", "cora_csr.npz", "cora_csc.npz",
                                        "cora_coo.npz", "cora_csr_deflate.npz"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        const char *p = tpath(files[i]);
        BgGraph g;
        bool stated = false;
        bool ok = bg_graph_load_file(p, 0, &g, &stated, &d);
        CHECK(ok);
        if (!ok) {
            fprintf(stderr, "  format %s failed to load\n", files[i]);
            continue;
        }
        bool same = same_graph(&g, &ref.graph);
        CHECK(same);
        CHECK_EQ_INT(stated, strstr(files[i], ".npz") || strcmp(files[i], "cora_edges.txt") == 0);
        bg_graph_free(&g);
        int64_t n = 0;
        float *got = cora_logits(m, cora, weights, p, &n);
        bool equal = got && n == nref && memcmp(got, want, sizeof(float) * (size_t)n) == 0;
        CHECK(equal);
        if (!same || !equal) fprintf(stderr, "  format %s differs from graph.mtx\n", files[i]);
        free(got);
    }
    free(want);
    bg_dataset_free(&ref);
    bg_arena_free(a);
    char *t = bg_diag_render(&d);
    if (t && *t) fprintf(stderr, "%s", t);
    free(t);
    bg_diag_free(&d);
}

/* ---- small graphs ------------------------------------------------------------------------- */
static void write_text(const char *path, const char *text) { write_bytes(path, text, strlen(text)); }

static bool load(const char *path, BgGraph *g) {
    BgDiagSink d;
    bg_diag_init(&d);
    bool ok = bg_graph_load_file(path, 0, g, NULL, &d);
    bg_diag_free(&d);
    return ok;
}

/* Loading path fails with a message containing needle. */
static void expect_error(const char *path, const char *needle) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgGraph g;
    bool ok = bg_graph_load_file(path, 0, &g, NULL, &d);
    CHECK(!ok);
    if (ok) bg_graph_free(&g);
    char *t = bg_diag_render(&d);
    CHECK_STR_CONTAINS(t, needle);
    CHECK_STR_CONTAINS(t, path);
    free(t);
    bg_diag_free(&d);
}

static void direction_and_fixtures(void) {
    /* 0 -> 1 and 2 -> 1: node 1 aggregates from 0 and 2, i.e. mtx entries (2,1) and (2,3) */
    write_text(tpath("dir.txt"), "0 1\n2,1\n");
    write_text(tpath("dir.mtx"), "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n2 1\n2 3\n");
    BgGraph a, b;
    CHECK(load(tpath("dir.txt"), &a) && load(tpath("dir.mtx"), &b));
    CHECK(same_graph(&a, &b));
    bg_graph_free(&a);
    bg_graph_free(&b);

    /* the scipy-written archives (zip64 extras; deflate) and the edge list of tests/diag/data */
    const char *src = getenv("BGNN_SOURCE_DIR");
    char p[4][800];
    snprintf(p[0], sizeof p[0], "%s/tests/diag/data/tiny/graph.mtx", src ? src : ".");
    snprintf(p[1], sizeof p[1], "%s/tests/diag/data/npz_tiny/graph.npz", src ? src : ".");
    snprintf(p[2], sizeof p[2], "%s/tests/diag/data/edges_tiny/edges.txt", src ? src : ".");
    snprintf(p[3], sizeof p[3], "%s/tests/diag/data/npz_tiny_deflate/graph.npz", src ? src : ".");
    CHECK(load(p[0], &a));
    for (int i = 1; i < 4; i++) {
#ifndef BG_HAVE_ZLIB
        if (i == 3) {
            expect_error(p[3], "built without zlib");
            continue;
        }
#endif
        CHECK(load(p[i], &b));
        CHECK(same_graph(&a, &b));
        bg_graph_free(&b);
    }
    bg_graph_free(&a);

    /* min_nodes widens an edge list without a node count; a stated count is kept */
    BgDiagSink d;
    bg_diag_init(&d);
    bool stated = true;
    CHECK(bg_graph_load_file(tpath("dir.txt"), 10, &a, &stated, &d) && !stated && a.n == 10 && a.nnz == 2);
    bg_graph_free(&a);
    write_text(tpath("stated.txt"), "% nodes = 7\n0 1\n");
    CHECK(bg_graph_load_file(tpath("stated.txt"), 10, &a, &stated, &d) && stated && a.n == 7);
    bg_graph_free(&a);
    CHECK(bg_graph_add_nodes(&a, 0)); /* a freed graph: nothing to do */
    CHECK_EQ_INT(d.nerrors, 0);
    bg_diag_free(&d);
}

/* A data directory with an edge list: labels.npy has more rows than the largest id + 1. */
static void dataset_widens(void) {
    const char *dir = tpath("ds_edges");
    mkdir(dir, 0755);
    char p[900];
    snprintf(p, sizeof p, "%s/edges.txt", dir);
    write_text(p, "0 1\n1 0\n");
    int64_t labels[4] = {0, 1, 0, 1};
    Buf b = npy_ints(labels, 4, -1, true);
    snprintf(p, sizeof p, "%s/labels.npy", dir);
    write_bytes(p, b.p, b.n);
    free(b.p);
    BgDiagSink d;
    bg_diag_init(&d);
    BgDataset ds;
    CHECK(bg_dataset_load(dir, &ds, &d));
    if (!d.nerrors) {
        CHECK_EQ_INT(ds.graph.n, 4);
        CHECK_EQ_INT(ds.graph.nnz, 2);
        bg_dataset_free(&ds);
    }
    bg_diag_free(&d);
    /* no graph file at all */
    const char *empty = tpath("ds_empty");
    mkdir(empty, 0755);
    bg_diag_init(&d);
    CHECK(!bg_dataset_load(empty, &ds, &d));
    char *t = bg_diag_render(&d);
    CHECK_STR_CONTAINS(t, "graph.mtx, graph.npz, edges.txt, edge_index.npy or src.npy + dst.npy");
    free(t);
    bg_diag_free(&d);
}

static void malformed(void) {
    write_text(tpath("bad1.txt"), "# nodes: 3\n0 1\n\n1 x\n");
    expect_error(tpath("bad1.txt"), "bad1.txt:4: expected two node ids 'src dst', got '1 x'");
    write_text(tpath("bad2.txt"), "0 1\n1 -2\n");
    expect_error(tpath("bad2.txt"), "bad2.txt:2: node id '-2' is negative");
    write_text(tpath("bad3.txt"), "# Nodes: 3 Edges: 2\n0 1\n1 3\n");
    expect_error(tpath("bad3.txt"), "bad3.txt:3: node id 3 out of range for 3 nodes (stated on line 1)");
    write_text(tpath("bad4.txt"), "0 1 2 3\n");
    expect_error(tpath("bad4.txt"), "bad4.txt:1: expected 'src dst' or 'src dst weight'");
    write_text(tpath("bad5.txt"), "5\n");
    expect_error(tpath("bad5.txt"), "bad5.txt:1: expected two node ids");
    write_text(tpath("bad6.txt"), "0 99999999999\n");
    expect_error(tpath("bad6.txt"), "bad6.txt:1: node id 99999999999 over the limit");
    write_text(tpath("bad7.txt"), "0 5\n# nodes: 3\n");
    expect_error(tpath("bad7.txt"), "bad7.txt:2: states 3 nodes, but an earlier line uses node id 5");

    /* .npy edge arrays */
    int64_t v[6] = {0, 1, 1, 0, 2, 1};
    Buf b = npy_ints(v, 3, 2, false); /* (E, 2): transposed */
    write_bytes(tpath("t_edge_index.npy"), b.p, b.n);
    free(b.p);
    expect_error(tpath("t_edge_index.npy"), "edge_index must have shape (2, E), got (3, 2) (transpose it");
    int64_t neg[4] = {0, 1, 1, -4};
    b = npy_ints(neg, 2, 2, false);
    write_bytes(tpath("n_edge_index.npy"), b.p, b.n);
    free(b.p);
    expect_error(tpath("n_edge_index.npy"), "entry (1, 1): node id -4 is negative");
    mkdir(tpath("pair"), 0755);
    b = npy_ints(v, 3, -1, false);
    write_bytes(tpath("pair/src.npy"), b.p, b.n);
    free(b.p);
    b = npy_ints(v, 2, -1, false);
    write_bytes(tpath("pair/dst.npy"), b.p, b.n);
    free(b.p);
    expect_error(tpath("pair/src.npy"), "dst.npy: 2 entries, but");

    /* .npz */
    BgGraph g = {3, 2, (int64_t[]){0, 1, 2, 2}, (int32_t[]){1, 0}, 1, NULL};
    write_npz(tpath("ok.npz"), &g, "csr", false);
    FILE *f = fopen(tpath("ok.npz"), "rb");
    unsigned char zb[4096];
    size_t zn = f ? fread(zb, 1, sizeof zb, f) : 0;
    if (f) fclose(f);
    CHECK(zn > 200);
    write_bytes(tpath("trunc.npz"), zb, zn - 30);
    expect_error(tpath("trunc.npz"), "not a zip archive (no end-of-central-directory record)");
    unsigned char cb[4096];
    memcpy(cb, zb, zn);
    cb[140] ^= 0x55; /* inside the second member's data (shape.npy) */
    write_bytes(tpath("crc.npz"), cb, zn);
    expect_error(tpath("crc.npz"), "CRC-32 mismatch");
    write_text(tpath("short.npz"), "PK\x03\x04 too short");
    expect_error(tpath("short.npz"), "short.npz");
    Buf m[2] = {npy_format("bsr"), npy_ints((int64_t[]){3, 3}, 2, -1, false)};
    const char *names[2] = {"format.npy", "shape.npy"};
    write_zip(tpath("bsr.npz"), 2, names, m, false);
    expect_error(tpath("bsr.npz"), "sparse format 'bsr' not supported");
    names[0] = "other.npy";
    write_zip(tpath("noindptr.npz"), 2, names, m, false);
    expect_error(tpath("noindptr.npz"), "no member 'row.npy'");
    free(m[0].p);
    free(m[1].p);
    /* indptr that decreases */
    Buf m2[4] = {npy_format("csr"), npy_ints((int64_t[]){3, 3}, 2, -1, false),
                 npy_ints((int64_t[]){0, 2, 1, 2}, 4, -1, false), npy_ints((int64_t[]){1, 0}, 2, -1, false)};
    const char *n2[4] = {"format.npy", "shape.npy", "indptr.npy", "indices.npy"};
    write_zip(tpath("dec.npz"), 4, n2, m2, false);
    expect_error(tpath("dec.npz"), "member 'indptr.npy': entry 2 (1) is less than entry 1 (2)");
    for (int i = 0; i < 4; i++) free(m2[i].p);
}

int main(void) {
    snprintf(tmp, sizeof tmp, "%s/graph_formats", bg_test_tmpdir());
    mkdir(tmp, 0755);
    direction_and_fixtures();
    dataset_widens();
    malformed();
    cora_formats();
    return bg_test_finish();
}
