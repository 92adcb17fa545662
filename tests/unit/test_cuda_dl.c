/* test_cuda_dl.c - the CUDA driver loader without a GPU: a missing libcuda.so.1 is
 * E_NO_DEVICE with a clear message (checked only where it truly cannot be dlopened), a
 * library that is not a driver is E_DRIVER_OLD, and the driver checks (version, cuInit,
 * device count), bg_cuda_check and bg_cuda_device_arch run against fake entry points. */
#include "bgtest.h"
#include "gpu.h"

#include <dlfcn.h>

static int fake_version = 12040, fake_init = 0, fake_count = 1, fake_major = 9,
           fake_minor = 0;
static BgCUresult f_version(int *v) { *v = fake_version; return 0; }
static BgCUresult f_init(unsigned flags) { (void)flags; return fake_init; }
static BgCUresult f_count(int *n) { *n = fake_count; return 0; }
static BgCUresult f_attr(int *v, int attr, BgCUdevice dev) {
    (void)dev;
    if (attr == BG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) *v = fake_major;
    else if (attr == BG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) *v = fake_minor;
    else return 1; /* CUDA_ERROR_INVALID_VALUE */
    return 0;
}
static BgCUresult f_name(BgCUresult r, const char **s) {
    *s = r == 999 ? "CUDA_ERROR_UNKNOWN" : r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : NULL;
    return *s ? 0 : 1;
}
static BgCUresult f_string(BgCUresult r, const char **s) {
    *s = r == 999 ? "unknown error" : r == 2 ? "out of memory" : NULL;
    return *s ? 0 : 1;
}

static const char *msg_of(const BgDiagSink *d, int code) {
    for (int i = 0; i < d->n; i++)
        if (d->items[i].code == code) return d->items[i].msg;
    return NULL;
}

static BgCuda fake(void) {
    BgCuda cu;
    memset(&cu, 0, sizeof cu);
    cu.cuDriverGetVersion = f_version;
    cu.cuInit = f_init;
    cu.cuDeviceGetCount = f_count;
    cu.cuDeviceGetAttribute = f_attr;
    cu.cuGetErrorName = f_name;
    cu.cuGetErrorString = f_string;
    return cu;
}

int main(void) {
    BgDiagSink d;
    BgCuda cu;

    /* the real loader on this machine */
    void *probe = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!probe) {
        bg_diag_init(&d);
        CHECK(!bg_cuda_load(&cu, &d));
        CHECK(cu.lib == NULL && cu.cuInit == NULL);
        CHECK_EQ_INT(d.nerrors, 1);
        CHECK_STR_CONTAINS(msg_of(&d, BG_E_NO_DEVICE),
                           "CUDA driver library libcuda.so.1 not found (no GPU driver "
                           "installed)");
        bg_cuda_unload(&cu); /* safe on a failed table */
        bg_diag_free(&d);
    } else {
        printf("libcuda.so.1 is present here; the missing-driver check is skipped\n");
        dlclose(probe);
    }

    /* a name that does not exist */
    bg_diag_init(&d);
    CHECK(!bg_cuda_load_lib(&cu, "libcuda-does-not-exist.so.1", &d));
    CHECK_STR_CONTAINS(msg_of(&d, BG_E_NO_DEVICE), "libcuda-does-not-exist.so.1 not found");
    bg_diag_free(&d);

    /* a library that is not a CUDA driver */
    bg_diag_init(&d);
    CHECK(!bg_cuda_load_lib(&cu, "libm.so.6", &d));
    CHECK_STR_CONTAINS(msg_of(&d, BG_E_DRIVER_OLD), "cuDriverGetVersion");
    CHECK(cu.lib == NULL);
    bg_diag_free(&d);

    /* the driver checks, on fake entry points */
    cu = fake();
    bg_diag_init(&d);
    CHECK(bg_cuda_init_driver(&cu, &d));
    CHECK_EQ_INT(d.n, 0);
    CHECK_EQ_INT(cu.driver_version, 12040);
    CHECK_EQ_INT(cu.device_count, 1);
    bg_diag_free(&d);

    fake_version = 11080;
    cu = fake();
    bg_diag_init(&d);
    CHECK(!bg_cuda_init_driver(&cu, &d));
    CHECK_STR_CONTAINS(msg_of(&d, BG_E_DRIVER_OLD), "CUDA 11.8 (version 11080)");
    CHECK_STR_CONTAINS(msg_of(&d, BG_E_DRIVER_OLD), "CUDA 12.0 (version 12000)");
    bg_diag_free(&d);
    fake_version = 13000;

    fake_init = BG_CUDA_ERROR_NO_DEVICE;
    cu = fake();
    bg_diag_init(&d);
    CHECK(!bg_cuda_init_driver(&cu, &d));
    CHECK_STR_CONTAINS(msg_of(&d, BG_E_NO_DEVICE), "CUDA_ERROR_NO_DEVICE");
    bg_diag_free(&d);

    fake_init = 999;
    cu = fake();
    bg_diag_init(&d);
    CHECK(!bg_cuda_init_driver(&cu, &d));
    CHECK_STR_CONTAINS(msg_of(&d, BG_E_CUDA),
                       "cuInit failed: CUDA_ERROR_UNKNOWN (999): unknown error");
    bg_diag_free(&d);
    fake_init = 0;

    fake_count = 0;
    cu = fake();
    bg_diag_init(&d);
    CHECK(!bg_cuda_init_driver(&cu, &d));
    CHECK_STR_CONTAINS(msg_of(&d, BG_E_NO_DEVICE), "0 devices");
    bg_diag_free(&d);
    fake_count = 2;

    /* bg_cuda_check and error names */
    cu = fake();
    bg_diag_init(&d);
    CHECK(bg_cuda_check(&cu, 0, "cuMemAlloc", &d));
    CHECK_EQ_INT(d.n, 0);
    CHECK(!bg_cuda_check(&cu, 2, "cuMemAlloc(4096 bytes)", &d));
    CHECK_STR_CONTAINS(msg_of(&d, BG_E_CUDA),
                       "cuMemAlloc(4096 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of "
                       "memory");
    bg_diag_free(&d);
    char buf[64];
    CHECK(strcmp(bg_cuda_error_name(&cu, 12345, buf, sizeof buf), "CUDA error 12345") == 0);
    CHECK(strcmp(bg_cuda_error_name(NULL, 7, buf, sizeof buf), "CUDA error 7") == 0);
    bg_diag_init(&d);
    CHECK(!bg_cuda_check(NULL, 7, "x", &d)); /* no table at all */
    CHECK_STR_CONTAINS(msg_of(&d, BG_E_CUDA), "x failed: CUDA error 7 (7)");
    bg_diag_free(&d);

    /* compute capability -> sm */
    int sm = 0;
    bg_diag_init(&d);
    CHECK(bg_cuda_device_arch(&cu, 0, &sm, &d));
    CHECK_EQ_INT(sm, 90);
    fake_major = 8;
    fake_minor = 6;
    CHECK(bg_cuda_device_arch(&cu, 0, &sm, &d));
    CHECK_EQ_INT(sm, 86);
    fake_major = 12;
    fake_minor = 0;
    CHECK(bg_cuda_device_arch(&cu, 0, &sm, &d));
    CHECK_EQ_INT(sm, 120);
    CHECK_EQ_INT(d.n, 0);
    bg_diag_free(&d);

    return bg_test_finish();
}
