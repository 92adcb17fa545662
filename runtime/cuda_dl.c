/* cuda_dl.c - the CUDA driver API through dlopen("libcuda.so.1") (never linked), so bgnn
 * builds and runs its CPU paths on machines without a GPU driver.  bg_cuda_load fills a
 * BgCuda table of entry points and turns the usual ways a machine lacks a usable GPU into
 * distinct diagnostics: no driver library / no device (E_NO_DEVICE), a driver older than
 * CUDA 12 (E_DRIVER_OLD), anything else (E_CUDA with the driver's own error name). */
#include "gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifndef RTLD_NODELETE
#define RTLD_NODELETE 0
#endif

/* Each entry: the field, then the exported names to try in order (versioned first). */
#define F(field) offsetof(BgCuda, field)
static const struct {
    size_t off;
    const char *names[2];
} cu_syms[] = {
    {F(cuInit), {"cuInit", NULL}},
    {F(cuDeviceGetCount), {"cuDeviceGetCount", NULL}},
    {F(cuDeviceGet), {"cuDeviceGet", NULL}},
    {F(cuDeviceGetAttribute), {"cuDeviceGetAttribute", NULL}},
    {F(cuDeviceGetName), {"cuDeviceGetName", NULL}},
    {F(cuDevicePrimaryCtxRetain), {"cuDevicePrimaryCtxRetain", NULL}},
    {F(cuDevicePrimaryCtxRelease), {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}},
    {F(cuCtxSetCurrent), {"cuCtxSetCurrent", NULL}},
    {F(cuCtxGetCurrent), {"cuCtxGetCurrent", NULL}},
    {F(cuCtxSynchronize), {"cuCtxSynchronize", NULL}},
    {F(cuModuleLoadData), {"cuModuleLoadData", NULL}},
    {F(cuModuleUnload), {"cuModuleUnload", NULL}},
    {F(cuModuleGetFunction), {"cuModuleGetFunction", NULL}},
    {F(cuModuleGetGlobal), {"cuModuleGetGlobal_v2", NULL}},
    {F(cuFuncGetAttribute), {"cuFuncGetAttribute", NULL}},
    {F(cuFuncSetAttribute), {"cuFuncSetAttribute", NULL}},
    {F(cuOccupancyMaxActiveBlocksPerMultiprocessor),
     {"cuOccupancyMaxActiveBlocksPerMultiprocessor", NULL}},
    {F(cuLaunchKernel), {"cuLaunchKernel", NULL}},
    {F(cuLaunchKernelEx), {"cuLaunchKernelEx", NULL}},
    {F(cuLaunchCooperativeKernel), {"cuLaunchCooperativeKernel", NULL}},
    {F(cuMemAlloc_v2), {"cuMemAlloc_v2", NULL}},
    {F(cuMemFree_v2), {"cuMemFree_v2", NULL}},
    {F(cuMemGetInfo_v2), {"cuMemGetInfo_v2", NULL}},
    {F(cuMemcpyHtoD_v2), {"cuMemcpyHtoD_v2", NULL}},
    {F(cuMemcpyDtoH_v2), {"cuMemcpyDtoH_v2", NULL}},
    {F(cuMemcpyHtoDAsync_v2), {"cuMemcpyHtoDAsync_v2", NULL}},
    {F(cuMemcpyDtoHAsync_v2), {"cuMemcpyDtoHAsync_v2", NULL}},
    {F(cuMemsetD8_v2), {"cuMemsetD8_v2", NULL}},
    {F(cuMemsetD32_v2), {"cuMemsetD32_v2", NULL}},
    {F(cuStreamCreate), {"cuStreamCreate", NULL}},
    {F(cuStreamDestroy), {"cuStreamDestroy_v2", "cuStreamDestroy"}},
    {F(cuStreamSynchronize), {"cuStreamSynchronize", NULL}},
    {F(cuEventCreate), {"cuEventCreate", NULL}},
    {F(cuEventRecord), {"cuEventRecord", NULL}},
    {F(cuEventSynchronize), {"cuEventSynchronize", NULL}},
    {F(cuEventElapsedTime), {"cuEventElapsedTime_v2", "cuEventElapsedTime"}},
    {F(cuEventDestroy), {"cuEventDestroy_v2", "cuEventDestroy"}},
    {F(cuStreamBeginCapture), {"cuStreamBeginCapture_v2", "cuStreamBeginCapture"}},
    {F(cuStreamEndCapture), {"cuStreamEndCapture", NULL}},
    {F(cuGraphInstantiateWithFlags), {"cuGraphInstantiateWithFlags", NULL}},
    {F(cuGraphLaunch), {"cuGraphLaunch", NULL}},
    {F(cuGraphExecDestroy), {"cuGraphExecDestroy", NULL}},
    {F(cuGraphDestroy), {"cuGraphDestroy", NULL}},
    {F(cuGetErrorName), {"cuGetErrorName", NULL}},
    {F(cuGetErrorString), {"cuGetErrorString", NULL}},
};
#undef F

