/* test_runtime.c - the runtime's CPU-testable half (no GPU needed):
 *   - the public API on the CPU target (compile, bind a CSR graph, random weights, run,
 *     outputs by index and name) agrees with bg_interp_run;
 *   - a GPU context without a device fails with BGNN_ERR_NO_DEVICE and says why (on a GPU
 *     machine: a device ordinal that does not exist);
 *   - unsupported architectures are E_ARCH;
 *   - cubin manifests: a manifest of another format version or another bgnn version is
 *     refused (E_MANIFEST), found by parsing the ELF only; truncated, garbage and mutated
 *     cubins are rejected with a message naming the file (never a crash);
 *   - the JIT cache: miss, hit, corrupt entry detected, rebuilt, hit again;
 *   - the fast aggregation's work schedule (bg_plan_schedule): split and group items.
 * The NVRTC parts skip themselves (with a note) when libnvrtc cannot be loaded. */
#include "bgtest.h"
#include "bgnn/bgnn.h"
#include "driver.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static const char tiny_src[] =
    "model tiny\n"
    "graph A = adjacency(self_loops: true, norm: sym)\n"
    "graph B = adjacency(self_loops: true, norm: none)\n"
    "input X : f32[N, 40]\n"
    "param W1 : b1[40, 33] = \"w1\".T\n"
    "param W : f32[33, 3] = \"w\"\n"
    "param b : f32[3] = \"b\"\n"
    "h = gcn_conv(X, B, W1) { mm: FBB, agg: BBB }\n"
    "y = gcn_conv(h, A, W, b) { mm: BFF, agg: FFF }\n"
    "output logits = log_softmax(y)\n"
    "output hidden = h\n";

static char tmpdir[512];

static BgModule *compile_tiny(BgArena *a, BgDiagSink *d) {
    return bg_compile_text(a, "tiny.bgnn", tiny_src, sizeof tiny_src - 1, NULL, d);
}

static void dump(BgDiagSink *d) {
    char *t = bg_diag_render(d);
    if (t && *t) fprintf(stderr, "%s", t);
    free(t);
}

/* ---- the public API on the CPU ---------------------------------------------------------- */
static void test_api_cpu(void) {
    bgnn_context_options o;
    bgnn_context_options_init(&o);
    o.target = BGNN_TARGET_CPU;
    bgnn_context *c = NULL;
    CHECK_EQ_INT(bgnn_context_create(&o, &c), BGNN_OK);
    CHECK(c && bgnn_context_target(c) == BGNN_TARGET_CPU);
    CHECK(strcmp(bgnn_version(), BGNN_VERSION_STRING) == 0);
    CHECK(strcmp(bgnn_status_string(BGNN_ERR_NO_DEVICE), "no CUDA device") == 0);

    bgnn_model *bad = NULL;
    CHECK_EQ_INT(bgnn_model_compile(c, "model x\ninput X : f32[N, 4\n", 22, "bad.bgnn", &bad), BGNN_ERR_SYNTAX);
    CHECK(bad == NULL);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "bad.bgnn:");

    bgnn_model *m = NULL;
    CHECK_EQ_INT(bgnn_model_compile(c, tiny_src, sizeof tiny_src - 1, "tiny.bgnn", &m), BGNN_OK);
    if (!m) {
        fprintf(stderr, "%s", bgnn_context_last_error(c));
        bgnn_context_destroy(c);
        return;
    }
    bgnn_model_info info = {.struct_size = sizeof info};
    CHECK_EQ_INT(bgnn_model_get_info(m, &info), BGNN_OK);
    CHECK_EQ_INT(info.noutputs, 2);
    CHECK(info.arch == NULL && strcmp(info.name, "tiny") == 0);
    CHECK(strcmp(bgnn_model_output_name(m, 0), "logits") == 0);
    CHECK(bgnn_model_output_name(m, 2) == NULL);

    char wpath[700];
    snprintf(wpath, sizeof wpath, "%s/tiny_w.safetensors", tmpdir);
    CHECK_EQ_INT(bgnn_model_write_random_weights(m, 7, wpath), BGNN_OK);
    bgnn_model *cub = NULL;
    CHECK_EQ_INT(bgnn_model_load_cubin(c, wpath, &cub), BGNN_ERR_UNSUPPORTED);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), ".bgnn source");

    /* a 50-node graph: a ring plus a hub, node 49 isolated */
    enum { N = 50, F = 40 };
    int64_t rowptr[N + 1];
    int32_t col[4 * N];
    int64_t k = 0;
    for (int i = 0; i < N; i++) {
        rowptr[i] = k;
        if (i == N - 1) continue;
        if (i > 0) col[k++] = i - 1;
        if (i < N - 2) col[k++] = i + 1;
        if (i != 0) col[k++] = 0;
    }
    rowptr[N] = k;
    float x[N * F];
    unsigned long long seed = 3;
    for (int i = 0; i < N * F; i++) x[i] = bg_test_randf(&seed);

    bgnn_session *s = NULL;
    CHECK_EQ_INT(bgnn_session_create(m, &s), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_run(s, NULL), BGNN_ERR_STATE);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "no graph bound");
    CHECK_EQ_INT(bgnn_session_set_graph_csr(s, N, rowptr, col, 0, NULL), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_set_features(s, x, N, F - 1), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_set_weights(s, wpath), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_prepare(s), BGNN_ERR_DATA); /* 39 columns for f32[N, 40] */
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "does not match input");
    CHECK_EQ_INT(bgnn_session_set_features(s, x, N, F), BGNN_OK);
    CHECK_EQ_INT(bgnn_session_run(s, NULL), BGNN_OK);
    bgnn_tensor_info ti = {.struct_size = sizeof ti};
    CHECK_EQ_INT(bgnn_session_output_info(s, 1, &ti), BGNN_OK);
    CHECK(ti.dtype == BGNN_B1 && ti.rank == 2 && ti.dim[0] == N && ti.dim[1] == 33 && ti.words_per_row == 2);
    CHECK_EQ_INT(ti.bytes, N * 2 * 4);
    int idx = -1;
    CHECK_EQ_INT(bgnn_session_output_index(s, "logits", &idx), BGNN_OK);
    CHECK_EQ_INT(idx, 0);
    CHECK_EQ_INT(bgnn_session_output_index(s, "nope", &idx), BGNN_ERR_INVALID_ARG);
    float logits[N * 3];
    CHECK_EQ_INT(bgnn_session_read_output(s, 0, logits, 10), BGNN_ERR_INVALID_ARG);
    CHECK_EQ_INT(bgnn_session_read_output_by_name(s, "logits", logits, sizeof logits), BGNN_OK);
    double med = -1;
    CHECK_EQ_INT(bgnn_session_time(s, 3, NULL, &med), BGNN_OK);
    CHECK(med >= 0);
    double acc;
    CHECK_EQ_INT(bgnn_session_accuracy(s, 0, NULL, &acc), BGNN_ERR_DATA); /* no labels */

    /* the same through the internal path */
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgModule *bm = compile_tiny(a, &d);
    BgCoo coo = {N, N, rowptr[N], bg_xcalloc(4 * N, 8), bg_xcalloc(4 * N, 8), NULL};
    for (int i = 0; i < N; i++)
        for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++) {
            coo.row[e] = i;
            coo.col[e] = col[e];
        }
    BgGraph g;
    CHECK(bg_graph_from_coo(&coo, "test", &g, &d));
    bg_coo_free(&coo);
    BgTensor ft;
    bg_tensor_alloc(&ft, BG_DT_F32, 2, N, F);
    memcpy(ft.data, x, sizeof x);
    BgBindings b;
    BgInterpResult r;
    CHECK(bm && bg_bind(bm, &g, &ft, wpath, &b, &d) && bg_interp_run(bm, &b, &r, NULL, &d));
    if (r.noutputs == 2) {
        CHECK(memcmp(r.outputs[0].data, logits, sizeof logits) == 0);
        uint32_t hb[N * 2];
        CHECK_EQ_INT(bgnn_session_read_output(s, 1, hb, sizeof hb), BGNN_OK);
        CHECK(memcmp(r.outputs[1].data, hb, sizeof hb) == 0);
    }
    dump(&d);
    bg_interp_result_free(&r);
    bg_bindings_free(&b);
    bg_tensor_free(&ft);
    bg_graph_free(&g);
    bg_diag_free(&d);
    bg_arena_free(a);

    /* bad CSR */
    int64_t badrp[3] = {0, 2, 1};
    CHECK_EQ_INT(bgnn_session_set_graph_csr(s, 2, badrp, col, 0, NULL), BGNN_ERR_DATA);
    CHECK_STR_CONTAINS(bgnn_context_last_error(c), "rowptr decreases");
    int64_t rp2[3] = {0, 1, 2};
    int32_t c2[2] = {1, 5};
    CHECK_EQ_INT(bgnn_session_set_graph_csr(s, 2, rp2, c2, 0, NULL), BGNN_ERR_DATA);
    CHECK_EQ_INT(bgnn_session_set_features_device(s, 1234, N, F), BGNN_ERR_UNSUPPORTED);

    bgnn_session_destroy(s);
    bgnn_model_destroy(m);
    bgnn_session_destroy(NULL);
    bgnn_model_destroy(NULL);
    bgnn_context_destroy(c);
    bgnn_context_destroy(NULL);
}

