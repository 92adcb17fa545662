/* sched_model.c - reads the learned schedule predictor's trees (sched_model.h) and walks them:
 * classification trees give a knob's value, a family's boosted regression trees rank its
 * candidate points by predicted time. */
#include "sched_model.h"
#include "tune_db.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a node of either kind of tree: feature -1 is a leaf of that value (a classification's knob
 * value, an integer, or a regression's term) */
typedef struct Node {
    int feature;
    double threshold;
    int left, right;
    double value;
} Node;

typedef struct Tree {
    char *family, *knob;
    Node *nodes;
    int n;
} Tree;

typedef struct RTree {
    Node *nodes;
    int n;
} RTree;

/* a family's gradient-boosted trees (tools/train_predictor.py, kind gbdt) and its candidates */
typedef struct Regress {
    char *family;
    int (*points)[BG_SCHED_MODEL_NKNOBS];
    int npoints;
    RTree *trees;
    int ntrees;
    double rate, init;
    double keep;                                          /* the default's margin (log time) */
    double lo[BG_SCHED_MODEL_NFEAT], hi[BG_SCHED_MODEL_NFEAT]; /* outside: the default */
} Regress;

struct BgSchedModel {
    Tree *trees;
    int n;
    Regress *regs;
    int nregs;
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
    for (int i = 0; i < m->nregs; i++) {
        for (int t = 0; t < m->regs[i].ntrees; t++) free(m->regs[i].trees[t].nodes);
        free(m->regs[i].trees);
        free(m->regs[i].points);
        free(m->regs[i].family);
    }
    free(m->regs);
    m->regs = NULL;
    m->nregs = 0;
}

