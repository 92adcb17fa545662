/* sched.c - the schedule space of a module's graph and matrix ops (docs/tuning.md): which
 * knobs an instruction's launch has (threads per block, blocks per SM, the fast aggregation's
 * work items, the features product's kernel, the code-level lanes a row, method and path), their points,
 * their text form (IR dump, tuning database, bgnnc --sched) and the op key the tuning database
 * files a record under.  Every point computes the same bits; plan_build.c turns a point into
 * the launch's shape and refuses an invalid one. */
#include "codegen.h"
#include "sched_model.h"
#include "tune_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The values each knob takes in the space (0 = the plan's default, first). */
static const int blocks[] = {0, 64, 128, 512, 1024};
static const int grids[] = {0, 1, 2, 4, 8, 16};
static const int chunks[] = {0, 256, 512, 1024};
static const int group_vals[] = {0, 1, -1};
static const int fb_vals[] = {BG_SCHED_FB_AUTO, BG_SCHED_FB_ROWS, BG_SCHED_FB_TILED, BG_SCHED_FB_SPARSE};
static const int lanes_vals[] = {0, 8, 16};
static const int methods[] = {BG_METHOD_AUTO, BG_METHOD_IFELSE, BG_METHOD_ANDNOT, BG_METHOD_POPC2};
static const int paths[] = {BG_BMM_PATH_AUTO, BG_BMM_PATH_POPC, BG_BMM_PATH_TC, BG_BMM_PATH_WGMMA};
static const char *const fb_names[] = {"auto", "rows", "tiled", "sparse"};
static const char *const method_names[] = {"auto", "ifelse", "andnot", "popc2"};
static const char *const path_names[] = {"auto", "popc", "tc", "wgmma"};

/* Why a bmm.BB* path cannot run on a GPU of compute capability sm, or NULL where it can. */
static const char *path_unusable(BgBmmPath path, int sm) {
    if (path == BG_BMM_PATH_TC && sm < 80) return "tc needs sm_80";
    if (path == BG_BMM_PATH_WGMMA && sm != 90) return "wgmma needs sm_90";
    return NULL;
}

/* The kernel family of a tunable instruction (what its launch runs). */
typedef enum { K_NONE, K_BMM, K_BMM_INPUT, K_BMM_TILED, K_BMM_BB, K_SPMM_FAST, K_SPMM, K_SPMM_BITS, K_MM_SPMM } Kind;

static bool weight_b1t(const BgModule *m, const BgInst *in) {
    const BgInst *w = &m->insts[in->args[1]];
    return in->prec[0] == 'B' && in->prec[1] == 'B' && w->op == BG_OP_PARAM && w->type.kind == BG_TY_B1;
}

static Kind kind_of(const BgModule *m, const BgInst *in) {
    /* per node (or graph) rows only: a product of parameters alone is a prep launch, run once */
    if (in->type.rank != 2 || in->type.dim[0] >= 0) return K_NONE;
    switch (in->op) {
    case BG_OP_BMM: {
        bool wt = weight_b1t(m, in);
        if (in->prec[0] == 'B' && in->prec[1] == 'B' && wt) return K_BMM_BB;
        if (bg_plan_bmm_fb_rows(m, in, wt)) return K_BMM_INPUT;
        if (bg_plan_bmm_fb_tiled_kernel(m, in, wt)) return K_BMM_TILED;
        return K_BMM;
    }
    case BG_OP_BSPMM:
        if (bg_plan_bspmm_fast(m, in)) return K_SPMM_FAST;
        if (bg_plan_bspmm_bits(m, in)) return K_SPMM_BITS;
        return K_SPMM;
    case BG_OP_BSPMM_MM: return K_MM_SPMM;
    default: return K_NONE;
    }
}

static const char *kind_name(Kind k) {
    switch (k) {
    case K_BMM: return "matmul";
    case K_BMM_INPUT: return "fb_rows";
    case K_BMM_TILED: return "fb_tiled";
    case K_BMM_BB: return "bb";
    case K_SPMM_FAST: return "fast";
    case K_SPMM: return "spmm";
    case K_SPMM_BITS: return "bits";
    case K_MM_SPMM: return "mm_spmm";
    default: return "-";
    }
}

