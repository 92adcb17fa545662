/* tune.c - `bgnnc tune MODEL --data DIR`: measures the schedule points of every tunable
 * instruction of a model on the GPU over one graph (codegen/sched.c: threads per block, blocks
 * per SM, the fast aggregation's work items, the features product's kernel, the aggregation
 * method, the BB product's path), keeps the fastest of each, checks every point's outputs
 * against the default plan's byte for byte, and files the winners in the tuning database
 * (plan/tune_db.c) that bgnnc run and the JIT read.  docs/tuning.md.
 *
 * Search: per instruction in IR order, with an equal share of the budget left, coordinate
 * descent: every point that differs from the best so far in one knob (those of the loaded
 * code first, then those that need a compile), for up to three rounds (--exhaustive: every
 * point of the space; --knobs LIST searches those knobs only, the others as compiled).  --records FILE appends every point measured as a TSV line (GPU, graph
 * key, N, entries, mean degree, its cv, largest degree, skewness, hub fraction, span, op key,
 * schedule, time us, default us): the learned predictor's training data (docs/tuning.md).
 * A point's time is its launch alone (the median of --reps runs, CUDA events); a point that
 * needs other code (method, path) is compiled through the JIT and its disk cache; one that
 * does not is applied to the loaded plan and bound again. */
#include "cli.h"
#include "driver.h"
#include "outguard.h"
#include "tune_db.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef struct Tuner {
    BgGpu g;
    BgModule *m;
    BgArena *arena;
    BgDataset ds;
    const char *model, *weights;
    int reps;
    double budget_s, t0;
    bool exhaustive, quiet;
    unsigned knobs;            /* --knobs: the knobs searched (KNOB_* bits); the others stay as compiled */
    char *cache_dir;
    BgGpuModel gm;             /* the loaded code */
    BgSchedPoint *compiled;    /* per instruction: the code-level point gm was compiled with */
    BgGpuRun run;
    bool bound;
    BgTensor *ref;             /* the default plan's outputs */
    int nref;
    int evaluated, jits;
    double deadline;           /* the current instruction's share of the budget ends (0: none) */
    FILE *records;             /* --records: every point measured, a TSV line each */
    const char *gkey;
    BgGraphFeatures gf;
    BgDiagSink *d;
} Tuner;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool over_budget(const Tuner *t) {
    const double now = now_s();
    return (t->budget_s > 0 && now - t->t0 > t->budget_s) || (t->deadline > 0 && now > t->deadline);
}

enum { KNOB_BLOCK = 1, KNOB_GRID = 2, KNOB_CHUNK = 4, KNOB_GROUP = 8, KNOB_FB = 16, KNOB_METHOD = 32, KNOB_PATH = 64,
       KNOB_LANES = 128 };
#define KNOB_CODE (KNOB_METHOD | KNOB_PATH | KNOB_LANES) /* the knobs that change the generated code */
static const char *const knob_names[] = {"block", "grid", "chunk", "group", "fb", "method", "path", "lanes"};

/* The KNOB_* bits in which two points differ. */
static unsigned knobs_differing(const BgSchedPoint *a, const BgSchedPoint *b) {
    return (a->s.block != b->s.block ? KNOB_BLOCK : 0u) | (a->s.grid != b->s.grid ? KNOB_GRID : 0u) |
           (a->s.chunk != b->s.chunk ? KNOB_CHUNK : 0u) | (a->s.group != b->s.group ? KNOB_GROUP : 0u) |
           (a->s.fb != b->s.fb ? KNOB_FB : 0u) | (a->method != b->method ? KNOB_METHOD : 0u) |
           (a->path != b->path ? KNOB_PATH : 0u) | (a->s.lanes != b->s.lanes ? KNOB_LANES : 0u);
}

/* Does gm's code differ from what m now asks for (a lanes, method or path changed)? */
static bool needs_code(const Tuner *t) {
    for (int i = 0; i < t->m->ninsts; i++) {
        const BgSchedPoint p = bg_sched_point(&t->m->insts[i]);
        if (knobs_differing(&p, &t->compiled[i]) & KNOB_CODE) return true;
    }
    return false;
}

