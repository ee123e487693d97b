"""The part of tvm's Python API kernel helpers use while building a kernel.  DataType(x) is
the dtype x names; dtypes answer .bits, .lanes and .itemsize."""
import tilelang.language as T
from tvm import tirx


def DataType(dtype):
    return T.dtype(dtype)
