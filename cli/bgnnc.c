/* bgnnc.c - the command-line driver; the only place in bgnn that prints or exits.
 *
 *   bgnnc MODEL [--emit=ast|ir|cuda|cubin] [--arch=sm_XX] [-o FILE] [--passes=a,b] [--print-after=PASS|all]
 *         [--fp-strict]                                 (also on run and gen-weights)
 *   bgnnc MODEL -o model.cubin [--arch sm_XX]          (AOT: code generation + NVRTC, no cache)
 *   bgnnc run MODEL.bgnn|model.cubin --data DIR --weights FILE [--target cpu|gpu|auto] [--graph FILE] [--logits OUT.npy]
 *   bgnnc gen-weights MODEL --seed N -o W.safetensors
 *   bgnnc --list-passes | --help | --version
 *
 * Exit status: 0 success, 1 an error in an input (model, data, weights) or on the GPU,
 * 2 a usage error (an output path that names one of the command's inputs included). */
#include "cli.h"
#include "driver.h"
#include "outguard.h"
#include "sched_model.h"
#include "tune_db.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
    "usage: bgnnc MODEL.bgnn [--emit=ast|ir|cuda|cubin] [--arch=sm_XX] [-o FILE] [--passes=P1,P2] [--print-after=PASS|all]\n"
    "                        [--fp-strict]\n"
    "       bgnnc MODEL.bgnn -o MODEL.cubin [--arch=sm_XX]\n"
    "       bgnnc MODEL.bgnn --stats [--nodes=N --edges=E --graphs=G] [--json]\n"
    "       bgnnc run MODEL.bgnn|MODEL.cubin (--data DIR | --dataset NAME) --weights FILE [--target cpu|gpu|auto]\n"
    "                 [--graph FILE] [--graphs FROM:TO] [--requests K] [--logits OUT.npy] [--repeat N]\n"
    "                 [--profile] [--json]\n"
    "                 [--fp-strict] [--tune-db FILE|off] [--sched INST:SCHEDULE]\n"
    "       bgnnc tune MODEL.bgnn (--data DIR | --dataset NAME) [--weights FILE] [--budget SECONDS] [--reps R] [--db FILE]\n"
    "                  [--records FILE] [--exhaustive] [--knobs LIST] [--dry-run] [--quiet]\n"
    "       bgnnc tune --variants MODEL.bgnn [-o DIR]\n"
    "       bgnnc gen-weights MODEL.bgnn --seed N -o WEIGHTS.safetensors\n"
    "       bgnnc --list-passes | --help | --version\n"
    "\n"
    "  --emit=ast|ir|cuda|cubin\n"
    "                     print the syntax tree, the IR after the pass pipeline, or the\n"
    "                     generated CUDA C++; cubin (the default with -o and no --emit):\n"
    "                     compile it with NVRTC into a cubin with the manifest inside\n"
    "  --arch=sm_XX       GPU architecture (--emit=cuda: default sm_90; cubin: the GPU\n"
    "                     present, else sm_90)\n"
    "  --stats            kernels, launches, grid syncs, device memory and the bytes each\n"
    "                     launch must move, at --nodes=N --edges=E --graphs=G (default Cora)\n"
    "  --passes=LIST      run these passes (comma separated) instead of the default pipeline;\n"
    "                     --passes= (empty) stops after lowering\n"
    "  --print-after=PASS print the IR after PASS (or after every pass: all)\n"
    "  --fp-strict        every float reduction in index order from +0, no fma, no\n"
    "                     reassociation (docs/semantics.md section 2); by default the\n"
    "                     compiler chooses and records the order (fp= in the IR); a cubin\n"
    "                     keeps the orders it was compiled with\n"
    "  -o FILE            write the output to FILE (atomically) instead of stdout\n"
    "  --data DIR         dataset directory (graph.mtx or another graph file, features.npy,\n"
    "                     labels.npy, splits; docs/formats.md)\n"
    "  --dataset NAME     DIR = $BGNN_DATA_DIR/NAME (default root ../shared/data)\n"
    "  --graph FILE       the graph from FILE instead of DIR's graph file: Matrix Market,\n"
    "                     .npz (scipy.sparse.save_npz), edge list text, .npy edge arrays\n"
    "  --weights FILE     safetensors file (or a directory for npy(...) parameters)\n"
    "  --target cpu|gpu   run on the CPU reference interpreter (default; needs the .bgnn) or\n"
    "                     on GPU 0 (a .bgnn is JIT-compiled through the disk cache\n"
    "                     $BGNN_CACHE_DIR; a .cubin is loaded as is); auto: the GPU when\n"
    "                     one is usable, else the CPU reference\n"
    "  --graphs FROM:TO   a batch of graphs (graph_ptr.npy): run graphs FROM..TO-1 only, as a batch\n"
    "                     of their own (nodes renumbered from 0)\n"
    "  --requests K       serve K requests a run: the data K times as disjoint copies (outputs K times\n"
    "                     as many rows, accuracy of each copy the same); prints requests per second\n"
    "  --logits OUT.npy   save the first float output as .npy\n"
    "  --profile          gpu: also time each separate kernel alone (median of --repeat)\n"
    "  --repeat N         run inference N times and report the median time (gpu: CUDA\n"
    "                     events around the kernels, inputs already on the GPU)\n"
    "  --sched INST:S     (also --sched=INST:S when compiling) run instruction INST of the IR with\n"
    "                     schedule S, e.g. 13:block=128,grid=2 (docs/tuning.md); every schedule\n"
    "                     gives the same bits\n"
    "  --tune-db FILE|off gpu: the tuning database to take schedules from (default: the GPU's\n"
    "                     own file in $BGNN_TUNE_DIR or ~/.cache/bgnn/tune, written by bgnnc tune)\n"
    "  tune               measure the schedules of every graph and matrix op on GPU 0 over the\n"
    "                     --data graph, keep the fastest (checked bit for bit against the default)\n"
    "                     and store them in the tuning database (--db FILE; --dry-run: do not);\n"
    "                     --budget caps the search's seconds, --reps the runs timed per point,\n"
    "                     --exhaustive measures every point instead of one knob at a time;\n"
    "                     --variants lists (and with -o DIR writes) the model's type-correct\n"
    "                     precision variants: each mm:, agg:, add: and op.XYZ precision F or B\n"
    "  --json             run, --stats: print one JSON object instead of text (a failure:\n"
    "                     {\"ok\": false, \"error\": ...} on stdout too); docs/api.md\n"
    "\n"
    "An output (-o, --logits) never replaces an input of the command (the model, the weights,\n"
    "a data file), not even through a symlink or a hard link: that is a usage error.\n"
    "exit status: 0 ok, 1 error in an input, 2 usage error\n";

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "bgnnc: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(bgnnc --help for usage)\n");
    return EXIT_USAGE;
}

