/* sched_model.h - the learned schedule predictor (docs/tuning.md): decision trees that
 * tools/train_predictor.py fits to `bgnnc tune --records` and writes as text, read and applied
 * here with no Python.  For a tunable op without a record in the tuning database, the trees of
 * its family ("bspmm.BBB fast": the op key's first two fields) give each knob's value from the
 * bound graph's features.
 *
 * File (every line ends in '\n'; at most BG_SCHED_MODEL_MAX_FILE bytes):
 *   bgnn-sched-model 1
 *   # gpu: NAME; ...
 *   tree FAMILY<TAB>KNOB<TAB>NODES        (KNOB: block, grid, chunk, group, fb, lanes)
 *   node ID FEATURE THRESHOLD LEFT RIGHT   ((float)x[FEATURE] <= THRESHOLD: LEFT, else RIGHT)
 *   leaf ID VALUE
 * NODES lines follow each tree line, IDs 0..NODES-1 in order, children after their parent
 * (so a walk always ends), FEATURE 0..BG_SCHED_MODEL_NFEAT-1.  A file that fails any check is
 * one warning (BG_E_FORMAT, "PATH:LINE: ...") and an empty model; a missing file is an empty
 * model without one. */
#ifndef BG_SCHED_MODEL_H
#define BG_SCHED_MODEL_H

#include "loaders.h"

#define BG_SCHED_MODEL_MAX_FILE (4u << 20)
#define BG_SCHED_MODEL_NFEAT 10
#define BG_SCHED_MODEL_NKNOBS 6

/* The knobs a model predicts, in the order of their trees' values (bg_sched_apply_model). */
extern const char *const bg_sched_model_knobs[BG_SCHED_MODEL_NKNOBS];

typedef struct BgSchedModel BgSchedModel;

/* The model file of a GPU beside its tuning database: "<dir>/<gpu>_sm<NN>.model" (dir as
 * bg_tune_db_path); malloc'd, NULL as bg_tune_db_path. */
char *bg_sched_model_path(const char *dir, const char *gpu_name, int sm);
BgSchedModel *bg_sched_model_load(const char *path, BgDiagSink *d);
/* The built-in model of a GPU (plan/models/<gpu>_sm<NN>.model, embedded at build time), an empty
 * one when the repository has none for it; *name (malloc'd, NULL when none) says which. */
BgSchedModel *bg_sched_model_builtin(const char *gpu_name, int sm, char **name);
/* The model bgnnc run and sessions use: path when given (BGNN_SCHED_MODEL; "builtin": the
 * built-in one), else the GPU's own file beside its tuning database when it exists, else none
 * (an empty model: the built-in one is opt-in while it slows some hub-heavy graphs,
 * docs/tuning.md); *source (malloc'd, NULL without a model) names it. */
BgSchedModel *bg_sched_model_for_gpu(const char *path, const char *gpu_name, int sm, char **source, BgDiagSink *d);
int bg_sched_model_ntrees(const BgSchedModel *m);
/* The feature vector of a graph, as tools/train_predictor.py computes it from the records:
 * log2 N, log2 entries, mean degree, its cv, log2(1 + largest degree), skewness, hub
 * fraction, span; then the op's widths (bg_sched_model_widths), 0 here. */
void bg_sched_model_features(const BgGraphFeatures *f, double x[BG_SCHED_MODEL_NFEAT]);
/* The op's widths into x[8] and x[9]: log2 of the op key's k= and c= fields (0 where absent). */
void bg_sched_model_widths(const char *op_key, double x[BG_SCHED_MODEL_NFEAT]);
/* The tree of (family, knob) at x: true and *value, or false when the model has no such tree. */
bool bg_sched_model_predict(const BgSchedModel *m, const char *family, const char *knob,
                            const double x[BG_SCHED_MODEL_NFEAT], int *value);
void bg_sched_model_free(BgSchedModel *m);

#endif /* BG_SCHED_MODEL_H */
