/* test_cache.c - the on-disk JIT cache: keys, directory choice, store/load, corruption
 * detection (flipped byte, truncation, bad magic, trailing bytes: reported and deleted),
 * $BGNN_CACHE_DISABLE, and that atomic stores leave no temporary files behind. */
#include "bgtest.h"
#include "gpu.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static char *cat3(const char *a, const char *b, const char *c) {
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *p = malloc(n);
    snprintf(p, n, "%s%s%s", a, b, c);
    return p;
}

static long file_size(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
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

static void rm_tree1(const char *dir) { /* one level of files, then the dir */
    DIR *dd = opendir(dir);
    if (!dd) return;
    struct dirent *e;
    while ((e = readdir(dd))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char *p = cat3(dir, "/", e->d_name);
        unlink(p);
        free(p);
    }
    closedir(dd);
    rmdir(dir);
}

/* Overwrite one byte at off (or truncate to off when trunc). */
static void poke(const char *path, long off, int byte, int trunc) {
    if (trunc) {
        CHECK(truncate(path, off) == 0);
        return;
    }
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, off, SEEK_SET);
    int c = fgetc(f);
    fseek(f, off, SEEK_SET);
    fputc(byte < 0 ? (c ^ 0x01) : byte, f);
    fclose(f);
}

static int has_warning(const BgDiagSink *d, int code) {
    for (int i = 0; i < d->n; i++)
        if (d->items[i].sev == BG_SEV_WARNING && d->items[i].code == code) return 1;
    return 0;
}