/* Outputs never clobber inputs: the usage error for an output path naming an input file. */
static int refuse_clobber(const char *flag, const char *out, const BgInputSet *inputs) {
    const BgInputFile *in = bg_inputs_clobbered(inputs, out);
    if (!in) return 0;
    fprintf(stderr, "bgnnc: %s %s would overwrite %s %s%s; choose another output path\n", flag, out, in->what,
            in->path, strcmp(in->path, out) != 0 ? " (the same file)" : "");
    fprintf(stderr, "(bgnnc --help for usage)\n");
    return EXIT_USAGE;
}

/* The model as the only input (bgnnc MODEL -o, gen-weights -o). */
static int refuse_model_clobber(const char *flag, const char *out, const char *model) {
    BgInputSet inputs = {0};
    bg_inputs_add(&inputs, model, "the model");
    int rc = refuse_clobber(flag, out, &inputs);
    bg_inputs_free(&inputs);
    return rc;
}

static int report(BgDiagSink *d) {
    cli_progress_done();
    char *s = bg_diag_render(d);
    if (s && *s) fputs(s, stderr);
    free(s);
    int rc = d->nerrors ? EXIT_INPUT : 0;
    bg_diag_free(d);
    return rc;
}

/* report, and with --json also the failure as JSON on stdout. */
static int report_json(BgDiagSink *d, bool json) {
    char *s = json && d->nerrors ? bg_diag_render(d) : NULL;
    int rc = report(d);
    if (s) cli_print_error_json(rc, s);
    free(s);
    return rc;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Splits "a,b,c" into an arena array. */
static const char **split_list(BgArena *a, const char *s, int *n) {
    int cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    const char **v = bg_arena_alloc(a, sizeof(char *) * (size_t)cap);
    *n = 0;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len) v[(*n)++] = bg_arena_strndup(a, s, len);
        s += len + (e ? 1 : 0);
    }
    return v;
}

typedef struct {
    const char *which; /* pass name or "all" */
    FILE *out;
} PrintAfter;

static void print_after(const char *pass, const BgModule *m, void *ud) {
    PrintAfter *pa = ud;
    if (strcmp(pa->which, "all") != 0 && strcmp(pa->which, pass) != 0) return;
    char *s = bg_ir_print(m);
    fprintf(pa->out, "; after %s\n%s", pass, s);
    free(s);
}

static int write_output(const char *path, const char *text, BgDiagSink *d) {
    if (!path) {
        fputs(text, stdout);
        return 0;
    }
    return bg_write_file_atomic(path, text, strlen(text), d) ? 0 : EXIT_INPUT;
}

/* ---- bgnnc MODEL ... ----------------------------------------------------------------- */
/* AOT: the generated CUDA compiled by NVRTC (never through the cache), checked by reading
 * its own manifest back, written atomically. */
static bool write_cubin(const BgModule *m, const char *arch, const char *out, BgDiagSink *d) {
    unsigned char *cubin = NULL;
    size_t len = 0;
    if (!bg_jit_cubin(m, arch, NULL, NULL, &cubin, &len, NULL, d)) return false;
    BgArena *a = bg_arena_new();
    bool ok = bg_cubin_plan(cubin, len, out, a, d) != NULL &&
              bg_write_file_atomic(out, cubin, len, d);
    bg_arena_free(a);
    free(cubin);
    return ok;
}

