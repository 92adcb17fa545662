/* api.c - the public API (include/bgnn/bgnn.h) over the internal layers.
 *
 * Every entry point checks its arguments, collects diagnostics in a local BgDiagSink, and on
 * failure renders them into the context's last-error text and maps the first error's code to
 * a bgnn_status (status_of).  GPU work goes through rt.h (module.c, bind.c, exec.c); the CPU target
 * runs the same module through bg_bind + bg_interp_run.  Nothing here prints or exits. */
#include "bgnn/bgnn.h"
#include "driver.h"
#include "sched_model.h"
#include "tune_db.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct bgnn_context {
    bgnn_target target;     /* CPU or GPU (never AUTO after create) */
    bool have_gpu;
    BgGpu gpu;
    char *cache_dir;        /* NULL: no disk cache */
    char arch[16];
    bool fp_strict;         /* compile with --fp-strict (bgnn_context_options) */
    char *tune_db;          /* the tuning database file, NULL: the GPU's own; "off": none */
    char devname[200];
    char *err;              /* last error text (malloc'd) */
};

struct bgnn_model {
    bgnn_context *c;
    BgArena *arena;         /* module (CPU and JIT) */
    BgModule *m;            /* NULL for a loaded cubin */
    char *src;              /* model source and its name (for random weights) */
    size_t src_len;
    char *src_name;
    bool gpu;
    BgGpuModel gm;
    double compile_ms;
    bool cache_hit, from_cubin;
    int noutputs;
    const char **out_names; /* borrowed from the module or the plan */
};

struct bgnn_session {
    bgnn_model *m;
    BgDataset ds;           /* labels and splits of load_data (its graph/features moved out) */
    bool have_ds;
    BgGraph graph;
    bool have_graph;
    BgTensor feat;          /* host features, or only the shape when fdev != 0 */
    BgCUdeviceptr fdev;
    char *weights;
    BgSafetensors wmem;     /* tensors of bgnn_session_set_weights_tensor (used instead of a file) */
    bool dirty, prepared, ran;
    int64_t requests;       /* bgnn_session_set_requests: K feature sets a run (1 by default) */
    BgGraph bound;          /* with K > 1: the graph as K disjoint copies, bound instead of graph */
    bool have_bound;
    BgGpuRun run;           /* GPU */
    BgGpuModel tgm;         /* GPU: the model compiled with the tuning database's schedules for
                             * the bound graph (session_tune), when it has some */
    BgArena *tarena;        /* its module */
    bool tuned;
    bool tune_valid;        /* session_tune ran for a graph of key tune_key: a later prepare
                             * with a graph of the same key keeps its outcome */
    char tune_key[96];
    BgBindings b;           /* CPU */
    BgInterpResult res;     /* CPU outputs of the last run */
};

/* ---- errors -------------------------------------------------------------------------- */
const char *bgnn_version(void) { return BG_VERSION_STRING; }

const char *bgnn_status_string(bgnn_status s) {
    switch (s) {
    case BGNN_OK: return "ok";
    case BGNN_ERR_INVALID_ARG: return "invalid argument";
    case BGNN_ERR_SYNTAX: return "syntax error in the model";
    case BGNN_ERR_TYPE: return "type or semantic error in the model";
    case BGNN_ERR_IO: return "cannot read or write a file";
    case BGNN_ERR_DATA: return "graph, features or weights do not fit the model";
    case BGNN_ERR_NVRTC: return "NVRTC unavailable or compilation failed";
    case BGNN_ERR_CUDA: return "CUDA driver error";
    case BGNN_ERR_NO_DEVICE: return "no CUDA device";
    case BGNN_ERR_ARCH: return "unsupported GPU architecture";
    case BGNN_ERR_DRIVER: return "CUDA driver too old";
    case BGNN_ERR_MANIFEST: return "invalid or incompatible manifest";
    case BGNN_ERR_NOMEM: return "out of host memory";
    case BGNN_ERR_DEVICE_MEMORY: return "out of device memory";
    case BGNN_ERR_UNSUPPORTED: return "not supported on this target";
    case BGNN_ERR_STATE: return "call out of order";
    case BGNN_ERR_INTERNAL: return "internal error (a bgnn bug)";
    }
    return "unknown status";
}

static bgnn_status status_of_code(int code) {
    if (code >= 100 && code < 200) return BGNN_ERR_SYNTAX;
    if (code >= 200 && code < 400) return BGNN_ERR_TYPE;
    switch (code) {
    case BG_E_IO: case BG_E_FORMAT: case BG_E_WRITE: return BGNN_ERR_IO;
    case BG_E_WEIGHT_MISSING: case BG_E_WEIGHT_SHAPE: case BG_E_DATA_SHAPE: case BG_E_LIMIT:
        return BGNN_ERR_DATA;
    case BG_E_OPTION: return BGNN_ERR_INVALID_ARG;
    case BG_E_ARCH: return BGNN_ERR_ARCH;
    case BG_E_MANIFEST: return BGNN_ERR_MANIFEST;
    case BG_E_NO_DEVICE: return BGNN_ERR_NO_DEVICE;
    case BG_E_CUDA: return BGNN_ERR_CUDA;
    case BG_E_DRIVER_OLD: return BGNN_ERR_DRIVER;
    case BG_E_NVRTC: case BG_E_NVRTC_COMPILE: return BGNN_ERR_NVRTC;
    }
    return BGNN_ERR_INTERNAL;
}

static void set_err_text(bgnn_context *c, char *text) {
    if (!c) {
        free(text);
        return;
    }
    free(c->err);
    c->err = text;
}

static bgnn_status fail_msg(bgnn_context *c, bgnn_status s, const char *fmt, ...) BG_PRINTF(3, 4);
static bgnn_status fail_msg(bgnn_context *c, bgnn_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t n = strlen(buf);
    char *t = malloc(n + 2);
    if (t) {
        memcpy(t, buf, n);
        t[n] = '\n';
        t[n + 1] = 0;
    }
    set_err_text(c, t);
    return s;
}

