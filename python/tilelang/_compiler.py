"""The one place where tilelang talks to libtilescale (through python/tilescale).

A decorated function is known by its file and name (FuncInfo); compiling hands the file, the
name and the call's values as -D parameters to the library, exactly as `tilescale compile -k
NAME -D ...` does.  Python's own `ast` module is used only to read what the library needs to be
told and cannot report itself: which style a function is (lazy factory, eager body, prim_func,
by the same rule as the C front end), which T.const names are read from which tensor dimension,
and which module-level names a @T.prim_func may override.  No kernel body is evaluated here."""
import ast
import logging
import os
import sys
import threading
import time

from .env import env as _env
from .language import _Placeholder
from .language.dtypes import dtype as _dtype
from .language.dtypes import dtype_param_text, torch_dtype_name

logger = logging.getLogger("tilelang")

_lock = threading.RLock()
_ctx = None
_programs = {}  # (path, mtime_ns, size) -> tilescale.Program
_asts = {}      # (path, mtime_ns, size) -> ast.Module


def _tilescale():
    """python/tilescale, imported on first use (it loads libtilescale.so)."""
    import tilescale
    return tilescale


class TileLangError(Exception):
    """A function the package cannot hand to the compiler (nested, no source file, ...)."""


# ---- context and programs --------------------------------------------------------------------
def context():
    """The process-wide tilescale.Context (created on first use, so importing tilelang does not
    touch the driver; tilelang.disable_cache() before the first compile takes effect)."""
    global _ctx
    with _lock:
        if _ctx is None:
            _ctx = _tilescale().Context(disable_cache=_env.is_cache_disabled(),
                                     verbose=_env.TILELANG_VERBOSE)
        return _ctx


def reset_context():
    """Drops the shared context and loaded programs (after a cache setting changes)."""
    global _ctx
    with _lock:
        _ctx = None
        _programs.clear()


def _file_key(path):
    st = os.stat(path)
    return (path, st.st_mtime_ns, st.st_size)


def program(path):
    key = _file_key(path)
    with _lock:
        p = _programs.get(key)
        if p is None:
            p = _programs[key] = context().load(path)
        return p


def module_ast(path):
    key = _file_key(path)
    with _lock:
        tree = _asts.get(key)
        if tree is None:
            with open(path, encoding="utf-8") as f:
                tree = _asts[key] = ast.parse(f.read(), filename=path)
        return tree


# ---- what the C front end sees of a function --------------------------------------------------
def _decorator_names(node):
    out = []
    for d in node.decorator_list:
        if isinstance(d, ast.Call):
            d = d.func
        if isinstance(d, ast.Attribute):
            out.append(d.attr)
        elif isinstance(d, ast.Name):
            out.append(d.id)
    return out


def _contains_prim_func(body):
    """Mirror of the C front end's contains_prim_func: a nested @T.prim_func, also inside
    if/for/while/with/try blocks (not inside nested plain functions)."""
    for s in body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and "prim_func" in _decorator_names(s):
            return True
        blocks = []
        if isinstance(s, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            blocks = [getattr(s, "body", []), getattr(s, "orelse", [])]
        if isinstance(s, ast.Try):
            blocks += [h.body for h in s.handlers] + [s.finalbody]
        if any(_contains_prim_func(b) for b in blocks):
            return True
    return False


def _module_names(tree):
    """Names the C front end binds at module level: top-level assignments only (it never runs
    top-level control flow such as `if __name__ == "__main__":`)."""
    names = set()

    def targets(t):
        if isinstance(t, ast.Name):
            names.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e)
    for s in tree.body:
        if isinstance(s, ast.Assign):
            for t in s.targets:
                targets(t)
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            targets(s.target)
    return names


_TENSOR_KINDS = {"Tensor", "Buffer", "StridedTensor", "FragmentBuffer", "SharedBuffer",
                 "LocalBuffer"}


