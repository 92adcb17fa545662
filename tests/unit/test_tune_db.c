/* test_tune_db.c - the schedule tuning database (plan/tune_db.c): file names and the
 * directory rule, a store/load round trip (sorted, byte-identical when stored again, the exact
 * text), merging, every kind of corrupt file (one warning, an empty database, a store over it
 * works), the line and file limits of what a store writes, refused records (nothing written),
 * leftover temporary files, a writer SIGKILLed at random moments while storing 20k records
 * (the file always loads whole, from one store, and the next store works), and four processes
 * storing 200 records each at once, one store a record (none lost).  About 2.5 s. */
#include "bgtest.h"
#include "tune_db.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *cat3(const char *a, const char *b, const char *c) {
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *p = malloc(n);
    snprintf(p, n, "%s%s%s", a, b, c);
    return p;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    size_t got = fread(p, 1, (size_t)n, f);
    fclose(f);
    p[got] = 0;
    if (len) *len = got;
    return p;
}

static void spill(const char *path, const char *data, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(data, 1, n, f) == n);
    fclose(f);
}

static bool exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

static bool is_dir_check(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int count_sev(const BgDiagSink *d, BgSeverity sev) {
    int n = 0;
    for (int i = 0; i < d->n; i++) n += d->items[i].sev == sev;
    return n;
}

static int count_tmp(const char *dir) {
    DIR *dd = opendir(dir);
    if (!dd) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dd))) n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(dd);
    return n;
}