static int cmd_compile(int argc, char **argv) {
    const char *model = NULL, *emit = NULL, *out = NULL, *passes = NULL, *after = NULL;
    const char *arch = NULL, *sched[16];
    int nsched = 0;
    bool stats = false, json = false, fp_strict = false;
    long long sz[3] = {2708, 10556, 1}; /* --stats sizes: Cora's N and E, one graph */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--emit=", 7) == 0) emit = a + 7;
        else if (strcmp(a, "--stats") == 0) stats = true;
        else if (strcmp(a, "--fp-strict") == 0) fp_strict = true;
        else if (strcmp(a, "--json") == 0) json = true;
        else if (strncmp(a, "--nodes=", 8) == 0 || strncmp(a, "--edges=", 8) == 0 || strncmp(a, "--graphs=", 9) == 0) {
            const char *v = strchr(a, '=') + 1;
            char *end;
            errno = 0;
            long long x = strtoll(v, &end, 10);
            if (errno || *end || x < 0 || x > (1LL << 40)) return usage_error("bad size in '%s'", a);
            sz[a[2] == 'n' ? 0 : a[2] == 'e' ? 1 : 2] = x;
            stats = true;
        }
        else if (strncmp(a, "--arch=", 7) == 0) arch = a + 7;
        else if (strcmp(a, "--arch") == 0) {
            if (++i >= argc) return usage_error("%s needs an architecture (sm_XX)", a);
            arch = argv[i];
        } else if (strncmp(a, "--passes=", 9) == 0) passes = a + 9;
        else if (strncmp(a, "--print-after=", 14) == 0) after = a + 14;
        else if (strcmp(a, "--print-after-all") == 0) after = "all";
        else if (strncmp(a, "--sched=", 8) == 0) {
            if (nsched == 16) return usage_error("%s", "at most 16 --sched options");
            sched[nsched++] = a + 8;
        } else if (strcmp(a, "-o") == 0) {
            if (++i >= argc) return usage_error("%s needs a file name", "-o");
            out = argv[i];
        } else if (a[0] == '-' && a[1]) return usage_error("unknown option '%s'", a);
        else if (model) return usage_error("more than one model file given ('%s')", a);
        else model = a;
    }
    if (!model) return usage_error("%s", "no model file given");
    if (json && !stats) return usage_error("%s", "--json goes with --stats (or bgnnc run)");
    if (emit && strcmp(emit, "ast") != 0 && strcmp(emit, "ir") != 0 && strcmp(emit, "cuda") != 0 &&
        strcmp(emit, "cubin") != 0)
        return usage_error("--emit must be ast, ir, cuda or cubin, got '%s'", emit);
    if (out && !emit) emit = "cubin"; /* bgnnc m.bgnn -o m.cubin */
    bool cubin = emit && strcmp(emit, "cubin") == 0;
    if (cubin && !out) return usage_error("%s", "--emit=cubin needs -o FILE (a cubin is binary)");
    if (out && refuse_model_clobber("-o", out, model)) return EXIT_USAGE;
    char archbuf[16];
    if (!arch) arch = cubin ? bg_gpu_default_arch(archbuf, "sm_90") : "sm_90";
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    int rc = 0;
    if (after && strcmp(after, "all") != 0 && !bg_pass_find(after)) {
        bg_arena_free(a);
        return usage_error("--print-after: unknown pass '%s' (bgnnc --list-passes)", after);
    }
    if (emit && strcmp(emit, "ast") == 0) {
        size_t len;
        char *text = bg_read_file(model, &len, &d);
        if (text) {
            BgSource *src = bg_source_new(a, model, text, len);
            BgAst *ast = bg_parse(a, src, &d);
            if (ast && d.nerrors == 0) {
                char *s = bg_ast_print(ast);
                rc = write_output(out, s, &d);
                free(s);
            }
            free(text);
        }
    } else {
        BgCompileOpts o = {0};
        o.fp_strict = fp_strict;
        int np = 0;
        if (passes) {
            o.passes = split_list(a, passes, &np);
            o.npasses = np;
        }
        PrintAfter pa = {after, stdout};
        if (after) {
            o.after = print_after;
            o.ud = &pa;
        }
        BgModule *m = bg_compile_file(a, model, &o, &d);
        for (int k = 0; m && k < nsched; k++)
            if (!bg_sched_apply_text(m, sched[k], &d)) m = NULL;
        if (m && stats) {
            BgPlan *p = bg_plan_build(m, arch, a, &d);
            if (p) {
                char *s = json ? bg_plan_stats_json(p, sz[0], sz[1], sz[2]) : bg_plan_stats(p, sz[0], sz[1], sz[2]);
                fputs(s, stdout);
                free(s);
            }
        }
        if (m && cubin) {
            rc = write_cubin(m, arch, out, &d) ? 0 : EXIT_INPUT;
        } else if (m && emit) {
            char *s = strcmp(emit, "cuda") == 0 ? bg_codegen_cuda(m, arch, &d) : bg_ir_print(m);
            if (s) rc = write_output(out, s, &d);
            free(s);
        }
    }
    int rr = report(&d);
    bg_arena_free(a);
    return rc ? rc : rr;
}

/* ---- bgnnc run ------------------------------------------------------------------------ */
static const BgTensor *pick_prediction(const BgInterpResult *r, int64_t rows, int *which) {
    for (int i = 0; i < r->noutputs; i++) {
        const BgTensor *t = &r->outputs[i];
        if (t->rank == 2 && t->dim[0] == rows && t->dim[1] > 1) {
            *which = i;
            return t;
        }
    }
    return NULL;
}

static float value_at(const BgTensor *t, int64_t r, int64_t c) {
    if (t->dtype == BG_DT_B1) return bg_bit_get(t->data, t->words_per_row, r, c) ? 1.0f : -1.0f;
    return ((const float *)t->data)[r * t->dim[1] + c];
}

static int64_t argmax_row(const BgTensor *t, int64_t r) {
    int64_t best = 0;
    for (int64_t c = 1; c < t->dim[1]; c++)
        if (value_at(t, r, c) > value_at(t, r, best)) best = c;
    return best;
}

static double accuracy(const BgTensor *t, const int32_t *labels, const int64_t *ids, int64_t n) {
    int64_t ok = 0, total = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ids ? ids[i] : i;
        if (labels[v] < 0) continue;
        total++;
        ok += argmax_row(t, v) == labels[v];
    }
    return total ? 100.0 * (double)ok / (double)total : 0.0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The accuracy of a run: per split, else over every labelled node, else per graph. */
