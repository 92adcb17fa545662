/* ext_session.c - Session objects of bgnn._bgnn: one bound graph, features and weights
 * (bgnn_session), runs and outputs.  Host arrays arrive as (address, shape) and are copied
 * by bgnn; device features are borrowed (the Python layer keeps the tensor alive).
 *
 * Device outputs handed out as DLPack views alias the session's buffers, which a new bind
 * (another graph, weights, host features, or device features of another shape) frees: while
 * views are alive (exports > 0) such calls raise BgnnError instead.  A run overwrites the
 * buffers in place (documented: clone to keep a result). */
#include "ext.h"

#include <string.h>

static void sess_dealloc(PyObject *o) {
    SessionObject *s = (SessionObject *)o;
    bgnn_session_destroy(s->s);
    Py_XDECREF(s->model);
    PyTypeObject *tp = Py_TYPE(o);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(o);
    Py_DECREF(tp);
}

#define CTX(self) bgnn_ext_session_ctx((SessionObject *)(self))
#define SES(self) (((SessionObject *)(self))->s)

static PyObject *check(PyObject *self, bgnn_status st) {
    if (st != BGNN_OK) return bgnn_ext_raise(CTX(self), st);
    Py_RETURN_NONE;
}

/* A call that binds again: refused while device views of the outputs are alive. */
static bool rebind_ok(PyObject *self) {
    SessionObject *s = (SessionObject *)self;
    if (s->exports > 0) {
        PyObject *exc = PyObject_CallFunction(bgnn_ext_error, "s",
            "output tensors of this session still alias its device buffers, which binding a new "
            "graph, weights or features would free: drop them (or keep .clone()s) first");
        if (exc) {
            PyObject *code = PyLong_FromLong(BGNN_ERR_STATE), *name = PyUnicode_FromString("STATE");
            if (code && name) {
                PyObject_SetAttrString(exc, "status", code);
                PyObject_SetAttrString(exc, "status_name", name);
            }
            Py_XDECREF(code);
            Py_XDECREF(name);
            PyErr_SetObject(bgnn_ext_error, exc);
            Py_DECREF(exc);
        }
        return false;
    }
    s->prepared = 0;
    return true;
}

static PyObject *sess_load_data(PyObject *self, PyObject *args) {
    const char *dir;
    if (!PyArg_ParseTuple(args, "s", &dir) || !rebind_ok(self)) return NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_session_load_data(SES(self), dir);
    Py_END_ALLOW_THREADS
    ((SessionObject *)self)->fdev = 0;
    return check(self, st);
}

static PyObject *sess_set_graph_csr(PyObject *self, PyObject *args) {
    long long n, ng;
    unsigned long long rp, col, gp;
    if (!PyArg_ParseTuple(args, "LKKLK", &n, &rp, &col, &ng, &gp) || !rebind_ok(self)) return NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_session_set_graph_csr(SES(self), n, (const int64_t *)(uintptr_t)rp, (const int32_t *)(uintptr_t)col, ng,
                                    (const int64_t *)(uintptr_t)gp);
    Py_END_ALLOW_THREADS
    return check(self, st);
}

static PyObject *sess_set_graph_coo(PyObject *self, PyObject *args) {
    long long n, nnz, ng;
    unsigned long long row, col, gp;
    if (!PyArg_ParseTuple(args, "LLKKLK", &n, &nnz, &row, &col, &ng, &gp) || !rebind_ok(self)) return NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_session_set_graph_coo(SES(self), n, nnz, (const int64_t *)(uintptr_t)row,
                                    (const int64_t *)(uintptr_t)col, ng, (const int64_t *)(uintptr_t)gp);
    Py_END_ALLOW_THREADS
    return check(self, st);
}

static PyObject *sess_set_graph_file(PyObject *self, PyObject *args) {
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path) || !rebind_ok(self)) return NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_session_set_graph_file(SES(self), path);
    Py_END_ALLOW_THREADS
    return check(self, st);
}

static PyObject *sess_set_features(PyObject *self, PyObject *args) {
    unsigned long long addr;
    long long rows, cols;
    if (!PyArg_ParseTuple(args, "KLL", &addr, &rows, &cols) || !rebind_ok(self)) return NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_session_set_features(SES(self), (const float *)(uintptr_t)addr, rows, cols);
    Py_END_ALLOW_THREADS
    ((SessionObject *)self)->fdev = 0;
    return check(self, st);
}

