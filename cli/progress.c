/* progress.c - progress lines for bgnnc's long steps (compiling, loading and binding a large
 * graph, timing), on stderr and only when stderr is a terminal, so that pipes, files and the
 * golden tests see nothing.  "bgnnc: loading data/cora ... 0.41 s". */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int active = -1; /* -1 unknown, 0 off, 1 on */
static bool open_line;
static struct timespec t0;

static bool on(void) {
    if (active < 0) active = isatty(STDERR_FILENO) ? 1 : 0;
    return active == 1;
}

void cli_progress(const char *fmt, ...) {
    if (!on()) return;
    if (open_line) cli_progress_done();
    va_list ap;
    va_start(ap, fmt);
    fputs("bgnnc: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" ...", stderr);
    va_end(ap);
    fflush(stderr);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    open_line = true;
}

void cli_progress_done(void) {
    if (!on() || !open_line) return;
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    fprintf(stderr, " %.2f s\n", s);
    open_line = false;
}
