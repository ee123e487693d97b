"""torch, as far as kernel factories use it while building a kernel: its dtypes (the tile
language's dtypes, with .itemsize and .bits), the device queries of torch.cuda, and tensor
factories whose results are shape-only tensors (host_tensor.c): a module-level
`A = torch.rand(m, k, dtype=torch.float16)` gives `M, K = A.shape`, and anything that needs
a tensor's data is a diagnostic.  Everything else stays unavailable: using it while building
a kernel is a diagnostic."""
import _tilescale
import tilelang.language as T
from torch import cuda
from torch import random

bool = T.bool
int8 = T.int8
int16 = T.int16
int32 = T.int32
int64 = T.int64
long = T.int64
uint8 = T.uint8
float16 = T.float16
half = T.float16
bfloat16 = T.bfloat16
float32 = T.float32
float = T.float32
float64 = T.float64
double = T.float64
float8_e4m3fn = T.float8_e4m3
float8_e5m2 = T.float8_e5m2


def _tensor(size, dtype=None, like=None):
    return _tilescale.host_tensor(size, dtype, like)


def rand(*size, dtype=None, **kwargs):
    return _tensor(size, dtype)


def randn(*size, dtype=None, **kwargs):
    return _tensor(size, dtype)


def zeros(*size, dtype=None, **kwargs):
    return _tensor(size, dtype)


def ones(*size, dtype=None, **kwargs):
    return _tensor(size, dtype)


def empty(*size, dtype=None, **kwargs):
    return _tensor(size, dtype)


def full(size, fill_value, dtype=None, **kwargs):
    return _tensor(size, dtype, fill_value)


def randint(*args, dtype=None, **kwargs):
    """randint(high, size) or randint(low, high, size): int64 unless dtype says otherwise."""
    size = kwargs["size"] if "size" in kwargs else args[-1]
    return _tensor(size, dtype, 0)


def randperm(n, dtype=None, **kwargs):
    return _tensor((n,), dtype, 0)


def arange(start, end=None, step=1, dtype=None, **kwargs):
    """int64 when start, end and step are ints, else float32 (torch's default dtype)."""
    if end is None:
        end = start
        start = 0
    if isinstance(start, int) and isinstance(end, int) and isinstance(step, int):
        n = -((start - end) // step)
    else:
        n = int(-((start - end) // step))
    return _tensor((max(n, 0),), dtype, start + end + step)


def _like(x, dtype):
    return _tensor(x.shape, x.dtype if dtype is None else dtype)


def empty_like(x, dtype=None, **kwargs):
    return _like(x, dtype)


def zeros_like(x, dtype=None, **kwargs):
    return _like(x, dtype)


def ones_like(x, dtype=None, **kwargs):
    return _like(x, dtype)


def rand_like(x, dtype=None, **kwargs):
    return _like(x, dtype)


def randn_like(x, dtype=None, **kwargs):
    return _like(x, dtype)


def full_like(x, fill_value, dtype=None, **kwargs):
    return _like(x, dtype)


def manual_seed(seed):
    return None
