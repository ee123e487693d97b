"""`import tilelang.language as T` for host code: placeholders, never an IR builder.

The C library evaluates kernel bodies from the source file.  CPython only meets the names a
script touches at import time or while building inputs: dtypes (`T.float16`), annotations
(`T.Tensor((M, K), dtype)`), decorators (`@T.prim_func`, `@T.macro`, which record the function
and return a marker), `T.dynamic` symbols, and integer helpers such as `T.ceildiv` on plain ints.
`T.Layout` / `T.Fragment` called by host code build host-side tables for printing and
tilelang.tools.plot_layout (_host_layout.py).
Every other `T.*` name is a placeholder that raises KernelOnlyError when called, so a kernel body
run by CPython by mistake stops at its first tile operation with a message saying so."""
import sys

from . import dtypes as _dtypes
from .dtypes import DTYPES as _DTYPES
from .dtypes import dtype

__all__ = ["dtype", "prim_func", "macro", "Tensor", "Buffer", "StridedTensor", "const", "dynamic",
           "symbolic", "Var", "SizeVar", "ceildiv", "KernelOnlyError", "PrimFuncRef", "MacroRef", "Layout", "Fragment"]


class KernelOnlyError(RuntimeError):
    """A T.* construct was executed by CPython instead of the tilelang compiler."""


def kernel_only_error(what):
    return KernelOnlyError(
        "%s can only be used inside a kernel compiled by tilelang (TileScale's tilelang package "
        "hands kernel bodies to the C compiler; CPython never runs them)" % what)


class _Placeholder:
    """A kernel-only name (`T.gemm`, `T.GemmWarpPolicy.FullRow`): attribute access gives more
    placeholders (so defaults like `policy=T.GemmWarpPolicy.Square` work), calling raises.  As a
    kernel parameter it is passed as its dotted path, which the compiler resolves itself."""

    __slots__ = ("_path",)

    def __init__(self, path):
        object.__setattr__(self, "_path", path)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _placeholder("%s.%s" % (self._path, name))

    def __call__(self, *args, **kwargs):
        raise kernel_only_error(self._path)

    def __repr__(self):
        return self._path

    @property
    def __name__(self):  # noqa: A003 (T.exp.__name__ == "exp", as for TileLang's functions)
        return self._path.rsplit(".", 1)[-1]

    def __eq__(self, other):
        return isinstance(other, _Placeholder) and other._path == self._path

    def __hash__(self):
        return hash(self._path)

    def __bool__(self):
        raise kernel_only_error("the truth value of %s" % self._path)

    def tilelang_param_text(self):
        return self._path


class _HostCallable(_Placeholder):
    """A T.* name that host code may also call (T.Layout and T.Fragment at module level, as
    TileLang's plot_layout examples do): a call builds the host-side table of _host_layout;
    inside kernels, and as a kernel parameter, it is the placeholder the compiler resolves."""

    __slots__ = ("_host",)

    def __init__(self, path, host):
        _Placeholder.__init__(self, path)
        object.__setattr__(self, "_host", host)

    def __call__(self, *args, **kwargs):
        return self._host(*args, **kwargs)

    def __instancecheck__(self, obj):  # isinstance(layout, T.Fragment) in host code
        cls = getattr(self._host, "host_class", None)
        return cls is not None and isinstance(obj, cls())


def _host_layout(kind):
    def make(*args, **kwargs):
        return host_class()(*args, **kwargs)

    def host_class():
        from .. import _host_layout as hl
        return getattr(hl, kind)
    make.host_class = host_class
    return make


class PtrSpec:
    """What `T.ptr()` gives host code: a stand-in for a pointer parameter's value in a compile
    call (`kernel.par_compile([{"A": T.ptr(), "M": 1024, ...}])`): the pointer is a kernel
    parameter, passed at launch, so the compile leaves it out."""

    def __init__(self, dtype=None, storage_scope="global"):
        self.dtype, self.storage_scope = dtype, storage_scope

    def __repr__(self):
        return "T.ptr()"


ptr = _HostCallable("T.ptr", PtrSpec)
Layout = _HostCallable("T.Layout", _host_layout("Layout"))
Fragment = _HostCallable("T.Fragment", _host_layout("Fragment"))