static PyObject *sess_set_features_file(PyObject *self, PyObject *args) {
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path) || !rebind_ok(self)) return NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_session_set_features_file(SES(self), path);
    Py_END_ALLOW_THREADS
    ((SessionObject *)self)->fdev = 0;
    return check(self, st);
}

static PyObject *sess_set_features_device(PyObject *self, PyObject *args) {
    unsigned long long dptr;
    long long rows, cols;
    if (!PyArg_ParseTuple(args, "KLL", &dptr, &rows, &cols)) return NULL;
    SessionObject *s = (SessionObject *)self;
    /* same shape on a prepared session: the C library only repoints the input */
    bool repoint = s->prepared && s->fdev && s->frows == rows && s->fcols == cols;
    if (!repoint && !rebind_ok(self)) return NULL;
    bgnn_status st = bgnn_session_set_features_device(s->s, (uint64_t)dptr, rows, cols);
    if (st == BGNN_OK) {
        s->fdev = (uint64_t)dptr;
        s->frows = rows;
        s->fcols = cols;
    } else {
        s->fdev = 0;
        s->prepared = 0;
    }
    return check(self, st);
}

static PyObject *sess_set_requests(PyObject *self, PyObject *args) {
    long long k;
    if (!PyArg_ParseTuple(args, "L", &k) || !rebind_ok(self)) return NULL;
    return check(self, bgnn_session_set_requests(SES(self), (int64_t)k));
}

static PyObject *sess_set_weights(PyObject *self, PyObject *args) {
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path) || !rebind_ok(self)) return NULL;
    return check(self, bgnn_session_set_weights(SES(self), path));
}

/* set_weights_tensor(name, address, shape): float32, C order. */
static PyObject *sess_set_weights_tensor(PyObject *self, PyObject *args) {
    const char *name;
    unsigned long long addr;
    PyObject *shape;
    if (!PyArg_ParseTuple(args, "sKO", &name, &addr, &shape)) return NULL;
    PyObject *seq = PySequence_Tuple(shape);
    if (!seq) return NULL;
    Py_ssize_t rank = PyTuple_Size(seq);
    int64_t dims[4] = {0, 0, 0, 0};
    if (rank > 4) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "weights tensor '%s': rank %zd over 4", name, rank);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < rank; k++) {
        dims[k] = PyLong_AsLongLong(PyTuple_GetItem(seq, k));
        if (dims[k] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return NULL;
        }
    }
    Py_DECREF(seq);
    if (!rebind_ok(self)) return NULL;
    bgnn_status st = bgnn_session_set_weights_tensor(SES(self), name, BGNN_F32, (int)rank, dims,
                                                     (const void *)(uintptr_t)addr);
    return check(self, st);
}

static PyObject *sess_clear_weights(PyObject *self, PyObject *unused) {
    (void)unused;
    if (!rebind_ok(self)) return NULL;
    return check(self, bgnn_session_clear_weights(SES(self)));
}

static PyObject *sess_prepare(PyObject *self, PyObject *unused) {
    (void)unused;
    if (!rebind_ok(self)) return NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_session_prepare(SES(self));
    Py_END_ALLOW_THREADS
    ((SessionObject *)self)->prepared = st == BGNN_OK;
    return check(self, st);
}

/* run(stream=0): a prepare it needs is a rebind (refused while views are alive). */
static PyObject *sess_run(PyObject *self, PyObject *args) {
    unsigned long long stream = 0;
    if (!PyArg_ParseTuple(args, "|K", &stream)) return NULL;
    SessionObject *s = (SessionObject *)self;
    if (!s->prepared && !rebind_ok(self)) return NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_session_run(s->s, (void *)(uintptr_t)stream);
    Py_END_ALLOW_THREADS
    s->prepared = st == BGNN_OK;
    return check(self, st);
}

