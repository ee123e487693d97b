"""tilescale — Python binding of libtilescale (pure ctypes over include/tilescale.h).

    import tilescale
    ctx = tilescale.Context()
    prog = ctx.load("examples/softmax.py")
    k = prog.compile("softmax", M=4096, N=4096)      # -D M=4096 -D N=4096
    y = k(x)                                          # torch CUDA tensor in, output allocated

torch is optional: it is used (never imported at module load) to recognise torch tensors,
allocate outputs (out_idx / T.empty) and pick the current stream.  Without it, pass every
argument, tensors as `Tensor(ptr, dtype, shape, strides=None, device=0)`.  Every failure of
the C library raises TileScaleError(status_name, ts_last_error text); a value of the wrong
type raises TypeError naming the parameter, and a NUL character in a path or text (which C
would silently cut off there) raises ValueError, before the library is called.

Calling a Kernel runs the C call path (_fastcall.c, see _callpath.py) when it was built, the
Python one (Kernel._call_py) otherwise; both launch through ts_kernel_launch, which checks
every argument."""
import ast
import ctypes
import functools
import json
import operator
import os
import sys
from collections import namedtuple

from . import _callpath, _lib
from ._lib import lib as _c

__all__ = ["Context", "Program", "Kernel", "Tensor", "ArgInfo", "TileScaleError", "CompileError", "DType",
           "HostCallError", "compile", "version"]

version = "0.1.0"


class TileScaleError(Exception):
    """A non-OK ts_status: .status is its name (e.g. "TS_ERR_COMPILE"), .code its value,
    .message the library's ts_last_error text (compile errors: file:line:col diagnostics)."""

    def __init__(self, status, message):
        super().__init__(status, message)
        self.status, self.message = status, message
        self.code = _lib.STATUS_NAMES.index(status) if status in _lib.STATUS_NAMES else -1

    def __str__(self):
        return "%s: %s" % (self.status, self.message.rstrip())


class CompileError(TileScaleError, ValueError):
    """TS_ERR_COMPILE: the kernel source was refused (its file:line:col diagnostics are the
    message).  Also a ValueError, which is what TileLang raises for a kernel it refuses, so
    `except ValueError` written for TileLang catches it."""


_callpath.init(TileScaleError)


class HostCallError(Exception):
    """Raised by a host-call function (Context.set_host_call) with a message that is the whole
    explanation: the diagnostic carries it as it is, without the exception's type and place."""


def _status_name(st):
    return _lib.STATUS_NAMES[st] if 0 <= st < len(_lib.STATUS_NAMES) else "TS_STATUS_%d" % st


def _check(st, ctx_handle):
    if st != _lib.TS_OK:
        msg = _c.ts_last_error(ctx_handle) if ctx_handle else None
        msg = msg.decode("utf-8", "replace") if msg else ""
        if not msg:
            msg = (_c.ts_status_string(st) or b"").decode()
        name = _status_name(st)
        raise (CompileError if name == "TS_ERR_COMPILE" else TileScaleError)(name, msg)


def _text(b):
    return None if b is None else b.decode("utf-8", "replace")


# ---- arguments for `const char *` parameters -------------------------------------------------
# ctypes hands bytes to C as they are, so a NUL inside ends the C string early: a path
# "a.py\0junk" would load a.py and source text would lose everything after the NUL.  And
# str(None) is "None", a file name.  Every string the binding passes down goes through one
# of these two, which raise TypeError (naming the parameter) for a value of the wrong type
# and ValueError for a NUL, before the library sees anything.
def _c_str(value, param, allow_none=False):
    """str (UTF-8) or bytes for a text parameter; None only where the C API takes NULL."""
    if value is None and allow_none:
        return None
    if isinstance(value, str):
        data = value.encode("utf-8")
    elif isinstance(value, (bytes, bytearray)):
        data = bytes(value)
    else:
        raise TypeError("tilescale: %s must be str or bytes%s, not %s"
                        % (param, " or None" if allow_none else "", type(value).__name__))
    if b"\0" in data:
        raise ValueError("tilescale: %s contains a NUL character (at offset %d)"
                         % (param, data.index(b"\0")))
    return data