static void fill_accuracy(const BgDataset *ds, const BgInterpResult *res, CliRunReport *rep) {
    int which = -1;
    const BgTensor *pred = pick_prediction(res, ds->graph.n, &which);
    rep->nacc = 0;
    rep->graphs = ds->graph.ngraphs;
    if (pred && ds->labels) {
        static const char *names[3] = {"train", "val", "test"};
        for (int s = 0; s < 3; s++)
            if (ds->split[s]) {
                rep->acc_name[rep->nacc] = names[s];
                rep->acc[rep->nacc++] = accuracy(pred, ds->labels, ds->split[s], ds->nsplit[s]);
            }
        if (!rep->nacc) {
            rep->acc_name[0] = "all";
            rep->acc[rep->nacc++] = accuracy(pred, ds->labels, NULL, ds->graph.n);
        }
        rep->output = res->names[which];
    } else if (ds->graph_labels && (pred = pick_prediction(res, ds->graph.ngraphs, &which))) {
        rep->acc_name[0] = "graphs";
        rep->acc[rep->nacc++] = accuracy(pred, ds->graph_labels, NULL, ds->graph.ngraphs);
        rep->output = res->names[which];
    }
}

static void print_accuracy(const CliRunReport *rep) {
    if (!rep->nacc) {
        printf("accuracy  n/a (no labels match an output)\n");
    } else if (strcmp(rep->acc_name[0], "graphs") == 0) {
        printf("accuracy  graphs %.2f%%   (output '%s', %lld graphs)\n", rep->acc[0], rep->output, rep->graphs);
    } else {
        printf("accuracy");
        for (int i = 0; i < rep->nacc; i++) printf("  %s %.2f%%", rep->acc_name[i], rep->acc[i]);
        printf("   (output '%s')\n", rep->output);
    }
}

static bool save_logits(const char *logits, const BgInterpResult *res, bool quiet, BgDiagSink *d) {
    const BgTensor *lt = NULL;
    for (int i = 0; i < res->noutputs && !lt; i++)
        if (res->outputs[i].dtype == BG_DT_F32) lt = &res->outputs[i];
    if (!lt) bg_diag_error(d, BG_E_WRITE, "%s: the model has no float output to save", logits);
    else if (bg_npy_save_f32(logits, lt->data, lt->rank, lt->dim, d)) {
        if (!quiet) printf("logits  %s\n", logits);
        return true;
    }
    return false;
}

/* Is path an ELF file (a cubin) rather than model source? */
static bool is_cubin_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    unsigned char m[4] = {0};
    size_t n = fread(m, 1, 4, f);
    fclose(f);
    return n == 4 && memcmp(m, "\x7f" "ELF", 4) == 0;
}

typedef struct RunArgs {
    const char *model, *data, *weights, *logits, *graph;
    long repeat;
    bool select;          /* --graphs FROM:TO */
    long long gfrom, gto;
    long long requests;   /* --requests K: K copies of the data in one run */
    bool profile;
    bool fp_strict;     /* --fp-strict */
    bool cubin;
    bool json;
    const char *tune_db;  /* --tune-db FILE|off: the tuning database (default: the GPU's own) */
    const char *sched[16]; /* --sched INST:SCHEDULE */
    int nsched;
} RunArgs;

/* --logits against the files a run reads besides the model's npy(...) parameters: the model
 * or cubin, the weights file or every file of a weights directory, the data files, the
 * --graph file. */
static int refuse_run_clobber(const RunArgs *ra) {
    if (!ra->logits) return 0;
    BgInputSet inputs = {0};
    bg_inputs_add(&inputs, ra->model, ra->cubin ? "the cubin" : "the model");
    struct stat st;
    if (stat(ra->weights, &st) == 0 && S_ISDIR(st.st_mode)) bg_inputs_add_dir(&inputs, ra->weights, "the weights file");
    else bg_inputs_add(&inputs, ra->weights, "the weights file");
    size_t dl = strlen(ra->data);
    for (int i = 0; bg_dataset_file(i); i++) {
        size_t n = dl + strlen(bg_dataset_file(i)) + 2;
        char *p = bg_xmalloc(n);
        snprintf(p, n, "%s%s%s", ra->data, dl && ra->data[dl - 1] == '/' ? "" : "/", bg_dataset_file(i));
        bg_inputs_add(&inputs, p, "the data file");
        free(p);
    }
    if (ra->graph) bg_inputs_add(&inputs, ra->graph, "the graph file");
    int rc = refuse_clobber("--logits", ra->logits, &inputs);
    bg_inputs_free(&inputs);
    return rc;
}

/* --logits against the files the compiled model's npy(...) parameters are read from. */
static int refuse_param_clobber(const RunArgs *ra, const BgModule *m) {
    if (!ra->logits || !m) return 0;
    BgInputSet inputs = {0};
    for (int i = 0; i < m->ninsts; i++) {
        const BgInst *in = &m->insts[i];
        if ((in->op != BG_OP_PARAM && in->op != BG_OP_PARAM_SCALE) || !in->attrs.file) continue;
        char *p = bg_bind_npy_path(ra->weights, in->attrs.file);
        bg_inputs_add(&inputs, p, "the parameter file");
        free(p);
    }
    int rc = refuse_clobber("--logits", ra->logits, &inputs);
    bg_inputs_free(&inputs);
    return rc;
}