static PyObject *sess_time(PyObject *self, PyObject *args) {
    int repeat;
    unsigned long long stream = 0;
    if (!PyArg_ParseTuple(args, "i|K", &repeat, &stream)) return NULL;
    SessionObject *s = (SessionObject *)self;
    if (!s->prepared && !rebind_ok(self)) return NULL;
    double ms = 0;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_session_time(s->s, repeat, (void *)(uintptr_t)stream, &ms);
    Py_END_ALLOW_THREADS
    s->prepared = st == BGNN_OK;
    if (st != BGNN_OK) return bgnn_ext_raise(CTX(self), st);
    return PyFloat_FromDouble(ms);
}

static PyObject *sess_output_info(PyObject *self, PyObject *args) {
    int i;
    if (!PyArg_ParseTuple(args, "i", &i)) return NULL;
    bgnn_tensor_info t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    bgnn_status st = bgnn_session_output_info(SES(self), i, &t);
    if (st != BGNN_OK) return bgnn_ext_raise(CTX(self), st);
    ((SessionObject *)self)->prepared = 1;
    PyObject *dims = t.rank == 1 ? Py_BuildValue("(L)", (long long)t.dim[0])
                                 : Py_BuildValue("(LL)", (long long)t.dim[0], (long long)t.dim[1]);
    if (!dims) return NULL;
    return Py_BuildValue("{s:s,s:s,s:N,s:L,s:n}", "name", t.name ? t.name : "", "dtype",
                         t.dtype == BGNN_B1 ? "b1" : "f32", "shape", dims, "words_per_row",
                         (long long)t.words_per_row, "bytes", (Py_ssize_t)t.bytes);
}

static PyObject *sess_output_index(PyObject *self, PyObject *args) {
    const char *name;
    int i = -1;
    if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
    bgnn_status st = bgnn_session_output_index(SES(self), name, &i);
    if (st != BGNN_OK) return bgnn_ext_raise(CTX(self), st);
    return PyLong_FromLong(i);
}

static PyObject *sess_read_output(PyObject *self, PyObject *args) {
    int i;
    unsigned long long addr;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "iKn", &i, &addr, &n)) return NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_session_read_output(SES(self), i, (void *)(uintptr_t)addr, (size_t)n);
    Py_END_ALLOW_THREADS
    return check(self, st);
}

static PyObject *sess_output_device_ptr(PyObject *self, PyObject *args) {
    int i;
    if (!PyArg_ParseTuple(args, "i", &i)) return NULL;
    uint64_t p = 0;
    bgnn_status st = bgnn_session_output_device_ptr(SES(self), i, &p);
    if (st != BGNN_OK) return bgnn_ext_raise(CTX(self), st);
    return PyLong_FromUnsignedLongLong(p);
}

static PyObject *sess_input_device_ptr(PyObject *self, PyObject *unused) {
    (void)unused;
    uint64_t p = 0;
    bgnn_status st = bgnn_session_input_device_ptr(SES(self), &p);
    if (st != BGNN_OK) return bgnn_ext_raise(CTX(self), st);
    return PyLong_FromUnsignedLongLong(p);
}

static PyObject *sess_accuracy(PyObject *self, PyObject *args) {
    int i;
    const char *split = NULL;
    if (!PyArg_ParseTuple(args, "i|z", &i, &split)) return NULL;
    double pct = 0;
    bgnn_status st = bgnn_session_accuracy(SES(self), i, split, &pct);
    if (st != BGNN_OK) return bgnn_ext_raise(CTX(self), st);
    return PyFloat_FromDouble(pct);
}

/* output_dlpack(i, device_id, versioned=False): a DLPack capsule over output i's buffer. */
static PyObject *sess_output_dlpack(PyObject *self, PyObject *args) {
    int i, dev, versioned = 0;
    if (!PyArg_ParseTuple(args, "ii|p", &i, &dev, &versioned)) return NULL;
    bgnn_tensor_info t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    bgnn_status st = bgnn_session_output_info(SES(self), i, &t);
    uint64_t p = 0;
    if (st == BGNN_OK) st = bgnn_session_output_device_ptr(SES(self), i, &p);
    if (st != BGNN_OK) return bgnn_ext_raise(CTX(self), st);
    int64_t dims[2] = {t.dim[0], t.rank == 2 ? t.dim[1] : 0};
    if (t.dtype == BGNN_B1) dims[t.rank - 1] = t.words_per_row; /* packed uint32 words */
    return bgnn_ext_dlpack((SessionObject *)self, p, 2, dev, t.rank, dims, t.dtype == BGNN_B1 ? 1 : 2, 32,
                           versioned);
}

