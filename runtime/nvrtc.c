/* nvrtc.c - compiling generated CUDA C++ to cubins with NVRTC, loaded through dlopen.
 * Fixed options: the real architecture (so a cubin, not PTX, comes back), C++17, no FMA
 * contraction (docs/semantics.md: an fma only where an instruction records one, written as
 * __fmaf_rn), device code by default.  The program log is
 * always fetched; a failed compile reports E_NVRTC_COMPILE with the log, and with
 * $BGNN_DUMP_DIR set leaves <name>.cu (numbered) and <name>.log there for debugging. */
#include "gpu.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RTLD_NODELETE
#define RTLD_NODELETE 0
#endif

static const struct {
    const char *name;
    size_t off;
    bool optional;
} nv_syms[] = {
    {"nvrtcGetErrorString", offsetof(BgNvrtc, nvrtcGetErrorString), false},
    {"nvrtcVersion", offsetof(BgNvrtc, nvrtcVersion), false},
    {"nvrtcGetNumSupportedArchs", offsetof(BgNvrtc, nvrtcGetNumSupportedArchs), true},
    {"nvrtcGetSupportedArchs", offsetof(BgNvrtc, nvrtcGetSupportedArchs), true},
    {"nvrtcCreateProgram", offsetof(BgNvrtc, nvrtcCreateProgram), false},
    {"nvrtcDestroyProgram", offsetof(BgNvrtc, nvrtcDestroyProgram), false},
    {"nvrtcCompileProgram", offsetof(BgNvrtc, nvrtcCompileProgram), false},
    {"nvrtcGetCUBINSize", offsetof(BgNvrtc, nvrtcGetCUBINSize), false},
    {"nvrtcGetCUBIN", offsetof(BgNvrtc, nvrtcGetCUBIN), false},
    {"nvrtcGetProgramLogSize", offsetof(BgNvrtc, nvrtcGetProgramLogSize), false},
    {"nvrtcGetProgramLog", offsetof(BgNvrtc, nvrtcGetProgramLog), false},
};

static char *xstrdup(const char *s) {
    size_t n = strlen(s);
    char *p = bg_xmalloc(n + 1);
    memcpy(p, s, n + 1);
    return p;
}

static char *xprintf(const char *fmt, ...) BG_PRINTF(1, 2);
static char *xprintf(const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    char *p = bg_xmalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

static bool try_load(BgNvrtc *nv, const char *name) {
    /* NODELETE: unmapping a C++ library with live static state at dlclose is unsafe (and
     * LeakSanitizer would report its buffers); the handle is still refcounted. */
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) return false;
    for (size_t i = 0; i < sizeof nv_syms / sizeof nv_syms[0]; i++) {
        void *p = dlsym(lib, nv_syms[i].name);
        if (!p && !nv_syms[i].optional) {
            dlclose(lib);
            memset(nv, 0, sizeof *nv);
            return false;
        }
        memcpy((char *)nv + nv_syms[i].off, &p, sizeof p); /* POSIX: void* holds fn ptrs */
    }
    nv->lib = lib;
    nv->lib_name = name;
    return true;
}

bool bg_nvrtc_load(BgNvrtc *nv, BgDiagSink *d) {
    memset(nv, 0, sizeof *nv);
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                                        "/usr/local/cuda/lib64/libnvrtc.so"};
    bool ok = false;
    char *home_lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !ok; i++)
        ok = try_load(nv, names[i]);
    const char *home = getenv("CUDA_HOME");
    if (!ok && home && *home) {
        home_lib = xprintf("%s/lib64/libnvrtc.so", home);
        ok = try_load(nv, home_lib);
        if (ok) nv->lib_name = "$CUDA_HOME/lib64/libnvrtc.so";
    }
    free(home_lib);
    if (!ok) {
        bg_diag_error(d, BG_E_NVRTC,
                      "NVRTC not found: tried libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so, "
                      "$CUDA_HOME/lib64/libnvrtc.so and /usr/local/cuda/lib64/libnvrtc.so; "
                      "install the CUDA toolkit's NVRTC (12 or newer) or add its lib64 "
                      "directory to LD_LIBRARY_PATH");
        return false;
    }
    if (nv->nvrtcVersion(&nv->major, &nv->minor) != BG_NVRTC_SUCCESS) {
        nv->major = nv->minor = 0;
    }
    int n = 0;
    if (nv->nvrtcGetNumSupportedArchs && nv->nvrtcGetSupportedArchs &&
        nv->nvrtcGetNumSupportedArchs(&n) == BG_NVRTC_SUCCESS && n > 0 && n < 4096) {
        nv->archs = bg_xcalloc((size_t)n, sizeof(int));
        if (nv->nvrtcGetSupportedArchs(nv->archs) == BG_NVRTC_SUCCESS) {
            nv->narchs = n;
        } else {
            free(nv->archs);
            nv->archs = NULL;
        }
    }
    return true;
}

