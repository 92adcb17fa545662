/* test_wgs_nvrtc.c - the warp-specialized wgmma product (templates/bmm_bb_wgs.cuh) compiles
 * through the product's NVRTC and embedded templates (no GPU needed): for sm_90a, a plain BBB
 * (whole tiles take the permuted store and the producer's copies without zero fill) and a BBF
 * with the w rows' popcounts given, both kernels in the cubin; for sm_90 the wgmma parts are
 * left out (BGNN_TC_WGMMA 0), so the template still compiles there.  Its results are checked on
 * the GPU by the benchmark (bench/bmm_tc_bench.cu, against the popcount kernel).  Skipped (77)
 * when libnvrtc cannot be loaded. */
#include "bgtest.h"
#include "codegen.h"
#include "gpu.h"

#include <string.h>

static const char *src_a =
    "#include \"bgnn_common.cuh\"\n"
    "#include \"epilogue.cuh\"\n"
    "#include \"matmul.cuh\"\n"
    "#include \"bmm_bb_wgs.cuh\"\n"
    "#if !BGNN_TC_WGMMA\n"
    "#error \"sm_90a without wgmma\"\n"
    "#endif\n"
    "extern \"C\" __global__ void __launch_bounds__(384, 1)\n"
    "wgs_bbb(long long n, void *y, const bgnn::u32 *x, const bgnn::u32 *w) {\n"
    "    bgnn::bmm_bb_wgs<'B', 1024, 1024>(n, y, x, w, bgnn::EpEnd());\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(384, 1)\n"
    "wgs_bbf_wc(long long n, void *y, const bgnn::u32 *x, const bgnn::u32 *w, const int *wc) {\n"
    "    bgnn::bmm_bb_wgs<'F', 384, 130, true>(n, y, x, w, bgnn::EpEnd(), wc);\n"
    "}\n";

static const char *src_plain =
    "#include \"bgnn_common.cuh\"\n"
    "#include \"epilogue.cuh\"\n"
    "#include \"matmul.cuh\"\n"
    "#include \"bmm_bb_wgs.cuh\"\n"
    "#if BGNN_TC_WGMMA\n"
    "#error \"wgmma outside sm_90a\"\n"
    "#endif\n"
    "extern \"C\" __global__ void k(int *p) { *p = bgnn::WgShape<1024>::BN; }\n";

static int has_name(const unsigned char *b, size_t n, const char *name) {
    const size_t k = strlen(name);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(b + i, name, k) == 0) return 1;
    return 0;
}

int main(void) {
    BgNvrtc nv;
    BgDiagSink d;
    bg_diag_init(&d);
    if (!bg_nvrtc_load(&nv, &d)) {
        bg_diag_free(&d);
        bg_test_skip("libnvrtc cannot be loaded");
    }
    int nh = 0;
    BgNvrtcHeader *h = bg_codegen_templates(&nh);
    int found = 0;
    for (int i = 0; i < nh; i++) found += strcmp(h[i].name, "bmm_bb_wgs.cuh") == 0 || strcmp(h[i].name, "wgmma_b1.cuh") == 0;
    CHECK_EQ_INT(found, 2); /* both embedded */

    const struct {
        const char *src, *arch, *kernels[2];
    } cases[] = {{src_a, "sm_90a", {"wgs_bbb", "wgs_bbf_wc"}}, {src_plain, "sm_90", {"k", NULL}}};
    for (int c = 0; c < 2; c++) {
        BgNvrtcReq req = {.source = cases[c].src, .name = "wgs", .headers = h, .nheaders = nh,
                          .arch = cases[c].arch, .nv = &nv};
        BgNvrtcResult res;
        BgDiagSink d2;
        bg_diag_init(&d2);
        const bool ok = bg_nvrtc_compile(&req, &res, &d2);
        CHECK(ok);
        if (!ok && d2.n > 0) fprintf(stderr, "%s: %s\n", cases[c].arch, d2.items[0].msg);
        CHECK(res.cubin != NULL && res.cubin_len > 4 && memcmp(res.cubin, "\177ELF", 4) == 0);
        for (int k = 0; k < 2 && ok; k++)
            if (cases[c].kernels[k]) CHECK(has_name(res.cubin, res.cubin_len, cases[c].kernels[k]));
        if (ok) printf("%s: cubin %zu bytes\n", cases[c].arch, res.cubin_len);
        bg_nvrtc_result_free(&res);
        bg_diag_free(&d2);
    }
    free(h);
    bg_nvrtc_unload(&nv);
    bg_diag_free(&d);
    return bg_test_finish();
}
