"""A host stand-in for the few `tvm` names TileLang scripts import at module level
(`from tvm import DataType`, `from tilelang import tvm as tvm`).  TileScale has no TVM: DataType
answers .bits/.lanes for dtype names; any other attribute or `tvm.*` submodule is a placeholder
that raises when used on the host (kernel code using tvm is understood by the C compiler)."""
import tilelang as _tilelang
from tilelang import DataType  # noqa: F401

_tilelang._PlaceholderFinder.prefixes.add(__name__)
from . import testing  # noqa: E402,F401 (tvm.testing.requires_* without an import)


_funcs = {}  # tvm.register_func's registry (host callbacks)


def register_func(func_name=None, f=None, override=False):
    """tvm.register_func(name[, f], override=...) or @tvm.register_func: records the function
    for get_global_func.  TileScale's compiler calls no TVM callback: a TileLang hook such as
    `tilelang_callback_cuda_postproc` (rewriting the generated CUDA) is recorded and has no
    effect, which is said once on stderr."""
    if callable(func_name) and f is None:
        f, func_name = func_name, func_name.__name__

    def register(fn):
        if func_name in _funcs and not override:
            raise ValueError("tvm.register_func: %r is already registered (override=False)"
                             % (func_name,))
        _funcs[func_name] = fn
        if str(func_name).startswith("tilelang_callback_"):
            import sys
            print("tilelang: %s is registered but not called: TileScale generates the kernel "
                  "source itself" % func_name, file=sys.stderr)
        return fn
    return register(f) if f is not None else register


def get_global_func(name, allow_missing=False):
    if name in _funcs:
        return _funcs[name]
    if allow_missing:
        return None
    raise ValueError("tvm.get_global_func: %r is not registered" % (name,))


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    from tilelang.language import _Placeholder
    return _Placeholder("tvm." + name)