static void rm_tree(const char *dir) { /* files and one level of subdirectories */
    DIR *dd = opendir(dir);
    if (!dd) return;
    struct dirent *e;
    while ((e = readdir(dd))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char *p = cat3(dir, "/", e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rm_tree(p);
        else unlink(p);
        free(p);
    }
    closedir(dd);
    rmdir(dir);
}

static void dump_diags(const BgDiagSink *d) {
    for (int i = 0; i < d->n; i++) fprintf(stderr, "  diag: %s\n", d->items[i].msg);
}

/* ---- names -------------------------------------------------------------------------------- */

static void check_path(const char *dir, const char *gpu, int sm, const char *want) {
    char *p = bg_tune_db_path(dir, gpu, sm);
    if (!want) {
        CHECK(p == NULL);
    } else {
        CHECK(p && strcmp(p, want) == 0);
        if (p && strcmp(p, want) != 0) fprintf(stderr, "  got %s, want %s\n", p, want);
    }
    free(p);
}

static char *save_env(const char *name) {
    const char *v = getenv(name);
    return v ? strdup(v) : NULL;
}
static void restore_env(const char *name, char *v) {
    if (v) setenv(name, v, 1);
    else unsetenv(name);
    free(v);
}

static void test_paths(void) {
    check_path("/x/d", "NVIDIA H100 80GB HBM3", 90, "/x/d/NVIDIA_H100_80GB_HBM3_sm90.tune");
    check_path("/x/d/", "NVIDIA H200", 90, "/x/d/NVIDIA_H200_sm90.tune");
    check_path("/x/d", "  Tesla V100-SXM2 (16GB) ", 70, "/x/d/Tesla_V100-SXM2_16GB_sm70.tune");
    check_path("/x/d", "a..b//c__d\te\xc3\xa9", 100, "/x/d/a_b_c_d_e_sm100.tune");
    check_path("/x/d", "", 80, "/x/d/unknown_sm80.tune");
    check_path("/x/d", "***", 80, "/x/d/unknown_sm80.tune");
    check_path("/", "G", 80, "/G_sm80.tune");
    check_path("rel", "G", 0, "rel/G_sm0.tune");
    check_path("/x/d", NULL, 80, NULL);
    check_path("/x/d", "G", -1, NULL);
    {   /* a long name is cut */
        char name[400];
        memset(name, 'a', sizeof name - 1);
        name[sizeof name - 1] = 0;
        char *p = bg_tune_db_path("/d", name, 90);
        CHECK(p && strlen(p) == strlen("/d/") + 200 + strlen("_sm90.tune"));
        free(p);
    }

    /* the environment rule */
    char *s_tune = save_env("BGNN_TUNE_DIR"), *s_xdg = save_env("XDG_CACHE_HOME"),
         *s_home = save_env("HOME");
    setenv("BGNN_TUNE_DIR", "/t/tune", 1);
    setenv("XDG_CACHE_HOME", "/x/xdg", 1);
    setenv("HOME", "/x/home", 1);
    check_path(NULL, "GPU A", 90, "/t/tune/GPU_A_sm90.tune");
    check_path("", "GPU A", 90, "/t/tune/GPU_A_sm90.tune");
    check_path("/given", "GPU A", 90, "/given/GPU_A_sm90.tune");
    setenv("BGNN_TUNE_DIR", "", 1); /* empty = unset */
    check_path(NULL, "GPU A", 90, "/x/xdg/bgnn/tune/GPU_A_sm90.tune");
    unsetenv("BGNN_TUNE_DIR");
    check_path(NULL, "GPU A", 90, "/x/xdg/bgnn/tune/GPU_A_sm90.tune");
    unsetenv("XDG_CACHE_HOME");
    check_path(NULL, "GPU A", 90, "/x/home/.cache/bgnn/tune/GPU_A_sm90.tune");
    unsetenv("HOME");
    check_path(NULL, "GPU A", 90, NULL);
    check_path("/given", "GPU A", 90, "/given/GPU_A_sm90.tune");
    restore_env("BGNN_TUNE_DIR", s_tune);
    restore_env("XDG_CACHE_HOME", s_xdg);
    restore_env("HOME", s_home);

    /* the store makes the directory (with parents) */
    const char *tmp = bg_test_tmpdir();
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    char *root = cat3(tmp, "/tune_env_", pid);
    s_tune = save_env("BGNN_TUNE_DIR");
    s_xdg = save_env("XDG_CACHE_HOME");
    unsetenv("BGNN_TUNE_DIR");
    setenv("XDG_CACHE_HOME", root, 1);
    char *p = bg_tune_db_path(NULL, "Dev X", 86);
    char *want = cat3(root, "/bgnn/tune/Dev_X_sm86.tune", "");
    CHECK(p && strcmp(p, want) == 0);
    BgDiagSink d;
    bg_diag_init(&d);
    BgTuneRecord r = {"op", "g", "s", 1.0, 2.0, 3};
    CHECK(p && bg_tune_db_store(p, &r, 1, "Dev X", 86, &d));
    CHECK_EQ_INT(d.n, 0);
    BgTuneDb *db = bg_tune_db_load(p, &d);
    CHECK_EQ_INT(bg_tune_db_count(db), 1);
    int sm = 0;
    CHECK(bg_tune_db_gpu(db, &sm) && strcmp(bg_tune_db_gpu(db, NULL), "Dev X") == 0);
    CHECK_EQ_INT(sm, 86);
    bg_tune_db_free(db);
    bg_diag_free(&d);
    free(p);
    free(want);
    restore_env("BGNN_TUNE_DIR", s_tune);
    restore_env("XDG_CACHE_HOME", s_xdg);
    rm_tree(root);
    free(root);
}

/* ---- round trip and merge ----------------------------------------------------------------- */

static void test_round_trip(const char *dir) {
    char *path = cat3(dir, "/rt/GPU_sm90.tune", "");
    BgDiagSink d;
    bg_diag_init(&d);

    /* a missing file: empty, silent */
    BgTuneDb *db = bg_tune_db_load(path, &d);
    CHECK(db != NULL);
    CHECK_EQ_INT(bg_tune_db_count(db), 0);
    CHECK_EQ_INT(d.n, 0);
    CHECK(bg_tune_db_find(db, "a", "b") == NULL);
    CHECK(bg_tune_db_at(db, 0) == NULL);
    CHECK(bg_tune_db_gpu(db, NULL) == NULL);
    bg_tune_db_free(db);
    db = bg_tune_db_load(NULL, &d); /* no path: empty */
    CHECK(db && bg_tune_db_count(db) == 0 && d.n == 0);
    bg_tune_db_free(db);

    BgTuneRecord recs[] = {
        {"spmm b1 64", "cora n=2708 e=10556", "warp/4 chunk=32", 12.3456, 20.0, 50},
        {"gemm", "g2", "tile 64x64", 3.0, 4.0005, 7},
        {"gemm", "g1", "tile 32x32", 1e-3, 1e6, 1},
        {"agg", "z", "x", 123456.789, 0.5, 9223372036854775807LL},
        {"Gemm", "g1", "upper case sorts first", 2.5, 2.5, 3},
        {"gemm", "g1 ", "trailing space is part of the key", 1.25, 1.5, 2},
    };
    int n = (int)(sizeof recs / sizeof recs[0]);
    CHECK(bg_tune_db_store(path, recs, n, "NVIDIA H100 80GB HBM3", 90, &d));
    CHECK_EQ_INT(d.n, 0);
    dump_diags(&d);
    size_t len1 = 0, len2 = 0;
    char *t1 = slurp(path, &len1);
    const char *want =
        "bgnn-tune 1\n"
        "# gpu: NVIDIA H100 80GB HBM3, sm_90\n"
        "Gemm\tg1\tupper case sorts first\t2.500\t2.500\t3\n"
        "agg\tz\tx\t123456.789\t0.500\t9223372036854775807\n"
        "gemm\tg1\ttile 32x32\t0.001\t1000000.000\t1\n"
        "gemm\tg1 \ttrailing space is part of the key\t1.250\t1.500\t2\n"
        "gemm\tg2\ttile 64x64\t3.000\t4.000\t7\n"
        "spmm b1 64\tcora n=2708 e=10556\twarp/4 chunk=32\t12.346\t20.000\t50\n";
    CHECK(t1 && strcmp(t1, want) == 0);
    if (t1 && strcmp(t1, want) != 0) fprintf(stderr, "got:\n%s", t1);

    db = bg_tune_db_load(path, &d);
    CHECK_EQ_INT(d.n, 0);
    CHECK_EQ_INT(bg_tune_db_count(db), n);
    for (int i = 0; i + 1 < bg_tune_db_count(db); i++) {
        const BgTuneRecord *a = bg_tune_db_at(db, i), *b = bg_tune_db_at(db, i + 1);
        int c = strcmp(a->op, b->op);
        CHECK(c < 0 || (c == 0 && strcmp(a->graph, b->graph) < 0));
    }
    for (int i = 0; i < n; i++) {
        const BgTuneRecord *r = bg_tune_db_find(db, recs[i].op, recs[i].graph);
        CHECK(r != NULL);
        if (!r) continue;
        CHECK(strcmp(r->sched, recs[i].sched) == 0);
        CHECK_NEAR(r->best_us, recs[i].best_us, 1e-3);
        CHECK_NEAR(r->default_us, recs[i].default_us, 1e-3);
        CHECK(r->samples == recs[i].samples);
    }
    CHECK(bg_tune_db_find(db, "gemm", "g3") == NULL);
    CHECK(bg_tune_db_find(db, "gem", "g1") == NULL);
    CHECK(bg_tune_db_find(db, "zzz", "g1") == NULL);
    CHECK(bg_tune_db_find(db, "Gemm", "g1 ") == NULL);
    CHECK(bg_tune_db_at(db, -1) == NULL && bg_tune_db_at(db, n) == NULL);
    int sm = 0;
    CHECK(bg_tune_db_gpu(db, &sm) &&
          strcmp(bg_tune_db_gpu(db, NULL), "NVIDIA H100 80GB HBM3") == 0);
    CHECK_EQ_INT(sm, 90);

    /* storing what was loaded again, and the same records again: the same bytes */
    BgTuneRecord again[16];
    for (int i = 0; i < bg_tune_db_count(db); i++) again[i] = *bg_tune_db_at(db, i);
    CHECK(bg_tune_db_store(path, again, bg_tune_db_count(db), "NVIDIA H100 80GB HBM3", 90, &d));
    bg_tune_db_free(db);
    char *t2 = slurp(path, &len2);
    CHECK(t1 && t2 && len1 == len2 && memcmp(t1, t2, len1) == 0);
    free(t2);
    CHECK(bg_tune_db_store(path, recs, n, "NVIDIA H100 80GB HBM3", 90, &d));
    t2 = slurp(path, &len2);
    CHECK(t1 && t2 && len1 == len2 && memcmp(t1, t2, len1) == 0);
    free(t2);
    CHECK(bg_tune_db_store(path, NULL, 0, "NVIDIA H100 80GB HBM3", 90, &d)); /* n = 0: as it is */
    t2 = slurp(path, &len2);
    CHECK(t1 && t2 && len1 == len2 && memcmp(t1, t2, len1) == 0);
    free(t2);
    CHECK_EQ_INT(d.n, 0);
    char *rt = cat3(dir, "/rt", "");
    CHECK_EQ_INT(count_tmp(rt), 0);
    free(rt);
    free(t1);

    /* merge: same key replaced, new ones added, the rest kept */
    BgTuneRecord upd[] = {
        {"gemm", "g2", "tile 128x32", 2.0, 4.0, 11},
        {"aaa", "first", "s", 1.0, 1.0, 1},
        {"zzz", "last", "s1", 9.0, 9.0, 1},
        {"zzz", "last", "s2 (the last of a key wins)", 8.0, 9.0, 2},
    };
    CHECK(bg_tune_db_store(path, upd, 4, "NVIDIA H100 80GB HBM3", 90, &d));
    CHECK_EQ_INT(d.n, 0);
    db = bg_tune_db_load(path, &d);
    CHECK_EQ_INT(d.n, 0);
    CHECK_EQ_INT(bg_tune_db_count(db), n + 2);
    const BgTuneRecord *r = bg_tune_db_find(db, "gemm", "g2");
    CHECK(r && strcmp(r->sched, "tile 128x32") == 0 && r->samples == 11 && r->best_us == 2.0);
    r = bg_tune_db_find(db, "zzz", "last");
    CHECK(r && strcmp(r->sched, "s2 (the last of a key wins)") == 0 && r->samples == 2);
    CHECK(bg_tune_db_at(db, 0) && strcmp(bg_tune_db_at(db, 0)->op, "Gemm") == 0);
    CHECK(bg_tune_db_at(db, 1) && strcmp(bg_tune_db_at(db, 1)->op, "aaa") == 0);
    CHECK(bg_tune_db_at(db, n + 1) && strcmp(bg_tune_db_at(db, n + 1)->op, "zzz") == 0);
    r = bg_tune_db_find(db, "gemm", "g1");
    CHECK(r && strcmp(r->sched, "tile 32x32") == 0);
    bg_tune_db_free(db);

    /* a store under another GPU name rewrites the "# gpu:" line (odd bytes as '?') */
    CHECK(bg_tune_db_store(path, NULL, 0, "Odd\tname\n, sm_1", 89, &d));
    db = bg_tune_db_load(path, &d);
    CHECK_EQ_INT(d.n, 0);
    CHECK(bg_tune_db_gpu(db, &sm) && strcmp(bg_tune_db_gpu(db, NULL), "Odd?name?, sm_1") == 0);
    CHECK_EQ_INT(sm, 89);
    CHECK_EQ_INT(bg_tune_db_count(db), n + 2);
    bg_tune_db_free(db);
    bg_diag_free(&d);
    free(path);
}

/* ---- corrupt files ------------------------------------------------------------------------ */

#define HDR "bgnn-tune 1\n# gpu: G, sm_90\n"
#define REC_A "a\tg\ts\t1.000\t2.000\t3\n"
#define REC_B "b\tg\ts\t1.000\t2.000\t3\n"

typedef struct {
    const char *what;
    const char *text;
    size_t len;       /* 0: strlen(text) */
    const char *want; /* in the message: ":LINE:" and a word of the reason */
    const char *why;
} Corrupt;

static void test_corrupt(const char *dir) {
    static const char nul_text[] = HDR "a\tg\ts\0x\t1.000\t2.000\t3\n";
    Corrupt cases[] = {
        {"empty file", "", 0, ":1:", "empty"},
        {"bad header", "bgnn-tune 2\n# gpu: G, sm_90\n" REC_A, 0, ":1:", "header"},
        {"header only", "bgnn-tune 1\n", 0, ":2:", "gpu"},
        {"bad gpu line", "bgnn-tune 1\n# GPU G\n" REC_A, 0, ":2:", "gpu"},
        {"gpu line without sm", "bgnn-tune 1\n# gpu: G\n" REC_A, 0, ":2:", "gpu"},
        {"5 fields", HDR "a\tg\ts\t1.000\t2.000\n", 0, ":3:", "6 TAB-separated fields, found 5"},
        {"7 fields", HDR REC_A "b\tg\ts\t1.000\t2.000\t3\t4\n", 0, ":4:", "found 7"},
        {"spaces for tabs", HDR "a g s 1.000 2.000 3\n", 0, ":3:", "found 1"},
        {"empty key", HDR "\tg\ts\t1.000\t2.000\t3\n", 0, ":3:", "empty op key"},
        {"empty schedule", HDR "a\tg\t\t1.000\t2.000\t3\n", 0, ":3:", "empty schedule"},
        {"letters", HDR "a\tg\ts\tabc\t2.000\t3\n", 0, ":3:", "best_us"},
        {"negative", HDR "a\tg\ts\t-1.000\t2.000\t3\n", 0, ":3:", "best_us"},
        {"zero", HDR "a\tg\ts\t1.000\t0.000\t3\n", 0, ":3:", "default_us"},
        {"nan", HDR "a\tg\ts\tnan\t2.000\t3\n", 0, ":3:", "best_us"},
        {"inf", HDR "a\tg\ts\t1.000\tinf\t3\n", 0, ":3:", "default_us"},
        {"exponent", HDR "a\tg\ts\t1e3\t2.000\t3\n", 0, ":3:", "best_us"},
        {"trailing dot", HDR "a\tg\ts\t1.\t2.000\t3\n", 0, ":3:", "best_us"},
        {"space in number", HDR "a\tg\ts\t 1.000\t2.000\t3\n", 0, ":3:", "best_us"},
        {"cut mid-record", HDR REC_A "b\tg\ts\t1", 0, ":4:", "newline"},
        {"below resolution", HDR "a\tg\ts\t0.0004\t2.000\t3\n", 0, ":3:", "best_us"},
        {"samples 0", HDR "a\tg\ts\t1.000\t2.000\t0\n", 0, ":3:", "samples"},
        {"samples negative", HDR "a\tg\ts\t1.000\t2.000\t-3\n", 0, ":3:", "samples"},
        {"samples fraction", HDR "a\tg\ts\t1.000\t2.000\t1.5\n", 0, ":3:", "samples"},
        {"samples overflow", HDR "a\tg\ts\t1.000\t2.000\t99999999999999999999\n", 0, ":3:",
         "samples"},
        {"unsorted op", HDR REC_B REC_A, 0, ":4:", "sorted"},
        {"unsorted graph", HDR "a\tz\ts\t1.000\t2.000\t3\n" REC_A, 0, ":4:", "sorted"},
        {"duplicate", HDR REC_A REC_B "b\tg\tother\t1.000\t2.000\t3\n", 0, ":5:", "duplicate"},
        {"NUL byte", nul_text, sizeof nul_text - 1, ":3:", "NUL"},
        {"no final newline", HDR REC_A "b\tg\ts\t1.000\t2.000\t3", 0, ":4:", "newline"},
        {"blank line", HDR REC_A "\n" REC_B, 0, ":4:", "empty line"},
        {"CRLF", "bgnn-tune 1\r\n# gpu: G, sm_90\r\n", 0, ":1:", "header"},
        {"CR in a record", HDR "a\tg\ts\t1.000\t2.000\t3\r\n", 0, ":3:", "samples"},
        {"control byte", HDR "a\x01\tg\ts\t1.000\t2.000\t3\n", 0, ":3:", "0x01"},
        {"non-ASCII byte", HDR "a\tg\xc3\xa9\ts\t1.000\t2.000\t3\n", 0, ":3:", "0xc3"},
        {"huge time", NULL, 0, ":3:", "best_us"},  /* 400 digits: not finite */
        {"long line", NULL, 0, ":3:", "limit"},    /* 70,000 bytes */
    };
    int ncases = (int)(sizeof cases / sizeof cases[0]);
    char *sub = cat3(dir, "/corrupt", "");
    mkdir(sub, 0755);
    char *path = cat3(sub, "/G_sm90.tune", "");
    for (int c = 0; c < ncases; c++) {
        char *text = (char *)cases[c].text, *owned = NULL;
        size_t len = cases[c].len ? cases[c].len : text ? strlen(text) : 0;
        if (!strcmp(cases[c].what, "huge time")) {
            BgStrBuf sb = {0};
            bg_sb_printf(&sb, HDR "a\tg\ts\t");
            for (int i = 0; i < 400; i++) bg_sb_append(&sb, "9", 1);
            bg_sb_printf(&sb, ".000\t2.000\t3\n");
            len = sb.n;
            text = owned = bg_sb_take(&sb);
        } else if (!strcmp(cases[c].what, "long line")) {
            BgStrBuf sb = {0};
            bg_sb_printf(&sb, HDR "a\t");
            for (int i = 0; i < 70000; i++) bg_sb_append(&sb, "g", 1);
            bg_sb_printf(&sb, "\ts\t1.000\t2.000\t3\n");
            len = sb.n;
            text = owned = bg_sb_take(&sb);
        }
        spill(path, text, len);
        BgDiagSink d;
        bg_diag_init(&d);
        BgTuneDb *db = bg_tune_db_load(path, &d);
        bool good = db && bg_tune_db_count(db) == 0 && d.n == 1 && d.nerrors == 0 &&
                    d.items[0].sev == BG_SEV_WARNING && d.items[0].code == BG_E_FORMAT &&
                    strstr(d.items[0].msg, path) && strstr(d.items[0].msg, cases[c].want) &&
                    strstr(d.items[0].msg, cases[c].why);
        CHECK(good);
        if (!good) {
            fprintf(stderr, "  case '%s' (want '%s', '%s'): %d records, %d diagnostics\n",
                    cases[c].what, cases[c].want, cases[c].why, bg_tune_db_count(db), d.n);
            dump_diags(&d);
        }
        bg_tune_db_free(db);
        bg_diag_free(&d);

        /* a store over it: one warning, the file rewritten with the new records alone */
        bg_diag_init(&d);
        BgTuneRecord r = {"new", "g", "s", 1.0, 2.0, 1};
        CHECK(bg_tune_db_store(path, &r, 1, "G", 90, &d));
        CHECK_EQ_INT(count_sev(&d, BG_SEV_WARNING), 1);
        CHECK_EQ_INT(d.nerrors, 0);
        bg_diag_free(&d);
        bg_diag_init(&d);
        db = bg_tune_db_load(path, &d);
        CHECK_EQ_INT(d.n, 0);
        CHECK_EQ_INT(bg_tune_db_count(db), 1);
        CHECK(bg_tune_db_find(db, "new", "g") != NULL);
        bg_tune_db_free(db);
        bg_diag_free(&d);
        free(owned);
    }

    /* over 64 MiB (a sparse file): one warning, no read; a store replaces it */
    {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        CHECK(fd >= 0);
        CHECK(write(fd, HDR, strlen(HDR)) == (ssize_t)strlen(HDR));
        CHECK(ftruncate(fd, (off_t)BG_TUNE_MAX_FILE + 1) == 0);
        close(fd);
        BgDiagSink d;
        bg_diag_init(&d);
        BgTuneDb *db = bg_tune_db_load(path, &d);
        CHECK(db && bg_tune_db_count(db) == 0);
        CHECK(d.n == 1 && d.items[0].sev == BG_SEV_WARNING && d.nerrors == 0);
        CHECK(d.n == 1 && strstr(d.items[0].msg, path) && strstr(d.items[0].msg, "limit"));
        bg_tune_db_free(db);
        BgTuneRecord r = {"x", "g", "s", 1.0, 2.0, 1};
        CHECK(bg_tune_db_store(path, &r, 1, "G", 90, &d));
        CHECK_EQ_INT(d.n, 2);
        CHECK_EQ_INT(d.nerrors, 0);
        bg_diag_free(&d);
        bg_diag_init(&d);
        db = bg_tune_db_load(path, &d);
        CHECK(d.n == 0 && bg_tune_db_count(db) == 1);
        bg_tune_db_free(db);
        bg_diag_free(&d);
    }

    /* a directory where the file should be: a warning on load, an error (nothing done) on store */
    {
        char *dpath = cat3(sub, "/D_sm90.tune", "");
        mkdir(dpath, 0755);
        BgDiagSink d;
        bg_diag_init(&d);
        BgTuneDb *db = bg_tune_db_load(dpath, &d);
        CHECK(db && bg_tune_db_count(db) == 0);
        CHECK(d.n == 1 && d.items[0].sev == BG_SEV_WARNING && d.items[0].code == BG_E_IO);
        bg_tune_db_free(db);
        bg_diag_free(&d);
        bg_diag_init(&d);
        BgTuneRecord r = {"x", "g", "s", 1.0, 2.0, 1};
        CHECK(!bg_tune_db_store(dpath, &r, 1, "G", 90, &d));
        CHECK(d.nerrors == 1);
        CHECK(is_dir_check(dpath));
        bg_diag_free(&d);
        rmdir(dpath);
        free(dpath);
    }
    /* numbers in another form load; a store writes them "%.3f" */
    {
        const char *lenient = HDR "a\tg\ts\t1\t2.5\t0003\n";
        spill(path, lenient, strlen(lenient));
        BgDiagSink d;
        bg_diag_init(&d);
        BgTuneDb *db = bg_tune_db_load(path, &d);
        CHECK(d.n == 0 && bg_tune_db_count(db) == 1);
        const BgTuneRecord *r = bg_tune_db_find(db, "a", "g");
        CHECK(r && r->best_us == 1.0 && r->default_us == 2.5 && r->samples == 3);
        bg_tune_db_free(db);
        CHECK(bg_tune_db_store(path, NULL, 0, "G", 90, &d));
        char *t = slurp(path, NULL);
        CHECK(t && strcmp(t, HDR "a\tg\ts\t1.000\t2.500\t3\n") == 0);
        free(t);
        CHECK_EQ_INT(d.n, 0);
        bg_diag_free(&d);
    }

    /* a record of the file that "%.3f" would make a line over the limit: nothing stored */
    {
        BgStrBuf sb = {0};
        bg_sb_printf(&sb, HDR "a\t");
        size_t room = BG_TUNE_MAX_LINE - strlen("a\t\ts\t1\t1\t1");
        for (size_t i = 0; i < room; i++) bg_sb_append(&sb, "g", 1);
        bg_sb_printf(&sb, "\ts\t1\t1\t1\n");
        size_t len = sb.n;
        char *text = bg_sb_take(&sb);
        spill(path, text, len);
        BgDiagSink d;
        bg_diag_init(&d);
        BgTuneDb *db = bg_tune_db_load(path, &d);
        CHECK(d.n == 0 && bg_tune_db_count(db) == 1);
        bg_tune_db_free(db);
        BgTuneRecord r = {"b", "g", "s", 1.0, 2.0, 1};
        CHECK(!bg_tune_db_store(path, &r, 1, "G", 90, &d));
        CHECK(d.n == 1 && d.nerrors == 1 && d.items[0].code == BG_E_LIMIT);
        size_t len2 = 0;
        char *after = slurp(path, &len2);
        CHECK(after && len2 == len && memcmp(after, text, len) == 0);
        CHECK_EQ_INT(count_tmp(sub), 0);
        free(after);
        free(text);
        bg_diag_free(&d);
    }

    free(path);
    free(sub);
}

/* A file just under 64 MiB whose records grow when written "%.3f": nothing stored.  On
 * /dev/shm when it has room (writing 128 MiB to a disk without fsync leaves the writeback to
 * slow down the fsyncs of the tests after it), else not tested. */
static void test_file_limit(const char *dir) {
    (void)dir;
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) != 0 || (double)vfs.f_bavail * vfs.f_frsize < 512.0 * (1 << 20) ||
        access("/dev/shm", W_OK) != 0) {
        printf("file limit: /dev/shm missing or under 512 MiB free; not tested\n");
        return;
    }
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    char *sub = cat3("/dev/shm/bgnn_tune_db_", pid, "");
    CHECK(mkdir(sub, 0700) == 0);
    char *path = cat3(sub, "/G_sm90.tune", "");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) goto done;
    size_t total = strlen(HDR);
    fputs(HDR, f);
    char line[64];
    for (int i = 0;; i++) {
        int k = snprintf(line, sizeof line, "op\tgraph %09d\tsched\t1\t1\t1\n", i);
        if (total + (size_t)k > BG_TUNE_MAX_FILE) break;
        fputs(line, f);
        total += (size_t)k;
    }
    CHECK(fclose(f) == 0);
    BgDiagSink d;
    bg_diag_init(&d);
    BgTuneRecord r = {"zz", "g", "s", 1.0, 2.0, 1};
    CHECK(!bg_tune_db_store(path, &r, 1, "G", 90, &d));
    CHECK(d.n == 1 && d.nerrors == 1 && d.items[0].code == BG_E_LIMIT);
    if (d.n == 1) CHECK_STR_CONTAINS(d.items[0].msg, "would be over");
    struct stat st;
    CHECK(stat(path, &st) == 0 && (size_t)st.st_size == total);
    CHECK_EQ_INT(count_tmp(sub), 0);
    bg_diag_free(&d);
