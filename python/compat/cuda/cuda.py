"""cuda.cuda: the pre-12.8 cuda-python name of cuda.bindings.driver (TileScale's stand-in)."""
from .bindings.driver import *  # noqa: F401,F403
from .bindings.driver import __getattr__  # noqa: F401