def _tensor_annotation(node):
    """(shape exprs, stride exprs or None) of `T.Tensor((M, K), dt)`, `T.Tensor[(M, K), dt]` or
    `T.StridedTensor((M, K), (sM, 1), dt)`, else None."""
    if isinstance(node, ast.Call):
        f, args = node.func, list(node.args)
        kw = {k.arg: k.value for k in node.keywords}
    elif isinstance(node, ast.Subscript):
        f = node.value
        sl = node.slice.value if isinstance(node.slice, ast.Index) else node.slice  # py3.8
        args, kw = (list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]), {}
    else:
        return None
    kind = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if kind not in _TENSOR_KINDS:
        return None
    shape = args[0] if args else kw.get("shape")
    strides = (args[1] if len(args) > 1 else kw.get("strides")) if kind == "StridedTensor" else None

    def elts(e):
        if isinstance(e, (ast.Tuple, ast.List)):
            return list(e.elts)
        return [e] if e is not None else []
    return elts(shape), (elts(strides) if strides is not None else None)


class EagerSignature:
    """What an eager @tilelang.jit body declares: its T.const names, the parameters declared
    as tensors by annotation, and for each const the first tensor dimension (or stride) that
    is exactly that name — where its value is read from a call's tensors (as TileLang does:
    every T.const must appear directly as some dimension)."""

    def __init__(self, fdef):
        self.consts, self.tensors, self.matcher = [], [], {}
        params = {a.arg for a in fdef.args.args + fdef.args.kwonlyargs}
        for node in ast.walk(fdef):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "const" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                self.consts += [n for n in node.args[0].value.replace(",", " ").split()
                                if n not in self.consts]
        anns = [(a.arg, a.annotation) for a in fdef.args.args + fdef.args.kwonlyargs if a.annotation]
        anns += [(s.target.id, s.annotation) for s in fdef.body
                 if isinstance(s, ast.AnnAssign) and s.value is None and isinstance(s.target, ast.Name)]
        for name, ann in anns:
            t = _tensor_annotation(ann)
            if t is None or name not in params:
                continue
            if name not in self.tensors:
                self.tensors.append(name)
            for kind, dims in (("shape", t[0]), ("stride", t[1] or [])):
                for i, d in enumerate(dims):
                    if isinstance(d, ast.Name) and d.id in self.consts and d.id not in self.matcher:
                        self.matcher[d.id] = (name, kind, i)


class FuncInfo:
    """A function of a kernel file as the compiler knows it: path, top-level name, style
    ('prim', 'lazy' or 'eager'), its ast node, and the module-level names of the file."""

    def __init__(self, func, what="function"):
        code = func.__code__
        self.func = func
        self.name = code.co_name
        self.qualname = getattr(func, "__qualname__", None) or getattr(code, "co_qualname", self.name)
        path = code.co_filename
        if not path or not os.path.exists(path):
            raise TileLangError(
                "tilelang: %s '%s' has no source file (defined in %s); TileScale compiles "
                "kernels from their .py file" % (what, self.qualname, path))
        self.path = os.path.abspath(path)
        if "<locals>" in self.qualname:
            raise TileLangError(
                "tilelang: %s '%s' (%s) is defined inside another function; TileScale's compiler "
                "only finds top-level functions of a file (move it to module level)"
                % (what, self.qualname, self.path))
        tree = module_ast(self.path)
        node = None
        for s in tree.body:  # the last top-level def of that name, as the C front end picks
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == self.name:
                node = s
        if node is None:
            raise TileLangError("tilelang: no top-level function '%s' in %s (the compiler skips "
                                "defs inside `if` blocks)" % (self.name, self.path))
        self.node = node
        self.module_names = _module_names(tree)
        if "prim_func" in _decorator_names(node):
            self.style = "prim"
        elif _contains_prim_func(node.body):
            self.style = "lazy"
        else:
            self.style = "eager"
        self._eager = None

    @property
    def eager(self):
        if self._eager is None:
            self._eager = EagerSignature(self.node)
        return self._eager

    def __repr__(self):
        return "<%s %s in %s>" % (self.style, self.name, self.path)


def referenced_names(code):
    """Global names a function's code (nested functions included) reads."""
    names = set(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            names |= referenced_names(c)
    return names


def assigned_params(fdef):
    """Parameters the function body itself assigns to (nested defs excluded)."""
    params = {a.arg for a in fdef.args.args + fdef.args.kwonlyargs}
    found = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store) and child.id in params:
                found.add(child.id)
            visit(child)
    for s in fdef.body:
        visit(ast.Module(body=[s], type_ignores=[]))
    return found


