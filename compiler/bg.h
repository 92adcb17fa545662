/* bg.h - the compiler's internal header: the syntax tree, the typed IR, the checker and
 * lowering, the passes and the compile driver; one section per source file, in pipeline
 * order.  The code generator has its own header (codegen/codegen.h).  The compiler sits on
 * base/ and loaders/ (for BgNorm) and never includes a runtime header (docs/architecture.md).
 *
 * Naming: internal functions are bg_<module>_<verb>, types BgCamel, constants BG_*.
 * Ownership as in base.h: compile-time objects live in a BgArena and die with it. */
#ifndef BG_H
#define BG_H

#include "base.h"
#include "loaders.h"

/* ===== ast.c, ast_print.c: the syntax tree (grammar/parser.y builds it) ============= */
typedef enum {
    BG_AST_IDENT,   /* name */
    BG_AST_NUMBER,  /* num, text */
    BG_AST_STRING,  /* text (unescaped) */
    BG_AST_CALL,    /* callee[.variant](args) {attrs} */
    BG_AST_MEMBER,  /* base.name, e.g. "conv1.weight".T */
} BgAstKind;

typedef struct BgAstExpr BgAstExpr;
typedef struct BgAstArg {
    const char *key;      /* NULL for positional, else "key: value" */
    BgLoc key_loc;
    BgAstExpr *value;
} BgAstArg;

struct BgAstExpr {
    BgAstKind kind;
    BgLoc loc;            /* whole expression */
    const char *name;     /* IDENT name; CALL callee; MEMBER member name */
    const char *variant;  /* CALL: text after the dot in bmm.FBB, or NULL */
    BgLoc name_loc;       /* CALL callee (with variant) / MEMBER name */
    const char *text;     /* NUMBER spelling; STRING contents */
    double num;
    BgAstExpr *base;      /* MEMBER */
    BgAstArg *args;       /* CALL */
    int nargs;
    BgAstArg *attrs;      /* CALL: the { key: value, ... } block (keys always set) */
    int nattrs;
    bool has_attr_block;
};

typedef struct BgAstDim {
    bool symbolic;        /* N, G, ... */
    const char *sym;
    int64_t value;
    BgLoc loc;
} BgAstDim;

typedef struct BgAstType {
    const char *dtype;    /* "f32", "b1", ... as written */
    BgLoc loc;
    BgAstDim dims[4];
    int ndims;
} BgAstType;

typedef enum {
    BG_STMT_MODEL,   /* model NAME */
    BG_STMT_GRAPH,   /* graph NAME = expr */
    BG_STMT_INPUT,   /* input NAME : type [= expr] */
    BG_STMT_PARAM,   /* param NAME : type = expr */
    BG_STMT_LET,     /* NAME = expr */
    BG_STMT_OUTPUT,  /* output [NAME =] expr */
} BgStmtKind;

typedef struct BgAstStmt {
    BgStmtKind kind;
    BgLoc loc;
    const char *name;     /* may be NULL for OUTPUT without a name */
    BgLoc name_loc;
    BgAstType type;       /* INPUT, PARAM */
    bool has_type;
    BgAstExpr *value;     /* may be NULL for INPUT */
} BgAstStmt;

typedef struct BgAst {
    const BgSource *src;
    BgAstStmt *stmts;
    int nstmts;
} BgAst;

/* grammar/parser.y: parses src; returns NULL only when nothing could be recovered.
 * Syntax errors go to d (several per run, with recovery). */
BgAst *bg_parse(BgArena *a, const BgSource *src, BgDiagSink *d);
char *bg_ast_print(const BgAst *ast); /* deterministic text, malloc'd */

/* ===== ir.c, ir_print.c, ir_verify.c: typed SSA over tensors ========================
 * One instruction defines one value; a value is named by its instruction's index
 * (BgRef).  Instructions are in definition order (operands always precede users). */
typedef enum {
#define OP(e, name, mn, mx, fl) BG_OP_##e,
#include "ops.def"
#undef OP
    BG_OP_COUNT
} BgOp;

