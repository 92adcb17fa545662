/* loaders.h - the data layer: file formats (Matrix Market, edge lists, .npz, .npy,
 * safetensors), CSR graphs
 * and the adjacencies derived from them, data directories, and the binding of a model's
 * leaves (graphs, node features, weights) to host values.  Both the CPU reference
 * (reference/) and the GPU runtime (runtime/) use it; it knows neither, nor the IR: leaves
 * arrive as BgLeafSpec descriptions.  One section per source file of loaders/. */
#ifndef BG_LOADERS_H
#define BG_LOADERS_H

#include "base.h"

/* ===== io_npy.c, io_mtx.c, io_safetensors.c: file loaders ============================
 * Every loader checks each size and offset against the real file length before use,
 * checks limits before allocating, and on failure reports one diagnostic whose message
 * starts with the file name and names the field or line ("cora/graph.mtx:3: ...",
 * "w.npy: header field 'shape': ...") and returns false with *out untouched. */
typedef struct BgNpy {
    BgDType dtype;   /* after conversion: F32 (from f32/f64), I64 (from i32/i64/u8/bool), or I32 */
    int rank;        /* 1 or 2 */
    int64_t dim[2];
    void *data;      /* malloc'd */
} BgNpy;
typedef enum { BG_NPY_AS_F32, BG_NPY_AS_I64 } BgNpyWant;
/* Reads .npy versions 1-3; dtypes <f4 <f8 <i4 <i8 |u1 |b1 (little-endian, C order or
 * 1-D/Fortran-trivial); converts to the wanted type (floats to integers: error). */
bool bg_npy_load(const char *path, BgNpyWant want, BgNpy *out, BgDiagSink *d);
/* The same from len bytes in memory (an .npz member); name stands for the file in messages. */
bool bg_npy_load_mem(const void *bytes, size_t len, const char *name, BgNpyWant want, BgNpy *out,
                     BgDiagSink *d);
/* Writes f32 (rank 1 or 2) as .npy v1.0 atomically (temp file + rename). */
bool bg_npy_save_f32(const char *path, const float *data, int rank, const int64_t *dim,
                     BgDiagSink *d);
void bg_npy_free(BgNpy *n);

typedef struct BgCoo {
    int64_t nrows, ncols, nnz;
    int64_t *row, *col;   /* 0-based; symmetric files are expanded to both triangles */
    double *val;          /* NULL for pattern files */
} BgCoo;
/* Matrix Market "matrix coordinate" with field pattern|real|integer and symmetry
 * general|symmetric.  Duplicate entries are kept (the graph builder merges them). */
bool bg_mtx_load(const char *path, BgCoo *out, BgDiagSink *d);
void bg_coo_free(BgCoo *c);

typedef struct BgStTensor {
    char *name;
    BgDType dtype;      /* always F32 after conversion (F32, F16, BF16) or I64 (I32, I64) */
    int rank;           /* 0..4 as stored */
    int64_t dim[4];
    int64_t numel;
    void *data;         /* converted, malloc'd */
} BgStTensor;
typedef struct BgSafetensors {
    char *path;
    BgStTensor *t;
    int n;
} BgSafetensors;
bool bg_safetensors_load(const char *path, BgSafetensors *out, BgDiagSink *d);
const BgStTensor *bg_safetensors_find(const BgSafetensors *s, const char *name);
/* Writes F32 tensors atomically. names[i], data[i] with rank[i] dims dim[i][]. */
bool bg_safetensors_save_f32(const char *path, int n, const char *const *names,
                             const float *const *data, const int *rank,
                             const int64_t (*dim)[4], BgDiagSink *d);
void bg_safetensors_free(BgSafetensors *s);

/* ===== graph.c: CSR graphs and derived adjacencies =================================== */
typedef struct BgGraph {
    int64_t n, nnz;
    int64_t *rowptr;    /* n+1 */
    int32_t *col;       /* nnz, ascending within a row, no duplicates */
    int64_t ngraphs;    /* batched graphs: graph g owns nodes graph_ptr[g]..graph_ptr[g+1]-1 */
    int64_t *graph_ptr; /* ngraphs+1, or NULL (then one graph of all nodes) */
} BgGraph;

/* graph_features.c: what a graph's best schedule depends on (docs/tuning.md). */
#define BG_GRAPH_HUB_DEGREE 64 /* a row with more entries is a hub */
typedef struct BgGraphFeatures {
    int64_t n, nnz, ngraphs, deg_max;
    double deg_mean, deg_std, deg_cv, deg_skew; /* entries per row: mean, deviation, cv, skewness */
    double hub_frac, iso_frac;                  /* rows over BG_GRAPH_HUB_DEGREE entries; empty rows */
    double span;                                /* mean |row - col| of an entry, over n */
    double nodes_per_graph;                     /* n / ngraphs */
} BgGraphFeatures;
void bg_graph_features(const BgGraph *g, BgGraphFeatures *f);
/* The tuning database's graph key: log2 of the nodes and of 1 + the mean degree to half an
 * octave, log2 of 1 + the largest degree and of the graphs in the batch to an octave:
 * "n=11.5 d=2.5 dmax=8 g=0" (Cora). */
