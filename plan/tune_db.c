/* tune_db.c - the schedule tuning database (tune_db.h): one text file per GPU of the best
 * schedule measured for each (op key, graph key).  Loading is strict and forgiving at once:
 * any defect makes one warning and an empty database.  Storing merges under an flock on
 * PATH.lock and replaces the file atomically (temp file, fsync, rename), so concurrent or
 * killed writers never lose a record of another store nor leave a partial file. */
#include "tune_db.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define TUNE_HEADER "bgnn-tune 1"
#define TUNE_GPU_PREFIX "# gpu: "
#define TUNE_NAME_MAX 200 /* characters of a sanitised GPU name in a file name */

struct BgTuneDb {
    char *text;         /* the file, its lines cut into NUL-terminated fields; NULL if none */
    BgTuneRecord *recs; /* sorted by (op, graph); strings point into text */
    int n;
    const char *gpu;    /* from the "# gpu:" line (into text), NULL when none */
    int sm;
};

/* ---- small helpers ------------------------------------------------------------------------ */

/* Numbers are written and read in the C locale, whatever setlocale the host program did. */
typedef struct {
    locale_t c, old;
} CLocale;

static void c_locale_enter(CLocale *l) {
    l->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    l->old = l->c ? uselocale(l->c) : (locale_t)0;
}

static void c_locale_leave(CLocale *l) {
    if (!l->c) return;
    uselocale(l->old);
    freelocale(l->c);
}

static char *str_cat3(const char *a, const char *b, const char *c) {
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *p = malloc(la + lb + lc + 1);
    if (!p) return NULL;
    memcpy(p, a, la);
    memcpy(p + la, b, lb);
    memcpy(p + la + lb, c, lc + 1);
    return p;
}

static bool printable(unsigned char c) { return c >= 0x20 && c <= 0x7e; }

static bool key_ok(const char *s) {
    if (!s || !*s) return false;
    for (; *s; s++)
        if (!printable((unsigned char)*s)) return false;
    return true;
}

/* A short, printable rendition of a string for a message (at most 48 characters). */
static const char *show(const char *s, char buf[64]) {
    if (!s) return "(null)";
    size_t i = 0;
    for (; s[i] && i < 48; i++) buf[i] = printable((unsigned char)s[i]) ? s[i] : '?';
    if (s[i]) {
        memcpy(buf + i, "...", 4);
    } else {
        buf[i] = 0;
    }
    return buf;
}

static int key_cmp(const char *op1, const char *g1, const char *op2, const char *g2) {
    int c = strcmp(op1, op2);
    return c ? c : strcmp(g1, g2);
}

/* The directory part of path ("." when none); malloc'd or NULL. */
static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return str_cat3(".", "", "");
    size_t n = (size_t)(slash - path);
    while (n > 0 && path[n - 1] == '/') n--;
    if (n == 0) return str_cat3("/", "", "");
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, path, n);
    p[n] = 0;
    return p;
}

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* mkdir -p (0755 for new parts). */
static bool mkdirs(const char *dir) {
    if (is_dir(dir)) return true;
    char *p = str_cat3(dir, "", "");
    if (!p) return false;
    size_t n = strlen(p);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char saved = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            free(p);
            return false;
        }
        p[i] = saved;
    }
    bool ok = is_dir(p);
    free(p);
    return ok;
}

/* ---- the path ----------------------------------------------------------------------------- */

char *bg_tune_db_path(const char *dir, const char *gpu_name, int sm) {
    if (!gpu_name || sm < 0) return NULL;
    char *base = NULL;
    const char *e;
    if (dir && *dir) base = str_cat3(dir, "", "");
    else if ((e = getenv("BGNN_TUNE_DIR")) && *e) base = str_cat3(e, "", "");
    else if ((e = getenv("XDG_CACHE_HOME")) && *e) base = str_cat3(e, "/", "bgnn/tune");
    else if ((e = getenv("HOME")) && *e) base = str_cat3(e, "/", ".cache/bgnn/tune");
    if (!base) return NULL;
    size_t bl = strlen(base);
    while (bl > 1 && base[bl - 1] == '/') base[--bl] = 0;

    char name[TUNE_NAME_MAX + 1];
    size_t k = 0;
    for (const char *s = gpu_name; *s && k < TUNE_NAME_MAX; s++) {
        char c = *s;
        bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
        if (!keep) c = '_';
        if (c == '_' && (k == 0 || name[k - 1] == '_')) continue; /* collapse; no leading '_' */
        name[k++] = c;
    }
    while (k > 0 && name[k - 1] == '_') k--;
    name[k] = 0;
    if (k == 0) memcpy(name, "unknown", 8);

    char suffix[32];
    snprintf(suffix, sizeof suffix, "_sm%d.tune", sm);
    char *file = str_cat3(name, suffix, "");
    char *path = file ? str_cat3(base, strcmp(base, "/") == 0 ? "" : "/", file) : NULL;
    free(file);
    free(base);
    return path;
}