static void set_fn(BgCuda *cu, size_t off, void *p) {
    memcpy((char *)cu + off, &p, sizeof p); /* POSIX: a void * from dlsym holds a fn ptr */
}

static void fail_close(BgCuda *cu) {
    if (cu->lib) dlclose(cu->lib);
    memset(cu, 0, sizeof *cu);
}

const char *bg_cuda_error_name(const BgCuda *cu, BgCUresult r, char *buf, size_t n) {
    const char *s = NULL;
    if (cu && cu->cuGetErrorName && cu->cuGetErrorName(r, &s) != BG_CUDA_SUCCESS) s = NULL;
    if (s) snprintf(buf, n, "%s", s);
    else snprintf(buf, n, "CUDA error %d", r);
    return buf;
}

bool bg_cuda_check(const BgCuda *cu, BgCUresult r, const char *what, BgDiagSink *d) {
    if (r == BG_CUDA_SUCCESS) return true;
    char name[128];
    bg_cuda_error_name(cu, r, name, sizeof name);
    const char *text = NULL;
    if (cu && cu->cuGetErrorString && cu->cuGetErrorString(r, &text) != BG_CUDA_SUCCESS)
        text = NULL;
    bg_diag_error(d, BG_E_CUDA, "%s failed: %s (%d): %s", what ? what : "CUDA call", name,
                  r, text ? text : "no description from the driver");
    return false;
}

bool bg_cuda_init_driver(BgCuda *cu, BgDiagSink *d) {
    int v = 0;
    BgCUresult r = cu->cuDriverGetVersion(&v);
    if (r != BG_CUDA_SUCCESS) return bg_cuda_check(cu, r, "cuDriverGetVersion", d);
    cu->driver_version = v;
    if (v < BG_CUDA_MIN_DRIVER) {
        bg_diag_error(d, BG_E_DRIVER_OLD,
                      "the CUDA driver supports CUDA %d.%d (version %d), but bgnn needs "
                      "CUDA %d.%d (version %d) or newer: update the NVIDIA driver",
                      v / 1000, (v % 1000) / 10, v, BG_CUDA_MIN_DRIVER / 1000,
                      (BG_CUDA_MIN_DRIVER % 1000) / 10, BG_CUDA_MIN_DRIVER);
        return false;
    }
    r = cu->cuInit(0);
    if (r == BG_CUDA_ERROR_NO_DEVICE) {
        bg_diag_error(d, BG_E_NO_DEVICE,
                      "no CUDA-capable GPU found: cuInit reports CUDA_ERROR_NO_DEVICE "
                      "(driver for CUDA %d.%d is installed; check CUDA_VISIBLE_DEVICES)",
                      v / 1000, (v % 1000) / 10);
        return false;
    }
    if (!bg_cuda_check(cu, r, "cuInit", d)) return false;
    int n = 0;
    r = cu->cuDeviceGetCount(&n);
    if (!bg_cuda_check(cu, r, "cuDeviceGetCount", d)) return false;
    if (n <= 0) {
        bg_diag_error(d, BG_E_NO_DEVICE,
                      "no CUDA-capable GPU found: the driver reports 0 devices "
                      "(check CUDA_VISIBLE_DEVICES)");
        return false;
    }
    cu->device_count = n;
    return true;
}

bool bg_cuda_load_lib(BgCuda *cu, const char *lib, BgDiagSink *d) {
    memset(cu, 0, sizeof *cu);
    const char *name = lib ? lib : "libcuda.so.1";
    /* NODELETE: the driver starts threads of its own; never unmap it under them. */
    cu->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!cu->lib) {
        const char *why = dlerror();
        bg_diag_error(d, BG_E_NO_DEVICE,
                      "CUDA driver library %s not found (no GPU driver installed)%s%s", name,
                      why ? ": " : "", why ? why : "");
        return false;
    }
    /* The version first: an old driver may lack the versioned entry points below. */
    void *p = dlsym(cu->lib, "cuDriverGetVersion");
    if (!p) {
        bg_diag_error(d, BG_E_DRIVER_OLD,
                      "%s has no cuDriverGetVersion: not a usable CUDA driver", name);
        fail_close(cu);
        return false;
    }
    set_fn(cu, offsetof(BgCuda, cuDriverGetVersion), p);
    int v = 0;
    if (cu->cuDriverGetVersion(&v) == BG_CUDA_SUCCESS && v > 0 && v < BG_CUDA_MIN_DRIVER) {
        if (!bg_cuda_init_driver(cu, d)) { /* reports E_DRIVER_OLD */
            fail_close(cu);
            return false;
        }
    }
    for (size_t i = 0; i < sizeof cu_syms / sizeof cu_syms[0]; i++) {
        p = NULL;
        for (int k = 0; k < 2 && !p && cu_syms[i].names[k]; k++)
            p = dlsym(cu->lib, cu_syms[i].names[k]);
        if (!p) {
            bg_diag_error(d, BG_E_DRIVER_OLD,
                          "the CUDA driver (%s, version %d) has no %s: update the NVIDIA "
                          "driver (bgnn needs CUDA %d.%d or newer)",
                          name, v, cu_syms[i].names[0], BG_CUDA_MIN_DRIVER / 1000,
                          (BG_CUDA_MIN_DRIVER % 1000) / 10);
            fail_close(cu);
            return false;
        }
        set_fn(cu, cu_syms[i].off, p);
    }
    if (!bg_cuda_init_driver(cu, d)) {
        fail_close(cu);
        return false;
    }
    return true;
}

