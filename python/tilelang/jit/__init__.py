"""@tilelang.jit and tilelang.compile over libtilescale.

Both TileLang kernel styles, told apart by TileLang's rule (a function that builds a
@T.prim_func, itself or through a helper it defines, is a lazy factory):
- lazy: `kernel = matmul(1024, 1024, 1024, 128, 128, 32)` compiles function `matmul` of the
  script's file with the call's values as -D parameters and returns a JITKernel (cached by the
  values; out_idx applies);
- eager: `c = matmul(a, b, 128, 128, 32)` takes the T.const sizes from the tensors' shapes
  (any tensor, through the body's local names and simple arithmetic; or keywords), compiles
  with the other values as -D parameters, launches and returns the outputs; a repeated call
  with the same shapes and values goes straight to the kernel.  `matmul.compile(M=..., ...)`
  only compiles.  out_idx is refused, as TileLang refuses it (outputs are T.empty tensors).
Functions defined inside other functions compile too (FuncInfo.nested).
`tilelang.compile(prim_func)` compiles what a @T.prim_func marker names: a module-level
prim_func (plain module constants it reads go along as -D overrides) or one built by a plain
factory call (the factory is recompiled with that call's argument values)."""
import functools
import inspect
import threading

from .._callbase import Dispatcher

from .. import _compiler as _c
from .. import _symbolic
from ..language import PrimFuncRef, PtrSpec
from .kernel import JITKernel, normalize_out_idx

__all__ = ["jit", "compile", "lower", "par_compile", "JITImpl", "JITKernel", "CompiledArtifact"]

_OPTIONS = ("out_idx", "target", "target_host", "execution_backend", "verbose", "pass_configs",
            "debug_root_path", "compile_flags")


def _check_unknown(fn, unknown):
    if unknown:
        raise TypeError("tilelang.%s() got unexpected keyword argument%s %s (accepted: %s)" % (
            fn, "s" if len(unknown) > 1 else "", ", ".join(repr(k) for k in sorted(unknown)),
            ", ".join(_OPTIONS)))


def _is_tensor(x):
    return hasattr(x, "data_ptr") and hasattr(x, "shape") and hasattr(x, "stride")


def call_key(args, kwargs):
    """What decides an eager call's kernel, cheaply: the non-tensor values and each tensor's
    shape, strides and dtype (the T.const sizes come from them); None when a value is not
    hashable (the call then takes the full path)."""
    key = []
    for x in args:
        key.append((tuple(x.shape), x.stride(), x.dtype) if _is_tensor(x) else x)
    for k, x in kwargs.items():
        key.append((k, (tuple(x.shape), x.stride(), x.dtype) if _is_tensor(x) else x))
    key = tuple(key)
    try:
        hash(key)
    except TypeError:
        return None
    return key


_PLAIN = (int, float, bool, str, type(None))


def _typed(v):
    """v with the type of every plain value beside it, so that 1, 1.0 and True (equal, with
    equal hashes) never share a key; a value that is neither plain nor a tuple stays as is."""
    if type(v) in _PLAIN:
        return (type(v), v)
    if type(v) is tuple:
        return (tuple, tuple(_typed(x) for x in v))
    return v