/* ---- reading and parsing ------------------------------------------------------------------ */

enum { READ_OK, READ_MISSING, READ_ERROR, READ_TOO_BIG, READ_NOMEM };

/* The whole file into malloc'd memory (NUL-terminated); on READ_ERROR, why says what. */
static int read_text(const char *path, char **text, size_t *len, char *why, size_t whyn) {
    *text = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return READ_MISSING;
        snprintf(why, whyn, "cannot open: %s", strerror(errno));
        return READ_ERROR;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whyn, "not a regular file");
        close(fd);
        return READ_ERROR;
    }
    if ((unsigned long long)st.st_size > BG_TUNE_MAX_FILE) {
        snprintf(why, whyn, "file is %lld bytes; the limit is %u", (long long)st.st_size,
                 BG_TUNE_MAX_FILE);
        close(fd);
        return READ_TOO_BIG;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0; /* +1: notices a file that grew */
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return READ_NOMEM;
    }
    for (;;) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(why, whyn, "read failed: %s", strerror(errno));
            free(buf);
            close(fd);
            return READ_ERROR;
        }
        if (r == 0) break;
        n += (size_t)r;
        if (n == cap) {
            if (cap > BG_TUNE_MAX_FILE) {
                snprintf(why, whyn, "file is over %u bytes", BG_TUNE_MAX_FILE);
                free(buf);
                close(fd);
                return READ_TOO_BIG;
            }
            size_t ncap = cap * 2;
            if (ncap > (size_t)BG_TUNE_MAX_FILE + 1) ncap = (size_t)BG_TUNE_MAX_FILE + 1;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                free(buf);
                close(fd);
                return READ_NOMEM;
            }
            buf = nb;
            cap = ncap;
        }
    }
    close(fd);
    buf[n] = 0;
    *text = buf;
    *len = n;
    return READ_OK;
}

/* A time the file can hold: finite, and not written "0.000" by "%.3f" (the double nearest
 * 0.0005 is above it, so every double from it up rounds to 0.001 or more). */
static bool time_ok(double v) { return isfinite(v) && v >= 0.0005; }

/* A time: digits, optionally '.' and digits, time_ok. */
static bool parse_time(const char *s, double *v) {
    const char *p = s;
    if (!(*p >= '0' && *p <= '9')) return false;
    while (*p >= '0' && *p <= '9') p++;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) return false;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p) return false;
    char *end;
    *v = strtod(s, &end);
    return *end == 0 && time_ok(*v);
}

/* Decimal digits only, at most max. */
static bool parse_uint(const char *s, int64_t max, int64_t *v) {
    if (!*s) return false;
    int64_t x = 0;
    for (const char *p = s; *p; p++) {
        if (!(*p >= '0' && *p <= '9')) return false;
        int dgt = *p - '0';
        if (x > (max - dgt) / 10) return false;
        x = x * 10 + dgt;
    }
    *v = x;
    return true;
}

static const char *const FIELD_NAMES[6] = {"op key", "graph key", "schedule", "best_us",
                                           "default_us", "samples"};

