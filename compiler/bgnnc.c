/* bgnnc.c - the command-line driver; the only place in bgnn that prints or exits.
 *
 *   bgnnc MODEL [--emit=ast|ir] [-o FILE] [--passes=a,b] [--print-after=PASS|all]
 *   bgnnc run MODEL --data DIR --weights FILE [--target cpu] [--logits OUT.npy]
 *   bgnnc gen-weights MODEL --seed N -o W.safetensors
 *   bgnnc --list-passes | --help | --version
 *
 * Exit status: 0 success, 1 an error in an input (model, data, weights), 2 a usage error. */
#include "bg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
    "usage: bgnnc MODEL.bgnn [--emit=ast|ir] [-o FILE] [--passes=P1,P2] [--print-after=PASS|all]\n"
    "       bgnnc run MODEL.bgnn (--data DIR | --dataset NAME) --weights FILE [--target cpu]\n"
    "                 [--logits OUT.npy] [--repeat N]\n"
    "       bgnnc gen-weights MODEL.bgnn --seed N -o WEIGHTS.safetensors\n"
    "       bgnnc --list-passes | --help | --version\n"
    "\n"
    "  --emit=ast|ir      print the syntax tree or the IR after the pass pipeline\n"
    "  --passes=LIST      run these passes (comma separated) instead of the default pipeline;\n"
    "                     --passes= (empty) stops after lowering\n"
    "  --print-after=PASS print the IR after PASS (or after every pass: all)\n"
    "  -o FILE            write the output to FILE (atomically) instead of stdout\n"
    "  --data DIR         dataset directory (graph.mtx, features.npy, labels.npy, splits)\n"
    "  --dataset NAME     DIR = $BGNN_DATA_DIR/NAME (default root ../shared/data)\n"
    "  --weights FILE     safetensors file (or a directory for npy(...) parameters)\n"
    "  --target cpu       run on the CPU reference interpreter\n"
    "  --logits OUT.npy   save the first float output as .npy\n"
    "  --repeat N         run inference N times and report the median time\n"
    "\n"
    "exit status: 0 ok, 1 error in an input, 2 usage error\n";

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "bgnnc: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(bgnnc --help for usage)\n");
    return EXIT_USAGE;
}

