"""tilelang.cuda.intrinsics.layout.mma_layout for CPython: where each element of an mma.sync
operand tile lives, (lane, register index), as the PTX ISA lays out the m16n8k* fragments.
`sr` tiles are [spatial, reduction]: A as [m][k], B as [n][k] (two n8 tiles).  Lane =
4 * group + thread-in-group, group = row % 8; the register index counts the thread's elements
in fragment order.  The compiler's own copy of TileLang's MMA helpers is
src/front/prelude/tilelang/cuda/intrinsics/layout/mma_layout.py; other names here are its
placeholders."""


def shared_16x16_to_mma_32x8_layout_sr_a(i, j):
    """16-bit A (m16 x k16): pairs along k, then row + 8, then k + 8."""
    return 4 * (i % 8) + (j % 8) // 2, (j % 2) + 2 * (i // 8) + 4 * (j // 8)


def shared_16x16_to_mma_32x8_layout_sr_b(i, j):
    """16-bit B as [n16][k16]: pairs along k, then k + 8, then the second n8 tile."""
    return 4 * (i % 8) + (j % 8) // 2, (j % 2) + 2 * (j // 8) + 4 * (i // 8)


def shared_16x8_to_mma_32x4_layout_sr_a(i, j):
    """32-bit (tf32) A (m16 x k8): one element each, row + 8, then k + 4."""
    return 4 * (i % 8) + j % 4, (i // 8) + 2 * (j // 4)


def shared_16x8_to_mma_32x4_layout_sr_b(i, j):
    """32-bit (tf32) B as [n16][k8]: k + 4, then the second n8 tile."""
    return 4 * (i % 8) + j % 4, (j // 4) + 2 * (i // 8)


def shared_16x32_to_mma_32x16_layout_sr_a(i, j):
    """8-bit A (m16 x k32): four along k, then row + 8, then k + 16."""
    return 4 * (i % 8) + (j % 16) // 4, (j % 4) + 4 * (i // 8) + 8 * (j // 16)


def shared_16x32_to_mma_32x16_layout_sr_b(i, j):
    """8-bit B as [n16][k32]: four along k, then k + 16, then the second n8 tile."""
    return 4 * (i % 8) + (j % 16) // 4, (j % 4) + 4 * (j // 16) + 8 * (i // 8)


def __getattr__(name):
    from tilelang import _placeholder_attr
    return _placeholder_attr(__name__, name)
