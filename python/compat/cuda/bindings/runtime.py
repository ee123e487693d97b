"""cuda.bindings.runtime (TileScale's stand-in): cudaMemcpyAsync over the driver's
cuMemcpyAsync (unified addressing: the kind is not needed), with cuda-python's return tuple."""
import enum

from . import driver as _driver


class cudaError_t(enum.IntEnum):  # noqa: N801 (cuda-python's names)
    cudaSuccess = 0
    cudaErrorInvalidValue = 1


class cudaMemcpyKind(enum.IntEnum):  # noqa: N801
    cudaMemcpyHostToHost = 0
    cudaMemcpyHostToDevice = 1
    cudaMemcpyDeviceToHost = 2
    cudaMemcpyDeviceToDevice = 3
    cudaMemcpyDefault = 4


def cudaMemcpyAsync(dst, src, count, kind, stream=0):  # noqa: N802
    if int(kind) not in cudaMemcpyKind._value2member_map_:
        return (cudaError_t.cudaErrorInvalidValue,)
    (r,) = _driver.cuMemcpyAsync(dst, src, count, stream)
    return (cudaError_t.cudaSuccess if int(r) == 0 else cudaError_t.cudaErrorInvalidValue,)


def __getattr__(name):
    raise AttributeError("cuda.bindings.runtime (TileScale's stand-in for cuda-python, python/compat) has no %r; "
                         "install cuda-python for the full API" % name)