bool bg_cuda_load(BgCuda *cu, BgDiagSink *d) { return bg_cuda_load_lib(cu, NULL, d); }

void bg_cuda_unload(BgCuda *cu) {
    if (!cu) return;
    if (cu->lib) dlclose(cu->lib);
    memset(cu, 0, sizeof *cu);
}

bool bg_cuda_device_arch(const BgCuda *cu, BgCUdevice dev, int *sm, BgDiagSink *d) {
    int major = 0, minor = 0;
    if (!bg_cuda_check(cu,
                       cu->cuDeviceGetAttribute(
                           &major, BG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                       "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)", d))
        return false;
    if (!bg_cuda_check(cu,
                       cu->cuDeviceGetAttribute(
                           &minor, BG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
                       "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)", d))
        return false;
    *sm = major * 10 + minor;
    return true;
}

/* With the toolkit's headers at hand, check our declarations against the real ones.  This
 * sits at the end: cuda.h #defines names such as cuStreamDestroy that are fields above. */
#if defined(BG_HAVE_CUDA_HEADERS) && BG_HAVE_CUDA_HEADERS
#include <cuda.h>
#define BG_SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " differs from cuda.h")
_Static_assert(sizeof(CUdeviceptr) == sizeof(BgCUdeviceptr), "sizeof(CUdeviceptr)");
_Static_assert(sizeof(CUresult) == sizeof(BgCUresult), "sizeof(CUresult)");
_Static_assert(sizeof(CUdevice) == sizeof(BgCUdevice), "sizeof(CUdevice)");
BG_SAME(CUDA_ERROR_NO_DEVICE, BG_CUDA_ERROR_NO_DEVICE);
BG_SAME(CUDA_ERROR_OUT_OF_MEMORY, BG_CUDA_ERROR_OUT_OF_MEMORY);
BG_SAME(CUDA_ERROR_NOT_INITIALIZED, BG_CUDA_ERROR_NOT_INITIALIZED);
BG_SAME(CUDA_ERROR_NOT_READY, BG_CUDA_ERROR_NOT_READY);
BG_SAME(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, BG_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
BG_SAME(CUDA_ERROR_NOT_SUPPORTED, BG_CUDA_ERROR_NOT_SUPPORTED);
BG_SAME(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, BG_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
BG_SAME(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, BG_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
BG_SAME(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, BG_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
BG_SAME(CU_DEVICE_ATTRIBUTE_WARP_SIZE, BG_CU_DEVICE_ATTRIBUTE_WARP_SIZE);
BG_SAME(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, BG_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
BG_SAME(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, BG_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
BG_SAME(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, BG_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
BG_SAME(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, BG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
BG_SAME(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, BG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
BG_SAME(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, BG_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
BG_SAME(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, BG_CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
BG_SAME(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, BG_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
BG_SAME(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, BG_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
BG_SAME(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, BG_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
BG_SAME(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, BG_CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
BG_SAME(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, BG_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
BG_SAME(CU_FUNC_ATTRIBUTE_NUM_REGS, BG_CU_FUNC_ATTRIBUTE_NUM_REGS);
BG_SAME(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, BG_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
BG_SAME(CU_STREAM_NON_BLOCKING, BG_CU_STREAM_NON_BLOCKING);
BG_SAME(CU_EVENT_DISABLE_TIMING, BG_CU_EVENT_DISABLE_TIMING);
BG_SAME(CU_EVENT_BLOCKING_SYNC, BG_CU_EVENT_BLOCKING_SYNC);
BG_SAME(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, BG_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
_Static_assert(sizeof(CUlaunchAttribute) == sizeof(BgCUlaunchAttribute), "sizeof(CUlaunchAttribute)");
_Static_assert(offsetof(CUlaunchAttribute, value) == offsetof(BgCUlaunchAttribute, value), "CUlaunchAttribute.value");
_Static_assert(sizeof(CUlaunchConfig) == sizeof(BgCUlaunchConfig), "sizeof(CUlaunchConfig)");
_Static_assert(offsetof(CUlaunchConfig, hStream) == offsetof(BgCUlaunchConfig, stream), "CUlaunchConfig.hStream");
_Static_assert(offsetof(CUlaunchConfig, attrs) == offsetof(BgCUlaunchConfig, attrs), "CUlaunchConfig.attrs");
_Static_assert(offsetof(CUlaunchConfig, numAttrs) == offsetof(BgCUlaunchConfig, nattrs), "CUlaunchConfig.numAttrs");
#endif
