/* bgnn.h - the public C API of bgnn, a compiler and runtime for binary graph neural networks.
 *
 * This is the only header a program using bgnn includes.  It needs no CUDA headers: streams
 * travel as void * (a CUstream or cudaStream_t) and device pointers as uint64_t
 * (a CUdeviceptr).  libcuda and libnvrtc are loaded with dlopen, so a program linked with
 * bgnn starts on any machine; without a GPU, a GPU context fails with BGNN_ERR_NO_DEVICE
 * and a CPU context runs the same models on the reference interpreter.
 *
 * Objects: a context (one device, or the CPU) makes models; a model (a compiled .bgnn, or a
 * loaded .cubin) makes sessions; a session binds one graph, its node features and the
 * weights, owns the device buffers, runs, and hands out the outputs.
 *
 * OWNERSHIP (the one rule): bgnn never takes ownership of a caller's buffer or pointer (host
 * arrays are copied before the call returns; a device feature array is borrowed and must
 * outlive the session's runs); every bgnn_X_create / compile / load has a bgnn_X_destroy,
 * and destroy(NULL) does nothing; destroy children (sessions, then models) before their
 * context; every returned string is borrowed and valid until the next call on the same
 * context (names: until the owning object is destroyed).
 *
 * ERRORS: every call returns a bgnn_status (outputs come last).  bgnn_status_string(s) is a
 * static description; bgnn_context_last_error(c) is the full text of the last failure on
 * that context (or on any model or session made from it): rendered diagnostics in the
 * compiler's format ("model.bgnn:12:9: error[E0203]: ...").  A context is used by one thread
 * at a time. */
#ifndef BGNN_H
#define BGNN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define BGNN_API
#elif defined(__GNUC__)
#define BGNN_API __attribute__((visibility("default")))
#else
#define BGNN_API
#endif

#define BGNN_VERSION_MAJOR 0
#define BGNN_VERSION_MINOR 1
#define BGNN_VERSION_PATCH 0
#define BGNN_VERSION_STRING "0.1.0"
/* major * 10000 + minor * 100 + patch */
#define BGNN_VERSION_NUMBER (BGNN_VERSION_MAJOR * 10000 + BGNN_VERSION_MINOR * 100 + BGNN_VERSION_PATCH)

/* The library's version ("0.1.0"); compare with BGNN_VERSION_STRING to detect a mismatch. */
BGNN_API const char *bgnn_version(void);

typedef enum bgnn_status {
    BGNN_OK = 0,
    BGNN_ERR_INVALID_ARG,    /* a NULL handle, bad size or index, or an unknown name */
    BGNN_ERR_SYNTAX,         /* the model does not parse (E01xx) */
    BGNN_ERR_TYPE,           /* types, shapes, precisions, names in the model (E02xx, E03xx) */
    BGNN_ERR_IO,             /* a file cannot be read or written, or is malformed */
    BGNN_ERR_DATA,           /* graph, features or weights do not fit the model */
    BGNN_ERR_NVRTC,          /* NVRTC missing, or the generated code failed to compile */
    BGNN_ERR_CUDA,           /* any other CUDA driver failure */
    BGNN_ERR_NO_DEVICE,      /* no driver, no device, or no such device ordinal */
    BGNN_ERR_ARCH,           /* unsupported or mismatched GPU architecture */
    BGNN_ERR_DRIVER,         /* the CUDA driver is too old */
    BGNN_ERR_MANIFEST,       /* a cubin without a manifest, or of another bgnn version */
    BGNN_ERR_NOMEM,          /* host memory */
    BGNN_ERR_DEVICE_MEMORY,  /* out of device memory (nothing is left allocated) */
    BGNN_ERR_UNSUPPORTED,    /* not possible on this target (e.g. a cubin on the CPU) */
    BGNN_ERR_STATE,          /* call order: e.g. reading an output before a run */
    BGNN_ERR_INTERNAL,       /* a bgnn bug (E9xxx); the text says where */
} bgnn_status;

/* A static English description of s ("no CUDA device"). */
BGNN_API const char *bgnn_status_string(bgnn_status s);

typedef struct bgnn_context bgnn_context;
typedef struct bgnn_model bgnn_model;
typedef struct bgnn_session bgnn_session;

