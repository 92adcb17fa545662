/* leaves.c - binds a model's leaves (BgLeafSpec, loaders.h) against a graph, node features
 * and weights: GRAPH leaves become adjacencies (bg_adj_build with the leaf's self loops and
 * norm), INPUT leaves copies of the features (shape-checked), PARAM leaves tensors from the
 * safetensors file (by name) or from a .npy file next to it, checked against the used shape;
 * b1 params become bits (the bit rule: sign bit clear) and PARAM_SCALE Bi-GCN's per-channel
 * scale of the stored floats.  The CPU reference describes leaves from IR instructions
 * (reference/bind.c), the runtime from plan buffers (runtime/bind.c): both report the same
 * messages for the same bad input.  Every problem is reported (all of them, not just the
 * first) naming the file, the tensor and both shapes; nothing prints.  Weights come from a
 * safetensors file, a directory of .npy files, or named tensors in memory (wmem, as
 * bgnn_session_set_weights_tensor sets them). */
#include "loaders.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct BindCtx {
    BgDiagSink *d;
    const char *weights;  /* as given (may be NULL) */
    char *dir;            /* directory npy paths resolve against (malloc'd) or NULL */
    const char *st_path;  /* the safetensors file, or NULL when weights is a directory */
    BgSafetensors st;
    int st_state;         /* 0 not loaded, 1 loaded, -1 failed */
    const BgSafetensors *mem; /* in-memory tensors (wmem), used instead of a file */
} BindCtx;

static void note_decl(BindCtx *c, const BgLeafSpec *in, const char *what) {
    if (in->src) bg_diag_note_at(c->d, in->src, in->loc, "%s declared here", what);
}

/* "f32[N,64]": the leaf's type as the model writes it. */
static char *type_str(const BgLeafSpec *in, char *buf, size_t n) {
    return bg_shape_str(in->dtype == BG_DT_B1 ? "b1" : "f32", in->rank, in->dim, buf, n);
}

char *bg_dims_str(int rank, const int64_t *dim, char *buf, size_t n) {
    size_t o = 0;
    buf[0] = 0;
    o += (size_t)snprintf(buf + o, n - o, "[");
    for (int k = 0; k < rank && o < n; k++)
        o += (size_t)snprintf(buf + o, n - o, "%s%lld", k ? ", " : "", (long long)dim[k]);
    if (o < n) snprintf(buf + o, n - o, "]");
    return buf;
}

static char *join_path(const char *dir, const char *file) {
    if (file[0] == '/' || !dir || !dir[0]) {
        char *r = bg_xmalloc(strlen(file) + 1);
        strcpy(r, file);
        return r;
    }
    size_t n = strlen(dir) + strlen(file) + 2;
    char *r = bg_xmalloc(n);
    snprintf(r, n, "%s/%s", dir, file);
    return r;
}

