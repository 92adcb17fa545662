/* test_io_npy.c - the .npy reader and writer: every dtype and version, header spellings,
 * lying and truncated files, limits, and save -> load round trips. */
#include "loaders.h"
#include "bgtest.h"
#include "loadcheck.h"

#include <stdint.h>
#include <unistd.h>

static char path[512];

static void set_path(const char *name) { snprintf(path, sizeof path, "%s/bgnn_npy_%ld_%s", bg_test_tmpdir(), (long)getpid(), name); }

static void write_bytes(const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(2); }
    if (n) fwrite(p, 1, n, f);
    fclose(f);
}

/* Builds a .npy image in buf: version 1/2/3, the dict text (padded to 64 with spaces and
 * '\n'), then the data bytes.  Returns the total length. */
static size_t make_npy(unsigned char *buf, int ver, const char *dict, const void *data, size_t dlen) {
    size_t pre = ver == 1 ? 10 : 12, dl = strlen(dict);
    size_t total = (pre + dl + 1 + 63) / 64 * 64, hlen = total - pre;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)ver;
    buf[7] = 0;
    if (ver == 1) {
        buf[8] = (unsigned char)hlen;
        buf[9] = (unsigned char)(hlen >> 8);
    } else {
        for (int i = 0; i < 4; i++) buf[8 + i] = (unsigned char)(hlen >> (8 * i));
    }
    memcpy(buf + pre, dict, dl);
    memset(buf + pre + dl, ' ', hlen - dl - 1);
    buf[total - 1] = '\n';
    if (dlen) memcpy(buf + total, data, dlen);
    return total + dlen;
}

static unsigned char img[1 << 16];

/* Writes the image and loads it; returns success.  On failure checks exactly one
 * diagnostic naming the file and copies its message to msg. */
static bool load(size_t n, BgNpyWant w, BgNpy *o, int *code, char *msg, size_t msz) {
    write_bytes(img, n);
    BgDiagSink d;
    bg_diag_init(&d);
    BgNpy sentinel = {BG_DT_B1, 7, {7, 7}, (void *)&sentinel};
    *o = sentinel;
    bool ok = bg_npy_load(path, w, o, &d);
    if (!ok) CHECK(o->rank == 7 && o->data == (void *)&sentinel); /* untouched */
    check_load_diag(ok, &d, path, code, msg, msz);
    return ok;
}

static void expect_fail(const char *dict, size_t dlen_data, int want_code, const char *needle) {
    static unsigned char zeros[4096];
    size_t n = make_npy(img, 1, dict, zeros, dlen_data);
    BgNpy o;
    int code = 0;
    char msg[512] = "";
    bool ok = load(n, BG_NPY_AS_F32, &o, &code, msg, sizeof msg);
    CHECK(!ok);
    if (ok) { fprintf(stderr, "  (unexpected success for %s)\n", dict); bg_npy_free(&o); return; }
    if (code != want_code) fprintf(stderr, "  code %d for %s: %s\n", code, dict, msg);
    CHECK_EQ_INT(code, want_code);
    CHECK_STR_CONTAINS(msg, needle);
}

