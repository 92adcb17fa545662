/* test_io_mtx.c - the Matrix Market reader: fields, symmetry, comments, line-numbered
 * errors, limits, and every truncation of a small file. */
#include "loaders.h"
#include "bgtest.h"
#include "loadcheck.h"

#include <unistd.h>

static char path[512];

static void write_text(const char *s, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(2); }
    fwrite(s, 1, n, f);
    fclose(f);
}

/* Loads text; on failure checks one diagnostic starting with the path, returns it in msg. */
static bool load_n(const char *text, size_t n, BgCoo *c, int *code, char *msg, size_t msz) {
    write_text(text, n);
    BgDiagSink d;
    bg_diag_init(&d);
    memset(c, 0x5a, sizeof *c);
    BgCoo before = *c;
    bool ok = bg_mtx_load(path, c, &d);
    if (!ok) CHECK(memcmp(c, &before, sizeof *c) == 0);
    check_load_diag(ok, &d, path, code, msg, msz);
    return ok;
}
static bool load(const char *text, BgCoo *c, int *code, char *msg, size_t msz) {
    return load_n(text, strlen(text), c, code, msg, msz);
}

/* Expects failure with code and a message containing "<path>:<needle>" when needle starts
 * with a digit (a line number), else containing needle. */
static void expect_fail(const char *text, int want, const char *needle) {
    BgCoo c;
    int code = 0;
    char msg[512] = "";
    bool ok = load(text, &c, &code, msg, sizeof msg);
    CHECK(!ok);
    if (ok) { fprintf(stderr, "  unexpected success:\n%s\n", text); bg_coo_free(&c); return; }
    CHECK_EQ_INT(code, want);
    if (needle[0] >= '0' && needle[0] <= '9') {
        char full[600];
        snprintf(full, sizeof full, "%s:%s", path, needle);
        CHECK_STR_CONTAINS(msg, full);
    } else {
        CHECK_STR_CONTAINS(msg, needle);
    }
}

static void test_valid(void) {
    BgCoo c;
    CHECK(load("%%MatrixMarket matrix coordinate pattern general\n% a comment\n%\n3 4 3\n1 2\n3 4\n1 2\n", &c, NULL, NULL, 0));
    CHECK(c.nrows == 3 && c.ncols == 4 && c.nnz == 3 && c.val == NULL);
    CHECK(c.row[0] == 0 && c.col[0] == 1 && c.row[1] == 2 && c.col[1] == 3 && c.row[2] == 0 && c.col[2] == 1);
    bg_coo_free(&c);

    /* symmetric real: off-diagonal mirrored, diagonal once; CRLF, blank lines, tabs */
    CHECK(load("%%matrixmarket MATRIX Coordinate REAL Symmetric\r\n\r\n3 3 3\r\n2 1 0.5\r\n3 3 -2e1\r\n\t3  1\t1.25\r\n\n", &c, NULL, NULL, 0));
    CHECK(c.nnz == 5 && c.val != NULL);
    if (c.nnz == 5 && c.val) {
        CHECK(c.row[0] == 1 && c.col[0] == 0 && c.val[0] == 0.5);
        CHECK(c.row[1] == 0 && c.col[1] == 1 && c.val[1] == 0.5);
        CHECK(c.row[2] == 2 && c.col[2] == 2 && c.val[2] == -20.0);
        CHECK(c.row[3] == 2 && c.col[3] == 0 && c.val[3] == 1.25);
        CHECK(c.row[4] == 0 && c.col[4] == 2);
    }
    bg_coo_free(&c);

    CHECK(load("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 -7\n2 1 +3\n", &c, NULL, NULL, 0));
    CHECK(c.nnz == 2 && c.val && c.val[0] == -7.0 && c.val[1] == 3.0);
    bg_coo_free(&c);

    /* empty matrix, no final newline */
    CHECK(load("%%MatrixMarket matrix coordinate pattern general\n5 5 0", &c, NULL, NULL, 0));
    CHECK(c.nrows == 5 && c.nnz == 0 && c.row && c.col);
    bg_coo_free(&c);

    /* pattern symmetric, duplicates kept */
    CHECK(load("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n2 1\n2 1\n", &c, NULL, NULL, 0));
    CHECK(c.nnz == 4);
    bg_coo_free(&c);
}

