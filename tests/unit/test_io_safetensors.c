/* test_io_safetensors.c - the safetensors reader and writer: dtype conversions (every
 * binary16 value, bf16 specials), the JSON parser, lying headers, truncations, limits and
 * save -> load round trips. */
#include "loaders.h"
#include "bgtest.h"
#include "loadcheck.h"

#include <stdint.h>
#include <unistd.h>

static char path[512];
static unsigned char img[1 << 18];

/* header JSON + data -> img (8-byte LE length first); returns the total length. */
static size_t make_st(const char *json, const void *data, size_t dlen) {
    size_t h = strlen(json);
    for (int i = 0; i < 8; i++) img[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(img + 8, json, h);
    if (dlen) memcpy(img + 8 + h, data, dlen);
    return 8 + h + dlen;
}

static void write_img(size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(2); }
    if (n) fwrite(img, 1, n, f);
    fclose(f);
}

static bool load(size_t n, BgSafetensors *s, int *code, char *msg, size_t msz) {
    write_img(n);
    BgDiagSink d;
    bg_diag_init(&d);
    memset(s, 0x5a, sizeof *s);
    BgSafetensors before = *s;
    bool ok = bg_safetensors_load(path, s, &d);
    if (!ok) CHECK(memcmp(s, &before, sizeof *s) == 0);
    check_load_diag(ok, &d, path, code, msg, msz);
    return ok;
}

static void expect_fail(const char *json, size_t dlen, int want, const char *needle) {
    static unsigned char zeros[8192];
    size_t n = make_st(json, zeros, dlen);
    BgSafetensors s;
    int code = 0;
    char msg[600] = "";
    bool ok = load(n, &s, &code, msg, sizeof msg);
    CHECK(!ok);
    if (ok) { fprintf(stderr, "  unexpected success: %s\n", json); bg_safetensors_free(&s); return; }
    if (code != want) fprintf(stderr, "  code %d: %s\n", code, msg);
    CHECK_EQ_INT(code, want);
    CHECK_STR_CONTAINS(msg, needle);
}

