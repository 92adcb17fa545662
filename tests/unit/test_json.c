/* test_json.c - the JSON writer (base/json.c) and bgnnc's --json output.
 * A small strict JSON checker here (RFC 8259 grammar, UTF-8 validated) accepts everything
 * the writer produces: nesting, commas, escapes of quotes, backslashes and control
 * characters, invalid UTF-8 turned into U+FFFD, non-finite numbers as null.  Then
 * `bgnnc run --json` (a success and a failure) and `bgnnc --stats --json` are run and
 * checked the same way, with the fields they must hold. */
#include "base.h"
#include "bgtest.h"

#include <math.h>

/* ---- a strict checker ------------------------------------------------------------------- */
typedef struct {
    const char *p;
    int depth;
} Chk;

static void ws(Chk *c) {
    while (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t') c->p++;
}

static bool value(Chk *c);

static bool string(Chk *c) {
    if (*c->p != '"') return false;
    c->p++;
    while (*c->p != '"') {
        unsigned char u = (unsigned char)*c->p;
        if (u == 0 || u < 0x20) return false;
        if (u == '\\') {
            c->p++;
            if (*c->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", c->p[i]) || !c->p[i]) return false;
                c->p += 5;
                continue;
            }
            if (!*c->p || !strchr("\"\\/bfnrt", *c->p)) return false;
            c->p++;
            continue;
        }
        if (u >= 0x80) { /* well-formed UTF-8 */
            int k = u >= 0xf0 ? 4 : u >= 0xe0 ? 3 : u >= 0xc2 ? 2 : 0;
            if (!k) return false;
            for (int i = 1; i < k; i++)
                if (((unsigned char)c->p[i] & 0xc0) != 0x80) return false;
            c->p += k;
            continue;
        }
        c->p++;
    }
    c->p++;
    return true;
}

static bool number(Chk *c) {
    const char *b = c->p;
    if (*c->p == '-') c->p++;
    if (*c->p == '0') c->p++;
    else if (*c->p >= '1' && *c->p <= '9') while (*c->p >= '0' && *c->p <= '9') c->p++;
    else return false;
    if (*c->p == '.') {
        c->p++;
        if (!(*c->p >= '0' && *c->p <= '9')) return false;
        while (*c->p >= '0' && *c->p <= '9') c->p++;
    }
    if (*c->p == 'e' || *c->p == 'E') {
        c->p++;
        if (*c->p == '+' || *c->p == '-') c->p++;
        if (!(*c->p >= '0' && *c->p <= '9')) return false;
        while (*c->p >= '0' && *c->p <= '9') c->p++;
    }
    return c->p > b;
}

static bool value(Chk *c) {
    ws(c);
    if (++c->depth > 64) return false;
    bool ok;
    if (*c->p == '{' || *c->p == '[') {
        char close = *c->p == '{' ? '}' : ']';
        bool obj = close == '}';
        c->p++;
        ws(c);
        if (*c->p == close) {
            c->p++;
            ok = true;
        } else {
            ok = true;
            for (;;) {
                ws(c);
                if (obj) {
                    if (!string(c)) { ok = false; break; }
                    ws(c);
                    if (*c->p++ != ':') { ok = false; break; }
                }
                if (!value(c)) { ok = false; break; }
                ws(c);
                if (*c->p == ',') { c->p++; continue; }
                if (*c->p == close) { c->p++; break; }
                ok = false;
                break;
            }
        }
    } else if (*c->p == '"') {
        ok = string(c);
    } else if (!strncmp(c->p, "true", 4) || !strncmp(c->p, "null", 4)) {
        c->p += 4;
        ok = true;
    } else if (!strncmp(c->p, "false", 5)) {
        c->p += 5;
        ok = true;
    } else {
        ok = number(c);
    }
    c->depth--;
    return ok;
}

static bool valid_json(const char *s) {
    Chk c = {s, 0};
    if (!value(&c)) return false;
    ws(&c);
    return *c.p == 0;
}

/* ---- the writer ----------------------------------------------------------------------------- */
static void test_writer(void) {
    BgJson j;
    bg_json_init(&j);
    bg_json_object(&j, NULL);
    bg_json_string(&j, "plain", "abc");
    bg_json_string(&j, "escapes", "q\"b\\s/\n\t\r\b\f\x01\x1f end");
    bg_json_string(&j, "utf8", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    bg_json_string(&j, "bad utf8", "a\xff" "b\xc3" "c\xe2\x82" "d\xed\xa0\x80" "e\xc0\xaf");
    bg_json_string(&j, "null string", NULL);
    bg_json_string(&j, "key \"quoted\"\n", "v");
    bg_json_number(&j, "pi", 3.14159);
    bg_json_number(&j, "nan", NAN);
    bg_json_number(&j, "inf", -INFINITY);
    bg_json_number(&j, "negzero", -0.0);
    bg_json_number(&j, "big", 1e300);
    bg_json_int(&j, "int", -9007199254740993LL);
    bg_json_bool(&j, "t", true);
    bg_json_bool(&j, "f", false);
    bg_json_null(&j, "n");
    bg_json_array(&j, "empty array");
    bg_json_end_array(&j);
    bg_json_object(&j, "empty object");
    bg_json_end_object(&j);
    bg_json_array(&j, "mixed");
    bg_json_int(&j, "ignored key", 1);
    bg_json_object(&j, NULL);
    bg_json_array(&j, "inner");
    bg_json_string(&j, NULL, "x");
    bg_json_end_array(&j);
    bg_json_end_object(&j);
    bg_json_end_array(&j);
    bg_json_array(&j, "left open"); /* bg_json_take closes it and the object */
    bg_json_int(&j, NULL, 2);
    char *s = bg_json_take(&j);
    CHECK(valid_json(s));
    CHECK_STR_CONTAINS(s, "\"escapes\": \"q\\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f end\"");
    CHECK_STR_CONTAINS(s, "\"utf8\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    CHECK_STR_CONTAINS(s, "\"bad utf8\": \"a\\ufffdb\\ufffdc\\ufffd\\ufffdd\\ufffd\\ufffd\\ufffde\\ufffd\\ufffd\"");
    CHECK_STR_CONTAINS(s, "\"null string\": null");
    CHECK_STR_CONTAINS(s, "\"key \\\"quoted\\\"\\n\": \"v\"");
    CHECK_STR_CONTAINS(s, "\"pi\": 3.14159");
    CHECK_STR_CONTAINS(s, "\"nan\": null");
    CHECK_STR_CONTAINS(s, "\"inf\": null");
    CHECK_STR_CONTAINS(s, "\"negzero\": 0,");
    CHECK_STR_CONTAINS(s, "\"big\": 1e+300");
    CHECK_STR_CONTAINS(s, "\"int\": -9007199254740993");
    CHECK_STR_CONTAINS(s, "\"empty array\": [],");
    CHECK_STR_CONTAINS(s, "\"empty object\": {},");
    CHECK(s[strlen(s) - 1] == '\n');
    if (!valid_json(s)) fprintf(stderr, "%s", s);
    free(s);

    /* deeper than BG_JSON_MAX_DEPTH: still valid (the excess becomes null) */
    for (int i = 0; i < BG_JSON_MAX_DEPTH + 5; i++) bg_json_array(&j, NULL);
    bg_json_int(&j, NULL, 1);
    for (int i = 0; i < BG_JSON_MAX_DEPTH + 5; i++) bg_json_end_array(&j);
    s = bg_json_take(&j);
    CHECK(valid_json(s));
    free(s);
    /* the checker itself refuses broken text */
    CHECK(!valid_json("{\"a\": 1,}"));
    CHECK(!valid_json("[1 2]"));
    CHECK(!valid_json("\"\x01\""));
    CHECK(!valid_json("\"a\xff\""));
}

/* ---- bgnnc --json ------------------------------------------------------------------------- */
static char *run_capture(const char *cmd, int *status) {
    FILE *f = popen(cmd, "r");
    if (!f) return NULL;
    BgStrBuf b = {0};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) bg_sb_append(&b, buf, n);
    *status = pclose(f);
    return bg_sb_take(&b);
}

static void test_cli(void) {
    const char *bgnnc = getenv("BGNN_BGNNC"), *src = getenv("BGNN_SOURCE_DIR");
    if (!bgnnc || !src) {
        printf("note: BGNN_BGNNC / BGNN_SOURCE_DIR not set; bgnnc --json not checked\n");
        return;
    }
    char cmd[4096];
    int st;
    snprintf(cmd, sizeof cmd,
             "cd '%s/tests' && '%s' run diag/models/tiny_gcn.bgnn --data diag/data/edges_tiny "
             "--weights diag/data/weights/good.safetensors --json --repeat 3 2>/dev/null", src, bgnnc);
    char *s = run_capture(cmd, &st);
    CHECK(st == 0 && s && valid_json(s));
    CHECK_STR_CONTAINS(s, "\"ok\": true");
    CHECK_STR_CONTAINS(s, "\"target\": \"cpu\"");
    CHECK_STR_CONTAINS(s, "\"nodes\": 5");
    CHECK_STR_CONTAINS(s, "\"edges\": 6");
    CHECK_STR_CONTAINS(s, "\"test\": 50");
    CHECK_STR_CONTAINS(s, "\"repeat\": 3");
    CHECK_STR_CONTAINS(s, "\"inference\": ");
    free(s);
    snprintf(cmd, sizeof cmd,
             "cd '%s/tests' && '%s' run diag/models/tiny_gcn.bgnn --data diag/data/bad_edges "
             "--weights diag/data/weights/good.safetensors --json 2>/dev/null", src, bgnnc);
    s = run_capture(cmd, &st);
    CHECK(st != 0 && s && valid_json(s));
    CHECK_STR_CONTAINS(s, "\"ok\": false");
    CHECK_STR_CONTAINS(s, "\"exit_status\": 1");
    CHECK_STR_CONTAINS(s, "edges.txt:4: expected two node ids 'src dst', got '1 2x'");
    free(s);
    snprintf(cmd, sizeof cmd, "'%s' '%s/examples/sage_bin.bgnn' --stats --json --nodes=100 --edges=400", bgnnc, src);
    s = run_capture(cmd, &st);
    CHECK(st == 0 && s && valid_json(s));
    CHECK_STR_CONTAINS(s, "\"nodes\": 100");
    CHECK_STR_CONTAINS(s, "\"launches\": [");
    free(s);
}

int main(void) {
    test_writer();
    test_cli();
    return bg_test_finish();
}
