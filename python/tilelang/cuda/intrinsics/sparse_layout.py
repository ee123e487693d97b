"""tilelang.cuda.intrinsics.sparse_layout for CPython: the 2:4 sparsity contract the gemm_sp
examples' host code uses (randn_semi_sparse, compress).  The compiler evaluates its own copy,
src/front/prelude/tilelang/cuda/intrinsics/sparse_layout.py, which documents the format."""
from tilelang.language.dtypes import dtype

# a_dtype -> (elements kept, group size) along K
GROUP_CONFIG = {dtype(n): cfg for n, cfg in (
    ("float32", (1, 2)), ("float16", (2, 4)), ("bfloat16", (2, 4)), ("int8", (2, 4)), ("uint8", (2, 4)),
    ("float8_e4m3", (2, 4)), ("float8_e5m2", (2, 4)))}

_BITS_PER_GROUP = 4


def get_e_factor(a_dtype, meta_dtype):
    """How many elements of A (along K) one metadata element indexes."""
    _, group = GROUP_CONFIG[dtype(a_dtype)]
    return (dtype(meta_dtype).bits // _BITS_PER_GROUP) * group


def get_e_replicate_factor(a_dtype):
    """How many consecutive threads of an MMA hold the same metadata value."""
    return 1 if dtype(a_dtype).bits <= 8 else 2