/* Loads code for m as it stands (JIT through the cache). */
static bool load_code(Tuner *t) {
    unsigned char *cubin = NULL;
    size_t len = 0;
    BgJitInfo ji;
    bool ok = bg_jit_cubin(t->m, t->g.arch, &t->g.nv, t->cache_dir, &cubin, &len, &ji, t->d);
    if (ok) {
        if (t->bound) bg_gpu_run_free(&t->g, &t->run);
        t->bound = false;
        bg_gpu_model_free(&t->g, &t->gm);
        memset(&t->gm, 0, sizeof t->gm);
        ok = bg_gpu_model_load(&t->g, cubin, len, t->model, &t->gm, t->d);
        t->jits += !ji.cache_hit;
    }
    free(cubin);
    for (int i = 0; ok && i < t->m->ninsts; i++) t->compiled[i] = bg_sched_point(&t->m->insts[i]);
    return ok;
}

/* The loaded plan takes m's launch-level schedule (same kernels); false for an invalid point. */
static bool patch_plan(Tuner *t) {
    BgDiagSink quiet;
    bg_diag_init(&quiet);
    bool ok = bg_gpu_model_resched(&t->gm, t->m, t->g.arch, &quiet);
    bg_diag_free(&quiet);
    return ok;
}

static bool bind(Tuner *t) {
    if (t->bound) bg_gpu_run_free(&t->g, &t->run);
    t->bound = bg_gpu_run_bind(&t->g, &t->gm, t->m, &t->ds.graph, &t->ds.features, 0, t->weights, &t->run, NULL, t->d);
    return t->bound;
}

/* Runs once and compares every output with the default plan's, byte for byte. */
static bool check_outputs(Tuner *t, const char *what) {
    if (!bg_gpu_run_launch(&t->g, &t->gm, &t->run, NULL, t->d)) return false;
    for (int i = 0; i < t->nref; i++) {
        BgTensor o;
        memset(&o, 0, sizeof o);
        if (!bg_gpu_run_read_output(&t->g, t->gm.plan, &t->run, i, &o, t->d)) return false;
        const bool same = bg_tensor_bytes(&o) == bg_tensor_bytes(&t->ref[i]) &&
                          memcmp(o.data, t->ref[i].data, bg_tensor_bytes(&o)) == 0;
        bg_tensor_free(&o);
        if (!same) {
            bg_diag_error(t->d, BG_E_INTERNAL, "tune: %s changes output '%s' (every schedule must give the same bits)",
                          what, t->gm.plan->outputs[i].name);
            return false;
        }
    }
    return true;
}

/* Time of launch li alone under m's current schedule (ms); < 0 when the point cannot run. */
static double measure(Tuner *t, int li, const char *what) {
    if (needs_code(t)) {
        if (!load_code(t)) return -1;
    } else if (!patch_plan(t)) {
        return -1;
    }
    /* a block larger than the kernel's registers allow runs smaller: not a point of its own */
    if (t->gm.max_block && t->gm.plan->launches[li].block_size > t->gm.max_block[li]) return -1;
    if (!bind(t) || !check_outputs(t, what)) return -1;
    double *ms = bg_xcalloc((size_t)t->gm.plan->nlaunches + 1, sizeof *ms);
    double r = -1;
    if (bg_gpu_run_profile(&t->g, &t->gm, &t->run, NULL, t->reps, ms, t->d)) r = ms[li];
    free(ms);
    t->evaluated++;
    return r;
}