bool bg_sched_tunable(const BgModule *m, const BgInst *in) { return kind_of(m, in) != K_NONE; }

bool bg_sched_is_default(const BgSched *s) {
    return !s->block && !s->grid && !s->fb && !s->chunk && !s->group && !s->lanes;
}

bool bg_sched_eq(const BgSchedPoint *a, const BgSchedPoint *b) {
    return a->s.block == b->s.block && a->s.grid == b->s.grid && a->s.fb == b->s.fb && a->s.chunk == b->s.chunk &&
           a->s.group == b->s.group && a->s.lanes == b->s.lanes && a->method == b->method && a->path == b->path;
}

BgSchedPoint bg_sched_point(const BgInst *in) {
    BgSchedPoint p = {in->attrs.sched, in->attrs.method, in->attrs.path};
    return p;
}

void bg_sched_set(BgInst *in, const BgSchedPoint *pt) {
    in->attrs.sched = pt->s;
    in->attrs.method = pt->method;
    in->attrs.path = pt->path;
}

/* Does the bspmm / bspmm_mm take a method (any aggregation may carry one), and does it choose
 * the kernel's reduction (b1 activations over a 0/1 adjacency)? */
static bool has_method(const BgInst *in) { return in->op == BG_OP_BSPMM || in->op == BG_OP_BSPMM_MM; }
static bool method_matters(const BgModule *m, const BgInst *in) {
    char pq[4];
    if (in->op == BG_OP_BSPMM_MM) bg_inst_mm_prec(m, in, pq);
    const char act = in->op == BG_OP_BSPMM_MM ? pq[2] : in->prec[0];
    return has_method(in) && act == 'B' && in->prec[1] == 'B';
}

/* lanes= (mm_spmm.cuh's mm_spmm_group_rows): a bspmm_mm of at most MSW_CB = 8 outputs. */
static bool lanes_apply(const BgInst *in, Kind k) { return k == K_MM_SPMM && in->type.dim[1] <= 8; }

bool bg_sched_valid(const BgModule *m, const BgInst *in, const BgSchedPoint *pt, char *why, size_t n) {
    Kind k = kind_of(m, in);
    const BgSched *s = &pt->s;
#define BAD(...)                                                                                                     \
    do {                                                                                                             \
        if (why) snprintf(why, n, __VA_ARGS__);                                                                      \
        return false;                                                                                                \
    } while (0)
    if (k == K_NONE) {
        if (!bg_sched_is_default(s)) BAD("%s has no schedule", bg_op_info(in->op)->name);
        return true;
    }
    if (s->block % 32 || s->block > 1024) BAD("block=%d: threads per block are a multiple of 32 up to 1024", s->block);
    if (s->grid > 64) BAD("grid=%d: at most 64 blocks per SM", s->grid);
    if (s->chunk && (s->chunk < 32 || s->chunk > BG_PLAN_BSPMM_CHUNK))
        BAD("chunk=%d: edges per work item are 32 to %d", s->chunk, BG_PLAN_BSPMM_CHUNK);
    if (k != K_SPMM_FAST && (s->chunk || s->group)) BAD("chunk and group apply to the fast bit aggregation only");
    if (s->group < -1 || s->group > 1) BAD("group=%d", s->group);
    if (s->fb > BG_SCHED_FB_SPARSE) BAD("fb=%d", s->fb);
    if (k != K_BMM_INPUT && s->fb) BAD("fb applies to a product of the model's input features only");
    if (s->lanes && s->lanes != 8 && s->lanes != 16) BAD("lanes=%d: 8 or 16 lanes a row", s->lanes);
    if (s->lanes && !lanes_apply(in, k))
        BAD("lanes applies to a bspmm_mm of at most 8 outputs only");
    if (pt->method != BG_METHOD_AUTO && !has_method(in)) BAD("method applies to aggregations only");
    if (pt->path != BG_BMM_PATH_AUTO && k != K_BMM_BB) BAD("path applies to bmm.BB* with a b1 weight");
    /* kernels that need 256-thread blocks: the tiled FB product (also the alternative of the
     * features product, which auto may take) and the tensor-core BB product */
    bool needs256 = k == K_BMM_TILED || (k == K_BMM_INPUT && (s->fb == BG_SCHED_FB_AUTO || s->fb == BG_SCHED_FB_TILED));
    if (k == K_BMM_BB && (pt->path == BG_BMM_PATH_AUTO || pt->path == BG_BMM_PATH_TC))
        needs256 = true; /* tc where the plan takes it (the plan's wgmma product sets its own 384) */
    if (needs256 && s->block && s->block != 256) BAD("block=%d: this kernel needs 256-thread blocks", s->block);
    if (pt->path == BG_BMM_PATH_WGMMA) {
        if (m->insts[in->args[0]].type.dim[1] % 128 != 0) BAD("path=wgmma needs K a multiple of 128");
        if (s->block && s->block != 384) BAD("block=%d: the wgmma product runs 384-thread blocks", s->block);
    }
#undef BAD
    return true;
}

