/* sched_model.h - the learned schedule predictor (docs/tuning.md): decision trees that
 * tools/train_predictor.py fits to `bgnnc tune --records` and writes as text, read and applied
 * here with no Python.  For a tunable op without a record in the tuning database, the model of
 * its family ("bspmm.BBB fast": the op key's first two fields) gives its schedule from the bound
 * graph's features: either classification trees, one a knob, or boosted regression trees that
 * predict each candidate point's time (bg_sched_model_ranked).
 *
 * File (every line ends in '\n'; at most BG_SCHED_MODEL_MAX_FILE bytes):
 *   bgnn-sched-model 2                     (1: classification trees only)
 *   # gpu: NAME; ...
 *   tree FAMILY<TAB>KNOB<TAB>NODES        (KNOB: block, grid, chunk, group, fb, lanes)
 *   node ID FEATURE THRESHOLD LEFT RIGHT   ((float)x[FEATURE] <= THRESHOLD: LEFT, else RIGHT)
 *   leaf ID VALUE
 *   regress FAMILY<TAB>POINTS<TAB>TREES<TAB>RATE<TAB>INIT<TAB>MARGIN
 *   range LO0 HI0 ... LO9 HI9              (the features' range; outside it: the default)
 *   point BLOCK GRID CHUNK GROUP FB LANES  (POINTS lines: the candidates; 0 = the default)
 *   rtree NODES                            (TREES times, each followed by NODES lines:)
 *   node ID FEATURE THRESHOLD LEFT RIGHT   (FEATURE 0..BG_SCHED_MODEL_NPFEAT-1, of
 *   value ID VALUE                          bg_sched_model_point_features)
 * NODES lines follow each tree line, IDs 0..NODES-1 in order, children after their parent
 * (so a walk always ends), FEATURE 0..BG_SCHED_MODEL_NFEAT-1.  A regression's prediction for a
 * point is INIT + RATE x the leaf value of each tree in turn (scikit-learn's sum, so the order of
 * the candidates is the trainer's); the default point comes first unless another is predicted
 * below it by more than MARGIN (in log time) and the graph is inside the range.  A file that fails any check is one warning (BG_E_FORMAT,
 * "PATH:LINE: ...") and an empty model; a missing file is an empty model without one. */
#ifndef BG_SCHED_MODEL_H
#define BG_SCHED_MODEL_H

#include "loaders.h"

#define BG_SCHED_MODEL_MAX_FILE (4u << 20)
#define BG_SCHED_MODEL_NFEAT 10
#define BG_SCHED_MODEL_NKNOBS 6
/* a point's features: the graph's and op's (NFEAT), then log2 block, log2 grid, log2 chunk,
 * group, fb, log2 lanes (defaults 256, 64, 2048, -, -, 32) and log2(N x lanes / (block x grid)) */
#define BG_SCHED_MODEL_NPFEAT 17

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
 * built-in one; "off": none), else the GPU's own file beside its tuning database when it
 * exists, else the GPU's built-in one (none for a GPU without one); *source (malloc'd, NULL
 * without a model) names it. */
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
/* The features of a point (knob values in bg_sched_model_knobs order, 0 = default) at x. */
void bg_sched_model_point_features(const double x[BG_SCHED_MODEL_NFEAT], const int knobs[BG_SCHED_MODEL_NKNOBS],
                                   double out[BG_SCHED_MODEL_NPFEAT]);
/* A family with boosted regression trees: its candidate points at x, least predicted time
 * first (ties in the file's order; the default first as the file's header says), at most max of them into out; the count.  0 when the family
 * has none (its knobs come from classification trees, bg_sched_model_predict). */
int bg_sched_model_ranked(const BgSchedModel *m, const char *family, const double x[BG_SCHED_MODEL_NFEAT],
                          int (*out)[BG_SCHED_MODEL_NKNOBS], int max);
void bg_sched_model_free(BgSchedModel *m);

#endif /* BG_SCHED_MODEL_H */