static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* Reference binary16 decoding through double arithmetic. */
static double half_ref(unsigned h) {
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

static void test_f16_all(void) {
    static uint16_t h[65536];
    for (unsigned i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    size_t n = make_st("{\"h\":{\"dtype\":\"F16\",\"shape\":[256,256],\"data_offsets\":[0,131072]}}", h, sizeof h);
    BgSafetensors s;
    CHECK(load(n, &s, NULL, NULL, 0));
    const BgStTensor *t = bg_safetensors_find(&s, "h");
    CHECK(t && t->dtype == BG_DT_F32 && t->rank == 2 && t->numel == 65536);
    if (t) {
        const float *v = t->data;
        int bad = 0;
        for (unsigned i = 0; i < 65536; i++) {
            double r = half_ref(i);
            if (isnan(r)) {
                /* NaN: payload kept in the top mantissa bits, sign kept */
                uint32_t want = (i & 0x8000u) << 16 | 0x7f800000u | (i & 0x3ffu) << 13;
                if (fbits(v[i]) != want) bad++;
            } else if ((double)v[i] != r || !signbit(v[i]) != !signbit(r)) {
                bad++;
            }
        }
        CHECK_EQ_INT(bad, 0);
        CHECK(v[0x0001] == 0x1p-24f && v[0x03ff] == 0x1.ff8p-15f && v[0x0400] == 0x1p-14f);
        CHECK(v[0x3c00] == 1.0f && v[0xc000] == -2.0f && v[0x7bff] == 65504.0f && v[0x3555] == 0.333251953125f);
        CHECK(isinf(v[0x7c00]) && v[0x7c00] > 0 && isinf(v[0xfc00]) && v[0xfc00] < 0 && isnan(v[0x7e00]));
        CHECK(fbits(v[0x8000]) == 0x80000000u);
    }
    bg_safetensors_free(&s);
}

static void test_dtypes(void) {
    uint16_t bf[6] = {0x3f80, 0xc040, 0x7f80, 0xff80, 0x7fc1, 0x0001};
    int32_t i4[3] = {-5, 0, 2147483647};
    int64_t i8[2] = {INT64_MIN, 42};
    float f4[4] = {1.5f, -0.0f, 3.0f, 1e-40f};
    unsigned char data[256];
    size_t o = 0;
    memcpy(data + o, f4, 16); o += 16;
    memcpy(data + o, bf, 12); o += 12;
    memcpy(data + o, i4, 12); o += 12;
    memcpy(data + o, i8, 16); o += 16;
    const char *json =
        "{\"__metadata__\":{\"format\":\"pt\",\"nested\":[1,-2.5e3,true,null,{\"a\":\"\\u00e9\"}]},"
        " \"conv1.weight\" : {\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},\n"
        "\"b\\\"f\\u00e9\\ud83d\\ude00\":{\"data_offsets\":[16,28],\"shape\":[6],\"dtype\":\"BF16\"},"
        "\"i4\":{\"dtype\":\"I32\",\"shape\":[3],\"data_offsets\":[28,40]},"
        "\"i8\":{\"dtype\":\"I64\",\"shape\":[1,1,2],\"data_offsets\":[40,56]},"
        "\"scalar_empty\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[56,56]}}   ";
    size_t n = make_st(json, data, o);
    BgSafetensors s;
    CHECK(load(n, &s, NULL, NULL, 0));
    CHECK_EQ_INT(s.n, 5);
    const BgStTensor *t = bg_safetensors_find(&s, "conv1.weight");
    CHECK(t && t->dtype == BG_DT_F32 && t->rank == 2 && t->dim[0] == 2 && t->dim[1] == 2 && t->numel == 4);
    if (t) CHECK(memcmp(t->data, f4, 16) == 0);
    t = bg_safetensors_find(&s, "b\"f\xc3\xa9\xf0\x9f\x98\x80");
    CHECK(t != NULL);
    if (t) {
        const float *v = t->data;
        CHECK(v[0] == 1.0f && v[1] == -3.0f && isinf(v[2]) && v[2] > 0 && isinf(v[3]) && v[3] < 0);
        CHECK(fbits(v[4]) == 0x7fc10000u && fbits(v[5]) == 0x00010000u);
    }
    t = bg_safetensors_find(&s, "i4");
    CHECK(t && t->dtype == BG_DT_I64);
    if (t) CHECK(((int64_t *)t->data)[0] == -5 && ((int64_t *)t->data)[2] == 2147483647);
    t = bg_safetensors_find(&s, "i8");
    CHECK(t && t->rank == 3 && t->numel == 2);
    if (t) CHECK(((int64_t *)t->data)[0] == INT64_MIN && ((int64_t *)t->data)[1] == 42);
    t = bg_safetensors_find(&s, "scalar_empty");
    CHECK(t && t->numel == 0);
    CHECK(bg_safetensors_find(&s, "__metadata__") == NULL);
    CHECK(bg_safetensors_find(&s, "nope") == NULL);
    CHECK(s.path && strcmp(s.path, path) == 0);
    bg_safetensors_free(&s);

    /* rank-0 scalar and an empty header */
    n = make_st("{\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}", f4, 4);
    CHECK(load(n, &s, NULL, NULL, 0));
    CHECK(s.n == 1 && s.t[0].rank == 0 && s.t[0].numel == 1 && ((float *)s.t[0].data)[0] == 1.5f);
    bg_safetensors_free(&s);
    n = make_st("{}", NULL, 0);
    CHECK(load(n, &s, NULL, NULL, 0));
    CHECK_EQ_INT(s.n, 0);
    bg_safetensors_free(&s);
}

static void test_hostile(void) {
    /* the documented example */
    static char big[8192];
    snprintf(big, sizeof big, "{\"conv1.weight\":{\"dtype\":\"F32\",\"shape\":[1024],\"data_offsets\":[0,4096]}}");
    expect_fail(big, 3000, BG_E_FORMAT,
                "tensor 'conv1.weight': field 'data_offsets': end 4096 beyond the data section (3000 bytes)");
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,4]}}", 16, BG_E_FORMAT,
                "tensor 'a': field 'data_offsets': begin 8 after end 4");
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 16, BG_E_FORMAT,
                "tensor 'a': field 'data_offsets': 8 bytes but field 'shape' (3 elements of F32) needs 12");
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 16, BG_E_FORMAT, "overlaps tensor 'a'");
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16, BG_E_FORMAT, "tensor 'a' appears twice");
    expect_fail("{\"w\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]}}", 16, BG_E_FORMAT,
                "tensor 'w': field 'dtype': unsupported dtype 'F64'");
    expect_fail("{\"w\":{\"dtype\":3,\"shape\":[2],\"data_offsets\":[0,16]}}", 16, BG_E_FORMAT, "tensor 'w': field 'dtype'");
    expect_fail("{\"w\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, BG_E_FORMAT, "tensor 'w': field 'dtype': missing");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8, BG_E_FORMAT, "tensor 'w': field 'shape': missing");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, BG_E_FORMAT, "tensor 'w': field 'data_offsets': missing");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}", 8, BG_E_FORMAT, "tensor 'w': unknown field 'x'");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, BG_E_FORMAT, "tensor 'w': field 'shape': negative");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8, BG_E_FORMAT, "tensor 'w': field 'shape'");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1],\"data_offsets\":[0,4]}}", 8, BG_E_FORMAT, "more than 4 dimensions");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, BG_E_FORMAT, "field 'data_offsets'");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,9]}}", 8, BG_E_FORMAT, "field 'data_offsets'");
    /* huge dims: overflow and too big for the data, both without allocating */
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,8]}}", 8, BG_E_LIMIT, "tensor 'w'");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[2147483648,2147483649],\"data_offsets\":[0,8]}}", 8, BG_E_LIMIT, "overflows");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[1000000,1000000],\"data_offsets\":[0,8]}}", 8, BG_E_FORMAT,
                "do not fit the data section (8 bytes)");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,99999999999999999999]}}", 8, BG_E_LIMIT, "too large");
    /* JSON syntax */
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},}", 8, BG_E_FORMAT, "header JSON");
    expect_fail("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} x", 8, BG_E_FORMAT, "after the header object");
    expect_fail("[]", 0, BG_E_FORMAT, "expected '{'");
    expect_fail("{\"w", 0, BG_E_FORMAT, "unterminated string");
    expect_fail("{\"w\\q\":1}", 0, BG_E_FORMAT, "invalid escape");
    expect_fail("{\"w\\ud800\":1}", 0, BG_E_FORMAT, "invalid escape");
    expect_fail("{\"w\\u0000\":1}", 0, BG_E_FORMAT, "\\u0000");
    expect_fail("{\"w\tx\":1}", 0, BG_E_FORMAT, "control character");
    expect_fail("{\"__metadata__\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
                0, BG_E_FORMAT, "nesting too deep");
    expect_fail("{\"__metadata__\":{\"a\":01}}", 0, BG_E_FORMAT, "header JSON");
    expect_fail("{\"__metadata__\":{\"a\":1.}}", 0, BG_E_FORMAT, "malformed number");
    expect_fail("{\"__metadata__\":{},\"__metadata__\":{}}", 0, BG_E_FORMAT, "given twice");
    expect_fail("{\"w\":7}", 0, BG_E_FORMAT, "tensor 'w'");

    BgSafetensors s;
    int code;
    char msg[600];
    /* header length beyond the file */
    size_t n = make_st("{}", NULL, 0);
    img[0] = 200;
    CHECK(!load(n, &s, &code, msg, sizeof msg));
    CHECK_STR_CONTAINS(msg, "header length 200 goes beyond the end of the file (10 bytes)");
    n = make_st("{}", NULL, 0);
    img[7] = 0x80;
    CHECK(!load(n, &s, &code, msg, sizeof msg));
    CHECK_STR_CONTAINS(msg, "beyond the end of the file");
    /* header over 100 MB (sparse file): E_LIMIT before reading it */
    n = make_st("{}", NULL, 0);
    uint64_t h = 100000001;
    for (int i = 0; i < 8; i++) img[i] = (unsigned char)(h >> (8 * i));
    write_img(n);
    CHECK(truncate(path, 100000100) == 0);
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(!bg_safetensors_load(path, &s, &d));
    CHECK(d.n == 1 && d.items[0].code == BG_E_LIMIT);
    CHECK_STR_CONTAINS(d.n ? d.items[0].msg : NULL, "over the limit");
    bg_diag_free(&d);
    /* missing file */
    char p2[600];
    snprintf(p2, sizeof p2, "%s.missing", path);
    bg_diag_init(&d);
    CHECK(!bg_safetensors_load(p2, &s, &d));
    CHECK(d.n == 1 && d.items[0].code == BG_E_IO);
    bg_diag_free(&d);
}