static char *dupn(const char *s, size_t n) {
    char *r = malloc(n + 1);
    if (!r) return NULL;
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

const char *const bg_sched_model_knobs[BG_SCHED_MODEL_NKNOBS] = {"block", "grid", "chunk", "group", "fb", "lanes"};

/* A split line "node ID FEATURE THRESHOLD LEFT RIGHT" as node id of a tree of n nodes over
 * nfeat features: 1 (parsed into *nd), 0 (not a split line), -1 (a bad one: why says). */
static int parse_split(const char *ln, int id, int n, int nfeat, Node *nd, char *why, size_t nw) {
    int gid, f, l, r;
    double t;
    char tail;
    if (sscanf(ln, "node %d %d %lf %d %d %c", &gid, &f, &t, &l, &r, &tail) != 5) return 0;
    if (gid != id || f < 0 || f >= nfeat || !isfinite(t) || l <= id || r <= id || l >= n || r >= n) {
        snprintf(why, nw, "bad node (id %d, feature 0..%d, children after it and below %d)", id, nfeat - 1, n);
        return -1;
    }
    *nd = (Node){f, t, l, r, 0};
    return 1;
}

/* The leaf a tree gives x.  Children come after their parent: this ends.  The feature is
 * compared as a float, as scikit-learn's trees compare it (they take X as float32). */
static const Node *walk(const Node *nodes, const double *x) {
    int k = 0;
    while (nodes[k].feature >= 0) k = (double)(float)x[nodes[k].feature] <= nodes[k].threshold ? nodes[k].left : nodes[k].right;
    return &nodes[k];
}

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
    int version = 1;
    Regress *reg = NULL; /* the regression being read */
    int owed_points = 0, owed_trees = 0, owed_rnodes = 0;
    bool owed_range = false;
    if (len == 0 || text[len - 1] != '\n') {
        snprintf(why, nw, "the file does not end in a newline");
        return false;
    }
    for (char *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        (*line)++;
        if (*line == 1) {
            if (strcmp(ln, "bgnn-sched-model 1") != 0 && strcmp(ln, "bgnn-sched-model 2") != 0) {
                snprintf(why, nw, "expected 'bgnn-sched-model 1' or 'bgnn-sched-model 2'");
                return false;
            }
            version = ln[17] - '0';
            continue;
        }
        if (ln[0] == '#') continue;
        if (owed_range) {
            char *p = ln + 6;
            bool ok = strncmp(ln, "range ", 6) == 0;
            for (int f = 0; ok && f < 2 * BG_SCHED_MODEL_NFEAT; f++) {
                char *e = NULL;
                const double v = strtod(p, &e);
                ok = e != p && isfinite(v);
                (f % 2 ? reg->hi : reg->lo)[f / 2] = v;
                p = e;
            }
            while (ok && *p == ' ') p++;
            if (!ok || *p) {
                snprintf(why, nw, "expected 'range' and %d numbers (each feature's low and high)", 2 * BG_SCHED_MODEL_NFEAT);
                return false;
            }
            owed_range = false;
            continue;
        }
        if (owed_points > 0) {
            int *k = reg->points[reg->npoints - owed_points];
            char tail;
            if (sscanf(ln, "point %d %d %d %d %d %d %c", &k[0], &k[1], &k[2], &k[3], &k[4], &k[5], &tail) != 6 ||
                k[0] < 0 || k[0] > 1024 || k[1] < 0 || k[1] > 64 || k[2] < 0 || k[2] > 4096 || k[3] < -1 || k[3] > 1 ||
                k[4] < 0 || k[4] > 3 || (k[5] != 0 && k[5] != 8 && k[5] != 16)) {
                snprintf(why, nw, "expected 'point BLOCK GRID CHUNK GROUP FB LANES' (block 0..1024, grid 0..64, "
                         "chunk 0..4096, group -1..1, fb 0..3, lanes 0, 8 or 16)");
                return false;
            }
            owed_points--;
            continue;
        }
        if (owed_rnodes > 0) {
            RTree *rt = &reg->trees[reg->ntrees - owed_trees - 1];
            const int id = rt->n - owed_rnodes;
            int gid;
            double v;
            char tail;
            const int split = parse_split(ln, id, rt->n, BG_SCHED_MODEL_NPFEAT, &rt->nodes[id], why, nw);
            if (split < 0) return false;
            if (split == 0) { /* a leaf */
                if (sscanf(ln, "value %d %lf %c", &gid, &v, &tail) != 2 || gid != id || !isfinite(v)) {
                    snprintf(why, nw, "expected node %d of the regression tree ('node' or 'value ID VALUE')", id);
                    return false;
                }
                rt->nodes[id] = (Node){-1, 0, 0, 0, v};
            }
            owed_rnodes--;
            continue;
        }
        if (owed_trees > 0) {
            int nn = 0;
            char tail;
            if (sscanf(ln, "rtree %d %c", &nn, &tail) != 1 || nn < 1 || nn > 100000) {
                snprintf(why, nw, "expected 'rtree NODES' (%d trees of the regression still owed)", owed_trees);
                return false;
            }
            RTree *rt = &reg->trees[reg->ntrees - owed_trees];
            rt->nodes = calloc((size_t)nn, sizeof *rt->nodes);
            if (!rt->nodes) return false;
            rt->n = nn;
            owed_trees--;
            owed_rnodes = nn;
            continue;
        }
        if (expect > 0) {
            Node *nd = &cur->nodes[cur->n - expect];
            const int id = cur->n - expect;
            int gid, v;
            char tail;
            const int split = parse_split(ln, id, cur->n, BG_SCHED_MODEL_NFEAT, nd, why, nw);
            if (split < 0) return false;
            if (split == 0) { /* a leaf */
                if (sscanf(ln, "leaf %d %d %c", &gid, &v, &tail) != 2) {
                    snprintf(why, nw, "expected node %d of the tree", id);
                    return false;
                }
                if (gid != id || v < -1 || v > 4096) {
                    snprintf(why, nw, "bad leaf (id %d, value -1..4096)", id);
                    return false;
                }
                *nd = (Node){-1, 0, 0, 0, v};
            }
            expect--;
            continue;
        }
        char *t1 = strchr(ln, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        int nn = 0;
        char tail;
        if (strncmp(ln, "regress ", 8) == 0) {
            int np = 0, nt = 0;
            double rate = 0, init = 0, keep = 0;
            if (version < 2 || !t1 || t1 == ln + 8 ||
                sscanf(t1 + 1, "%d\t%d\t%lf\t%lf\t%lf %c", &np, &nt, &rate, &init, &keep, &tail) != 5 || np < 1 ||
                np > 100000 || nt < 1 || nt > 100000 || !isfinite(rate) || !isfinite(init) || !isfinite(keep) ||
                keep < 0) {
                snprintf(why, nw, version < 2 ? "'regress' needs 'bgnn-sched-model 2'"
                                              : "expected 'regress FAMILY<TAB>POINTS<TAB>TREES<TAB>RATE<TAB>INIT<TAB>MARGIN'");
                return false;
            }
            Regress *nr = realloc(m->regs, sizeof *nr * (size_t)(m->nregs + 1));
            if (!nr) return false;
            m->regs = nr;
            reg = &m->regs[m->nregs++];
            *reg = (Regress){.family = dupn(ln + 8, (size_t)(t1 - ln - 8)), .npoints = np, .ntrees = nt, .rate = rate,
                             .init = init, .keep = keep};
            reg->points = calloc((size_t)np, sizeof *reg->points);
            reg->trees = calloc((size_t)nt, sizeof *reg->trees);
            if (!reg->family || !reg->points || !reg->trees) return false;
            owed_range = true;
            owed_points = np;
            owed_trees = nt;
            continue;
        }
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
    if (expect > 0 || owed_range || owed_points > 0 || owed_trees > 0 || owed_rnodes > 0) {
        snprintf(why, nw, "the last %s is cut short", expect > 0 ? "tree" : "regression");
        return false;
    }
    return true;
}

/* bg_sched_model_load; *missing: whether there was no file at path (an empty model, no warning) */
static BgSchedModel *load(const char *path, BgDiagSink *d, bool *missing) {
    BgSchedModel *m = calloc(1, sizeof *m);
    *missing = true;
    if (!m || !path) return m;
    FILE *f = fopen(path, "rb");
    if (!f) return m; /* no model: the defaults */
    fclose(f);
    *missing = false;
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

BgSchedModel *bg_sched_model_load(const char *path, BgDiagSink *d) {
    bool missing;
    return load(path, d, &missing);
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
    if (path && strcmp(path, "off") == 0) return calloc(1, sizeof(BgSchedModel));
    /* the named file, else the GPU's own, else the built-in one of the GPU (none: an empty model,
     * without a warning) */
    char *own = path && *path ? NULL : bg_sched_model_path(NULL, gpu_name, sm);
    const char *file = path && *path ? path : own;
    bool missing;
    BgSchedModel *m = load(file, d, &missing);
    if (own && missing) {
        free(own);
        bg_sched_model_free(m);
        return bg_sched_model_builtin(gpu_name, sm, source);
    }
    if (source && file && bg_sched_model_ntrees(m) > 0) {
        BgStrBuf o = {0};
        bg_sb_printf(&o, "%s", file);
        *source = bg_sb_take(&o);
    }
    free(own);
    return m;
}

int bg_sched_model_ntrees(const BgSchedModel *m) {
    int n = m ? m->n : 0;
    for (int i = 0; m && i < m->nregs; i++) n += m->regs[i].ntrees;
    return n;
}

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
        *value = (int)walk(t->nodes, x)->value;
        return true;
    }
    return false;
}

void bg_sched_model_point_features(const double x[BG_SCHED_MODEL_NFEAT], const int knobs[BG_SCHED_MODEL_NKNOBS],
                                   double out[BG_SCHED_MODEL_NPFEAT]) {
    /* tools/train_predictor.py point_features: the same operations in the same order */
    static const int dflt[BG_SCHED_MODEL_NKNOBS] = {256, 64, 2048, 0, 0, 32};
    double lg[BG_SCHED_MODEL_NKNOBS];
    for (int k = 0; k < BG_SCHED_MODEL_NKNOBS; k++) lg[k] = log2((double)(knobs[k] > 0 ? knobs[k] : dflt[k]));
    memcpy(out, x, sizeof(double) * BG_SCHED_MODEL_NFEAT);
    out[10] = lg[0];
    out[11] = lg[1];
    out[12] = lg[2];
    out[13] = (double)knobs[3];
    out[14] = (double)knobs[4];
    out[15] = lg[5];
    out[16] = x[0] + lg[5] - lg[0] - lg[1];
}

int bg_sched_model_ranked(const BgSchedModel *m, const char *family, const double x[BG_SCHED_MODEL_NFEAT],
                          int (*out)[BG_SCHED_MODEL_NKNOBS], int max) {
    const Regress *r = NULL;
    for (int i = 0; m && i < m->nregs && !r; i++)
        if (strcmp(m->regs[i].family, family) == 0) r = &m->regs[i];
    if (!r) return 0;
    double *pred = bg_xmalloc(sizeof *pred * (size_t)r->npoints);
    int *order = bg_xmalloc(sizeof *order * (size_t)r->npoints);
    for (int p = 0; p < r->npoints; p++) {
        double f[BG_SCHED_MODEL_NPFEAT];
        bg_sched_model_point_features(x, r->points[p], f);
        double y = r->init; /* scikit-learn's sum: init, then + rate x leaf, tree by tree */
        for (int t = 0; t < r->ntrees; t++) y += r->rate * walk(r->trees[t].nodes, f)->value;
        pred[p] = y;
        order[p] = p;
    }
    /* insertion sort by (prediction, file order): stable, a few hundred points */
    for (int i = 1; i < r->npoints; i++) {
        const int o = order[i];
        int j = i;
        while (j > 0 && pred[order[j - 1]] > pred[o]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = o;
    }
    /* the default first when x lies outside the training graphs' range, or when no point is
     * predicted faster than the default by more than the margin (tools/train_predictor.py ranked) */
    int dflt = -1;
    for (int p = 0; p < r->npoints && dflt < 0; p++) {
        bool zero = true;
        for (int k = 0; k < BG_SCHED_MODEL_NKNOBS; k++) zero &= r->points[p][k] == 0;
        if (zero) dflt = p;
    }
    if (dflt >= 0) {
        bool far = false;
        for (int f = 0; f < BG_SCHED_MODEL_NFEAT; f++) far |= x[f] < r->lo[f] || x[f] > r->hi[f];
        if (far || pred[order[0]] > pred[dflt] - r->keep) {
            int j = 0;
            while (order[j] != dflt) j++;
            for (; j > 0; j--) order[j] = order[j - 1];
            order[0] = dflt;
        }
    }
    const int n = r->npoints < max ? r->npoints : max;
    for (int i = 0; i < n; i++) memcpy(out[i], r->points[order[i]], sizeof out[i]);
    free(pred);
    free(order);
    return n;
}

void bg_sched_model_free(BgSchedModel *m) {
    if (!m) return;
    free_trees(m);
    free(m);
}
