"""A host stand-in for the few `tvm` names TileLang scripts import at module level
(`from tvm import DataType`, `from tilelang import tvm as tvm`).  TileScale has no TVM: DataType
answers .bits/.lanes for dtype names; any other attribute or `tvm.*` submodule is a placeholder
that raises when used on the host (kernel code using tvm is understood by the C compiler)."""
import tilelang as _tilelang
from tilelang import DataType  # noqa: F401

_tilelang._PlaceholderFinder.prefixes.add(__name__)
from . import testing  # noqa: E402,F401 (tvm.testing.requires_* without an import)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    from tilelang.language import _Placeholder
    return _Placeholder("tvm." + name)