static void test_errors(void) {
    const char *H = "%%MatrixMarket matrix coordinate pattern general\n";
    char t[1024];
    expect_fail("", BG_E_FORMAT, "1: empty file");
    expect_fail("3 3 1\n1 1\n", BG_E_FORMAT, "1: expected a '%%MatrixMarket' header");
    expect_fail("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", BG_E_FORMAT, "1: format 'array' not supported");
    expect_fail("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", BG_E_FORMAT, "1: field 'complex'");
    expect_fail("%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", BG_E_FORMAT, "1: symmetry 'hermitian'");
    expect_fail("%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n", BG_E_FORMAT, "1: symmetry 'skew-symmetric'");
    expect_fail("%%MatrixMarket vector coordinate real general\n1 1 0\n", BG_E_FORMAT, "1: object 'vector'");
    expect_fail("%%MatrixMarket matrix coordinate real\n1 1 0\n", BG_E_FORMAT, "1: header needs 4 words");
    expect_fail("%%MatrixMarket matrix coordinate pattern general\n% only comments\n", BG_E_FORMAT, "3: missing size line");
    snprintf(t, sizeof t, "%s3 3\n", H);
    expect_fail(t, BG_E_FORMAT, "2: expected the size line");
    snprintf(t, sizeof t, "%s3 x 1\n1 1\n", H);
    expect_fail(t, BG_E_FORMAT, "2: expected the size line");
    snprintf(t, sizeof t, "%s3 3 2\n1 1\n", H);
    expect_fail(t, BG_E_FORMAT, "3: file ends after 1 of the 2 entries");
    snprintf(t, sizeof t, "%s3 3 1\n1 1\n2 2\n", H);
    expect_fail(t, BG_E_FORMAT, "4: more entries than the 1");
    snprintf(t, sizeof t, "%s3 3 1\n1 1\n\n  \n%% trailing comment\n", H);
    BgCoo c;
    CHECK(load(t, &c, NULL, NULL, 0));
    bg_coo_free(&c);
    snprintf(t, sizeof t, "%s3 3 2\n1 1\n1 a\n", H);
    expect_fail(t, BG_E_FORMAT, "4: column index 'a' is not an integer");
    snprintf(t, sizeof t, "%s3 3 2\n1 1\n1.0 2\n", H);
    expect_fail(t, BG_E_FORMAT, "4: row index '1.0' is not an integer");
    snprintf(t, sizeof t, "%s3 3 2\n1 1\n0 2\n", H);
    expect_fail(t, BG_E_FORMAT, "4: row index 0 out of range 1..3");
    snprintf(t, sizeof t, "%s3 3 2\n1 1\n1 -2\n", H);
    expect_fail(t, BG_E_FORMAT, "4: column index -2 out of range 1..3");
    snprintf(t, sizeof t, "%s3 3 2\n1 1\n1 99999999999999999999\n", H);
    expect_fail(t, BG_E_FORMAT, "4: column index '99999999999999999999' is not an integer");
    snprintf(t, sizeof t, "%s3 3 1\n1 1 1\n", H);
    expect_fail(t, BG_E_FORMAT, "3: expected 2 fields");
    expect_fail("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", BG_E_FORMAT, "3: expected 3 fields");
    expect_fail("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 x\n", BG_E_FORMAT, "3: value 'x' is not a finite real");
    expect_fail("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 nan\n", BG_E_FORMAT, "3: value 'nan'");
    expect_fail("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", BG_E_FORMAT, "3: value '1.5' is not an integer");
    expect_fail("%%MatrixMarket matrix coordinate pattern symmetric\n3 4 1\n1 1\n", BG_E_FORMAT, "2: a symmetric matrix must be square");
    snprintf(t, sizeof t, "%s2 2 5\n1 1\n", H);
    expect_fail(t, BG_E_FORMAT, "2: 5 entries do not fit a 2 x 2 matrix");
    snprintf(t, sizeof t, "%s-2 2 0\n", H);
    expect_fail(t, BG_E_FORMAT, "2: negative number");
    /* limits, checked before any allocation */
    snprintf(t, sizeof t, "%s2147483648 1 1\n1 1\n", H);
    expect_fail(t, BG_E_LIMIT, "2: matrix 2147483648 x 1 over the limit");
    snprintf(t, sizeof t, "%s2000000000 2000000000 4294967297\n1 1\n", H);
    expect_fail(t, BG_E_LIMIT, "2: 4294967297 entries over the limit");
    /* a lying NNZ within the limits must not reserve memory for it */
    snprintf(t, sizeof t, "%s2000000000 2000000000 4294967296\n1 1\n", H);
    expect_fail(t, BG_E_FORMAT, "3: file ends after 1 of the 4294967296 entries");

    /* The documented example: column index out of range, named with file and line. */
    snprintf(t, sizeof t, "%s%% cora\n2708 2708 2\n1 2\n1 3000\n", H);
    expect_fail(t, BG_E_FORMAT, "5: column index 3000 out of range 1..2708");

    /* embedded NUL */
    static const char nul[] = "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\0002\n";
    BgCoo c2;
    int code;
    char msg[512];
    CHECK(!load_n(nul, sizeof nul - 1, &c2, &code, msg, sizeof msg));
    CHECK_STR_CONTAINS(msg, ":3:");

    /* missing file */
    char p2[600];
    snprintf(p2, sizeof p2, "%s.missing", path);
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(!bg_mtx_load(p2, &c2, &d));
    CHECK(d.n == 1 && d.items[0].code == BG_E_IO);
    bg_diag_free(&d);
}