enum { BG_OPF_LEAF = 1, BG_OPF_ELEMWISE = 2, BG_OPF_PREC = 4, BG_OPF_SINK = 8 };

typedef struct BgOpInfo {
    const char *name;
    int min_args, max_args;
    unsigned flags;
} BgOpInfo;
const BgOpInfo *bg_op_info(BgOp op);

typedef uint32_t BgRef;
#define BG_NONE ((BgRef)0xffffffffu)

typedef enum { BG_TY_F32, BG_TY_B1, BG_TY_ADJ, BG_TY_NONE } BgTyKind;
typedef struct BgType {
    BgTyKind kind;
    int rank;        /* 0 (ADJ, sinks), 1 or 2 */
    int64_t dim[2];  /* >= 0 concrete, or BG_DIM_N / BG_DIM_G */
} BgType;

typedef enum { BG_RED_SUM, BG_RED_MEAN, BG_RED_MAX } BgReduce;
/* How a BSPMM with 0/1 adjacency and b1 activations reduces +-1 values (reference-notes
 * section 4); the result is the same, the kernels differ. */
typedef enum { BG_METHOD_AUTO, BG_METHOD_IFELSE, BG_METHOD_ANDNOT, BG_METHOD_POPC2 } BgMethod;
/* Which kernel computes a bmm.BB* (the result is the same): AUTO lets the plan choose by shape
 * (codegen/plan_build.c bg_plan_bmm_tc, bg_plan_bmm_wgs), POPC the popcount kernel
 * (templates/matmul.cuh), TC the bit tensor cores by mma.sync (templates/bmm_bb_tc.cuh, sm_80
 * and later), WGMMA the warpgroup tensor cores (templates/bmm_bb_wgs.cuh: sm_90, compiled for
 * sm_90a, K a multiple of 128). */
typedef enum { BG_BMM_PATH_AUTO, BG_BMM_PATH_POPC, BG_BMM_PATH_TC, BG_BMM_PATH_WGMMA } BgBmmPath;

/* The schedule of a graph or matrix op's launch (docs/tuning.md): how its work is spread over
 * the GPU.  Every point gives the same bits (the sums keep their recorded order); only the
 * speed differs.  Zero fields are the plan's defaults, so a zeroed BgSched is the untuned plan.
 * bgnnc tune searches the points of bg_sched_space (codegen/sched.c) and stores the best in the tuning
 * database; method (BSPMM) and path (BMM) above are the space's code-level attributes. */
typedef enum {
    BG_SCHED_FB_AUTO,   /* by the uploaded features' density (BG_PLAN_ROWS_MAX_DENSITY) */
    BG_SCHED_FB_ROWS,   /* the zero-skipping row kernel (templates/bmm_fb_rows.cuh) */
    BG_SCHED_FB_TILED,  /* the tiled kernel (bmm_fb_tiled.cuh), whatever the density */
    BG_SCHED_FB_SPARSE, /* the features as CSR (bmm_fb_csr.cuh), whatever the density */
} BgSchedFb;
typedef struct BgSched {
    uint16_t block;  /* threads per block of the launch (a multiple of 32, <= 1024); 0 = 256 */
    uint8_t grid;    /* at most this many blocks per SM (coarsening: a warp or block takes
                      * several rows in turn); 0 = a block per block of work */
    uint8_t fb;      /* BgSchedFb: the kernel of a bmm.FB* of the model's input features */
    uint16_t chunk;  /* fast bit aggregation: edges per work item (32..2048); 0 = 2048 */
    int8_t group;    /* fast bit aggregation: group items of small rows: 0 = by graph size,
                      * 1 = always, -1 = never */
    uint8_t lanes;   /* bspmm_mm of at most 8 outputs: lanes a row, 8 or 16 (32 / lanes rows a
                      * warp at once: uGrapher's group size; code-level); 0 = a warp a row */
} BgSched;