/* --knobs LIST (comma-separated knob names) -> KNOB_* bits; 0 for a bad list. */
static unsigned parse_knobs(const char *list) {
    unsigned bits = 0;
    char tmp[128];
    if (strlen(list) >= sizeof tmp) return 0;
    strcpy(tmp, list);
    for (char *save = NULL, *f = strtok_r(tmp, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        unsigned b = 0;
        for (int k = 0; k < (int)(sizeof knob_names / sizeof *knob_names); k++)
            if (strcmp(f, knob_names[k]) == 0) b = 1u << k;
        if (!b) return 0;
        bits |= b;
    }
    return bits;
}

/* How many knobs two points differ in. */
static int ndiff(const BgSchedPoint *a, const BgSchedPoint *b) { return __builtin_popcount(knobs_differing(a, b)); }

typedef struct Result {
    int inst, launch;
    char op[160], sched[128];
    double best_ms, default_ms;
    int tried;
} Result;

static int launch_of(const BgPlan *p, int inst) {
    for (int i = 0; i < p->nlaunches; i++)
        if (p->launches[i].inst == inst && !p->launches[i].prep) return i;
    return -1;
}

/* Tunes instruction i (its launch li); the best point stays set in m. */
static bool tune_inst(Tuner *t, int i, int li, double default_ms, Result *res) {
    BgInst *in = &t->m->insts[i];
    BgSchedPoint best = bg_sched_point(in);
    double best_ms = default_ms;
    int sm = t->g.sm;
    int n = bg_sched_space(t->m, in, sm, NULL, 0);
    BgSchedPoint *pts = bg_xcalloc((size_t)n + 1, sizeof *pts);
    bg_sched_space(t->m, in, sm, pts, n);
    bool *seen = bg_xcalloc((size_t)n + 1, 1);
    seen[0] = true; /* the current (default) point: already measured */
    res->tried = 1;
    for (int round = 0; round < (t->exhaustive ? 1 : 3); round++) {
        bool improved = false;
        const BgSchedPoint base = best;
        /* the points of the loaded code first, then those that need a compile (lanes, method, path) */
        for (int kk = 1; kk < 2 * n && !over_budget(t); kk++) {
            const int k = kk < n ? kk : kk - n + 1;
            const bool code = (knobs_differing(&pts[k], &base) & KNOB_CODE) != 0;
            if (k >= n || code != (kk >= n)) continue;
            if (seen[k] || (!t->exhaustive && ndiff(&pts[k], &base) != 1)) continue;
            if (knobs_differing(&pts[k], &pts[0]) & ~t->knobs) continue; /* a knob --knobs leaves alone */
            seen[k] = true;
            char txt[128], what[200];
            bg_sched_str(&pts[k], txt, sizeof txt);
            snprintf(what, sizeof what, "schedule '%s' of %%%d", txt, i);
            bg_sched_set(in, &pts[k]);
            double ms = measure(t, li, what);
            res->tried++;
            if (ms < 0) {
                if (t->d->nerrors) { /* a wrong result or a device error: stop */
                    free(pts);
                    free(seen);
                    return false;
                }
                continue;
            }
            if (t->records) {
                const BgGraphFeatures *f = &t->gf;
                char op[160];
                bg_sched_op_key(t->m, in, op, sizeof op);
                fprintf(t->records, "%s\t%s\t%lld\t%lld\t%.4f\t%.4f\t%lld\t%.4f\t%.6f\t%.6f\t%s\t%s\t%.3f\t%.3f\n", t->g.name,
                        t->gkey, (long long)f->n, (long long)f->nnz, f->deg_mean, f->deg_cv, (long long)f->deg_max,
                        f->deg_skew, f->hub_frac, f->span, op, txt, 1000 * ms, 1000 * default_ms);
            }
            if (!t->quiet) {
                double el = now_s() - t->t0;
                fprintf(stderr, "bgnnc: tune %%%d [%d/%d] %-40s %9.2f us (best %.2f us)  %.0f s%s\n", i, k, n - 1, txt,
                        1000 * ms, 1000 * (ms < best_ms ? ms : best_ms), el, t->budget_s > 0 ? " of the budget" : "");
            }
            /* a new best must win by 2% (the timing's noise) */
            if (ms < best_ms * 0.98) {
                best = pts[k];
                best_ms = ms;
                improved = true;
            }
        }
        if (!improved) break;
    }
    bg_sched_set(in, &best);
    res->inst = i;
    res->launch = li;
    res->best_ms = best_ms;
    res->default_ms = default_ms;
    bg_sched_op_key(t->m, in, res->op, sizeof res->op);
    bg_sched_str(&best, res->sched, sizeof res->sched);
    free(pts);
    free(seen);
    return true;
}

/* The database and the records file never overwrite what the command reads (base/outguard.c,
 * as bgnnc run's --logits): the model, the weights, the data files, the graph file; nor each
 * other.  true (after saying why) when one would. */
static bool refuse_input_clobber(const char *model, const char *weights, const char *data, const char *graph,
                                 const char *db, const char *records) {
    BgInputSet in = {0};
    bg_inputs_add(&in, model, "the model");
    struct stat st;
    if (weights && stat(weights, &st) == 0 && S_ISDIR(st.st_mode)) bg_inputs_add_dir(&in, weights, "the weights file");
    else if (weights) bg_inputs_add(&in, weights, "the weights file");
    bg_inputs_add_dir(&in, data, "the data file");
    if (graph) bg_inputs_add(&in, graph, "the graph file");
    const char *outs[2] = {db, records}, *flags[2] = {"--db", "--records"};
    bool bad = false;
    for (int k = 0; k < 2 && !bad; k++) {
        if (!outs[k]) continue;
        const BgInputFile *f = bg_inputs_clobbered(&in, outs[k]);
        if (f) {
            fprintf(stderr, "bgnnc tune: %s %s would overwrite %s %s; choose another output path\n", flags[k], outs[k],
                    f->what, f->path);
            bad = true;
        }
        if (k == 0 && db) bg_inputs_add(&in, db, "the database"); /* --records must not be --db either */
    }
    bg_inputs_free(&in);
    return bad;
}

static int tune_usage(const char *msg, const char *arg) {
    fprintf(stderr, "bgnnc tune: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\nusage: bgnnc tune MODEL.bgnn (--data DIR | --dataset NAME) [--graph FILE] [--weights W] [--budget SECONDS] "
                    "[--reps R] [--db FILE] [--records FILE] [--exhaustive] [--knobs LIST] [--dry-run] [--quiet]\n");
    return 2;
}

int cli_cmd_tune(int argc, char **argv) {
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--variants") == 0) return cli_cmd_variants(argc, argv);
    const char *model = NULL, *data = NULL, *dataset = NULL, *graph = NULL, *weights = NULL, *db_path = NULL;
    const char *records = NULL, *knobs = NULL;
    char dirbuf[4096];
    double budget = 0;
    long reps = 100;
    bool exhaustive = false, dry = false, quiet = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (strcmp(a, "--data") == 0) slot = &data;
        else if (strcmp(a, "--dataset") == 0) slot = &dataset;
        else if (strcmp(a, "--graph") == 0) slot = &graph;
        else if (strcmp(a, "--weights") == 0) slot = &weights;
        else if (strcmp(a, "--db") == 0) slot = &db_path;
        else if (strcmp(a, "--records") == 0) slot = &records;
        else if (strcmp(a, "--knobs") == 0) slot = &knobs;
        else if (strcmp(a, "--exhaustive") == 0) exhaustive = true;
        else if (strcmp(a, "--dry-run") == 0) dry = true;
        else if (strcmp(a, "--quiet") == 0) quiet = true;
        else if (strcmp(a, "--budget") == 0 || strcmp(a, "--reps") == 0) {
            if (++i >= argc) return tune_usage("%s needs a value", a);
            char *end = NULL;
            errno = 0;
            double v = strtod(argv[i], &end);
            if (errno || !end || *end || !(v > 0) || v > 1e7 || (a[2] == 'r' && (v != floor(v) || v > 100000)))
                return tune_usage(a[2] == 'r' ? "--reps must be a whole number from 1 to 100000, got '%s'"
                                              : "--budget must be a positive number of seconds, got '%s'",
                                  argv[i]);
            if (a[2] == 'r') reps = (long)v;
            else budget = v;
        } else if (a[0] == '-') return tune_usage("unknown option '%s'", a);
        else if (!model) model = a;
        else return tune_usage("unexpected argument '%s'", a);
        if (slot) {
            if (++i >= argc) return tune_usage("%s needs a value", a);
            *slot = argv[i];
        }
    }
    if (!model) return tune_usage("%s", "no model file");
    if (!data && dataset) {
        snprintf(dirbuf, sizeof dirbuf, "%s/%s", bg_default_data_root(), dataset);
        data = dirbuf;
    }
    if (!data) return tune_usage("%s", "--data DIR or --dataset NAME is required (the graph to tune for)");
    const unsigned knob_bits = knobs ? parse_knobs(knobs) : ~0u;
    if (!knob_bits)
        return tune_usage("--knobs takes a comma list of block, grid, chunk, group, fb, lanes, method, path; got '%s'", knobs);
    if (refuse_input_clobber(model, weights, data, graph, db_path, records)) return 2;

    Tuner t;
    memset(&t, 0, sizeof t);
    BgDiagSink d;
    bg_diag_init(&d);
    t.d = &d;
    t.model = model;
    t.weights = weights;
    t.reps = (int)reps;
    t.budget_s = budget;
    t.exhaustive = exhaustive;
    t.knobs = knob_bits;
    t.quiet = quiet;
    t.t0 = now_s();
    t.arena = bg_arena_new();
    Result *res = NULL;
    BgSchedPoint *initial = NULL; /* every instruction's point as compiled: the default plan */
    int nres = 0, rc = 1;
    char *path = NULL;
    bool have_gpu = bg_gpu_open(&t.g, 0, &d);
    if (!have_gpu) goto done;
    cli_progress("loading %s", graph ? graph : data);
    if (!bg_dataset_load_graph(data, graph, &t.ds, &d)) goto done;
    bg_graph_features(&t.ds.graph, &t.gf);
    char gkey[96];
    bg_graph_key(&t.gf, gkey, sizeof gkey);
    t.gkey = gkey;
    if (records && !(t.records = fopen(records, "a"))) {
        bg_diag_error(&d, BG_E_WRITE, "tune: cannot open --records file '%s'", records);
        goto done;
    }
    cli_progress("compiling %s", model);
    t.m = bg_compile_file(t.arena, model, &(BgCompileOpts){0}, &d);
    t.cache_dir = bg_cache_default_dir();
    if (!t.m || !bg_nvrtc_load(&t.g.nv, &d)) goto done;
    t.compiled = bg_xcalloc((size_t)t.m->ninsts + 1, sizeof *t.compiled);
    initial = bg_xcalloc((size_t)t.m->ninsts + 1, sizeof *initial);
    for (int i = 0; i < t.m->ninsts; i++) initial[i] = bg_sched_point(&t.m->insts[i]);
    if (!load_code(&t) || !bind(&t) || !bg_gpu_run_launch(&t.g, &t.gm, &t.run, NULL, &d)) goto done;
    cli_progress_done();
    t.nref = t.gm.plan->noutputs;
    t.ref = bg_xcalloc((size_t)t.nref + 1, sizeof *t.ref);
    for (int i = 0; i < t.nref; i++)
        if (!bg_gpu_run_read_output(&t.g, t.gm.plan, &t.run, i, &t.ref[i], &d)) goto done;
    double e2e_default = 0;
    double *base = bg_xcalloc((size_t)t.gm.plan->nlaunches + 1, sizeof *base);
    bool ok = bg_gpu_run_time(&t.g, &t.gm, &t.run, NULL, t.reps, &e2e_default, &d) &&
              bg_gpu_run_profile(&t.g, &t.gm, &t.run, NULL, t.reps, base, &d);
    if (!ok) {
        free(base);
        goto done;
    }
    printf("tune    %s on %s (%s, %s): graph key \"%s\"\n", model, data, t.g.name, t.g.arch, gkey);
    printf("default end to end %.2f us (median of %d)\n", 1000 * e2e_default, t.reps);
    res = bg_xcalloc((size_t)t.m->ninsts + 1, sizeof *res);
    int left = 0; /* tunable instructions still to tune: each gets an equal share of the budget left */
    for (int i = 0; i < t.m->ninsts; i++) left += bg_sched_tunable(t.m, &t.m->insts[i]) && launch_of(t.gm.plan, i) >= 0;
    for (int i = 0; i < t.m->ninsts && !over_budget(&t); i++) {
        if (!bg_sched_tunable(t.m, &t.m->insts[i])) continue;
        int li = launch_of(t.gm.plan, i);
        if (li < 0) continue;
        t.deadline = t.budget_s > 0 ? now_s() + (t.budget_s - (now_s() - t.t0)) / left : 0;
        left--;
        const bool ok_inst = tune_inst(&t, i, li, base[li], &res[nres]);
        t.deadline = 0;
        if (!ok_inst) {
            free(base);
            goto done;
        }
        nres++;
    }
    free(base);
    /* the tuned plan end to end, beside the default again (same run) */
    if (needs_code(&t) ? !load_code(&t) : !patch_plan(&t)) goto done;
    if (!bind(&t) || !check_outputs(&t, "the tuned plan")) goto done;
    double e2e_tuned = 0, e2e_default2 = 0;
    if (!bg_gpu_run_time(&t.g, &t.gm, &t.run, NULL, t.reps, &e2e_tuned, &d)) goto done;
    {
        BgSchedPoint *keep = bg_xcalloc((size_t)t.m->ninsts + 1, sizeof *keep);
        for (int i = 0; i < t.m->ninsts; i++) {
            keep[i] = bg_sched_point(&t.m->insts[i]);
            bg_sched_set(&t.m->insts[i], &initial[i]); /* the model as compiled */
        }
        ok = (needs_code(&t) ? load_code(&t) : patch_plan(&t)) && bind(&t) &&
             bg_gpu_run_time(&t.g, &t.gm, &t.run, NULL, t.reps, &e2e_default2, &d);
        for (int i = 0; i < t.m->ninsts; i++) bg_sched_set(&t.m->insts[i], &keep[i]);
        free(keep);
        if (!ok) goto done;
    }
    const double e2e_def = e2e_default2 < e2e_default ? e2e_default2 : e2e_default;
    printf("%-5s %-58s %-34s %10s %10s %7s\n", "inst", "op", "best schedule", "default", "best", "points");
    for (int k = 0; k < nres; k++)
        printf("%%%-4d %-58s %-34s %7.2f us %7.2f us %7d\n", res[k].inst, res[k].op, res[k].sched,
               1000 * res[k].default_ms, 1000 * res[k].best_ms, res[k].tried);
    printf("end to end: default %.2f us, tuned %.2f us: %.2fx (%d points measured, %d compiled, %.0f s)\n",
           1000 * e2e_def, 1000 * e2e_tuned, e2e_tuned > 0 ? e2e_def / e2e_tuned : 0.0, t.evaluated, t.jits,
           now_s() - t.t0);
    if (dry) {
        rc = 0;
        goto done;
    }
    path = db_path ? strdup(db_path) : bg_tune_db_path(NULL, t.g.name, t.g.sm);
    if (!path) {
        bg_diag_error(&d, BG_E_WRITE, "tune: no directory for the tuning database (set BGNN_TUNE_DIR or HOME)");
        goto done;
    }
    {
        BgTuneRecord *recs = bg_xcalloc((size_t)nres + 1, sizeof *recs);
        for (int k = 0; k < nres; k++)
            recs[k] = (BgTuneRecord){.op = res[k].op, .graph = gkey, .sched = res[k].sched,
                                     .best_us = 1000 * res[k].best_ms, .default_us = 1000 * res[k].default_ms,
                                     .samples = t.reps};
        ok = bg_tune_db_store(path, recs, nres, t.g.name, t.g.sm, &d);
        free(recs);
        if (!ok) goto done;
    }
    printf("wrote %d record%s to %s\n", nres, nres == 1 ? "" : "s", path);
    rc = 0;
done:
    cli_progress_done();
    if (have_gpu) {
        if (t.bound) bg_gpu_run_free(&t.g, &t.run);
        bg_gpu_model_free(&t.g, &t.gm);
        bg_gpu_close(&t.g);
    }
    for (int i = 0; i < t.nref; i++) bg_tensor_free(&t.ref[i]);
    free(t.ref);
    free(t.compiled);
    free(initial);
    free(res);
    free(path);
    free(t.cache_dir);
    if (t.records) fclose(t.records);
    bg_dataset_free(&t.ds);
    char *text = bg_diag_render(&d);
    if (text && *text) fputs(text, stderr);
    free(text);
    if (d.nerrors) rc = rc ? rc : 1;
    bg_diag_free(&d);
    bg_arena_free(t.arena);
    return rc;
}