static void test_truncation(void) {
    static unsigned char full[1024];
    float v[3] = {1, 2, 3};
    uint16_t hv[2] = {0x3c00, 0x4000};
    unsigned char data[16];
    memcpy(data, v, 12);
    memcpy(data + 12, hv, 4);
    size_t n = make_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]},"
                       "\"b\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[12,16]}}    ", data, 16);
    memcpy(full, img, n);
    int fails = 0;
    for (size_t len = 0; len < n; len++) {
        memcpy(img, full, len);
        BgSafetensors s;
        if (!load(len, &s, NULL, NULL, 0)) fails++;
        else bg_safetensors_free(&s);
    }
    CHECK_EQ_INT(fails, (long long)n);
    /* and the full file loads */
    memcpy(img, full, n);
    BgSafetensors s;
    CHECK(load(n, &s, NULL, NULL, 0));
    CHECK(s.n == 2 && ((float *)s.t[1].data)[1] == 2.0f);
    bg_safetensors_free(&s);
}

/* Random byte corruptions: each load either succeeds or fails with one diagnostic. */
static void test_mutations(void) {
    static unsigned char full[1024];
    unsigned char data[24] = {0};
    size_t n = make_st("{\"__metadata__\":{\"k\":\"v\"},\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]},"
                       "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[12,16]},"
                       "\"c\":{\"dtype\":\"I64\",\"shape\":[1,1],\"data_offsets\":[16,24]}}", data, 24);
    memcpy(full, img, n);
    unsigned long long seed = 11;
    for (int it = 0; it < 3000; it++) {
        memcpy(img, full, n);
        int k = 1 + (int)(bg_test_rand(&seed) % 3);
        for (int q = 0; q < k; q++) {
            size_t at = bg_test_rand(&seed) % n;
            /* mostly printable JSON-ish bytes, sometimes anything */
            static const char pool[] = "{}[]\":,0123456789-.eE\\u \tFIB";
            img[at] = it % 3 ? (unsigned char)pool[bg_test_rand(&seed) % (sizeof pool - 1)]
                             : (unsigned char)bg_test_rand(&seed);
        }
        BgSafetensors s;
        if (load(n, &s, NULL, NULL, 0)) bg_safetensors_free(&s);
    }
}