typedef struct BgAttrs {
    const char *name;   /* INPUT/OUTPUT: model-level name; PARAM/PARAM_SCALE: tensor name */
    const char *file;   /* INPUT: data file; PARAM: .npy file (NULL = safetensors by name) */
    bool transposed;    /* PARAM/PARAM_SCALE: stored as [M,K] (PyTorch Linear), used as [K,M] */
    bool self_loops;    /* GRAPH */
    BgNorm norm;        /* GRAPH */
    float eps;          /* BATCHNORM, STANDARDIZE */
    BgReduce reduce;    /* READOUT */
    BgMethod method;    /* BSPMM */
    BgBmmPath path;     /* BMM (b1 x b1) */
    BgFpOrder fp;       /* float reductions (bg_inst_fp): the order pass fp-order chose; kind
                         * NONE (the zero value) reads as SEQ */
    BgSched sched;      /* BMM, BSPMM, BSPMM_MM, READOUT: the launch's schedule (sched.c) */
} BgAttrs;

/* Steps: the fused prologue / epilogue of an instruction and the chain of a THRESHOLD
 * (docs/ir.md, section 4.1).  Each step owns a fixed number of operand slots (BG_NONE for an
 * absent optional one), laid out in step order after the op's own operands.
 *   SCL        rows f32[R] | none, cols f32[C] | none   v = fl(fl(v * rows[r]) * cols[c])
 *   ADD        f32[C] (bias) or f32[R,C]                v = fl(v + b)
 *   RELU       -                                        v = v > 0 ? v : +0
 *   THRESHOLD  f32[2,C] (a THRESHOLD's table)           bit by the table (last step, B result)
 *   BATCHNORM  mean, var, gamma | none, beta | none; eps  batchnorm (a BMM's prologue on its
 *              F activation, or a step of a THRESHOLD's chain)
 *   LOG_SOFTMAX -                                       log_softmax of the row (last step of a
 *              bspmm_mm's F result of at most BG_LSM_TAIL_MAX_COLS columns: fuse-log-softmax;
 *              the warp that holds the row applies it, docs/ir.md section 4.1)
 *   CENTER     rows f32[R], cols f32[C]                 v = fl(v - fl(rows[r] * cols[c]))
 *              (fold-standardize-mm: a row mean times the weights' column sums)
 *   STANDARDIZE -; eps                                  standardize of the row (the op's
 *              operations and order; an absmean's prologue: fold-standardize-mm)
 *   ADD_SCL    x b1[R,C], rows f32[R] | none, cols f32[C] | none
 *                                                       v = fl(v + fl(fl(x[r,c] * rows[r]) * cols[c]))
 *              with x[r,c] = +-1: an add of a scl of bits (fuse-add; GIN's (1 + eps) h term),
 *              the scl's float never stored */
typedef enum {
    BG_STEP_SCL,
    BG_STEP_ADD,
    BG_STEP_RELU,
    BG_STEP_THRESHOLD,
    BG_STEP_BATCHNORM,
    BG_STEP_LOG_SOFTMAX,
    BG_STEP_CENTER,
    BG_STEP_STANDARDIZE,
    BG_STEP_ADD_SCL,
    BG_STEP_COUNT
} BgStepKind;

typedef struct BgStep {
    uint8_t kind;       /* BgStepKind */
    float eps;          /* BATCHNORM */
} BgStep;

#define BG_LSM_TAIL_MAX_COLS 32 /* a log_softmax step: the row's columns, one a lane of a warp */
#define BG_MAX_ARGS 16  /* operands of one instruction, step slots included */
#define BG_MAX_STEPS 8  /* prologue + epilogue (or chain) steps of one instruction */
/* Fusion passes keep the non-none operands of a fused instruction at or below this, so
 * that its launch fits the plan's argument limit (plan/plan.h, BG_PLAN_MAX_ARGS = 13:
 * the output, up to 5 graph arrays for an adjacency operand, the rest). */
#define BG_FUSE_MAX_OPERANDS 8