void bg_nvrtc_unload(BgNvrtc *nv) {
    if (!nv) return;
    if (nv->lib) dlclose(nv->lib);
    free(nv->archs);
    memset(nv, 0, sizeof *nv);
}

bool bg_nvrtc_version(int *major, int *minor) {
    BgNvrtc nv;
    BgDiagSink d;
    bg_diag_init(&d);
    bool ok = bg_nvrtc_load(&nv, &d);
    bg_diag_free(&d);
    if (!ok) return false;
    *major = nv.major;
    *minor = nv.minor;
    bg_nvrtc_unload(&nv);
    return true;
}

/* Fixed options + extras; *n set; the strings in the result are owned by the caller's
 * arch_opt (first, and the defines packed after it) and the request (the rest).
 * BGNN_NVRTC_LINEINFO=1 adds -lineinfo, so that compute-sanitizer and Nsight name the template
 * line of a generated kernel's instruction; BGNN_NVRTC_DEFINES="NAME=VALUE ..." adds
 * -DNAME=VALUE for each word, a test hook for the templates' tuning macros (tests set
 * BGNN_FBG_MIN_TILES_PER_SM=0 to run templates/bmm_fb_big.cuh on every shape).  The options are
 * part of the disk cache key. */
static const char **build_opts(const BgNvrtcReq *req, char **arch_opt, int *n) {
    const char *defs = getenv("BGNN_NVRTC_DEFINES");
    if (!defs) defs = "";
    char *arch = xprintf("--gpu-architecture=%s", req->arch ? req->arch : "");
    const size_t alen = strlen(arch) + 1, dlen = strlen(defs);
    /* arch\0, then each word of defs as -DWORD\0 (at most dlen / 2 + 1 words, 3 bytes more each) */
    *arch_opt = bg_xmalloc(alen + dlen + 3 * (dlen / 2 + 1) + 1);
    memcpy(*arch_opt, arch, alen);
    free(arch);
    int nwords = 0;
    char *p = *arch_opt + alen;
    for (const char *c = defs; *c;) {
        while (isspace((unsigned char)*c) || *c == ',') c++;
        const char *e = c;
        while (*e && !isspace((unsigned char)*e) && *e != ',') e++;
        if (e > c) {
            p += sprintf(p, "-D%.*s", (int)(e - c), c) + 1;
            nwords++;
        }
        c = e;
    }
    int nextra = req->nextra > 0 ? req->nextra : 0;
    const char **o = bg_xcalloc((size_t)(5 + nwords + nextra), sizeof *o);
    int k = 0;
    o[k++] = *arch_opt;
    o[k++] = "-std=c++17";
    o[k++] = "--fmad=false";
    o[k++] = "-default-device";
    const char *li = getenv("BGNN_NVRTC_LINEINFO");
    if (li && *li && strcmp(li, "0") != 0) o[k++] = "-lineinfo";
    const char *d = *arch_opt + alen;
    for (int i = 0; i < nwords; i++, d += strlen(d) + 1) o[k++] = d;
    for (int i = 0; i < nextra; i++)
        if (req->extra[i]) o[k++] = req->extra[i];
    *n = k;
    return o;
}