/* Renders d into c's last error and frees d; the status of the first error (or forced). */
static bgnn_status finish(bgnn_context *c, BgDiagSink *d, bool ok, bgnn_status forced) {
    bgnn_status s = BGNN_OK;
    if (!ok || d->nerrors) {
        s = forced;
        if (s == BGNN_OK) {
            s = BGNN_ERR_INTERNAL;
            for (int i = 0; i < d->n; i++)
                if (d->items[i].sev == BG_SEV_ERROR) {
                    s = status_of_code(d->items[i].code);
                    break;
                }
        }
        char *t = bg_diag_render(d);
        if (!t || !*t) {
            free(t);
            t = NULL;
            fail_msg(c, s, "%s", bgnn_status_string(s));
        } else {
            set_err_text(c, t);
        }
    }
    bg_diag_free(d);
    return s;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static char *xstrdup(const char *s) {
    size_t n = strlen(s);
    char *p = bg_xmalloc(n + 1);
    memcpy(p, s, n + 1);
    return p;
}

/* ---- contexts -------------------------------------------------------------------------- */
void bgnn_context_options_init(bgnn_context_options *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->target = BGNN_TARGET_AUTO;
}

bgnn_status bgnn_context_create(const bgnn_context_options *o, bgnn_context **out) {
    if (!out) return BGNN_ERR_INVALID_ARG;
    *out = NULL;
    bgnn_context_options opt;
    bgnn_context_options_init(&opt);
    if (o) {
        if (o->struct_size < offsetof(bgnn_context_options, target) + sizeof o->target ||
            o->struct_size > sizeof opt)
            return BGNN_ERR_INVALID_ARG;
        memcpy(&opt, o, o->struct_size);
    }
    bgnn_context *c = calloc(1, sizeof *c);
    if (!c) return BGNN_ERR_NOMEM;
    *out = c;
    snprintf(c->devname, sizeof c->devname, "cpu (reference interpreter)");
    c->target = BGNN_TARGET_CPU;
    if (opt.target != BGNN_TARGET_AUTO && opt.target != BGNN_TARGET_CPU && opt.target != BGNN_TARGET_GPU)
        return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_context_create: unknown target %d", (int)opt.target);
    c->fp_strict = opt.fp_strict != 0;
    if (o && o->struct_size >= offsetof(bgnn_context_options, tune_db) + sizeof o->tune_db && opt.tune_db)
        c->tune_db = xstrdup(opt.tune_db);
    if (!opt.disable_cache) {
        c->cache_dir = opt.cache_dir && *opt.cache_dir ? xstrdup(opt.cache_dir) : bg_cache_default_dir();
    }
    if (opt.target == BGNN_TARGET_CPU) return BGNN_OK;

    BgDiagSink d;
    bg_diag_init(&d);
    if (!bg_gpu_open(&c->gpu, opt.device, &d)) {
        if (opt.target == BGNN_TARGET_AUTO) { /* fall back to the CPU, quietly */
            bg_diag_free(&d);
            return BGNN_OK;
        }
        return finish(c, &d, false, BGNN_OK);
    }
    c->have_gpu = true;
    c->target = BGNN_TARGET_GPU;
    snprintf(c->devname, sizeof c->devname, "%s (%s)", c->gpu.name, c->gpu.arch);
    snprintf(c->arch, sizeof c->arch, "%s", opt.arch && *opt.arch ? opt.arch : c->gpu.arch);
    int sm;
    if (!bg_arch_parse(c->arch, &sm)) {
        bg_diag_error(&d, BG_E_ARCH, "malformed GPU architecture '%s' (expected sm_XX, e.g. sm_90)", c->arch);
        return finish(c, &d, false, BGNN_OK);
    }
    bg_diag_free(&d);
    return BGNN_OK;
}

void bgnn_context_destroy(bgnn_context *c) {
    if (!c) return;
    if (c->have_gpu) bg_gpu_close(&c->gpu);
    free(c->cache_dir);
    free(c->tune_db);
    free(c->err);
    free(c);
}

const char *bgnn_context_last_error(const bgnn_context *c) {
    return c && c->err ? c->err : "";
}

bgnn_target bgnn_context_target(const bgnn_context *c) { return c ? c->target : BGNN_TARGET_CPU; }

const char *bgnn_context_device_name(const bgnn_context *c) { return c ? c->devname : ""; }

/* ---- models ------------------------------------------------------------------------------ */
static void model_free(bgnn_model *m) {
    if (!m) return;
    if (m->gm.arena) bg_gpu_model_free(&m->c->gpu, &m->gm);
    if (m->arena) bg_arena_free(m->arena);
    free(m->out_names);
    free(m->src);
    free(m->src_name);
    free(m);
}

void bgnn_model_destroy(bgnn_model *m) {
    if (m && m->c->have_gpu) m->c->gpu.cu.cuCtxSetCurrent(m->c->gpu.ctx);
    model_free(m);
}

static bool ensure_nvrtc(bgnn_context *c, BgDiagSink *d) {
    return c->gpu.nv.lib || bg_nvrtc_load(&c->gpu.nv, d);
}

bgnn_status bgnn_model_compile(bgnn_context *c, const char *src, size_t n, const char *name,
                               bgnn_model **out) {
    if (!out) return c ? fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_model_compile: out is NULL") : BGNN_ERR_INVALID_ARG;
    *out = NULL;
    if (!c) return BGNN_ERR_INVALID_ARG;
    if (!src) return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_model_compile: src is NULL");
    double t0 = now_ms();
    bgnn_model *m = bg_xcalloc(1, sizeof *m);
    m->c = c;
    m->src = bg_xmalloc(n + 1);
    memcpy(m->src, src, n);
    m->src[n] = 0;
    m->src_len = n;
    m->src_name = xstrdup(name && *name ? name : "<model>");
    m->arena = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgCompileOpts co = {.fp_strict = c->fp_strict};
    m->m = bg_compile_text(m->arena, m->src_name, m->src, n, &co, &d);
    bool ok = m->m != NULL;
    if (ok && c->target == BGNN_TARGET_GPU) {
        unsigned char *cubin = NULL;
        size_t len = 0;
        BgJitInfo info;
        ok = bg_gpu_make_current(&c->gpu, &d) && ensure_nvrtc(c, &d) &&
             bg_jit_cubin(m->m, c->arch, &c->gpu.nv, c->cache_dir, &cubin, &len, &info, &d);
        if (ok) {
            m->cache_hit = info.cache_hit;
            ok = bg_gpu_model_load(&c->gpu, cubin, len, m->src_name, &m->gm, &d);
        }
        free(cubin);
        m->gpu = ok;
    }
    if (!ok) {
        bgnn_status st = finish(c, &d, false, BGNN_OK); /* before the arena (sources) goes */
        model_free(m);
        return st;
    }
    if (m->gpu) {
        m->noutputs = m->gm.plan->noutputs;
        m->out_names = bg_xcalloc((size_t)m->noutputs + 1, sizeof(char *));
        for (int i = 0; i < m->noutputs; i++) m->out_names[i] = m->gm.plan->outputs[i].name;
    } else {
        for (int i = 0; i < m->m->ninsts; i++) m->noutputs += m->m->insts[i].op == BG_OP_OUTPUT;
        m->out_names = bg_xcalloc((size_t)m->noutputs + 1, sizeof(char *));
        int k = 0;
        for (int i = 0; i < m->m->ninsts; i++)
            if (m->m->insts[i].op == BG_OP_OUTPUT) {
                const char *nm = m->m->insts[i].attrs.name;
                m->out_names[k] = nm ? nm : bg_arena_printf(m->arena, "output%d", k);
                k++;
            }
    }
    m->compile_ms = now_ms() - t0;
    *out = m;
    return finish(c, &d, true, BGNN_OK); /* warnings are not kept */
}

bgnn_status bgnn_model_compile_file(bgnn_context *c, const char *path, bgnn_model **out) {
    if (out) *out = NULL;
    if (!c) return BGNN_ERR_INVALID_ARG;
    if (!path || !out) return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_model_compile_file: path or out is NULL");
    BgDiagSink d;
    bg_diag_init(&d);
    size_t len;
    char *text = bg_read_file(path, &len, &d);
    if (!text) return finish(c, &d, false, BGNN_OK);
    bg_diag_free(&d);
    bgnn_status s = bgnn_model_compile(c, text, len, path, out);
    free(text);
    return s;
}

bgnn_status bgnn_model_load_cubin(bgnn_context *c, const char *path, bgnn_model **out) {
    if (out) *out = NULL;
    if (!c) return BGNN_ERR_INVALID_ARG;
    if (!path || !out) return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_model_load_cubin: path or out is NULL");
    if (c->target != BGNN_TARGET_GPU)
        return fail_msg(c, BGNN_ERR_UNSUPPORTED,
                        "%s: a cubin holds GPU code only; the CPU target needs the model's .bgnn source", path);
    double t0 = now_ms();
    BgDiagSink d;
    bg_diag_init(&d);
    size_t len;
    unsigned char *img = (unsigned char *)bg_read_file(path, &len, &d);
    if (!img) return finish(c, &d, false, BGNN_OK);
    bgnn_model *m = bg_xcalloc(1, sizeof *m);
    m->c = c;
    bool ok = bg_gpu_make_current(&c->gpu, &d) && bg_gpu_model_load(&c->gpu, img, len, path, &m->gm, &d);
    free(img);
    if (!ok) {
        model_free(m);
        return finish(c, &d, false, BGNN_OK);
    }
    m->gpu = m->from_cubin = true;
    m->noutputs = m->gm.plan->noutputs;
    m->out_names = bg_xcalloc((size_t)m->noutputs + 1, sizeof(char *));
    for (int i = 0; i < m->noutputs; i++) m->out_names[i] = m->gm.plan->outputs[i].name;
    m->compile_ms = now_ms() - t0;
    *out = m;
    return finish(c, &d, true, BGNN_OK);
}

bgnn_status bgnn_model_get_info(const bgnn_model *m, bgnn_model_info *info) {
    if (!m || !info || info->struct_size < sizeof(size_t)) return BGNN_ERR_INVALID_ARG;
    bgnn_model_info v;
    memset(&v, 0, sizeof v);
    v.struct_size = info->struct_size < sizeof v ? info->struct_size : sizeof v;
    v.name = m->gpu ? m->gm.plan->model : m->m->name;
    v.arch = m->gpu ? m->gm.plan->arch : NULL;
    v.compile_ms = m->compile_ms;
    v.cache_hit = m->cache_hit;
    v.from_cubin = m->from_cubin;
    v.noutputs = m->noutputs;
    v.nkernels = m->gpu ? m->gm.plan->nlaunches : 0;
    memcpy(info, &v, v.struct_size);
    return BGNN_OK;
}

const char *bgnn_model_output_name(const bgnn_model *m, int i) {
    return m && i >= 0 && i < m->noutputs ? m->out_names[i] : NULL;
}

bgnn_status bgnn_model_write_random_weights(bgnn_model *m, uint64_t seed, const char *path) {
    if (!m) return BGNN_ERR_INVALID_ARG;
    if (!path) return fail_msg(m->c, BGNN_ERR_INVALID_ARG, "bgnn_model_write_random_weights: path is NULL");
    if (!m->src)
        return fail_msg(m->c, BGNN_ERR_UNSUPPORTED,
                        "random weights need the model's source; a loaded cubin has none");
    BgDiagSink d;
    bg_diag_init(&d);
    BgArena *a = bg_arena_new();
    BgCompileOpts o = {0};
    static const char *const none[1] = {NULL};
    o.passes = none; /* lowered IR: every declared parameter */
    BgModule *lm = bg_compile_text(a, m->src_name, m->src, m->src_len, &o, &d);
    bool ok = lm && bg_gen_weights(lm, (unsigned long long)seed, path, NULL, &d);
    bgnn_status st = finish(m->c, &d, ok, BGNN_OK);
    bg_arena_free(a);
    return st;
}

/* ---- sessions ------------------------------------------------------------------------------ */
static void unprepare(bgnn_session *s) {
    bgnn_context *c = s->m->c;
    if (s->m->gpu) {
        c->gpu.cu.cuCtxSetCurrent(c->gpu.ctx);
        bg_gpu_run_free(&c->gpu, &s->run);
    }
    bg_interp_result_free(&s->res);
    if (s->b.m) bg_bindings_free(&s->b);
    s->prepared = s->ran = false;
    if (s->have_bound) bg_graph_free(&s->bound);
    s->have_bound = false;
}

/* The compiled model a session runs: its tuned one, else the model's. */
static BgGpuModel *sgm(bgnn_session *s) { return s->tuned ? &s->tgm : &s->m->gm; }

/* The graph bound to the model: the session's, or its K copies (bgnn_session_set_requests). */
static BgGraph *bound_graph(bgnn_session *s) { return s->have_bound ? &s->bound : &s->graph; }

bgnn_status bgnn_session_create(bgnn_model *m, bgnn_session **out) {
    if (!out) return m ? fail_msg(m->c, BGNN_ERR_INVALID_ARG, "bgnn_session_create: out is NULL") : BGNN_ERR_INVALID_ARG;
    *out = NULL;
    if (!m) return BGNN_ERR_INVALID_ARG;
    bgnn_session *s = calloc(1, sizeof *s);
    if (!s) return fail_msg(m->c, BGNN_ERR_NOMEM, "bgnn_session_create: out of memory");
    s->m = m;
    s->dirty = true;
    s->requests = 1;
    *out = s;
    return BGNN_OK;
}

void bgnn_session_destroy(bgnn_session *s) {
    if (!s) return;
    unprepare(s);
    if (s->tuned) bg_gpu_model_free(&s->m->c->gpu, &s->tgm);
    if (s->tarena) bg_arena_free(s->tarena);
    if (s->have_ds) bg_dataset_free(&s->ds);
    if (s->have_graph) bg_graph_free(&s->graph);
    bg_tensor_free(&s->feat);
    free(s->weights);
    bg_safetensors_free(&s->wmem);
    free(s);
}

static void set_graph(bgnn_session *s, BgGraph *g) {
    if (s->have_graph) bg_graph_free(&s->graph);
    s->graph = *g;
    memset(g, 0, sizeof *g);
    s->have_graph = true;
    s->dirty = true;
}

bgnn_status bgnn_session_load_data(bgnn_session *s, const char *dir) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_context *c = s->m->c;
    if (!dir) return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_session_load_data: dir is NULL");
    BgDiagSink d;
    bg_diag_init(&d);
    BgDataset ds;
    if (!bg_dataset_load(dir, &ds, &d)) return finish(c, &d, false, BGNN_OK);
    if (s->have_ds) bg_dataset_free(&s->ds);
    set_graph(s, &ds.graph);
    if (ds.features.data && ds.features.dim[0] > 0) {
        bg_tensor_free(&s->feat);
        s->feat = ds.features;
        s->fdev = 0;
        memset(&ds.features, 0, sizeof ds.features);
    }
    s->ds = ds;
    s->have_ds = true;
    return finish(c, &d, true, BGNN_OK);
}

