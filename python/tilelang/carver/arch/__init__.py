"""tilelang.carver.arch: `driver` device queries through torch (imported when called).  The
roller/template classes (CUDA, CDNA, MatmulTemplate) are not provided."""
from . import driver  # noqa: F401
from ...language import _Placeholder

CUDA = _Placeholder("tilelang.carver.arch.CUDA")
CDNA = _Placeholder("tilelang.carver.arch.CDNA")