/* Parses text (cut in place) into db.  false with *line and why on the first defect. */
static bool parse(char *text, size_t len, BgTuneDb *db, int *line, char *why, size_t whyn) {
    char *p = text, *end = text + len;
    int nl = 0;
    for (size_t i = 0; i < len; i++) nl += text[i] == '\n';
    db->recs = malloc(sizeof(BgTuneRecord) * (size_t)(nl > 0 ? nl : 1));
    if (!db->recs) {
        snprintf(why, whyn, "out of memory");
        *line = 0;
        return false;
    }
    int ln = 0, prev_line = 0;
    if (len == 0) {
        *line = 1;
        snprintf(why, whyn, "empty file (expected the header '%s')", TUNE_HEADER);
        return false;
    }
    while (p < end) {
        ln++;
        *line = ln;
        char *eol = memchr(p, '\n', (size_t)(end - p));
        size_t ll = (size_t)((eol ? eol : end) - p);
        if (ll > BG_TUNE_MAX_LINE) {
            snprintf(why, whyn, "line is %zu bytes long; the limit is %u", ll, BG_TUNE_MAX_LINE);
            return false;
        }
        char *nul = memchr(p, 0, ll);
        if (nul) {
            snprintf(why, whyn, "NUL byte in column %d", (int)(nul - p) + 1);
            return false;
        }
        if (!eol) {
            snprintf(why, whyn, "no newline at the end of the file (truncated?)");
            return false;
        }
        *eol = 0;
        if (ln == 1) {
            if (strcmp(p, TUNE_HEADER) != 0) {
                snprintf(why, whyn, "bad header (expected '%s')", TUNE_HEADER);
                return false;
            }
        } else if (ln == 2) {
            if (strncmp(p, TUNE_GPU_PREFIX, strlen(TUNE_GPU_PREFIX)) != 0) {
                snprintf(why, whyn, "expected the line '%s<name>, sm_<NN>'", TUNE_GPU_PREFIX);
                return false;
            }
            char *name = p + strlen(TUNE_GPU_PREFIX), *sep = NULL;
            for (char *q = strstr(name, ", sm_"); q; q = strstr(q + 1, ", sm_")) sep = q;
            int64_t sm = 0;
            bool ok = sep && parse_uint(sep + 5, INT_MAX, &sm);
            for (char *q = name; ok && *q; q++) ok = printable((unsigned char)*q);
            if (!ok) {
                snprintf(why, whyn, "malformed '%s<name>, sm_<NN>' line", TUNE_GPU_PREFIX);
                return false;
            }
            *sep = 0;
            db->gpu = name;
            db->sm = (int)sm;
        } else {
            if (ll == 0) {
                snprintf(why, whyn, "empty line");
                return false;
            }
            char *f[6];
            int nf = 0;
            for (char *q = p;;) {
                char *tab = strchr(q, '\t');
                if (nf < 6) f[nf] = q;
                nf++;
                if (!tab) break;
                *tab = 0;
                q = tab + 1;
            }
            if (nf != 6) {
                snprintf(why, whyn, "expected 6 TAB-separated fields, found %d", nf);
                return false;
            }
            for (int i = 0; i < 6; i++) {
                if (!*f[i]) {
                    snprintf(why, whyn, "empty %s (field %d)", FIELD_NAMES[i], i + 1);
                    return false;
                }
                for (const char *q = f[i]; *q; q++)
                    if (!printable((unsigned char)*q)) {
                        snprintf(why, whyn, "byte 0x%02x in the %s (field %d)", (unsigned char)*q,
                                 FIELD_NAMES[i], i + 1);
                        return false;
                    }
            }
            BgTuneRecord r = {f[0], f[1], f[2], 0, 0, 0};
            if (!parse_time(f[3], &r.best_us) || !parse_time(f[4], &r.default_us)) {
                int i = parse_time(f[3], &r.best_us) ? 4 : 3;
                char sb[64];
                snprintf(why, whyn, "%s '%s' is not a positive decimal number", FIELD_NAMES[i],
                         show(f[i], sb));
                return false;
            }
            if (!parse_uint(f[5], INT64_MAX, &r.samples) || r.samples < 1) {
                char sb[64];
                snprintf(why, whyn, "samples '%s' is not a positive integer", show(f[5], sb));
                return false;
            }
            if (db->n > 0) {
                const BgTuneRecord *q = &db->recs[db->n - 1];
                int c = key_cmp(q->op, q->graph, r.op, r.graph);
                if (c == 0) {
                    snprintf(why, whyn, "duplicate key (the same op and graph as line %d)",
                             prev_line);
                    return false;
                }
                if (c > 0) {
                    snprintf(why, whyn,
                             "records not sorted by (op, graph): this key sorts before line %d's",
                             prev_line);
                    return false;
                }
            }
            db->recs[db->n++] = r;
            prev_line = ln;
        }
        p = eol + 1;
    }
    if (ln < 2) {
        *line = ln + 1;
        snprintf(why, whyn, "missing the '%s<name>, sm_<NN>' line", TUNE_GPU_PREFIX);
        return false;
    }
    return true;
}