bgnn_status bgnn_session_set_graph_csr(bgnn_session *s, int64_t n, const int64_t *rowptr,
                                       const int32_t *col, int64_t ngraphs, const int64_t *graph_ptr) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_context *c = s->m->c;
    if (n < 0 || !rowptr || (rowptr[n] > 0 && !col) || n > INT32_MAX)
        return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_session_set_graph_csr: bad n (%lld) or NULL arrays", (long long)n);
    if (rowptr[0] != 0)
        return fail_msg(c, BGNN_ERR_DATA, "graph CSR: rowptr[0] is %lld, must be 0", (long long)rowptr[0]);
    for (int64_t i = 0; i < n; i++)
        if (rowptr[i + 1] < rowptr[i])
            return fail_msg(c, BGNN_ERR_DATA, "graph CSR: rowptr decreases at row %lld (%lld > %lld)",
                            (long long)i, (long long)rowptr[i], (long long)rowptr[i + 1]);
    if (graph_ptr) {
        if (ngraphs < 1 || graph_ptr[0] != 0 || graph_ptr[ngraphs] != n)
            return fail_msg(c, BGNN_ERR_DATA, "graph_ptr must start at 0 and end at n = %lld", (long long)n);
        for (int64_t g = 0; g < ngraphs; g++)
            if (graph_ptr[g + 1] < graph_ptr[g])
                return fail_msg(c, BGNN_ERR_DATA, "graph_ptr decreases at graph %lld", (long long)g);
    }
    int64_t nnz = rowptr[n];
    BgCoo coo = {n, n, nnz, bg_xcalloc((size_t)nnz + 1, 8), bg_xcalloc((size_t)nnz + 1, 8), NULL};
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) {
            coo.row[k] = i;
            coo.col[k] = col[k];
        }
    BgDiagSink d;
    bg_diag_init(&d);
    BgGraph g;
    bool ok = bg_graph_from_coo(&coo, "graph CSR", &g, &d);
    bg_coo_free(&coo);
    if (!ok) return finish(c, &d, false, BGNN_ERR_DATA);
    if (graph_ptr) {
        g.ngraphs = ngraphs;
        g.graph_ptr = bg_xmalloc(sizeof(int64_t) * (size_t)(ngraphs + 1));
        memcpy(g.graph_ptr, graph_ptr, sizeof(int64_t) * (size_t)(ngraphs + 1));
    } else {
        g.ngraphs = 1;
    }
    set_graph(s, &g);
    return finish(c, &d, true, BGNN_OK);
}