static int run_cpu(const RunArgs *ra) {
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgDataset ds;
    memset(&ds, 0, sizeof ds);
    BgBindings b;
    memset(&b, 0, sizeof b);
    double t0 = now_ms();
    BgModule *m = bg_compile_file(a, ra->model, &(BgCompileOpts){.fp_strict = ra->fp_strict}, &d);
    /* --sched is checked here too (the reference runs every schedule the same way) */
    for (int k = 0; m && k < ra->nsched; k++)
        if (!bg_sched_apply_text(m, ra->sched[k], &d)) m = NULL;
    double t1 = now_ms();
    int urc = refuse_param_clobber(ra, m);
    cli_progress("loading %s", ra->graph ? ra->graph : ra->data);
    if (urc || !m || !bg_dataset_load_graph(ra->data, ra->graph, &ds, &d) ||
        (ra->select && !bg_dataset_select_graphs(&ds, ra->gfrom, ra->gto, &d)) ||
        !bg_dataset_replicate(&ds, ra->requests, &d)) goto done;
    double t2 = now_ms();
    cli_progress("binding %lld nodes, %lld edges", (long long)ds.graph.n, (long long)ds.graph.nnz);
    if (!bg_bind(m, &ds.graph, &ds.features, ra->weights, &b, &d)) goto done;
    double t3 = now_ms();
    cli_progress("running on the cpu reference (%ld run%s)", ra->repeat, ra->repeat > 1 ? "s" : "");
    double *times = bg_xcalloc((size_t)ra->repeat, sizeof(double));
    BgInterpResult res;
    memset(&res, 0, sizeof res);
    bool ok = true;
    for (long r = 0; r < ra->repeat && ok; r++) {
        if (r) bg_interp_result_free(&res);
        double s = now_ms();
        ok = bg_interp_run(m, &b, &res, NULL, &d);
        times[r] = now_ms() - s;
    }
    if (!ok) {
        free(times);
        goto done;
    }
    qsort(times, (size_t)ra->repeat, sizeof(double), cmp_double);
    double median = times[ra->repeat / 2];
    free(times);

    cli_progress_done();
    CliRunReport rep = {.model = m->name, .model_file = ra->model, .target = "cpu",
                        .device = "cpu (reference interpreter)", .data = ra->data, .graph_file = ra->graph,
                        .nodes = ds.graph.n, .edges = ds.graph.nnz, .compile_ms = t1 - t0, .load_ms = t2 - t1,
                        .bind_ms = t3 - t2, .inference_ms = median, .repeat = ra->repeat, .cache_hit = -1};
    fill_accuracy(&ds, &res, &rep);
    if (ra->json) {
        if (!ra->logits || save_logits(ra->logits, &res, true, &d)) {
            rep.logits_file = ra->logits;
            cli_print_run_json(&rep);
        }
    } else {
        printf("model   %s (%s)\n", m->name, ra->model);
        printf("data    %s: %lld nodes, %lld edges\n", ra->data, (long long)ds.graph.n, (long long)ds.graph.nnz);
        print_accuracy(&rep);
        printf("time    compile %.2f ms, load %.2f ms, bind %.2f ms, inference %.3f ms (cpu reference, median of %ld)\n",
               t1 - t0, t2 - t1, t3 - t2, median, ra->repeat);
        if (ra->requests > 1)
            printf("requests %lld a run (copies of the data): %.1f requests/s\n", ra->requests,
                   median > 0 ? (double)ra->requests / (median / 1000.0) : 0.0);
        if (ra->logits) save_logits(ra->logits, &res, false, &d);
    }
    bg_interp_result_free(&res);
done:
    bg_bindings_free(&b);
    bg_dataset_free(&ds);
    int rc = report_json(&d, ra->json);
    bg_arena_free(a);
    return urc ? urc : rc;
}

/* GPU 0: JIT (.bgnn, through the disk cache) or load (.cubin), bind and upload, one run for
 * the outputs, then --repeat timed runs between CUDA events. */
/* The tuning database's schedules for this graph into m (docs/tuning.md): --tune-db FILE, or
 * off, or the GPU's own file.  Returns how many instructions took one (-1: error); note says
 * what was used. */
static int apply_tuning(const RunArgs *ra, BgModule *m, const BgGpu *g, const BgGraph *graph, char *note,
                        size_t nn, BgDiagSink *d) {
    if (ra->tune_db && strcmp(ra->tune_db, "off") == 0) return 0;
    BgGraphFeatures f;
    bg_graph_features(graph, &f);
    char key[96];
    bg_graph_key(&f, key, sizeof key);
    /* the plan's rules first, then the learned predictor (the GPU's model file, or
     * BGNN_SCHED_MODEL), then the records */
    const int nr = bg_sched_apply_rules(m, f.n, f.ngraphs, f.deg_mean, false);
    char *mpath = NULL;
    BgSchedModel *model = bg_sched_model_for_gpu(getenv("BGNN_SCHED_MODEL"), g->name, g->sm, &mpath, d);
    int np = 0, n = 0;
    if (bg_sched_model_ntrees(model) > 0) {
        double x[BG_SCHED_MODEL_NFEAT];
        bg_sched_model_features(&f, x);
        np = bg_sched_apply_model(m, model, x);
    }
    char *path = ra->tune_db ? strdup(ra->tune_db) : bg_tune_db_path(NULL, g->name, g->sm);
    BgTuneDb *db = path ? bg_tune_db_load(path, d) : NULL;
    if (db && bg_tune_db_count(db) > 0) n = bg_sched_apply_db(m, db, key, g->sm, d);
    if (n || np)
        snprintf(note, nn, "%d schedule%s from %s, %d predicted by %s, %d by the plan's rules (graph key \"%s\")", n,
                 n == 1 ? "" : "s", path ? path : "-", np, np ? mpath : "-", nr, key);
    else if (nr)
        snprintf(note, nn, "%d schedule%s by the plan's rules (graph key \"%s\")", nr, nr == 1 ? "" : "s", key);
    bg_tune_db_free(db);
    bg_sched_model_free(model);
    free(path);
    free(mpath);
    return n + np + nr;
}