void bg_graph_key(const BgGraphFeatures *f, char *buf, size_t len);

typedef enum { BG_NORM_NONE, BG_NORM_SYM, BG_NORM_MEAN } BgNorm;

/* The adjacency a GRAPH instruction denotes: the pattern (plus the diagonal when
 * self_loops), and positive factor vectors: sym r = c = d^-1/2; mean r = 1/d, c = 1;
 * none r = c = 1; d = entries in the row (self loop counted); d = 0 gives r = c = 0.
 * w (per edge, CSR order) = fl(r_i * c_j), used by adjacency-F variants. */
typedef struct BgAdj {
    int64_t n, nnz;
    int64_t *rowptr;
    int32_t *col;
    float *rowf, *colf; /* n each */
    float *w;           /* nnz */
    bool self_loops;
    BgNorm norm;
} BgAdj;

/* Builds a CSR graph from COO: checks square, indices in range, merges duplicates,
 * sorts columns.  what names the file for messages. */
bool bg_graph_from_coo(const BgCoo *c, const char *what, BgGraph *out, BgDiagSink *d);
bool bg_adj_build(const BgGraph *g, bool self_loops, BgNorm norm, BgAdj *out);
void bg_graph_free(BgGraph *g);
void bg_adj_free(BgAdj *a);
const char *bg_norm_name(BgNorm n);

/* ===== io_edgelist.c, io_zip.c, io_npz.c, graph_load.c: more graph formats ===========
 * docs/formats.md.  Edge lists and .npy edge arrays follow PyG: an edge (src, dst) is a
 * message from src to dst, the entry A[dst][src] (the transpose of Matrix Market's "i j"). */
/* Text, one "src dst [weight]" per line (0-based; '#' / '%' comments).  A comment
 * "# nodes: N" states the node count (*n_stated true), else it is the largest id + 1. */
bool bg_edgelist_load(const char *path, BgCoo *out, bool *n_stated, BgDiagSink *d);
/* edge_index [2, E] (dst_path NULL) or the 1-D pair path (sources) / dst_path (targets);
 * node count the largest id + 1. */
bool bg_edge_npy_load(const char *path, const char *dst_path, BgCoo *out, BgDiagSink *d);

typedef struct BgZipEntry {
    char *name;
    uint64_t offset;      /* of its local header */
    uint64_t csize, usize;
    uint32_t crc;
    int method;           /* 0 stored, 8 deflate */
    bool encrypted;
} BgZipEntry;
typedef struct BgZip {
    char *path;
    FILE *f;
    uint64_t size;        /* bytes before the central directory (where member data may lie) */
    BgZipEntry *e;
    int n;
} BgZip;
/* Reads the central directory (zip64 included). */
bool bg_zip_open(const char *path, BgZip *z, BgDiagSink *d);
const BgZipEntry *bg_zip_find(const BgZip *z, const char *name);
/* A member's bytes, malloc'd (stored, or deflate when built with zlib; CRC-32 checked);
 * members over max bytes are refused. */
bool bg_zip_read(BgZip *z, const BgZipEntry *e, uint64_t max, unsigned char **data, size_t *len,
                 BgDiagSink *d);
void bg_zip_close(BgZip *z);
/* scipy.sparse.save_npz (csr, csc or coo; compressed or not): COO of the stored entries,
 * A[i][j] as stored; the values are ignored. */
bool bg_npz_load(const char *path, BgCoo *out, BgDiagSink *d);

/* Any graph file (format by its first bytes: Matrix Market, .npz, .npy edge arrays, else an
 * edge list) as a CSR graph.  Formats that do not state the node count get
 * max(largest id + 1, min_nodes) nodes; *n_stated (may be NULL) says which it was. */
bool bg_graph_load_file(const char *path, int64_t min_nodes, BgGraph *out, bool *n_stated,
                        BgDiagSink *d);
/* Widens g to n nodes (the new ones isolated); false when out of memory. */
bool bg_graph_add_nodes(BgGraph *g, int64_t n);
/* K requests over one graph (graph_replicate.c): g as k disjoint copies (copy r: nodes r n ..,
 * and for a batch graphs r ngraphs ..). */
bool bg_graph_replicate(const BgGraph *g, int64_t k, BgGraph *out, BgDiagSink *d);
/* A data directory's graph file: graph.mtx, graph.npz, edges.txt, edge_index.npy or src.npy
 * (with dst.npy), the first that exists (malloc'd), or NULL. */
char *bg_dataset_graph_path(const char *dir);

