/* ext_dlpack.c - DLPack capsules over a session's device output buffers, so
 * torch.from_dlpack / CuPy / JAX take them without a copy: "dltensor_versioned" (DLPack 1.0)
 * when the consumer asks for it (__dlpack__(max_version=(1, 0))), else the legacy
 * "dltensor" every consumer reads.  The managed tensor holds a strong reference to the session object (the buffers'
 * owner) and counts itself in its exports until the consumer calls the deleter; a capsule
 * never consumed is released by its destructor.  The deleter may run on any thread, without
 * the GIL: it takes the GIL to drop the reference. */
#include "ext.h"

#include <stdlib.h>

typedef struct {
    int32_t device_type; /* kDLCPU = 1, kDLCUDA = 2 */
    int32_t device_id;
} DLDevice;
typedef struct {
    uint8_t code; /* kDLInt = 0, kDLUInt = 1, kDLFloat = 2 */
    uint8_t bits;
    uint16_t lanes;
} DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* NULL: C order */
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct {
    uint32_t major, minor;
} DLPackVersion;
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

typedef struct {
    DLManagedTensor mt;             /* legacy */
    DLManagedTensorVersioned mtv;   /* 1.0 */
    int64_t shape[2];
    SessionObject *owner;
} Managed;

static void release(Managed *m) {
    PyGILState_STATE g = PyGILState_Ensure();
    m->owner->exports--;
    Py_DECREF((PyObject *)m->owner);
    PyGILState_Release(g);
    free(m);
}
static void managed_delete(DLManagedTensor *self) { release((Managed *)self->manager_ctx); }
static void managed_delete_v(DLManagedTensorVersioned *self) { release((Managed *)self->manager_ctx); }

static void capsule_destructor(PyObject *cap) {
    /* a consumer renames the capsule "used_..."; only an unconsumed one is ours to free */
    if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *mt = PyCapsule_GetPointer(cap, "dltensor");
        if (mt && mt->deleter) mt->deleter(mt);
    } else if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned *mt = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (mt && mt->deleter) mt->deleter(mt);
    } else {
        PyErr_Clear();
    }
}

PyObject *bgnn_ext_dlpack(SessionObject *owner, uint64_t dptr, int device_type, int device_id, int ndim,
                          const int64_t *dims, int code, int bits, int versioned) {
    Managed *m = calloc(1, sizeof *m);
    if (!m) return PyErr_NoMemory();
    for (int k = 0; k < ndim && k < 2; k++) m->shape[k] = dims[k];
    m->owner = owner;
    m->mt.manager_ctx = m;
    m->mt.deleter = managed_delete;
    DLTensor *t = &m->mt.dl_tensor;
    t->data = (void *)(uintptr_t)dptr;
    t->device.device_type = device_type;
    t->device.device_id = device_id;
    t->ndim = ndim;
    t->dtype.code = (uint8_t)code;
    t->dtype.bits = (uint8_t)bits;
    t->dtype.lanes = 1;
    t->shape = m->shape;
    t->strides = NULL;
    t->byte_offset = 0;
    m->mtv.version.major = 1;
    m->mtv.version.minor = 0;
    m->mtv.manager_ctx = m;
    m->mtv.deleter = managed_delete_v;
    m->mtv.flags = 0;
    m->mtv.dl_tensor = *t;
    PyObject *cap = versioned ? PyCapsule_New(&m->mtv, "dltensor_versioned", capsule_destructor)
                              : PyCapsule_New(&m->mt, "dltensor", capsule_destructor);
    if (!cap) {
        free(m);
        return NULL;
    }
    Py_INCREF((PyObject *)owner);
    owner->exports++;
    return cap;
}