/* ---- no device ------------------------------------------------------------------------- */
static void test_no_device(void) {
    bgnn_context_options o;
    bgnn_context_options_init(&o);
    o.target = BGNN_TARGET_GPU;
    bgnn_context *c = NULL;
    bgnn_status s = bgnn_context_create(&o, &c);
    if (s == BGNN_OK) { /* a GPU machine: ask for a device that cannot exist */
        bgnn_context_destroy(c);
        o.device = 999;
        s = bgnn_context_create(&o, &c);
        CHECK_EQ_INT(s, BGNN_ERR_NO_DEVICE);
        CHECK_STR_CONTAINS(bgnn_context_last_error(c), "CUDA device 999 does not exist");
    } else {
        CHECK_EQ_INT(s, BGNN_ERR_NO_DEVICE);
        CHECK_STR_CONTAINS(bgnn_context_last_error(c), "error[E0601]");
        printf("no device: %s", bgnn_context_last_error(c));
    }
    bgnn_context_destroy(c);
    /* AUTO falls back to the CPU */
    o.target = BGNN_TARGET_AUTO;
    o.device = 999;
    CHECK_EQ_INT(bgnn_context_create(&o, &c), BGNN_OK);
    CHECK(bgnn_context_target(c) == BGNN_TARGET_CPU);
    bgnn_context_destroy(c);
    /* struct_size guards */
    o.struct_size = 3;
    CHECK_EQ_INT(bgnn_context_create(&o, &c), BGNN_ERR_INVALID_ARG);
    CHECK_EQ_INT(bgnn_context_create(NULL, NULL), BGNN_ERR_INVALID_ARG);
}

/* ---- cubins ------------------------------------------------------------------------------- */
/* A cubin whose manifest is the given text (compiled by NVRTC for sm_90). */
static unsigned char *fake_cubin(const BgNvrtc *nv, const char *manifest, size_t *len) {
    size_t n = strlen(manifest);
    size_t cap = n * 6 + 512;
    char *src = bg_xmalloc(cap);
    size_t o = (size_t)snprintf(src, cap,
                                "extern \"C\" __device__ const unsigned long long bgnn_manifest_len = %zuULL;\n"
                                "extern \"C\" __device__ const unsigned char bgnn_manifest[%zu] = {",
                                n, n + 1);
    for (size_t i = 0; i < n; i++) o += (size_t)snprintf(src + o, cap - o, "%u,", (unsigned char)manifest[i]);
    snprintf(src + o, cap - o, "0};\nextern \"C\" __global__ void bgnn_k0_x(long long n) {}\n");
    BgNvrtcReq req = {.source = src, .name = "fake", .arch = "sm_90", .nv = nv};
    BgNvrtcResult r;
    BgDiagSink d;
    bg_diag_init(&d);
    unsigned char *out = NULL;
    if (bg_nvrtc_compile(&req, &r, &d)) {
        out = r.cubin;
        *len = r.cubin_len;
        r.cubin = NULL;
    } else {
        dump(&d);
    }
    bg_nvrtc_result_free(&r);
    bg_diag_free(&d);
    free(src);
    return out;
}

static bool first_error_is(BgDiagSink *d, int code, const char *needle) {
    if (d->n == 0) return false;
    return d->items[0].code == code && strstr(d->items[0].msg, needle) != NULL;
}

