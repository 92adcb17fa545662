/* variants.c - `bgnnc tune --variants MODEL [-o DIR]`: the type-correct precision variants of a
 * model (issue 17 point 3, BitGNN's tuning utilities; docs/tuning.md).  Every precision the
 * source spells - a layer's `mm:`, `agg:` or `add:` attribute, a low-level `bmm.`, `bspmm.` or
 * `add.` variant - is a site; each site takes the eight F/B triples, and a combination is a
 * variant when the whole model still compiles (the checker's precision rules decide: a B output
 * feeding an F input is refused, and so on).  All combinations when there are at most 8^4, else
 * those that change at most two sites.  The variants are printed (one line each: the sites'
 * precisions, how many operands are 1-bit) and, with -o, written as DIR/NAME_vNNN.bgnn, each the
 * original text with only its precisions changed; bench/variants_bench.sh runs each on a
 * dataset (accuracy with the model's weights, time on the GPU) and prints the Pareto front. */
#include "cli.h"
#include "driver.h"
#include "outguard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SITES 16

typedef struct Site {
    size_t off;   /* the three letters' offset in the source */
    char name[8]; /* "mm", "agg", "add", "bmm", "bspmm" */
} Site;

static bool is_fb3(const char *s) {
    return (s[0] == 'F' || s[0] == 'B') && (s[1] == 'F' || s[1] == 'B') && (s[2] == 'F' || s[2] == 'B') &&
           !(s[3] >= 'A' && s[3] <= 'Z') && !(s[3] >= 'a' && s[3] <= 'z') && !(s[3] >= '0' && s[3] <= '9');
}

/* The precision sites of src (comments skipped). */
static int find_sites(const char *src, size_t len, Site *out) {
    int n = 0;
    bool in_attrs = false;
    for (size_t i = 0; i + 3 < len && n < MAX_SITES; i++) {
        if (src[i] == '#') { /* a comment to the end of the line */
            while (i < len && src[i] != '\n') i++;
            continue;
        }
        if (src[i] == '"') { /* a string */
            for (i++; i < len && src[i] != '"'; i++) {}
            continue;
        }
        if (src[i] == '{') in_attrs = true;
        if (src[i] == '}') in_attrs = false;
        static const char *const keys[] = {"mm", "agg", "add"}, *const ops[] = {"bspmm.", "bmm.", "add."};
        const bool word_start = i == 0 || !((src[i - 1] >= 'a' && src[i - 1] <= 'z') || src[i - 1] == '_' ||
                                            (src[i - 1] >= '0' && src[i - 1] <= '9'));
        if (!word_start) continue;
        for (int k = 0; k < 3 && in_attrs; k++) {
            size_t kl = strlen(keys[k]);
            if (strncmp(src + i, keys[k], kl) != 0) continue;
            size_t j = i + kl;
            while (j < len && src[j] == ' ') j++;
            if (j >= len || src[j] != ':') continue;
            j++;
            while (j < len && src[j] == ' ') j++;
            if (j + 3 <= len && is_fb3(src + j)) {
                out[n].off = j;
                snprintf(out[n].name, sizeof out[n].name, "%s", keys[k]);
                n++;
                i = j + 2;
            }
            break;
        }
        for (int k = 0; k < 3 && !in_attrs && n < MAX_SITES; k++) {
            size_t kl = strlen(ops[k]);
            if (strncmp(src + i, ops[k], kl) == 0 && i + kl + 3 <= len && is_fb3(src + i + kl)) {
                out[n].off = i + kl;
                snprintf(out[n].name, sizeof out[n].name, "%.*s", (int)kl - 1, ops[k]);
                n++;
                i += kl + 2;
                break;
            }
        }
    }
    return n;
}

static void triple(int code, char out[4]) {
    for (int b = 0; b < 3; b++) out[b] = (code >> (2 - b)) & 1 ? 'B' : 'F';
    out[3] = 0;
}

static int code_of(const char *s) { return (s[0] == 'B') << 2 | (s[1] == 'B') << 1 | (s[2] == 'B'); }

static int variants_usage(const char *msg, const char *arg) {
    fprintf(stderr, "bgnnc tune --variants: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\nusage: bgnnc tune --variants MODEL.bgnn [-o DIR]\n");
    return 2;
}