/* ---- contexts ------------------------------------------------------------------------ */
typedef enum bgnn_target {
    BGNN_TARGET_AUTO = 0,    /* the GPU when one is usable, else the CPU */
    BGNN_TARGET_CPU = 1,     /* the reference interpreter (no GPU needed) */
    BGNN_TARGET_GPU = 2,
} bgnn_target;

typedef struct bgnn_context_options {
    size_t struct_size;      /* sizeof(bgnn_context_options): set by _init; lets it grow */
    bgnn_target target;      /* default AUTO */
    int device;              /* CUDA device ordinal (default 0) */
    const char *cache_dir;   /* JIT cache directory; NULL: $BGNN_CACHE_DIR, else
                                $XDG_CACHE_HOME/bgnn, else ~/.cache/bgnn */
    int disable_cache;       /* nonzero: never read or write the cache (as $BGNN_CACHE_DISABLE=1) */
    const char *arch;        /* JIT architecture "sm_XX"; NULL: the device's own */
    int fp_strict;           /* nonzero: models compile with --fp-strict: every float reduction
                                in index order from +0, no fma, no reassociating pass
                                (docs/semantics.md section 2); default 0: the compiler's
                                recorded orders.  Part of the JIT cache key. */
    const char *tune_db;     /* the tuning database `bgnnc tune` writes (docs/tuning.md): a
                                session compiles its model with the schedules it records for
                                the bound graph (JIT, cached); NULL: the GPU's own file in
                                $BGNN_TUNE_DIR, else ~/.cache/bgnn/tune; "off": none */
} bgnn_context_options;

/* Fills o with the defaults (struct_size included). */
BGNN_API void bgnn_context_options_init(bgnn_context_options *o);

/* Creates a context.  o may be NULL (defaults).  Like sqlite3_open, *out is set even when
 * the call fails (unless out is NULL or memory ran out), so that bgnn_context_last_error
 * can say why; destroy it either way. */
BGNN_API bgnn_status bgnn_context_create(const bgnn_context_options *o, bgnn_context **out);
BGNN_API void bgnn_context_destroy(bgnn_context *c);
/* The text of the last failure on c (or on its models and sessions); "" when none. */
BGNN_API const char *bgnn_context_last_error(const bgnn_context *c);
/* BGNN_TARGET_CPU or BGNN_TARGET_GPU: what AUTO chose. */
BGNN_API bgnn_target bgnn_context_target(const bgnn_context *c);
/* "NVIDIA H100 80GB HBM3 (sm_90)" or "cpu (reference interpreter)". */
BGNN_API const char *bgnn_context_device_name(const bgnn_context *c);

/* ---- models -------------------------------------------------------------------------- */
/* Compiles model source (n bytes; name is used in messages).  On the GPU: code generation,
 * then NVRTC, with cubins cached on disk (the key covers the generated source, NVRTC's
 * options and version, the arch and the bgnn version).  On the CPU: front end and passes. */
BGNN_API bgnn_status bgnn_model_compile(bgnn_context *c, const char *src, size_t n,
                                        const char *name, bgnn_model **out);
BGNN_API bgnn_status bgnn_model_compile_file(bgnn_context *c, const char *path, bgnn_model **out);
/* Loads a cubin made by `bgnnc MODEL -o model.cubin` (GPU contexts only; the plan comes from
 * the manifest inside it, so the .bgnn is not needed).  A cubin for another architecture
 * is BGNN_ERR_ARCH, one from another bgnn version BGNN_ERR_MANIFEST. */
BGNN_API bgnn_status bgnn_model_load_cubin(bgnn_context *c, const char *path, bgnn_model **out);
BGNN_API void bgnn_model_destroy(bgnn_model *m);

typedef struct bgnn_model_info {
    size_t struct_size;      /* set to sizeof(bgnn_model_info) before the call */
    const char *name;        /* model name */
    const char *arch;        /* "sm_90"; NULL on the CPU */
    double compile_ms;       /* wall time of the compile or load call */
    int cache_hit;           /* 1: the cubin came from the disk cache */
    int from_cubin;          /* 1: loaded with bgnn_model_load_cubin */
    int noutputs;
    int nkernels;            /* kernel launches per run (0 on the CPU) */
} bgnn_model_info;
BGNN_API bgnn_status bgnn_model_get_info(const bgnn_model *m, bgnn_model_info *info);
/* Name of output i (0 <= i < noutputs), or NULL. */
BGNN_API const char *bgnn_model_output_name(const bgnn_model *m, int i);
/* Writes random weights for every parameter of the model to a .safetensors file, exactly
 * as `bgnnc gen-weights MODEL --seed SEED -o PATH` does (needs the model's source: not for
 * a loaded cubin). */
