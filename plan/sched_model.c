/* sched_model.c - reads the learned schedule predictor's trees (sched_model.h) and walks them. */
#include "sched_model.h"
#include "tune_db.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Node {
    int feature; /* -1: a leaf */
    double threshold;
    int left, right, value;
} Node;

typedef struct Tree {
    char *family, *knob;
    Node *nodes;
    int n;
} Tree;

struct BgSchedModel {
    Tree *trees;
    int n;
};

char *bg_sched_model_path(const char *dir, const char *gpu_name, int sm) {
    char *p = bg_tune_db_path(dir, gpu_name, sm);
    if (!p) return NULL;
    size_t l = strlen(p);
    if (l > 5 && strcmp(p + l - 5, ".tune") == 0) {
        p = realloc(p, l + 2);
        if (!p) return NULL;
        strcpy(p + l - 5, ".model");
    }
    return p;
}

static void free_trees(BgSchedModel *m) {
    for (int i = 0; i < m->n; i++) {
        free(m->trees[i].family);
        free(m->trees[i].knob);
        free(m->trees[i].nodes);
    }
    free(m->trees);
    m->trees = NULL;
    m->n = 0;
}

static char *dupn(const char *s, size_t n) {
    char *r = malloc(n + 1);
    if (!r) return NULL;
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

const char *const bg_sched_model_knobs[BG_SCHED_MODEL_NKNOBS] = {"block", "grid", "chunk", "group", "fb", "lanes"};

/* Parses the text; false with why and the line on the first problem. */
static bool parse(BgSchedModel *m, char *text, size_t len, int *line, char *why, size_t nw) {
    const char *const *knobs = bg_sched_model_knobs;
    if (memchr(text, 0, len)) {
        snprintf(why, nw, "a NUL byte");
        return false;
    }
    char *save = NULL;
    *line = 0;
    Tree *cur = NULL;
    int expect = 0; /* node lines still owed to cur */
    if (len == 0 || text[len - 1] != '\n') {
        snprintf(why, nw, "the file does not end in a newline");
        return false;
    }
    for (char *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        (*line)++;
        if (*line == 1) {
            if (strcmp(ln, "bgnn-sched-model 1") != 0) {
                snprintf(why, nw, "expected 'bgnn-sched-model 1'");
                return false;
            }
            continue;
        }
        if (ln[0] == '#') continue;
        if (expect > 0) {
            Node *nd = &cur->nodes[cur->n - expect];
            const int id = cur->n - expect;
            int gid, f, l, r, v;
            double t;
            char tail;
            if (sscanf(ln, "node %d %d %lf %d %d %c", &gid, &f, &t, &l, &r, &tail) == 5) {
                if (gid != id || f < 0 || f >= BG_SCHED_MODEL_NFEAT || !isfinite(t) || l <= id || r <= id ||
                    l >= cur->n || r >= cur->n) {
                    snprintf(why, nw, "bad node (id %d, feature 0..%d, children after it and below %d)", id,
                             BG_SCHED_MODEL_NFEAT - 1, cur->n);
                    return false;
                }
                *nd = (Node){f, t, l, r, 0};
            } else if (sscanf(ln, "leaf %d %d %c", &gid, &v, &tail) == 2) {
                if (gid != id || v < -1 || v > 4096) {
                    snprintf(why, nw, "bad leaf (id %d, value -1..4096)", id);
                    return false;
                }
                *nd = (Node){-1, 0, 0, 0, v};
            } else {
                snprintf(why, nw, "expected node %d of the tree", id);
                return false;
            }
            expect--;
            continue;
        }
        char *t1 = strchr(ln, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        int nn = 0;
        char tail;
        if (strncmp(ln, "tree ", 5) != 0 || !t1 || !t2 || t1 == ln + 5 || sscanf(t2 + 1, "%d %c", &nn, &tail) != 1 ||
            nn < 1 || nn > 100000) {
            snprintf(why, nw, "expected 'tree FAMILY<TAB>KNOB<TAB>NODES'");
            return false;
        }
        bool known = false;
        for (int k = 0; k < BG_SCHED_MODEL_NKNOBS; k++) known |= (size_t)(t2 - t1 - 1) == strlen(knobs[k]) && !strncmp(t1 + 1, knobs[k], strlen(knobs[k]));
        if (!known) {
            snprintf(why, nw, "unknown knob");
            return false;
        }
        Tree *nt = realloc(m->trees, sizeof *nt * (size_t)(m->n + 1));
        if (!nt) return false;
        m->trees = nt;
        cur = &m->trees[m->n++];
        cur->family = dupn(ln + 5, (size_t)(t1 - ln - 5));
        cur->knob = dupn(t1 + 1, (size_t)(t2 - t1 - 1));
        cur->nodes = calloc((size_t)nn, sizeof *cur->nodes);
        cur->n = nn;
        if (!cur->family || !cur->knob || !cur->nodes) return false;
        expect = nn;
    }
    if (*line == 0) {
        snprintf(why, nw, "empty file");
        return false;
    }
    if (expect > 0) {
        snprintf(why, nw, "the last tree lacks %d node lines", expect);
        return false;
    }
    return true;
}

BgSchedModel *bg_sched_model_load(const char *path, BgDiagSink *d) {
    BgSchedModel *m = calloc(1, sizeof *m);
    if (!m || !path) return m;
    FILE *f = fopen(path, "rb");
    if (!f) return m; /* no model: the defaults */
    fclose(f);
    BgDiagSink quiet;
    bg_diag_init(&quiet);
    size_t len = 0;
    char *text = bg_read_file(path, &len, &quiet);
    bg_diag_free(&quiet);
    char why[160] = "cannot be read";
    int line = 0;
    if (!text || len > BG_SCHED_MODEL_MAX_FILE || !parse(m, text, len, &line, why, sizeof why)) {
        if (text && len > BG_SCHED_MODEL_MAX_FILE) snprintf(why, sizeof why, "over %u bytes", BG_SCHED_MODEL_MAX_FILE);
        bg_diag_at(d, BG_SEV_WARNING, BG_E_FORMAT, NULL, (BgLoc){0}, "%s:%d: %s; the schedule model is ignored", path,
                   line, why);
        free_trees(m);
    }
    free(text);
    return m;
}

/* the files plan/models/NAME.model, embedded at build time (tools/embed_templates.cmake) */
typedef struct { const char *name; const char *text; } BgBuiltinModel;
extern const BgBuiltinModel bg_builtin_sched_models[];

BgSchedModel *bg_sched_model_builtin(const char *gpu_name, int sm, char **name) {
    BgSchedModel *m = calloc(1, sizeof *m);
    if (name) *name = NULL;
    char *p = bg_sched_model_path("/", gpu_name, sm);
    const char *base = p ? strrchr(p, '/') : NULL;
    for (int k = 0; m && base && bg_builtin_sched_models[k].name; k++) {
        if (strcmp(bg_builtin_sched_models[k].name, base + 1) != 0) continue;
        const size_t len = strlen(bg_builtin_sched_models[k].text);
        char *text = bg_xmalloc(len + 1); /* parse cuts the text into tokens */
        memcpy(text, bg_builtin_sched_models[k].text, len + 1);
        int line = 0;
        char why[160];
        const bool ok = parse(m, text, len, &line, why, sizeof why); /* tests/unit/test_sched.c: always */
        free(text);
        if (!ok) free_trees(m);
        if (ok && name) {
            BgStrBuf o = {0};
            bg_sb_printf(&o, "built-in %s", base + 1);
            *name = bg_sb_take(&o);
        }
        break;
    }
    free(p);
    return m;
}

BgSchedModel *bg_sched_model_for_gpu(const char *path, const char *gpu_name, int sm, char **source, BgDiagSink *d) {
    if (source) *source = NULL;
    if (path && strcmp(path, "builtin") == 0) return bg_sched_model_builtin(gpu_name, sm, source);
    /* the named file, else the GPU's own (a missing one: an empty model, without a warning; the
     * built-in one is opt-in) */
    char *own = path && *path ? NULL : bg_sched_model_path(NULL, gpu_name, sm);
    const char *file = path && *path ? path : own;
    BgSchedModel *m = bg_sched_model_load(file, d);
    if (source && file && bg_sched_model_ntrees(m) > 0) {
        BgStrBuf o = {0};
        bg_sb_printf(&o, "%s", file);
        *source = bg_sb_take(&o);
    }
    free(own);
    return m;
}

int bg_sched_model_ntrees(const BgSchedModel *m) { return m ? m->n : 0; }

void bg_sched_model_features(const BgGraphFeatures *f, double x[BG_SCHED_MODEL_NFEAT]) {
    x[0] = log2((double)(f->n > 1 ? f->n : 1));
    x[1] = log2((double)(f->nnz > 1 ? f->nnz : 1));
    x[2] = f->deg_mean;
    x[3] = f->deg_cv;
    x[4] = log2(1.0 + (double)f->deg_max);
    x[5] = f->deg_skew;
    x[6] = f->hub_frac;
    x[7] = f->span;
    x[8] = x[9] = 0;
}

/* log2 of the value of field " NAME=" of an op key, 0 where absent or not positive. */
static double key_log2(const char *op_key, const char *name) {
    const char *p = strstr(op_key, name);
    if (!p) return 0;
    const double v = strtod(p + strlen(name), NULL);
    return v > 0 ? log2(v) : 0;
}

void bg_sched_model_widths(const char *op_key, double x[BG_SCHED_MODEL_NFEAT]) {
    x[8] = key_log2(op_key, " k=");
    x[9] = key_log2(op_key, " c=");
}

bool bg_sched_model_predict(const BgSchedModel *m, const char *family, const char *knob,
                            const double x[BG_SCHED_MODEL_NFEAT], int *value) {
    for (int i = 0; m && i < m->n; i++) {
        const Tree *t = &m->trees[i];
        if (strcmp(t->family, family) != 0 || strcmp(t->knob, knob) != 0) continue;
        int k = 0;
        /* children come after their parent: this ends.  The feature is compared as a float, as
         * scikit-learn's trees compare it (they take X as float32) */
        while (t->nodes[k].feature >= 0)
            k = (double)(float)x[t->nodes[k].feature] <= t->nodes[k].threshold ? t->nodes[k].left : t->nodes[k].right;
        *value = t->nodes[k].value;
        return true;
    }
    return false;
}

void bg_sched_model_free(BgSchedModel *m) {
    if (!m) return;
    free_trees(m);
    free(m);
}
