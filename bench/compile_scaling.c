/* compile_scaling.c - compile time and memory against model size (no GPU needed).
 *
 *   compile_scaling [--kind mixed|chain] [N ...]     table for N statements (default 1e3..1e6)
 *   compile_scaling --write N FILE [--kind K]         write the generated model (for bgnnc)
 *   compile_scaling --guard N SECONDS [--kind K]      exit 1 when compiling N statements takes
 *                                                     longer than SECONDS, or 3x the time per
 *                                                     statement of N/10 (CTest perf-guard)
 *
 * Models are generated: `chain` is h_i = relu(h_{i-1}); `mixed` repeats a block of 12
 * statements that gives every default pass work at every size: a bias linear (fuse-add), a
 * batchnorm read by a matmul (fuse-batchnorm), add + relu + bin (fold-threshold, one shared
 * threshold table, fuse-bin), a popcount product aggregated (fuse-mm-spmm), two identical
 * relus (cse), a dead statement (dce), a gcn_conv layer, and an output every 100 blocks.
 *
 * Each measurement runs in a child process (fork) that generates the model, then times, in
 * process, what `bgnnc MODEL --emit=ir` does: bg_compile_text (parse, check and lower, verify,
 * the default pass pipeline with the verifier after every pass) and bg_ir_print.  Peak memory
 * is the child's ru_maxrss (wait4), the source text included; "KiB / stmt" is the peak less
 * that of an idle child, per statement.  Rows of fewer than 10^5 statements are the median of
 * several runs.  Build: the CMake target compile_scaling (links libbgnn). */
#include "bg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef enum { KIND_MIXED, KIND_CHAIN } Kind;

#define GUARD_RATIO 3.0 /* --guard: time per statement at N over that at N/10 */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The model of n statements (lines after the declarations, outputs included). */
static char *gen_model(long n, Kind kind, size_t *len) {
    BgStrBuf b = {0};
    bg_sb_printf(&b, "model scaling\n"
                     "graph A  = adjacency(self_loops: true, norm: sym)\n"
                     "graph A1 = adjacency(self_loops: true, norm: none)\n"
                     "input X  : f32[N, 16]\n"
                     "param W  : f32[16, 16] = \"w\"\n"
                     "param Wb : b1[16, 16]  = \"wb\"\n"
                     "param bias : f32[16]   = \"bias\"\n"
                     "param mu : f32[16]     = \"mu\"\n"
                     "param var : f32[16]    = \"var\"\n"
                     "h0 = relu(X)\n");
    char cur[32] = "h0";
    for (long i = 1; i < n - 1; i++) {
        if (kind == KIND_CHAIN) {
            bg_sb_printf(&b, "h%ld = relu(%s)\n", i, cur);
            snprintf(cur, sizeof cur, "h%ld", i);
            continue;
        }
        long j = (i - 1) / 12;
        switch ((i - 1) % 12) {
        case 0: bg_sb_printf(&b, "a%ld = relu(%s)\n", j, cur); break;
        case 1: bg_sb_printf(&b, "b%ld = linear(a%ld, W, bias)\n", j, j); break;
        case 2: bg_sb_printf(&b, "c%ld = batchnorm(b%ld, mu, var)\n", j, j); break;
        case 3: bg_sb_printf(&b, "d%ld = linear(c%ld, W)\n", j, j); break;
        case 4: bg_sb_printf(&b, "e%ld = add.FFF(d%ld, bias)\n", j, j); break;
        case 5: bg_sb_printf(&b, "f%ld = relu(e%ld)\n", j, j); break;
        case 6: bg_sb_printf(&b, "g%ld = bin(f%ld)\n", j, j); break;
        case 7: bg_sb_printf(&b, "q%ld = bspmm.FFF(A, bmm.BBF(g%ld, Wb))\n", j, j); break;
        case 8: bg_sb_printf(&b, "r%ld = relu(q%ld)\n", j, j); break;
        case 9: bg_sb_printf(&b, "s%ld = relu(q%ld)\n", j, j); break;
        case 10: bg_sb_printf(&b, "z%ld = relu(b%ld)\n", j, j); break; /* dead */
        case 11:
            if (j % 100 == 99) {
                bg_sb_printf(&b, "output o%ld = %s\n", j, cur);
                break;
            }
            bg_sb_printf(&b, "t%ld = gcn_conv(add.FFF(r%ld, s%ld), A1, W, bias)\n", j, j, j);
            snprintf(cur, sizeof cur, "t%ld", j);
            break;
        }
        if ((i - 1) % 12 == 0) snprintf(cur, sizeof cur, "a%ld", j);
    }
    bg_sb_printf(&b, "output y = log_softmax(%s)\n", cur);
    *len = b.n;
    return bg_sb_take(&b);
}