bgnn_status bgnn_session_set_features(bgnn_session *s, const float *x, int64_t rows, int64_t cols) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    if (!x || rows < 0 || cols < 1)
        return fail_msg(s->m->c, BGNN_ERR_INVALID_ARG, "bgnn_session_set_features: NULL data or bad shape");
    BgTensor t;
    if (!bg_tensor_alloc(&t, BG_DT_F32, 2, rows, cols))
        return fail_msg(s->m->c, BGNN_ERR_NOMEM, "features of %lld x %lld floats: out of memory",
                        (long long)rows, (long long)cols);
    memcpy(t.data, x, bg_tensor_bytes(&t));
    bg_tensor_free(&s->feat);
    s->feat = t;
    s->fdev = 0;
    s->dirty = true;
    return BGNN_OK;
}

bgnn_status bgnn_session_set_features_file(bgnn_session *s, const char *path) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_context *c = s->m->c;
    if (!path) return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_session_set_features_file: path is NULL");
    BgDiagSink d;
    bg_diag_init(&d);
    BgNpy v;
    if (!bg_npy_load(path, BG_NPY_AS_F32, &v, &d)) return finish(c, &d, false, BGNN_OK);
    if (v.rank != 2) {
        bg_npy_free(&v);
        bg_diag_error(&d, BG_E_DATA_SHAPE, "%s: features must be a 2-D float array", path);
        return finish(c, &d, false, BGNN_OK);
    }
    bg_tensor_free(&s->feat);
    s->feat.dtype = BG_DT_F32;
    s->feat.rank = 2;
    s->feat.dim[0] = v.dim[0];
    s->feat.dim[1] = v.dim[1];
    s->feat.data = v.data;
    v.data = NULL;
    bg_npy_free(&v);
    s->fdev = 0;
    s->dirty = true;
    return finish(c, &d, true, BGNN_OK);
}

