/* ext_module.c - the module bgnn._bgnn: BgnnError (carrying the C diagnostics of
 * bgnn_context_last_error), Context (a device or the CPU) and Model (a compiled .bgnn or a
 * loaded cubin) objects.  Sessions: ext_session.c.  ext.h says how arrays and ownership
 * cross. */
#include "ext.h"

#include <string.h>

PyObject *bgnn_ext_error;
PyTypeObject *bgnn_ext_session_type;
static PyTypeObject *ctx_type, *model_type;

static const char *status_name(bgnn_status st) {
    switch (st) {
    case BGNN_OK: return "OK";
    case BGNN_ERR_INVALID_ARG: return "INVALID_ARG";
    case BGNN_ERR_SYNTAX: return "SYNTAX";
    case BGNN_ERR_TYPE: return "TYPE";
    case BGNN_ERR_IO: return "IO";
    case BGNN_ERR_DATA: return "DATA";
    case BGNN_ERR_NVRTC: return "NVRTC";
    case BGNN_ERR_CUDA: return "CUDA";
    case BGNN_ERR_NO_DEVICE: return "NO_DEVICE";
    case BGNN_ERR_ARCH: return "ARCH";
    case BGNN_ERR_DRIVER: return "DRIVER";
    case BGNN_ERR_MANIFEST: return "MANIFEST";
    case BGNN_ERR_NOMEM: return "NOMEM";
    case BGNN_ERR_DEVICE_MEMORY: return "DEVICE_MEMORY";
    case BGNN_ERR_UNSUPPORTED: return "UNSUPPORTED";
    case BGNN_ERR_STATE: return "STATE";
    case BGNN_ERR_INTERNAL: return "INTERNAL";
    }
    return "UNKNOWN";
}

PyObject *bgnn_ext_raise(bgnn_context *c, bgnn_status st) {
    const char *text = c ? bgnn_context_last_error(c) : "";
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == ' ')) n--;
    PyObject *msg = n ? PyUnicode_DecodeUTF8(text, (Py_ssize_t)n, "replace")
                      : PyUnicode_FromString(bgnn_status_string(st));
    if (!msg) return NULL;
    /* BgnnError(message) with .status (int) and .status_name ("DATA") */
    PyObject *exc = PyObject_CallFunctionObjArgs(bgnn_ext_error, msg, NULL);
    Py_DECREF(msg);
    if (!exc) return NULL;
    PyObject *code = PyLong_FromLong((long)st), *name = PyUnicode_FromString(status_name(st));
    if (code && name && PyObject_SetAttrString(exc, "status", code) == 0 &&
        PyObject_SetAttrString(exc, "status_name", name) == 0)
        PyErr_SetObject(bgnn_ext_error, exc);
    Py_XDECREF(code);
    Py_XDECREF(name);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *alloc(PyTypeObject *t) {
    allocfunc a = (allocfunc)PyType_GetSlot(t, Py_tp_alloc);
    return a(t, 0);
}

static void free_self(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

/* ---- Context ------------------------------------------------------------------------------ */
static PyObject *ctx_new(PyTypeObject *t, PyObject *args, PyObject *kw) {
    static char *kws[] = {"target", "device", "cache_dir", "disable_cache", "arch", "fp_strict", NULL};
    int target = 0, device = 0, disable = 0, fp_strict = 0;
    const char *cache = NULL, *arch = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|iizpzp", kws, &target, &device, &cache, &disable, &arch,
                                     &fp_strict))
        return NULL;
    bgnn_context_options o;
    bgnn_context_options_init(&o);
    o.target = (bgnn_target)target;
    o.device = device;
    o.cache_dir = cache;
    o.disable_cache = disable;
    o.arch = arch;
    o.fp_strict = fp_strict;
    bgnn_context *c = NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_context_create(&o, &c);
    Py_END_ALLOW_THREADS
    if (st != BGNN_OK) {
        bgnn_ext_raise(c, st);
        bgnn_context_destroy(c);
        return NULL;
    }
    CtxObject *self = (CtxObject *)alloc(t);
    if (!self) {
        bgnn_context_destroy(c);
        return NULL;
    }
    self->c = c;
    return (PyObject *)self;
}

static void ctx_dealloc(PyObject *o) {
    bgnn_context_destroy(((CtxObject *)o)->c);
    free_self(o);
}

