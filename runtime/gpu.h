/* gpu.h - the GPU infrastructure under the runtime (internal; never installed).
 *
 *   cuda_dl.c  the CUDA driver API, loaded with dlopen("libcuda.so.1") into a BgCuda table
 *   nvrtc.c    NVRTC (loaded with dlopen) compiling generated CUDA C++ to a cubin
 *   sha256.c   SHA-256, for cache keys and cache entry checksums
 *   cache.c    the on-disk JIT cache of cubins
 *
 * Nothing links libcuda or libnvrtc: a machine without a GPU driver (or without NVRTC) can
 * still build and run everything that does not launch kernels; the failures come back as
 * E_NO_DEVICE / E_DRIVER_OLD / E_NVRTC diagnostics.  No globals: each BgCuda / BgNvrtc
 * holds its own dlopen handle (the dynamic loader refcounts the library).
 *
 * The CUDA types below are our own minimal, ABI-compatible declarations, so this header
 * never needs cuda.h (cuda_dl.c checks them against cuda.h when BG_HAVE_CUDA_HEADERS). */
#ifndef BG_GPU_H
#define BG_GPU_H

#include "plan.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ===== cuda_dl.c: the CUDA driver API through dlopen ================================ */
typedef int BgCUresult;                      /* CUresult; 0 = CUDA_SUCCESS */
typedef int BgCUdevice;                      /* CUdevice */
typedef unsigned long long BgCUdeviceptr;    /* CUdeviceptr (64-bit) */
typedef struct BgCUctx_st *BgCUcontext;      /* opaque handles */
typedef struct BgCUmod_st *BgCUmodule;
typedef struct BgCUfunc_st *BgCUfunction;
typedef struct BgCUstream_st *BgCUstream;
typedef struct BgCUevent_st *BgCUevent;
typedef struct BgCUgraph_st *BgCUgraph;
typedef struct BgCUgraphExec_st *BgCUgraphExec;

enum {
    BG_CUDA_SUCCESS = 0,
    BG_CUDA_ERROR_OUT_OF_MEMORY = 2,
    BG_CUDA_ERROR_NOT_INITIALIZED = 3,
    BG_CUDA_ERROR_NO_DEVICE = 100,
    BG_CUDA_ERROR_NOT_READY = 600,
    BG_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
    BG_CUDA_ERROR_NOT_SUPPORTED = 801,
};