/* ---- the axes of the space --------------------------------------------------------------- */
typedef enum { AX_BLOCK, AX_GRID, AX_CHUNK, AX_GROUP, AX_FB, AX_LANES, AX_METHOD, AX_PATH, AX_COUNT } Axis;

static int axis_values(Axis a, const int **v) {
    switch (a) {
    case AX_BLOCK: *v = blocks; return (int)(sizeof blocks / sizeof *blocks);
    case AX_GRID: *v = grids; return (int)(sizeof grids / sizeof *grids);
    case AX_CHUNK: *v = chunks; return (int)(sizeof chunks / sizeof *chunks);
    case AX_GROUP: *v = group_vals; return (int)(sizeof group_vals / sizeof *group_vals);
    case AX_FB: *v = fb_vals; return (int)(sizeof fb_vals / sizeof *fb_vals);
    case AX_LANES: *v = lanes_vals; return (int)(sizeof lanes_vals / sizeof *lanes_vals);
    case AX_METHOD: *v = methods; return (int)(sizeof methods / sizeof *methods);
    default: *v = paths; return (int)(sizeof paths / sizeof *paths);
    }
}

static void axis_set(BgSchedPoint *p, Axis a, int v) {
    switch (a) {
    case AX_BLOCK: p->s.block = (uint16_t)v; break;
    case AX_GRID: p->s.grid = (uint8_t)v; break;
    case AX_CHUNK: p->s.chunk = (uint16_t)v; break;
    case AX_GROUP: p->s.group = (int8_t)v; break;
    case AX_FB: p->s.fb = (uint8_t)v; break;
    case AX_LANES: p->s.lanes = (uint8_t)v; break;
    case AX_METHOD: p->method = (BgMethod)v; break;
    default: p->path = (BgBmmPath)v; break;
    }
}

static bool axis_applies(const BgModule *m, const BgInst *in, Axis a, int sm) {
    Kind k = kind_of(m, in);
    switch (a) {
    case AX_BLOCK:
    case AX_GRID: return k != K_NONE;
    case AX_CHUNK:
    case AX_GROUP: return k == K_SPMM_FAST;
    case AX_FB: return k == K_BMM_INPUT;
    case AX_LANES: return lanes_apply(in, k);
    case AX_METHOD: return method_matters(m, in) && k != K_SPMM_BITS;
    default: return k == K_BMM_BB && sm >= 80;
    }
}