static void test_cubins(const BgNvrtc *nv) {
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgModule *m = compile_tiny(a, &d);
    CHECK(m != NULL);
    if (!m) {
        dump(&d);
        return;
    }
    /* a real cubin of the model */
    unsigned char *real = NULL;
    size_t rlen = 0;
    CHECK(bg_jit_cubin(m, "sm_90", nv, NULL, &real, &rlen, NULL, &d));
    dump(&d);
    if (!real) {
        bg_arena_free(a);
        bg_diag_free(&d);
        return;
    }
    BgPlan *p = bg_cubin_plan(real, rlen, "tiny.cubin", a, &d);
    CHECK(p != NULL && d.nerrors == 0);
    if (p) {
        CHECK(strcmp(p->model, "tiny") == 0 && p->arch && strcmp(p->arch, "sm_90") == 0);
        CHECK_EQ_INT(p->noutputs, 2);
    }

    /* the plan's leaves: its graphs, then one spec per leaf buffer */
    if (p) {
        int *bi = bg_arena_alloc(a, sizeof(int) * (size_t)(p->nbufs + 1));
        BgLeafSpec *ls = bg_arena_alloc(a, sizeof(BgLeafSpec) * (size_t)(p->ngraphs + p->nbufs + 1));
        int nspec = bg_plan_leaf_specs(p, NULL, 0, ls, bi);
        int nleaf = 0;
        for (int b = 0; b < p->nbufs; b++) nleaf += bi[b] >= 0;
        CHECK(nspec == p->ngraphs + nleaf && nleaf >= 4);
        for (int g = 0; g < p->ngraphs; g++) CHECK(ls[g].kind == BG_LEAF_GRAPH);
    }

    /* manifest of another format version */
    size_t flen = 0;
    unsigned char *f = fake_cubin(nv, "bgnn-manifest 99\nbgnn 0.1.0\nmodel tiny\nend\n", &flen);
    CHECK(f != NULL);
    if (f) {
        BgDiagSink d2;
        bg_diag_init(&d2);
        CHECK(bg_cubin_plan(f, flen, "old.cubin", a, &d2) == NULL);
        CHECK(first_error_is(&d2, BG_E_MANIFEST, "old.cubin: manifest version 99"));
        if (d2.n) printf("%s\n", d2.items[0].msg);
        bg_diag_free(&d2);
        /* the public path names the file too */
        char path[700];
        snprintf(path, sizeof path, "%s/old.cubin", tmpdir);
        BgDiagSink d3;
        bg_diag_init(&d3);
        CHECK(bg_write_file_atomic(path, f, flen, &d3));
        bg_diag_free(&d3);
        free(f);
    }
    /* manifest of another bgnn version */
    if (p) {
        char *text = bg_manifest_write(p);
        char *v = strstr(text, "\nbgnn " BG_VERSION_STRING "\n");
        CHECK(v != NULL);
        if (v) {
            memcpy(v + 6, "9.9.9", 5); /* same length as 0.1.0 */
            f = fake_cubin(nv, text, &flen);
            if (f) {
                BgDiagSink d2;
                bg_diag_init(&d2);
                CHECK(bg_cubin_plan(f, flen, "future.cubin", a, &d2) == NULL);
                CHECK(d2.n > 0 && d2.items[0].code == BG_E_MANIFEST);
                if (d2.n) printf("%s\n", d2.items[0].msg);
                bg_diag_free(&d2);
                free(f);
            }
        }
        free(text);
    }
    /* a cubin without a manifest */
    f = NULL;
    {
        BgNvrtcReq req = {.source = "extern \"C\" __global__ void k() {}\n", .name = "plain",
                          .arch = "sm_90", .nv = nv};
        BgNvrtcResult r;
        BgDiagSink d2;
        bg_diag_init(&d2);
        if (bg_nvrtc_compile(&req, &r, &d2)) {
            CHECK(bg_cubin_plan(r.cubin, r.cubin_len, "plain.cubin", a, &d2) == NULL);
            CHECK(first_error_is(&d2, BG_E_MANIFEST, "plain.cubin: no bgnn manifest"));
        }
        bg_nvrtc_result_free(&r);
        bg_diag_free(&d2);
    }

    /* truncated and garbage files: every prefix length class, never a crash */
    size_t cuts[] = {0, 3, 4, 16, 63, 64, 65, 200, rlen / 3, rlen / 2, rlen - 100, rlen - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        BgDiagSink d2;
        bg_diag_init(&d2);
        unsigned char *cut = bg_xmalloc(cuts[i] + 1);
        memcpy(cut, real, cuts[i]);
        BgPlan *q = bg_cubin_plan(cut, cuts[i], "cut.cubin", a, &d2);
        /* a cut past every section and the symbol table may still hold the manifest; all
         * others must fail naming the file */
        if (!q) CHECK(d2.n > 0 && strncmp(d2.items[0].msg, "cut.cubin:", 10) == 0);
        else CHECK(cuts[i] >= rlen / 2);
        free(cut);
        bg_diag_free(&d2);
    }
    {
        unsigned char garbage[4096];
        unsigned long long s = 99;
        for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (unsigned char)bg_test_rand(&s);
        BgDiagSink d2;
        bg_diag_init(&d2);
        CHECK(bg_cubin_plan(garbage, sizeof garbage, "garbage.cubin", a, &d2) == NULL);
        CHECK(first_error_is(&d2, BG_E_FORMAT, "garbage.cubin: not a cubin"));
        bg_diag_free(&d2);
        memcpy(garbage, "\x7f" "ELF\x02\x01", 6); /* ELF magic, random headers */
        bg_diag_init(&d2);
        CHECK(bg_cubin_plan(garbage, sizeof garbage, "garbage.cubin", a, &d2) == NULL);
        CHECK(d2.n > 0 && strncmp(d2.items[0].msg, "garbage.cubin:", 14) == 0);
        bg_diag_free(&d2);
    }
    /* mutations of the real cubin: any result, but no crash, and a failure names the file */
    {
        unsigned long long s = 12345;
        unsigned char *mut = bg_xmalloc(rlen);
        int rejected = 0;
        for (int it = 0; it < 3000; it++) {
            memcpy(mut, real, rlen);
            int nflip = 1 + (int)(bg_test_rand(&s) % 4);
            for (int k = 0; k < nflip; k++) {
                /* bias towards the headers, where the offsets live */
                size_t pos = (bg_test_rand(&s) & 1) ? bg_test_rand(&s) % (rlen < 2048 ? rlen : 2048)
                                                    : bg_test_rand(&s) % rlen;
                mut[pos] = (unsigned char)bg_test_rand(&s);
            }
            BgArena *a2 = bg_arena_new();
            BgDiagSink d2;
            bg_diag_init(&d2);
            if (!bg_cubin_plan(mut, rlen, "mut.cubin", a2, &d2)) {
                rejected++;
                if (!(d2.n > 0 && strncmp(d2.items[0].msg, "mut.cubin", 9) == 0)) {
                    CHECK(!"a rejected cubin's message names the file");
                    if (d2.n) fprintf(stderr, "  got: %s\n", d2.items[0].msg);
                    break;
                }
            }
            bg_diag_free(&d2);
            bg_arena_free(a2);
        }
        printf("mutated cubins: %d of 3000 rejected\n", rejected);
        CHECK(rejected > 0);
        free(mut);
    }

    /* the public loader names the file for a truncated cubin (CPU context: refused first,
     * so this goes through the internal reader) */
    free(real);
    bg_diag_free(&d);
    bg_arena_free(a);
}

/* ---- architectures ------------------------------------------------------------------------ */
static void test_arch(const BgNvrtc *nv) {
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgModule *m = compile_tiny(a, &d);
    const char *bad[] = {"sm_42", "sm_999", "compute_90", "banana"};
    for (int i = 0; i < 4 && m; i++) {
        BgDiagSink d2;
        bg_diag_init(&d2);
        unsigned char *c = NULL;
        size_t len;
        CHECK(!bg_jit_cubin(m, bad[i], nv, NULL, &c, &len, NULL, &d2));
        CHECK(c == NULL);
        CHECK(d2.n > 0 && d2.items[0].code == BG_E_ARCH);
        if (d2.n) printf("--arch=%s: %s\n", bad[i], d2.items[0].msg);
        bg_diag_free(&d2);
    }
    bg_diag_free(&d);
    bg_arena_free(a);
}

/* ---- bgnn_context_options.fp_strict: the float orders of every compile in the context ---- */
/* y = x W (bmm.FFF, K = 40) on 20 rows through a CPU context; strict or default orders. */
static bool run_ff(int strict, const char *wpath, float *y) {
    static const char src[] = "model ff\ngraph A = adjacency(self_loops: true, norm: none)\n"
                              "input X : f32[N, 40]\nparam W : f32[40, 6] = \"w\"\noutput y = bmm.FFF(X, W)\n";
    enum { N = 20, F = 40 };
    bgnn_context_options o;
    bgnn_context_options_init(&o);
    o.target = BGNN_TARGET_CPU;
    o.fp_strict = strict;
    bgnn_context *c = NULL;
    bgnn_model *m = NULL;
    bgnn_session *s = NULL;
    int64_t rowptr[N + 1] = {0};
    int32_t col[1] = {0};
    float x[N * F];
    unsigned long long seed = 5;
    for (int i = 0; i < N * F; i++) x[i] = ldexpf(bg_test_randf(&seed), (int)(bg_test_rand(&seed) % 16) - 8);
    bool ok = bgnn_context_create(&o, &c) == BGNN_OK && bgnn_model_compile(c, src, sizeof src - 1, "ff.bgnn", &m) == BGNN_OK;
    if (ok && !strict) ok = bgnn_model_write_random_weights(m, 3, wpath) == BGNN_OK;
    ok = ok && bgnn_session_create(m, &s) == BGNN_OK && bgnn_session_set_graph_csr(s, N, rowptr, col, 0, NULL) == BGNN_OK &&
         bgnn_session_set_features(s, x, N, F) == BGNN_OK && bgnn_session_set_weights(s, wpath) == BGNN_OK &&
         bgnn_session_run(s, NULL) == BGNN_OK && bgnn_session_read_output(s, 0, y, sizeof(float) * N * 6) == BGNN_OK;
    if (!ok && c) fprintf(stderr, "%s\n", bgnn_context_last_error(c));
    bgnn_session_destroy(s);
    bgnn_model_destroy(m);
    bgnn_context_destroy(c);
    return ok;
}

