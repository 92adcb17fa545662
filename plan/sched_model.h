/* sched_model.h - the learned schedule predictor (docs/tuning.md): decision trees that
 * tools/train_predictor.py fits to `bgnnc tune --records` and writes as text, read and applied
 * here with no Python.  For a tunable op without a record in the tuning database, the trees of
 * its family ("bspmm.BBB fast": the op key's first two fields) give each knob's value from the
 * bound graph's features.
 *
 * File (every line ends in '\n'; at most BG_SCHED_MODEL_MAX_FILE bytes):
 *   bgnn-sched-model 1
 *   # gpu: NAME; ...
 *   tree FAMILY<TAB>KNOB<TAB>NODES        (KNOB: block, grid, chunk, group, fb)
 *   node ID FEATURE THRESHOLD LEFT RIGHT   (x[FEATURE] <= THRESHOLD: LEFT, else RIGHT)
 *   leaf ID VALUE
 * NODES lines follow each tree line, IDs 0..NODES-1 in order, children after their parent
 * (so a walk always ends), FEATURE 0..BG_SCHED_MODEL_NFEAT-1.  A file that fails any check is
 * one warning (BG_E_FORMAT, "PATH:LINE: ...") and an empty model; a missing file is an empty
 * model without one. */
#ifndef BG_SCHED_MODEL_H
#define BG_SCHED_MODEL_H

#include "loaders.h"

#define BG_SCHED_MODEL_MAX_FILE (4u << 20)
#define BG_SCHED_MODEL_NFEAT 8

typedef struct BgSchedModel BgSchedModel;

/* The model file of a GPU beside its tuning database: "<dir>/<gpu>_sm<NN>.model" (dir as
 * bg_tune_db_path); malloc'd, NULL as bg_tune_db_path. */
char *bg_sched_model_path(const char *dir, const char *gpu_name, int sm);
BgSchedModel *bg_sched_model_load(const char *path, BgDiagSink *d);
int bg_sched_model_ntrees(const BgSchedModel *m);
/* The feature vector of a graph, as tools/train_predictor.py computes it from the records:
 * log2 N, log2 entries, mean degree, its cv, log2(1 + largest degree), skewness, hub
 * fraction, span. */
void bg_sched_model_features(const BgGraphFeatures *f, double x[BG_SCHED_MODEL_NFEAT]);
/* The tree of (family, knob) at x: true and *value, or false when the model has no such tree. */
bool bg_sched_model_predict(const BgSchedModel *m, const char *family, const char *knob,
                            const double x[BG_SCHED_MODEL_NFEAT], int *value);
void bg_sched_model_free(BgSchedModel *m);

#endif /* BG_SCHED_MODEL_H */