BGNN_API bgnn_status bgnn_model_write_random_weights(bgnn_model *m, uint64_t seed, const char *path);

/* ---- sessions: one bound graph ------------------------------------------------------- */
BGNN_API bgnn_status bgnn_session_create(bgnn_model *m, bgnn_session **out);
BGNN_API void bgnn_session_destroy(bgnn_session *s);

/* A data directory: graph.mtx (required), features.npy, labels.npy, {train,val,test}_idx.npy,
 * graph_ptr.npy / graph_labels.npy (batches).  Sets the graph, and the features when present. */
BGNN_API bgnn_status bgnn_session_load_data(bgnn_session *s, const char *dir);
/* A graph as CSR: rowptr[n+1] (int64), col[rowptr[n]] (int32, 0 <= col < n; duplicates are
 * merged and rows sorted).  graph_ptr (ngraphs + 1 entries) splits the nodes into a batch
 * of graphs, or NULL with ngraphs = 0 for one graph.  Copied. */
BGNN_API bgnn_status bgnn_session_set_graph_csr(bgnn_session *s, int64_t n, const int64_t *rowptr,
                                                const int32_t *col, int64_t ngraphs,
                                                const int64_t *graph_ptr);
/* Node features, float32 row-major [rows, cols] (rows = the graph's nodes).  Copied. */
BGNN_API bgnn_status bgnn_session_set_features(bgnn_session *s, const float *x, int64_t rows,
                                               int64_t cols);
/* Node features from a .npy file (f32 or f64, [rows, cols]). */
BGNN_API bgnn_status bgnn_session_set_features_file(bgnn_session *s, const char *npy_path);
/* Node features already on the device (GPU contexts): a CUdeviceptr to float32 row-major
 * [rows, cols], used in place (no copy; borrowed: keep it alive while the session runs). */
BGNN_API bgnn_status bgnn_session_set_features_device(bgnn_session *s, uint64_t dptr,
                                                      int64_t rows, int64_t cols);
/* Weights: a .safetensors file, or a directory (for npy(...) parameters).  The file is read
 * at bgnn_session_prepare. */
BGNN_API bgnn_status bgnn_session_set_weights(bgnn_session *s, const char *path);

/* Serves k independent requests over the bound graph in every run (default 1): the features
 * hold k feature sets one after another ([k N, F]: request r at rows r N .. r N + N - 1), and
 * each output holds the k results in the same order ([k N, C] for node outputs, [k G, C] for
 * graph outputs; G = 1 without graph_ptr).  The graph is bound as k disjoint copies, so request
 * r's rows are, bit for bit, what a run of request r alone gives.  bgnn_session_accuracy scores
 * the first request.  Takes effect at the next prepare. */
BGNN_API bgnn_status bgnn_session_set_requests(bgnn_session *s, int64_t k);
/* Binds everything set so far and uploads it (graph arrays, features, weights; device
 * buffers for every intermediate value).  bgnn_session_run calls it when something changed;
 * call it yourself to keep that work out of a timed region. */
BGNN_API bgnn_status bgnn_session_prepare(bgnn_session *s);
/* Runs the model.  GPU: every kernel is enqueued on stream (NULL: the default stream) and the
 * call returns without waiting; reading an output waits for that stream.  CPU: runs to the end
 * (stream ignored). */
BGNN_API bgnn_status bgnn_session_run(bgnn_session *s, void *stream);
/* Runs `repeat` times (after one warm-up run) and reports the median time of one run in ms:
 * GPU: measured with CUDA events on stream (kernels only; inputs already on the device);
 * CPU: wall clock. */
BGNN_API bgnn_status bgnn_session_time(bgnn_session *s, int repeat, void *stream, double *median_ms);