def _c_path(value, param, allow_none=False):
    """str, bytes or os.PathLike for a file system path (encoded as os.fsencode does)."""
    if value is None and allow_none:
        return None
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError("tilescale: %s must be a path (str, bytes or os.PathLike)%s, not %s"
                        % (param, " or None" if allow_none else "", type(value).__name__))
    data = os.fsencode(value)
    if b"\0" in data:
        raise ValueError("tilescale: %s contains a NUL character (at offset %d)"
                         % (param, data.index(b"\0")))
    return data


def _c_int(value, param):
    """An integer parameter: ints (and int-like objects), not floats, strings or None."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError("tilescale: %s must be an integer, not %s"
                        % (param, type(value).__name__)) from None


# ---- parameter values -> -D text ---------------------------------------------------------
class DType(str):
    """A dtype name written unquoted in -D text (float16, not "float16")."""


for _n in _lib.DTYPE_NAMES[1:-1]:  # tilescale.float16, ...; bool is tilescale.bool_
    globals()[_n + "_" if _n == "bool" else _n] = DType(_n)
    __all__.append(_n + "_" if _n == "bool" else _n)

_TORCH_DTYPES = {"float8_e4m3fn": "float8_e4m3", "float8_e5m2": "float8_e5m2", "half": "float16",
                 "float": "float32", "double": "float64", "float4_e2m1fn_x2": "uint8"}  # fp4 pairs: their bytes


# 4-bit dtypes: torch holds them as bytes, two elements a byte (the kernel's last dim halved);
# the library checks such byte tensors against the 4-bit parameter (rt/launch.c).
_PACKED_STORAGE = {"int4": "int8", "uint4": "uint8", "float4_e2m1fn": "float4_e2m1fn_x2"}


def split_top(text, sep=","):
    """Splits text at `sep` outside brackets and quotes."""
    out, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if cur or out:
        out.append("".join(cur))
    return out


def _bracketed(text, start):
    """The index of the bracket closing the one at text[start], or -1."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def signature_dims(ir_text):
    """{parameter: [dim text]} from the first line of a kernel's IR text (`func f(A:
    float16[M, 1024], n: int32) dynamic M:`); {} when it is not there."""
    if not ir_text or not ir_text.startswith("func "):
        return {}
    line = ir_text.split("\n", 1)[0]
    start = line.find("(")
    end = _bracketed(line, start) if start >= 0 else -1
    if end < 0:
        return {}
    out = {}
    for p in split_top(line[start + 1:end]):
        name, _, ty = p.partition(":")
        ty = ty.strip()
        lb = ty.find("[")
        rb = _bracketed(ty, lb) if lb >= 0 else -1
        if rb >= 0:
            out[name.strip()] = [d.strip() for d in split_top(ty[lb + 1:rb])]
    return out