def lazy_call_key(args, kwargs):
    """What decides a lazy factory call's kernel before any binding: the values as passed,
    typed; None when one is not hashable (the call then takes the full path)."""
    key = (tuple(_typed(a) for a in args), tuple((k, _typed(v)) for k, v in kwargs.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


class _Options:
    def __init__(self, out_idx=None, target=None, target_host=None, execution_backend=None,
                 verbose=None, pass_configs=None, debug_root_path=None, compile_flags=None):
        _c.arch_for(target)                 # bad targets and backends fail at decoration
        _c.compiler_for(execution_backend)
        if out_idx is not None and not isinstance(out_idx, (int, list, tuple)):
            raise TypeError("tilelang: out_idx must be an int or a list of ints, got %r" % (out_idx,))
        self.out_idx, self.target, self.execution_backend = out_idx, target, execution_backend
        self.target_host, self.verbose = target_host, bool(verbose)
        self.pass_configs, self.compile_flags = pass_configs, compile_flags
        self.debug_root_path = debug_root_path

    def key(self):
        return (repr(self.out_idx), str(self.target), str(self.execution_backend),
                _c._freeze(self.pass_configs))

    def build(self, info, values, config=None, closure=None, pass_configs=None):
        """Compiles; pass_configs (a tuned config's) are merged over the decorator's (or
        tilelang.compile's), and the library applies them."""
        pcs = self.pass_configs
        if pass_configs:
            pcs = {str(getattr(k, "value", k)): v for k, v in
                   list((self.pass_configs or {}).items()) + list(pass_configs.items())}
        k = _c.compile_function(info, values, closure=closure, target=self.target,
                                execution_backend=self.execution_backend, verbose=self.verbose,
                                pass_configs=pcs)
        return JITKernel(k, None if info.style == "eager" else self.out_idx, name=info.name,
                         config=config, pass_configs=pcs,
                         compile_flags=self.compile_flags, target=self.target,
                         execution_backend=self.execution_backend,
                         debug_root_path=self.debug_root_path)


class JITImpl(Dispatcher):
    """What @tilelang.jit returns: call it (lazy: -> JITKernel; eager: runs), or .compile().

    An eager call that matches one seen before (the same tensor shapes, strides and dtypes and
    the same plain values, all passed by position) goes from C straight to its kernel's
    Launcher (tilescale/_fastcall.c: JITImpl derives from its Dispatcher); any other call is
    _call_py, which remembers it for C."""

    def __init__(self, func, **options):
        self.func = func
        self.options = _Options(**options)
        self.out_idx = self.options.out_idx
        self.pass_configs = self.options.pass_configs
        self.signature = inspect.signature(func)
        functools.update_wrapper(self, func)
        self._info = None
        self._cache = {}
        self._calls = {}  # eager: call_key -> (kernel, where its inputs are in the call)
        self._lazy_calls = {}  # lazy: lazy_call_key -> kernel (a factory call in a hot loop)
        self._lock = threading.Lock()

    @property
    def info(self):
        if self._info is None:
            self._info = _c.FuncInfo(self.func, "@tilelang.jit function")
        return self._info

    @property
    def mode(self):
        return "eager" if self.info.style == "eager" else "lazy"

    def __repr__(self):
        return "<tilelang.jit %s>" % getattr(self.func, "__qualname__", self.func)

    # ---- argument binding --------------------------------------------------------------------
    def _bind(self, args, kwargs, partial=False):
        try:
            if partial:
                return self.signature.bind_partial(*args, **kwargs)
            return self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError("tilelang: %s(): %s" % (self.info.name, e)) from None

    def _lazy_values(self, args, kwargs):
        bound = self._bind(args, kwargs)
        values = {}
        for name, v in bound.arguments.items():
            kind = self.signature.parameters[name].kind
            if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                if v:
                    raise TypeError("tilelang: %s(): values for *%s cannot be passed to the "
                                    "compiler (it binds parameters by name)" % (self.info.name, name))
                continue
            values[name] = v
        return values

    def _eager_values(self, args, kwargs, need_tensors):
        """(-D values, {param: tensor}) of an eager call.  A T.const takes its value from a
        keyword (or an argument of that name), else from the call's tensors: every tensor's
        declared shape and strides, through the body's local names and simple arithmetic
        (`(M, K)` in a local tuple, `KH = K`, `K // 2`, `heads // groups`), in any order of
        the tensors (_symbolic.solve_sizes), as TileLang binds them."""
        info, sig = self.info, self.info.eager
        if self.options.out_idx is not None:
            raise ValueError("tilelang: out_idx is only supported in lazy mode; %s is an eager "
                             "kernel: use T.empty() to declare its output tensors instead"
                             % info.name)
        kwargs = dict(kwargs)
        consts = {c: kwargs.pop(c) for c in list(kwargs)
                  if c in sig.consts and c not in self.signature.parameters}
        bound = self._bind(args, kwargs, partial=True)
        tensors, values = {}, {}
        for name, v in bound.arguments.items():
            if isinstance(v, PtrSpec):  # `A: T.ptr` given T.ptr() to compile: a launch parameter
                continue
            if _is_tensor(v):
                tensors[name] = v
            elif name in sig.tensors:
                raise TypeError("tilelang: %s(): '%s' is declared as a tensor (%s: T.Tensor(...)), "
                                "got %s" % (info.name, name, name, type(v).__name__))
            else:
                values[name] = v
        if need_tensors:
            missing = [t for t in sig.tensors if t not in tensors]
            if missing:
                raise TypeError("tilelang: %s() missing tensor argument%s %s" % (
                    info.name, "s" if len(missing) > 1 else "", ", ".join(map(repr, missing))))
        for c in sig.consts:  # a const that is also a parameter, passed by position or keyword
            if c in values and c not in consts:
                consts[c] = values[c]
        missing = [c for c in sig.consts if c not in consts]
        if missing:
            known = dict(values)
            for name, p in self.signature.parameters.items():
                if name not in known and name not in tensors and p.default is not p.empty:
                    known[name] = p.default
            plan = sig.plan(known)
            eqs = plan.equations(tensors)
            fixed = {c: v for c, v in consts.items() if isinstance(v, int)}
            sizes = _symbolic.solve_sizes([(e, v) for e, v, _ in eqs],
                                          set(sig.consts) | set(plan.dynamic), fixed)
            for c in missing:
                if c in sizes:
                    consts[c] = sizes[c]
                    continue
                srcs = plan.sources(c)
                absent = sorted({t for t, _, _, _ in srcs if t not in tensors})
                if not srcs:
                    why = ("; no tensor shape or stride the package can read mentions it, so no "
                           "tensor gives it")
                elif absent:
                    why = " or pass the tensor%s %s" % ("s" if len(absent) > 1 else "",
                                                        ", ".join(map(repr, absent)))
                else:
                    why = "; the tensors' dimensions (%s) do not determine it" % ", ".join(
                        "%s.%s[%d] = %r" % (t, k, i, d) for t, k, i, d in srcs)
                raise ValueError("tilelang: %s(): no value for T.const '%s': pass it as a keyword "
                                 "(%s=...)%s" % (info.name, c, c, why))
        for c in sig.consts:
            values[c] = consts[c]
        return values, tensors

    # ---- compile and call --------------------------------------------------------------------
    def _key(self, values, closure=None):
        """Cache key: every parameter's -D text, defaults included (so f(256) and
        f(256, block=128) with block=128 the default share a kernel), and the values a
        nested function reads from enclosing scopes."""
        full = dict(values)
        for name, p in self.signature.parameters.items():
            if name not in full and p.default is not p.empty:
                full[name] = p.default
        key = []
        for k, v in sorted(full.items()):
            try:
                key.append((k, _c.param_text(v)))
            except TypeError:
                key.append((k, "<%s>" % repr(v)))
        if closure:
            key.append(("<closure>", _c._freeze(closure)))
        return tuple(key)

    def _kernel(self, values, config=None, pass_configs=None):
        closure = self.info.closure() if self.info.nested else None
        key = self._key(values, closure)
        if pass_configs:
            key += (("<pass_configs>", _c._freeze(pass_configs)),)
        with self._lock:
            k = self._cache.get(key)
        if k is None:
            k = self.options.build(self.info, values, config, closure, pass_configs)
            with self._lock:
                k = self._cache.setdefault(key, k)
        return k

    def compile(self, *args, **kwargs):
        """Compiles with these values (eager: sizes as keywords, M=..., N=...)."""
        if self.info.style == "eager":
            values, _ = self._eager_values(args, kwargs, need_tensors=False)
        elif self.info.style == "prim":
            if args or kwargs:
                raise TypeError("tilelang: %s is a @T.prim_func: it takes no compile-time values"
                                % self.info.name)
            values = {}
        else:
            values = self._lazy_values(args, kwargs)
        return self._kernel(values)

    def _call_py(self, *args, **kwargs):
        if self.info.style != "eager":
            return self._lazy_call(args, kwargs)
        fkey = None if self.info.nested else call_key(args, kwargs)
        hit = self._calls.get(fkey) if fkey is not None else None
        if hit is None:
            values, tensors = self._eager_values(args, kwargs, need_tensors=True)
            hit = self.bind_call(self._kernel(values), tensors, args, kwargs)
            if fkey is not None:
                if len(self._calls) > 1024:
                    self._calls.clear()
                self._calls[fkey] = hit
        k, where = hit
        if fkey is not None and not kwargs:
            self._fast_remember(args, k, tuple(where))
        return k(*[args[w] if isinstance(w, int) else kwargs[w] for w in where])

    def _lazy_call(self, args, kwargs):
        """A factory call: the kernel of the same values passed the same way comes from a memo
        (binding and the -D texts cost tens of microseconds, which scripts that call the
        factory on every step, as autograd backward functions do, pay each time).  A nested
        function's closure may change between calls, so it always takes the full path."""
        key = None if self.info.nested else lazy_call_key(args, kwargs)
        k = self._lazy_calls.get(key) if key is not None else None
        if k is None:
            k = self.compile(*args, **kwargs)
            if key is not None:
                if len(self._lazy_calls) > 1024:
                    self._lazy_calls.clear()
                self._lazy_calls[key] = k
        return k

    def bind_call(self, k, tensors, args, kwargs):
        """(kernel, where each input of k is in a call: an index of args or a keyword)."""
        names = list(self.signature.parameters)
        where = []
        for a in k.inputs:
            if a.name not in tensors:
                raise TypeError("tilelang: %s(): no tensor for kernel parameter '%s'"
                                % (self.info.name, a.name))
            i = names.index(a.name)
            where.append(i if i < len(args) else a.name)
        return k, where

    def get_kernel_source(self, *args, **kwargs):
        return self.compile(*args, **kwargs).get_kernel_source()

    def get_tir(self, *args, **kwargs):
        return self.compile(*args, **kwargs).get_tir()

    def par_compile(self, configs, num_workers=None, ignore_error=False):
        """Compiles each config (a dict of keyword values, or a tuple of positional ones) in
        parallel threads; a failed one is None with ignore_error, else its error is raised."""
        configs = list(configs)
        out = _c.parallel_compile(
            lambda cfg: self.compile(*cfg) if isinstance(cfg, tuple) else self.compile(**cfg),
            configs, num_workers)
        return _results(out, ignore_error)


def _results(out, ignore_error):
    for _, e in out:
        if e is not None and not ignore_error:
            raise e
    return [k for k, _ in out]


def jit(func=None, *, out_idx=None, target=None, target_host=None, execution_backend=None,
        verbose=None, pass_configs=None, debug_root_path=None, compile_flags=None, **unknown):
    """@tilelang.jit or @tilelang.jit(out_idx=..., pass_configs=..., ...)."""
    _check_unknown("jit", unknown)
    opts = dict(out_idx=out_idx, target=target, target_host=target_host,
                execution_backend=execution_backend, verbose=verbose, pass_configs=pass_configs,
                debug_root_path=debug_root_path, compile_flags=compile_flags)
    if func is None:
        return lambda f: _jit_one(f, opts)
    return _jit_one(func, opts)


def _jit_one(func, opts):
    if isinstance(func, PrimFuncRef):  # @tilelang.jit over @T.prim_func
        func = func.func
    if not callable(func) or not hasattr(func, "__code__"):
        raise TypeError("tilelang.jit: expected a function, got %r" % (func,))
    return JITImpl(func, **opts)


# ---- tilelang.compile ------------------------------------------------------------------------
_compiled = {}
_compiled_lock = threading.Lock()


class _CodeFunc:
    """A factory known only by its code object (the frame that built a @T.prim_func)."""

    def __init__(self, code, qualname):
        self.__code__, self.__qualname__, self.__name__ = code, qualname, code.co_name


def _prim_values(ref):
    """(FuncInfo, -D values, closure values) for a PrimFuncRef."""
    if ref.factory is None:  # module-level prim_func: plain module constants as overrides
        info = _c.FuncInfo(ref.func, "@T.prim_func")
        g = ref.func.__globals__
        values = {}
        for n in sorted(_c.referenced_names(ref.func.__code__) & info.module_names):
            if n in g:
                try:
                    _c.param_text(g[n])
                except TypeError:
                    continue  # a function, module or object: the compiler's own value stands
                values[n] = g[n]
        return info, values, None
    info = _c.FuncInfo(_CodeFunc(ref.factory, ref.factory_frame), "factory")
    info.stop_after(ref.func.__name__, ref.func.__code__.co_firstlineno)
    if info.style != "lazy":
        raise _c.TileLangError("tilelang: the compiler does not see '%s' as a kernel factory"
                               % info.name)
    # (what the function does after building the prim_func is not re-run: a test function
    # may go on to reassign its parameters)
    reassigned = _c.assigned_params(info.node, info.run_statements()) & set(ref.factory_args)
    if reassigned:
        raise _c.TileLangError(
            "tilelang: factory '%s' assigns to its parameter%s %s before building its @T.prim_func; "
            "the compiler re-runs the factory from its source with the call's values, which are "
            "lost here: decorate '%s' with @tilelang.jit instead" % (
                info.name, "s" if len(reassigned) > 1 else "", ", ".join(sorted(reassigned)),
                info.name))
    # values left at their defaults are not passed: the compiler applies the same defaults
    return info, {k: v for k, v in ref.factory_args.items()
                  if not (k in ref.factory_defaults and ref.factory_defaults[k] is v)}, (
                      ref.factory_closure if info.nested else None)


def compile(func=None, out_idx=None, execution_backend=None, target=None, target_host=None,  # noqa: A001
            verbose=None, pass_configs=None, compile_flags=None, **unknown):
    """Compiles a @T.prim_func (or a factory call's result) into a JITKernel."""
    _check_unknown("compile", unknown)
    if isinstance(func, JITKernel):
        return func
    if isinstance(func, JITImpl):
        return func.compile()
    if not isinstance(func, PrimFuncRef):
        raise TypeError("tilelang.compile: expected a @T.prim_func (or what a factory returns), "
                        "got %r" % (func,))
    opts = _Options(out_idx=out_idx, target=target, target_host=target_host,
                    execution_backend=execution_backend, verbose=verbose,
                    pass_configs=pass_configs, compile_flags=compile_flags)
    info, values, closure = _prim_values(func)
    key = (info.path, info.qualname, info.node.lineno,
           tuple(sorted((k, str(v)) for k, v in _c.params_text(values, info.name, info.node).items())),
           _c._freeze(closure), opts.key())
    with _compiled_lock:
        k = _compiled.get(key)
    if k is None:
        k = opts.build(info, values, closure=closure)
        with _compiled_lock:
            k = _compiled.setdefault(key, k)
    return k


class CompiledArtifact:
    """What tilelang.lower returns: the kernel's CUDA source (kernel_source) and parameters.
    TileLang's TVM modules (host_mod, device_mod, rt_mod) have no counterpart here: None.  The
    kernel is compiled as tilelang.compile would (artifact.kernel is that JITKernel)."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.kernel_source = kernel.get_kernel_source()
        self.params = kernel.params
        self.host_mod = self.device_mod = self.rt_mod = None

    def __repr__(self):
        return "CompiledArtifact(%s)" % self.kernel.name


def lower(func, target="auto", target_host=None, runtime_only=False, enable_host_codegen=False,
          enable_device_compile=False, pass_configs=None, **unknown):
    """tilelang.lower(prim_func, target=...): the kernel's generated CUDA without a launch (its
    kernel_source); TileLang's lowering switches (runtime_only, enable_*_codegen) change nothing
    here."""
    _check_unknown("lower", unknown)
    del runtime_only, enable_host_codegen, enable_device_compile
    return CompiledArtifact(compile(func, target=None if target == "auto" else target, target_host=target_host,
                                    pass_configs=pass_configs))


def par_compile(funcs, out_idx=None, execution_backend=None, target=None, target_host=None,
                verbose=None, pass_configs=None, compile_flags=None, num_workers=None,
                ignore_error=False):
    """tilelang.compile of each @T.prim_func, in parallel threads."""
    out = _c.parallel_compile(
        lambda f: compile(f, out_idx=out_idx, execution_backend=execution_backend, target=target,
                          target_host=target_host, verbose=verbose, pass_configs=pass_configs,
                          compile_flags=compile_flags), list(funcs), num_workers)
    return _results(out, ignore_error)