static void db_clear(BgTuneDb *db) {
    free(db->text);
    free(db->recs);
    db->text = NULL;
    db->recs = NULL;
    db->n = 0;
    db->gpu = NULL;
    db->sm = -1;
}

/* Reads path into db.  0: done (missing, or valid); 1: the file was bad (warned with what
 * `ignoring` says, db empty); 2: it could not be read (why, nothing reported); -1: no memory. */
static int load_into(const char *path, BgTuneDb *db, const char *ignoring, BgDiagSink *d,
                     char *why, size_t whyn) {
    db_clear(db);
    size_t len;
    int rc = read_text(path, &db->text, &len, why, whyn);
    if (rc == READ_MISSING) return 0;
    if (rc == READ_NOMEM) return -1;
    if (rc == READ_ERROR) return 2;
    if (rc == READ_TOO_BIG) {
        bg_diag_at(d, BG_SEV_WARNING, BG_E_FORMAT, NULL, (BgLoc){0, 0}, "%s: %s; %s", path, why,
                   ignoring);
        return 1;
    }
    int line = 0;
    CLocale loc;
    c_locale_enter(&loc);
    bool ok = parse(db->text, len, db, &line, why, whyn);
    c_locale_leave(&loc);
    if (ok) return 0;
    if (line == 0) { /* out of memory */
        db_clear(db);
        return -1;
    }
    db_clear(db);
    bg_diag_at(d, BG_SEV_WARNING, BG_E_FORMAT, NULL, (BgLoc){0, 0}, "%s:%d: %s; %s", path, line,
               why, ignoring);
    return 1;
}

BgTuneDb *bg_tune_db_load(const char *path, BgDiagSink *d) {
    BgTuneDb *db = calloc(1, sizeof *db);
    if (!db) return NULL;
    db->sm = -1;
    if (!path) return db;
    char why[256];
    int rc = load_into(path, db, "the tuning database is ignored", d, why, sizeof why);
    if (rc < 0) {
        bg_tune_db_free(db);
        return NULL;
    }
    if (rc == 2)
        bg_diag_at(d, BG_SEV_WARNING, BG_E_IO, NULL, (BgLoc){0, 0},
                   "%s: %s; the tuning database is ignored", path, why);
    return db;
}

void bg_tune_db_free(BgTuneDb *db) {
    if (!db) return;
    db_clear(db);
    free(db);
}

int bg_tune_db_count(const BgTuneDb *db) { return db ? db->n : 0; }

const BgTuneRecord *bg_tune_db_at(const BgTuneDb *db, int i) {
    return db && i >= 0 && i < db->n ? &db->recs[i] : NULL;
}

const char *bg_tune_db_gpu(const BgTuneDb *db, int *sm) {
    if (sm) *sm = db && db->gpu ? db->sm : -1;
    return db ? db->gpu : NULL;
}