static PyObject *model_wrap(PyObject *ctx, bgnn_model *m) {
    ModelObject *mo = (ModelObject *)alloc(model_type);
    if (!mo) {
        bgnn_model_destroy(m);
        return NULL;
    }
    mo->m = m;
    Py_INCREF(ctx);
    mo->ctx = ctx;
    return (PyObject *)mo;
}

static PyObject *ctx_compile(PyObject *self, PyObject *args) {
    const char *src, *name;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y#s", &src, &n, &name)) return NULL;
    bgnn_context *c = ((CtxObject *)self)->c;
    bgnn_model *m = NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_model_compile(c, src, (size_t)n, name, &m);
    Py_END_ALLOW_THREADS
    if (st != BGNN_OK) return bgnn_ext_raise(c, st);
    return model_wrap(self, m);
}

static PyObject *ctx_compile_file(PyObject *self, PyObject *args) {
    const char *path;
    int cubin = 0;
    if (!PyArg_ParseTuple(args, "s|p", &path, &cubin)) return NULL;
    bgnn_context *c = ((CtxObject *)self)->c;
    bgnn_model *m = NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cubin ? bgnn_model_load_cubin(c, path, &m) : bgnn_model_compile_file(c, path, &m);
    Py_END_ALLOW_THREADS
    if (st != BGNN_OK) return bgnn_ext_raise(c, st);
    return model_wrap(self, m);
}

static PyObject *ctx_target(PyObject *self, PyObject *unused) {
    (void)unused;
    return PyLong_FromLong((long)bgnn_context_target(((CtxObject *)self)->c));
}

static PyObject *ctx_device_name(PyObject *self, PyObject *unused) {
    (void)unused;
    return PyUnicode_FromString(bgnn_context_device_name(((CtxObject *)self)->c));
}

