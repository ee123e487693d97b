"""tilelang.transform: PassConfigKey (the pass_configs keys TileLang scripts name) and TileLang's
TIR simplifier entry points (simplify.py: they give back what they are given)."""
from .pass_config import PassConfigKey  # noqa: F401
from .simplify import apply_simplify, simplify_prim_func  # noqa: F401