done:
    rm_tree(sub);
    free(path);
    free(sub);
}

/* ---- refused records ---------------------------------------------------------------------- */

static void test_refused(const char *dir) {
    char *path = cat3(dir, "/refuse/G_sm90.tune", "");
    BgDiagSink d;
    bg_diag_init(&d);
    BgTuneRecord good = {"op", "g", "s", 1.0, 2.0, 3};
    CHECK(bg_tune_db_store(path, &good, 1, "G", 90, &d));
    CHECK_EQ_INT(d.n, 0);
    size_t len0 = 0;
    char *before = slurp(path, &len0);

    char *longkey = malloc(BG_TUNE_MAX_LINE + 1);
    memset(longkey, 'k', BG_TUNE_MAX_LINE);
    longkey[BG_TUNE_MAX_LINE] = 0;
    BgTuneRecord bad[] = {
        {"o\tp", "g", "s", 1.0, 2.0, 1},     {"op", "g\n", "s", 1.0, 2.0, 1},
        {"op", "g", "", 1.0, 2.0, 1},        {NULL, "g", "s", 1.0, 2.0, 1},
        {"op", NULL, "s", 1.0, 2.0, 1},      {"op", "g", NULL, 1.0, 2.0, 1},
        {"", "g", "s", 1.0, 2.0, 1},         {"op", "g", "s\r", 1.0, 2.0, 1},
        {"op", "g", "s", NAN, 2.0, 1},       {"op", "g", "s", 1.0, INFINITY, 1},
        {"op", "g", "s", -1.0, 2.0, 1},      {"op", "g", "s", 0.0, 2.0, 1},
        {"op", "g", "s", 1.0, 0.0001, 1},    {"op", "g", "s", 1.0, 2.0, 0},
        {"op", "g", "s", 1.0, 2.0, -5},      {longkey, "g", "s", 1.0, 2.0, 1},
        {"op", "g", "s\xc3\xa9", 1.0, 2.0, 1},
    };
    int nbad = (int)(sizeof bad / sizeof bad[0]);
    char *fresh = cat3(dir, "/refuse_fresh/sub", "");
    char *fresh_path = cat3(fresh, "/G_sm90.tune", "");
    for (int i = 0; i < nbad; i++) {
        BgTuneRecord two[3] = {
            {"new", "g", "s", 1.0, 1.0, 1}, bad[i], {"zzz", "g", "s", 1.0, 1.0, 1}};
        bg_diag_free(&d);
        bg_diag_init(&d);
        CHECK(!bg_tune_db_store(path, two, 3, "G", 90, &d));
        CHECK(d.nerrors == 1 && d.n == 1 && d.items[0].code == BG_E_WRITE);
        if (d.n == 1) CHECK_STR_CONTAINS(d.items[0].msg, "record 1");
        size_t len1 = 0;
        char *after = slurp(path, &len1);
        CHECK(before && after && len0 == len1 && memcmp(before, after, len0) == 0);
        free(after);
        CHECK(!bg_tune_db_store(fresh_path, two, 3, "G", 90, &d));
        CHECK(!exists(fresh_path) && !exists(fresh));
    }
    bg_diag_free(&d);
    bg_diag_init(&d);
    /* every bad record is named; a NULL GPU name, a negative sm, no path */
    CHECK(!bg_tune_db_store(path, bad, 5, "G", 90, &d));
    CHECK_EQ_INT(d.nerrors, 5);
    CHECK(!bg_tune_db_store(path, &good, 1, NULL, 90, &d));
    CHECK(!bg_tune_db_store(path, &good, 1, "G", -1, &d));
    CHECK(!bg_tune_db_store(NULL, &good, 1, "G", 90, &d));
    CHECK_EQ_INT(d.nerrors, 8);
    size_t len1 = 0;
    char *after = slurp(path, &len1);
    CHECK(before && after && len0 == len1 && memcmp(before, after, len0) == 0);
    free(after);
    /* the smallest time written as non-zero is accepted and read back */
    BgTuneRecord tiny = {"tiny", "g", "s", 0.0005, 0.001, 1};
    CHECK(bg_tune_db_store(path, &tiny, 1, "G", 90, &d));
    CHECK_EQ_INT(d.nerrors, 8);
    BgTuneDb *db = bg_tune_db_load(path, &d);
    CHECK(db && bg_tune_db_count(db) == 2 && d.n == 8);
    const BgTuneRecord *r = bg_tune_db_find(db, "tiny", "g");
    CHECK(r && r->best_us == 0.001);
    bg_tune_db_free(db);
    /* a key of the longest line allowed is stored and read back */
    size_t room = BG_TUNE_MAX_LINE - strlen("\tg\ts\t1.000\t2.000\t1");
    longkey[room] = 0;
    BgTuneRecord lng = {longkey, "g", "s", 1.0, 2.0, 1};
    CHECK(bg_tune_db_store(path, &lng, 1, "G", 90, &d));
    db = bg_tune_db_load(path, &d);
    CHECK(db && bg_tune_db_count(db) == 3 && d.n == 8);
    CHECK(bg_tune_db_find(db, longkey, "g") != NULL);
    bg_tune_db_free(db);
    longkey[room] = 'k';
    longkey[room + 1] = 0;
    CHECK(!bg_tune_db_store(path, &lng, 1, "G", 90, &d));
    CHECK_EQ_INT(d.nerrors, 9);
    free(longkey);
    free(before);
    free(fresh);
    free(fresh_path);
    bg_diag_free(&d);
    free(path);
}