static PyMethodDef ctx_methods[] = {
    {"compile", ctx_compile, METH_VARARGS, "compile(source: bytes, name: str) -> Model"},
    {"compile_file", ctx_compile_file, METH_VARARGS, "compile_file(path, cubin=False) -> Model"},
    {"target", ctx_target, METH_NOARGS, "1: CPU reference, 2: GPU"},
    {"device_name", ctx_device_name, METH_NOARGS, "the device in words"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot ctx_slots[] = {
    {Py_tp_new, (void *)ctx_new},
    {Py_tp_dealloc, (void *)ctx_dealloc},
    {Py_tp_methods, ctx_methods},
    {Py_tp_doc, "Context(target=0, device=0, cache_dir=None, disable_cache=False, arch=None, fp_strict=False): bgnn_context"},
    {0, NULL},
};
static PyType_Spec ctx_spec = {"bgnn._bgnn.Context", sizeof(CtxObject), 0, Py_TPFLAGS_DEFAULT, ctx_slots};

/* ---- Model -------------------------------------------------------------------------------- */
static void model_dealloc(PyObject *o) {
    ModelObject *m = (ModelObject *)o;
    bgnn_model_destroy(m->m);
    Py_XDECREF(m->ctx);
    free_self(o);
}

static bgnn_context *model_ctx(PyObject *self) { return ((CtxObject *)((ModelObject *)self)->ctx)->c; }

static PyObject *model_info(PyObject *self, PyObject *unused) {
    (void)unused;
    bgnn_model_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    bgnn_status st = bgnn_model_get_info(((ModelObject *)self)->m, &i);
    if (st != BGNN_OK) return bgnn_ext_raise(model_ctx(self), st);
    PyObject *names = PyTuple_New(i.noutputs);
    if (!names) return NULL;
    for (int k = 0; k < i.noutputs; k++) {
        const char *nm = bgnn_model_output_name(((ModelObject *)self)->m, k);
        PyObject *s = PyUnicode_FromString(nm ? nm : "");
        if (!s) {
            Py_DECREF(names);
            return NULL;
        }
        PyTuple_SetItem(names, k, s);
    }
    return Py_BuildValue("{s:s,s:z,s:d,s:O,s:O,s:i,s:N}", "name", i.name ? i.name : "", "arch", i.arch,
                         "compile_ms", i.compile_ms, "cache_hit", i.cache_hit ? Py_True : Py_False, "from_cubin",
                         i.from_cubin ? Py_True : Py_False, "nkernels", i.nkernels, "outputs", names);
}

static PyObject *model_random_weights(PyObject *self, PyObject *args) {
    unsigned long long seed;
    const char *path;
    if (!PyArg_ParseTuple(args, "Ks", &seed, &path)) return NULL;
    bgnn_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bgnn_model_write_random_weights(((ModelObject *)self)->m, (uint64_t)seed, path);
    Py_END_ALLOW_THREADS
    if (st != BGNN_OK) return bgnn_ext_raise(model_ctx(self), st);
    Py_RETURN_NONE;
}

static PyObject *model_session(PyObject *self, PyObject *unused) {
    (void)unused;
    return bgnn_ext_session_new(self);
}

static PyMethodDef model_methods[] = {
    {"info", model_info, METH_NOARGS, "dict: name, arch, compile_ms, cache_hit, from_cubin, nkernels, outputs"},
    {"write_random_weights", model_random_weights, METH_VARARGS, "write_random_weights(seed, path)"},
    {"session", model_session, METH_NOARGS, "a new Session"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot model_slots[] = {
    {Py_tp_dealloc, (void *)model_dealloc},
    {Py_tp_methods, model_methods},
    {Py_tp_doc, "a compiled model (bgnn_model); made by Context.compile*"},
    {0, NULL},
};
static PyType_Spec model_spec = {"bgnn._bgnn.Model", sizeof(ModelObject), 0, Py_TPFLAGS_DEFAULT, model_slots};

bgnn_context *bgnn_ext_session_ctx(SessionObject *s) { return model_ctx(s->model); }

PyObject *bgnn_ext_session_new(PyObject *model) {
    bgnn_session *s = NULL;
    bgnn_status st = bgnn_session_create(((ModelObject *)model)->m, &s);
    if (st != BGNN_OK) return bgnn_ext_raise(model_ctx(model), st);
    SessionObject *so = (SessionObject *)alloc(bgnn_ext_session_type);
    if (!so) {
        bgnn_session_destroy(s);
        return NULL;
    }
    so->s = s;
    Py_INCREF(model);
    so->model = model;
    return (PyObject *)so;
}

/* ---- the module ------------------------------------------------------------------------ */
static PyObject *mod_version(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    return PyUnicode_FromString(bgnn_version());
}

static PyMethodDef mod_methods[] = {
    {"version", mod_version, METH_NOARGS, "the C library's version"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef mod_def = {PyModuleDef_HEAD_INIT, "_bgnn", "bgnn's C API (bgnn/bgnn.h), thinly", -1,
                                     mod_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__bgnn(void) {
    PyObject *m = PyModule_Create(&mod_def);
    if (!m) return NULL;
    ctx_type = (PyTypeObject *)PyType_FromSpec(&ctx_spec);
    model_type = (PyTypeObject *)PyType_FromSpec(&model_spec);
    bgnn_ext_session_type = (PyTypeObject *)PyType_FromSpec(bgnn_ext_session_spec());
    if (!ctx_type || !model_type || !bgnn_ext_session_type) goto fail;
    if (!bgnn_ext_error)
        bgnn_ext_error = PyErr_NewExceptionWithDoc("bgnn.BgnnError",
                                                   "a bgnn call failed; str() is the C library's diagnostic text "
                                                   "(bgnn_context_last_error), .status / .status_name its bgnn_status",
                                                   PyExc_RuntimeError, NULL);
    if (!bgnn_ext_error) goto fail;
    Py_INCREF(ctx_type);
    Py_INCREF(model_type);
    Py_INCREF(bgnn_ext_session_type);
    Py_INCREF(bgnn_ext_error);
    if (PyModule_AddObject(m, "Context", (PyObject *)ctx_type) < 0 ||
        PyModule_AddObject(m, "Model", (PyObject *)model_type) < 0 ||
        PyModule_AddObject(m, "Session", (PyObject *)bgnn_ext_session_type) < 0 ||
        PyModule_AddObject(m, "BgnnError", bgnn_ext_error) < 0)
        goto fail;
    PyModule_AddIntConstant(m, "TARGET_AUTO", BGNN_TARGET_AUTO);
    PyModule_AddIntConstant(m, "TARGET_CPU", BGNN_TARGET_CPU);
    PyModule_AddIntConstant(m, "TARGET_GPU", BGNN_TARGET_GPU);
    PyModule_AddIntConstant(m, "F32", BGNN_F32);
    PyModule_AddIntConstant(m, "B1", BGNN_B1);
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