static int run_gpu(const RunArgs *ra) {
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgDataset ds;
    memset(&ds, 0, sizeof ds);
    BgGpu g;
    BgGpuModel gm;
    memset(&gm, 0, sizeof gm);
    BgGpuRun run;
    memset(&run, 0, sizeof run);
    BgInterpResult res;
    memset(&res, 0, sizeof res);
    BgModule *m = NULL;
    unsigned char *cubin = NULL;
    size_t len = 0;
    BgJitInfo ji;
    memset(&ji, 0, sizeof ji);
    char *cache_dir = NULL;
    int urc = 0, ntuned = 0;
    char tune_note[512] = "";
    bool have_gpu = bg_gpu_open(&g, 0, &d);
    if (!have_gpu) goto done;
    double t0 = now_ms();
    cli_progress("%s %s", ra->cubin ? "loading" : "compiling", ra->model);
    if (ra->cubin) {
        cubin = (unsigned char *)bg_read_file(ra->model, &len, &d);
        if (!cubin) goto done;
    } else {
        m = bg_compile_file(a, ra->model, &(BgCompileOpts){.fp_strict = ra->fp_strict}, &d);
        cache_dir = bg_cache_default_dir();
        if ((urc = refuse_param_clobber(ra, m)) != 0 || !m) goto done;
    }
    double t1 = now_ms();
    cli_progress("loading %s", ra->graph ? ra->graph : ra->data);
    if (!bg_dataset_load_graph(ra->data, ra->graph, &ds, &d) ||
        (ra->select && !bg_dataset_select_graphs(&ds, ra->gfrom, ra->gto, &d)) ||
        !bg_dataset_replicate(&ds, ra->requests, &d)) goto done;
    double t2 = now_ms();
    if (m) { /* the schedules: the tuning database's for this graph (docs/tuning.md), then --sched */
        ntuned = apply_tuning(ra, m, &g, &ds.graph, tune_note, sizeof tune_note, &d);
        for (int k = 0; k < ra->nsched; k++)
            if (!bg_sched_apply_text(m, ra->sched[k], &d)) goto done;
        if (ntuned < 0 || !bg_nvrtc_load(&g.nv, &d) || !bg_jit_cubin(m, g.arch, &g.nv, cache_dir, &cubin, &len, &ji, &d))
            goto done;
    }
    if (!bg_gpu_model_load(&g, cubin, len, ra->model, &gm, &d)) goto done;
    if (ra->cubin && ra->fp_strict && !gm.plan->fp_strict)
        fprintf(stderr, "bgnnc: note: %s was compiled without --fp-strict; it runs the float orders it "
                        "records (bgnnc MODEL.bgnn --fp-strict -o FILE makes a strict one)\n", ra->model);
    /* compile = the source, then the JIT (or the cubin's load); load = the data, between them */
    const double tload = t2 - t1;
    t2 = now_ms();
    t1 = t2 - tload;
    cli_progress("binding and uploading %lld nodes, %lld edges", (long long)ds.graph.n, (long long)ds.graph.nnz);
    if (!bg_gpu_run_bind(&g, &gm, m, &ds.graph, &ds.features, 0, ra->weights, &run, NULL, &d)) goto done;
    double t3 = now_ms();
    cli_progress("running on the gpu (%ld timed run%s)", ra->repeat, ra->repeat > 1 ? "s" : "");
    if (!bg_gpu_run_launch(&g, &gm, &run, NULL, &d)) goto done;
    const BgPlan *p = gm.plan;
    res.names = bg_xcalloc((size_t)p->noutputs + 1, sizeof(char *));
    res.outputs = bg_xcalloc((size_t)p->noutputs + 1, sizeof(BgTensor));
    for (int i = 0; i < p->noutputs; i++) {
        if (!bg_gpu_run_read_output(&g, p, &run, i, &res.outputs[i], &d)) goto done;
        res.names[i] = p->outputs[i].name;
        res.noutputs++;
    }
    double median = 0;
    if (!bg_gpu_run_time(&g, &gm, &run, NULL, (int)ra->repeat, &median, &d)) goto done;
    cli_progress_done();
    char devname[200];
    snprintf(devname, sizeof devname, "%s (%s)", g.name, g.arch);
    CliRunReport rep = {.model = p->model, .model_file = ra->model, .target = "gpu", .device = devname,
                        .data = ra->data, .graph_file = ra->graph, .nodes = ds.graph.n, .edges = ds.graph.nnz,
                        .compile_ms = t1 - t0, .load_ms = t2 - t1, .bind_ms = t3 - t2, .inference_ms = median,
                        .repeat = ra->repeat, .cache_hit = ra->cubin ? -1 : ji.cache_hit,
                        .exec = bg_exec_mode_name(run.used), .kernels = bg_gpu_run_kernels(&gm, &run),
                        .coop_grid = run.used == BG_EXEC_COOP ? run.coop_grid : 0, .coop_refused = run.coop_refused};
    if (run.mode == BG_EXEC_AUTO) {
        rep.auto_ms[0] = run.auto_ms[0];
        rep.auto_ms[1] = run.auto_ms[1];
    }
    fill_accuracy(&ds, &res, &rep);
    if (ra->json) {
        double *pms = NULL;
        const char **kn = NULL;
        if (ra->profile) {
            pms = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(double));
            kn = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(char *));
            for (int i = 0; i < p->nlaunches; i++) kn[i] = p->launches[i].kernel;
            if (bg_gpu_run_profile(&g, &gm, &run, NULL, (int)ra->repeat, pms, &d)) {
                rep.nprofile = p->nlaunches;
                rep.profile_kernel = kn;
                rep.profile_ms = pms;
            }
        }
        if (!d.nerrors && (!ra->logits || save_logits(ra->logits, &res, true, &d))) {
            rep.logits_file = ra->logits;
            cli_print_run_json(&rep);
        }
        free(pms);
        free(kn);
        goto done;
    }

    printf("model   %s (%s)\n", p->model, ra->model);
    if (run.used == BG_EXEC_COOP)
        printf("gpu     %s, %s, 1 cooperative launch of %s (%lld blocks of %d)\n", g.name, g.arch,
               p->fused_kernel, run.coop_grid, p->fused_block);
    else if (run.used == BG_EXEC_BLOCKS)
        printf("gpu     %s, %s, 1 launch of the per-graph kernel %s (a block of %d threads per graph, %lld graphs)\n",
               g.name, g.arch, p->blocks_kernel, run.blocks_threads_used, (long long)run.ngraphs);
    else
        printf("gpu     %s, %s, %d kernels (%s)%s%s\n", g.name, g.arch, bg_gpu_run_kernels(&gm, &run),
               run.used == BG_EXEC_GRAPH ? "one CUDA graph launch" : "one launch each",
               run.coop_refused[0] ? "; fused kernel not used: " : "", run.coop_refused);
    if (tune_note[0]) printf("tune    %s\n", tune_note);
    if (run.blocks_why[0]) printf("batch   per-graph kernel not used: %s\n", run.blocks_why);
    else if (run.blocks_ms[0] > 0)
        printf("batch   auto chose the per-graph kernel: %.1f us, separate launches %.1f us (medians of %d)\n",
               1000 * run.blocks_ms[0], 1000 * run.blocks_ms[1], BG_AUTO_TRIALS);
    if (run.mode == BG_EXEC_AUTO && run.auto_ms[1] > 0) {
        char fk[32];
        if (run.auto_ms[0] > 0) snprintf(fk, sizeof fk, "%.1f us", 1000 * run.auto_ms[0]);
        else snprintf(fk, sizeof fk, "refused");
        printf("exec    auto chose the %s: fused cooperative kernel %s, CUDA graph of %d kernels %.1f us "
               "(medians of %d)\n", run.auto_choice == BG_EXEC_COOP ? "fused kernel" : "CUDA graph", fk,
               bg_gpu_run_kernels(&gm, &run), 1000 * run.auto_ms[1], BG_AUTO_TRIALS);
    }
    printf("data    %s: %lld nodes, %lld edges\n", ra->data, (long long)ds.graph.n, (long long)ds.graph.nnz);
    print_accuracy(&rep);
    printf("time    %s %.2f ms%s, load %.2f ms, bind+upload %.2f ms, inference %.4f ms (gpu, median of %ld, CUDA events)\n",
           ra->cubin ? "cubin load" : "compile", t1 - t0,
           ra->cubin ? "" : ji.cache_hit ? " (cache hit)" : " (nvrtc)", t2 - t1, t3 - t2, median, ra->repeat);
    if (ra->requests > 1)
        printf("requests %lld a run (copies of the data): %.0f requests/s\n", ra->requests,
               median > 0 ? (double)ra->requests / (median / 1000.0) : 0.0);
    if (ra->profile) {
        double *ms = bg_xcalloc((size_t)p->nlaunches + 1, sizeof(double));
        if (bg_gpu_run_profile(&g, &gm, &run, NULL, (int)ra->repeat, ms, &d))
            for (int i = 0; i < p->nlaunches; i++) { /* the variant that ran: plan.h BgPlanLaunch.alt */
                const bool alt = run.use_alt && run.use_alt[i], csr = !alt && run.use_sparse && run.use_sparse[i];
                printf("kernel  %-26s %8.2f us  (alone, median of %ld)%s\n", p->launches[i].kernel, 1000 * ms[i],
                       ra->repeat, alt ? "  dense features: tiled" : csr ? "  features as CSR" : "");
            }
        free(ms);
    }
    if (ra->logits) save_logits(ra->logits, &res, false, &d);
