/* test_dataset.c - data directories: a synthetic one written here (valid, then broken one
 * file at a time) and the real datasets under $BGNN_DATA_DIR (skipped with a note when
 * absent). */
#include "loaders.h"
#include "bgtest.h"

#include <sys/stat.h>
#include <unistd.h>

static char dir[512];

static char *in_dir(const char *name) {
    static char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void write_text(const char *name, const char *text) {
    FILE *f = fopen(in_dir(name), "wb");
    if (!f) { perror(name); exit(2); }
    fputs(text, f);
    fclose(f);
}

/* A 1-D integer .npy (descr '<i4' or '<i8'). */
static void write_ints(const char *name, const char *descr, const int64_t *v, int n) {
    char dict[128];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", descr, n);
    unsigned char pre[128];
    size_t dl = strlen(dict), total = (10 + dl + 1 + 63) / 64 * 64, hlen = total - 10;
    memcpy(pre, "\x93NUMPY\x01\x00", 8);
    pre[8] = (unsigned char)hlen;
    pre[9] = (unsigned char)(hlen >> 8);
    memcpy(pre + 10, dict, dl);
    memset(pre + 10 + dl, ' ', hlen - dl - 1);
    pre[total - 1] = '\n';
    FILE *f = fopen(in_dir(name), "wb");
    if (!f) { perror(name); exit(2); }
    fwrite(pre, 1, total, f);
    for (int i = 0; i < n; i++) {
        if (descr[2] == '4') {
            int32_t x = (int32_t)v[i];
            fwrite(&x, 4, 1, f);
        } else {
            fwrite(&v[i], 8, 1, f);
        }
    }
    fclose(f);
}

static void write_features(int rows, int cols) {
    float v[64];
    for (int i = 0; i < rows * cols && i < 64; i++) v[i] = (float)i * 0.5f;
    int64_t dim[2] = {rows, cols};
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(bg_npy_save_f32(in_dir("features.npy"), v, 2, dim, &d));
    bg_diag_free(&d);
}

static const char *GRAPH5 = "%%MatrixMarket matrix coordinate pattern general\n5 5 4\n1 2\n2 1\n4 5\n5 4\n";

static void make_valid(void) {
    write_text("graph.mtx", GRAPH5);
    write_features(5, 3);
    int64_t labels[5] = {0, 1, -1, 2, 1};
    write_ints("labels.npy", "<i4", labels, 5);
    int64_t tr[2] = {0, 1}, va[1] = {3}, te[2] = {2, 4};
    write_ints("train_idx.npy", "<i8", tr, 2);
    write_ints("val_idx.npy", "<i8", va, 1);
    write_ints("test_idx.npy", "<i8", te, 2);
    int64_t gp[3] = {0, 3, 5}, gl[2] = {1, 0};
    write_ints("graph_ptr.npy", "<i8", gp, 3);
    write_ints("graph_labels.npy", "<i4", gl, 2);
}

/* Loads dir expecting failure with code, message containing needle. */
static void expect_fail(int code, const char *needle) {
    BgDataset ds;
    memset(&ds, 0x5a, sizeof ds);
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(!bg_dataset_load(dir, &ds, &d));
    CHECK_EQ_INT(d.n, 1);
    if (d.n) {
        CHECK_EQ_INT(d.items[0].code, code);
        CHECK_STR_CONTAINS(d.items[0].msg, needle);
    }
    bg_diag_free(&d);
}

static void test_synthetic(void) {
    snprintf(dir, sizeof dir, "%s/bgnn_ds_%ld", bg_test_tmpdir(), (long)getpid());
    mkdir(dir, 0755);
    make_valid();
    BgDataset ds;
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(bg_dataset_load(dir, &ds, &d));
    CHECK_EQ_INT(d.n, 0);
    CHECK_EQ_INT(ds.graph.n, 5);
    CHECK_EQ_INT(ds.graph.nnz, 4);
    CHECK(ds.features.dtype == BG_DT_F32 && ds.features.rank == 2 && ds.features.dim[0] == 5 && ds.features.dim[1] == 3);
    if (ds.features.data) CHECK(((float *)ds.features.data)[4] == 2.0f);
    CHECK(ds.labels && ds.labels[2] == -1 && ds.labels[3] == 2);
    CHECK(ds.nsplit[0] == 2 && ds.nsplit[1] == 1 && ds.nsplit[2] == 2);
    CHECK(ds.split[2] && ds.split[2][1] == 4);
    CHECK(ds.graph.ngraphs == 2 && ds.graph.graph_ptr && ds.graph.graph_ptr[1] == 3);
    CHECK(ds.graph_labels && ds.graph_labels[0] == 1);
    CHECK(ds.dir && strcmp(ds.dir, dir) == 0);
    bg_dataset_free(&ds);

    /* optional files absent: only the graph */
    static const char *opt[] = {"features.npy", "labels.npy", "train_idx.npy", "val_idx.npy", "test_idx.npy",
                                "graph_ptr.npy", "graph_labels.npy"};
    for (int i = 0; i < 7; i++) remove(in_dir(opt[i]));
    CHECK(bg_dataset_load(dir, &ds, &d));
    CHECK(ds.features.dim[0] == 0 && ds.features.data == NULL && ds.labels == NULL && ds.split[0] == NULL);
    CHECK(ds.graph.ngraphs == 1 && ds.graph.graph_ptr == NULL && ds.graph_labels == NULL);
    bg_dataset_free(&ds);
    bg_diag_free(&d);

    /* one broken file at a time */
    make_valid();
    write_features(4, 3);
    expect_fail(BG_E_DATA_SHAPE, "features.npy: 4 rows but graph.mtx has 5 nodes");
    make_valid();
    {
        float v[5] = {0};
        int64_t dim[1] = {5};
        BgDiagSink d2;
        bg_diag_init(&d2);
        CHECK(bg_npy_save_f32(in_dir("features.npy"), v, 1, dim, &d2));
        bg_diag_free(&d2);
    }
    expect_fail(BG_E_DATA_SHAPE, "features.npy: expected shape (N, F)");
    make_valid();
    int64_t bad[6] = {0, 1, -2, 0, 0, 0};
    write_ints("labels.npy", "<i4", bad, 5);
    expect_fail(BG_E_DATA_SHAPE, "labels.npy: entry 2: label -2 out of range");
    make_valid();
    write_ints("labels.npy", "<i4", bad, 6);
    expect_fail(BG_E_DATA_SHAPE, "labels.npy: 6 entries but graph.mtx (nodes) has 5");
    make_valid();
    {
        float lf[5] = {0};
        int64_t dim[1] = {5};
        BgDiagSink d2;
        bg_diag_init(&d2);
        CHECK(bg_npy_save_f32(in_dir("labels.npy"), lf, 1, dim, &d2));
        bg_diag_free(&d2);
    }
    expect_fail(BG_E_DATA_SHAPE, "labels.npy: header field 'descr'");
    make_valid();
    int64_t tr[2] = {0, 5};
    write_ints("train_idx.npy", "<i8", tr, 2);
    expect_fail(BG_E_DATA_SHAPE, "train_idx.npy: entry 1: node id 5 out of range 0..4");
    make_valid();
    int64_t gp[3] = {0, 3, 4};
    write_ints("graph_ptr.npy", "<i8", gp, 3);
    expect_fail(BG_E_DATA_SHAPE, "graph_ptr.npy: last entry is 4 but graph.mtx has 5 nodes");
    make_valid();
    int64_t gp2[3] = {0, 4, 3};
    write_ints("graph_ptr.npy", "<i8", gp2, 3);
    expect_fail(BG_E_DATA_SHAPE, "graph_ptr.npy: entry 2 (3) is less than entry 1 (4)");
    make_valid();
    int64_t gp3[3] = {1, 3, 5};
    write_ints("graph_ptr.npy", "<i8", gp3, 3);
    expect_fail(BG_E_DATA_SHAPE, "graph_ptr.npy: entry 0 is 1, expected 0");
    make_valid();
    int64_t gl[3] = {0, 0, 0};
    write_ints("graph_labels.npy", "<i8", gl, 3);
    expect_fail(BG_E_DATA_SHAPE, "graph_labels.npy: 3 entries but graph_ptr.npy (graphs) has 2");
    make_valid();
    write_text("graph.mtx", "%%MatrixMarket matrix coordinate pattern general\n5 5 1\n1 7\n");
    expect_fail(BG_E_FORMAT, "graph.mtx:3: column index 7 out of range 1..5");
    write_text("graph.mtx", "%%MatrixMarket matrix coordinate pattern general\n5 4 0\n");
    expect_fail(BG_E_DATA_SHAPE, "graph.mtx: the adjacency matrix must be square");
    remove(in_dir("graph.mtx"));
    expect_fail(BG_E_IO, "graph.mtx: not found");

    for (int i = 0; i < 7; i++) remove(in_dir(opt[i]));
    rmdir(dir);
    char missing[600];
    snprintf(missing, sizeof missing, "%s", dir);
    expect_fail(BG_E_IO, "data directory '");
    BgDataset ds2;
    bg_diag_init(&d);
    CHECK(!bg_dataset_load(missing, &ds2, &d));
    char want[700];
    snprintf(want, sizeof want, "data directory '%s' not found (set --data or BGNN_DATA_DIR)", missing);
    CHECK(d.n == 1 && strcmp(d.items[0].msg, want) == 0);
    bg_diag_free(&d);
}

static void test_default_root(void) {
    const char *old = getenv("BGNN_DATA_DIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("BGNN_DATA_DIR", "/x/y", 1);
    CHECK(strcmp(bg_default_data_root(), "/x/y") == 0);
    setenv("BGNN_DATA_DIR", "", 1);
    CHECK(strcmp(bg_default_data_root(), "../shared/data") == 0);
    unsetenv("BGNN_DATA_DIR");
    CHECK(strcmp(bg_default_data_root(), "../shared/data") == 0);
    if (saved) setenv("BGNN_DATA_DIR", saved, 1);
    free(saved);
}

static bool load_real(const char *name, BgDataset *ds) {
    char p[700];
    snprintf(p, sizeof p, "%s/%s", bg_default_data_root(), name);
    struct stat st;
    if (stat(p, &st) != 0) {
        printf("note: %s not found; skipping the %s checks (set BGNN_DATA_DIR)\n", p, name);
        return false;
    }
    BgDiagSink d;
    bg_diag_init(&d);
    bool ok = bg_dataset_load(p, ds, &d);
    CHECK(ok);
    if (!ok && d.n) fprintf(stderr, "  %s\n", d.items[0].msg);
    bg_diag_free(&d);
    return ok;
}

static void test_real(void) {
    BgDataset ds;
    if (load_real("cora", &ds)) {
        CHECK_EQ_INT(ds.graph.n, 2708);
        CHECK_EQ_INT(ds.graph.nnz, 10556);
        CHECK(ds.features.rank == 2 && ds.features.dim[0] == 2708 && ds.features.dim[1] == 1433);
        CHECK_EQ_INT(ds.nsplit[0], 140);
        CHECK_EQ_INT(ds.nsplit[1], 500);
        CHECK_EQ_INT(ds.nsplit[2], 1000);
        CHECK(ds.graph.ngraphs == 1 && ds.graph.graph_ptr == NULL);
        int lmax = -1;
        for (int i = 0; ds.labels && i < 2708; i++) lmax = ds.labels[i] > lmax ? ds.labels[i] : lmax;
        CHECK_EQ_INT(lmax, 6);
        /* binary features, symmetric pattern, no self loops */
        const float *f = ds.features.data;
        bool binary = true;
        for (int64_t i = 0; f && i < 2708 * 1433; i++) binary &= f[i] == 0.0f || f[i] == 1.0f;
        CHECK(binary);
        bool noloop = true;
        for (int64_t i = 0; i < ds.graph.n; i++)
            for (int64_t k = ds.graph.rowptr[i]; k < ds.graph.rowptr[i + 1]; k++) noloop &= ds.graph.col[k] != i;
        CHECK(noloop);
        BgAdj a;
        CHECK(bg_adj_build(&ds.graph, true, BG_NORM_SYM, &a));
        CHECK_EQ_INT(a.nnz, 10556 + 2708);
        bg_adj_free(&a);
        bg_dataset_free(&ds);
    }
    if (load_real("citeseer", &ds)) {
        CHECK_EQ_INT(ds.graph.n, 3327);
        CHECK_EQ_INT(ds.graph.nnz, 9104);
        CHECK(ds.features.dim[0] == 3327 && ds.features.dim[1] == 3703);
        int unl = 0;
        for (int i = 0; ds.labels && i < 3327; i++) unl += ds.labels[i] == -1;
        CHECK_EQ_INT(unl, 15);
        bg_dataset_free(&ds);
    }
    if (load_real("pubmed", &ds)) {
        CHECK_EQ_INT(ds.graph.n, 19717);
        CHECK_EQ_INT(ds.graph.nnz, 88648);
        CHECK(ds.features.dim[0] == 0 && ds.features.data == NULL);
        CHECK_EQ_INT(ds.nsplit[0], 60);
        bg_dataset_free(&ds);
    }
    if (load_real("mutag", &ds)) {
        CHECK_EQ_INT(ds.graph.n, 3371);
        CHECK_EQ_INT(ds.graph.nnz, 7442);
        CHECK_EQ_INT(ds.graph.ngraphs, 188); /* graph_ptr.npy has 189 entries */
        CHECK(ds.graph.graph_ptr && ds.graph.graph_ptr[0] == 0 && ds.graph.graph_ptr[188] == 3371);
        CHECK(ds.graph_labels != NULL);
        CHECK(ds.features.dim[0] == 3371 && ds.features.dim[1] == 7);
        CHECK(ds.labels == NULL && ds.split[0] == NULL);
        bg_dataset_free(&ds);
    }
    /* the other TU sets: graph counts and consistent node counts */
    static const struct { const char *name; int64_t g, n, nnz, f; } tu[] = {
        {"proteins", 1113, 43471, 162088, 4}, {"enzymes", 600, 19580, 74564, 21}, {"nci1", 4110, 122747, 265506, 37}};
    for (int i = 0; i < 3; i++)
        if (load_real(tu[i].name, &ds)) {
            CHECK_EQ_INT(ds.graph.ngraphs, tu[i].g);
            CHECK_EQ_INT(ds.graph.n, tu[i].n);
            CHECK_EQ_INT(ds.graph.nnz, tu[i].nnz);
            CHECK_EQ_INT(ds.features.dim[1], tu[i].f);
            bg_dataset_free(&ds);
        }
}

int main(void) {
    test_synthetic();
    test_default_root();
    test_real();
    return bg_test_finish();
}