static void test_api_fp_strict(void) {
    char wpath[700];
    snprintf(wpath, sizeof wpath, "%s/ff_w.safetensors", tmpdir);
    float yd[120], ys[120];
    CHECK(run_ff(0, wpath, yd) && run_ff(1, wpath, ys));
    int differ = 0;
    for (int i = 0; i < 120; i++) {
        differ += yd[i] != ys[i];
        CHECK(fabsf(yd[i] - ys[i]) <= 1e-5f * fmaxf(1.0f, fabsf(ys[i])));
    }
    printf("fp_strict: %d of 120 bmm.FFF outputs differ between seq and seq+fma\n", differ);
    CHECK(differ > 0); /* the option reaches the compile: strict has no fma */
}

/* ---- the JIT cache ----------------------------------------------------------------------- */
static void test_cache(const BgNvrtc *nv) {
    char dir[700];
    snprintf(dir, sizeof dir, "%s/cache", tmpdir);
    setenv("BGNN_CACHE_DIR", dir, 1);
    unsetenv("BGNN_CACHE_DISABLE");
    char *cdir = bg_cache_default_dir();
    CHECK(cdir && strcmp(cdir, dir) == 0);
    BgArena *a = bg_arena_new();
    BgDiagSink d;
    bg_diag_init(&d);
    BgModule *m = compile_tiny(a, &d);
    unsigned char *c1 = NULL, *c2 = NULL, *c3 = NULL, *c4 = NULL;
    size_t l1 = 0, l2 = 0, l3 = 0, l4 = 0;
    BgJitInfo i1, i2, i3, i4;
    CHECK(m && bg_jit_cubin(m, "sm_90", nv, cdir, &c1, &l1, &i1, &d));
    CHECK(!i1.cache_hit && !i1.cache_corrupt);
    CHECK(bg_jit_cubin(m, "sm_90", nv, cdir, &c2, &l2, &i2, &d));
    CHECK(i2.cache_hit && l1 == l2 && c1 && c2 && memcmp(c1, c2, l1) == 0);
    CHECK(strcmp(i1.key, i2.key) == 0);
    /* corrupt the entry: flip a payload byte */
    char path[800];
    snprintf(path, sizeof path, "%s/%s.cubin", cdir, i1.key);
    FILE *fp = fopen(path, "r+b");
    CHECK(fp != NULL);
    if (fp) {
        fseek(fp, BG_CACHE_HEADER_BYTES + 100, SEEK_SET);
        int ch = fgetc(fp);
        fseek(fp, BG_CACHE_HEADER_BYTES + 100, SEEK_SET);
        fputc(ch ^ 0x5a, fp);
        fclose(fp);
    }
    CHECK(bg_jit_cubin(m, "sm_90", nv, cdir, &c3, &l3, &i3, &d));
    CHECK(!i3.cache_hit && i3.cache_corrupt);
    CHECK(l3 == l1 && c3 && memcmp(c1, c3, l1) == 0);
    CHECK(bg_jit_cubin(m, "sm_90", nv, cdir, &c4, &l4, &i4, &d));
    CHECK(i4.cache_hit && !i4.cache_corrupt);
    /* a truncated entry too */
    if (truncate(path, 20) == 0) {
        free(c4);
        c4 = NULL;
        CHECK(bg_jit_cubin(m, "sm_90", nv, cdir, &c4, &l4, &i4, &d));
        CHECK(!i4.cache_hit && i4.cache_corrupt);
    }
    /* another arch is another key */
    BgJitInfo i5;
    unsigned char *c5 = NULL;
    size_t l5;
    CHECK(bg_jit_cubin(m, "sm_80", nv, cdir, &c5, &l5, &i5, &d));
    CHECK(!i5.cache_hit && strcmp(i5.key, i1.key) != 0);
    /* a --fp-strict compile is another key (the same model: the orders, the manifest differ) */
    {
        BgJitInfo is;
        unsigned char *cs = NULL;
        size_t ls = 0;
        m->fp_strict = true;
        CHECK(bg_jit_cubin(m, "sm_90", nv, cdir, &cs, &ls, &is, &d));
        CHECK(!is.cache_hit && strcmp(is.key, i1.key) != 0);
        m->fp_strict = false;
        free(cs);
    }
    /* disabled: never a hit */
    setenv("BGNN_CACHE_DISABLE", "1", 1);
    BgJitInfo i6;
    unsigned char *c6 = NULL;
    size_t l6;
    CHECK(bg_jit_cubin(m, "sm_90", nv, cdir, &c6, &l6, &i6, &d));
    CHECK(!i6.cache_hit);
    unsetenv("BGNN_CACHE_DISABLE");
    CHECK_EQ_INT(d.nerrors, 0);
    dump(&d);
    printf("cache: cold nvrtc %.1f ms, codegen %.2f ms\n", i1.nvrtc_ms, i1.codegen_ms);
    free(c1), free(c2), free(c3), free(c4), free(c5), free(c6);
    free(cdir);
    bg_diag_free(&d);
    bg_arena_free(a);
}

/* ---- bind.c / exec.c plumbing on a host-memory fake driver --------------------------------- */
/* Device memory is malloc'd host memory, so every uploaded leaf can be inspected; launches
 * are recorded.  Checks sizes and layouts for every example model on a synthetic graph. */
typedef struct FakeState {
    size_t limit;      /* cuMemAlloc fails with OUT_OF_MEMORY above this many bytes in total */
    size_t in_use;
    int live;
    int launches;
    long long last_grid;
    int coop_launches, graph_launches, captures;
    int blocks_launches; /* of the per-graph kernel (FK_BLOCKS_FN): grid (1, graphs), any block */
    unsigned blocks_gy, blocks_bx;
} FakeState;
#define FK_BLOCKS_FN ((BgCUfunction)(uintptr_t)0x91)
static FakeState fk;

static BgCUresult fk_alloc(BgCUdeviceptr *p, size_t n) {
    if (fk.in_use + n > fk.limit) return BG_CUDA_ERROR_OUT_OF_MEMORY;
    size_t *m = malloc(n + 16);
    if (!m) return BG_CUDA_ERROR_OUT_OF_MEMORY;
    m[0] = n;
    fk.in_use += n;
    fk.live++;
    *p = (BgCUdeviceptr)(uintptr_t)(m + 2);
    return 0;
}
static BgCUresult fk_free(BgCUdeviceptr p) {
    size_t *m = (size_t *)(uintptr_t)p - 2;
    fk.in_use -= m[0];
    fk.live--;
    free(m);
    return 0;
}
static BgCUresult fk_htod(BgCUdeviceptr dst, const void *src, size_t n) {
    memcpy((void *)(uintptr_t)dst, src, n);
    return 0;
}
static BgCUresult fk_dtoh(void *dst, BgCUdeviceptr src, size_t n) {
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return 0;
}
static BgCUresult fk_info(size_t *f, size_t *t) {
    *f = fk.limit - fk.in_use;
    *t = fk.limit;
    return 0;
}
static BgCUresult fk_setcur(BgCUcontext c) { (void)c; return 0; }
static BgCUresult fk_sync(void) { return 0; }
static BgCUresult fk_launch(BgCUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned smem, BgCUstream s, void **params,
                            void **extra) {
    (void)s, (void)extra;
    if (fn == FK_BLOCKS_FN) {
        fk.blocks_launches++;
        fk.blocks_gy = gy;
        fk.blocks_bx = bx;
        return gx != 1 || gy < 1 || bx % 32 || bx > 1024 || smem != 0 ? 1 : 0;
    }
    fk.launches++;
    fk.last_grid = gx;
    if (gy != 1 || gz != 1 || by != 1 || bz != 1 || smem != 0 || bx % 32 || bx > 1024 || gx < 1 ||
        *(long long *)params[0] < 0 || *(long long *)params[1] < 1)
        return 1; /* CUDA_ERROR_INVALID_VALUE */
    return 0;
}

