/* cli.h - helpers of the command-line driver (bgnnc.c) that print: the JSON report of
 * `bgnnc run --json` (run_json.c) and progress lines on a terminal (progress.c).  Built into
 * bgnnc only (cmake/bgnn_cli.cmake); the library never prints. */
#ifndef BG_CLI_H
#define BG_CLI_H

#include <stdbool.h>

/* What one `bgnnc run` found; strings borrowed.  Accuracy: up to 4 (name, percent) pairs
 * ("train", "val", "test"; or "all"; or "graphs"), none when no labels match an output. */
typedef struct CliRunReport {
    const char *model, *model_file, *target, *device, *data, *graph_file, *output, *logits_file;
    long long nodes, edges, graphs;
    int nacc;
    const char *acc_name[4];
    double acc[4];
    double compile_ms, load_ms, bind_ms, inference_ms;
    long repeat;
    /* gpu */
    int cache_hit;            /* -1: not a JIT compile */
    const char *exec;         /* "coop", "graph", "launches" */
    int kernels;
    long long coop_grid;
    const char *coop_refused; /* "" when not refused */
    double auto_ms[2];        /* fused, graph: the auto measurement (0: none) */
    int nprofile;
    const char *const *profile_kernel;
    const double *profile_ms;
} CliRunReport;

/* bgnnc tune (tune.c): the whole command, argv as main's; returns the exit status. */
int cli_cmd_tune(int argc, char **argv);
/* bgnnc tune --variants (variants.c): the model's type-correct precision variants. */
int cli_cmd_variants(int argc, char **argv);

/* The report as one JSON object on stdout ("ok": true). */
void cli_print_run_json(const CliRunReport *r);
/* On failure with --json: {"ok": false, "exit_status": rc, "error": text} on stdout. */
void cli_print_error_json(int rc, const char *text);

/* Progress on stderr, only when it is a terminal: cli_progress("loading %s", dir) prints
 * "bgnnc: loading DIR ..." and cli_progress_done() the elapsed time on the same line. */
void cli_progress(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void cli_progress_done(void);

#endif
