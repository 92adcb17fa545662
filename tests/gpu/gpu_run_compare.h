/* gpu_run_compare.h - the GPU tests' check of one finished run against the CPU reference:
 * every TEMP buffer holding an IR value (f32 or b1) that the run left in memory
 * (bg_gpu_run_buf_in_memory: not a register-only value of a warp-rows group that ran in that
 * form) and every output, each compared with bg_gpu_compare (gpu_compare.h) against the
 * interpreter's value of that instruction. */
#ifndef BG_GPU_RUN_COMPARE_H
#define BG_GPU_RUN_COMPARE_H
#include "bgtest.h"
#include "gpu_compare.h"
#include "driver.h"

static inline int64_t bg_gpu_rdim(int64_t v, int64_t n, int64_t g) {
    return v == BG_DIM_N ? n : v == BG_DIM_G ? g : v;
}

/* all[i]: the interpreter's value of instruction i (bg_interp_run); res: its outputs.  Prints
 * each mismatch (model and what name the case); returns the values that differ, counts the
 * values compared in *nvals and raises *maxerr (f32 relative error). */
static inline int bg_gpu_compare_run(BgGpu *g, const BgGpuModel *gm, const BgModule *m, BgGpuRun *run,
                                     const BgTensor *all, const BgInterpResult *res, const char *model,
                                     const char *what, double *maxerr, int *nvals) {
    const BgPlan *p = gm->plan;
    BgDiagSink d;
    bg_diag_init(&d);
    int nbad = 0;
    for (int k = 0; k < p->nbufs; k++) {
        const BgPlanBuf *pb = &p->bufs[k];
        if (pb->role != BG_ROLE_TEMP || (pb->kind != BG_BUF_F32 && pb->kind != BG_BUF_B1)) continue;
        if (pb->inst < 0 || pb->inst >= m->ninsts || !all[pb->inst].data) continue;
        if (!bg_gpu_run_buf_in_memory(gm, run, k)) continue; /* held in registers only by this run */
        int64_t dim[2] = {bg_gpu_rdim(pb->dim[0], run->n, run->ngraphs), bg_gpu_rdim(pb->dim[1], run->n, run->ngraphs)};
        BgTensor t;
        if (!bg_gpu_run_read_buf(g, p, run, k, pb->rank, dim, &t, &d)) {
            CHECK(!"read buffer");
            break;
        }
        int64_t where;
        int64_t bad = bg_gpu_compare(&t, &all[pb->inst], maxerr, &where);
        (*nvals)++;
        if (bad != 0) {
            nbad++;
            CHECK(bad == 0);
            fprintf(stderr, "  %s on %s: value %%%d (%s, buffer %d) differs: %lld %s, first at element %lld\n", model,
                    what, pb->inst, bg_op_info(m->insts[pb->inst].op)->name, k, (long long)bad,
                    pb->kind == BG_BUF_B1 ? "bits" : "floats", (long long)where);
        }
        bg_tensor_free(&t);
    }
    CHECK_EQ_INT(res->noutputs, p->noutputs);
    for (int i = 0; i < p->noutputs && i < res->noutputs; i++) {
        BgTensor t;
        if (!bg_gpu_run_read_output(g, p, run, i, &t, &d)) {
            CHECK(!"read output");
            break;
        }
        int64_t where;
        int64_t bad = bg_gpu_compare(&t, &res->outputs[i], maxerr, &where);
        (*nvals)++;
        CHECK(strcmp(p->outputs[i].name, res->names[i]) == 0);
        if (bad != 0) {
            nbad++;
            CHECK(bad == 0);
            fprintf(stderr, "  %s on %s: output '%s' differs: %lld elements, first at %lld\n", model, what,
                    p->outputs[i].name, (long long)bad, (long long)where);
        }
        bg_tensor_free(&t);
    }
    if (d.nerrors) {
        char *txt = bg_diag_render(&d);
        fprintf(stderr, "%s", txt ? txt : "");
        free(txt);
    }
    bg_diag_free(&d);
    return nbad;
}

#endif
