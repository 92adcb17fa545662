/* fuzz_tune.c - the two files the schedule tuner leaves for later runs, on hostile bytes: the
 * tuning database (plan/tune_db.c: bg_tune_db_load, every record then found by its key) and the
 * learned predictor's trees (plan/sched_model.c: bg_sched_model_load, every tree walked at a
 * few feature vectors: a walk must end inside the tree; a regression's candidates ranked). */
#include "fuzz_util.h"
#include "sched_model.h"
#include "tune_db.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = bg_fuzz_write("tune", ".tune", data, size);
    BgDiagSink d;
    bg_diag_init(&d);
    BgTuneDb *db = bg_tune_db_load(path, &d);
    for (int i = 0; db && i < bg_tune_db_count(db); i++) {
        const BgTuneRecord *r = bg_tune_db_at(db, i);
        if (bg_tune_db_find(db, r->op, r->graph) != r) abort(); /* keys are unique */
    }
    bg_tune_db_free(db);
    BgSchedModel *m = bg_sched_model_load(path, &d);
    static const char *const knobs[] = {"block", "grid", "chunk", "group", "fb"};
    static const double xs[3][BG_SCHED_MODEL_NFEAT] = {{0}, {11.4, 13.4, 3.9, 1.3, 7.4, 10, 0.001, 0.3},
                                                       {30, 35, 1e6, 1e3, 30, -1e9, 1, 1e300}};
    for (int k = 0; k < 5; k++)
        for (int j = 0; j < 3; j++) {
            int v;
            (void)bg_sched_model_predict(m, "bspmm.BBB fast", knobs[k], xs[j], &v);
        }
    int ranked[8][BG_SCHED_MODEL_NKNOBS];
    for (int j = 0; j < 3; j++)
        if (bg_sched_model_ranked(m, "bspmm.BBB fast", xs[j], ranked, 8) > 8) abort();
    bg_sched_model_free(m);
    free(bg_diag_render(&d));
    bg_diag_free(&d);
    return 0;
}