char *bg_nvrtc_options_canon(const BgNvrtcReq *req) {
    char *arch_opt;
    int n;
    const char **o = build_opts(req, &arch_opt, &n);
    size_t cap = 1;
    for (int i = 0; i < n; i++) cap += strlen(o[i]) + 1;
    cap += (size_t)(req->nheaders > 0 ? req->nheaders : 0) * (8 + 1 + 64 + 1);
    for (int i = 0; i < req->nheaders; i++)
        cap += strlen(req->headers[i].name ? req->headers[i].name : "");
    char *s = bg_xmalloc(cap), *p = s;
    for (int i = 0; i < n; i++) p += sprintf(p, "%s\n", o[i]);
    for (int i = 0; i < req->nheaders; i++) {
        const char *t = req->headers[i].text ? req->headers[i].text : "";
        char hx[65];
        bg_sha256_hex(t, strlen(t), hx);
        p += sprintf(p, "header %s %s\n", req->headers[i].name ? req->headers[i].name : "",
                     hx);
    }
    *p = '\0';
    free(arch_opt);
    free(o);
    return s;
}

/* A file-name-safe copy of the program name. */
static char *safe_name(const char *name) {
    char *s = xstrdup(name && *name ? name : "kernel");
    for (char *p = s; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            *p = '_';
    }
    if (s[0] == '.') s[0] = '_';
    return s;
}

static bool write_numbered(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    int line = 1;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        fprintf(f, "%4d | %.*s\n", line++, (int)len, p);
        p += len;
        if (*p == '\n') p++;
    }
    bool ok = !ferror(f);
    return fclose(f) == 0 && ok;
}

static bool write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    fputs(text, f);
    bool ok = !ferror(f);
    return fclose(f) == 0 && ok;
}

/* Writes <dir>/<name>.cu and <dir>/<name>.log; returns the .cu path (malloc'd) or NULL. */
static char *dump(const BgNvrtcReq *req, const char *log, BgDiagSink *d) {
    const char *dir = getenv("BGNN_DUMP_DIR");
    if (!dir || !*dir) return NULL;
    char *nm = safe_name(req->name);
    char *cu = xprintf("%s/%s.cu", dir, nm);
    char *lg = xprintf("%s/%s.log", dir, nm);
    free(nm);
    bool ok = bg_cache_mkdirs(dir);
    const char *bad = dir;
    if (ok && !(ok = write_numbered(cu, req->source ? req->source : ""))) bad = cu;
    if (ok && !(ok = write_text(lg, log ? log : ""))) bad = lg;
    if (!ok) {
        bg_diag_at(d, BG_SEV_WARNING, BG_E_WRITE, NULL, (BgLoc){0, 0},
                   "BGNN_DUMP_DIR: cannot write %s: %s", bad, strerror(errno));
        free(cu);
        cu = NULL;
    }
    free(lg);
    return cu;
}

static char *arch_list(const BgNvrtc *nv) {
    size_t cap = 1 + (size_t)nv->narchs * 16;
    char *s = bg_xmalloc(cap), *p = s;
    *p = '\0';
    for (int i = 0; i < nv->narchs; i++)
        p += snprintf(p, cap - (size_t)(p - s), "%ssm_%d", i ? ", " : "", nv->archs[i]);
    return s;
}

static const char *nv_err(const BgNvrtc *nv, BgNvrtcStatus r) {
    const char *s = nv->nvrtcGetErrorString ? nv->nvrtcGetErrorString(r) : NULL;
    return s ? s : "unknown NVRTC error";
}