const BgTuneRecord *bg_tune_db_find(const BgTuneDb *db, const char *op, const char *graph) {
    if (!db || !op || !graph) return NULL;
    int lo = 0, hi = db->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = key_cmp(db->recs[mid].op, db->recs[mid].graph, op, graph);
        if (c == 0) return &db->recs[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* ---- storing ------------------------------------------------------------------------------ */

typedef struct {
    const BgTuneRecord *r;
    int idx;
} Ref;

static int ref_cmp(const void *a, const void *b) {
    const Ref *x = a, *y = b;
    int c = key_cmp(x->r->op, x->r->graph, y->r->op, y->r->graph);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* Checks one record; false with why. */
static bool record_ok(const BgTuneRecord *r, char *why, size_t whyn) {
    const char *names[3] = {"op key", "graph key", "schedule"};
    const char *s[3] = {r->op, r->graph, r->sched};
    for (int i = 0; i < 3; i++)
        if (!key_ok(s[i])) {
            snprintf(why, whyn, "the %s is %s", names[i],
                     !s[i] ? "NULL" : !*s[i] ? "empty" : "not printable ASCII (a TAB, a newline?)");
            return false;
        }
    double t[2] = {r->best_us, r->default_us};
    size_t numlen = 0;
    for (int i = 0; i < 2; i++) {
        char buf[512];
        if (!time_ok(t[i])) {
            snprintf(why, whyn, "%s %g is %s", i ? "default_us" : "best_us", t[i],
                     !isfinite(t[i]) || t[i] <= 0 ? "not a positive finite number"
                                                  : "below the file's resolution (0.001 us)");
            return false;
        }
        numlen += (size_t)snprintf(buf, sizeof buf, "%.3f", t[i]);
    }
    if (r->samples < 1) {
        snprintf(why, whyn, "samples %lld is not positive", (long long)r->samples);
        return false;
    }
    char cnt[32];
    numlen += (size_t)snprintf(cnt, sizeof cnt, "%lld", (long long)r->samples);
    size_t ll = strlen(r->op) + strlen(r->graph) + strlen(r->sched) + numlen + 5;
    if (ll > BG_TUNE_MAX_LINE) {
        snprintf(why, whyn, "its line would be over %u bytes", BG_TUNE_MAX_LINE);
        return false;
    }
    return true;
}

/* Removes PATH.tmp.<digits> left by killed writers (called under the lock: none is live). */
static void remove_stale_temps(const char *dir, const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *prefix = str_cat3(base, ".tmp.", "");
    DIR *dd = prefix ? opendir(dir) : NULL;
    if (dd) {
        size_t pl = strlen(prefix);
        struct dirent *e;
        while ((e = readdir(dd))) {
            const char *nm = e->d_name;
            if (strncmp(nm, prefix, pl) != 0 || !nm[pl]) continue;
            bool digits = true;
            for (const char *q = nm + pl; *q && digits; q++) digits = *q >= '0' && *q <= '9';
            if (!digits) continue;
            char *full = str_cat3(dir, "/", nm);
            if (full) unlink(full);
            free(full);
        }
        closedir(dd);
    }
    free(prefix);
}

enum { WRITE_OK, WRITE_IO, WRITE_FILE_OVER, WRITE_LINE_OVER };

/* Writes the merged file (old records, replaced or joined by the new ones) to f.  The new
 * records were checked; a record of the old file written anew (a number that it held in
 * another form) could still pass the line limit, and all of them the file's: *bad is then
 * the record (WRITE_LINE_OVER) and nothing must be kept. */
static int write_db(FILE *f, const BgTuneDb *old, const Ref *nw, int nn, const char *gpu_name,
                    int sm, const BgTuneRecord **bad) {
    unsigned long long total = 0;
    int k = fprintf(f, "%s\n%s", TUNE_HEADER, TUNE_GPU_PREFIX);
    if (k < 0) return WRITE_IO;
    total += (unsigned)k;
    for (const char *q = gpu_name; *q; q++, total++)
        if (putc(printable((unsigned char)*q) ? *q : '?', f) == EOF) return WRITE_IO;
    if ((k = fprintf(f, ", sm_%d\n", sm)) < 0) return WRITE_IO;
    total += (unsigned)k;
    int i = 0, j = 0;
    while (i < old->n || j < nn) {
        const BgTuneRecord *r;
        if (j == nn) r = &old->recs[i++];
        else if (i == old->n) r = nw[j++].r;
        else {
            int c = key_cmp(old->recs[i].op, old->recs[i].graph, nw[j].r->op, nw[j].r->graph);
            if (c < 0) r = &old->recs[i++];
            else {
                if (c == 0) i++; /* replaced */
                r = nw[j++].r;
            }
        }
        k = fprintf(f, "%s\t%s\t%s\t%.3f\t%.3f\t%lld\n", r->op, r->graph, r->sched, r->best_us,
                    r->default_us, (long long)r->samples);
        if (k < 0) return WRITE_IO;
        total += (unsigned)k;
        if ((unsigned)k - 1 > BG_TUNE_MAX_LINE) {
            *bad = r;
            return WRITE_LINE_OVER;
        }
        if (total > BG_TUNE_MAX_FILE) return WRITE_FILE_OVER;
    }
    return WRITE_OK;
}

bool bg_tune_db_store(const char *path, const BgTuneRecord *recs, int n, const char *gpu_name,
                      int sm, BgDiagSink *d) {
    if (!path || !*path) {
        bg_diag_error(d, BG_E_WRITE,
                      "no tuning database path (set BGNN_TUNE_DIR, XDG_CACHE_HOME or HOME)");
        return false;
    }
    bool bad = false;
    if (!gpu_name || sm < 0) {
        bg_diag_error(d, BG_E_WRITE, "%s: refusing to store: %s", path,
                      !gpu_name ? "no GPU name" : "negative sm");
        bad = true;
    }
    if (n < 0 || (n > 0 && !recs)) {
        bg_diag_error(d, BG_E_WRITE, "%s: refusing to store: no records array", path);
        return false;
    }
    CLocale loc;
    c_locale_enter(&loc);
    char why[256];
    for (int i = 0; i < n; i++) {
        if (!record_ok(&recs[i], why, sizeof why)) {
            char b1[64], b2[64];
            bg_diag_error(d, BG_E_WRITE,
                          "%s: refusing to store record %d (op '%s', graph '%s'): %s", path, i,
                          show(recs[i].op, b1), show(recs[i].graph, b2), why);
            bad = true;
        }
    }
    c_locale_leave(&loc);
    if (bad) return false;

    /* the new records sorted, the last of equal keys kept */
    Ref *nw = malloc(sizeof(Ref) * (size_t)(n > 0 ? n : 1));
    char *dir = dir_of(path);
    char *lockpath = str_cat3(path, ".lock", "");
    BgTuneDb old = {0};
    old.sm = -1;
    bool ok = false;
    int lockfd = -1;
    if (!nw || !dir || !lockpath) {
        bg_diag_error(d, BG_E_WRITE, "%s: out of memory", path);
        goto out;
    }
    for (int i = 0; i < n; i++) nw[i] = (Ref){&recs[i], i};
    qsort(nw, (size_t)n, sizeof *nw, ref_cmp);
    int nn = 0;
    for (int i = 0; i < n; i++) {
        const BgTuneRecord *a = nw[i].r, *b = i + 1 < n ? nw[i + 1].r : NULL;
        if (b && key_cmp(a->op, a->graph, b->op, b->graph) == 0) continue;
        nw[nn++] = nw[i];
    }

    if (!mkdirs(dir)) {
        bg_diag_error(d, BG_E_WRITE, "%s: cannot create the directory '%s': %s", path, dir,
                      strerror(errno));
        goto out;
    }
    lockfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lockfd < 0) {
        bg_diag_error(d, BG_E_WRITE, "%s: cannot open the lock file '%s': %s", path, lockpath,
                      strerror(errno));
        goto out;
    }
    while (flock(lockfd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        bg_diag_error(d, BG_E_WRITE, "%s: cannot lock '%s': %s", path, lockpath, strerror(errno));
        goto out;
    }

    /* under the lock: the current records, merged with the new, written whole */
    int rc = load_into(path, &old, "its records are dropped and the file rewritten", d, why,
                       sizeof why);
    if (rc < 0) {
        bg_diag_error(d, BG_E_WRITE, "%s: out of memory", path);
        goto out;
    }
    if (rc == 2) {
        bg_diag_error(d, BG_E_IO, "%s: %s; nothing stored", path, why);
        goto out;
    }
    remove_stale_temps(dir, path);

    /* streamed to PATH.tmp.PID, renamed over path once complete and on disk */
    char *tmp = NULL;
    FILE *f = bg_atomic_create(path, &tmp, d);
    if (f) {
        const BgTuneRecord *badrec = NULL;
        c_locale_enter(&loc);
        int wrc = write_db(f, &old, nw, nn, gpu_name, sm, &badrec);
        c_locale_leave(&loc);
        if (wrc == WRITE_FILE_OVER || wrc == WRITE_LINE_OVER) {
            BgDiagSink quiet; /* the temp file goes; the one error is the limit */
            bg_diag_init(&quiet);
            bg_atomic_finish(f, tmp, path, false, &quiet);
            bg_diag_free(&quiet);
            char b1[64], b2[64];
            if (wrc == WRITE_FILE_OVER)
                bg_diag_error(d, BG_E_LIMIT,
                              "%s: the database would be over %u bytes; nothing stored", path,
                              BG_TUNE_MAX_FILE);
            else
                bg_diag_error(d, BG_E_LIMIT,
                              "%s: the record (op '%s', graph '%s') would be a line over %u bytes; "
                              "nothing stored", path, show(badrec->op, b1), show(badrec->graph, b2),
                              BG_TUNE_MAX_LINE);
        } else {
            bool wok = wrc == WRITE_OK && fflush(f) == 0 && fsync(fileno(f)) == 0;
            ok = bg_atomic_finish(f, tmp, path, wok, d);
        }
    }

out:
    if (lockfd >= 0) close(lockfd); /* unlocks */
    db_clear(&old);
    free(lockpath);
    free(dir);
    free(nw);
    return ok;
}