/* ---- leftover temporary files ------------------------------------------------------------- */

static void test_leftovers(const char *dir) {
    char *sub = cat3(dir, "/left", "");
    mkdir(sub, 0755);
    char *path = cat3(sub, "/G_sm90.tune", "");
    char mine[64];
    snprintf(mine, sizeof mine, ".tmp.%ld", (long)getpid());
    char *t1 = cat3(path, ".tmp.12345", ""), *t2 = cat3(path, mine, ""),
         *t3 = cat3(path, ".tmp.keep", ""), *other = cat3(sub, "/H_sm90.tune.tmp.777", "");
    spill(t1, "bgnn-tune 1\n# gpu: G, sm_90\na\tg\ts\t1.0", 36);
    spill(t2, "garbage", 7);
    spill(t3, "not ours", 8);
    spill(other, "another database's", 18);
    BgDiagSink d;
    bg_diag_init(&d);
    BgTuneDb *db = bg_tune_db_load(path, &d); /* no file yet; the temps are not looked at */
    CHECK(db && bg_tune_db_count(db) == 0 && d.n == 0);
    bg_tune_db_free(db);
    BgTuneRecord r = {"op", "g", "s", 1.0, 2.0, 3};
    CHECK(bg_tune_db_store(path, &r, 1, "G", 90, &d));
    CHECK_EQ_INT(d.n, 0);
    CHECK(!exists(t1) && !exists(t2));
    CHECK(exists(t3) && exists(other));
    db = bg_tune_db_load(path, &d);
    CHECK(db && bg_tune_db_count(db) == 1 && d.n == 0);
    bg_tune_db_free(db);
    /* a leftover lock file is harmless too */
    char *lock = cat3(path, ".lock", "");
    CHECK(exists(lock));
    CHECK(bg_tune_db_store(path, &r, 1, "G", 90, &d));
    CHECK_EQ_INT(d.n, 0);
    free(lock);
    bg_diag_free(&d);
    free(t1);
    free(t2);
    free(t3);
    free(other);
    free(path);
    free(sub);
}

