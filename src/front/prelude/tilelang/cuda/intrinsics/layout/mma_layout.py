"""tilelang.cuda.intrinsics.layout.mma_layout: the shared-memory swizzle TileLang's MMA helpers
use.  make_mma_swizzle_layout swizzles rows that are a multiple of 64 bytes (16-byte chunks
XORed with the row, as TMA and ldmatrix expect: the widest of the 128/64/32-byte patterns the
row allows) and leaves other rows, or is_smooth=True, row-major.  A shared layout only moves
elements between banks: every access goes through it, so results do not depend on it."""
import tilelang.language as T
from tilelang.layout import make_swizzled_layout, make_linear_layout


def make_mma_swizzle_layout(shared_buf, is_smooth=False):
    row_bits = shared_buf.shape[-1] * shared_buf.dtype.bits
    if is_smooth or row_bits % 512 != 0:
        return make_linear_layout(shared_buf)
    return make_swizzled_layout(shared_buf)


def get_swizzle_layout(row_idx, col_idx, row_size, dtype, swizzle_bytes=None):
    """(row, col) of element (row_idx, col_idx) of a tile with rows of row_size elements after
    the ldmatrix swizzle: 16-byte chunks of a row XORed with the row (over the chunks of up to
    128 bytes), so the eight 16-byte rows one ldmatrix reads fall on distinct banks.  Used in
    a T.Layout on a shared tile, which only chooses banks (builtins_layout.c)."""
    elem_bits = T.dtype(dtype).bits
    chunk = 128 // elem_bits  # elements per 16 bytes
    row_bytes = row_size * elem_bits // 8
    if swizzle_bytes is None:
        swizzle_bytes = 128 if row_bytes % 128 == 0 else 64 if row_bytes % 64 == 0 else 32 if row_bytes % 32 == 0 else 0
    if swizzle_bytes == 0:
        return row_idx, col_idx
    nchunks = swizzle_bytes // 16
    span = 128 // swizzle_bytes  # rows that share the XOR pattern (128 bytes of rows)
    c = col_idx // chunk
    new_c = (c // nchunks) * nchunks + ((c % nchunks) ^ ((row_idx // span) % nchunks))
    return row_idx, new_c * chunk + col_idx % chunk
