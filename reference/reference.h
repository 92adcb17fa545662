/* reference.h - the CPU reference: binding a module's leaves (bind.c), the interpreter that
 * runs every IR instruction on host tensors (interp.c) and the op-level reference functions
 * (ref_ops.h).  It is the oracle every GPU result is tested against and the fallback where no
 * GPU exists.  It sits over the IR (compiler/bg.h) and the loaders; the runtime does not use
 * it. */
#ifndef BG_REFERENCE_H
#define BG_REFERENCE_H

#include "bg.h"
#include "ref_ops.h"

/* ===== bind.c: resolve a module's leaves against data and weights ==================== */
typedef struct BgBindings {
    const BgModule *m;
    BgGraph *graph;        /* borrowed */
    BgAdj *adj;            /* per inst (only GRAPH entries set), owned */
    BgTensor *leaf;        /* per inst: INPUT, PARAM, PARAM_SCALE values, owned */
    int64_t n;             /* nodes */
    int64_t ngraphs;
} BgBindings;
/* The leaf description of an instruction (kind NONE for a computed value). */
BgLeafSpec bg_leaf_spec_of(const BgModule *m, const BgInst *in);
/* weights: a .safetensors file or a directory (for npy(...) sources; relative npy paths
 * resolve against the directory of the safetensors file or the directory itself). */
bool bg_bind(const BgModule *m, BgGraph *g, const BgTensor *features, const char *weights,
             BgBindings *out, BgDiagSink *d);
/* The same with named tensors from wmem (borrowed; its path names it in messages) instead of
 * a weights file; npy(...) parameters then resolve against the working directory. */
bool bg_bind_mem(const BgModule *m, BgGraph *g, const BgTensor *features, const char *weights,
                 const BgSafetensors *wmem, BgBindings *out, BgDiagSink *d);
void bg_bindings_free(BgBindings *b);

/* ===== interp.c: the CPU reference interpreter ======================================= */
typedef struct BgInterpResult {
    int noutputs;
    const char **names;    /* borrowed from the module */
    BgTensor *outputs;     /* owned */
} BgInterpResult;
/* Runs every instruction; values[i] may be requested (for tests) via keep_all. */
bool bg_interp_run(const BgModule *m, const BgBindings *b, BgInterpResult *out,
                   BgTensor **all_values, BgDiagSink *d);
void bg_interp_result_free(BgInterpResult *r);
void bg_interp_values_free(const BgModule *m, BgTensor *values);

#endif /* BG_REFERENCE_H */