/* ===== dataset.c: a data directory (graph.mtx, features.npy, labels, splits) ======== */
typedef struct BgDataset {
    char *dir;
    BgGraph graph;
    BgTensor features;       /* f32 [N, F]; dim[0] = 0 when features.npy is absent */
    int32_t *labels;         /* [N] node labels (-1 = none) or NULL */
    int64_t *split[3];       /* train, val, test node ids, or NULL */
    int64_t nsplit[3];
    int32_t *graph_labels;   /* [ngraphs] for batched datasets, or NULL */
} BgDataset;
/* Loads what exists; a graph file is required (bg_dataset_graph_path).  Errors name the file. */
bool bg_dataset_load(const char *dir, BgDataset *out, BgDiagSink *d);
/* The same with the graph from graph_path (any bg_graph_load_file format) when not NULL. */
bool bg_dataset_load_graph(const char *dir, const char *graph_path, BgDataset *out, BgDiagSink *d);
void bg_dataset_free(BgDataset *ds);
/* dataset_select.c: keeps graphs from..to-1 of a batch (graph_ptr), renumbered from node 0:
 * graph, features, labels, splits and graph labels sliced.  An error (E_OPTION: not a batch or
 * a bad range; E_DATA_SHAPE: an edge leaves the kept graphs) leaves ds as it was. */
bool bg_dataset_select_graphs(BgDataset *ds, int64_t from, int64_t to, BgDiagSink *d);
/* graph_replicate.c: the dataset as k requests of itself (bgnnc run --requests): graph,
 * features, node and graph labels k times; the splits name the first copy's nodes.  On an error
 * ds is as it was. */
bool bg_dataset_replicate(BgDataset *ds, int64_t k, BgDiagSink *d);
const char *bg_default_data_root(void); /* $BGNN_DATA_DIR or "../shared/data" */
const char *bg_dataset_file(int i); /* the i-th file name bg_dataset_load reads; NULL past the end */
/* ===== leaves.c: bind a model's leaves to host values ================================= */
typedef enum {
    BG_LEAF_NONE,        /* not a leaf (left unbound) */
    BG_LEAF_GRAPH,       /* an adjacency of the bound graph (self_loops, norm) */
    BG_LEAF_INPUT,       /* node features: f32 [N, dim[1]] */
    BG_LEAF_PARAM,       /* a weight tensor: F32 floats or B1 bits of the used shape */
    BG_LEAF_PARAM_SCALE, /* Bi-GCN's per-output-channel scale f32[M] of a weight */
} BgLeafKind;

/* One leaf as the model declares it.  A PARAM / PARAM_SCALE is read from the safetensors
 * file by name, or from `file` (a .npy path relative to the weights' directory); stored
 * [M,K] when transposed and used as [K,M]. */
typedef struct BgLeafSpec {
    BgLeafKind kind;
    const char *name;     /* INPUT: model-level input name; PARAM, PARAM_SCALE: tensor name */
    const char *file;     /* INPUT: the data file named in messages (NULL: features.npy);
                           * PARAM, PARAM_SCALE: a .npy file, or NULL for the safetensors */
    bool transposed;      /* PARAM, PARAM_SCALE */
    BgDType dtype;        /* PARAM: F32 or B1; INPUT, PARAM_SCALE: F32 */
    int rank;             /* the shape as used (dims may be BG_DIM_N) */
    int64_t dim[2];
    bool self_loops;      /* GRAPH */
    BgNorm norm;          /* GRAPH */
    const BgSource *src;  /* where it is declared, for notes; NULL when unknown */
    BgLoc loc;
} BgLeafSpec;

/* Binds spec[0..n): adj[i] for GRAPH leaves, val[i] for INPUT / PARAM / PARAM_SCALE
 * (both arrays of n entries, zeroed by the caller; NONE entries stay zero).  weights: a
 * .safetensors file or a directory (for npy sources; relative npy paths resolve against the
 * directory of the safetensors file or the directory itself); wmem (borrowed, may be NULL):
 * named tensors in memory used instead of a weights file (its path names it in messages; npy
 * sources then resolve against the working directory); g may be NULL (then a GRAPH or
 * INPUT leaf is an error).  Every problem is reported (all of them), naming the file, the
 * tensor and both shapes, with a note at the declaration; on failure everything bound is
 * freed and false returned. */
bool bg_leaves_bind(const BgLeafSpec *spec, int n, const BgGraph *g, const BgTensor *features,
                    const char *weights, const BgSafetensors *wmem, BgAdj *adj, BgTensor *val,
                    BgDiagSink *d);
/* Bi-GCN's per-output-channel scale of used float weights w [K, M]:
 * y[o] = fl(sum_k |w[k,o]| (in double) / K), f32[M].  false on a bad input or no memory. */
bool bg_param_scale(const BgTensor *w, BgTensor *y);
/* The file an npy("file") parameter is read from with these weights (malloc'd). */
char *bg_bind_npy_path(const char *weights, const char *file);
/* "[2708, 1433]" into buf (returns buf). */
char *bg_dims_str(int rank, const int64_t *dim, char *buf, size_t n);

#endif /* BG_LOADERS_H */