static void test_roundtrip(void) {
    float a[6] = {1, -2, 3.5f, 0, -0.0f, 1e-45f}, b[1] = {42}, c[1] = {0};
    const char *names[4] = {"layer.0.weight", "we\"ird\\name\n", "scalar", "empty"};
    const float *data[4] = {a, a, b, c};
    int rank[4] = {2, 1, 0, 2};
    int64_t dim[4][4] = {{2, 3}, {6}, {0}, {0, 4}};
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(bg_safetensors_save_f32(path, 4, names, data, rank, (const int64_t(*)[4])dim, &d));
    CHECK_EQ_INT(d.n, 0);
    BgSafetensors s;
    CHECK(bg_safetensors_load(path, &s, &d));
    CHECK_EQ_INT(d.n, 0);
    CHECK_EQ_INT(s.n, 4);
    for (int i = 0; i < 4 && i < s.n; i++) {
        const BgStTensor *t = bg_safetensors_find(&s, names[i]);
        CHECK(t && t->rank == rank[i]);
        if (!t) continue;
        for (int k = 0; k < rank[i]; k++) CHECK(t->dim[k] == dim[i][k]);
        CHECK(memcmp(t->data, data[i], (size_t)t->numel * 4) == 0);
    }
    bg_safetensors_free(&s);
    FILE *f = fopen(path, "rb");
    unsigned char lb[8];
    CHECK(f && fread(lb, 1, 8, f) == 8);
    if (f) fclose(f);
    CHECK_EQ_INT(lb[0] % 8, 0);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CHECK(access(tmp, F_OK) != 0);

    /* refusals: duplicate names, bad rank, unwritable directory */
    const char *dup[2] = {"x", "x"};
    CHECK(!bg_safetensors_save_f32(path, 2, dup, data, rank, (const int64_t(*)[4])dim, &d));
    CHECK(d.n == 1 && d.items[0].code == BG_E_WRITE);
    CHECK_STR_CONTAINS(d.n ? d.items[0].msg : NULL, "given twice");
    bg_diag_free(&d);
    bg_diag_init(&d);
    int r5[1] = {5};
    CHECK(!bg_safetensors_save_f32(path, 1, names, data, r5, (const int64_t(*)[4])dim, &d));
    CHECK(d.n == 1 && d.items[0].code == BG_E_WRITE);
    bg_diag_free(&d);
    bg_diag_init(&d);
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bgnn_no_such_dir_%ld/w.safetensors", bg_test_tmpdir(), (long)getpid());
    CHECK(!bg_safetensors_save_f32(bad, 1, names, data, rank, (const int64_t(*)[4])dim, &d));
    CHECK(d.n == 1 && d.items[0].code == BG_E_WRITE);
    CHECK_STR_CONTAINS(d.n ? d.items[0].msg : NULL, "w.safetensors");
    bg_diag_free(&d);
    /* the existing file survived the failed saves intact */
    bg_diag_init(&d);
    CHECK(bg_safetensors_load(path, &s, &d));
    CHECK_EQ_INT(s.n, 4);
    bg_safetensors_free(&s);
    bg_diag_free(&d);
}

int main(void) {
    snprintf(path, sizeof path, "%s/bgnn_st_%ld.safetensors", bg_test_tmpdir(), (long)getpid());
    test_f16_all();
    test_dtypes();
    test_hostile();
    test_truncation();
    test_mutations();
    test_roundtrip();
    remove(path);
    return bg_test_finish();
}
