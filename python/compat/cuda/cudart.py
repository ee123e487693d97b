"""cuda.cudart: the pre-12.8 cuda-python name of cuda.bindings.runtime (TileScale's stand-in)."""
from .bindings.runtime import *  # noqa: F401,F403
from .bindings.runtime import __getattr__  # noqa: F401