int bg_sched_space(const BgModule *m, const BgInst *in, int sm, BgSchedPoint *out, int max) {
    if (!bg_sched_tunable(m, in)) return 0;
    const BgSchedPoint cur = bg_sched_point(in);
    int nv[AX_COUNT], idx[AX_COUNT];
    const int *vals[AX_COUNT];
    for (int a = 0; a < AX_COUNT; a++) {
        nv[a] = axis_applies(m, in, (Axis)a, sm) ? axis_values((Axis)a, &vals[a]) : 1;
        if (nv[a] == 1) vals[a] = NULL;
        idx[a] = 0;
    }
    int count = 0;
    if (out && max > 0) out[0] = cur;
    count = 1;
    for (;;) { /* every combination of the axes' values (odometer order) */
        BgSchedPoint p = cur;
        for (int a = 0; a < AX_COUNT; a++)
            if (vals[a]) axis_set(&p, (Axis)a, vals[a][idx[a]]);
        /* (a point moves to a path only where it runs) */
        if (!bg_sched_eq(&p, &cur) && (p.path == cur.path || !path_unusable(p.path, sm)) &&
            bg_sched_valid(m, in, &p, NULL, 0)) {
            if (out && count < max) out[count] = p;
            count++;
        }
        int a = 0;
        while (a < AX_COUNT && ++idx[a] >= nv[a]) idx[a++] = 0;
        if (a == AX_COUNT) break;
    }
    return count;
}

void bg_sched_str(const BgSchedPoint *pt, char *buf, size_t n) {
    BgStrBuf o = {0};
    const BgSched *s = &pt->s;
    if (s->block) bg_sb_printf(&o, " block=%d", s->block);
    if (s->grid) bg_sb_printf(&o, " grid=%d", s->grid);
    if (s->chunk) bg_sb_printf(&o, " chunk=%d", s->chunk);
    if (s->group) bg_sb_printf(&o, " group=%s", s->group > 0 ? "always" : "never");
    if (s->fb) bg_sb_printf(&o, " fb=%s", fb_names[s->fb]);
    if (s->lanes) bg_sb_printf(&o, " lanes=%d", s->lanes);
    if (pt->method) bg_sb_printf(&o, " method=%s", method_names[pt->method]);
    if (pt->path) bg_sb_printf(&o, " path=%s", path_names[pt->path]);
    char *t = bg_sb_take(&o);
    snprintf(buf, n, "%s", t && *t ? t + 1 : "default");
    free(t);
}

static int choice(const char *v, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) return i;
    return -1;
}

static bool number(const char *v, long lo, long hi, long *out) {
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (!*v || !end || *end || x < lo || x > hi) return false;
    *out = x;
    return true;
}

bool bg_sched_parse(const char *text, BgSchedPoint *pt, char *err, size_t n) {
    memset(pt, 0, sizeof *pt);
    if (strcmp(text, "default") == 0) return true;
    char tmp[256];
    if (strlen(text) >= sizeof tmp) {
        snprintf(err, n, "schedule text too long");
        return false;
    }
    strcpy(tmp, text);
    for (char *save = NULL, *f = strtok_r(tmp, " ,", &save); f; f = strtok_r(NULL, " ,", &save)) {
        char *eq = strchr(f, '=');
        if (!eq) {
            snprintf(err, n, "'%.40s': expected key=value", f);
            return false;
        }
        *eq = 0;
        const char *k = f, *v = eq + 1;
        long x;
        int c;
        if (strcmp(k, "block") == 0 && number(v, 32, 1024, &x) && x % 32 == 0) pt->s.block = (uint16_t)x;
        else if (strcmp(k, "grid") == 0 && number(v, 1, 64, &x)) pt->s.grid = (uint8_t)x;
        else if (strcmp(k, "chunk") == 0 && number(v, 32, BG_PLAN_BSPMM_CHUNK, &x)) pt->s.chunk = (uint16_t)x;
        else if (strcmp(k, "group") == 0 && (strcmp(v, "always") == 0 || strcmp(v, "never") == 0))
            pt->s.group = (int8_t)(v[0] == 'a' ? 1 : -1);
        else if (strcmp(k, "fb") == 0 && (c = choice(v, fb_names, 4)) > 0) pt->s.fb = (uint8_t)c;
        else if (strcmp(k, "lanes") == 0 && number(v, 8, 16, &x) && (x == 8 || x == 16)) pt->s.lanes = (uint8_t)x;
        else if (strcmp(k, "method") == 0 && (c = choice(v, method_names, 4)) > 0) pt->method = (BgMethod)c;
        else if (strcmp(k, "path") == 0 && (c = choice(v, path_names, 4)) > 0) pt->path = (BgBmmPath)c;
        else {
            snprintf(err, n, "'%.24s=%.24s': unknown key or value out of range (block=32..1024 in 32s, grid=1..64, "
                     "chunk=32..%d, group=always|never, fb=rows|tiled|sparse, lanes=8|16, method=ifelse|andnot|popc2, path=popc|tc|wgmma)",
                     k, v, BG_PLAN_BSPMM_CHUNK);
            return false;
        }
    }
    return true;
}

