"""tilelang.cuda.intrinsics.layout.mma_layout: the shared-memory swizzle TileLang's MMA helpers
use.  make_mma_swizzle_layout swizzles rows that are a multiple of 64 bytes (16-byte chunks
XORed with the row, as TMA and ldmatrix expect: the widest of the 128/64/32-byte patterns the
row allows) and leaves other rows, or is_smooth=True, row-major.  A shared layout only moves
elements between banks: every access goes through it, so results do not depend on it."""
from tilelang.layout import make_swizzled_layout, make_linear_layout


def make_mma_swizzle_layout(shared_buf, is_smooth=False):
    row_bits = shared_buf.shape[-1] * shared_buf.dtype.bits
    if is_smooth or row_bits % 512 != 0:
        return make_linear_layout(shared_buf)
    return make_swizzled_layout(shared_buf)