# ---- values -> -D text -----------------------------------------------------------------------
def param_text(value, where=""):
    """The -D text of a Python value (tilescale.param_text plus TileLang's objects)."""
    if isinstance(value, _dtype):
        return dtype_param_text(value)
    if isinstance(value, (tuple, list)):
        items = [param_text(v, where) for v in value]
        if isinstance(value, list):
            return "[%s]" % ", ".join(items)
        return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)
    text = getattr(value, "tilelang_param_text", None)
    if text is not None and not isinstance(value, type):
        return text()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return _tilescale().param_text(value)
    tname = type(value).__module__ + "." + type(value).__name__
    if tname.startswith("torch.") and type(value).__name__ == "dtype":
        return dtype_param_text(torch_dtype_name(value))
    if tname.startswith("numpy.") and getattr(value, "ndim", None) == 0:
        return param_text(value.item(), where)  # numpy scalars
    if hasattr(value, "__index__") and not hasattr(value, "data_ptr"):
        return str(value.__index__())
    if hasattr(value, "data_ptr") and hasattr(value, "shape"):
        raise TypeError("tilelang: %sgot a tensor; a lazy @tilelang.jit factory takes compile-time "
                        "values (ints, floats, dtypes, tuples), the kernel it returns takes tensors"
                        % where)
    raise TypeError("tilelang: %scannot pass %r (%s) to the compiler: only int, float, bool, str, "
                    "None, dtypes, T.* names, tuples and lists are kernel parameters"
                    % (where, value, type(value).__name__))


def params_text(values, fname):
    DType = _tilescale().DType
    return {k: DType(param_text(v, "parameter '%s' of '%s': " % (k, fname)))
            for k, v in values.items()}


# ---- options ---------------------------------------------------------------------------------
_BACKENDS = {None: "nvrtc", "auto": "nvrtc", "tvm_ffi": "nvrtc", "cython": "nvrtc",
             "nvrtc": "nvrtc", "ctypes": "nvrtc", "dlpack": "nvrtc", "cutedsl": "nvrtc",
             "nvcc": "nvcc"}


def compiler_for(execution_backend):
    eb = execution_backend if execution_backend is not None else (
        os.environ.get("TILELANG_EXECUTION_BACKEND") or None)
    if eb not in _BACKENDS:
        raise ValueError("tilelang: execution_backend=%r is not supported by TileScale (use one of "
                         "'auto', 'tvm_ffi', 'cython', 'nvrtc', 'cutedsl': all compile with NVRTC; "
                         "'nvcc' for nvcc)" % (eb,))
    return _BACKENDS[eb]


def arch_for(target):
    """The library's arch string for a TileLang target (None: the device's, else sm_90a)."""
    if target is None:
        target = os.environ.get("TILELANG_DEFAULT_TARGET") or "auto"
    t = str(getattr(target, "arch", None) or target).strip()
    if t in ("auto", "cuda", "nvidia"):
        return None
    if t.startswith("sm_"):
        return t
    if t.startswith("cuda"):
        for part in t.split():
            if part.startswith(("-arch=", "--arch=")):
                return part.split("=", 1)[1]
        return None
    raise ValueError("tilelang: target=%r is not supported by TileScale (CUDA only: 'auto', "
                     "'cuda', 'cuda -arch=sm_90a' or 'sm_90a')" % (target,))


def compile_function(info, params, *, target=None, execution_backend=None, verbose=False):
    """Compiles `info` with -D params {name: python value}; returns a tilescale.Kernel."""
    arch = arch_for(target)
    compiler = compiler_for(execution_backend)
    prog = program(info.path)
    dparams = params_text(params, info.name)
    t0 = time.time()
    k = prog.compile(info.name, arch, params=dparams, compiler=compiler)
    if verbose or _env.TILELANG_PRINT_ON_COMPILATION:
        print("tilelang: compiled %s:%s(%s) in %.2f s%s" % (
            os.path.basename(info.path), info.name,
            ", ".join("%s=%s" % kv for kv in dparams.items()), time.time() - t0,
            " (cached)" if k.from_cache else ""), file=sys.stderr)
    return k