static void ctx_init(BindCtx *c, const char *weights, BgDiagSink *d) {
    memset(c, 0, sizeof *c);
    c->d = d;
    c->weights = weights;
    if (!weights) return;
    struct stat sb;
    if (stat(weights, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        c->dir = join_path(NULL, weights);
        return;
    }
    c->st_path = weights;
    const char *slash = strrchr(weights, '/');
    if (slash) {
        size_t n = (size_t)(slash - weights);
        c->dir = bg_xmalloc(n + 2);
        if (n == 0) strcpy(c->dir, "/");
        else {
            memcpy(c->dir, weights, n);
            c->dir[n] = 0;
        }
    } else {
        c->dir = join_path(NULL, ".");
    }
}

static void ctx_free(BindCtx *c) {
    if (c->st_state == 1 && !c->mem) bg_safetensors_free(&c->st);
    free(c->dir);
}

/* The stored float tensor of a PARAM / PARAM_SCALE, as a host f32 tensor with the stored
 * rank and dims.  Reports and returns false on failure. */
static bool load_stored(BindCtx *c, const BgLeafSpec *in, const char *what, BgTensor *out,
                        char *fname, size_t fname_n) {
    memset(out, 0, sizeof *out);
    const char *tname = in->name ? in->name : "?";
    if (in->file) {
        char *path = join_path(c->dir, in->file);
        snprintf(fname, fname_n, "%s", path);
        BgNpy npy;
        memset(&npy, 0, sizeof npy);
        if (!bg_npy_load(path, BG_NPY_AS_F32, &npy, c->d)) {
            note_decl(c, in, what);
            free(path);
            return false;
        }
        free(path);
        if (npy.dtype != BG_DT_F32 || npy.rank < 1 || npy.rank > 2) {
            bg_diag_error(c->d, BG_E_WEIGHT_SHAPE, "%s: expected a float array of rank 1 or 2 for %s",
                          fname, tname);
            note_decl(c, in, what);
            bg_npy_free(&npy);
            return false;
        }
        out->dtype = BG_DT_F32;
        out->rank = npy.rank;
        out->dim[0] = npy.dim[0];
        out->dim[1] = npy.rank == 2 ? npy.dim[1] : 0;
        out->data = npy.data; /* take ownership */
        npy.data = NULL;
        bg_npy_free(&npy);
        return true;
    }
    if (!c->st_path) {
        snprintf(fname, fname_n, "%s", c->weights ? c->weights : "(no weights)");
        if (c->weights)
            bg_diag_error(c->d, BG_E_WEIGHT_MISSING,
                          "%s: is a directory, not a .safetensors file; cannot find tensor '%s'",
                          c->weights, tname);
        else
            bg_diag_error(c->d, BG_E_WEIGHT_MISSING,
                          "no weights file given; the model needs tensor '%s'", tname);
        note_decl(c, in, what);
        return false;
    }
    snprintf(fname, fname_n, "%s", c->st_path);
    if (c->st_state == 0) c->st_state = bg_safetensors_load(c->st_path, &c->st, c->d) ? 1 : -1;
    if (c->st_state < 0) return false; /* the loader reported it (once) */
    const BgStTensor *t = bg_safetensors_find(&c->st, tname);
    if (!t) {
        bg_diag_error(c->d, BG_E_WEIGHT_MISSING, "%s: no tensor named '%s'", c->st_path, tname);
        note_decl(c, in, what);
        return false;
    }
    if (t->dtype != BG_DT_F32) {
        bg_diag_error(c->d, BG_E_WEIGHT_SHAPE, "%s: tensor '%s' has an integer type; expected float",
                      c->st_path, tname);
        note_decl(c, in, what);
        return false;
    }
    if (t->rank < 1 || t->rank > 2) {
        char b1[96];
        bg_diag_error(c->d, BG_E_WEIGHT_SHAPE, "%s: tensor '%s' has shape %s; expected rank 1 or 2",
                      c->st_path, tname, bg_dims_str(t->rank, t->dim, b1, sizeof b1));
        note_decl(c, in, what);
        return false;
    }
    if (!bg_tensor_alloc(out, BG_DT_F32, t->rank, t->dim[0], t->rank == 2 ? t->dim[1] : 0)) {
        bg_diag_error(c->d, BG_E_LIMIT, "%s: tensor '%s' is too large", c->st_path, tname);
        return false;
    }
    memcpy(out->data, t->data, bg_tensor_bytes(out));
    return true;
}

/* Used [K,M] (or [C]) float tensor from stored, transposing when the param says so. */
static bool to_used(const BgTensor *stored, bool transposed, BgTensor *used) {
    if (stored->rank != 2 || !transposed) {
        *used = *stored;
        return true;
    }
    int64_t mm = stored->dim[0], kk = stored->dim[1];
    if (!bg_tensor_alloc(used, BG_DT_F32, 2, kk, mm)) return false;
    const float *s = stored->data;
    float *u = used->data;
    for (int64_t i = 0; i < mm; i++)
        for (int64_t j = 0; j < kk; j++) u[j * mm + i] = s[i * kk + j];
    return true;
}

static bool bind_param(BindCtx *c, const BgLeafSpec *in, BgTensor *leaf) {
    const char *tname = in->name ? in->name : "?";
    bool scale = in->kind == BG_LEAF_PARAM_SCALE;
    const char *what = scale ? "parameter scale" : "parameter";
    char fname[1024], tb[64], sb[96], eshape[96];
    BgTensor stored;
    if (!load_stored(c, in, what, &stored, fname, sizeof fname)) return false;
    bool tr = in->transposed && stored.rank == 2;

    /* The stored shape this leaf needs (transposed params are stored [M,K]). */
    bool shape_ok;
    if (scale) {
        /* f32[M] from a stored [K,M] ([M,K] transposed): any K, the right M. */
        int64_t mdim = in->dim[0];
        shape_ok = stored.rank == 2 && (tr ? stored.dim[0] : stored.dim[1]) == mdim;
        if (stored.rank == 2) {
            int64_t ed[2] = {tr ? mdim : stored.dim[0], tr ? stored.dim[1] : mdim};
            bg_dims_str(2, ed, eshape, sizeof eshape);
        } else {
            snprintf(eshape, sizeof eshape, in->transposed ? "[%lld, K]" : "[K, %lld]",
                     (long long)mdim);
        }
    } else {
        int erank = in->rank;
        int64_t ed[2] = {in->dim[0], in->dim[1]};
        if (erank == 2 && in->transposed) {
            ed[0] = in->dim[1];
            ed[1] = in->dim[0];
        }
        shape_ok = stored.rank == erank && stored.dim[0] == ed[0] &&
                   (erank == 1 || stored.dim[1] == ed[1]);
        bg_dims_str(erank, ed, eshape, sizeof eshape);
    }
    if (!shape_ok) {
        bg_diag_error(c->d, BG_E_WEIGHT_SHAPE,
                      "%s: tensor '%s' has shape %s, but %s '%s' : %s needs %s%s", fname, tname,
                      bg_dims_str(stored.rank, stored.dim, sb, sizeof sb), what, tname,
                      type_str(in, tb, sizeof tb), eshape,
                      in->transposed ? " (stored transposed)" : "");
        note_decl(c, in, what);
        bg_tensor_free(&stored);
        return false;
    }
    BgTensor used;
    if (!to_used(&stored, tr, &used)) {
        bg_diag_error(c->d, BG_E_LIMIT, "%s: tensor '%s' is too large", fname, tname);
        bg_tensor_free(&stored);
        return false;
    }
    if (used.data != stored.data) bg_tensor_free(&stored);
    bool ok;
    if (scale) {
        ok = bg_param_scale(&used, leaf);
    } else if (in->dtype == BG_DT_B1) {
        ok = bg_tensor_to_bits(&used, leaf);
    } else {
        *leaf = used;
        return true;
    }
    bg_tensor_free(&used);
    if (!ok) bg_diag_error(c->d, BG_E_INTERNAL, "%s: cannot convert tensor '%s'", fname, tname);
    return ok;
}

static bool bind_input(BindCtx *c, const BgLeafSpec *in, const BgGraph *g, const BgTensor *features,
                       BgTensor *leaf) {
    const char *file = in->file ? in->file : "features.npy";
    const char *iname = in->name ? in->name : "?";
    char tb[64], sb[96];
    if (!features || !features->data || features->dim[0] == 0) {
        bg_diag_error(c->d, BG_E_DATA_SHAPE, "%s: no node features, but the model has input '%s' : %s",
                      file, iname, type_str(in, tb, sizeof tb));
        note_decl(c, in, "input");
        return false;
    }
    if (features->dtype != BG_DT_F32 || features->rank != 2 || features->dim[0] != g->n ||
        in->rank != 2 || features->dim[1] != in->dim[1]) {
        int64_t fd[2] = {features->dim[0], features->rank == 2 ? features->dim[1] : 0};
        bg_diag_error(c->d, BG_E_DATA_SHAPE, "%s: shape %s does not match input '%s' : %s%s", file,
                      bg_dims_str(features->rank, fd, sb, sizeof sb), iname,
                      type_str(in, tb, sizeof tb),
                      features->dim[0] != g->n ? " (rows must equal the graph's node count)" : "");
        note_decl(c, in, "input");
        return false;
    }
    if (!bg_tensor_alloc(leaf, BG_DT_F32, 2, features->dim[0], features->dim[1])) {
        bg_diag_error(c->d, BG_E_LIMIT, "%s: features too large", file);
        return false;
    }
    memcpy(leaf->data, features->data, bg_tensor_bytes(leaf));
    return true;
}

bool bg_param_scale(const BgTensor *w, BgTensor *y) {
    memset(y, 0, sizeof *y);
    if (!w || !w->data || w->dtype != BG_DT_F32 || w->rank != 2) return false;
    int64_t k = w->dim[0], m = w->dim[1];
    if (!bg_tensor_alloc(y, BG_DT_F32, 1, m, 0)) {
        bg_tensor_free(y);
        return false;
    }
    const float *ws = w->data;
    float *ys = y->data;
    for (int64_t o = 0; o < m; o++) {
        double s = 0.0;
        for (int64_t i = 0; i < k; i++) s += fabs((double)ws[i * m + o]);
        ys[o] = k ? (float)(s / (double)k) : 0.0f;
    }
    return true;
}

static void free_bound(int n, BgAdj *adj, BgTensor *val) {
    for (int i = 0; i < n; i++) {
        if (adj[i].rowptr) bg_adj_free(&adj[i]);
        bg_tensor_free(&val[i]);
    }
}

bool bg_leaves_bind(const BgLeafSpec *spec, int n, const BgGraph *g, const BgTensor *features,
                    const char *weights, const BgSafetensors *wmem, BgAdj *adj, BgTensor *val,
                    BgDiagSink *d) {
    BindCtx c;
    ctx_init(&c, wmem ? NULL : weights, d);
    if (wmem) { /* named tensors from memory; npy(...) files relative to the working directory */
        c.mem = wmem;
        c.st_path = wmem->path ? wmem->path : "(in-memory weights)";
        c.weights = c.st_path;
        c.st_state = 1;
        c.st = *wmem;
    }
    bool ok = true;
    for (int i = 0; i < n; i++) {
        const BgLeafSpec *in = &spec[i];
        switch (in->kind) {
        case BG_LEAF_GRAPH:
            if (!g) {
                bg_diag_error(d, BG_E_DATA_SHAPE, "no graph bound, but the model declares one");
                ok = false;
            } else if (!bg_adj_build(g, in->self_loops, in->norm, &adj[i])) {
                bg_diag_error(d, BG_E_INTERNAL, "cannot build the adjacency (self_loops: %s, norm: %s)",
                              in->self_loops ? "true" : "false", bg_norm_name(in->norm));
                memset(&adj[i], 0, sizeof adj[i]);
                ok = false;
            }
            break;
        case BG_LEAF_INPUT:
            if (!g) ok = false;
            else if (!bind_input(&c, in, g, features, &val[i])) ok = false;
            break;
        case BG_LEAF_PARAM:
        case BG_LEAF_PARAM_SCALE:
            if (!bind_param(&c, in, &val[i])) ok = false;
            break;
        case BG_LEAF_NONE:
            break;
        }
    }
    ctx_free(&c);
    if (!ok) free_bound(n, adj, val);
    return ok;
}

char *bg_bind_npy_path(const char *weights, const char *file) {
    BindCtx c;
    ctx_init(&c, weights, NULL);
    char *p = join_path(c.dir, file);
    free(c.dir);
    return p;
}