static void test_dtypes(void) {
    BgNpy o;
    float f4[6] = {1.5f, -2.0f, 0.0f, 3.25f, -0.0f, 1e30f};
    size_t n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f4, sizeof f4);
    CHECK(load(n, BG_NPY_AS_F32, &o, NULL, NULL, 0));
    CHECK(o.dtype == BG_DT_F32 && o.rank == 2 && o.dim[0] == 2 && o.dim[1] == 3);
    CHECK(memcmp(o.data, f4, sizeof f4) == 0);
    bg_npy_free(&o);
    /* float -> integer is refused */
    int code = 0;
    char msg[512];
    CHECK(!load(n, BG_NPY_AS_I64, &o, &code, msg, sizeof msg));
    CHECK_EQ_INT(code, BG_E_DATA_SHAPE);
    CHECK_STR_CONTAINS(msg, "header field 'descr'");

    double f8[3] = {0.1, -1e300, 2.5};
    n = make_npy(img, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f8, sizeof f8);
    CHECK(load(n, BG_NPY_AS_F32, &o, NULL, NULL, 0));
    CHECK(o.rank == 1 && o.dim[0] == 3);
    if (o.data) {
        float *v = o.data;
        CHECK(v[0] == 0.1f && isinf(v[1]) && v[1] < 0 && v[2] == 2.5f);
    }
    bg_npy_free(&o);
    CHECK(!load(n, BG_NPY_AS_I64, &o, &code, msg, sizeof msg));

    int32_t i4[4] = {-1, 0, 2147483647, -2147483647 - 1};
    n = make_npy(img, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", i4, sizeof i4);
    CHECK(load(n, BG_NPY_AS_I64, &o, NULL, NULL, 0));
    if (o.data) {
        int64_t *v = o.data;
        CHECK(o.dtype == BG_DT_I64 && v[0] == -1 && v[1] == 0 && v[2] == 2147483647 && v[3] == -2147483648LL);
    }
    bg_npy_free(&o);
    CHECK(load(n, BG_NPY_AS_F32, &o, NULL, NULL, 0));
    if (o.data) CHECK(((float *)o.data)[0] == -1.0f && ((float *)o.data)[2] == 2147483648.0f);
    bg_npy_free(&o);

    int64_t i8[2] = {INT64_MIN, 123456789012345LL};
    n = make_npy(img, 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }", i8, sizeof i8);
    CHECK(load(n, BG_NPY_AS_I64, &o, NULL, NULL, 0));
    if (o.data) CHECK(o.rank == 2 && ((int64_t *)o.data)[0] == INT64_MIN && ((int64_t *)o.data)[1] == 123456789012345LL);
    bg_npy_free(&o);

    unsigned char u1[3] = {0, 200, 255};
    static const char *u1names[] = {"|u1", "<u1", "=u1"};
    for (int k = 0; k < 3; k++) {
        char dict[128];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }", u1names[k]);
        n = make_npy(img, 1, dict, u1, 3);
        CHECK(load(n, BG_NPY_AS_I64, &o, NULL, NULL, 0));
        if (o.data) CHECK(((int64_t *)o.data)[1] == 200 && ((int64_t *)o.data)[2] == 255);
        bg_npy_free(&o);
    }
    unsigned char b1[4] = {1, 0, 1, 1};
    n = make_npy(img, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }", b1, 4);
    CHECK(load(n, BG_NPY_AS_F32, &o, NULL, NULL, 0));
    if (o.data) CHECK(((float *)o.data)[0] == 1.0f && ((float *)o.data)[1] == 0.0f && ((float *)o.data)[3] == 1.0f);
    bg_npy_free(&o);
    CHECK(load(n, BG_NPY_AS_I64, &o, NULL, NULL, 0));
    if (o.data) CHECK(((int64_t *)o.data)[2] == 1);
    bg_npy_free(&o);
}

static void test_versions_and_spellings(void) {
    BgNpy o;
    float v[2] = {7.0f, 8.0f};
    size_t n = make_npy(img, 2, "{'shape': (2,), 'descr': '<f4', 'fortran_order': False}", v, 8);
    CHECK(load(n, BG_NPY_AS_F32, &o, NULL, NULL, 0));
    if (o.data) CHECK(((float *)o.data)[1] == 8.0f);
    bg_npy_free(&o);
    /* v3: utf8 header (a non-ASCII byte in the padding would be odd; keys reordered) */
    n = make_npy(img, 3, "{ \"fortran_order\" : True , \"descr\":\"<f4\",\"shape\":( 2 , ) , }", v, 8);
    CHECK(load(n, BG_NPY_AS_F32, &o, NULL, NULL, 0));
    CHECK(o.rank == 1 && o.dim[0] == 2);
    bg_npy_free(&o);
    /* Python 2 long suffix; '=f4' native spelling */
    n = make_npy(img, 1, "{'descr': '=f4', 'fortran_order': False, 'shape': (1L, 2L), }", v, 8);
    CHECK(load(n, BG_NPY_AS_F32, &o, NULL, NULL, 0));
    CHECK(o.rank == 2 && o.dim[0] == 1 && o.dim[1] == 2);
    bg_npy_free(&o);
    /* Fortran order is fine where it changes nothing */
    n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1), }", v, 8);
    CHECK(load(n, BG_NPY_AS_F32, &o, NULL, NULL, 0));
    bg_npy_free(&o);
    /* zero-size arrays */
    n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }", v, 0);
    CHECK(load(n, BG_NPY_AS_F32, &o, NULL, NULL, 0));
    CHECK(o.dim[0] == 0 && o.dim[1] == 5 && o.data != NULL);
    bg_npy_free(&o);
}