typedef enum bgnn_dtype { BGNN_F32 = 0, BGNN_B1 = 1 } bgnn_dtype;
typedef struct bgnn_tensor_info {
    size_t struct_size;      /* set to sizeof(bgnn_tensor_info) before the call */
    const char *name;
    bgnn_dtype dtype;
    int rank;                /* 1 or 2 */
    int64_t dim[2];          /* dim[1] = 0 for rank 1 */
    int64_t words_per_row;   /* B1: ceil(cols / 32) uint32 words per row; F32: 0 */
    size_t bytes;            /* what bgnn_session_read_output writes */
} bgnn_tensor_info;
/* Shape of output i for the bound graph (after prepare).  Layouts: F32 row-major; B1 rows of
 * words_per_row uint32 words, column c is bit c % 32 of word c / 32 (1 = +1, 0 = -1),
 * padding bits 0. */
BGNN_API bgnn_status bgnn_session_output_info(bgnn_session *s, int i, bgnn_tensor_info *info);
BGNN_API bgnn_status bgnn_session_output_index(bgnn_session *s, const char *name, int *i);
/* Copies output i of the last run to dst (bytes >= info.bytes). */
BGNN_API bgnn_status bgnn_session_read_output(bgnn_session *s, int i, void *dst, size_t bytes);
BGNN_API bgnn_status bgnn_session_read_output_by_name(bgnn_session *s, const char *name, void *dst,
                                                      size_t bytes);
/* The device array holding output i (GPU; valid until the session is re-prepared or destroyed). */
BGNN_API bgnn_status bgnn_session_output_device_ptr(bgnn_session *s, int i, uint64_t *dptr);
/* Classification accuracy in percent of output i (argmax per row) against the labels of the
 * data directory: split "train", "val", "test", or NULL for every labelled node (graph labels
 * for a batch of graphs).  BGNN_ERR_STATE without a run; BGNN_ERR_DATA without labels. */
BGNN_API bgnn_status bgnn_session_accuracy(bgnn_session *s, int i, const char *split, double *percent);

/* ---- sessions: graphs as COO or files, weights from memory (docs/api.md) ------------- */
/* A graph as COO entries in the matrix convention: A[row[e]][col[e]] = 1 for e < nnz, i.e.
 * node row[e] aggregates from node col[e].  PyG's edge_index is (source, target): pass
 * row = edge_index[1], col = edge_index[0].  int64 ids in 0..n-1; duplicates are merged.
 * graph_ptr (ngraphs + 1 entries) as for bgnn_session_set_graph_csr.  Copied. */
BGNN_API bgnn_status bgnn_session_set_graph_coo(bgnn_session *s, int64_t n, int64_t nnz,
                                                const int64_t *row, const int64_t *col,
                                                int64_t ngraphs, const int64_t *graph_ptr);
/* A graph file: Matrix Market, an .npz of scipy.sparse.save_npz (csr/csc/coo), an edge-list
 * text ("src dst" lines) or .npy edge arrays (edge_index [2, E]; src.npy + dst.npy); the
 * format is recognised by the file's first bytes (docs/formats.md). */
BGNN_API bgnn_status bgnn_session_set_graph_file(bgnn_session *s, const char *path);
/* Weights from memory: one tensor (BGNN_F32, row-major, rank 0..4 with shape[rank]) under the
 * name a .safetensors file would give it (a PyTorch state_dict key).  Copied.  Tensors
 * accumulate (a name given again replaces its tensor) and are used instead of a weights
 * file: this call drops a path set with bgnn_session_set_weights, which in turn drops the
 * tensors set here.  Read at bgnn_session_prepare, with the same checks as a file. */
BGNN_API bgnn_status bgnn_session_set_weights_tensor(bgnn_session *s, const char *name,
                                                     bgnn_dtype dtype, int rank,
                                                     const int64_t *shape, const void *data);
/* Drops the weights set so far (a path or tensors). */
BGNN_API bgnn_status bgnn_session_clear_weights(bgnn_session *s);
/* The device array the model reads its node features from (GPU; prepares when needed): with
 * bgnn_session_set_features_device it is the caller's pointer (no copy).  Calling
 * bgnn_session_set_features_device again with the same shape only repoints the prepared
 * session's input (no new bind or upload). */
BGNN_API bgnn_status bgnn_session_input_device_ptr(bgnn_session *s, uint64_t *dptr);

#ifdef __cplusplus
}
#endif
#endif /* BGNN_H */
