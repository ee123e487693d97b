"""tilelang.transform as kernel files use it: PassConfigKey (the compiler's own namespace) and
TileLang's TIR simplifier, which scripts apply to a prim_func (or a factory, as a decorator)
before compiling it.  The compiler simplifies while it lowers, so both give back what they
are given (simplify.py)."""
from tilelang import PassConfigKey
from tilelang.transform.simplify import apply_simplify, simplify_prim_func