typedef struct BgInst {
    BgOp op;
    char prec[4];       /* "FBB" for BMM/BSPMM/ADD, "" otherwise */
    BgType type;        /* type of the value defined */
    BgRef args[BG_MAX_ARGS]; /* BG_NONE for an absent optional operand (SCL, BATCHNORM, steps) */
    int nargs;          /* the op's own operands, then the step slots */
    BgAttrs attrs;
    BgLoc loc;          /* model source that produced it (kept through rewrites) */
    BgStep steps[BG_MAX_STEPS]; /* [0, npro): prologue (a BSPMM_MM: its product's mm steps);
                                 * [npro, nsteps): epilogue or chain */
    uint8_t npro, nsteps;
} BgInst;

typedef struct BgModule {
    BgArena *arena;
    const BgSource *src;
    const char *name;   /* model name */
    BgInst *insts;
    int ninsts, cap;
    const char *arch;   /* target attribute, e.g. "sm_90" (NULL = none) */
    bool fused;         /* fuse-model ran: the GPU runs the whole model as one kernel */
    bool fp_strict;     /* --fp-strict: every float reduction SEQ without fma (fp-order) */
} BgModule;

BgModule *bg_module_new(BgArena *a, const BgSource *src, const char *name);
BgRef bg_ir_add(BgModule *m, BgOp op, const char *prec, BgType type, const BgRef *args,
                int nargs, BgLoc loc);
static inline BgInst *bg_ir_inst(BgModule *m, BgRef r) { return &m->insts[r]; }
BgType bg_type_make(BgTyKind k, int rank, int64_t d0, int64_t d1);
bool bg_type_eq(BgType a, BgType b);
/* "f32[N,64]", "b1[1433,64]", "adj" into buf (returns buf). */
char *bg_type_str(BgType t, char *buf, size_t n);
char *bg_ir_print(const BgModule *m); /* deterministic text, malloc'd */
/* Structural checks (operand order, arity, types, precisions); reports E9002. */
bool bg_ir_verify(const BgModule *m, BgDiagSink *d);
/* Removes instructions marked dead (keep[i] == false) and renumbers operands. */
void bg_ir_compact(BgModule *m, const bool *keep);
/* An arena array of ninsts + 1 flags, all true: bg_ir_compact's keep, for a pass to clear. */
bool *bg_ir_keep_new(BgModule *m);
/* Does some instruction of m have op `op`? */
bool bg_ir_has_op(const BgModule *m, BgOp op);
int bg_ir_use_count(const BgModule *m, BgRef r);
/* Inserts a copy of *in at index pos (later instructions move up by one, every operand
 * renumbered); in's own operands must be < pos.  Returns pos. */
BgRef bg_ir_insert(BgModule *m, int pos, const BgInst *in);
/* Every operand equal to `from` in instructions after `from` becomes `to`. */
void bg_ir_replace_uses(BgModule *m, BgRef from, BgRef to);
/* Steps (see BgStep): slots of a kind, its name in the IR text, the number of the op's own
 * operands (nargs minus the step slots), the index in args of step s's first slot, the
 * number of operands that are not none. */
int bg_step_slots(BgStepKind k);
const char *bg_step_name(BgStepKind k);
int bg_inst_nbase(const BgInst *in);
int bg_inst_step_arg(const BgInst *in, int s);
int bg_inst_noperands(const BgInst *in);
/* Appends an epilogue step with its slots; false (nothing changed) when the limits
 * (BG_MAX_STEPS, BG_MAX_ARGS) would be exceeded. */
bool bg_inst_add_step(BgInst *in, BgStepKind k, float eps, const BgRef *slots);
/* The same for a prologue step (after the existing prologue, before the epilogue). */
bool bg_inst_add_prologue(BgInst *in, BgStepKind k, float eps, const BgRef *slots);
/* The letters "PQX" of a BSPMM_MM's product bmm.PQX(x, W): the kinds of its operands x and W
 * and the aggregation's activation letter prec[0] (docs/ir.md, section 4.2); "???" when an
 * operand is missing. */
void bg_inst_mm_prec(const BgModule *m, const BgInst *in, char out[4]);
/* Whether in does a float reduction, and its order: kind NONE when it does none (bmm.BB*,
 * elementwise ops, leaves, integer +-1 aggregations over unit-factor adjacencies), else
 * attrs.fp with NONE read as SEQ (docs/semantics.md, section 2; docs/ir.md, `fp=`). */
