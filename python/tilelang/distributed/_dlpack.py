"""Raw memory (a symmetric-heap block, a peer's view of it, mapped host counters) as torch
tensors, without copying and without a torch extension: a DLPack capsule built with ctypes.

Why DLPack and not __cuda_array_interface__: torch asks the driver which device a CUDA array
interface pointer belongs to, and a peer's heap mapped into this process answers "the peer's
GPU"; the tensor would then live on that device and every torch op on it would run in a context
where the mapping does not exist.  A DLPack tensor carries its device, and torch takes it as
given, so a peer view is a tensor of this rank's GPU, which is where ts_dist_peer_ptr says the
address is usable.

The capsule describes bytes (uint8, 1-D); the caller views them as its dtype and shape.  The
`owner` object given to wrap() stays referenced until torch releases the memory (the last view
of it dies): its own finalizer is how the memory gets freed."""
import ctypes
import importlib
import threading

__all__ = ["wrap"]

KDL_CPU, KDL_CUDA = 1, 2
KDL_UINT = 1


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _DELETER)]

# Everything a live capsule needs stays here until torch calls the deleter: the struct, its
# shape array and the owner.  Keyed by the struct's address (= manager_ctx).
_live = {}
_live_lock = threading.Lock()


@_DELETER
def _release(managed):
    try:
        key = ctypes.cast(managed, ctypes.c_void_p).value
        with _live_lock:
            entry = _live.pop(key, None)
        del entry  # the owner's last reference from here: its finalizer may free the memory
    except Exception:  # noqa: BLE001 (interpreter shutdown: the process frees everything)
        pass


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def wrap(ptr, nbytes, device, owner, torch=None):
    """A uint8 torch tensor of `nbytes` bytes at address `ptr`; device an int (a CUDA ordinal)
    or "cpu".  `owner` is kept alive as long as torch uses the memory."""
    del torch  # the capsule goes through torch.utils.dlpack, imported by name
    dlpack = importlib.import_module("torch.utils.dlpack")  # not always imported with torch
    managed = _DLManagedTensor()
    shape = (ctypes.c_int64 * 1)(int(nbytes))
    t = managed.dl_tensor
    t.data = ctypes.c_void_p(int(ptr) if nbytes else 0)
    if device == "cpu":
        t.device = _DLDevice(KDL_CPU, 0)
    else:
        t.device = _DLDevice(KDL_CUDA, int(device))
    t.ndim = 1
    t.dtype = _DLDataType(KDL_UINT, 8, 1)
    t.shape = shape
    t.strides = None
    t.byte_offset = 0
    managed.deleter = _release
    key = ctypes.addressof(managed)
    managed.manager_ctx = key
    with _live_lock:
        _live[key] = (managed, shape, owner)
    try:
        capsule = _PyCapsule_New(key, b"dltensor", None)
        return dlpack.from_dlpack(capsule)
    except BaseException:
        with _live_lock:
            _live.pop(key, None)
        raise


def itemsize_of(dtype, torch):
    """Bytes per element of a torch dtype (older torch has no dtype.itemsize)."""
    n = getattr(dtype, "itemsize", None)
    return n if n else torch.empty((), dtype=dtype, device="cpu").element_size()


def as_tensor(ptr, shape, dtype, device, owner, torch=None):
    """A tensor of `dtype` and `shape` (row-major) over the bytes at ptr."""
    if torch is None:
        import torch
    shape = tuple(int(s) for s in shape)
    n = 1
    for s in shape:
        n *= s
    itemsize = itemsize_of(dtype, torch)
    raw = wrap(ptr, n * itemsize, device, owner, torch)
    return raw.view(dtype).view(shape)