static BgCUresult fk_memset32(BgCUdeviceptr p, unsigned v, size_t n) {
    for (size_t i = 0; i < n; i++) ((unsigned *)(uintptr_t)p)[i] = v;
    return 0;
}
static BgCUresult fk_coop(BgCUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned smem, BgCUstream s, void **params) {
    (void)fn, (void)s;
    fk.coop_launches++;
    fk.last_grid = gx;
    if (gy != 1 || gz != 1 || by != 1 || bz != 1 || smem != 0 || bx % 32 || gx < 1 ||
        *(unsigned *)(uintptr_t) * (BgCUdeviceptr *)params[2] != 0u) /* the barrier word starts at 0 */
        return 1;
    return 0;
}
static BgCUresult fk_stream_create(BgCUstream *s, unsigned f) { (void)f; *s = (BgCUstream)(uintptr_t)0x51; return 0; }
static BgCUresult fk_stream_destroy(BgCUstream s) { (void)s; return 0; }
static BgCUresult fk_begin(BgCUstream s, int mode) { (void)s, (void)mode; fk.captures++; return 0; }
static BgCUresult fk_end(BgCUstream s, BgCUgraph *gph) { (void)s; *gph = (BgCUgraph)(uintptr_t)0x61; return 0; }
static BgCUresult fk_inst(BgCUgraphExec *e, BgCUgraph gph, unsigned long long f) {
    (void)gph, (void)f;
    *e = (BgCUgraphExec)(uintptr_t)0x71;
    return 0;
}
static BgCUresult fk_glaunch(BgCUgraphExec e, BgCUstream s) { (void)e, (void)s; fk.graph_launches++; return 0; }
static BgCUresult fk_gexec_destroy(BgCUgraphExec e) { (void)e; return 0; }
static BgCUresult fk_graph_destroy(BgCUgraph gph) { (void)gph; return 0; }
static BgCUresult fk_ssync(BgCUstream st) { (void)st; return 0; }

static void fake_gpu(BgGpu *g) {
    memset(g, 0, sizeof *g);
    g->cu.lib = (void *)&fk; /* never dlclosed: bg_gpu_close is not called */
    g->cu.cuMemAlloc_v2 = fk_alloc;
    g->cu.cuMemFree_v2 = fk_free;
    g->cu.cuMemcpyHtoD_v2 = fk_htod;
    g->cu.cuMemcpyDtoH_v2 = fk_dtoh;
    g->cu.cuMemGetInfo_v2 = fk_info;
    g->cu.cuCtxSetCurrent = fk_setcur;
    g->cu.cuCtxSynchronize = fk_sync;
    g->cu.cuLaunchKernel = fk_launch;
    g->cu.cuMemsetD32_v2 = fk_memset32;
    g->cu.cuLaunchCooperativeKernel = fk_coop;
    g->cu.cuStreamCreate = fk_stream_create;
    g->cu.cuStreamDestroy = fk_stream_destroy;
    g->cu.cuStreamBeginCapture = fk_begin;
    g->cu.cuStreamEndCapture = fk_end;
    g->cu.cuGraphInstantiateWithFlags = fk_inst;
    g->cu.cuGraphLaunch = fk_glaunch;
    g->cu.cuGraphExecDestroy = fk_gexec_destroy;
    g->cu.cuGraphDestroy = fk_graph_destroy;
    g->cu.cuStreamSynchronize = fk_ssync;
    snprintf(g->name, sizeof g->name, "fake GPU");
    snprintf(g->name, sizeof g->name, "fake");
}

