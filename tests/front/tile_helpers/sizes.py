"""A submodule of the sibling package tile_helpers."""
from tilelang.math import next_power_of_2


def rows_per_block(n):
    return next_power_of_2(n * 3)