# ---- function markers ------------------------------------------------------------------------
class _FuncRef:
    """Where a decorated function lives: its file, its name, and (for a @T.prim_func nested in
    a plain factory) the factory and the argument values it was called with."""

    def __init__(self, func, factory=None, factory_args=None, factory_frame=None,
                 factory_defaults=None, factory_closure=None):
        self.func = func
        self.__name__ = func.__name__
        self.__qualname__ = getattr(func, "__qualname__", func.__name__)
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self.factory = factory              # code object of the enclosing factory, or None
        self.factory_args = factory_args or {}
        self.factory_frame = factory_frame  # qualname of the factory (for messages)
        self.factory_defaults = factory_defaults or {}
        self.factory_closure = factory_closure or {}  # what a nested factory reads from
        #                                               enclosing scopes, at the call

    def __call__(self, *args, **kwargs):
        raise kernel_only_error("%s '%s'" % (self._kind, self.__name__))

    def __repr__(self):
        where = " from %s(%s)" % (self.factory.co_name, ", ".join(
            "%s=%r" % kv for kv in self.factory_args.items())) if self.factory else ""
        return "<%s %s%s>" % (self._kind, self.__qualname__, where)


class PrimFuncRef(_FuncRef):
    """What @T.prim_func returns: `tilelang.compile(ref, out_idx=...)` compiles it."""
    _kind = "T.prim_func"

    def script(self, *args, **kwargs):
        raise NotImplementedError("tilelang: TileScale does not build TIR in Python; use "
                                  "kernel.get_kernel_source() or `tilescale compile --emit ir`")


class MacroRef(_FuncRef):
    _kind = "T.macro"


def _factory_of(frame):
    """(code, {param: value}, qualname, {param: default}, {free variable: value}) of the plain
    function whose frame defines a prim_func; code is None at module level."""
    code = frame.f_code
    if code.co_name == "<module>":
        return None, {}, None, {}, {}
    n = code.co_argcount + code.co_kwonlyargcount
    names = list(code.co_varnames[:n])
    if code.co_flags & 0x04:  # *args
        names.append(code.co_varnames[n])
    if code.co_flags & 0x08:  # **kwargs
        names.append(code.co_varnames[n + bool(code.co_flags & 0x04)])
    values = {k: frame.f_locals[k] for k in names if k in frame.f_locals}
    fn = frame.f_globals.get(code.co_name)
    fn = getattr(fn, "__wrapped__", fn)
    defaults = {}
    if getattr(fn, "__code__", None) is code:
        import inspect
        defaults = {k: p.default for k, p in inspect.signature(fn).parameters.items()
                    if p.default is not p.empty}
    closure = {k: frame.f_locals[k] for k in code.co_freevars if k in frame.f_locals}
    return code, values, getattr(code, "co_qualname", code.co_name), defaults, closure


def prim_func(func=None, *, private=False, **_):
    """@T.prim_func: records the function (and the factory call around it) for the compiler."""
    if func is None:  # @T.prim_func(...): the returned decorator runs in the same frame
        return lambda f: _wrap_at(f, sys._getframe(1))
    return _wrap_at(func, sys._getframe(1))


def _wrap_at(f, frame):
    return PrimFuncRef(f, *_factory_of(frame))


def macro(func=None, **_):
    """@T.macro: a kernel helper; the marker raises if CPython ever calls it."""
    if func is None:
        return lambda f: MacroRef(f)
    return MacroRef(func)


# ---- annotations -----------------------------------------------------------------------------
class TensorType:
    """`T.Tensor((M, K), dtype)`: an annotation the compiler reads from the source."""

    def __init__(self, kind, shape, dtype="float32", strides=None, **kwargs):
        self.kind, self.shape, self.strides, self.kwargs = kind, shape, strides, kwargs
        self.dtype = dtype

    def __repr__(self):
        return "T.%s(%r, %r)" % (self.kind, self.shape, self.dtype)


class _TensorProxy:
    """T.Tensor / T.Buffer / T.StridedTensor: callable and subscriptable."""

    def __init__(self, kind, strided=False):
        self.kind, self.strided = kind, strided

    def __call__(self, shape, *args, **kwargs):
        if self.strided:
            strides, rest = (args[0], args[1:]) if args else (kwargs.pop("strides", None), ())
            return TensorType(self.kind, shape, *rest, strides=strides, **kwargs)
        return TensorType(self.kind, shape, *args, **kwargs)

    def __getitem__(self, key):
        return self(*key) if isinstance(key, tuple) else self(key)

    def __repr__(self):
        return "T." + self.kind