done:
    bg_interp_result_free(&res);
    if (have_gpu) {
        bg_gpu_run_free(&g, &run);
        bg_gpu_model_free(&g, &gm);
        bg_gpu_close(&g);
    }
    free(cache_dir);
    free(cubin);
    bg_dataset_free(&ds);
    int rc = report_json(&d, ra->json);
    bg_arena_free(a);
    return urc ? urc : rc;
}

/* --target auto: the GPU when one is usable, else the CPU reference (saying why). */
static const char *pick_target(bool cubin) {
    BgDiagSink d;
    bg_diag_init(&d);
    BgGpu g;
    bool ok = bg_gpu_open(&g, 0, &d);
    if (ok) bg_gpu_close(&g);
    else if (!cubin)
        printf("note    no usable GPU (%s); running on the CPU reference\n", d.n ? d.items[0].msg : "unknown reason");
    bg_diag_free(&d);
    return ok || cubin ? "gpu" : "cpu";
}

static int cmd_run(int argc, char **argv) {
    RunArgs ra = {.repeat = 1, .requests = 1};
    const char *dataset = NULL, *target = "cpu";
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (strcmp(a, "--data") == 0) slot = &ra.data;
        else if (strcmp(a, "--dataset") == 0) slot = &dataset;
        else if (strcmp(a, "--weights") == 0) slot = &ra.weights;
        else if (strcmp(a, "--graph") == 0) slot = &ra.graph;
        else if (strcmp(a, "--target") == 0) slot = &target;
        else if (strncmp(a, "--target=", 9) == 0) {
            target = a + 9;
            continue;
        } else if (strcmp(a, "--logits") == 0) slot = &ra.logits;
        else if (strcmp(a, "--profile") == 0) {
            ra.profile = true;
            continue;
        } else if (strcmp(a, "--json") == 0) {
            ra.json = true;
            continue;
        } else if (strcmp(a, "--fp-strict") == 0) {
            ra.fp_strict = true;
            continue;
        } else if (strcmp(a, "--tune-db") == 0) slot = &ra.tune_db;
        else if (strcmp(a, "--sched") == 0) {
            if (++i >= argc) return usage_error("%s needs INST:SCHEDULE", a);
            if (ra.nsched == 16) return usage_error("%s", "at most 16 --sched options");
            ra.sched[ra.nsched++] = argv[i];
            continue;
        } else if (strcmp(a, "--graphs") == 0) {
            if (++i >= argc) return usage_error("%s needs FROM:TO", a);
            char *end;
            errno = 0;
            ra.gfrom = strtoll(argv[i], &end, 10);
            if (errno || end == argv[i] || *end != ':') return usage_error("--graphs expects FROM:TO (e.g. 0:32), got '%s'", argv[i]);
            const char *t = end + 1;
            ra.gto = strtoll(t, &end, 10);
            if (errno || end == t || *end || ra.gfrom < 0 || ra.gto <= ra.gfrom)
                return usage_error("--graphs expects FROM:TO with 0 <= FROM < TO (e.g. 0:32), got '%s'", argv[i]);
            ra.select = true;
            continue;
        } else if (strcmp(a, "--requests") == 0 || strcmp(a, "--repeat") == 0) {
            const bool req = strcmp(a, "--requests") == 0;
            const long long hi = req ? 1000000 : 100000;
            if (++i >= argc) return usage_error("%s needs a number", a);
            char *end;
            errno = 0;
            const long long v = strtoll(argv[i], &end, 10);
            if (errno || end == argv[i] || *end || v < 1 || v > hi)
                return req ? usage_error("--requests must be a whole number from 1 to 1000000, got '%s'", argv[i])
                           : usage_error("--repeat must be a whole number from 1 to 100000, got '%s'", argv[i]);
            if (req) ra.requests = v;
            else ra.repeat = (long)v;
            continue;
        } else if (a[0] == '-' && a[1]) return usage_error("unknown option '%s'", a);
        else if (ra.model) return usage_error("more than one model file given ('%s')", a);
        else ra.model = a;
        if (slot) {
            if (++i >= argc) return usage_error("%s needs a value", a);
            *slot = argv[i];
        }
    }
    if (!ra.model) return usage_error("%s", "run: no model file given");
    if (!ra.data && !dataset) return usage_error("%s", "run: give --data DIR or --dataset NAME");
    if (!ra.weights) return usage_error("%s", "run: give --weights FILE");
    if (strcmp(target, "cpu") != 0 && strcmp(target, "gpu") != 0 && strcmp(target, "auto") != 0)
        return usage_error("--target must be cpu, gpu or auto, got '%s'", target);
    ra.cubin = is_cubin_file(ra.model);
    if (strcmp(target, "auto") == 0) target = pick_target(ra.cubin);
    if (ra.cubin && strcmp(target, "cpu") == 0)
        return usage_error("%s is a cubin: it holds GPU code only; --target cpu needs the model's .bgnn source "
                           "(or use --target gpu)", ra.model);
    char dirbuf[4096];
    if (!ra.data) {
        snprintf(dirbuf, sizeof dirbuf, "%s/%s", bg_default_data_root(), dataset);
        ra.data = dirbuf;
    }
    if (refuse_run_clobber(&ra)) return EXIT_USAGE;
    return strcmp(target, "gpu") == 0 ? run_gpu(&ra) : run_cpu(&ra);
}

