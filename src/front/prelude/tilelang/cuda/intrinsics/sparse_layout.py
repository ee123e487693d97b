"""tilelang.cuda.intrinsics.sparse_layout: the contract between the 2:4 compressor
(examples/gemm_sp/sparse_utils.py) and T.gemm_sp.  Of every `group` consecutive elements of
a row of A along K, `elem` are kept (2 of 4; 1 of 2 for 32-bit types); each group's kept
positions take 4 bits of metadata (two 2-bit indices, ascending), packed little-endian into
the metadata dtype, so one metadata element covers (bits / 4) * group elements of K: the
E factor (16 for float16 with int16 metadata)."""
import tilelang.language as T

GROUP_CONFIG = {
    T.float32: (1, 2),
    T.float16: (2, 4),
    T.bfloat16: (2, 4),
    T.int8: (2, 4),
    T.uint8: (2, 4),
    T.float8_e4m3: (2, 4),
    T.float8_e5m2: (2, 4),
}

_BITS_PER_GROUP = 4


def get_e_factor(a_dtype, meta_dtype):
    """How many elements of A (along K) one metadata element indexes."""
    _, group = GROUP_CONFIG[T.dtype(a_dtype)]
    return (T.dtype(meta_dtype).bits // _BITS_PER_GROUP) * group


def get_e_replicate_factor(a_dtype):
    """How many consecutive threads of an MMA hold the same metadata value."""
    return 1 if T.dtype(a_dtype).bits <= 8 else 2