def _dim_value(text, known):
    """The value of a dim as the IR prints it (`M`, `M * 2`, `(M + 127) // 128`) over the
    known variables: integer arithmetic only (+ - * // %, min / max), else None."""
    def ev(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            return known.get(n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            v = ev(n.operand)
            return None if v is None else -v
        if isinstance(n, ast.BinOp) and type(n.op) in _DIM_OPS:
            a, b = ev(n.left), ev(n.right)
            if a is None or b is None or (isinstance(n.op, (ast.FloorDiv, ast.Mod)) and b == 0):
                return None
            return _DIM_OPS[type(n.op)](a, b)
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("min", "max")
                and len(n.args) == 2 and not n.keywords):
            a, b = ev(n.args[0]), ev(n.args[1])
            return None if a is None or b is None else (min if n.func.id == "min" else max)(a, b)
        return None

    try:
        return ev(ast.parse(text, mode="eval").body)
    except SyntaxError:
        return None


_DIM_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
            ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def dynamic_output_shape(kernel, out, infos, args):
    """The shape of output `out` (an ArgInfo with None dims) when each dynamic dim is given by
    the inputs: a variable that is a dim of an input tensor of the same name in the kernel's
    signature (`C: [M, N]` with `A: [M, K]`) or an int scalar parameter of that name, or
    integer arithmetic over such variables (`C: [M * 2, (M + 127) // 128]`); else None.
    args: the inputs, in the order of the parameters that are not outputs."""
    sig = signature_dims(kernel.ir)
    dims = sig.get(out.name)
    if not dims or len(dims) != len(out.shape):
        return None
    known, it = {}, iter(args)
    for a in infos:
        if a.is_output:
            continue
        x = next(it)
        if a.kind == "scalar":
            if isinstance(x, int) and not isinstance(x, bool):
                known.setdefault(a.name, x)
            continue
        shape = tuple(getattr(x, "shape", ()))
        for d, name in enumerate(sig.get(a.name) or ()):
            if d < len(shape) and name.isidentifier():
                known.setdefault(name, int(shape[d]))
    shape = []
    for s, text in zip(out.shape, dims):
        v = s if s is not None else _dim_value(text, known)
        if v is None or v < 0:
            return None
        shape.append(v)
    return tuple(shape)


def packed_output(torch, shape, dtype):
    """torch.empty's (shape, dtype) for a 4-bit output of logical `shape`: its bytes."""
    if not shape or shape[-1] % 2:
        raise TypeError("tilescale: a %s output needs an even last dimension, not %r" % (dtype, tuple(shape)))
    tdt = getattr(torch, _PACKED_STORAGE[dtype], None) or torch.uint8
    return tuple(shape[:-1]) + (shape[-1] // 2,), tdt


def _torch_dtype_name(t):
    name = str(t).split(".", 1)[-1]
    name = _TORCH_DTYPES.get(name, name)
    if name not in _lib.DTYPE_IDS:
        raise TypeError("tilescale: unsupported torch dtype %s" % t)
    return name


def _is_torch(x, kind):
    return type(x).__module__.startswith("torch") and type(x).__name__ == kind


def param_text(v):
    """The -D text of a Python value: ints, floats, bools, None, strings (quoted), DType or
    torch.dtype (unquoted names), tuples and lists (recursively)."""
    if v is None or isinstance(v, bool):
        return repr(v)
    if isinstance(v, DType):
        return str(v)
    if isinstance(v, str):
        return '"%s"' % v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("tilescale: %r has no Python literal text" % v)
        return repr(v)
    if isinstance(v, (tuple, list)):
        items = [param_text(x) for x in v]
        if isinstance(v, list):
            return "[%s]" % ", ".join(items)
        return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)
    if _is_torch(v, "dtype"):
        return _torch_dtype_name(v)
    raise TypeError("tilescale: cannot pass %r (%s) as a kernel parameter" % (v, type(v).__name__))


# ---- context / program ---------------------------------------------------------------------
def _host_error_text(e):
    """A host call's exception as its diagnostic text: "ValueError: msg (at helpers.py:7)",
    the place being the innermost frame of the traceback (where it was raised)."""
    if isinstance(e, HostCallError):
        return str(e)
    text = "%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        text += " (at %s:%d)" % (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
    return text


class Context:
    """Owns the CUDA driver table, cache settings and the last error text.  Creating one works
    without a GPU; launches then raise TS_ERR_NO_DRIVER."""

    def __init__(self, device=0, cache_dir=None, disable_cache=False, verbose=False,
                 private_cache=False):
        """private_cache: cache_dir is a folder the caller owns (compile workers share it), used
        even when $TILESCALE_DISABLE_CACHE turns the usual cache off."""
        device = _c_int(device, "device")
        if private_cache and cache_dir is None:
            raise ValueError("tilescale: private_cache needs a cache_dir")
        off = -1 if private_cache else int(bool(disable_cache))
        opt = _lib.ts_context_options(ctypes.sizeof(_lib.ts_context_options), device,
                                      _c_path(cache_dir, "cache_dir", allow_none=True),
                                      off, int(bool(verbose)))
        h = ctypes.c_void_p()
        st = _c.ts_context_create(ctypes.byref(opt), ctypes.byref(h))
        if st != _lib.TS_OK:
            try:
                _check(st, h.value)
            finally:
                if h.value:
                    _c.ts_context_destroy(h)
        self._h, self.device, self._destroy = h, int(device), _c.ts_context_destroy
        self.in_host_call = 0  # > 0 while its host-call function runs (the context is compiling)

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value:
            self._destroy(h)
            h.value = None

    @property
    def device_sm(self):
        """The device's SM version (90 for H100), 0 when there is no usable GPU."""
        return _c.ts_context_device_sm(self._h)

    @property
    def last_error(self):
        return _text(_c.ts_last_error(self._h))

    def set_host_call(self, fn):
        """Host calls (ts_context_set_host_call): a call in a kernel file's host code of a
        function the compiler cannot evaluate (a module of its own that is not beside the
        kernel file, ...) with plain arguments becomes fn(module, qualname, args_text), whose
        answer is the result's literal text; args_text is "((pos, ...), {'kw': v})" with dtypes
        written T.NAME.  An exception fn raises becomes a diagnostic at the call: "Type:
        message (at file:line)", or a HostCallError's message alone.  None removes it.  fn runs
        on the compiling thread (with the GIL) and must not compile with this context (it is
        busy: in_host_call is then non-zero)."""
        if fn is None:
            _check(_c.ts_context_set_host_call(self._h, _lib.HOST_CALL_FN(), None), self._h)
            self._host_call = None
            return
        answer = [None]  # the last answer's bytes: the library copies them before the next call

        def trampoline(_user, module, qualname, args, result):
            self.in_host_call += 1
            try:
                text = fn(module.decode(), qualname.decode(), args.decode("utf-8", "surrogateescape"))
                rc = 0
            except BaseException as e:  # noqa: BLE001 (nothing may propagate into C)
                text, rc = _host_error_text(e), 1
            finally:
                self.in_host_call -= 1
            if not isinstance(text, str):
                text, rc = "the host-call function answered %s, not text" % type(text).__name__, 1
            answer[0] = text.replace("\0", "\\x00").encode("utf-8", "surrogateescape")
            result[0] = answer[0]
            return rc
        cb = _lib.HOST_CALL_FN(trampoline)
        _check(_c.ts_context_set_host_call(self._h, cb, None), self._h)
        self._host_call = cb  # the C side holds only its address

    def load(self, path):
        """Parses the kernel file at `path` (str, bytes or os.PathLike)."""
        data = _c_path(path, "path")
        h = ctypes.c_void_p()
        _check(_c.ts_program_load_file(self._h, data, ctypes.byref(h)), self._h)
        return Program(self, h)

    def load_source(self, name, text):
        """Parses kernel source `text`; `name` (or None) is the file name in diagnostics."""
        name_b = _c_str(name, "name", allow_none=True)
        text_b = _c_str(text, "text")
        h = ctypes.c_void_p()
        _check(_c.ts_program_load_source(self._h, name_b, text_b, ctypes.byref(h)), self._h)
        return Program(self, h)

    @property
    def cache_info(self):
        """The disk cache: {"dir", "enabled", "max_bytes", "entries", "bytes"}."""
        info = _lib.ts_cache_info()
        _check(_c.ts_cache_get_info(self._h, ctypes.byref(info)), self._h)
        return {"dir": _text(info.dir), "enabled": bool(info.enabled), "max_bytes": info.max_bytes,
                "entries": info.entries, "bytes": info.bytes}

    def clear_cache(self):
        """Removes every cache entry; returns how many were removed."""
        n = ctypes.c_uint64()
        _check(_c.ts_cache_clear(self._h, ctypes.byref(n)), self._h)
        return n.value

    def synchronize(self):
        _check(_c.ts_synchronize(self._h), self._h)


class Program:
    """A parsed kernel file."""

    def __init__(self, ctx, handle):
        self.ctx, self._h, self._destroy = ctx, handle, _c.ts_program_destroy

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value:
            self._destroy(h)
            h.value = None

    @property
    def functions(self):
        n = _c.ts_program_functions(self._h, None, 0)
        names = (ctypes.c_char_p * max(n, 1))()
        n = _c.ts_program_functions(self._h, names, n)
        return [names[i].decode() for i in range(n)]

    def compile(self, func, arch=None, *, params=None, compiler="nvrtc", no_jit=False,
                dump_after=None, debug=False, pass_configs=None, module_path=None, **kwparams):
        """Compiles `func` with parameters given as keywords (or a `params` dict for names that
        clash with the options), each converted to -D text by param_text.  pass_configs: a dict
        like @tilelang.jit's (keys as text or PassConfigKey), merged over the decorator's.
        module_path: folders the kernel file's imports are looked for in after its own (a list,
        or text separated by os.pathsep); None: this interpreter's sys.path (user_module_path)."""
        func_b = _c_str(func, "func")
        if params is not None and not isinstance(params, dict):
            raise TypeError("tilescale: params must be a dict, not %s" % type(params).__name__)
        allp = dict(params or {}, **kwparams)
        n = len(allp)
        parr = (_lib.ts_param * max(n, 1))()
        keep = []
        for i, (k, v) in enumerate(allp.items()):
            name = _c_str(k, "parameter name %r" % (k,))
            keep.append((name, _c_str(param_text(v), "value of parameter %r" % (k,))))
            parr[i].name, parr[i].value = keep[-1]
        if not isinstance(compiler, str):
            raise TypeError("tilescale: compiler must be 'nvrtc' or 'nvcc', not %s"
                            % type(compiler).__name__)
        if compiler not in ("nvrtc", "nvcc"):
            raise ValueError("tilescale: compiler must be 'nvrtc' or 'nvcc', not %r" % compiler)
        pcs = pass_config_array(pass_configs, keep)
        if module_path is None:
            module_path = user_module_path()
        if not isinstance(module_path, str):
            module_path = os.pathsep.join(module_path)
        opt = _lib.ts_compile_options(
            ctypes.sizeof(_lib.ts_compile_options), _c_str(arch, "arch", allow_none=True),
            _lib.TS_COMPILER_NVCC if compiler == "nvcc" else _lib.TS_COMPILER_NVRTC,
            int(bool(no_jit)), _c_str(dump_after, "dump_after", allow_none=True), int(bool(debug)),
            pcs, len(pass_configs or {}), _c_str(module_path, "module_path"))
        h = ctypes.c_void_p()
        _check(_c.ts_kernel_compile(self._h, func_b, parr, n, ctypes.byref(opt),
                                    ctypes.byref(h)), self.ctx._h)
        return Kernel(self, func, h)


def user_module_path():
    """The folders of sys.path a kernel file's imports may come from: the user's own (the
    script's folder, the current directory, $PYTHONPATH and sys.path.insert's), not the standard
    library nor installed packages (site-packages, dist-packages), which hold host code only."""
    return _user_module_path(tuple(sys.path), os.getcwd())


@functools.lru_cache(maxsize=8)
def _user_module_path(path, cwd):
    """user_module_path for sys.path `path` and working folder `cwd` (every compile asks)."""
    import sysconfig
    skip = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            skip.add(os.path.realpath(p))
    out = []
    for d in path:
        d = os.path.realpath(d or cwd)
        if (d in skip or "site-packages" in d or "dist-packages" in d or d.endswith(".zip")
                or not os.path.isdir(d) or d in out):
            continue
        out.append(d)
    return os.pathsep.join(out)


def pass_config_text(v):
    """A pass_configs value as the library reads it (Python's spelling: True, 1, "x")."""
    v = getattr(v, "value", v)
    return str(v)


def pass_config_array(pass_configs, keep):
    """pass_configs {key: value} as a ts_param array (None when empty); `keep` holds the bytes."""
    if pass_configs is None:
        return None
    if not isinstance(pass_configs, dict):
        raise TypeError("tilescale: pass_configs must be a dict, not %s" % type(pass_configs).__name__)
    if not pass_configs:
        return None
    arr = (_lib.ts_param * len(pass_configs))()
    for i, (k, v) in enumerate(pass_configs.items()):
        key = str(getattr(k, "value", k))
        keep.append((_c_str(key, "pass_configs key %r" % (key,)), _c_str(pass_config_text(v), "pass_configs[%r]" % key)))
        arr[i].name, arr[i].value = keep[-1]
    keep.append(arr)
    return arr


# ---- kernels ---------------------------------------------------------------------------------
ArgInfo = namedtuple("ArgInfo", "name kind dtype shape is_output")
ArgInfo.__doc__ = ("A kernel parameter: kind 'tensor' or 'scalar', dtype name, shape tuple "
                   "(None for a dynamic dim; () for scalars), is_output (0 an input, 1 out_idx, 2 a T.empty "
                   "tensor the kernel returns).")


class Tensor:
    """Explicit device-memory view (for use without torch): ptr an int device address, strides
    in elements (None = compact row-major), device a CUDA ordinal (-1 = host, rejected)."""

    def __init__(self, ptr, dtype, shape, strides=None, device=0):
        if _is_torch(dtype, "dtype"):
            dtype = _torch_dtype_name(dtype)
        elif not isinstance(dtype, str):
            raise TypeError("tilescale: Tensor dtype must be a dtype name or torch.dtype, not %s"
                            % type(dtype).__name__)
        if dtype not in _lib.DTYPE_IDS:
            raise TypeError("tilescale: unknown dtype %r" % (dtype,))
        if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
            raise TypeError("tilescale: Tensor shape must be a sequence of integers, not %s"
                            % type(shape).__name__)
        if strides is not None and (isinstance(strides, (str, bytes))
                                    or not hasattr(strides, "__iter__")):
            raise TypeError("tilescale: Tensor strides must be a sequence of integers or None, "
                            "not %s" % type(strides).__name__)
        self.ptr, self.dtype = _c_int(ptr, "Tensor ptr"), str(dtype)
        self.shape = tuple(_c_int(s, "Tensor shape item") for s in shape)
        self.strides = None if strides is None else tuple(_c_int(s, "Tensor strides item")
                                                          for s in strides)
        self.device = _c_int(device, "Tensor device")
        if self.strides is not None and len(self.strides) != len(self.shape):
            raise ValueError("tilescale: strides and shape differ in rank")

    def __repr__(self):
        return "Tensor(0x%x, %s, %s, strides=%s, device=%d)" % (
            self.ptr, self.dtype, self.shape, self.strides, self.device)


def _as_tensor(x, param):
    if isinstance(x, Tensor):
        return x
    if _is_torch(x, "Tensor") or (hasattr(x, "data_ptr") and hasattr(x, "stride")):
        dev = x.device.index if x.is_cuda else -1
        try:
            dtype = _torch_dtype_name(x.dtype)
        except TypeError as e:
            raise TypeError("tilescale: tensor parameter '%s': %s" % (param, e)) from None
        return Tensor(x.data_ptr(), dtype, tuple(x.shape), tuple(x.stride()),
                      0 if dev is None else dev)
    raise TypeError("tilescale: tensor parameter '%s' needs a torch tensor or tilescale.Tensor "
                    "(or None where the kernel never touches it), got %s" % (param, type(x).__name__))


class Kernel(_callpath.Launcher):
    """One compiled function: artifacts, parameter metadata, and launch by calling it."""

    def __init__(self, prog, name, handle):
        self.program, self.name, self._h = prog, name, handle
        self._ctx, self._destroy, self._args = prog.ctx._h, _c.ts_kernel_destroy, None
        self._launch_setup(*self.launch_spec([i for i, a in enumerate(self.args) if a.is_output]),
                           False, None)

    def launch_spec(self, outputs, out_dims=None):
        """The C call path's view of this kernel (_launch_setup's first four arguments):
        outputs are the parameter indices a call may leave out, out_dims the extents of those
        whose shape is dynamic ({index: (int or (input index, dim), ...)})."""
        return (self._h.value or 0, self._ctx.value or 0, self.program.ctx.device,
                _callpath.param_specs(self.args, set(outputs), out_dims))

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value:
            self._destroy(h)
            h.value = None

    source = property(lambda self: _text(_c.ts_kernel_text(self._h, _lib.TS_EMIT_CUDA)))
    ir = property(lambda self: _text(_c.ts_kernel_text(self._h, _lib.TS_EMIT_IR)))
    ptx = property(lambda self: _text(_c.ts_kernel_text(self._h, _lib.TS_EMIT_PTX)))
    # `--emit stats`: FLOPs of the T.gemm statements and global bytes, counted by the library
    # from the tile-level IR (JSON text; `stats` parses it)
    stats_json = property(lambda self: _text(_c.ts_kernel_text(self._h, _lib.TS_EMIT_STATS)))

    @property
    def stats(self):
        """The stats JSON as a dict: total_flops, total_global_bytes (None when unknown),
        flops_status / bytes_status ("exact", "upper_bound", "unknown"), per-kernel rows."""
        text = self.stats_json
        return None if text is None else json.loads(text)
    from_cache = property(lambda self: bool(_c.ts_kernel_from_cache(self._h)))

    @property
    def cubin(self):
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        _check(_c.ts_kernel_binary(self._h, ctypes.byref(data), ctypes.byref(size)), self._ctx)
        return ctypes.string_at(data, size.value)

    @property
    def args(self):
        if self._args is None:
            out = []
            for i in range(_c.ts_kernel_num_args(self._h)):
                ai = _lib.ts_arg_info()
                _check(_c.ts_kernel_arg_info(self._h, i, ctypes.byref(ai)), self._ctx)
                shape = tuple(None if ai.shape[d] < 0 else ai.shape[d]
                              for d in range(min(ai.ndim, _lib.MAX_DIMS)))
                out.append(ArgInfo(ai.name.decode(),
                                   "tensor" if ai.kind == _lib.TS_ARG_TENSOR else "scalar",
                                   _lib.DTYPE_NAMES[ai.dtype], shape, int(ai.is_output)))
            self._args = out
        return list(self._args)

    @property
    def autotune_configs(self):
        """The @autotune config list (a list of dicts), or None when the function has none."""
        n = ctypes.c_int()
        t = _text(_c.ts_kernel_autotune_configs(self._h, ctypes.byref(n)))
        if t is None:
            return None
        try:
            return ast.literal_eval(t)
        except (ValueError, SyntaxError):
            return t  # not a plain literal: the library's text as is

    @property
    def pass_configs(self):
        out = {}
        for i in range(_c.ts_kernel_num_pass_configs(self._h)):
            k, v = ctypes.c_char_p(), ctypes.c_char_p()
            _check(_c.ts_kernel_pass_config(self._h, i, ctypes.byref(k), ctypes.byref(v)),
                   self._ctx)
            out[_text(k.value)] = _text(v.value)
        return out

    def __repr__(self):
        return "<tilescale.Kernel %s(%s)>" % (self.name, ", ".join(a.name for a in self.args))

    def _call_py(self, *args, stream=None):
        """Launches on `stream` (an int CUstream, a torch.cuda.Stream, or None: torch's current
        stream when torch tensors are passed, else the default stream).  Pass every parameter,
        or only the inputs: outputs are then allocated with torch and returned.  (The call
        path in Python: calling the kernel runs the C one, which comes here for what it does
        not take, such as stream=.)"""
        infos = self.args
        inputs = [a for a in infos if not a.is_output]
        torch = sys.modules.get("torch")
        if torch is not None:
            _callpath.torch_seen()
        if len(args) == len(infos):
            full, outs = list(args), []
        elif len(args) == len(inputs) and len(inputs) < len(infos):
            if torch is None:
                try:
                    import torch
                except ImportError:
                    msg = "tilescale: %s needs all %d arguments (outputs too) without torch"
                    raise TypeError(msg % (self.name, len(infos))) from None
            dev = next((a.device for a in args if _is_torch(a, "Tensor") and a.is_cuda), None)
            dev = torch.device("cuda", self.program.ctx.device if dev is None else dev.index)
            it, full, outs = iter(args), [], []
            for a in infos:
                if not a.is_output:
                    full.append(next(it))
                    continue
                oshape = a.shape
                if a.kind == "tensor" and any(s is None for s in a.shape):
                    oshape = dynamic_output_shape(self, a, infos, args)
                if a.kind != "tensor" or oshape is None:
                    raise TypeError("tilescale: cannot allocate output '%s' (dynamic shape no input "
                                    "gives); pass every argument, outputs too, in the order %s(%s)"
                                    % (a.name, self.name, ", ".join(p.name for p in infos)))
                if a.dtype in _PACKED_STORAGE:
                    shape, tdt = packed_output(torch, oshape, a.dtype)
                else:
                    shape, tdt = oshape, getattr(torch, {"float8_e4m3": "float8_e4m3fn"}.get(a.dtype, a.dtype))
                outs.append(torch.empty(shape, dtype=tdt, device=dev))
                full.append(outs[-1])
        else:
            alt = " (or its %d inputs)" % len(inputs) if len(inputs) < len(infos) else ""
            raise TypeError("tilescale: %s takes %d arguments%s, got %d"
                            % (self.name, len(infos), alt, len(args)))
        carr = (_lib.ts_arg * max(len(full), 1))()
        keep = []
        for i, (a, x) in enumerate(zip(infos, full)):
            c = carr[i]
            if a.kind == "scalar":
                c.kind = _lib.TS_ARG_SCALAR
                try:
                    if a.dtype.startswith(("float", "bfloat")):
                        c.f = float(x)
                    elif a.dtype == "handle":  # `p: T.ptr`: a tensor's data pointer, or an int
                        c.i = x.data_ptr() if hasattr(x, "data_ptr") else int(x)
                    else:
                        c.i = int(x)
                        if not -2**63 <= int(x) < 2**63:  # ctypes would wrap it silently
                            raise OverflowError("tilescale: scalar parameter '%s' (%s) needs a "
                                                "64-bit integer, not %r" % (a.name, a.dtype, x))
                except (TypeError, ValueError) as e:
                    raise TypeError("tilescale: scalar parameter '%s' (%s) needs a number, not %r"
                                    % (a.name, a.dtype, x)) from e
                continue
            c.kind = _lib.TS_ARG_TENSOR
            if x is None:  # no tensor (TileLang's nullptr): only for a parameter the kernel never touches
                c.tensor = _lib.ts_tensor(0, _lib.DTYPE_IDS[a.dtype], len(a.shape), None, None, 0)
                continue
            t = _as_tensor(x, a.name)
            shape = (ctypes.c_int64 * max(len(t.shape), 1))(*t.shape)
            strides = None if t.strides is None else (ctypes.c_int64 * max(len(t.strides), 1))(
                *t.strides)
            keep += [shape, strides]
            c.tensor = _lib.ts_tensor(t.ptr, _lib.DTYPE_IDS[t.dtype], len(t.shape), shape,
                                      strides, t.device)
        if stream is None and torch is not None and any(_is_torch(x, "Tensor") for x in full):
            stream = torch.cuda.current_stream(next(
                x.device for x in full if _is_torch(x, "Tensor")))
        if stream is not None and not isinstance(stream, int):
            if not hasattr(stream, "cuda_stream"):
                raise TypeError("tilescale: stream must be an int CUstream, a torch.cuda.Stream or "
                                "None, not %s" % type(stream).__name__)
            stream = stream.cuda_stream  # torch.cuda.Stream
        _check(_c.ts_kernel_launch(self._h, carr, len(full), ctypes.c_void_p(stream or None)),
               self._ctx)
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)


_default_ctx = None


def compile(path, func, arch=None, **params):  # noqa: A001 (mirrors tilescale compile)
    """Shorthand: load `path` in a shared default Context and compile `func`."""
    global _default_ctx
    if _default_ctx is None:
        _default_ctx = Context()
    return _default_ctx.load(path).compile(func, arch, **params)


# ---- the distributed runtime (include/tilescale_dist.h) ------------------------------------
from ._dist import Dist, DistEnv, dist_env  # noqa: E402

__all__ += ["Dist", "DistEnv", "dist_env"]
