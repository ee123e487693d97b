"""A sibling helper package of host_prelude.py: imported by the kernel file, evaluated by the
compiler (its own globals, its own imports, a relative import of its submodule)."""
import tilelang.language as T
from .sizes import rows_per_block

SCALE = 3


def scaled(x):
    return x * SCALE + rows_per_block(4)


@T.macro
def store_twice(A, i, v):
    A[i] = v
    A[i + 1] = v