bgnn_status bgnn_session_set_features_device(bgnn_session *s, uint64_t dptr, int64_t rows, int64_t cols) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    if (!s->m->gpu)
        return fail_msg(s->m->c, BGNN_ERR_UNSUPPORTED, "device features need a GPU context");
    if (!dptr || rows < 0 || cols < 1)
        return fail_msg(s->m->c, BGNN_ERR_INVALID_ARG, "bgnn_session_set_features_device: NULL pointer or bad shape");
    if (s->prepared && !s->dirty && s->fdev && s->feat.dim[0] == rows && s->feat.dim[1] == cols) {
        /* another array of the same shape: point the bound input at it (no new bind) */
        bgnn_context *c = s->m->c;
        c->gpu.cu.cuCtxSetCurrent(c->gpu.ctx);
        bg_gpu_run_set_input(&c->gpu, sgm(s)->plan, &s->run, (BgCUdeviceptr)dptr);
        s->fdev = (BgCUdeviceptr)dptr;
        s->ran = false;
        return BGNN_OK;
    }
    bg_tensor_free(&s->feat);
    s->feat.dtype = BG_DT_F32;
    s->feat.rank = 2;
    s->feat.dim[0] = rows;
    s->feat.dim[1] = cols;
    s->fdev = (BgCUdeviceptr)dptr;
    s->dirty = true;
    return BGNN_OK;
}

bgnn_status bgnn_session_set_weights(bgnn_session *s, const char *path) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    if (!path) return fail_msg(s->m->c, BGNN_ERR_INVALID_ARG, "bgnn_session_set_weights: path is NULL");
    free(s->weights);
    s->weights = xstrdup(path);
    bg_safetensors_free(&s->wmem);
    s->dirty = true;
    return BGNN_OK;
}

bgnn_status bgnn_session_set_requests(bgnn_session *s, int64_t k) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    if (k < 1 || k > INT32_MAX)
        return fail_msg(s->m->c, BGNN_ERR_INVALID_ARG, "bgnn_session_set_requests: %lld requests (expected 1 to 2^31-1)",
                        (long long)k);
    if (k != s->requests) s->dirty = true;
    s->requests = k;
    return BGNN_OK;
}

/* The tuning database's schedules for the bound graph (docs/tuning.md), over the learned
 * predictor's (the GPU's .model file beside it), over the plan's rules (bg_sched_apply_rules):
 * when any of them sets a schedule of this model's
 * ops for a graph like this one, the session compiles its own copy of the model with them (JIT
 * through the cache: the schedule is part of the key); a later prepare over a graph of the same
 * key keeps that outcome without reading the files again.  A database that cannot be read is
 * a warning and the model's own schedule runs. */
static bool session_tune(bgnn_session *s, BgDiagSink *d) {
    bgnn_model *m = s->m;
    bgnn_context *c = m->c;
    if (!m->m || (c->tune_db && strcmp(c->tune_db, "off") == 0)) return true;
    BgGraphFeatures f;
    bg_graph_features(bound_graph(s), &f);
    char key[96];
    bg_graph_key(&f, key, sizeof key);
    /* new features or weights over a graph like the last one: the same schedules, already compiled */
    if (s->tune_valid && strcmp(key, s->tune_key) == 0) return true;
    if (s->tuned) bg_gpu_model_free(&c->gpu, &s->tgm);
    memset(&s->tgm, 0, sizeof s->tgm);
    s->tuned = s->tune_valid = false;
    char *path = c->tune_db ? xstrdup(c->tune_db) : bg_tune_db_path(NULL, c->gpu.name, c->gpu.sm);
    BgTuneDb *db = path ? bg_tune_db_load(path, d) : NULL;
    BgSchedModel *model = bg_sched_model_for_gpu(getenv("BGNN_SCHED_MODEL"), c->gpu.name, c->gpu.sm, NULL, d);
    free(path);
    snprintf(s->tune_key, sizeof s->tune_key, "%s", key);
    if ((!db || bg_tune_db_count(db) == 0) && bg_sched_model_ntrees(model) == 0 &&
        bg_sched_apply_rules(m->m, f.n, f.ngraphs, f.deg_mean, true) == 0) {
        bg_tune_db_free(db);
        bg_sched_model_free(model);
        s->tune_valid = true;
        return true;
    }
    if (s->tarena) bg_arena_free(s->tarena);
    s->tarena = bg_arena_new();
    BgCompileOpts co = {.fp_strict = c->fp_strict};
    BgModule *tm = bg_compile_text(s->tarena, m->src_name, m->src, m->src_len, &co, d);
    bool ok = tm != NULL;
    double x[BG_SCHED_MODEL_NFEAT];
    bg_sched_model_features(&f, x);
    /* the plan's rules, the learned predictor over them, then the measured records over both */
    const int nr = ok ? bg_sched_apply_rules(tm, f.n, f.ngraphs, f.deg_mean, false) : 0;
    const int np = ok ? bg_sched_apply_model(tm, model, x) : 0;
    bg_sched_model_free(model);
    if (ok && (db ? bg_sched_apply_db(tm, db, key, c->gpu.sm, d) : 0) + np + nr > 0) {
        unsigned char *cubin = NULL;
        size_t len = 0;
        ok = ensure_nvrtc(c, d) && bg_jit_cubin(tm, c->arch, &c->gpu.nv, c->cache_dir, &cubin, &len, NULL, d) &&
             bg_gpu_model_load(&c->gpu, cubin, len, m->src_name, &s->tgm, d);
        free(cubin);
        s->tuned = ok;
    }
    bg_tune_db_free(db);
    s->tune_valid = ok;
    return ok;
}

