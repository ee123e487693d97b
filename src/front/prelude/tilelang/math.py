"""tilelang.math: integer helpers kernel factories call while choosing tile sizes."""


def _bit_length(n):
    """int.bit_length: the number of bits of |n| without sign and leading zeros."""
    n = -n if n < 0 else n
    bits = 0
    while n:
        n >>= 1
        bits += 1
    return bits


def next_power_of_2(x):
    """The smallest power of two >= x (1 for x <= 1... as TileLang computes it: 1 << bit_length(x - 1))."""
    return 1 << _bit_length(x - 1)


def prev_power_of_2(x):
    """The largest power of two <= x (x >= 1)."""
    return 1 << (_bit_length(x) - 1)


def cdiv(a, b):
    """Ceiling division of integers."""
    return (a + b - 1) // b