static void test_exec_fake(void) {
    const char *srcdir = getenv("BGNN_SOURCE_DIR") ? getenv("BGNN_SOURCE_DIR") : ".";
    static const char *models[] = {"gcn_bin", "gcn_bin_lowlevel", "gcn_fp32", "gcn_full",
                                   "mutag_gcn_bin", "sage_bin", "saint_bin", "tu/gin_bin_mutag", "tu/gcn_bin_mutag"};
    BgGpu g;
    fake_gpu(&g);
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        char mpath[700], wpath[700];
        snprintf(mpath, sizeof mpath, "%s/examples/%s.bgnn", srcdir, models[mi]);
        const char *base = strrchr(models[mi], '/') ? strrchr(models[mi], '/') + 1 : models[mi];
        snprintf(wpath, sizeof wpath, "%s/%s.safetensors", tmpdir, base);
        BgArena *a = bg_arena_new();
        BgDiagSink d;
        bg_diag_init(&d);
        BgCompileOpts lo = {0};
        static const char *const none[1] = {NULL};
        lo.passes = none;
        BgModule *lowered = bg_compile_file(a, mpath, &lo, &d);
        BgModule *m = bg_compile_file(a, mpath, NULL, &d);
        BgPlan *p = m ? bg_codegen_plan(m, "sm_90", a, &d) : NULL;
        CHECK(lowered && m && p && bg_gen_weights(lowered, 5, wpath, NULL, &d));
        if (!p) {
            dump(&d);
            bg_diag_free(&d);
            bg_arena_free(a);
            continue;
        }
        /* a 70-node graph, node 3 isolated, batched into graphs of 10 */
        int64_t n = 70;
        BgCoo coo = {n, n, 0, bg_xcalloc(400, 8), bg_xcalloc(400, 8), NULL};
        for (int64_t i = 0; i < n; i++)
            if (i != 3 && i + 1 != 3 && i + 1 < n) {
                coo.row[coo.nnz] = i, coo.col[coo.nnz++] = i + 1;
                coo.row[coo.nnz] = i + 1, coo.col[coo.nnz++] = i;
            }
        BgGraph gr;
        CHECK(bg_graph_from_coo(&coo, "fake", &gr, &d));
        bg_coo_free(&coo);
        if (p->uses_graph_ptr) {
            gr.ngraphs = 7;
            gr.graph_ptr = bg_xcalloc(8, 8);
            for (int k = 0; k <= 7; k++) gr.graph_ptr[k] = 10 * k;
        } else {
            gr.ngraphs = 1;
        }
        int64_t f = 0;
        for (int i = 0; i < m->ninsts; i++)
            if (m->insts[i].op == BG_OP_INPUT) f = m->insts[i].type.dim[1];
        BgTensor ft;
        bg_tensor_alloc(&ft, BG_DT_F32, 2, n, f);
        unsigned long long s = 5;
        for (int64_t q = 0; q < n * f; q++) ((float *)ft.data)[q] = bg_test_randf(&s);

        BgGpuModel gm;
        memset(&gm, 0, sizeof gm);
        gm.plan = p;
        BgCUfunction fns[256];
        gm.fn = fns;
        fk.limit = (size_t)1 << 40;
        BgGpuRun run;
        /* a bad BGNN_SCHED_GROUP_MIN_ROWS (model 0) or BGNN_MM_HUB_MIN (model 1) is an error naming
         * it, nothing bound */
        static const struct { const char *var, *val, *msg; } bad_env[] = {
            {"BGNN_SCHED_GROUP_MIN_ROWS", "-3", "BGNN_SCHED_GROUP_MIN_ROWS"},
            {"BGNN_MM_HUB_MIN", "4x", "BGNN_MM_HUB_MIN='4x'"}};
        if (mi < 2) {
            setenv(bad_env[mi].var, bad_env[mi].val, 1);
            CHECK(!bg_gpu_run_bind(&g, &gm, m, &gr, &ft, 0, wpath, &run, NULL, &d));
            CHECK(d.n > 0 && strstr(d.items[d.n - 1].msg, bad_env[mi].msg) != NULL);
            CHECK(fk.live == 0);
            bg_diag_free(&d);
            bg_diag_init(&d);
        }
        /* every third model: bspmm_mm's hub slots from rows of 4 edges (the default: more than 32) */
        const int64_t hub_min = mi % 3 == 1 ? 3 : -1;
        if (hub_min >= 0) setenv("BGNN_MM_HUB_MIN", "3", 1);
        else unsetenv("BGNN_MM_HUB_MIN");
        /* odd models: group items on this 70-node graph too (the default groups from 8192 rows) */
        const int64_t gmin = mi % 2 ? 1 : BG_PLAN_GROUP_MIN_ROWS;
        if (mi % 2) setenv("BGNN_SCHED_GROUP_MIN_ROWS", "1", 1);
        else unsetenv("BGNN_SCHED_GROUP_MIN_ROWS");
        bool ok = bg_gpu_run_bind(&g, &gm, m, &gr, &ft, 0, wpath, &run, NULL, &d);
        unsetenv("BGNN_SCHED_GROUP_MIN_ROWS");
        unsetenv("BGNN_MM_HUB_MIN");
        CHECK(ok);
        dump(&d);
        BgBindings b;
        CHECK(bg_bind(m, &gr, &ft, wpath, &b, &d));
        int nchecked = 0;
        for (int k = 0; ok && k < p->nbufs; k++) {
            const BgPlanBuf *pb = &p->bufs[k];
            const void *dev = (const void *)(uintptr_t)run.ptr[k];
            if (pb->role == BG_ROLE_INPUT) {
                CHECK(run.bytes[k] == bg_tensor_bytes(&ft) && memcmp(dev, ft.data, run.bytes[k]) == 0);
                nchecked++;
            } else if ((pb->role == BG_ROLE_PARAM || pb->role == BG_ROLE_PARAM_SCALE) && pb->inst >= 0) {
                const BgTensor *t = &b.leaf[pb->inst];
                if (pb->kind != BG_BUF_B1T) {
                    CHECK(run.bytes[k] == bg_tensor_bytes(t) && memcmp(dev, t->data, run.bytes[k]) == 0);
                } else {
                    const uint32_t *w = dev;
                    int64_t kk = t->dim[0], mm = t->dim[1], wd = (kk + 31) / 32, bad = 0;
                    CHECK(run.bytes[k] == (size_t)(mm * (wd + 1) * 4)); /* the bits, then each row's popcount */
                    for (int64_t c = 0; c < mm; c++) {
                        int64_t pc = 0;
                        for (int64_t r = 0; r < kk; r++) {
                            bad += bg_bit_get(t->data, t->words_per_row, r, c) != bg_bit_get(w, wd, c, r);
                            pc += bg_bit_get(t->data, t->words_per_row, r, c);
                        }
                        bad += (int64_t)w[mm * wd + c] != pc;
                    }
                    for (int64_t c = 0; c < mm; c++) /* padding bits */
                        for (int64_t r = kk; r < wd * 32; r++) bad += bg_bit_get(w, wd, c, r);
                    CHECK_EQ_INT(bad, 0);
                }
                nchecked++;
            } else if (pb->role == BG_ROLE_GRAPH) {
                const BgAdj *adj = &b.adj[p->graphs[pb->graph].inst];
                int32_t *sched = NULL;
                if (pb->garr == BG_GARR_ITEMS) { /* the schedule built from the row pointer */
                    int64_t ns = 0, ni = bg_plan_schedule(adj->rowptr, adj->n, BG_PLAN_BSPMM_CHUNK, gmin, NULL, &ns);
                    sched = calloc((size_t)(ni + 1) * 4, sizeof *sched);
                    bg_plan_schedule(adj->rowptr, adj->n, BG_PLAN_BSPMM_CHUNK, gmin, sched, &ns);
                    CHECK(run.bytes[k] == (size_t)(ni + 1) * 16);
                }
                if (pb->garr == BG_GARR_ORDER) { /* the bit aggregation's rows by length */
                    sched = calloc((size_t)(adj->n + 1) * 4, sizeof *sched);
                    CHECK(bg_plan_row_order(adj->rowptr, adj->n, bg_plan_bits_split_min(adj->nnz), sched));
                    CHECK(run.bytes[k] == (size_t)(adj->n + 1) * 16);
                }
                if (pb->garr == BG_GARR_SLOTS) { /* bspmm_mm's rows in blocks' slots, hubs first */
                    const int64_t hm = hub_min >= 0 ? hub_min : bg_plan_mm_hub_min(adj->n, adj->nnz);
                    const int64_t ns = bg_plan_mm_slots(adj->rowptr, adj->n, hm, NULL);
                    CHECK(ns >= (adj->n + 7) / 8);
                    sched = calloc((size_t)(8 * ns + 1) * 4, sizeof *sched);
                    CHECK(bg_plan_mm_slots(adj->rowptr, adj->n, hm, sched) == ns);
                    CHECK(run.bytes[k] == (size_t)(8 * ns + 1) * 16);
                }
                static const char zeros[1 << 16];
                if (pb->garr == BG_GARR_PARTIAL || pb->garr == BG_GARR_DONE) /* zeroed on the device */
                    CHECK(run.bytes[k] <= sizeof zeros);
                const void *want = pb->garr == BG_GARR_ITEMS || pb->garr == BG_GARR_ORDER || pb->garr == BG_GARR_SLOTS
                                       ? (const void *)sched
                                 : pb->garr == BG_GARR_PARTIAL || pb->garr == BG_GARR_DONE ? (const void *)zeros
                                 : pb->garr == BG_GARR_ROWPTR ? (const void *)adj->rowptr
                                 : pb->garr == BG_GARR_COL ? (const void *)adj->col
                                 : pb->garr == BG_GARR_ROWF ? (const void *)adj->rowf
                                 : pb->garr == BG_GARR_COLF ? (const void *)adj->colf : (const void *)adj->w;
                CHECK(run.bytes[k] == 0 || memcmp(dev, want, run.bytes[k]) == 0);
                free(sched);
                nchecked++;
            } else if (pb->role == BG_ROLE_GRAPH_PTR) {
                CHECK(run.bytes[k] == (size_t)(gr.ngraphs + 1) * 8);
                CHECK(((const int64_t *)dev)[gr.ngraphs] == n);
                nchecked++;
            }
        }
        /* prep launches (parameters alone) ran once at binding, never per run */
        int nprep = 0;
        for (int q = 0; q < p->nlaunches; q++) nprep += p->launches[q].prep;
        fk.launches = 0;
        run.mode = BG_EXEC_LAUNCHES;
        CHECK(ok && bg_gpu_run_launch(&g, &gm, &run, NULL, &d));
        CHECK_EQ_INT(fk.launches, p->nlaunches - nprep);
        CHECK(run.used == BG_EXEC_LAUNCHES);
        /* A CUDA graph: captured once, then one graph launch per run. */
        fk.launches = fk.graph_launches = fk.captures = 0;
        run.mode = BG_EXEC_GRAPH;
        CHECK(ok && bg_gpu_run_launch(&g, &gm, &run, NULL, &d) && bg_gpu_run_launch(&g, &gm, &run, NULL, &d));
        CHECK(fk.captures == 1 && fk.launches == p->nlaunches - nprep && fk.graph_launches == 2 &&
              run.used == BG_EXEC_GRAPH);
        if (p->blocks && p->uses_graph_ptr) {
            /* The per-graph kernel: 7 graphs of 10 nodes.  About 1,024 threads a SM over the
             * graphs, 128 to 512; with one graph a SM or fewer, at least a warp a node of the
             * largest graph (as if it had 20 nodes: 640 threads). */
            gm.blocks_fn = FK_BLOCKS_FN;
            run.use_blocks = true;
            run.blocks_pending = false;
            g.nsm = 132;
            fk.blocks_launches = fk.launches = 0;
            run.mode = BG_EXEC_LAUNCHES; /* launched plainly */
            CHECK(bg_gpu_run_launch(&g, &gm, &run, NULL, &d));
            CHECK(fk.blocks_launches == 1 && fk.blocks_gy == 7 && fk.blocks_bx == 512 && fk.launches == 0 &&
                  run.used == BG_EXEC_BLOCKS);
            run.largest_graph = 20;
            CHECK(bg_gpu_run_launch(&g, &gm, &run, NULL, &d));
            CHECK(fk.blocks_launches == 2 && fk.blocks_bx == 640);
            g.nsm = 1;
            CHECK(bg_gpu_run_launch(&g, &gm, &run, NULL, &d));
            CHECK(fk.blocks_launches == 3 && fk.blocks_bx == 160);
            run.largest_graph = 10;
            /* otherwise in a CUDA graph of its one launch: captured once, a graph launch a run */
            fk.blocks_launches = fk.graph_launches = fk.captures = 0;
            run.mode = BG_EXEC_GRAPH;
            CHECK(bg_gpu_run_launch(&g, &gm, &run, NULL, &d) && bg_gpu_run_launch(&g, &gm, &run, NULL, &d));
            CHECK(fk.captures == 1 && fk.blocks_launches == 1 && fk.graph_launches == 2 && run.blocks_graph_exec != NULL &&
                  run.used == BG_EXEC_BLOCKS);
            /* after an input swap (exec_input.c) one plain launch, then the graph again */
            run.blocks_plain = 1;
            fk.blocks_launches = fk.graph_launches = fk.captures = 0;
            CHECK(bg_gpu_run_launch(&g, &gm, &run, NULL, &d) && fk.blocks_launches == 1 && fk.graph_launches == 0);
            CHECK(bg_gpu_run_launch(&g, &gm, &run, NULL, &d) && fk.blocks_launches == 1 && fk.graph_launches == 1 &&
                  fk.captures == 0 && run.blocks_plain == 0);
            /* which values a run leaves in memory: a warp-rows group's register-only results
             * only where that group ran in the warp form, and after the per-graph kernel none of
             * the b1 results its graph stage holds in shared memory nor its graph-row values
             * (plan.h) */
            int regs_only = 0, in_stage = 0, in_rows = 0;
            BgCUfunction rgf[64] = {0};
            for (int k = 0; k < p->nbufs; k++) {
                const int gi = bg_plan_warp_group_of(p, k);
                const bool kept = bg_plan_buf_kept(p, k);
                run.used = BG_EXEC_COOP;
                CHECK(bg_gpu_run_buf_in_memory(&gm, &run, k));
                run.used = BG_EXEC_BLOCKS;
                const bool staged = bg_plan_graph_staged_buf(p, k), grow = bg_plan_graph_row_staged(p, k);
                CHECK(bg_gpu_run_buf_in_memory(&gm, &run, k) ==
                      (!staged && !grow && (kept || gi < 0 || p->rowgroups[gi].wide || p->rowgroups[gi].rows != BG_ROWS_N)));
                in_stage += staged;
                in_rows += grow;
                run.used = BG_EXEC_GRAPH;
                gm.rowgroup_fn = NULL; /* no group kernel: every launch separately */
                CHECK(bg_gpu_run_buf_in_memory(&gm, &run, k));
                gm.rowgroup_fn = p->nrowgroups <= 64 ? rgf : NULL;
                for (int q = 0; q < p->nrowgroups && q < 64; q++) rgf[q] = (BgCUfunction)(uintptr_t)(0xa0 + q);
                if (gi >= 0 && !kept && gm.rowgroup_fn) CHECK(!bg_gpu_run_buf_in_memory(&gm, &run, k));
                regs_only += !kept;
                gm.rowgroup_fn = NULL;
            }
            CHECK(regs_only > 0);
            /* GIN bin: the graph stage holds the three layers' input bits (the bin of X and two
             * bmm.BBB results), which its aggregations gather and whose bits add_scl reads */
            if (strstr(models[mi], "gin_bin")) CHECK(bg_plan_graph_stage(p, NULL, NULL) && in_stage == 3);
            /* and its readout's and the two classifier products' rows (the log_softmax is the
             * output) in shared memory for every graph */
            if (strstr(models[mi], "gin_bin")) CHECK(in_rows == 3);
            /* GCN bin declares A + I twice (normalised and 0/1): one rowptr and one col on the
             * device (plan_build.c), and so the per-graph kernel's graph stage for the TU one */
            if (strcmp(models[mi], "gcn_bin") == 0 || strcmp(models[mi], "tu/gcn_bin_mutag") == 0) {
                int nrp = 0, ncol = 0;
                for (int k = 0; k < p->nbufs; k++)
                    if (p->bufs[k].role == BG_ROLE_GRAPH) {
                        nrp += p->bufs[k].garr == BG_GARR_ROWPTR;
                        ncol += p->bufs[k].garr == BG_GARR_COL;
                    }
                CHECK(p->ngraphs == 2 && nrp == 1 && ncol == 1);
            }
            if (strcmp(models[mi], "tu/gcn_bin_mutag") == 0) CHECK(bg_plan_graph_stage(p, NULL, NULL) && in_rows == 3);
            gm.blocks_fn = NULL;
            run.use_blocks = false;
            g.nsm = 0;
        }
        if (p->fused) {
            /* The fused kernel: a cooperative grid no larger than the device holds ... */
            gm.fused_fn = (BgCUfunction)(uintptr_t)0x81;
            gm.fused_grid_max = 3;
            fk.coop_launches = 0;
            run.mode = BG_EXEC_COOP;
            CHECK(bg_gpu_run_launch(&g, &gm, &run, NULL, &d));
            CHECK(fk.coop_launches == 1 && fk.last_grid >= 1 && fk.last_grid <= 3 && run.used == BG_EXEC_COOP);
            /* ... a grid too large for the device: an explicit coop request is an error naming
             * both sizes, auto falls back to the graph of separate kernels and says why. */
            run.coop_grid_request = 4;
            int nd = d.n;
            CHECK(!bg_gpu_run_launch(&g, &gm, &run, NULL, &d));
            CHECK(d.n == nd + 1 && strstr(d.items[nd].msg, "4 blocks exceeds the 3 blocks") != NULL);
            CHECK(fk.coop_launches == 1);
            run.mode = BG_EXEC_AUTO;
            fk.graph_launches = 0;
            CHECK(bg_gpu_run_launch(&g, &gm, &run, NULL, &d));
            CHECK(run.used == BG_EXEC_GRAPH && fk.graph_launches == 1 && fk.coop_launches == 1);
            CHECK(strstr(run.coop_refused, "exceeds") != NULL);
            gm.fused_fn = NULL;
            gm.fused_grid_max = 0;
        }
        for (int i = 0; ok && i < p->noutputs; i++) {
            BgTensor t;
            CHECK(bg_gpu_run_read_output(&g, p, &run, i, &t, &d));
            bg_tensor_free(&t);
        }
        int live = fk.live;
        bg_gpu_run_free(&g, &run);
        CHECK_EQ_INT(fk.live, 0);
        printf("fake device: %-18s %d buffers (%d live), %d leaves checked, %d launches\n", models[mi],
               p->nbufs, live, nchecked, p->nlaunches);
        /* out of memory half way: everything given back, the message says how much */
        fk.limit = 50000;
        bool oom = false;
        CHECK(!bg_gpu_run_bind(&g, &gm, m, &gr, &ft, 0, wpath, &run, &oom, &d));
        CHECK(oom && fk.live == 0 && fk.in_use == 0);
        CHECK(d.n > 0 && strstr(d.items[d.n - 1].msg, "out of device memory") != NULL);
        if (mi == 0) { /* weights from memory, features borrowed in place, then repointed */
            bg_diag_free(&d);
            bg_diag_init(&d);
            fk.limit = (size_t)1 << 40;
            BgSafetensors st;
            CHECK(bg_safetensors_load(wpath, &st, &d));
            BgTensor shape = ft;
            shape.data = NULL;
            BgTensor ft2;
            bg_tensor_alloc(&ft2, BG_DT_F32, 2, n, f);
            BgCUdeviceptr x1 = (BgCUdeviceptr)(uintptr_t)ft.data, x2 = (BgCUdeviceptr)(uintptr_t)ft2.data;
            CHECK(bg_gpu_run_bind_mem(&g, &gm, m, &gr, &shape, x1, NULL, &st, &run, NULL, &d));
            CHECK(bg_gpu_run_input_ptr(p, &run) == x1);
            run.mode = BG_EXEC_GRAPH;
            fk.captures = 0;
            CHECK(bg_gpu_run_launch(&g, &gm, &run, NULL, &d) && fk.captures == 1);
            bg_gpu_run_set_input(&g, p, &run, x2);
            CHECK(bg_gpu_run_input_ptr(p, &run) == x2 && run.graph_exec == NULL && run.blocks_plain == 1);
            CHECK(bg_gpu_run_launch(&g, &gm, &run, NULL, &d) && fk.captures == 2);
            bg_gpu_run_set_input(&g, p, &run, x2); /* same pointer: the graph stays */
            CHECK(run.graph_exec != NULL);
            for (int k = 0; k < p->nbufs; k++) /* the parameters are the file's */
                if ((p->bufs[k].role == BG_ROLE_PARAM || p->bufs[k].role == BG_ROLE_PARAM_SCALE) && p->bufs[k].inst >= 0 &&
                    p->bufs[k].kind != BG_BUF_B1T)
                    CHECK(memcmp((const void *)(uintptr_t)run.ptr[k], b.leaf[p->bufs[k].inst].data, run.bytes[k]) == 0);
            bg_gpu_run_free(&g, &run);
            CHECK_EQ_INT(fk.live, 0);
            /* a tensor missing from memory names the in-memory source */
            free(st.t[0].name);
            st.t[0].name = strdup("renamed");
            CHECK(!bg_gpu_run_bind_mem(&g, &gm, m, &gr, &shape, x1, NULL, &st, &run, NULL, &d));
            CHECK(d.n > 0 && strstr(d.items[0].msg, "(in-memory weights)") == NULL); /* st.path: the file */
            CHECK(d.n > 0 && strstr(d.items[0].msg, "no tensor named") != NULL);
            bg_safetensors_free(&st);
            bg_tensor_free(&ft2);
        }
        bg_bindings_free(&b);
        bg_tensor_free(&ft);
        bg_graph_free(&gr);
        bg_diag_free(&d);
        bg_arena_free(a);
    }
}

