/* fuzz_model.c - the whole front end on hostile model text: lexer + parser (with recovery),
 * AST printer, checker + lowering, IR verifier, the default pass pipeline (and, separately,
 * no passes), the IR printer and the CUDA code generator (plan + manifest + kernels as text).
 * Any diagnostics are fine; crashes, leaks and undefined behaviour are not. */
#include "bg.h"
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
    /* The compile pipeline, twice: the default passes, then lowered IR only (bgnnc --passes=),
     * each through the IR printer and the code generator. */
    for (int lowered = 0; lowered < 2; lowered++) {
        BgArena *a = bg_arena_new();
        BgDiagSink d;
        bg_diag_init(&d);
        static const char *const none[1] = {NULL};
        BgCompileOpts o = {0};
        if (lowered) o.passes = none;
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