int main(void) {
    unsetenv("BGNN_CACHE_DISABLE");
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    char *root = cat3(bg_test_tmpdir(), "/bgnn_cache_test.", pid);
    char *dir = cat3(root, "/a/b", ""); /* nested: store must create parents */

    /* keys */
    char k1[65], k2[65], k3[65], k4[65];
    bg_cache_key("src", "-std=c++17\n", "sm_90", "13.0", k1);
    bg_cache_key("src", "-std=c++17\n", "sm_90", "13.0", k2);
    CHECK(strcmp(k1, k2) == 0);
    CHECK_EQ_INT(strlen(k1), 64);
    bg_cache_key("src", "-std=c++17\n", "sm_80", "13.0", k3);
    CHECK(strcmp(k1, k3) != 0);
    bg_cache_key("sr", "c-std=c++17\n", "sm_90", "13.0", k4); /* separators matter */
    CHECK(strcmp(k1, k4) != 0);
    bg_cache_key("src", "-std=c++17\n", "sm_90", "12.4", k4);
    CHECK(strcmp(k1, k4) != 0);
    {   /* the documented layout: sha256(source NUL options NUL arch NUL nvrtc NUL version) */
        const char raw[] = "src\0-std=c++17\n\0sm_90\0" "13.0\0" BG_VERSION_STRING;
        char want[65];
        bg_sha256_hex(raw, sizeof raw - 1, want);
        CHECK(strcmp(k1, want) == 0);
    }

    /* default directory */
    {
        char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
        setenv("BGNN_CACHE_DIR", "/x/cache", 1);
        setenv("XDG_CACHE_HOME", "/x/xdg", 1);
        char *p = bg_cache_default_dir();
        CHECK(p && strcmp(p, "/x/cache") == 0);
        free(p);
        unsetenv("BGNN_CACHE_DIR");
        p = bg_cache_default_dir();
        CHECK(p && strcmp(p, "/x/xdg/bgnn") == 0);
        free(p);
        unsetenv("XDG_CACHE_HOME");
        setenv("HOME", "/x/home", 1);
        p = bg_cache_default_dir();
        CHECK(p && strcmp(p, "/x/home/.cache/bgnn") == 0);
        free(p);
        if (saved_home) setenv("HOME", saved_home, 1);
        free(saved_home);
    }

    /* store + hit */
    unsigned char payload[1000];
    unsigned long long seed = 7;
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (unsigned char)bg_test_rand(&seed);
    BgDiagSink d;
    bg_diag_init(&d);
    CHECK(bg_cache_store(dir, k1, payload, sizeof payload, 1, &d));
    CHECK_EQ_INT(d.n, 0);
    char *entry = cat3(dir, "/", k1);
    char *entry_path = cat3(entry, ".cubin", "");
    free(entry);
    CHECK_EQ_INT(file_size(entry_path), BG_CACHE_HEADER_BYTES + (long)sizeof payload);
    unsigned char *got = NULL;
    size_t len = 0;
    BgCacheStatus st = BG_CACHE_CORRUPT;
    CHECK(bg_cache_load(dir, k1, &got, &len, &st));
    CHECK_EQ_INT(st, BG_CACHE_HIT);
    CHECK_EQ_INT(len, sizeof payload);
    CHECK(got && memcmp(got, payload, sizeof payload) == 0);
    free(got);

    /* misses */
    CHECK(!bg_cache_load(dir, k3, &got, &len, &st));
    CHECK_EQ_INT(st, BG_CACHE_MISS);
    CHECK(got == NULL);
    CHECK(!bg_cache_load(dir, "../../etc/passwd", &got, &len, &st)); /* not a key */
    CHECK_EQ_INT(st, BG_CACHE_MISS);
    CHECK(!bg_cache_load(root, k1, &got, &len, &st)); /* other directory */
    CHECK_EQ_INT(st, BG_CACHE_MISS);

    /* corruption: flipped payload byte, flipped checksum byte, truncation, bad magic,
     * trailing garbage, a file shorter than the header, a wrong length field */
    struct { long off; int byte; int trunc; const char *what; } cases[] = {
        {BG_CACHE_HEADER_BYTES + 500, -1, 0, "payload byte"},
        {20, -1, 0, "checksum byte"},
        {BG_CACHE_HEADER_BYTES + 999, 0, 1, "truncated payload"},
        {0, 'X', 0, "bad magic"},
        {12, -1, 0, "length field"},
        {10, 0, 1, "short header"},
        {0, 0, 1, "empty file"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        CHECK(bg_cache_store(dir, k1, payload, sizeof payload, 100 + c, &d));
        poke(entry_path, cases[c].off, cases[c].byte, cases[c].trunc);
        got = NULL;
        st = BG_CACHE_HIT;
        bool hit = bg_cache_load(dir, k1, &got, &len, &st);
        CHECK(!hit);
        CHECK_EQ_INT(st, BG_CACHE_CORRUPT);
        CHECK(got == NULL);
        CHECK_EQ_INT(file_size(entry_path), -1); /* deleted */
        if (hit || st != BG_CACHE_CORRUPT) fprintf(stderr, "  case: %s\n", cases[c].what);
        free(got);
        /* the next load is a plain miss */
        CHECK(!bg_cache_load(dir, k1, &got, &len, &st));
        CHECK_EQ_INT(st, BG_CACHE_MISS);
    }
    {   /* trailing bytes after the payload */
        CHECK(bg_cache_store(dir, k1, payload, sizeof payload, 200, &d));
        FILE *f = fopen(entry_path, "ab");
        CHECK(f != NULL);
        if (f) {
            fputc('!', f);
            fclose(f);
        }
        CHECK(!bg_cache_load(dir, k1, &got, &len, &st));
        CHECK_EQ_INT(st, BG_CACHE_CORRUPT);
        CHECK_EQ_INT(file_size(entry_path), -1);
    }

    /* rebuild after corruption: store again, hit again; overwriting an entry works */
    CHECK(bg_cache_store(dir, k1, payload, 10, 0, &d));
    CHECK(bg_cache_store(dir, k1, payload, sizeof payload, 0, &d));
    CHECK(bg_cache_load(dir, k1, &got, &len, &st));
    CHECK_EQ_INT(len, sizeof payload);
    free(got);

    /* empty payload */
    CHECK(bg_cache_store(dir, k3, "", 0, 0, &d));
    got = NULL;
    CHECK(bg_cache_load(dir, k3, &got, &len, &st));
    CHECK_EQ_INT(st, BG_CACHE_HIT);
    CHECK_EQ_INT(len, 0);
    free(got);

    /* disabled: lookups miss (the entry stays), stores write nothing */
    setenv("BGNN_CACHE_DISABLE", "1", 1);
    CHECK(bg_cache_disabled());
    CHECK(!bg_cache_load(dir, k1, &got, &len, &st));
    CHECK_EQ_INT(st, BG_CACHE_MISS);
    CHECK(file_size(entry_path) > 0);
    CHECK(bg_cache_store(dir, k4, payload, sizeof payload, 0, &d));
    setenv("BGNN_CACHE_DISABLE", "0", 1);
    CHECK(!bg_cache_disabled());
    CHECK(!bg_cache_load(dir, k4, &got, &len, &st)); /* nothing was written */
    CHECK_EQ_INT(st, BG_CACHE_MISS);
    CHECK(bg_cache_load(dir, k1, &got, &len, &st));
    free(got);
    unsetenv("BGNN_CACHE_DISABLE");

    /* atomic: no temporary files left behind */
    CHECK_EQ_INT(count_tmp(dir), 0);
    CHECK_EQ_INT(d.n, 0);

    /* a store that cannot happen is a warning, not an error */
    {
        char *file_as_dir = cat3(entry_path, "/sub", "");
        BgDiagSink d2;
        bg_diag_init(&d2);
        CHECK(!bg_cache_store(file_as_dir, k1, payload, sizeof payload, 0, &d2));
        CHECK_EQ_INT(d2.nerrors, 0);
        CHECK(has_warning(&d2, BG_E_WRITE));
        CHECK(!bg_cache_store(dir, "nothex", payload, 4, 0, &d2));
        CHECK_EQ_INT(d2.nerrors, 0);
        bg_diag_free(&d2);
        free(file_as_dir);
    }
    /* mkdirs on an existing directory, and a path with trailing slashes */
    CHECK(bg_cache_mkdirs(dir));
    {
        char *p = cat3(root, "/c//d/", "");
        CHECK(bg_cache_mkdirs(p));
        char *q = cat3(root, "/c/d", "");
        struct stat sb;
        CHECK(stat(q, &sb) == 0 && S_ISDIR(sb.st_mode));
        rmdir(q);
        free(q);
        free(p);
        p = cat3(root, "/c", "");
        rmdir(p);
        free(p);
    }

    bg_diag_free(&d);
    rm_tree1(dir);
    char *ab = cat3(root, "/a", "");
    rmdir(ab);
    free(ab);
    rmdir(root);
    free(entry_path);
    free(dir);
    free(root);
    return bg_test_finish();
}