/* ---- a writer killed at random moments ---------------------------------------------------- */

#define BIG_N 20000

typedef struct {
    BgTuneRecord *recs;
    char (*op)[24];
    char (*graph)[32];
    char sched[32];
} Big;

static void big_init(Big *b) {
    b->recs = calloc(BIG_N, sizeof *b->recs);
    b->op = calloc(BIG_N, sizeof *b->op);
    b->graph = calloc(BIG_N, sizeof *b->graph);
    unsigned long long seed = 99;
    for (int i = 0; i < BIG_N; i++) { /* in no particular order */
        unsigned k = (unsigned)(bg_test_rand(&seed) % 1000000u);
        snprintf(b->op[i], sizeof b->op[i], "op %u", (unsigned)(i % 37));
        snprintf(b->graph[i], sizeof b->graph[i], "graph %05d-%06u", i, k);
        b->recs[i] = (BgTuneRecord){b->op[i], b->graph[i], b->sched, 1.0 + i * 0.001,
                                    2.0 + i * 0.5, 1 + i};
    }
}

static void big_free(Big *b) {
    free(b->recs);
    free(b->op);
    free(b->graph);
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void test_kill(const char *dir) {
    char *sub = cat3(dir, "/kill", "");
    char *path = cat3(sub, "/G_sm90.tune", "");
    Big b;
    big_init(&b);
    BgDiagSink d;
    bg_diag_init(&d);
    snprintf(b.sched, sizeof b.sched, "generation 0");
    double t0 = now_us();
    CHECK(bg_tune_db_store(path, b.recs, BIG_N, "G", 90, &d));
    double store_us = now_us() - t0;
    CHECK_EQ_INT(d.n, 0);
    size_t size0 = 0;
    free(slurp(path, &size0));

    unsigned long long seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 20);
    const int kills = 10;
    int mid_write = 0, newer = 0;
    for (int k = 0; k < kills; k++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid < 0) break; /* never kill(-1) */
        if (pid == 0) { /* the child: store new generations until killed */
            BgDiagSink cd;
            for (int gen = 1;; gen++) {
                bg_diag_init(&cd);
                snprintf(b.sched, sizeof b.sched, "generation %d.%d", k + 1, gen);
                if (!bg_tune_db_store(path, b.recs, BIG_N, "G", 90, &cd)) _exit(3);
                bg_diag_free(&cd);
            }
        }
        /* a few ms: somewhere in the first to the third store of the child */
        long delay = 500 + (long)(bg_test_rand(&seed) % (unsigned long long)(3 * store_us + 1));
        sleep_us(delay);
        kill(pid, SIGKILL);
        int st = 0;
        CHECK(waitpid(pid, &st, 0) == pid);
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        mid_write += count_tmp(sub) > 0;

        /* the file loads whole: every record from one and the same store */
        bg_diag_free(&d);
        bg_diag_init(&d);
        BgTuneDb *db = bg_tune_db_load(path, &d);
        CHECK_EQ_INT(d.n, 0);
        CHECK_EQ_INT(bg_tune_db_count(db), BIG_N + k);
        const BgTuneRecord *first = bg_tune_db_find(db, b.op[0], b.graph[0]);
        CHECK(first != NULL);
        bool one_version = first != NULL;
        for (int i = 0; i < BIG_N && first; i++) {
            const BgTuneRecord *r = bg_tune_db_find(db, b.op[i], b.graph[i]);
            if (!r || strcmp(r->sched, first->sched) != 0 || r->samples != 1 + i)
                one_version = false;
        }
        CHECK(one_version);
        if (first && strcmp(first->sched, "generation 0") != 0) newer++;
        for (int j = 0; j < k; j++) {
            char key[32];
            snprintf(key, sizeof key, "kill %d", j);
            CHECK(bg_tune_db_find(db, "parent", key) != NULL);
        }
        bg_tune_db_free(db);

        /* and a following store works, and clears the killed writer's temp file */
        char key[32];
        snprintf(key, sizeof key, "kill %d", k);
        BgTuneRecord r = {"parent", key, "s", 1.0, 1.0, 1};
        CHECK(bg_tune_db_store(path, &r, 1, "G", 90, &d));
        CHECK_EQ_INT(d.n, 0);
        CHECK_EQ_INT(count_tmp(sub), 0);
        db = bg_tune_db_load(path, &d);
        CHECK_EQ_INT(d.n, 0);
        CHECK_EQ_INT(bg_tune_db_count(db), BIG_N + k + 1);
        bg_tune_db_free(db);
    }
    printf("kill: %d records (%zu bytes) stored in %.1f ms; %d kills, %d left a temp file "
           "(killed mid-write), %d found a newer complete file\n",
           BIG_N, size0, store_us / 1000, kills, mid_write, newer);
    bg_diag_free(&d);
    big_free(&b);
    free(path);
    free(sub);
}