bgnn_status bgnn_session_prepare(bgnn_session *s) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_model *m = s->m;
    bgnn_context *c = m->c;
    if (!s->have_graph)
        return fail_msg(c, BGNN_ERR_STATE, "no graph bound: call bgnn_session_load_data or bgnn_session_set_graph_csr first");
    unprepare(s);
    const BgTensor *feat = s->feat.data || s->fdev ? &s->feat : NULL;
    if (s->requests > 1 && feat && feat->dim[0] != s->requests * s->graph.n)
        return fail_msg(c, BGNN_ERR_DATA,
                        "the features have %lld rows; %lld requests over a graph of %lld nodes need %lld "
                        "(bgnn_session_set_requests: the feature sets one after another)",
                        (long long)feat->dim[0], (long long)s->requests, (long long)s->graph.n,
                        (long long)(s->requests * s->graph.n));
    BgDiagSink d;
    bg_diag_init(&d);
    bool ok, oom = false;
    const BgSafetensors *wmem = s->wmem.n ? &s->wmem : NULL;
    if (s->requests > 1) {
        if (!bg_graph_replicate(&s->graph, s->requests, &s->bound, &d)) return finish(c, &d, false, BGNN_ERR_DATA);
        s->have_bound = true;
    }
    if (m->gpu) {
        ok = bg_gpu_make_current(&c->gpu, &d) && session_tune(s, &d) &&
             bg_gpu_run_bind_mem(&c->gpu, sgm(s), m->m, bound_graph(s), feat, s->fdev, s->weights, wmem,
                                 &s->run, &oom, &d);
    } else {
        ok = bg_bind_mem(m->m, bound_graph(s), feat, s->weights, wmem, &s->b, &d);
    }
    if (!ok) return finish(c, &d, false, oom ? BGNN_ERR_DEVICE_MEMORY : BGNN_OK);
    s->prepared = true;
    s->dirty = false;
    return finish(c, &d, true, BGNN_OK);
}

static bgnn_status ensure_prepared(bgnn_session *s) {
    if (s->prepared && !s->dirty) return BGNN_OK;
    return bgnn_session_prepare(s);
}

bgnn_status bgnn_session_run(bgnn_session *s, void *stream) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_status st = ensure_prepared(s);
    if (st != BGNN_OK) return st;
    bgnn_model *m = s->m;
    bgnn_context *c = m->c;
    BgDiagSink d;
    bg_diag_init(&d);
    bool ok;
    s->ran = false;
    if (m->gpu) {
        ok = bg_gpu_make_current(&c->gpu, &d) &&
             bg_gpu_run_launch(&c->gpu, sgm(s), &s->run, (BgCUstream)stream, &d);
    } else {
        bg_interp_result_free(&s->res);
        ok = bg_interp_run(m->m, &s->b, &s->res, NULL, &d);
    }
    s->ran = ok;
    return finish(c, &d, ok, BGNN_OK);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bgnn_status bgnn_session_time(bgnn_session *s, int repeat, void *stream, double *median_ms) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    if (!median_ms || repeat < 1)
        return fail_msg(s->m->c, BGNN_ERR_INVALID_ARG, "bgnn_session_time: repeat must be >= 1 and median_ms set");
    bgnn_status st = ensure_prepared(s);
    if (st != BGNN_OK) return st;
    bgnn_model *m = s->m;
    bgnn_context *c = m->c;
    BgDiagSink d;
    bg_diag_init(&d);
    bool ok;
    if (m->gpu) {
        ok = bg_gpu_make_current(&c->gpu, &d) &&
             bg_gpu_run_time(&c->gpu, sgm(s), &s->run, (BgCUstream)stream, repeat, median_ms, &d);
    } else {
        double *t = bg_xcalloc((size_t)repeat + 1, sizeof(double));
        ok = true;
        for (int k = 0; k <= repeat && ok; k++) { /* k = 0: warm-up */
            bg_interp_result_free(&s->res);
            double t0 = now_ms();
            ok = bg_interp_run(m->m, &s->b, &s->res, NULL, &d);
            if (k) t[k - 1] = now_ms() - t0;
        }
        if (ok) {
            qsort(t, (size_t)repeat, sizeof(double), cmp_double);
            *median_ms = t[repeat / 2];
        }
        free(t);
    }
    s->ran = ok;
    return finish(c, &d, ok, BGNN_OK);
}

/* Shape of output i for the bound graph. */
static bool output_shape(bgnn_session *s, int i, BgDType *dt, int *rank, int64_t dim[2]) {
    bgnn_model *m = s->m;
    const BgGraph *g = bound_graph(s);
    int64_t n = g->n, ng = g->graph_ptr ? g->ngraphs : 1;
    if (m->gpu) {
        bg_plan_output_shape(sgm(s)->plan, i, s->run.n, s->run.ngraphs, rank, dim);
        *dt = sgm(s)->plan->outputs[i].type;
        return true;
    }
    int k = 0;
    for (int j = 0; j < m->m->ninsts; j++) {
        const BgInst *in = &m->m->insts[j];
        if (in->op != BG_OP_OUTPUT) continue;
        if (k++ != i) continue;
        const BgType *ty = &m->m->insts[in->args[0]].type;
        *dt = ty->kind == BG_TY_B1 ? BG_DT_B1 : BG_DT_F32;
        *rank = ty->rank;
        for (int q = 0; q < 2; q++) {
            int64_t v = q < ty->rank ? ty->dim[q] : 0;
            dim[q] = v == BG_DIM_N ? n : v == BG_DIM_G ? ng : v;
        }
        return true;
    }
    return false;
}

bgnn_status bgnn_session_output_info(bgnn_session *s, int i, bgnn_tensor_info *info) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_context *c = s->m->c;
    if (!info || info->struct_size < sizeof(size_t) || i < 0 || i >= s->m->noutputs)
        return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_session_output_info: bad output index %d or info", i);
    bgnn_status st = ensure_prepared(s);
    if (st != BGNN_OK) return st;
    bgnn_tensor_info v;
    memset(&v, 0, sizeof v);
    v.struct_size = info->struct_size < sizeof v ? info->struct_size : sizeof v;
    BgDType dt;
    if (!output_shape(s, i, &dt, &v.rank, v.dim))
        return fail_msg(c, BGNN_ERR_INTERNAL, "output %d has no shape", i);
    BgTensor t = {dt, v.rank, {v.dim[0], v.dim[1]}, 0, NULL};
    if (dt == BG_DT_B1) t.words_per_row = (bg_tensor_cols(&t) + 31) / 32;
    v.name = s->m->out_names[i];
    v.dtype = dt == BG_DT_B1 ? BGNN_B1 : BGNN_F32;
    v.words_per_row = t.words_per_row;
    v.bytes = bg_tensor_bytes(&t);
    memcpy(info, &v, v.struct_size);
    return BGNN_OK;
}

bgnn_status bgnn_session_output_index(bgnn_session *s, const char *name, int *i) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    if (!name || !i) return fail_msg(s->m->c, BGNN_ERR_INVALID_ARG, "bgnn_session_output_index: NULL name or index");
    for (int k = 0; k < s->m->noutputs; k++)
        if (s->m->out_names[k] && strcmp(s->m->out_names[k], name) == 0) {
            *i = k;
            return BGNN_OK;
        }
    return fail_msg(s->m->c, BGNN_ERR_INVALID_ARG, "the model has no output named '%s'", name);
}