typedef struct Sample {
    double compile_s, print_s;
    long ninsts;
    int nerrors;
} Sample;

/* Generates and compiles in this process. */
static Sample compile_once(long n, Kind kind, size_t *srclen) {
    Sample s = {0, 0, 0, 0};
    char *text = gen_model(n, kind, srclen);
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    double t0 = now_s();
    BgModule *m = bg_compile_text(a, "scaling.bgnn", text, *srclen, NULL, &d);
    double t1 = now_s();
    char *ir = m ? bg_ir_print(m) : NULL;
    double t2 = now_s();
    s.compile_s = t1 - t0;
    s.print_s = t2 - t1;
    s.ninsts = m ? m->ninsts : 0;
    s.nerrors = d.nerrors + (m == NULL);
    if (s.nerrors) {
        char *r = bg_diag_render(&d);
        fprintf(stderr, "%s", r);
        free(r);
    }
    free(ir);
    bg_diag_free(&d);
    bg_arena_free(a);
    free(text);
    return s;
}

typedef struct Result {
    Sample s;
    size_t srclen;
    long maxrss_kib;
} Result;

/* One measurement in a child process; n = 0: an idle child (the memory baseline). */
static int measure(long n, Kind kind, Result *r) {
    int fd[2];
    if (pipe(fd) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fd[0]);
        Result c;
        memset(&c, 0, sizeof c);
        if (n > 0) c.s = compile_once(n, kind, &c.srclen);
        ssize_t w = write(fd[1], &c, sizeof c);
        _exit(w == (ssize_t)sizeof c ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], r, sizeof *r);
    close(fd[0]);
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || got != (ssize_t)sizeof *r || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return -1;
    r->maxrss_kib = ru.ru_maxrss;
    return r->s.nerrors ? -1 : 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_result(const void *a, const void *b) {
    double x = ((const Result *)a)->s.compile_s + ((const Result *)a)->s.print_s;
    double y = ((const Result *)b)->s.compile_s + ((const Result *)b)->s.print_s;
    return (x > y) - (x < y);
}

