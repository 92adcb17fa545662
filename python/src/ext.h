/* ext.h - the CPython extension bgnn._bgnn: a thin binding over the C API (bgnn/bgnn.h),
 * on the limited API (abi3, Python >= 3.8), no runtime dependencies.
 *
 *   ext_module.c   the module, BgnnError, Context and Model objects
 *   ext_session.c  Session objects: graphs, features, weights, runs, outputs
 *   ext_dlpack.c   DLPack capsules over a session's device output buffers
 *
 * Arrays cross as raw addresses (ints) plus shapes: the Python layer (bgnn/_session.py)
 * makes them contiguous, of the right dtype, and keeps them alive; bgnn copies host arrays
 * before a call returns and borrows device features.  Objects hold a strong reference to
 * their parent (session -> model -> context), so the C objects are destroyed children first.
 * Long calls (compile, prepare, run, time, loading files) release the GIL. */
#ifndef BGNN_EXT_H
#define BGNN_EXT_H

#define Py_LIMITED_API 0x03080000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>

#include "bgnn/bgnn.h"

typedef struct {
    PyObject_HEAD
    bgnn_context *c;
} CtxObject;

typedef struct {
    PyObject_HEAD
    bgnn_model *m;
    PyObject *ctx; /* CtxObject */
} ModelObject;

typedef struct {
    PyObject_HEAD
    bgnn_session *s;
    PyObject *model;      /* ModelObject */
    Py_ssize_t exports;   /* live DLPack views of its device buffers */
    int prepared;         /* prepared (by a run) since the last change */
    uint64_t fdev;        /* device features bound (0: none) */
    int64_t frows, fcols;
} SessionObject;

/* ext_module.c */
extern PyObject *bgnn_ext_error;              /* bgnn.BgnnError */
extern PyTypeObject *bgnn_ext_session_type;
/* Raises BgnnError for status st with the context's last error text; returns NULL. */
PyObject *bgnn_ext_raise(bgnn_context *c, bgnn_status st);
bgnn_context *bgnn_ext_session_ctx(SessionObject *s);

/* ext_session.c */
PyType_Spec *bgnn_ext_session_spec(void);
PyObject *bgnn_ext_session_new(PyObject *model);

/* ext_dlpack.c: a "dltensor" (or, versioned, "dltensor_versioned") capsule over [dims]
 * elements of dtype code/bits at dptr on device (kDLCUDA = 2, id) or the host (kDLCPU = 1);
 * it keeps owner alive and counts itself in owner->exports until the deleter runs. */
PyObject *bgnn_ext_dlpack(SessionObject *owner, uint64_t dptr, int device_type, int device_id,
                          int ndim, const int64_t *dims, int code, int bits, int versioned);

#endif