/* bg_plan_schedule: every row covered exactly once, by one whole-row item, by its split
 * items (chunks in order, one split slot per split row) or by its aligned block's group item
 * (only on graphs of >= gmin rows, gmin > 0, only blocks whose rows all have <=
 * BG_PLAN_GROUP_SMALL edges; the last block may be short). */
static void check_schedule(const int64_t *rowptr, int64_t n, int64_t gmin, bool expect_groups) {
    int64_t ns = 0, ni = bg_plan_schedule(rowptr, n, BG_PLAN_BSPMM_CHUNK, gmin, NULL, &ns);
    CHECK(ni >= 0);
    int32_t *it = calloc((size_t)(ni + 1) * 4, sizeof *it);
    int64_t ns2 = 0;
    CHECK_EQ_INT(bg_plan_schedule(rowptr, n, BG_PLAN_BSPMM_CHUNK, gmin, it, &ns2), ni);
    CHECK(it[0] == ni && it[1] == ns && it[2] == BG_PLAN_BSPMM_CHUNK && ns2 == ns);
    int64_t *seen = calloc((size_t)n + 1, sizeof *seen), groups = 0, bad = 0, slots = 0;
    for (int64_t k = 1; k <= ni; k++) {
        const int32_t *q = it + 4 * k;
        if (q[2] == 0) { /* group item */
            groups++;
            bad += q[0] % BG_PLAN_GROUP != 0 || q[1] < 1 || q[1] > BG_PLAN_GROUP || q[3] != -1 ||
                   (q[1] < BG_PLAN_GROUP && q[0] + q[1] != n);
            for (int64_t r = q[0]; r < q[0] + q[1] && r < n; r++) {
                seen[r]++;
                bad += rowptr[r + 1] - rowptr[r] > BG_PLAN_GROUP_SMALL;
            }
            continue;
        }
        int64_t d = rowptr[q[0] + 1] - rowptr[q[0]];
        int64_t nk = d <= BG_PLAN_BSPMM_CHUNK ? 1 : (d + BG_PLAN_BSPMM_CHUNK - 1) / BG_PLAN_BSPMM_CHUNK;
        bad += q[2] != nk || q[1] < 0 || q[1] >= nk || (nk > 1) != (q[3] >= 0);
        if (q[1] == nk - 1) seen[q[0]]++;
        if (nk > 1 && q[1] == 0) bad += q[3] != slots++;
    }
    for (int64_t r = 0; r < n; r++) bad += seen[r] != 1;
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(slots, ns);
    CHECK(expect_groups ? groups > 0 : groups == 0);
    free(seen);
    free(it);
}