/* Output i of the last run as a host tensor; CPU: borrowed (*own false). */
static bgnn_status output_tensor(bgnn_session *s, int i, BgTensor *t, bool *own) {
    bgnn_context *c = s->m->c;
    *own = false;
    if (i < 0 || i >= s->m->noutputs)
        return fail_msg(c, BGNN_ERR_INVALID_ARG, "output index %d out of range (the model has %d)", i, s->m->noutputs);
    if (!s->ran || s->dirty)
        return fail_msg(c, BGNN_ERR_STATE, "no outputs yet: call bgnn_session_run first");
    if (!s->m->gpu) {
        *t = s->res.outputs[i];
        return BGNN_OK;
    }
    BgDiagSink d;
    bg_diag_init(&d);
    bool ok = bg_gpu_make_current(&c->gpu, &d) &&
              bg_gpu_run_read_output(&c->gpu, sgm(s)->plan, &s->run, i, t, &d);
    *own = ok;
    return finish(c, &d, ok, BGNN_OK);
}

bgnn_status bgnn_session_read_output(bgnn_session *s, int i, void *dst, size_t bytes) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    if (!dst) return fail_msg(s->m->c, BGNN_ERR_INVALID_ARG, "bgnn_session_read_output: dst is NULL");
    BgTensor t;
    bool own;
    bgnn_status st = output_tensor(s, i, &t, &own);
    if (st != BGNN_OK) return st;
    size_t need = bg_tensor_bytes(&t);
    if (bytes < need) {
        if (own) bg_tensor_free(&t);
        return fail_msg(s->m->c, BGNN_ERR_INVALID_ARG, "output '%s' needs %zu bytes, the buffer has %zu",
                        s->m->out_names[i], need, bytes);
    }
    memcpy(dst, t.data, need);
    if (own) bg_tensor_free(&t);
    return BGNN_OK;
}

bgnn_status bgnn_session_read_output_by_name(bgnn_session *s, const char *name, void *dst, size_t bytes) {
    int i;
    bgnn_status st = bgnn_session_output_index(s, name, &i);
    return st != BGNN_OK ? st : bgnn_session_read_output(s, i, dst, bytes);
}

bgnn_status bgnn_session_output_device_ptr(bgnn_session *s, int i, uint64_t *dptr) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_context *c = s->m->c;
    if (!dptr || i < 0 || i >= s->m->noutputs)
        return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_session_output_device_ptr: bad index %d or NULL", i);
    if (!s->m->gpu) return fail_msg(c, BGNN_ERR_UNSUPPORTED, "outputs live on the host on the CPU target");
    bgnn_status st = ensure_prepared(s);
    if (st != BGNN_OK) return st;
    *dptr = (uint64_t)s->run.ptr[sgm(s)->plan->outputs[i].buf];
    return BGNN_OK;
}

static float value_at(const BgTensor *t, int64_t r, int64_t c) {
    if (t->dtype == BG_DT_B1) return bg_bit_get(t->data, t->words_per_row, r, c) ? 1.0f : -1.0f;
    return ((const float *)t->data)[r * t->dim[1] + c];
}

bgnn_status bgnn_session_accuracy(bgnn_session *s, int i, const char *split, double *percent) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_context *c = s->m->c;
    if (!percent) return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_session_accuracy: percent is NULL");
    const int64_t *ids = NULL;
    int64_t nids = 0;
    if (split) {
        static const char *names[3] = {"train", "val", "test"};
        int k = 0;
        while (k < 3 && strcmp(split, names[k]) != 0) k++;
        if (k == 3) return fail_msg(c, BGNN_ERR_INVALID_ARG, "unknown split '%s' (train, val or test)", split);
        if (!s->have_ds || !s->ds.split[k])
            return fail_msg(c, BGNN_ERR_DATA, "the data directory has no %s split", split);
        ids = s->ds.split[k];
        nids = s->ds.nsplit[k];
    }
    BgTensor t;
    bool own;
    bgnn_status st = output_tensor(s, i, &t, &own);
    if (st != BGNN_OK) return st;
    const int32_t *labels = NULL;
    int64_t nl = 0;
    /* with K requests, the first one's rows (the first graph.n or graph.ngraphs) */
    if (s->have_ds && s->ds.labels && t.rank == 2 && t.dim[0] == s->graph.n * s->requests) {
        labels = s->ds.labels;
        nl = s->graph.n;
    } else if (s->have_ds && s->ds.graph_labels && t.rank == 2 && t.dim[0] == s->graph.ngraphs * s->requests &&
               !split) {
        labels = s->ds.graph_labels;
        nl = s->graph.ngraphs;
    }
    if (!labels || t.dim[1] < 1) {
        if (own) bg_tensor_free(&t);
        return fail_msg(c, BGNN_ERR_DATA, "no labels match output '%s'", s->m->out_names[i]);
    }
    int64_t ok = 0, total = 0, cnt = ids ? nids : nl;
    for (int64_t k = 0; k < cnt; k++) {
        int64_t v = ids ? ids[k] : k;
        if (v < 0 || v >= nl || labels[v] < 0) continue;
        int64_t best = 0;
        for (int64_t col = 1; col < t.dim[1]; col++)
            if (value_at(&t, v, col) > value_at(&t, v, best)) best = col;
        total++;
        ok += best == labels[v];
    }
    if (own) bg_tensor_free(&t);
    *percent = total ? 100.0 * (double)ok / (double)total : 0.0;
    return BGNN_OK;
}

/* ---- graphs as COO or from a file, weights from memory, the input's device pointer ------ */
/* graph_ptr checks of the COO entry point (those of _csr, as a function). */
static bgnn_status check_graph_ptr(bgnn_context *c, int64_t n, int64_t ngraphs, const int64_t *graph_ptr) {
    if (!graph_ptr) return BGNN_OK;
    if (ngraphs < 1 || graph_ptr[0] != 0 || graph_ptr[ngraphs] != n)
        return fail_msg(c, BGNN_ERR_DATA, "graph_ptr must start at 0 and end at n = %lld", (long long)n);
    for (int64_t g = 0; g < ngraphs; g++)
        if (graph_ptr[g + 1] < graph_ptr[g])
            return fail_msg(c, BGNN_ERR_DATA, "graph_ptr decreases at graph %lld", (long long)g);
    return BGNN_OK;
}

