"""tilelang.contrib: the host helpers of TileLang's contrib package that scripts call
(nvcc's compute-capability queries).  Compilation itself is libtilescale's."""
from . import nvcc  # noqa: F401
