/* _fastcall.c — the hot path of calling a compiled kernel from Python, in C.
 *
 * tilescale.Kernel and tilelang.JITKernel are Python subclasses of Launcher, and tilelang's
 * JITImpl (what @tilelang.jit returns) of Dispatcher, so calling one of them runs tp_call here:
 *
 *   Launcher    each torch tensor's dtype, shape, stride(), data_ptr() and device
 *               -> outputs the call leaves out: torch.empty (torch's caching allocator)
 *               -> torch's current stream of the tensors' device
 *               -> ts_kernel_launch, which checks every argument (dtype, rank, static and bound
 *                  dynamic dims, strides, device, null and misaligned pointers, TMA strides)
 *                  and names the parameter in its error, raised as tilescale.TileScaleError
 *   Dispatcher  an eager kernel's call: the call's tensors (shape, strides, dtype) and plain
 *               values compared with the calls remembered so far -> that call's Launcher
 *
 * What this file does not handle goes to the object's Python method _call_py, the whole call
 * path when the extension is not built: keyword arguments (stream=...), tilescale.Tensor views,
 * scalars that are not int or float, outputs whose extents need the kernel's IR signature,
 * calls made before torch was seen, and every call whose argument count is wrong (the Python
 * path words those errors).
 *
 * Torch without its headers: a tensor is read through its Python attributes, looked up with
 * interned names through the CPython API (tp_getattro and vectorcall, no dict or tuple built on
 * our side).  That works with every torch release, since torch keeps its Python API stable and
 * its C++ ABI is not (reading TensorImpl fields would break with each release).  The other
 * protocols cost more per call: torch's __cuda_array_interface__ is a Python property that
 * builds a dict (microseconds), and DLPack makes a capsule and a stream handshake per call.
 * The entry points come from torch at run time, handed over by set_torch():
 * torch._C._cuda_getCurrentRawStream (an int, no Stream object), torch.empty, torch.device.
 * Nothing here names torch: tests hand over stand-ins.
 *
 * The library without linking: init() receives the addresses of ts_kernel_launch and
 * ts_last_error from the ctypes binding, so the extension always calls the libtilescale that
 * Python loaded ($TILESCALE_LIB, the wheel's copy or the build folder's), never a second copy.
 *
 * Module state lives in statics: the module is initialised once per process (single-phase
 * init), and every entry is touched with the GIL held.  The GIL is held during the launch too,
 * as torch does for its own launches: it also serialises launches on the shared ts_context. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "tilescale.h"

#define MAX_ARGS 32     /* parameters of a kernel taken on this path (more: the Python path) */
#define MAX_DIMS 8      /* ts_arg_info.shape */
#define MAX_DEVICES 64
#define MAX_ENTRIES 16  /* eager calls remembered by one Dispatcher */
#define MAX_DTYPES 32

typedef ts_status (*LaunchFn)(ts_kernel *, const ts_arg *, int, void *);
typedef const char *(*LastErrorFn)(const ts_context *);

static struct {
  LaunchFn launch;
  LastErrorFn last_error;
  PyObject *error_type;                   /* tilescale.TileScaleError */
  PyObject *status_names;                 /* tuple: ts_status -> "TS_ERR_..." */
  /* torch, from set_torch(); tensor_type NULL until then */
  PyTypeObject *tensor_type;
  int ndtypes;
  PyObject *dtype_obj[MAX_DTYPES];        /* torch dtype objects ... */
  int dtype_id[MAX_DTYPES];               /* ... and their ts_dtype */
  PyObject *torch_dtype[TS_DTYPE_COUNT];  /* ts_dtype -> the dtype torch.empty is given */
  PyObject *current_stream;               /* f(device index) -> CUstream as an int */
  PyObject *empty;                        /* f(shape, *, dtype, device) -> tensor */
  PyObject *device_ctor;                  /* f("cuda", index) -> device */
  PyObject *devices[MAX_DEVICES];         /* device objects, made on first use */
  PyObject *indices[MAX_DEVICES];         /* the device indices as ints */
} G;

static PyObject *s_dtype, *s_shape, *s_stride, *s_data_ptr, *s_get_device, *s_is_cuda, *s_call_py, *s_cuda,
    *empty_kwnames;

/* ---- reading a tensor ----------------------------------------------------------------- */
/* What a launch needs of one tensor argument, read once per call. */
typedef struct Meta {
  int ok;                /* 1: read from a tensor; 0: the argument is not a tensor */
  PyObject *dtype;       /* identity only: kept alive by G.dtype_obj when id >= 0 */
  int id;                /* ts_dtype */
  int ndim;
  int device;            /* CUDA ordinal, -1 when not a CUDA tensor */
  void *data;
  int64_t shape[MAX_DIMS], strides[MAX_DIMS];
} Meta;