static int report(BgDiagSink *d) {
    char *s = bg_diag_render(d);
    if (s && *s) fputs(s, stderr);
    free(s);
    int rc = d->nerrors ? EXIT_INPUT : 0;
    bg_diag_free(d);
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
static int cmd_compile(int argc, char **argv) {
    const char *model = NULL, *emit = NULL, *out = NULL, *passes = NULL, *after = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--emit=", 7) == 0) emit = a + 7;
        else if (strncmp(a, "--passes=", 9) == 0) passes = a + 9;
        else if (strncmp(a, "--print-after=", 14) == 0) after = a + 14;
        else if (strcmp(a, "--print-after-all") == 0) after = "all";
        else if (strcmp(a, "-o") == 0) {
            if (++i >= argc) return usage_error("%s needs a file name", "-o");
            out = argv[i];
        } else if (a[0] == '-' && a[1]) return usage_error("unknown option '%s'", a);
        else if (model) return usage_error("more than one model file given ('%s')", a);
        else model = a;
    }
    if (!model) return usage_error("%s", "no model file given");
    if (emit && strcmp(emit, "ast") != 0 && strcmp(emit, "ir") != 0)
        return usage_error("--emit must be ast or ir, got '%s'", emit);
    if (out && !emit) return usage_error("%s", "-o needs --emit=ast|ir (GPU code generation is a separate target)");
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
        if (m && emit) {
            char *s = bg_ir_print(m);
            rc = write_output(out, s, &d);
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

static int cmd_run(int argc, char **argv) {
    const char *model = NULL, *data = NULL, *dataset = NULL, *weights = NULL, *target = "cpu";
    const char *logits = NULL;
    long repeat = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (strcmp(a, "--data") == 0) slot = &data;
        else if (strcmp(a, "--dataset") == 0) slot = &dataset;
        else if (strcmp(a, "--weights") == 0) slot = &weights;
        else if (strcmp(a, "--target") == 0) slot = &target;
        else if (strcmp(a, "--logits") == 0) slot = &logits;
        else if (strcmp(a, "--repeat") == 0) {
            if (++i >= argc) return usage_error("%s needs a number", a);
            char *end;
            errno = 0;
            repeat = strtol(argv[i], &end, 10);
            if (errno || *end || repeat < 1 || repeat > 100000)
                return usage_error("--repeat must be a whole number from 1 to 100000, got '%s'", argv[i]);
            continue;
        } else if (a[0] == '-' && a[1]) return usage_error("unknown option '%s'", a);
        else if (model) return usage_error("more than one model file given ('%s')", a);
        else model = a;
        if (slot) {
            if (++i >= argc) return usage_error("%s needs a value", a);
            *slot = argv[i];
        }
    }
    if (!model) return usage_error("%s", "run: no model file given");
    if (!data && !dataset) return usage_error("%s", "run: give --data DIR or --dataset NAME");
    if (!weights) return usage_error("%s", "run: give --weights FILE");
    if (strcmp(target, "cpu") != 0)
        return usage_error("--target must be cpu in this build, got '%s'", target);
    char dirbuf[4096];
    if (!data) {
        snprintf(dirbuf, sizeof dirbuf, "%s/%s", bg_default_data_root(), dataset);
        data = dirbuf;
    }

    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgDataset ds;
    memset(&ds, 0, sizeof ds);
    BgBindings b;
    memset(&b, 0, sizeof b);
    int rc = 0;
    double t0 = now_ms();
    BgModule *m = bg_compile_file(a, model, NULL, &d);
    double t1 = now_ms();
    if (!m || !bg_dataset_load(data, &ds, &d)) goto done;
    double t2 = now_ms();
    if (!bg_bind(m, &ds.graph, &ds.features, weights, &b, &d)) goto done;
    double t3 = now_ms();
    double *times = bg_xcalloc((size_t)repeat, sizeof(double));
    BgInterpResult res;
    memset(&res, 0, sizeof res);
    bool ok = true;
    for (long r = 0; r < repeat && ok; r++) {
        if (r) bg_interp_result_free(&res);
        double s = now_ms();
        ok = bg_interp_run(m, &b, &res, NULL, &d);
        times[r] = now_ms() - s;
    }
    if (!ok) {
        free(times);
        goto done;
    }
    qsort(times, (size_t)repeat, sizeof(double), cmp_double);
    double median = times[repeat / 2];
    free(times);

    printf("model   %s (%s)\n", m->name, model);
    printf("data    %s: %lld nodes, %lld edges\n", data, (long long)ds.graph.n, (long long)ds.graph.nnz);
    int which = -1;
    const BgTensor *pred = pick_prediction(&res, ds.graph.n, &which);
    if (pred && ds.labels) {
        static const char *names[3] = {"train", "val", "test"};
        printf("accuracy");
        for (int s = 0; s < 3; s++)
            if (ds.split[s]) printf("  %s %.2f%%", names[s], accuracy(pred, ds.labels, ds.split[s], ds.nsplit[s]));
        if (!ds.split[0] && !ds.split[1] && !ds.split[2])
            printf("  all %.2f%%", accuracy(pred, ds.labels, NULL, ds.graph.n));
        printf("   (output '%s')\n", res.names[which]);
    } else if (ds.graph_labels && (pred = pick_prediction(&res, ds.graph.ngraphs, &which))) {
        printf("accuracy  graphs %.2f%%   (output '%s', %lld graphs)\n",
               accuracy(pred, ds.graph_labels, NULL, ds.graph.ngraphs), res.names[which],
               (long long)ds.graph.ngraphs);
    } else {
        printf("accuracy  n/a (no labels match an output)\n");
    }
    printf("time    compile %.2f ms, load %.2f ms, bind %.2f ms, inference %.3f ms (cpu reference, median of %ld)\n",
           t1 - t0, t2 - t1, t3 - t2, median, repeat);
    if (logits) {
        const BgTensor *lt = NULL;
        for (int i = 0; i < res.noutputs && !lt; i++)
            if (res.outputs[i].dtype == BG_DT_F32) lt = &res.outputs[i];
        if (!lt) bg_diag_error(&d, BG_E_WRITE, "%s: the model has no float output to save", logits);
        else if (bg_npy_save_f32(logits, lt->data, lt->rank, lt->dim, &d))
            printf("logits  %s\n", logits);
    }
    bg_interp_result_free(&res);
done:
    bg_bindings_free(&b);
    bg_dataset_free(&ds);
    rc = report(&d);
    bg_arena_free(a);
    return rc;
}

/* ---- bgnnc gen-weights ------------------------------------------------------------------ */
static double gauss(unsigned long long *s) {
    double u1 = 0, u2;
    while (u1 <= 1e-300) {
        *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
        u1 = (double)((*s * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
    }
    *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
    u2 = (double)((*s * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

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
        else if (argv[i][0] == '-') return usage_error("unknown option '%s'", argv[i]);
        else model = argv[i];
    }
    if (!model || !out || !have_seed) return usage_error("%s", "gen-weights needs MODEL, --seed N and -o FILE");
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgCompileOpts o = {0};
    static const char *const none[1] = {NULL};
    o.passes = none; /* lowered IR: every declared parameter */
    BgModule *m = bg_compile_file(a, model, &o, &d);
    if (m) {
        int n = 0;
        const char **names = bg_arena_alloc(a, sizeof(char *) * (size_t)(m->ninsts + 1));
        const float **data = bg_arena_alloc(a, sizeof(float *) * (size_t)(m->ninsts + 1));
        int *rank = bg_arena_alloc(a, sizeof(int) * (size_t)(m->ninsts + 1));
        int64_t(*dim)[4] = bg_arena_alloc(a, sizeof(int64_t[4]) * (size_t)(m->ninsts + 1));
        unsigned long long s = seed * 0x9E3779B97F4A7C15ULL + 1;
        for (int i = 0; i < m->ninsts; i++) {
            const BgInst *in = &m->insts[i];
            if (in->op != BG_OP_PARAM || in->attrs.file) continue;
            bool is_var = false; /* running variance of a batchnorm: positive values */
            for (int j = i + 1; j < m->ninsts; j++)
                if (m->insts[j].op == BG_OP_BATCHNORM && m->insts[j].args[2] == (BgRef)i) is_var = true;
            int64_t rows = in->type.dim[0], cols = in->type.rank == 2 ? in->type.dim[1] : 1;
            float *v = bg_arena_alloc(a, sizeof(float) * (size_t)(rows * cols));
            double sd = in->type.rank == 2 ? sqrt(1.0 / (double)rows) : 0.1;
            for (int64_t k = 0; k < rows * cols; k++)
                v[k] = is_var ? (float)(0.5 + fabs(gauss(&s))) : (float)(gauss(&s) * sd);
            names[n] = in->attrs.name;
            data[n] = v;
            rank[n] = in->type.rank;
            if (in->type.rank == 2 && in->attrs.transposed) {
                float *t = bg_arena_alloc(a, sizeof(float) * (size_t)(rows * cols));
                for (int64_t r = 0; r < rows; r++)
                    for (int64_t c = 0; c < cols; c++) t[c * rows + r] = v[r * cols + c];
                data[n] = t;
                dim[n][0] = cols;
                dim[n][1] = rows;
            } else {
                dim[n][0] = rows;
                dim[n][1] = cols;
            }
            bool dup = false;
            for (int k = 0; k < n; k++) dup |= strcmp(names[k], names[n]) == 0;
            if (!dup) n++;
        }
        if (bg_safetensors_save_f32(out, n, names, data, rank, (const int64_t(*)[4])dim, &d))
            printf("wrote %d tensors to %s (seed %llu)\n", n, out, seed);
    }
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
    if (strcmp(argv[1], "gen-weights") == 0) return cmd_gen_weights(argc, argv);
    return cmd_compile(argc, argv);
}