/* CUdevice_attribute values used by the runtime. */
enum {
    BG_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    BG_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    BG_CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    BG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    BG_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    BG_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    BG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    BG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    BG_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    BG_CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
    BG_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

/* CUfunction_attribute values used by the runtime. */
enum {
    BG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    BG_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    BG_CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
    BG_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    BG_CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    BG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum { BG_CU_STREAM_DEFAULT = 0, BG_CU_STREAM_NON_BLOCKING = 1 };
enum { BG_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1 };
enum { BG_CU_EVENT_DEFAULT = 0, BG_CU_EVENT_BLOCKING_SYNC = 1, BG_CU_EVENT_DISABLE_TIMING = 2 };

/* cuLaunchKernelEx's configuration (CUlaunchConfig, CUlaunchAttribute): only the attribute
 * the runtime sets, programmatic stream serialization (CUDA 12.3 drivers and newer capture it
 * into graphs as a programmatic edge). */
enum { BG_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };
typedef struct BgCUlaunchAttribute {
    int id;
    char pad[4];
    union {
        char pad[64];
        int programmatic_stream_serialization_allowed;
        void *align; /* the union holds pointers */
    } value;
} BgCUlaunchAttribute;
typedef struct BgCUlaunchConfig {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem_bytes;
    BgCUstream stream;
    BgCUlaunchAttribute *attrs;
    unsigned nattrs;
} BgCUlaunchConfig;
#define BG_CUDA_PDL_DRIVER 12030 /* programmatic launches captured into graphs */

#define BG_CUDA_MIN_DRIVER 12000 /* cuDriverGetVersion value of CUDA 12.0 */

/* The driver entry points a runtime needs.  Every pointer is set after a successful
 * bg_cuda_load (they are resolved from the versioned symbols the CUDA 12 headers use:
 * cuStreamDestroy_v2, cuEventDestroy_v2, cuDevicePrimaryCtxRelease_v2, ...). */
typedef struct BgCuda {
    void *lib;              /* dlopen handle; NULL when not loaded */
    int driver_version;     /* e.g. 12040 for CUDA 12.4 */
    int device_count;

    BgCUresult (*cuInit)(unsigned flags);
    BgCUresult (*cuDriverGetVersion)(int *version);
    BgCUresult (*cuDeviceGetCount)(int *count);
    BgCUresult (*cuDeviceGet)(BgCUdevice *dev, int ordinal);
    BgCUresult (*cuDeviceGetAttribute)(int *value, int attrib, BgCUdevice dev);
    BgCUresult (*cuDeviceGetName)(char *name, int len, BgCUdevice dev);
    BgCUresult (*cuDevicePrimaryCtxRetain)(BgCUcontext *ctx, BgCUdevice dev);
    BgCUresult (*cuDevicePrimaryCtxRelease)(BgCUdevice dev);
    BgCUresult (*cuCtxSetCurrent)(BgCUcontext ctx);
    BgCUresult (*cuCtxGetCurrent)(BgCUcontext *ctx);
    BgCUresult (*cuCtxSynchronize)(void);
    BgCUresult (*cuModuleLoadData)(BgCUmodule *mod, const void *image);
    BgCUresult (*cuModuleUnload)(BgCUmodule mod);
    BgCUresult (*cuModuleGetFunction)(BgCUfunction *fn, BgCUmodule mod, const char *name);
    BgCUresult (*cuModuleGetGlobal)(BgCUdeviceptr *ptr, size_t *bytes, BgCUmodule mod, const char *name);
    BgCUresult (*cuFuncGetAttribute)(int *value, int attrib, BgCUfunction fn);
    BgCUresult (*cuFuncSetAttribute)(BgCUfunction fn, int attrib, int value);
    BgCUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *nblocks, BgCUfunction fn,
                                                             int block_size, size_t dyn_smem);
    BgCUresult (*cuLaunchKernel)(BgCUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                 BgCUstream stream, void **params, void **extra);
    BgCUresult (*cuLaunchKernelEx)(const BgCUlaunchConfig *config, BgCUfunction fn, void **params,
                                   void **extra);
    BgCUresult (*cuLaunchCooperativeKernel)(BgCUfunction fn, unsigned gx, unsigned gy,
                                            unsigned gz, unsigned bx, unsigned by,
                                            unsigned bz, unsigned smem, BgCUstream stream,
                                            void **params);
    BgCUresult (*cuMemAlloc_v2)(BgCUdeviceptr *p, size_t bytes);
    BgCUresult (*cuMemFree_v2)(BgCUdeviceptr p);
    BgCUresult (*cuMemGetInfo_v2)(size_t *free_bytes, size_t *total_bytes);
    BgCUresult (*cuMemcpyHtoD_v2)(BgCUdeviceptr dst, const void *src, size_t bytes);
    BgCUresult (*cuMemcpyDtoH_v2)(void *dst, BgCUdeviceptr src, size_t bytes);
    BgCUresult (*cuMemcpyHtoDAsync_v2)(BgCUdeviceptr dst, const void *src, size_t bytes,
                                       BgCUstream stream);
    BgCUresult (*cuMemcpyDtoHAsync_v2)(void *dst, BgCUdeviceptr src, size_t bytes,
                                       BgCUstream stream);
    BgCUresult (*cuMemsetD8_v2)(BgCUdeviceptr dst, unsigned char value, size_t count);
    BgCUresult (*cuMemsetD32_v2)(BgCUdeviceptr dst, unsigned value, size_t count);
    BgCUresult (*cuStreamCreate)(BgCUstream *stream, unsigned flags);
    BgCUresult (*cuStreamDestroy)(BgCUstream stream);
    BgCUresult (*cuStreamSynchronize)(BgCUstream stream);
    BgCUresult (*cuEventCreate)(BgCUevent *ev, unsigned flags);
    BgCUresult (*cuEventRecord)(BgCUevent ev, BgCUstream stream);
    BgCUresult (*cuEventSynchronize)(BgCUevent ev);
    BgCUresult (*cuEventElapsedTime)(float *ms, BgCUevent start, BgCUevent end);
    BgCUresult (*cuEventDestroy)(BgCUevent ev);
    BgCUresult (*cuStreamBeginCapture)(BgCUstream stream, int mode);
    BgCUresult (*cuStreamEndCapture)(BgCUstream stream, BgCUgraph *graph);
    BgCUresult (*cuGraphInstantiateWithFlags)(BgCUgraphExec *exec, BgCUgraph graph,
                                              unsigned long long flags);
    BgCUresult (*cuGraphLaunch)(BgCUgraphExec exec, BgCUstream stream);
    BgCUresult (*cuGraphExecDestroy)(BgCUgraphExec exec);
    BgCUresult (*cuGraphDestroy)(BgCUgraph graph);
    BgCUresult (*cuGetErrorName)(BgCUresult r, const char **name);
    BgCUresult (*cuGetErrorString)(BgCUresult r, const char **text);
} BgCuda;

/* dlopens libcuda.so.1, checks the driver version (>= BG_CUDA_MIN_DRIVER), resolves every
 * entry point, runs cuInit(0) and counts devices.  On failure *cu is zeroed, the library
 * closed and one diagnostic reported:
 *   E_NO_DEVICE   libcuda.so.1 not found; cuInit says CUDA_ERROR_NO_DEVICE; 0 devices
 *   E_DRIVER_OLD  driver older than CUDA 12.0 (both versions named), or an entry point
 *                 missing from the library
 *   E_CUDA        any other driver failure (with the driver's error name and text) */
bool bg_cuda_load(BgCuda *cu, BgDiagSink *d);
/* Same, from a named library (tests; lib == NULL means "libcuda.so.1"). */
bool bg_cuda_load_lib(BgCuda *cu, const char *lib, BgDiagSink *d);
/* The checks after symbol resolution (cuDriverGetVersion, cuInit, cuDeviceGetCount) on a
 * filled table; split out so tests can drive them with fake entry points.  Does not
 * close the library on failure. */
bool bg_cuda_init_driver(BgCuda *cu, BgDiagSink *d);
/* dlcloses and zeroes (safe on a zeroed or failed table).  Release contexts first. */
void bg_cuda_unload(BgCuda *cu);
/* r == CUDA_SUCCESS: true.  Otherwise one E_CUDA error "WHAT failed: CUDA_ERROR_X (n):
 * driver text" and false. */
bool bg_cuda_check(const BgCuda *cu, BgCUresult r, const char *what, BgDiagSink *d);
/* "CUDA_ERROR_X" (or "CUDA error n" when the driver cannot name it) into buf. */
const char *bg_cuda_error_name(const BgCuda *cu, BgCUresult r, char *buf, size_t n);
/* sm = 10 * major + minor from the compute capability attributes (e.g. 90). */
bool bg_cuda_device_arch(const BgCuda *cu, BgCUdevice dev, int *sm, BgDiagSink *d);

/* ===== nvrtc.c: NVRTC through dlopen ================================================= */
/* A loaded NVRTC; reuse one across many compiles (loading libnvrtc costs milliseconds). */
typedef int BgNvrtcStatus;                     /* nvrtcResult; 0 = NVRTC_SUCCESS */
typedef struct BgNvrtcProg_st *BgNvrtcProgram; /* nvrtcProgram */
enum { BG_NVRTC_SUCCESS = 0, BG_NVRTC_ERROR_COMPILATION = 6 };

typedef struct BgNvrtc {
    void *lib;                  /* dlopen handle; NULL when not loaded */
    const char *lib_name;       /* the name that loaded (static string) */
    int major, minor;           /* nvrtcVersion */
    int *archs;                 /* nvrtcGetSupportedArchs (malloc'd), or NULL */
    int narchs;                 /* 0 when this NVRTC cannot list them */

    const char *(*nvrtcGetErrorString)(BgNvrtcStatus r);
    BgNvrtcStatus (*nvrtcVersion)(int *major, int *minor);
    BgNvrtcStatus (*nvrtcGetNumSupportedArchs)(int *n);        /* may be NULL */
    BgNvrtcStatus (*nvrtcGetSupportedArchs)(int *archs);       /* may be NULL */
    BgNvrtcStatus (*nvrtcCreateProgram)(BgNvrtcProgram *prog, const char *src,
                                        const char *name, int nheaders,
                                        const char *const *headers,
                                        const char *const *include_names);
    BgNvrtcStatus (*nvrtcDestroyProgram)(BgNvrtcProgram *prog);
    BgNvrtcStatus (*nvrtcCompileProgram)(BgNvrtcProgram prog, int nopts,
                                         const char *const *opts);
    BgNvrtcStatus (*nvrtcGetCUBINSize)(BgNvrtcProgram prog, size_t *n);
    BgNvrtcStatus (*nvrtcGetCUBIN)(BgNvrtcProgram prog, char *cubin);
    BgNvrtcStatus (*nvrtcGetProgramLogSize)(BgNvrtcProgram prog, size_t *n);
    BgNvrtcStatus (*nvrtcGetProgramLog)(BgNvrtcProgram prog, char *log);
} BgNvrtc;

/* Tries libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so, then the toolkit's
 * $CUDA_HOME/lib64/libnvrtc.so and /usr/local/cuda/lib64/libnvrtc.so.
 * Missing: E_NVRTC "NVRTC (libnvrtc.so) not found ...". */
bool bg_nvrtc_load(BgNvrtc *nv, BgDiagSink *d);
void bg_nvrtc_unload(BgNvrtc *nv);
/* Loads NVRTC just to ask its version; false when it cannot be loaded. */
bool bg_nvrtc_version(int *major, int *minor);

typedef BgCodeHeader BgNvrtcHeader; /* plan.h: name as #included, text */

typedef struct BgNvrtcReq {
    const char *source;         /* NUL-terminated CUDA C++ */
    const char *name;           /* program name: diagnostics and dump file names */
    const BgNvrtcHeader *headers;
    int nheaders;
    const char *arch;           /* "sm_90" (also "sm_90a"): compiled to a real cubin */
    const char *const *extra;   /* more options, passed after the fixed ones */
    int nextra;
    const BgNvrtc *nv;          /* a loaded NVRTC, or NULL to load one for this call */
} BgNvrtcReq;

typedef struct BgNvrtcResult {
    unsigned char *cubin;       /* malloc'd; NULL on failure */
    size_t cubin_len;
    char *log;                  /* malloc'd program log (always fetched; may be "") */
} BgNvrtcResult;

/* Options: --gpu-architecture=<arch> -std=c++17 --fmad=false -default-device, then extra.
 * The arch is checked against nvrtcGetSupportedArchs: E_ARCH "architecture sm_XX is not
 * supported by this NVRTC (supported: sm_75 ... sm_120)".  A failed compile reports
 * E_NVRTC_COMPILE with the log in the message; when $BGNN_DUMP_DIR is set the source is
 * written to <dir>/<name>.cu (numbered lines "   1 | ...") and the log to <dir>/<name>.log
 * (a dump that cannot be written is a warning).  *out is always initialised; free it with
 * bg_nvrtc_result_free, also after a failure (the log stays available). */
bool bg_nvrtc_compile(const BgNvrtcReq *req, BgNvrtcResult *out, BgDiagSink *d);
void bg_nvrtc_result_free(BgNvrtcResult *r);
/* The options exactly as bg_nvrtc_compile passes them, one per line, followed by one line
 * "header NAME SHA256(text)" per header: the "canonical options" part of a cache key
 * (so a changed header changes the key).  malloc'd. */
char *bg_nvrtc_options_canon(const BgNvrtcReq *req);

/* ===== sha256.c ======================================================================= */
typedef struct BgSha256 {
    uint32_t h[8];
    uint64_t nbytes;
    uint8_t buf[64];
    size_t nbuf;
} BgSha256;

void bg_sha256_init(BgSha256 *s);
void bg_sha256_update(BgSha256 *s, const void *data, size_t len);
void bg_sha256_final(BgSha256 *s, uint8_t out[32]);
void bg_sha256(const void *data, size_t len, uint8_t out[32]);
/* Lowercase hex of n bytes into out (2n + 1 chars with the NUL); returns out. */
char *bg_hex(const uint8_t *bytes, size_t n, char *out);
/* bg_sha256 then bg_hex: out has 65 chars. */
char *bg_sha256_hex(const void *data, size_t len, char out[65]);

/* ===== cache.c: on-disk JIT cache of cubins ========================================= */
typedef enum {
    BG_CACHE_HIT,
    BG_CACHE_MISS,     /* no entry, unreadable entry, or the cache is disabled */
    BG_CACHE_CORRUPT,  /* bad magic, short file, length or checksum mismatch: deleted */
} BgCacheStatus;

#define BG_CACHE_MAGIC "BGNNCACHE1"
#define BG_CACHE_HEADER_BYTES 50        /* magic[10], payload length u64 LE, sha256[32] */
#define BG_CACHE_MAX_PAYLOAD (1ull << 30)

/* key = hex sha256 over source NUL options NUL arch NUL nvrtc_version NUL
 * BG_VERSION_STRING.  options: bg_nvrtc_options_canon; nvrtc_version e.g. "13.0". */
char *bg_cache_key(const char *source, const char *options, const char *arch,
                   const char *nvrtc_version, char out[65]);
/* True when $BGNN_CACHE_DISABLE is set to anything but "" or "0". */
bool bg_cache_disabled(void);
/* $BGNN_CACHE_DIR, else $XDG_CACHE_HOME/bgnn, else $HOME/.cache/bgnn; malloc'd, or NULL
 * when none can be formed (no HOME).  Does not create it. */
char *bg_cache_default_dir(void);
/* mkdir -p dir (mode 0755 for new parts); false when it cannot be made a directory. */
bool bg_cache_mkdirs(const char *dir);
/* Looks up <dir>/<key>.cubin.  Hit: *bytes (malloc'd) and *len set, true.  Otherwise
 * false with *st MISS or CORRUPT (a corrupt entry is deleted so the caller rebuilds and
 * stores it again).  key must be 64 hex digits (anything else misses). */
bool bg_cache_load(const char *dir, const char *key, unsigned char **bytes, size_t *len,
                   BgCacheStatus *st);
/* Writes <dir>/<key>.cubin atomically: <key>.cubin.tmp.<pid>.<tag> then rename(); the
 * directory is created when missing.  tag = 0 picks a random one (for several writers in
 * one process, pass a distinct counter).  Failure is not fatal: false and one warning
 * (E_WRITE).  Disabled cache: nothing written, true. */
bool bg_cache_store(const char *dir, const char *key, const void *bytes, size_t len,
                    unsigned long tag, BgDiagSink *d);

#endif /* BG_GPU_H */