int cli_cmd_variants(int argc, char **argv) {
    const char *model = NULL, *outdir = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--variants") == 0) continue;
        if (strcmp(argv[i], "-o") == 0) {
            if (++i >= argc) return variants_usage("%s needs a directory", "-o");
            outdir = argv[i];
        } else if (argv[i][0] == '-') return variants_usage("unknown option '%s'", argv[i]);
        else if (!model) model = argv[i];
        else return variants_usage("unexpected argument '%s'", argv[i]);
    }
    if (!model) return variants_usage("%s", "no model file");
    BgDiagSink d;
    bg_diag_init(&d);
    size_t len = 0;
    char *src = bg_read_file(model, &len, &d);
    if (!src) {
        char *t = bg_diag_render(&d);
        fputs(t ? t : "", stderr);
        free(t);
        bg_diag_free(&d);
        return 1;
    }
    Site sites[MAX_SITES];
    const int ns = find_sites(src, len, sites);
    int orig[MAX_SITES];
    for (int k = 0; k < ns; k++) orig[k] = code_of(src + sites[k].off);
    const char *base = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
    char stem[256];
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(base) > 5 && !strcmp(base + strlen(base) - 5, ".bgnn") ? strlen(base) - 5 : strlen(base)), base);
    if (outdir && mkdir(outdir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "bgnnc: error: cannot make directory '%s': %s\n", outdir, strerror(errno));
        free(src);
        bg_diag_free(&d);
        return 1;
    }
    const bool full = ns <= 4;
    long long total = 1;
    for (int k = 0; k < ns; k++) total *= 8;
    printf("variants of %s: %d precision sites (", model, ns);
    for (int k = 0; k < ns; k++) printf("%s%s", k ? ", " : "", sites[k].name);
    printf("), %s\n", full ? "every combination" : "combinations changing at most two sites");
    BgInputSet inputs = {0};
    bg_inputs_add(&inputs, model, "the model");
    char *text = malloc(len + 1);
    int nvalid = 0, written = 0, rc = 0;
    for (long long c = 0; c < total && rc == 0; c++) {
        int code[MAX_SITES], changed = 0;
        long long r = c;
        for (int k = ns - 1; k >= 0; k--) {
            code[k] = (int)(r % 8);
            r /= 8;
            changed += code[k] != orig[k];
        }
        if (!full && changed > 2) continue;
        memcpy(text, src, len);
        text[len] = 0;
        for (int k = 0; k < ns; k++) {
            char t[4];
            triple(code[k], t);
            memcpy(text + sites[k].off, t, 3);
        }
        BgArena *a = bg_arena_new();
        BgDiagSink q;
        bg_diag_init(&q);
        BgModule *m = bg_compile_text(a, model, text, len, NULL, &q);
        const bool ok = m != NULL && q.nerrors == 0;
        bg_diag_free(&q);
        bg_arena_free(a);
        if (!ok) continue;
        int bits = 0;
        char desc[MAX_SITES * 12] = "";
        for (int k = 0; k < ns; k++) {
            char t[4];
            triple(code[k], t);
            bits += (code[k] & 4 ? 1 : 0) + (code[k] & 2 ? 1 : 0) + (code[k] & 1 ? 1 : 0);
            snprintf(desc + strlen(desc), sizeof desc - strlen(desc), "%s%s=%s", k ? " " : "", sites[k].name, t);
        }
        printf("v%03d  %-60s  %2d of %d operands 1-bit%s\n", nvalid, desc, bits, 3 * ns, changed ? "" : "  (the model)");
        if (outdir) {
            char path[1200];
            snprintf(path, sizeof path, "%s/%s_v%03d.bgnn", outdir, stem, nvalid);
            if (bg_inputs_clobbered(&inputs, path)) { /* the model itself, named like a variant */
                fprintf(stderr, "bgnnc tune --variants: %s would overwrite the model; choose another -o DIR\n", path);
                rc = 2;
                break;
            }
            BgStrBuf sb = {0};
            bg_sb_printf(&sb, "# %s, precision variant v%03d of bgnnc tune --variants: %s\n", stem, nvalid, desc);
            bg_sb_append(&sb, text, len);
            char *body = bg_sb_take(&sb);
            if (!bg_write_file_atomic(path, body, strlen(body), &d)) rc = 1;
            else written++;
            free(body);
        }
        nvalid++;
    }
    printf("%d type-correct variants%s", nvalid, outdir ? "" : "\n");
    if (outdir) printf(", written to %s\n", outdir);
    bg_inputs_free(&inputs);
    free(text);
    free(src);
    char *t = bg_diag_render(&d);
    if (t && *t) fputs(t, stderr);
    free(t);
    bg_diag_free(&d);
    if (outdir && written != nvalid && rc == 0) rc = 1;
    return rc;
}
