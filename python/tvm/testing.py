"""tvm.testing stand-in: TileLang's test decorators (requires_cuda, requires_package, ...)."""
from tilelang.testing import *  # noqa: F401,F403
from tilelang.testing import requires_cuda, requires_package  # noqa: F401