BgFpOrder bg_inst_fp(const BgModule *m, const BgInst *in);
/* The order slots(S,16,4096) of an aggregation of bits with a float sum in a model without a
 * readout (the verifier's and the kernels' form, docs/semantics.md section 2) into *o; false
 * for any other instruction.  passes/fp_order.c, whose choice it is outside --fp-strict. */
bool bg_fp_slots_order(const BgModule *m, const BgInst *in, BgFpOrder *o);
/* Is op a float64 sum over the columns of each row (absmean, standardize, bin.center): the
 * reductions that may record lanes(32)? */
bool bg_op_row_sum(BgOp op);
/* The K of a BMM (the columns of its activation x); 0 for any other instruction. */
int64_t bg_inst_bmm_k(const BgModule *m, const BgInst *in);
/* Is in a bmm.FB* of the model's input features: its activation operand an INPUT, with no
 * prologue or a column-scale one (fold-batchnorm-mm)?  Such a product runs in seq order on
 * the row kernel, which skips zero features (fp-order; codegen/plan_build.c). */
bool bg_bmm_reads_input(const BgModule *m, const BgInst *in);
/* fuse-mm-spmm's cost rule: would the product p (a bmm feeding an aggregation) be recomputed
 * per edge (fuse_mm_spmm.c)?  aggregate-first leaves such pairs to it. */
bool bg_mm_spmm_cheap(const BgModule *m, const BgInst *p);

/* ===== sema.c: check the AST and lower it to IR ===================================== */
BgModule *bg_sema_lower(BgArena *a, const BgAst *ast, BgDiagSink *d);

/* ===== passes/: the pass table ====================================================== */
typedef bool (*BgPassFn)(BgModule *m, BgDiagSink *d);
typedef struct BgPass {
    const char *name;      /* "fuse-add" */
    const char *help;
    BgPassFn fn;
    bool in_default;       /* part of the default pipeline */
} BgPass;
const BgPass *bg_pass_table(int *n);
/* fuse_model.c: the phases of the one-kernel form.  phase[i] = phase of computing
 * instruction i (0, 1, ...), -1 for leaves, outputs and prep instructions; an instruction
 * starts a new phase when it reads a value computed in the current one (a grid-wide sync
 * separates phases).  Returns the number of phases (0 when nothing is computed). */
int bg_ir_phases(const BgModule *m, int *phase);
/* prep[i]: instruction i depends on parameters alone (PARAM / PARAM_SCALE leaves and other
 * such instructions, no N- or G-sized value): a threshold table, a folded batchnorm.  The
 * runtime computes those once when the parameters are bound (plan.h, BgPlanLaunch.prep);
 * leaves themselves count as prep when they are parameters. */
void bg_ir_prep(const BgModule *m, bool *prep);
const BgPass *bg_pass_find(const char *name);
/* Runs the named passes (NULL = default pipeline), verifying after each; calls
 * after(name, m, ud) after each one (for --print-after). */
bool bg_pass_run(BgModule *m, const char *const *names, int nnames, BgDiagSink *d,
                 void (*after)(const char *pass, const BgModule *m, void *ud), void *ud);

/* ===== compile.c: source text -> verified, optimised IR ============================= */
typedef struct BgCompileOpts {
    const char *const *passes; /* NULL = default pipeline */
    int npasses;
    void (*after)(const char *pass, const BgModule *m, void *ud);
    void *ud;
    bool fp_strict;            /* --fp-strict (docs/semantics.md, section 2) */
} BgCompileOpts;
/* Reads (if text == NULL) and parses, checks, lowers and runs passes. */
BgModule *bg_compile_file(BgArena *a, const char *path, const BgCompileOpts *o, BgDiagSink *d);
BgModule *bg_compile_text(BgArena *a, const char *name, const char *text, size_t len,
                          const BgCompileOpts *o, BgDiagSink *d);

#endif /* BG_H */