void bg_sched_op_key(const BgModule *m, const BgInst *in, char *buf, size_t n) {
    const Kind k = kind_of(m, in);
    const char *opn = bg_op_info(in->op)->name;
    long long cols = in->type.rank == 2 ? (long long)in->type.dim[1] : 1;
    if (in->op == BG_OP_BSPMM || in->op == BG_OP_BSPMM_MM) {
        const BgInst *g = &m->insts[in->args[0]];
        const BgType *x = &m->insts[in->args[1]].type; /* the activation (bspmm_mm: its product's) */
        long long kin = x->rank == 2 ? (long long)x->dim[1] : 1;
        snprintf(buf, n, "%s.%s %s k=%lld c=%lld norm=%s loops=%d steps=%d", opn, in->prec, kind_name(k), kin, cols,
                 bg_norm_name(g->attrs.norm), g->attrs.self_loops ? 1 : 0, in->nsteps);
    } else {
        snprintf(buf, n, "%s.%s %s k=%lld c=%lld steps=%d", opn, in->prec, kind_name(k),
                 (long long)bg_inst_bmm_k(m, in), cols, in->nsteps);
    }
}

int bg_sched_apply_db(BgModule *m, const BgTuneDb *db, const char *graph_key, int sm, BgDiagSink *d) {
    int applied = 0;
    for (int i = 0; i < m->ninsts; i++) {
        BgInst *in = &m->insts[i];
        if (!bg_sched_tunable(m, in)) continue;
        char op[160], err[200];
        bg_sched_op_key(m, in, op, sizeof op);
        const BgTuneRecord *r = bg_tune_db_find(db, op, graph_key);
        if (!r) continue;
        BgSchedPoint pt;
        const bool ok = bg_sched_parse(r->sched, &pt, err, sizeof err) && bg_sched_valid(m, in, &pt, err, sizeof err);
        if (!ok || path_unusable(pt.path, sm)) {
            bg_diag_at(d, BG_SEV_WARNING, BG_E_FORMAT, NULL, (BgLoc){0},
                       "tuning database: record for '%s' on '%s' has schedule '%s', not usable here (%s); the default "
                       "schedule runs", op, graph_key, r->sched, ok ? path_unusable(pt.path, sm) : err);
            continue;
        }
        bg_sched_set(in, &pt);
        applied++;
    }
    return applied;
}

bool bg_sched_apply_text(BgModule *m, const char *spec, BgDiagSink *d) {
    char *end = NULL;
    long inst = strtol(spec[0] == '%' ? spec + 1 : spec, &end, 10);
    if (!end || *end != ':' || inst < 0 || inst >= m->ninsts) {
        bg_diag_error(d, BG_E_OPTION, "--sched '%.60s': expected INST:SCHEDULE with INST an instruction of the IR "
                      "(0..%d), e.g. 13:block=128,grid=2", spec, m->ninsts - 1);
        return false;
    }
    BgInst *in = &m->insts[inst];
    BgSchedPoint pt;
    char err[200];
    if (!bg_sched_tunable(m, in)) {
        bg_diag_error(d, BG_E_OPTION, "--sched '%.60s': %%%ld (%s) has no schedule", spec, inst, bg_op_info(in->op)->name);
        return false;
    }
    if (!bg_sched_parse(end + 1, &pt, err, sizeof err) || !bg_sched_valid(m, in, &pt, err, sizeof err)) {
        bg_diag_error(d, BG_E_OPTION, "--sched '%.60s': %s", spec, err);
        return false;
    }
    bg_sched_set(in, &pt);
    return true;
}

