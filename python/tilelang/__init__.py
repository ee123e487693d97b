"""tilelang — TileLang's Python API over libtilescale (TileScale-C).

TileLang scripts run unchanged: CPython runs the script, and the decorators record which
function of which file is a kernel; compiling hands the file, the function name and the call's
values to the C library (python/tilescale), which evaluates the kernel from the source exactly
as `tilescale compile` does.  This package never evaluates a kernel body and never builds IR.

    import tilelang
    import tilelang.language as T

    @tilelang.jit(out_idx=[-1])
    def matmul(M, N, K, block_M=128, ...):
        @T.prim_func
        def main(A: T.Tensor((M, K), T.float16), ...): ...
        return main

    kernel = matmul(1024, 1024, 1024)   # compiles examples' `matmul` with -D M=1024 ...
    c = kernel(a, b)                    # torch tensors in, output allocated

The library runs a factory's host code with its own interpreter (modules beside the kernel
file and its embedded prelude included).  A host-code call of a function it cannot evaluate —
from a module of your own elsewhere on sys.path, or a helper module beside the kernel file
using numpy or Python the interpreter lacks (classes, generators: the interpreter tries it
first) — is handed back to CPython when its arguments are plain values (None, bool, int, float,
str, dtypes, tuples and lists of them): the function is imported and called here and its plain
result used (tilelang/_host_call.py; an exception it raises becomes the compile error at the
calling line).  Calls inside a kernel body are never made that way, nor by `tilescale compile`.

Importing needs neither torch nor a GPU; torch is imported by the calls that use it.
Submodules of TileLang that TileScale does not provide (tilelang.tvm, tilelang.cuda.intrinsics,
...) import as placeholder modules whose names raise a clear error when used on the host."""
import importlib
import importlib.abc
import importlib.machinery
import logging
import os
import sys
import types

__version__ = "0.1.15+tilescale"
version = __version__

logger = logging.getLogger(__name__)
if not logger.handlers:
    _h = logging.StreamHandler()
    _h.setFormatter(logging.Formatter("[TileLang:%(levelname)s] %(message)s"))
    logger.addHandler(_h)
    logger.setLevel(logging.WARNING)
    logger.propagate = False


def set_log_level(level):
    """'DEBUG', 'INFO', 'WARNING', ... or a logging level number."""
    if isinstance(level, str):
        level = getattr(logging, level.upper(), logging.INFO)
    logger.setLevel(level)


# ---- placeholder submodules --------------------------------------------------------------------
def _placeholder_attr(module_name, name):
    """Attribute `name` of a TileLang module TileScale does not provide (in full): a real
    submodule of that package when it has one here (`from tilelang.cuda.intrinsics import
    sparse_layout` asks the package's __getattr__ before importing it), else a placeholder that
    fails only when a kernel uses it (module __getattr__ hooks call this)."""
    if name.startswith("__"):
        raise AttributeError(name)
    for d in getattr(sys.modules.get(module_name), "__path__", None) or []:
        if os.path.isfile(os.path.join(d, name + ".py")) or os.path.isfile(os.path.join(d, name, "__init__.py")):
            return importlib.import_module("%s.%s" % (module_name, name))
    from .language import _placeholder
    return _placeholder("%s.%s" % (module_name, name))


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, name):
        return _placeholder_attr(self.__name__, name)


class _PlaceholderFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: a `tilelang.X` submodule that has no file here becomes a
    placeholder module, so a script's imports succeed and only a host-side use of such a name
    fails (with KernelOnlyError naming it)."""

    prefixes = {__name__}  # packages whose missing submodules become placeholders

    def find_spec(self, fullname, path=None, target=None):
        if not any(fullname.startswith(p + ".") for p in self.prefixes):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        m = _PlaceholderModule(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        logger.debug("tilelang: %s is a placeholder module in TileScale", module.__name__)


if not any(isinstance(f, _PlaceholderFinder) for f in sys.meta_path):
    sys.meta_path.append(_PlaceholderFinder())

# ---- the API -------------------------------------------------------------------------------------
from . import language  # noqa: E402
from .env import env  # noqa: E402
from .jit import JITImpl, JITKernel, compile, jit, lower, par_compile  # noqa: E402,A004
from .math import cdiv, next_power_of_2  # noqa: E402
from .transform import PassConfigKey  # noqa: E402
from .utils.tensor import TensorSupplyType  # noqa: E402
from .autotuner import autotune  # noqa: E402
from . import profiler  # noqa: E402
from ._compiler import TileLangError  # noqa: E402
from .language import KernelOnlyError  # noqa: E402
from .language.dtypes import dtype as _dtype  # noqa: E402
from .utils.allocator import Allocator, get_allocator, tensor  # noqa: E402 (TileScale's host API)

ceildiv = cdiv


def disable_cache():
    """Turns the library's kernel cache off for kernels compiled from now on."""
    from . import _compiler
    env.disable_cache()
    _compiler.reset_context()


def enable_cache():
    from . import _compiler
    env.enable_cache()
    _compiler.reset_context()


def is_cache_enabled():
    return env.is_cache_enabled()


class DataType:
    """tvm.DataType-like view of a dtype name: .bits and .lanes (host use only)."""

    def __init__(self, d):
        self.dtype = _dtype(d)
        self.bits, self.lanes = self.dtype.bits, 1

    def __str__(self):
        return str(self.dtype)

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


__all__ = ["jit", "compile", "lower", "par_compile", "JITKernel", "JITImpl", "autotune", "language",
           "profiler", "PassConfigKey", "TensorSupplyType", "cdiv", "ceildiv", "next_power_of_2",
           "disable_cache", "enable_cache", "is_cache_enabled", "set_log_level", "env", "DataType",
           "TileLangError", "KernelOnlyError", "__version__", "get_allocator", "tensor",
           "Allocator"]


def __getattr__(name):
    if name == "tvm":  # `from tilelang import tvm as tvm`: the host stand-in python/tvm
        import importlib
        return importlib.import_module("tvm")
    raise AttributeError("module 'tilelang' has no attribute %r" % name)