static void test_hostile(void) {
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4, BG_E_FORMAT, "header field 'shape': rank 0");
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1), }", 4, BG_E_FORMAT, "header field 'shape': rank 3");
    expect_fail("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, BG_E_FORMAT, "header field 'fortran_order'");
    expect_fail("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 4, BG_E_FORMAT, "header field 'descr': unsupported dtype '>f4'");
    expect_fail("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8, BG_E_FORMAT, "header field 'descr'");
    expect_fail("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4, BG_E_FORMAT, "header field 'descr'");
    expect_fail("{'descr': '<f4', 'shape': (1,), }", 4, BG_E_FORMAT, "header field 'fortran_order': missing");
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4, BG_E_FORMAT, "unknown key 'x'");
    expect_fail("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4, BG_E_FORMAT, "given twice");
    expect_fail("{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}", 4, BG_E_FORMAT, "header field 'fortran_order'");
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 4, BG_E_FORMAT, "header field 'shape'");
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", 4, BG_E_FORMAT, "after the dict");
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4, BG_E_FORMAT, "header");
    expect_fail("['descr']", 4, BG_E_FORMAT, "expected '{'");
    /* shape larger / smaller than the data */
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), }", 32, BG_E_FORMAT, "truncated");
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 17, BG_E_FORMAT, "trailing bytes");
    /* huge dims: limits before allocating */
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (3000000000, 1), }", 4, BG_E_LIMIT, "rows over the limit");
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 16777217), }", 4, BG_E_LIMIT, "columns over the limit");
    expect_fail("{'descr': '<f8', 'fortran_order': False, 'shape': (2147483647, 16777216), }", 4, BG_E_LIMIT, "8 GiB");
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999999, 1), }", 4, BG_E_LIMIT, "too large");

    BgNpy o;
    int code;
    char msg[512];
    /* bad magic, bad version, header length past the end of the file */
    float v[1] = {1};
    size_t n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", v, 4);
    img[1] = 'X';
    CHECK(!load(n, BG_NPY_AS_F32, &o, &code, msg, sizeof msg));
    CHECK_STR_CONTAINS(msg, "bad magic");
    n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", v, 4);
    img[6] = 4;
    CHECK(!load(n, BG_NPY_AS_F32, &o, &code, msg, sizeof msg));
    CHECK_STR_CONTAINS(msg, "version 4");
    n = make_npy(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", v, 4);
    img[8] = 0xff;
    img[9] = 0xff;
    CHECK(!load(n, BG_NPY_AS_F32, &o, &code, msg, sizeof msg));
    CHECK_STR_CONTAINS(msg, "header length 65535 goes beyond the end of the file");
    n = make_npy(img, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", v, 4);
    img[11] = 0x80;
    CHECK(!load(n, BG_NPY_AS_F32, &o, &code, msg, sizeof msg));
    CHECK_STR_CONTAINS(msg, "beyond the end of the file");
    /* missing file */
    set_path("does_not_exist.npy");
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(!bg_npy_load(path, BG_NPY_AS_F32, &o, &d));
    CHECK(d.n == 1 && d.items[0].code == BG_E_IO);
    CHECK_STR_CONTAINS(d.n ? d.items[0].msg : NULL, "does_not_exist.npy");
    bg_diag_free(&d);
    set_path("t.npy");
}

/* Every proper prefix of valid files must fail cleanly. */
static void test_truncation(void) {
    static unsigned char full[4096];
    float v[6] = {1, 2, 3, 4, 5, 6};
    for (int ver = 1; ver <= 3; ver++) {
        size_t n = make_npy(full, ver, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, sizeof v);
        int fails = 0;
        for (size_t len = 0; len < n; len++) {
            memcpy(img, full, len);
            BgNpy o;
            int code = 0;
            if (!load(len, BG_NPY_AS_F32, &o, &code, NULL, 0)) fails++;
            else bg_npy_free(&o);
        }
        CHECK_EQ_INT(fails, (long long)n);
    }
}

/* Random byte corruptions: each load either succeeds or fails with one diagnostic. */
static void test_mutations(void) {
    static unsigned char full[4096];
    float v[6] = {1, 2, 3, 4, 5, 6};
    size_t n = make_npy(full, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, sizeof v);
    unsigned long long seed = 7;
    for (int it = 0; it < 3000; it++) {
        memcpy(img, full, n);
        int k = 1 + (int)(bg_test_rand(&seed) % 3);
        for (int q = 0; q < k; q++) img[bg_test_rand(&seed) % n] = (unsigned char)bg_test_rand(&seed);
        BgNpy o;
        if (load(n - (it % 7 == 0 ? 1 + bg_test_rand(&seed) % 8 : 0), it % 2 ? BG_NPY_AS_F32 : BG_NPY_AS_I64, &o, NULL, NULL, 0))
            bg_npy_free(&o);
    }
}

static void test_roundtrip(void) {
    float v[12];
    unsigned long long s = 42;
    for (int i = 0; i < 12; i++) v[i] = bg_test_randf(&s);
    v[3] = -0.0f;
    v[4] = INFINITY;
    int64_t dims[3][2] = {{3, 4}, {12, 0}, {0, 7}};
    int ranks[3] = {2, 1, 2};
    for (int k = 0; k < 3; k++) {
        set_path("rt.npy");
        BgDiagSink d;
        bg_diag_init(&d);
        CHECK(bg_npy_save_f32(path, v, ranks[k], dims[k], &d));
        CHECK_EQ_INT(d.n, 0);
        BgNpy o;
        CHECK(bg_npy_load(path, BG_NPY_AS_F32, &o, &d));
        CHECK(o.rank == ranks[k] && o.dim[0] == dims[k][0]);
        if (ranks[k] == 2) CHECK(o.dim[1] == dims[k][1]);
        int64_t ne = ranks[k] == 2 ? dims[k][0] * dims[k][1] : dims[k][0];
        if (o.data) CHECK(memcmp(o.data, v, (size_t)ne * 4) == 0);
        bg_npy_free(&o);
        /* header padded to 64, v1.0 */
        FILE *f = fopen(path, "rb");
        unsigned char pre[10];
        CHECK(f && fread(pre, 1, 10, f) == 10);
        if (f) {
            fseek(f, 0, SEEK_END);
            long sz = ftell(f);
            fclose(f);
            CHECK(pre[6] == 1 && pre[7] == 0);
            CHECK_EQ_INT((10 + (pre[8] | pre[9] << 8)) % 64, 0);
            CHECK_EQ_INT(sz, 10 + (pre[8] | pre[9] << 8) + ne * 4);
        }
        char tmp[600];
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
        CHECK(access(tmp, F_OK) != 0);
        bg_diag_free(&d);
        remove(path);
    }
    /* unwritable destination: error, no temp file left */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bgnn_no_such_dir_%ld/x.npy", bg_test_tmpdir(), (long)getpid());
    BgDiagSink d;
    bg_diag_init(&d);
    int64_t dim[2] = {2, 2};
    CHECK(!bg_npy_save_f32(bad, v, 2, dim, &d));
    CHECK(d.n == 1 && d.items[0].code == BG_E_WRITE);
    CHECK_STR_CONTAINS(d.n ? d.items[0].msg : NULL, "x.npy");
    bg_diag_free(&d);
    /* rank 3 refused */
    bg_diag_init(&d);
    CHECK(!bg_npy_save_f32(path, v, 3, dim, &d));
    CHECK(d.n == 1 && d.items[0].code == BG_E_WRITE);
    bg_diag_free(&d);
}

int main(void) {
    set_path("t.npy");
    test_dtypes();
    test_versions_and_spellings();
    test_hostile();
    test_truncation();
    test_mutations();
    test_roundtrip();
    set_path("t.npy");
    remove(path);
    return bg_test_finish();
}
