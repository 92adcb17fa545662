/* fuzz_model.c - the whole front end on hostile model text: lexer + parser (with recovery),
 * AST printer, checker + lowering, IR verifier, the default pass pipeline (and, separately,
 * no passes, and the whole pass table: the passes not in the default pipeline too), the IR
 * printer and the CUDA code generator (plan + manifest + kernels as text).
 * Any diagnostics are fine; crashes, leaks and undefined behaviour are not. */
#include "codegen.h"
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* Parse alone (the AST printer sees whatever recovery built). */
    {
        BgArena *a = bg_arena_new();
        BgDiagSink d;
        bg_diag_init(&d);
        if (size <= (1u << 20)) {
            BgSource *src = bg_source_new(a, "fuzz.bgnn", (const char *)data, size);
            BgAst *ast = bg_parse(a, src, &d);
            if (ast && d.nerrors == 0) free(bg_ast_print(ast));
        }
        free(bg_diag_render(&d));
        bg_diag_free(&d);
        bg_arena_free(a);
    }
    /* The compile pipeline, three times: the default passes, lowered IR only (bgnnc
     * --passes=), and every pass of the table in order, each through the IR printer and the
     * code generator. */
    int np;
    const BgPass *table = bg_pass_table(&np);
    const char *all[64];
    for (int k = 0; k < np && k < 64; k++) all[k] = table[k].name;
    for (int mode = 0; mode < 3; mode++) {
        int lowered = mode == 1;
        BgArena *a = bg_arena_new();
        BgDiagSink d;
        bg_diag_init(&d);
        static const char *const none[1] = {NULL};
        BgCompileOpts o = {0};
        if (lowered) o.passes = none;
        if (mode == 2) {
            o.passes = all;
            o.npasses = np < 64 ? np : 64;
        }
        BgModule *m = bg_compile_text(a, "fuzz.bgnn", (const char *)data, size, &o, &d);
        if (m) {
            free(bg_ir_print(m));
            free(bg_codegen_cuda(m, lowered ? "sm_80" : "sm_90", &d));
        }
        free(bg_diag_render(&d));
        bg_diag_free(&d);
        bg_arena_free(a);
    }
    return 0;
}
