"""tilelang.cuda.intrinsics.layout.utils for CPython: get_mma_micro_size."""
from tilelang.language.dtypes import dtype as _dtype


def get_mma_micro_size(dtype):
    """(M, N, K) of the mma.sync tile TileLang's MMA helpers use for this input dtype: 16x16 in
    M and N; K holds 256 bits of a row (16 for 16-bit types, 32 for 8-bit, 8 for tf32)."""
    bits = _dtype(dtype).bits
    if bits not in (8, 16, 32):
        raise ValueError("get_mma_micro_size: no mma.sync tile for %s" % (dtype,))
    return 16, 16, 256 // bits


def __getattr__(name):
    from tilelang import _placeholder_attr
    return _placeholder_attr(__name__, name)