/* _dlpack_host(addr, rows, cols, versioned): a host (kDLCPU) float32 capsule owned by this
 * session, for the tests of the capsule machinery on machines without a GPU. */
static PyObject *sess_dlpack_host(PyObject *self, PyObject *args) {
    unsigned long long addr;
    long long rows, cols;
    int versioned = 0;
    if (!PyArg_ParseTuple(args, "KLL|p", &addr, &rows, &cols, &versioned)) return NULL;
    int64_t dims[2] = {rows, cols};
    return bgnn_ext_dlpack((SessionObject *)self, addr, 1, 0, 2, dims, 2, 32, versioned);
}

static PyObject *sess_exports(PyObject *self, PyObject *unused) {
    (void)unused;
    return PyLong_FromSsize_t(((SessionObject *)self)->exports);
}

static PyMethodDef sess_methods[] = {
    {"load_data", sess_load_data, METH_VARARGS, "load_data(dir)"},
    {"set_graph_csr", sess_set_graph_csr, METH_VARARGS, "set_graph_csr(n, rowptr_addr, col_addr, ngraphs, graph_ptr_addr)"},
    {"set_graph_coo", sess_set_graph_coo, METH_VARARGS, "set_graph_coo(n, nnz, row_addr, col_addr, ngraphs, graph_ptr_addr)"},
    {"set_graph_file", sess_set_graph_file, METH_VARARGS, "set_graph_file(path)"},
    {"set_features", sess_set_features, METH_VARARGS, "set_features(addr, rows, cols): float32, copied"},
    {"set_features_file", sess_set_features_file, METH_VARARGS, "set_features_file(path)"},
    {"set_features_device", sess_set_features_device, METH_VARARGS, "set_features_device(dptr, rows, cols): borrowed"},
    {"set_requests", sess_set_requests, METH_VARARGS, "set_requests(k): k feature sets a run"},
    {"set_weights", sess_set_weights, METH_VARARGS, "set_weights(path)"},
    {"set_weights_tensor", sess_set_weights_tensor, METH_VARARGS, "set_weights_tensor(name, addr, shape): float32"},
    {"clear_weights", sess_clear_weights, METH_NOARGS, "clear_weights()"},
    {"prepare", sess_prepare, METH_NOARGS, "prepare()"},
    {"run", sess_run, METH_VARARGS, "run(stream=0)"},
    {"time", sess_time, METH_VARARGS, "time(repeat, stream=0) -> median ms"},
    {"output_info", sess_output_info, METH_VARARGS, "output_info(i) -> dict"},
    {"output_index", sess_output_index, METH_VARARGS, "output_index(name) -> int"},
    {"read_output", sess_read_output, METH_VARARGS, "read_output(i, addr, nbytes)"},
    {"output_device_ptr", sess_output_device_ptr, METH_VARARGS, "output_device_ptr(i) -> int"},
    {"input_device_ptr", sess_input_device_ptr, METH_NOARGS, "input_device_ptr() -> int"},
    {"accuracy", sess_accuracy, METH_VARARGS, "accuracy(i, split=None) -> percent"},
    {"output_dlpack", sess_output_dlpack, METH_VARARGS, "output_dlpack(i, device_id, versioned=False) -> DLPack capsule"},
    {"exports", sess_exports, METH_NOARGS, "live DLPack views of the device outputs"},
    {"_dlpack_host", sess_dlpack_host, METH_VARARGS, "tests: a host capsule owned by the session"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot sess_slots[] = {
    {Py_tp_dealloc, (void *)sess_dealloc},
    {Py_tp_methods, sess_methods},
    {Py_tp_doc, "one bound graph, features and weights (bgnn_session); made by Model.session()"},
    {0, NULL},
};
static PyType_Spec sess_spec = {"bgnn._bgnn.Session", sizeof(SessionObject), 0, Py_TPFLAGS_DEFAULT, sess_slots};

PyType_Spec *bgnn_ext_session_spec(void) { return &sess_spec; }