static void attach_graph_ptr(BgGraph *g, int64_t ngraphs, const int64_t *graph_ptr) {
    if (graph_ptr) {
        g->ngraphs = ngraphs;
        g->graph_ptr = bg_xmalloc(sizeof(int64_t) * (size_t)(ngraphs + 1));
        memcpy(g->graph_ptr, graph_ptr, sizeof(int64_t) * (size_t)(ngraphs + 1));
    } else {
        g->ngraphs = 1;
    }
}

bgnn_status bgnn_session_set_graph_coo(bgnn_session *s, int64_t n, int64_t nnz, const int64_t *row,
                                       const int64_t *col, int64_t ngraphs, const int64_t *graph_ptr) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_context *c = s->m->c;
    if (n < 0 || n > INT32_MAX || nnz < 0 || (nnz > 0 && (!row || !col)))
        return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_session_set_graph_coo: bad n (%lld) or nnz (%lld), or NULL arrays",
                        (long long)n, (long long)nnz);
    for (int64_t e = 0; e < nnz; e++)
        if (row[e] < 0 || row[e] >= n || col[e] < 0 || col[e] >= n)
            return fail_msg(c, BGNN_ERR_DATA, "graph COO: entry %lld: (row %lld, col %lld) out of range for %lld nodes (0-based)",
                            (long long)e, (long long)row[e], (long long)col[e], (long long)n);
    bgnn_status st = check_graph_ptr(c, n, ngraphs, graph_ptr);
    if (st != BGNN_OK) return st;
    /* bg_graph_from_coo only reads the arrays */
    BgCoo coo = {n, n, nnz, (int64_t *)(uintptr_t)row, (int64_t *)(uintptr_t)col, NULL};
    BgDiagSink d;
    bg_diag_init(&d);
    BgGraph g;
    if (!bg_graph_from_coo(&coo, "graph COO", &g, &d)) return finish(c, &d, false, BGNN_ERR_DATA);
    attach_graph_ptr(&g, ngraphs, graph_ptr);
    set_graph(s, &g);
    return finish(c, &d, true, BGNN_OK);
}

bgnn_status bgnn_session_set_graph_file(bgnn_session *s, const char *path) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_context *c = s->m->c;
    if (!path) return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_session_set_graph_file: path is NULL");
    BgDiagSink d;
    bg_diag_init(&d);
    BgGraph g;
    if (!bg_graph_load_file(path, 0, &g, NULL, &d)) return finish(c, &d, false, BGNN_OK);
    set_graph(s, &g);
    return finish(c, &d, true, BGNN_OK);
}

bgnn_status bgnn_session_set_weights_tensor(bgnn_session *s, const char *name, bgnn_dtype dtype, int rank,
                                            const int64_t *shape, const void *data) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_context *c = s->m->c;
    if (!name || !*name || rank < 0 || rank > 4 || (rank > 0 && !shape))
        return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_session_set_weights_tensor: NULL or empty name, or rank %d not 0..4",
                        rank);
    if (dtype != BGNN_F32)
        return fail_msg(c, BGNN_ERR_UNSUPPORTED, "weights tensor '%s': only BGNN_F32 tensors can be set (convert first)",
                        name);
    int64_t numel = 1;
    for (int k = 0; k < rank; k++) {
        if (shape[k] < 0 || (shape[k] && numel > ((int64_t)1 << 40) / shape[k]))
            return fail_msg(c, BGNN_ERR_INVALID_ARG, "weights tensor '%s': bad dimension %d (%lld)", name, k,
                            (long long)shape[k]);
        numel *= shape[k];
    }
    if (numel && !data) return fail_msg(c, BGNN_ERR_INVALID_ARG, "weights tensor '%s': data is NULL", name);
    float *copy = malloc((size_t)(numel ? numel : 1) * sizeof(float));
    if (!copy) return fail_msg(c, BGNN_ERR_NOMEM, "weights tensor '%s': out of memory", name);
    if (numel) memcpy(copy, data, (size_t)numel * sizeof(float));
    if (s->weights) { /* memory replaces a file set earlier */
        free(s->weights);
        s->weights = NULL;
    }
    BgSafetensors *w = &s->wmem;
    if (!w->path) w->path = xstrdup("(in-memory weights)");
    BgStTensor *t = NULL;
    for (int i = 0; i < w->n && !t; i++)
        if (strcmp(w->t[i].name, name) == 0) t = &w->t[i];
    if (t) {
        free(t->data);
    } else {
        BgStTensor *nt = realloc(w->t, sizeof(BgStTensor) * (size_t)(w->n + 1));
        if (!nt) {
            free(copy);
            return fail_msg(c, BGNN_ERR_NOMEM, "weights tensor '%s': out of memory", name);
        }
        w->t = nt;
        t = &w->t[w->n++];
        memset(t, 0, sizeof *t);
        t->name = xstrdup(name);
    }
    t->dtype = BG_DT_F32;
    t->rank = rank;
    memset(t->dim, 0, sizeof t->dim);
    for (int k = 0; k < rank; k++) t->dim[k] = shape[k];
    t->numel = numel;
    t->data = copy;
    s->dirty = true;
    return BGNN_OK;
}

bgnn_status bgnn_session_clear_weights(bgnn_session *s) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    free(s->weights);
    s->weights = NULL;
    bg_safetensors_free(&s->wmem);
    s->dirty = true;
    return BGNN_OK;
}

bgnn_status bgnn_session_input_device_ptr(bgnn_session *s, uint64_t *dptr) {
    if (!s) return BGNN_ERR_INVALID_ARG;
    bgnn_context *c = s->m->c;
    if (!dptr) return fail_msg(c, BGNN_ERR_INVALID_ARG, "bgnn_session_input_device_ptr: dptr is NULL");
    if (!s->m->gpu) return fail_msg(c, BGNN_ERR_UNSUPPORTED, "inputs live on the host on the CPU target");
    bgnn_status st = ensure_prepared(s);
    if (st != BGNN_OK) return st;
    *dptr = (uint64_t)bg_gpu_run_input_ptr(sgm(s)->plan, &s->run);
    if (!*dptr) return fail_msg(c, BGNN_ERR_STATE, "the model has no node-feature input on the device");
    return BGNN_OK;
}