/* ---- concurrent writers ------------------------------------------------------------------- */

#define WRITERS 4
#define PER_WRITER 200

static void test_concurrent(const char *dir) {
    char *path = cat3(dir, "/conc/deeper/G_sm90.tune", ""); /* the writers race to make the dirs */
    int gate[2];
    CHECK(pipe(gate) == 0);
    pid_t pids[WRITERS];
    int started = 0;
    double t0 = now_us();
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        CHECK(pids[w] >= 0);
        if (pids[w] < 0) break; /* the ones started still run and are waited for */
        started++;
        if (pids[w] == 0) {
            close(gate[1]);
            char c;
            while (read(gate[0], &c, 1) < 0 && errno == EINTR) {
            } /* all start at once */
            int bad = 0;
            for (int i = 0; i < PER_WRITER; i++) {
                char op[32], graph[32], sched[48];
                snprintf(op, sizeof op, "writer %d", w);
                snprintf(graph, sizeof graph, "g%03d", i);
                snprintf(sched, sizeof sched, "s%d.%d", w, i);
                BgTuneRecord r[2] = {{op, graph, sched, 1.0 + i, 2.0 + w, 1 + i},
                                     {"shared", "key", sched, 1.0, 1.0, 1}};
                BgDiagSink cd;
                bg_diag_init(&cd);
                if (!bg_tune_db_store(path, r, 2, "G", 90, &cd) || cd.n) bad++;
                bg_diag_free(&cd);
            }
            _exit(bad ? 1 : 0);
        }
    }
    close(gate[0]);
    close(gate[1]);
    for (int w = 0; w < started; w++) {
        int st = 0;
        CHECK(waitpid(pids[w], &st, 0) == pids[w]);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    double ms = (now_us() - t0) / 1000;
    BgDiagSink d;
    bg_diag_init(&d);
    BgTuneDb *db = bg_tune_db_load(path, &d);
    CHECK_EQ_INT(d.n, 0);
    CHECK_EQ_INT(bg_tune_db_count(db), WRITERS * PER_WRITER + 1);
    int found = 0;
    for (int w = 0; w < WRITERS; w++)
        for (int i = 0; i < PER_WRITER; i++) {
            char op[32], graph[32], sched[48];
            snprintf(op, sizeof op, "writer %d", w);
            snprintf(graph, sizeof graph, "g%03d", i);
            snprintf(sched, sizeof sched, "s%d.%d", w, i);
            const BgTuneRecord *r = bg_tune_db_find(db, op, graph);
            found += r && strcmp(r->sched, sched) == 0 && r->samples == 1 + i;
        }
    CHECK_EQ_INT(found, WRITERS * PER_WRITER);
    const BgTuneRecord *sh = bg_tune_db_find(db, "shared", "key");
    CHECK(sh && strncmp(sh->sched, "s", 1) == 0 && strstr(sh->sched, ".199")); /* a writer's last */
    bg_tune_db_free(db);
    char *sub = cat3(dir, "/conc/deeper", "");
    CHECK_EQ_INT(count_tmp(sub), 0);
    printf("concurrent: %d writers x %d stores in %.0f ms\n", WRITERS, PER_WRITER, ms);
    free(sub);
    bg_diag_free(&d);
    free(path);
}