Tensor = _TensorProxy("Tensor")
Buffer = _TensorProxy("Buffer")
StridedTensor = _TensorProxy("StridedTensor", strided=True)
FragmentBuffer = _TensorProxy("FragmentBuffer")
SharedBuffer = _TensorProxy("SharedBuffer")
LocalBuffer = _TensorProxy("LocalBuffer")


# ---- symbols and host-computable helpers -----------------------------------------------------
class Symbol:
    """A T.dynamic / T.symbolic name met by CPython (in a plain factory's body)."""

    def __init__(self, name, dtype="int32"):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return self.name

    def tilelang_param_text(self):
        return 'T.dynamic("%s")' % self.name


# TVM's tir.Var / SizeVar, which host code tests symbols against (isinstance(M, T.Var)).
Var = SizeVar = Symbol


def _names(spec):
    return [n for n in spec.replace(",", " ").split() if n]


def dynamic(name, dtype="int32"):
    names = _names(name)
    syms = tuple(Symbol(n, dtype) for n in names)
    return syms[0] if len(syms) == 1 else syms


symbolic = dynamic


def const(name, dtype="int32"):
    raise kernel_only_error("T.const")


def _ints(what, *xs):
    if not all(isinstance(x, int) for x in xs):
        raise kernel_only_error("%s on non-integer values" % what)


def ceildiv(a, b):
    _ints("T.ceildiv", a, b)
    return -(-a // b)


def floordiv(a, b):
    _ints("T.floordiv", a, b)
    return a // b


def floormod(a, b):
    _ints("T.floormod", a, b)
    return a % b


def truncdiv(a, b):
    _ints("T.truncdiv", a, b)
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def max(a, b):  # noqa: A001 (T.max)
    _ints("T.max", a, b)
    return a if a >= b else b


def min(a, b):  # noqa: A001 (T.min)
    _ints("T.min", a, b)
    return a if a <= b else b


# One placeholder per name, so that `fn is T.reduce_sum` holds as it does in TileLang (tests pick
# their torch reference that way).
_PLACEHOLDERS = {}


# T.ieee_* operand counts: the argument after them is the rounding mode.
_IEEE_ARITY = {"T.ieee_add": 2, "T.ieee_sub": 2, "T.ieee_mul": 2, "T.ieee_fdiv": 2, "T.ieee_fmaf": 3,
               "T.ieee_frcp": 1, "T.ieee_fsqrt": 1}
_IEEE_MODES = ("rn", "rz", "ru", "rd")


class _IeeePlaceholder(_Placeholder):
    """T.ieee_add and the other rounding-mode operations: a bad mode is a ValueError even
    outside a kernel, as TileLang checks it when the call is made; a good one is kernel-only."""

    __slots__ = ()

    def __call__(self, *args, **kwargs):
        n = _IEEE_ARITY[self._path]
        mode = kwargs.get("rounding_mode", args[n] if len(args) > n else "rn")
        if mode not in _IEEE_MODES:
            raise ValueError("Invalid rounding mode %r for %s: expected one of %s"
                             % (mode, self._path, ", ".join(_IEEE_MODES)))
        raise kernel_only_error(self._path)


def _placeholder(path):
    p = _PLACEHOLDERS.get(path)
    if p is None:
        kind = _IeeePlaceholder if path in _IEEE_ARITY else _Placeholder
        p = _PLACEHOLDERS.setdefault(path, kind(path))
    return p


# The fast-math forms are the T.* names that begin with "__" (any other such name is Python's).
_FAST_MATH = frozenset(("__exp", "__exp10", "__log", "__log2", "__log10", "__tan", "__cos", "__sin"))


def __getattr__(name):
    if name in _DTYPES:
        return _DTYPES[name]
    if name.startswith("__") and name not in _FAST_MATH:
        raise AttributeError(name)
    return _placeholder("T." + name)


def __dir__():
    return sorted(set(globals()) | set(_DTYPES))


del _dtypes