static int table(const long *sizes, int nsizes, Kind kind) {
    Result base;
    if (measure(0, kind, &base) != 0) return 1;
    printf("model: %s (bench/compile_scaling.c), in-process bg_compile_text + bg_ir_print; "
           "idle child %.1f MiB\n\n", kind == KIND_CHAIN ? "chain" : "mixed", base.maxrss_kib / 1024.0);
    printf("| statements | instructions | source MiB | runs | compile ms | emit-ir ms | total ms | "
           "us / stmt | vs first row | peak RSS MiB | KiB / stmt |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    double first = 0;
    for (int k = 0; k < nsizes; k++) {
        long n = sizes[k];
        int runs = n <= 1000 ? 21 : n <= 10000 ? 11 : n < 1000000 ? 3 : 1;
        Result *rs = calloc((size_t)runs, sizeof *rs);
        for (int r = 0; r < runs; r++)
            if (measure(n, kind, &rs[r]) != 0) {
                fprintf(stderr, "compile_scaling: the %ld-statement model failed\n", n);
                free(rs);
                return 1;
            }
        qsort(rs, (size_t)runs, sizeof *rs, cmp_result);
        Result med = rs[runs / 2];
        long peak = 0;
        for (int r = 0; r < runs; r++)
            if (rs[r].maxrss_kib > peak) peak = rs[r].maxrss_kib;
        free(rs);
        double total = med.s.compile_s + med.s.print_s, per = 1e6 * total / (double)n;
        if (k == 0) first = per;
        printf("| %ld | %ld | %.2f | %d | %.2f | %.2f | %.2f | %.3f | %.2fx | %.1f | %.2f |\n", n,
               med.s.ninsts, med.srclen / 1048576.0, runs, 1e3 * med.s.compile_s, 1e3 * med.s.print_s,
               1e3 * total, per, per / first, peak / 1024.0, (double)(peak - base.maxrss_kib) / (double)n);
        fflush(stdout);
    }
    return 0;
}

static int usage(void) {
    fprintf(stderr, "usage: compile_scaling [--kind mixed|chain] [N ...]\n"
                    "       compile_scaling --write N FILE [--kind mixed|chain]\n"
                    "       compile_scaling --guard N SECONDS [--kind mixed|chain]\n");
    return 2;
}

int main(int argc, char **argv) {
    Kind kind = KIND_MIXED;
    long sizes[16];
    int nsizes = 0;
    const char *write_to = NULL;
    long guard_n = 0;
    double guard_s = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc) {
            const char *k = argv[++i];
            if (strcmp(k, "chain") == 0) kind = KIND_CHAIN;
            else if (strcmp(k, "mixed") == 0) kind = KIND_MIXED;
            else return usage();
        } else if (strcmp(argv[i], "--write") == 0 && i + 2 < argc) {
            guard_n = atol(argv[++i]);
            write_to = argv[++i];
        } else if (strcmp(argv[i], "--guard") == 0 && i + 2 < argc) {
            guard_n = atol(argv[++i]);
            guard_s = atof(argv[++i]);
        } else if (argv[i][0] != '-' && nsizes < 16) {
            sizes[nsizes++] = (long)atof(argv[i]);
        } else {
            return usage();
        }
    }
    if (write_to) {
        if (guard_n < 2) return usage();
        size_t len;
        char *text = gen_model(guard_n, kind, &len);
        FILE *f = fopen(write_to, "wb");
        bool ok = f && fwrite(text, 1, len, f) == len;
        if (f && fclose(f) != 0) ok = false;
        free(text);
        if (!ok) fprintf(stderr, "compile_scaling: cannot write %s\n", write_to);
        return ok ? 0 : 1;
    }
    if (guard_s > 0) {
        if (guard_n < 20) return usage();
        /* Per statement, N must cost about what N/10 costs (median of 3): a step quadratic in
         * the statements makes it ~10x, whatever the speed of the build (sanitizers) or the
         * machine; SECONDS bounds the whole as well. */
        size_t len;
        double small[3];
        for (int r = 0; r < 3; r++) {
            Sample s = compile_once(guard_n / 10, kind, &len);
            if (s.nerrors) return 1;
            small[r] = (s.compile_s + s.print_s) / (double)(guard_n / 10);
        }
        qsort(small, 3, sizeof small[0], cmp_double);
        Sample s = compile_once(guard_n, kind, &len);
        if (s.nerrors) return 1;
        double t = s.compile_s + s.print_s, ratio = t / (double)guard_n / small[1];
        printf("compile_scaling: %ld statements, %ld instructions: compile %.3f s, emit-ir %.3f s "
               "(limit %.1f s); %.2f us per statement, %.2fx that of %ld statements (limit %.1fx)\n",
               guard_n, s.ninsts, s.compile_s, s.print_s, guard_s, 1e6 * t / (double)guard_n, ratio,
               guard_n / 10, GUARD_RATIO);
        if (t > guard_s || ratio > GUARD_RATIO) {
            fprintf(stderr, "compile_scaling: over the limit: a step super-linear in the statements or "
                            "instructions?\n");
            return 1;
        }
        return 0;
    }
    if (nsizes == 0) {
        long def[4] = {1000, 10000, 100000, 1000000};
        memcpy(sizes, def, sizeof def);
        nsizes = 4;
    }
    for (int k = 0; k < nsizes; k++)
        if (sizes[k] < 2) return usage();
    return table(sizes, nsizes, kind);
}