bool bg_nvrtc_compile(const BgNvrtcReq *req, BgNvrtcResult *out, BgDiagSink *d) {
    memset(out, 0, sizeof *out);
    out->log = xstrdup("");
    const char *name = req->name && *req->name ? req->name : "kernel";
    int sm = 0;
    if (!bg_arch_parse(req->arch, &sm)) {
        bg_diag_error(d, BG_E_ARCH,
                      "malformed GPU architecture '%s' (expected sm_XX, e.g. sm_90)",
                      req->arch ? req->arch : "(none)");
        return false;
    }
    BgNvrtc own;
    const BgNvrtc *nv = req->nv;
    if (!nv) {
        if (!bg_nvrtc_load(&own, d)) return false;
        nv = &own;
    }
    bool ok = false;
    if (nv->narchs > 0) {
        bool found = false;
        for (int i = 0; i < nv->narchs; i++) found |= nv->archs[i] == sm;
        if (!found) {
            char *list = arch_list(nv);
            bg_diag_error(d, BG_E_ARCH,
                          "architecture %s is not supported by this NVRTC %d.%d "
                          "(supported: %s)",
                          req->arch, nv->major, nv->minor, list);
            free(list);
            goto done;
        }
    }

    int nh = req->nheaders > 0 ? req->nheaders : 0;
    const char **htext = bg_xcalloc((size_t)nh + 1, sizeof *htext);
    const char **hname = bg_xcalloc((size_t)nh + 1, sizeof *hname);
    for (int i = 0; i < nh; i++) {
        htext[i] = req->headers[i].text ? req->headers[i].text : "";
        hname[i] = req->headers[i].name ? req->headers[i].name : "";
    }
    BgNvrtcProgram prog = NULL;
    BgNvrtcStatus r = nv->nvrtcCreateProgram(&prog, req->source ? req->source : "", name,
                                             nh, htext, hname);
    free(htext);
    free(hname);
    if (r != BG_NVRTC_SUCCESS) {
        bg_diag_error(d, BG_E_NVRTC, "nvrtcCreateProgram(%s) failed: %s", name,
                      nv_err(nv, r));
        goto done;
    }
    char *arch_opt;
    int nopt;
    const char **opts = build_opts(req, &arch_opt, &nopt);
    BgNvrtcStatus cr = nv->nvrtcCompileProgram(prog, nopt, opts);
    free(arch_opt);
    free(opts);

    size_t loglen = 0;
    if (nv->nvrtcGetProgramLogSize(prog, &loglen) == BG_NVRTC_SUCCESS && loglen > 0) {
        char *log = bg_xmalloc(loglen + 1);
        if (nv->nvrtcGetProgramLog(prog, log) == BG_NVRTC_SUCCESS) {
            log[loglen] = '\0';
            free(out->log);
            out->log = log;
        } else {
            free(log);
        }
    }

    if (cr != BG_NVRTC_SUCCESS) {
        char *cu = dump(req, out->log, d);
        size_t ll = strlen(out->log);
        while (ll && (out->log[ll - 1] == '\n' || out->log[ll - 1] == '\0')) ll--;
        bg_diag_error(d, BG_E_NVRTC_COMPILE, "NVRTC failed to compile %s for %s (%s):\n%.*s",
                      name, req->arch, nv_err(nv, cr), (int)ll, out->log);
        if (cu)
            bg_diag_note_at(d, NULL, (BgLoc){0, 0}, "the generated source is in %s", cu);
        else
            bg_diag_note_at(d, NULL, (BgLoc){0, 0},
                            "set BGNN_DUMP_DIR=<dir> to keep the generated source and log");
        free(cu);
    } else {
        size_t n = 0;
        r = nv->nvrtcGetCUBINSize(prog, &n);
        if (r != BG_NVRTC_SUCCESS || n == 0) {
            bg_diag_error(d, BG_E_NVRTC, "nvrtcGetCUBINSize(%s) failed: %s", name,
                          r != BG_NVRTC_SUCCESS ? nv_err(nv, r) : "empty cubin");
        } else {
            out->cubin = bg_xmalloc(n);
            r = nv->nvrtcGetCUBIN(prog, (char *)out->cubin);
            if (r != BG_NVRTC_SUCCESS) {
                bg_diag_error(d, BG_E_NVRTC, "nvrtcGetCUBIN(%s) failed: %s", name,
                              nv_err(nv, r));
                free(out->cubin);
                out->cubin = NULL;
            } else {
                out->cubin_len = n;
                ok = true;
            }
        }
    }
    nv->nvrtcDestroyProgram(&prog);
done:
    if (nv == &own) bg_nvrtc_unload(&own);
    return ok;
}

void bg_nvrtc_result_free(BgNvrtcResult *r) {
    if (!r) return;
    free(r->cubin);
    free(r->log);
    memset(r, 0, sizeof *r);
}

/* With the toolkit's headers at hand, check our declarations against nvrtc.h. */
#if defined(BG_HAVE_CUDA_HEADERS) && BG_HAVE_CUDA_HEADERS
#include <nvrtc.h>
_Static_assert((int)NVRTC_SUCCESS == BG_NVRTC_SUCCESS, "NVRTC_SUCCESS");
_Static_assert((int)NVRTC_ERROR_COMPILATION == BG_NVRTC_ERROR_COMPILATION, "COMPILATION");
_Static_assert(sizeof(nvrtcResult) == sizeof(BgNvrtcStatus), "nvrtcResult");
_Static_assert(sizeof(nvrtcProgram) == sizeof(BgNvrtcProgram), "nvrtcProgram");
#endif
