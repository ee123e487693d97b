"""cuda.bindings.driver (TileScale's stand-in): stream memory operations over libcuda.so.1.
Each call returns a tuple whose first item is a CUresult, as cuda-python's do."""
import ctypes
import enum

_lib = None


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_NOT_INITIALIZED = 3
    CUDA_ERROR_INVALID_CONTEXT = 201
    CUDA_ERROR_INVALID_HANDLE = 400
    CUDA_ERROR_NOT_SUPPORTED = 801
    CUDA_ERROR_UNKNOWN = 999


class CUstreamWaitValue_flags(enum.IntEnum):
    CU_STREAM_WAIT_VALUE_GEQ = 0x0
    CU_STREAM_WAIT_VALUE_EQ = 0x1
    CU_STREAM_WAIT_VALUE_AND = 0x2
    CU_STREAM_WAIT_VALUE_NOR = 0x3
    CU_STREAM_WAIT_VALUE_FLUSH = 1 << 30


class CUstreamWriteValue_flags(enum.IntEnum):
    CU_STREAM_WRITE_VALUE_DEFAULT = 0x0
    CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER = 0x1


def _fn(*names):
    """The first of `names` libcuda exports (the _v2 memop entry points on CUDA 12+)."""
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL("libcuda.so.1")
    for n in names:
        f = getattr(_lib, n, None)
        if f is not None:
            f.restype = ctypes.c_int
            return f
    raise AttributeError("cuda (TileScale's stand-in): libcuda.so.1 exports none of %s" % (names,))


def _result(code):
    try:
        return CUresult(code)
    except ValueError:
        return code


def _handle(x):
    """A stream or pointer argument: an int, or an object with int() or getPtr()."""
    if hasattr(x, "getPtr"):
        return int(x.getPtr())
    return int(x or 0)


def _memop(names, width, stream, addr, value, flags):
    val = ctypes.c_uint64(int(value)) if width == 64 else ctypes.c_uint32(int(value))
    r = _fn(*names)(ctypes.c_void_p(_handle(stream)), ctypes.c_uint64(_handle(addr)), val, ctypes.c_uint(int(flags)))
    return (_result(r),)


def cuStreamWaitValue32(stream, addr, value, flags):  # noqa: N802 (cuda-python's names)
    return _memop(("cuStreamWaitValue32_v2", "cuStreamWaitValue32"), 32, stream, addr, value, flags)


def cuStreamWaitValue64(stream, addr, value, flags):  # noqa: N802
    return _memop(("cuStreamWaitValue64_v2", "cuStreamWaitValue64"), 64, stream, addr, value, flags)


def cuStreamWriteValue32(stream, addr, value, flags):  # noqa: N802
    return _memop(("cuStreamWriteValue32_v2", "cuStreamWriteValue32"), 32, stream, addr, value, flags)


def cuStreamWriteValue64(stream, addr, value, flags):  # noqa: N802
    return _memop(("cuStreamWriteValue64_v2", "cuStreamWriteValue64"), 64, stream, addr, value, flags)


def cuMemcpyAsync(dst, src, nbytes, stream):  # noqa: N802
    r = _fn("cuMemcpyAsync")(ctypes.c_uint64(_handle(dst)), ctypes.c_uint64(_handle(src)), ctypes.c_size_t(int(nbytes)),
                             ctypes.c_void_p(_handle(stream)))
    return (_result(r),)


def __getattr__(name):
    raise AttributeError("cuda.bindings.driver (TileScale's stand-in for cuda-python, python/compat) has no %r; "
                         "install cuda-python for the full API" % name)