/* Every prefix fails unless it only drops the final newline. */
static void test_truncation(void) {
    const char *full = "%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 3\n2 1 0.5\n3 3 2\n3 2 7\n";
    size_t n = strlen(full);
    int fails = 0, oks = 0;
    for (size_t len = 0; len < n; len++) {
        BgCoo c;
        if (load_n(full, len, &c, NULL, NULL, 0)) {
            oks++;
            CHECK_EQ_INT(len, n - 1);
            CHECK_EQ_INT(c.nnz, 5);
            bg_coo_free(&c);
        } else {
            fails++;
        }
    }
    CHECK_EQ_INT(fails, (long long)n - 1);
    CHECK_EQ_INT(oks, 1);
}

/* Random byte corruptions: each load either succeeds or fails with one diagnostic. */
static void test_mutations(void) {
    const char *full = "%%MatrixMarket matrix coordinate real symmetric\n% c\n4 4 4\n2 1 0.5\n3 3 2\n3 2 7\n4 1 -1e3\n";
    size_t n = strlen(full);
    char buf[256];
    unsigned long long seed = 5;
    static const char pool[] = "0123456789 -+.e%\n\tx";
    for (int it = 0; it < 3000; it++) {
        memcpy(buf, full, n);
        int k = 1 + (int)(bg_test_rand(&seed) % 3);
        for (int q = 0; q < k; q++)
            buf[bg_test_rand(&seed) % n] = it % 4 ? pool[bg_test_rand(&seed) % (sizeof pool - 1)] : (char)bg_test_rand(&seed);
        BgCoo c;
        if (load_n(buf, n, &c, NULL, NULL, 0)) {
            CHECK(c.nnz >= 0 && c.nnz <= 8);
            bg_coo_free(&c);
        }
    }
}

int main(void) {
    snprintf(path, sizeof path, "%s/bgnn_mtx_%ld.mtx", bg_test_tmpdir(), (long)getpid());
    test_valid();
    test_errors();
    test_truncation();
    test_mutations();
    remove(path);
    return bg_test_finish();
}