/* obj.name() through vectorcall; args[0] is scratch the callee may use (the OFFSET flag). */
static PyObject *call_method0(PyObject *obj, PyObject *name) {
  PyObject *args[2] = {NULL, obj};
  return PyObject_VectorcallMethod(name, args + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

static PyObject *call1(PyObject *fn, PyObject *arg) {
  PyObject *args[2] = {NULL, arg};
  return PyObject_Vectorcall(fn, args + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

static int dtype_lookup(PyObject *dtype) {
  for (int i = 0; i < G.ndtypes; i++)
    if (G.dtype_obj[i] == dtype) return G.dtype_id[i];
  return -1;
}

/* A tuple of ints (torch.Size, stride()) into out: 1, or 0 when it is not a tuple of at most
 * MAX_DIMS ints (the Python path handles it), -1 on error. */
static int read_dims(PyObject *t, int64_t *out, int *n) {
  if (!t) return -1;
  int r = 0;
  if (PyTuple_Check(t) && PyTuple_GET_SIZE(t) <= MAX_DIMS) {
    *n = (int)PyTuple_GET_SIZE(t);
    r = 1;
    for (int i = 0; i < *n && r == 1; i++) {
      PyObject *v = PyTuple_GET_ITEM(t, i);
      if (!PyLong_Check(v)) r = 0;
      else if ((out[i] = PyLong_AsLongLong(v)) == -1 && PyErr_Occurred()) r = -1;
    }
  }
  Py_DECREF(t);
  return r;
}

/* 1: m filled; 0: x is not a tensor this path reads; -1: error (exception set). */
static int read_tensor(PyObject *x, Meta *m) {
  m->ok = 0;
  if (!G.tensor_type || !PyObject_TypeCheck(x, G.tensor_type)) return 0;
  PyObject *v = PyObject_GetAttr(x, s_dtype);
  if (!v) return -1;
  m->dtype = v;
  m->id = dtype_lookup(v);
  Py_DECREF(v);
  if (m->id < 0) return 0; /* a dtype the library has no name for: the Python path says so */
  int nstrides = -1, r;
  if ((r = read_dims(PyObject_GetAttr(x, s_shape), m->shape, &m->ndim)) != 1) return r;
  if ((r = read_dims(call_method0(x, s_stride), m->strides, &nstrides)) != 1) return r;
  if (nstrides != m->ndim) return 0;
  if (!(v = call_method0(x, s_data_ptr))) return -1;
  m->data = PyLong_AsVoidPtr(v);
  Py_DECREF(v);
  if (!m->data && PyErr_Occurred()) return -1;
  if (!(v = PyObject_GetAttr(x, s_is_cuda))) return -1;
  int cuda = PyObject_IsTrue(v);
  Py_DECREF(v);
  if (cuda < 0) return -1;
  m->device = -1;
  if (cuda) {
    if (!(v = call_method0(x, s_get_device))) return -1;
    long d = PyLong_AsLong(v);
    Py_DECREF(v);
    if (d == -1 && PyErr_Occurred()) return -1;
    if (d < 0 || d >= MAX_DEVICES) return 0;
    m->device = (int)d;
  }
  m->ok = 1;
  return 1;
}

/* ---- Launcher ------------------------------------------------------------------------ */
typedef struct Param {
  int tensor;                      /* 1: tensor, 0: scalar */
  int dtype;                       /* ts_dtype */
  int is_float;                    /* scalars: passed as ts_arg.f */
  int output;                      /* allocated when the call leaves the outputs out */
  int ndim;                        /* outputs: */
  int64_t dim[MAX_DIMS];           /*   static extent, or -1: src_param's dimension src_dim */
  int src_param[MAX_DIMS], src_dim[MAX_DIMS];
  PyObject *shape;                 /*   the shape tuple when every extent is static */
} Param;

typedef struct Launcher {
  PyObject_HEAD
  ts_kernel *kernel;               /* NULL: not set up, every call takes the Python path */
  ts_context *ctx;
  int device;                      /* the context's device: outputs of calls with no CUDA tensor */
  int nparams, ninputs, noutputs;
  int alloc_ok;                    /* every output's extents are known from the inputs */
  int return_list;                 /* several outputs: a list (tilelang), else a tuple */
  Param *params;
  PyObject *owner;                 /* kept alive while the launcher lives (the ts_kernel's owner) */
} Launcher;

static PyTypeObject LauncherType;

static PyObject *call_py(PyObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *m = PyObject_GetAttr(self, s_call_py);
  if (!m) return NULL;
  PyObject *r = PyObject_Call(m, args, kwargs);
  Py_DECREF(m);
  return r;
}

/* Raises TileScaleError(status name, ts_last_error text), as the ctypes binding does. */
static void raise_status(const Launcher *L, ts_status st) {
  const char *msg = G.last_error ? G.last_error(L->ctx) : NULL;
  PyObject *name = NULL, *text = NULL, *exc = NULL;
  if (G.status_names && (Py_ssize_t)st < PyTuple_GET_SIZE(G.status_names)) {
    name = PyTuple_GET_ITEM(G.status_names, st);
    Py_INCREF(name);
  } else {
    name = PyUnicode_FromFormat("TS_STATUS_%d", (int)st);
  }
  text = msg && *msg ? PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace") : name;
  if (text == name) Py_XINCREF(text);
  if (name && text) exc = PyObject_CallFunctionObjArgs(G.error_type, name, text, NULL);
  if (exc) PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
  Py_XDECREF(exc);
  Py_XDECREF(name);
  Py_XDECREF(text);
}

static PyObject *device_object(int dev) {
  if (!G.devices[dev]) {
    PyObject *args[3] = {NULL, s_cuda, G.indices[dev]};
    PyObject *d = PyObject_Vectorcall(G.device_ctor, args + 1, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    if (!d) return NULL;
    if (G.devices[dev]) Py_DECREF(d); /* made meanwhile by another thread (the call can drop the GIL) */
    else G.devices[dev] = d;
  }
  return G.devices[dev];
}

/* A scalar argument into a: 1, 0 for a value the Python path converts (its int()/float())
 * or rejects with an error naming the parameter (an int beyond 64 bits), -1 on error. */
static int read_scalar(const Param *p, PyObject *x, ts_arg *a) {
  a->kind = TS_ARG_SCALAR;
  a->i = 0;
  a->f = 0;
  if (p->is_float) {
    if (PyFloat_CheckExact(x)) a->f = PyFloat_AS_DOUBLE(x);
    else if (PyLong_Check(x)) {
      if ((a->f = PyLong_AsDouble(x)) == -1.0 && PyErr_Occurred()) return -1;
    } else return 0;
    return 1;
  }
  if (!PyLong_Check(x)) return 0;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (overflow) return 0;
  a->i = v;
  return 1;
}

/* torch.empty(*extents, dtype=dtype, device=devobj): the extents as separate ints, which
 * torch parses in about half the time of one shape tuple (2.9 against 4.6 µs a call, H200
 * host); `shape` holds them when they are static, else they are made from `ext`.  A 0-d
 * output passes the empty tuple (torch.empty needs a size). */
static PyObject *new_output(int ndim, PyObject *shape, const int64_t *ext, PyObject *dtype, PyObject *devobj) {
  PyObject *eargs[MAX_DIMS + 4], *t = NULL;
  int n = ndim ? ndim : 1, made = 0;
  eargs[0] = NULL;
  if (ndim == 0) {
    if (!(eargs[1] = PyTuple_New(0))) return NULL;
    made = 1;
  } else if (shape) {
    for (int d = 0; d < ndim; d++) eargs[1 + d] = PyTuple_GET_ITEM(shape, d);
  } else {
    for (int d = 0; d < ndim; d++) {
      if (!(eargs[1 + d] = PyLong_FromLongLong(ext[d]))) {
        for (int k = 0; k < d; k++) Py_DECREF(eargs[1 + k]);
        return NULL;
      }
    }
    made = ndim;
  }
  eargs[1 + n] = dtype;
  eargs[2 + n] = devobj;
  t = PyObject_Vectorcall(G.empty, eargs + 1, (size_t)n | PY_VECTORCALL_ARGUMENTS_OFFSET, empty_kwnames);
  for (int k = 0; k < made; k++) Py_DECREF(eargs[1 + k]);
  return t;
}

/* Launches L with the n arguments argv (given: their tensors already read, or NULL).
 * 1: *result is the call's value; 0: the Python path must take the call (nothing launched);
 * -1: error, exception set. */
static int launch(Launcher *L, PyObject *const *argv, Py_ssize_t n, const Meta *given, PyObject **result) {
  int alloc;
  if (!L->kernel || !G.tensor_type || !G.launch) return 0;
  if (n == L->nparams) alloc = 0;
  else if (n == L->ninputs && L->noutputs > 0 && L->alloc_ok) alloc = 1;
  else return 0;

  ts_arg args[MAX_ARGS];
  Meta metas[MAX_ARGS];
  PyObject *outs[MAX_ARGS];
  int nouts = 0, dev = -1, r = 0;
  Py_ssize_t j = 0;
  for (int i = 0; i < L->nparams; i++) {
    const Param *p = &L->params[i];
    if (alloc && p->output) continue;
    PyObject *x = argv[j];
    if (!p->tensor) {
      if ((r = read_scalar(p, x, &args[i])) != 1) return r;
      j++;
      continue;
    }
    Meta *m = &metas[i];
    if (given) *m = given[j];
    else if ((r = read_tensor(x, m)) < 0) return -1;
    if (!m->ok) return 0;
    ts_arg *a = &args[i];
    a->kind = TS_ARG_TENSOR;
    a->tensor.data = m->data;
    a->tensor.dtype = (ts_dtype)m->id;
    a->tensor.ndim = m->ndim;
    a->tensor.shape = m->shape;
    a->tensor.strides = m->strides;
    a->tensor.device = m->device;
    a->i = 0;
    a->f = 0;
    if (dev < 0) dev = m->device;
    j++;
  }
  if (dev < 0) dev = L->device;
  if (dev < 0 || dev >= MAX_DEVICES) return 0;

  if (alloc) {
    for (int i = 0; i < L->nparams; i++) {
      const Param *p = &L->params[i];
      if (!p->output) continue;
      PyObject *dtype = G.torch_dtype[p->dtype], *devobj = device_object(dev), *shape = p->shape;
      if (!devobj) goto fail;
      if (!dtype) {
        r = 0;
        goto undo;
      }
      Meta *m = &metas[i];
      m->ndim = p->ndim;
      for (int d = 0; d < p->ndim; d++) {
        if (p->dim[d] >= 0) {
          m->shape[d] = p->dim[d];
          continue;
        }
        const Meta *src = &metas[p->src_param[d]];
        if (p->src_dim[d] >= src->ndim) { /* an input of the wrong rank: the Python path words it */
          r = 0;
          goto undo;
        }
        m->shape[d] = src->shape[p->src_dim[d]];
      }
      PyObject *t = new_output(p->ndim, shape, m->shape, dtype, devobj);
      if (!t) goto fail;
      outs[nouts++] = t;
      PyObject *ptr = call_method0(t, s_data_ptr);
      if (!ptr) goto fail;
      m->data = PyLong_AsVoidPtr(ptr);
      Py_DECREF(ptr);
      if (!m->data && PyErr_Occurred()) goto fail;
      ts_arg *a = &args[i];
      a->kind = TS_ARG_TENSOR;
      a->tensor.data = m->data;
      a->tensor.dtype = (ts_dtype)p->dtype;
      a->tensor.ndim = p->ndim;
      a->tensor.shape = m->shape;
      a->tensor.strides = NULL; /* torch.empty is compact row-major */
      a->tensor.device = dev;
      a->i = 0;
      a->f = 0;
    }
  }

  PyObject *s = call1(G.current_stream, G.indices[dev]);
  if (!s) goto fail;
  void *stream = PyLong_AsVoidPtr(s);
  Py_DECREF(s);
  if (!stream && PyErr_Occurred()) goto fail;
  ts_status st = G.launch(L->kernel, args, L->nparams, stream);
  if (st != TS_OK) {
    raise_status(L, st);
    goto fail;
  }
  if (!alloc) {
    Py_INCREF(Py_None);
    *result = Py_None;
  } else if (nouts == 1) {
    *result = outs[0];
  } else {
    PyObject *seq = L->return_list ? PyList_New(nouts) : PyTuple_New(nouts);
    if (!seq) goto fail;
    for (int k = 0; k < nouts; k++) {
      if (L->return_list) PyList_SET_ITEM(seq, k, outs[k]);
      else PyTuple_SET_ITEM(seq, k, outs[k]);
    }
    *result = seq;
  }
  return 1;
fail:
  r = -1;
undo:
  for (int k = 0; k < nouts; k++) Py_DECREF(outs[k]);
  return r;
}

static PyObject *launcher_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  if (!kwargs || PyDict_GET_SIZE(kwargs) == 0) {
    PyObject *res = NULL;
    int r = launch((Launcher *)self, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args), NULL, &res);
    if (r == 1) return res;
    if (r < 0) return NULL;
  }
  return call_py(self, args, kwargs);
}

static int int_item(PyObject *seq, Py_ssize_t i, long lo, long hi, const char *what, long *out) {
  PyObject *v = PySequence_GetItem(seq, i);
  if (!v) return -1;
  *out = PyLong_AsLong(v);
  Py_DECREF(v);
  if (*out == -1 && PyErr_Occurred()) return -1;
  if (*out < lo || *out >= hi) {
    PyErr_Format(PyExc_ValueError, "_launch_setup: %s %ld out of range", what, *out);
    return -1;
  }
  return 0;
}

/* One parameter: (is_tensor, ts_dtype, is_float, output, out_dims), out_dims None or a
 * sequence whose items are an int extent, (param, dim) of an input tensor, or None. */
static int setup_param(Launcher *L, int i, PyObject *spec) {
  Param *p = &L->params[i];
  long v;
  if (!PySequence_Check(spec) || PySequence_Size(spec) != 5) {
    PyErr_SetString(PyExc_TypeError, "_launch_setup: a parameter is (is_tensor, dtype, is_float, output, dims)");
    return -1;
  }
  if (int_item(spec, 0, 0, 2, "is_tensor", &v)) return -1;
  p->tensor = (int)v;
  if (int_item(spec, 1, 0, TS_DTYPE_COUNT, "dtype", &v)) return -1;
  p->dtype = (int)v;
  if (int_item(spec, 2, 0, 2, "is_float", &v)) return -1;
  p->is_float = (int)v;
  if (int_item(spec, 3, 0, 2, "output", &v)) return -1;
  p->output = (int)v;
  if (!p->output) return 0;
  PyObject *dims = PySequence_GetItem(spec, 4);
  if (!dims) return -1;
  int ok = p->tensor && dims != Py_None && PySequence_Check(dims) && PySequence_Size(dims) <= MAX_DIMS, rc = 0,
      all_static = 1;
  p->ndim = ok ? (int)PySequence_Size(dims) : 0;
  for (int d = 0; ok && d < p->ndim; d++) {
    PyObject *e = PySequence_GetItem(dims, d);
    if (!e) {
      rc = -1;
      break;
    }
    p->dim[d] = -1;
    if (PyLong_Check(e)) {
      p->dim[d] = PyLong_AsLongLong(e);
      if (p->dim[d] < 0) ok = 0;
    } else if (PyTuple_Check(e) && PyTuple_GET_SIZE(e) == 2) {
      long sp = 0, sd = 0;
      if (int_item(e, 0, 0, L->nparams, "source parameter", &sp) || int_item(e, 1, 0, MAX_DIMS, "source dim", &sd))
        rc = -1;
      p->src_param[d] = (int)sp;
      p->src_dim[d] = (int)sd;
      all_static = 0;
    } else {
      ok = 0;
    }
    Py_DECREF(e);
    if (rc) break;
  }
  if (!rc && ok && all_static) {
    if (!(p->shape = PyTuple_New(p->ndim))) rc = -1;
    for (int d = 0; !rc && d < p->ndim; d++) {
      PyObject *x = PyLong_FromLongLong(p->dim[d]);
      if (!x) rc = -1;
      else PyTuple_SET_ITEM(p->shape, d, x);
    }
  }
  if (!ok) L->alloc_ok = 0;
  Py_DECREF(dims);
  return rc;
}

/* _launch_setup(kernel, ctx, device, params, return_list, owner): what a call needs of the
 * kernel, once; kernel and ctx are the ts_kernel / ts_context addresses. */
static PyObject *launcher_setup(PyObject *self, PyObject *args) {
  Launcher *L = (Launcher *)self;
  unsigned long long kernel, ctx;
  int device, return_list;
  PyObject *params, *owner;
  if (!PyArg_ParseTuple(args, "KKiOpO", &kernel, &ctx, &device, &params, &return_list, &owner)) return NULL;
  if (L->params) {
    PyErr_SetString(PyExc_RuntimeError, "_launch_setup: already set up");
    return NULL;
  }
  Py_ssize_t n = PySequence_Size(params);
  if (n < 0) return NULL;
  if (n > MAX_ARGS || !kernel || !G.launch) Py_RETURN_FALSE; /* the Python path takes every call */
  L->params = PyMem_Calloc((size_t)n + 1, sizeof *L->params);
  if (!L->params) return PyErr_NoMemory();
  L->nparams = (int)n;
  L->alloc_ok = 1;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *spec = PySequence_GetItem(params, i);
    if (!spec) return NULL;
    int rc = setup_param(L, (int)i, spec);
    Py_DECREF(spec);
    if (rc) return NULL;
  }
  /* an output's extents come from input tensors only */
  for (int i = 0; i < L->nparams; i++) {
    const Param *p = &L->params[i];
    L->noutputs += p->output;
    for (int d = 0; p->output && d < p->ndim; d++)
      if (p->dim[d] < 0 && (!L->params[p->src_param[d]].tensor || L->params[p->src_param[d]].output))
        L->alloc_ok = 0;
  }
  L->ninputs = L->nparams - L->noutputs;
  L->device = device;
  L->return_list = return_list;
  Py_INCREF(owner);
  Py_XSETREF(L->owner, owner);
  L->ctx = (ts_context *)(uintptr_t)ctx;
  L->kernel = (ts_kernel *)(uintptr_t)kernel;
  Py_RETURN_TRUE;
}

static int launcher_traverse(PyObject *self, visitproc visit, void *arg) {
  Launcher *L = (Launcher *)self;
  Py_VISIT(L->owner);
  return 0;
}

static int launcher_clear(PyObject *self) {
  Launcher *L = (Launcher *)self;
  L->kernel = NULL;
  Py_CLEAR(L->owner);
  return 0;
}

static void launcher_dealloc(PyObject *self) {
  Launcher *L = (Launcher *)self;
  PyObject_GC_UnTrack(self);
  launcher_clear(self);
  if (L->params) {
    for (int i = 0; i < L->nparams; i++) Py_XDECREF(L->params[i].shape);
    PyMem_Free(L->params);
    L->params = NULL;
  }
  Py_TYPE(self)->tp_free(self);
}

static PyObject *launcher_fast(PyObject *self, void *closure) {
  (void)closure;
  return PyBool_FromLong(((Launcher *)self)->kernel != NULL);
}

static PyMethodDef launcher_methods[] = {
    {"_launch_setup", launcher_setup, METH_VARARGS, "_launch_setup(kernel, ctx, device, params, return_list, owner)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef launcher_getset[] = {
    {"_fast", launcher_fast, NULL, "True when calls take the C path", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tilescale._fastcall.Launcher",
    .tp_basicsize = sizeof(Launcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Base of compiled-kernel objects: calling one launches the kernel from C.",
    .tp_new = PyType_GenericNew,
    .tp_call = launcher_call,
    .tp_traverse = launcher_traverse,
    .tp_clear = launcher_clear,
    .tp_dealloc = launcher_dealloc,
    .tp_free = PyObject_GC_Del,
    .tp_methods = launcher_methods,
    .tp_getset = launcher_getset,
};

/* ---- Dispatcher (eager kernels) ------------------------------------------------------ */
/* One argument of a remembered call: a plain value, or a tensor's dtype, shape and strides
 * (what decides an eager kernel's T.const sizes). */
typedef struct Spec {
  PyObject *value;  /* int, float, bool, str or None; NULL for a tensor */
  PyObject *dtype;  /* tensors (a dtype G.dtype_obj holds) */
  int ndim;
  int64_t shape[MAX_DIMS], strides[MAX_DIMS];
} Spec;

typedef struct Entry {
  int nargs;
  Spec *spec;
  PyObject *launcher;  /* the compiled kernel's Launcher */
  int ninputs;
  int where[MAX_ARGS]; /* launcher input k is call argument where[k] */
} Entry;

typedef struct Dispatcher {
  PyObject_HEAD
  Entry entries[MAX_ENTRIES]; /* oldest first */
  int nentries;
} Dispatcher;

/* Values whose == runs no Python code (so the entries cannot change while matching). */
static int plain_value(PyObject *x) {
  return x == Py_None || PyBool_Check(x) || PyLong_CheckExact(x) || PyFloat_CheckExact(x) || PyUnicode_CheckExact(x);
}

static int entry_matches(const Entry *e, PyObject *const *argv, Py_ssize_t n, const Meta *metas) {
  if (e->nargs != n) return 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    const Spec *s = &e->spec[i];
    const Meta *m = &metas[i];
    if (s->value) {
      if (m->ok || Py_TYPE(argv[i]) != Py_TYPE(s->value)) return 0;
      if (argv[i] != s->value && PyObject_RichCompareBool(argv[i], s->value, Py_EQ) != 1) return 0;
      continue;
    }
    if (!m->ok || m->dtype != s->dtype || m->ndim != s->ndim) return 0;
    for (int d = 0; d < m->ndim; d++)
      if (m->shape[d] != s->shape[d] || m->strides[d] != s->strides[d]) return 0;
  }
  return 1;
}

static void entry_clear(Entry *e) {
  for (int i = 0; i < e->nargs; i++) Py_XDECREF(e->spec[i].value);
  PyMem_Free(e->spec);
  e->spec = NULL;
  e->nargs = 0;
  Py_CLEAR(e->launcher);
}

static PyObject *dispatcher_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  Dispatcher *D = (Dispatcher *)self;
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (D->nentries && (!kwargs || PyDict_GET_SIZE(kwargs) == 0) && G.tensor_type && n <= MAX_ARGS) {
    PyObject *const *argv = &PyTuple_GET_ITEM(args, 0);
    Meta metas[MAX_ARGS];
    for (Py_ssize_t i = 0; i < n; i++)
      if (read_tensor(argv[i], &metas[i]) < 0) return NULL;
    /* From here to the launch no Python code runs: the entries stay as they are. */
    for (int k = D->nentries - 1; k >= 0; k--) {
      Entry *e = &D->entries[k];
      if (!entry_matches(e, argv, n, metas)) continue;
      PyObject *kargv[MAX_ARGS];
      Meta given[MAX_ARGS];
      int nin = e->ninputs;
      for (int q = 0; q < nin; q++) {
        kargv[q] = argv[e->where[q]];
        given[q] = metas[e->where[q]];
      }
      PyObject *launcher = e->launcher, *res = NULL;
      Py_INCREF(launcher);
      int r = launch((Launcher *)launcher, kargv, nin, given, &res);
      Py_DECREF(launcher);
      if (r == 1) return res;
      if (r < 0) return NULL;
      break;
    }
  }
  return call_py(self, args, kwargs);
}

/* _fast_remember(args, launcher, where) -> bool: later calls whose arguments match args
 * (tensors by dtype, shape and strides; plain values by type and ==) launch `launcher` with
 * the call's arguments where[0], where[1], ...  False when the call cannot be remembered. */
static PyObject *dispatcher_remember(PyObject *self, PyObject *a) {
  Dispatcher *D = (Dispatcher *)self;
  PyObject *args, *launcher, *where;
  if (!PyArg_ParseTuple(a, "O!OO!", &PyTuple_Type, &args, &launcher, &PyTuple_Type, &where)) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(args), nin = PyTuple_GET_SIZE(where);
  if (!G.tensor_type || n > MAX_ARGS || nin > MAX_ARGS || !PyObject_TypeCheck(launcher, &LauncherType) ||
      !((Launcher *)launcher)->kernel)
    Py_RETURN_FALSE;
  Entry e = {0};
  e.nargs = (int)n;
  e.ninputs = (int)nin;
  for (Py_ssize_t q = 0; q < nin; q++) {
    PyObject *w = PyTuple_GET_ITEM(where, q);
    long v = PyLong_Check(w) ? PyLong_AsLong(w) : -1;
    if (v < 0 || v >= n) {
      PyErr_Clear();
      Py_RETURN_FALSE;
    }
    e.where[q] = (int)v;
  }
  e.spec = PyMem_Calloc((size_t)n + 1, sizeof *e.spec);
  if (!e.spec) return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *x = PyTuple_GET_ITEM(args, i);
    Spec *s = &e.spec[i];
    Meta m;
    int r = read_tensor(x, &m);
    if (r < 0) {
      entry_clear(&e);
      return NULL;
    }
    if (r == 1 && m.id >= 0) {
      s->dtype = m.dtype;
      s->ndim = m.ndim;
      memcpy(s->shape, m.shape, sizeof s->shape);
      memcpy(s->strides, m.strides, sizeof s->strides);
    } else if (r == 0 && plain_value(x)) {
      Py_INCREF(x);
      s->value = x;
    } else {
      entry_clear(&e);
      Py_RETURN_FALSE;
    }
  }
  Py_INCREF(launcher);
  e.launcher = launcher;
  if (D->nentries == MAX_ENTRIES) {
    entry_clear(&D->entries[0]);
    memmove(&D->entries[0], &D->entries[1], sizeof(Entry) * (MAX_ENTRIES - 1));
    D->nentries--;
  }
  D->entries[D->nentries++] = e;
  Py_RETURN_TRUE;
}

static int dispatcher_clear(PyObject *self) {
  Dispatcher *D = (Dispatcher *)self;
  for (int k = 0; k < D->nentries; k++) entry_clear(&D->entries[k]);
  D->nentries = 0;
  return 0;
}

static PyObject *dispatcher_forget(PyObject *self, PyObject *unused) {
  (void)unused;
  dispatcher_clear(self);
  Py_RETURN_NONE;
}

static int dispatcher_traverse(PyObject *self, visitproc visit, void *arg) {
  Dispatcher *D = (Dispatcher *)self;
  for (int k = 0; k < D->nentries; k++) {
    Py_VISIT(D->entries[k].launcher);
    for (int i = 0; i < D->entries[k].nargs; i++) Py_VISIT(D->entries[k].spec[i].value);
  }
  return 0;
}

static void dispatcher_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  dispatcher_clear(self);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *dispatcher_count(PyObject *self, void *closure) {
  (void)closure;
  return PyLong_FromLong(((Dispatcher *)self)->nentries);
}

static PyMethodDef dispatcher_methods[] = {
    {"_fast_remember", dispatcher_remember, METH_VARARGS, "_fast_remember(args, launcher, where) -> bool"},
    {"_fast_forget", dispatcher_forget, METH_NOARGS, "forget every remembered call"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef dispatcher_getset[] = {
    {"_fast_entries", dispatcher_count, NULL, "remembered calls", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject DispatcherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tilescale._fastcall.Dispatcher",
    .tp_basicsize = sizeof(Dispatcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Base of eager kernel functions: calls seen before launch from C.",
    .tp_new = PyType_GenericNew,
    .tp_call = dispatcher_call,
    .tp_traverse = dispatcher_traverse,
    .tp_clear = dispatcher_clear,
    .tp_dealloc = dispatcher_dealloc,
    .tp_free = PyObject_GC_Del,
    .tp_methods = dispatcher_methods,
    .tp_getset = dispatcher_getset,
};

/* ---- module functions -------------------------------------------------------------------- */
/* init(launch_addr, last_error_addr, sizeof_ts_arg, error_type, status_names) */
static PyObject *mod_init(PyObject *mod, PyObject *args) {
  (void)mod;
  unsigned long long launch_addr, err_addr;
  Py_ssize_t arg_size;
  PyObject *error_type, *names;
  if (!PyArg_ParseTuple(args, "KKnOO!", &launch_addr, &err_addr, &arg_size, &error_type, &PyTuple_Type, &names))
    return NULL;
  if (arg_size != (Py_ssize_t)sizeof(ts_arg)) {
    PyErr_Format(PyExc_ImportError, "tilescale._fastcall was built for a ts_arg of %zu bytes, the binding's is %zd",
                 sizeof(ts_arg), arg_size);
    return NULL;
  }
  if (!launch_addr || !err_addr || !PyCallable_Check(error_type)) {
    PyErr_SetString(PyExc_ValueError, "init: the library's functions and the error type are required");
    return NULL;
  }
  G.launch = (LaunchFn)(uintptr_t)launch_addr;
  G.last_error = (LastErrorFn)(uintptr_t)err_addr;
  Py_INCREF(error_type);
  Py_XSETREF(G.error_type, error_type);
  Py_INCREF(names);
  Py_XSETREF(G.status_names, names);
  Py_RETURN_NONE;
}

static void torch_reset(void) {
  Py_CLEAR(G.tensor_type);
  for (int i = 0; i < G.ndtypes; i++) Py_CLEAR(G.dtype_obj[i]);
  G.ndtypes = 0;
  for (int i = 0; i < TS_DTYPE_COUNT; i++) Py_CLEAR(G.torch_dtype[i]);
  Py_CLEAR(G.current_stream);
  Py_CLEAR(G.empty);
  Py_CLEAR(G.device_ctor);
  for (int i = 0; i < MAX_DEVICES; i++) Py_CLEAR(G.devices[i]);
}

/* set_torch(tensor_type, dtypes, current_stream, empty, device) or set_torch(None):
 * dtypes maps torch dtype objects to ts_dtype numbers (the first of each number is the one
 * outputs are allocated with). */
static PyObject *mod_set_torch(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *type, *dtypes = NULL, *stream = NULL, *empty = NULL, *device = NULL;
  if (!PyArg_ParseTuple(args, "O|O!OOO", &type, &PyDict_Type, &dtypes, &stream, &empty, &device)) return NULL;
  torch_reset();
  if (type == Py_None) Py_RETURN_NONE;
  if (!PyType_Check(type) || !dtypes || !PyCallable_Check(stream) || !PyCallable_Check(empty) ||
      !PyCallable_Check(device)) {
    PyErr_SetString(PyExc_TypeError, "set_torch(tensor_type, dtypes, current_stream, empty, device)");
    return NULL;
  }
  if (!G.launch) {
    PyErr_SetString(PyExc_RuntimeError, "set_torch: init() first");
    return NULL;
  }
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(dtypes, &pos, &k, &v)) {
    long id = PyLong_AsLong(v);
    if (id == -1 && PyErr_Occurred()) return NULL;
    if (id <= 0 || id >= TS_DTYPE_COUNT || G.ndtypes == MAX_DTYPES) continue;
    Py_INCREF(k);
    G.dtype_obj[G.ndtypes] = k;
    G.dtype_id[G.ndtypes++] = (int)id;
    if (!G.torch_dtype[id]) {
      Py_INCREF(k);
      G.torch_dtype[id] = k;
    }
  }
  Py_INCREF(stream);
  G.current_stream = stream;
  Py_INCREF(empty);
  G.empty = empty;
  Py_INCREF(device);
  G.device_ctor = device;
  Py_INCREF(type);
  G.tensor_type = (PyTypeObject *)type;
  Py_RETURN_NONE;
}

static PyObject *mod_torch_ready(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  return PyBool_FromLong(G.tensor_type != NULL);
}

static PyMethodDef module_methods[] = {
    {"init", mod_init, METH_VARARGS, "init(launch_addr, last_error_addr, sizeof_ts_arg, error_type, status_names)"},
    {"set_torch", mod_set_torch, METH_VARARGS,
     "set_torch(tensor_type, dtypes, current_stream, empty, device), or set_torch(None)"},
    {"torch_ready", mod_torch_ready, METH_NOARGS, "whether set_torch has been given torch"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "tilescale._fastcall",
    "The C call path of compiled kernels (see python/tilescale/_fastcall.c).", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

static PyObject *intern(const char *s) { return PyUnicode_InternFromString(s); }

PyMODINIT_FUNC PyInit__fastcall(void); /* the one exported symbol */

PyMODINIT_FUNC PyInit__fastcall(void) {
  if (!(s_dtype = intern("dtype")) || !(s_shape = intern("shape")) || !(s_stride = intern("stride")) ||
      !(s_data_ptr = intern("data_ptr")) || !(s_get_device = intern("get_device")) ||
      !(s_is_cuda = intern("is_cuda")) || !(s_call_py = intern("_call_py")) || !(s_cuda = intern("cuda")))
    return NULL;
  if (!(empty_kwnames = Py_BuildValue("(ss)", "dtype", "device"))) return NULL;
  for (int i = 0; i < MAX_DEVICES; i++)
    if (!(G.indices[i] = PyLong_FromLong(i))) return NULL;
  if (PyType_Ready(&LauncherType) < 0 || PyType_Ready(&DispatcherType) < 0) return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (!m) return NULL;
  Py_INCREF(&LauncherType);
  Py_INCREF(&DispatcherType);
  if (PyModule_AddObject(m, "Launcher", (PyObject *)&LauncherType) < 0 ||
      PyModule_AddObject(m, "Dispatcher", (PyObject *)&DispatcherType) < 0 ||
      PyModule_AddIntConstant(m, "MAX_ARGS", MAX_ARGS) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