/* Knob k (bg_sched_model_knobs order) of pt set to a model's value v (out of range: the default). */
static void set_knob(BgSchedPoint *pt, int k, int v) {
    switch (k) {
    case 0: pt->s.block = (uint16_t)(v > 0 && v <= 1024 ? v : 0); break;
    case 1: pt->s.grid = (uint8_t)(v > 0 && v <= 64 ? v : 0); break;
    case 2: pt->s.chunk = (uint16_t)(v > 0 && v <= 4096 ? v : 0); break;
    case 3: pt->s.group = (int8_t)(v < 0 ? -1 : v > 0 ? 1 : 0); break;
    case 4: pt->s.fb = (uint8_t)(v >= 0 && v <= BG_SCHED_FB_SPARSE ? v : 0); break;
    default: pt->s.lanes = (uint8_t)(v == 8 || v == 16 ? v : 0); break;
    }
}

int bg_sched_apply_rules(BgModule *m, int64_t n, int64_t ngraphs, double deg_mean, bool dry) {
    if (ngraphs > 1 || n < BG_SCHED_LANES_MIN_ROWS || !(deg_mean <= BG_SCHED_LANES_MAX_DEG)) return 0;
    int applied = 0;
    for (int i = 0; i < m->ninsts; i++) {
        BgInst *in = &m->insts[i];
        const Kind k = kind_of(m, in);
        if (!lanes_apply(in, k) || !bg_sched_is_default(&in->attrs.sched)) continue;
        BgSchedPoint pt = bg_sched_point(in);
        pt.s.lanes = 16;
        if (!bg_sched_valid(m, in, &pt, NULL, 0)) continue;
        if (!dry) bg_sched_set(in, &pt);
        applied++;
    }
    return applied;
}

int bg_sched_apply_model(BgModule *m, const BgSchedModel *model, const double *x) {
    const char *const *knobs = bg_sched_model_knobs; /* set_knob follows their order */
    int applied = 0;
    enum { MAXPTS = 4096 };
    int (*ranked)[BG_SCHED_MODEL_NKNOBS] = model ? bg_xmalloc(sizeof *ranked * MAXPTS) : NULL;
    for (int i = 0; model && i < m->ninsts; i++) {
        BgInst *in = &m->insts[i];
        if (!bg_sched_tunable(m, in)) continue;
        char op[160], fam[160];
        bg_sched_op_key(m, in, op, sizeof op);
        const char *sp = strchr(op, ' ');
        sp = sp ? strchr(sp + 1, ' ') : NULL;
        snprintf(fam, sizeof fam, "%.*s", sp ? (int)(sp - op) : (int)strlen(op), op);
        double xx[BG_SCHED_MODEL_NFEAT];
        memcpy(xx, x, sizeof xx);
        bg_sched_model_widths(op, xx);
        /* a regression: the candidate of least predicted time that this instruction can take */
        const int nr = bg_sched_model_ranked(model, fam, xx, ranked, MAXPTS);
        bool done = false;
        for (int r = 0; r < nr && !done; r++) {
            BgSchedPoint pt = bg_sched_point(in);
            for (int k = 0; k < BG_SCHED_MODEL_NKNOBS; k++) set_knob(&pt, k, ranked[r][k]);
            if (bg_sched_valid(m, in, &pt, NULL, 0)) {
                bg_sched_set(in, &pt);
                applied++;
                done = true;
            }
        }
        if (nr > 0) continue;
        /* classification trees: each knob's value */
        BgSchedPoint pt = bg_sched_point(in);
        bool any = false;
        for (int k = 0; k < BG_SCHED_MODEL_NKNOBS; k++) {
            int v;
            if (!bg_sched_model_predict(model, fam, knobs[k], xx, &v)) continue;
            any = true;
            set_knob(&pt, k, v);
        }
        /* a point this instruction cannot take (the model saw another kernel): the default */
        if (any && bg_sched_valid(m, in, &pt, NULL, 0)) {
            bg_sched_set(in, &pt);
            applied++;
        }
    }
    free(ranked);
    return applied;
}