static void test_schedule(void) {
    /* rows of degree 13 i % 90 (some blocks all small, some not), three long rows split into
     * chunks, N not a multiple of the group size */
    for (int64_t n = 1; n <= 20003; n += n < 100 ? 37 : 9973) {
        int64_t *rp = calloc((size_t)n + 1, sizeof *rp);
        for (int64_t i = 0; i < n; i++) {
            int64_t d = i == 5 ? 5000 : i == n / 2 ? 2049 : i == n - 1 ? 4096 : (i * 13) % 90;
            if (i % 200 < 120) d = d % 30; /* long runs of small rows */
            if (i >= 400 && i < 416) d = i < 408 ? BG_PLAN_GROUP_SMALL + 1 : BG_PLAN_GROUP_SMALL; /* the limit */
            rp[i + 1] = rp[i] + d;
        }
        check_schedule(rp, n, BG_PLAN_GROUP_MIN_ROWS, n >= BG_PLAN_GROUP_MIN_ROWS);
        check_schedule(rp, n, 0, false); /* BGNN_SCHED_GROUP_MIN_ROWS=0: never */
        check_schedule(rp, n, 1, true);  /* every graph */
        free(rp);
    }
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "%s/test_runtime.%ld", bg_test_tmpdir(), (long)getpid());
    mkdir(tmpdir, 0755);
    test_api_cpu();
    test_api_fp_strict();
    test_no_device();
    test_exec_fake();
    test_schedule();
    BgNvrtc nv;
    BgDiagSink d;
    bg_diag_init(&d);
    if (bg_nvrtc_load(&nv, &d)) {
        test_cubins(&nv);
        test_arch(&nv);
        test_cache(&nv);
        bg_nvrtc_unload(&nv);
    } else {
        printf("[note] NVRTC cannot be loaded: cubin, arch and cache tests skipped\n");
    }
    bg_diag_free(&d);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return bg_test_finish();
}