/* ---- bgnnc gen-weights ------------------------------------------------------------------ */
static int cmd_gen_weights(int argc, char **argv) {
    const char *model = NULL, *out = NULL;
    unsigned long long seed = 0;
    bool have_seed = false;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            seed = strtoull(argv[++i], &end, 10);
            if (errno || *end) return usage_error("--seed must be a whole number, got '%s'", argv[i]);
            have_seed = true;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
        else if (strcmp(argv[i], "--fp-strict") == 0) continue; /* the lowered IR has no order yet */
        else if (argv[i][0] == '-') return usage_error("unknown option '%s'", argv[i]);
        else model = argv[i];
    }
    if (!model || !out || !have_seed) return usage_error("%s", "gen-weights needs MODEL, --seed N and -o FILE");
    if (refuse_model_clobber("-o", out, model)) return EXIT_USAGE;
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgCompileOpts o = {0};
    static const char *const none[1] = {NULL};
    o.passes = none; /* lowered IR: every declared parameter */
    BgModule *m = bg_compile_file(a, model, &o, &d);
    int n = 0;
    if (m && bg_gen_weights(m, seed, out, &n, &d))
        printf("wrote %d tensors to %s (seed %llu)\n", n, out, seed);
    int rc = report(&d);
    bg_arena_free(a);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("bgnnc %s (IR manifest version %d)\n", BG_VERSION_STRING, BG_MANIFEST_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "--list-passes") == 0) {
        int n;
        const BgPass *t = bg_pass_table(&n);
        for (int i = 0; i < n; i++)
            printf("%-22s %s%s\n", t[i].name, t[i].help, t[i].in_default ? "" : " (not in the default pipeline)");
        return 0;
    }
    if (strcmp(argv[1], "run") == 0) return cmd_run(argc, argv);
    if (strcmp(argv[1], "tune") == 0) return cli_cmd_tune(argc, argv);
    if (strcmp(argv[1], "gen-weights") == 0) return cmd_gen_weights(argc, argv);
    return cmd_compile(argc, argv);
}