/* ---- numbers in another locale ------------------------------------------------------------ */

static void test_locale(const char *dir) {
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "ru_RU.UTF-8"};
    const char *got = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !got; i++)
        got = setlocale(LC_NUMERIC, names[i]);
    if (!got) {
        printf("locale: no locale with a decimal comma installed; not tested\n");
        return;
    }
    char *path = cat3(dir, "/locale_sm90.tune", "");
    BgDiagSink d;
    bg_diag_init(&d);
    BgTuneRecord r = {"op", "g", "s", 1.5, 2.25, 3};
    CHECK(bg_tune_db_store(path, &r, 1, "G", 90, &d));
    char *t = slurp(path, NULL);
    CHECK(t && strstr(t, "\t1.500\t2.250\t3\n"));
    free(t);
    BgTuneDb *db = bg_tune_db_load(path, &d);
    CHECK(d.n == 0 && bg_tune_db_count(db) == 1 && bg_tune_db_at(db, 0)->default_us == 2.25);
    bg_tune_db_free(db);
    bg_diag_free(&d);
    free(path);
    setlocale(LC_NUMERIC, "C");
}

int main(void) {
    const char *tmp = bg_test_tmpdir();
    mkdir(tmp, 0755);
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    char *dir = cat3(tmp, "/tune_db_", pid);
    rm_tree(dir);
    CHECK(mkdir(dir, 0755) == 0);

    double t0 = now_us(), t = t0;
    struct {
        const char *name;
        void (*fn)(const char *);
    } parts[] = {{"round trip", test_round_trip}, {"corrupt", test_corrupt},
                 {"file limit", test_file_limit}, {"refused", test_refused},
                 {"leftovers", test_leftovers},
                 {"locale", test_locale},         {"kill", test_kill},
                 {"concurrent", test_concurrent}};
    test_paths();
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        parts[i].fn(dir);
        double t2 = now_us();
        printf("  %-10s %6.0f ms\n", parts[i].name, (t2 - t) / 1000);
        t = t2;
    }
    printf("tune_db: %.0f ms in all\n", (now_us() - t0) / 1000);

    rm_tree(dir);
    free(dir);
    return bg_test_finish();
}
