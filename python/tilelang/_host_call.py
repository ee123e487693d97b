"""Host calls: the functions a kernel file's host code calls that the C front end cannot
evaluate itself, run here in CPython (DESIGN.md §4, the fourth step of an import).

The library evaluates a factory's host code with its own interpreter: sibling modules beside
the kernel file and the embedded prelude are evaluated there; any other module is a stub.  A
call of a stub's function (`from my_helpers import pick_block; pick_block(M)`, a module on
sys.path that is not beside the kernel file, or one using numpy), or of a helper module
beside the kernel file that the interpreter fails on, whose arguments are plain values,
reaches `call` below through tilescale.Context.set_host_call (new_context registers it
on every context the package makes): the arguments arrive as Python literal text
("((4096,), {'dtype': T.float16})", dtypes as T.NAME), are decoded by a literal reader (no
eval), the function is found with importlib and getattr, called, and its result is answered
as literal text of the same kind (None, bool, int of 64 bits, float, str, dtype, tuples and
lists; numpy scalars and torch dtypes are converted).  A call inside a kernel body is never
sent here, and the CLI has no host: there such a call stays a diagnostic."""
import ast
import importlib
import math

from .language.dtypes import dtype as _dtype
from .language.dtypes import dtype_param_text, torch_dtype_name

_MAX_DEPTH = 32
_PLAIN = "None, bool, int, float, str, dtype, tuples and lists of them"


def _error(msg):
    import tilescale
    return tilescale.HostCallError(msg)


# ---- literal text -> values ------------------------------------------------------------------
def _decode(node, depth=0):
    if depth > _MAX_DEPTH:
        raise ValueError("arguments nested too deeply")
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_decode(x, depth + 1) for x in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict):
        return {_decode(k, depth + 1): _decode(v, depth + 1) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _decode(node.operand, depth + 1)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "T"):
        try:
            return _dtype(node.attr)
        except TypeError:  # a dtype this package does not name: its name
            return node.attr
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float"
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant)):
        return float(node.args[0].value)
    raise ValueError("not a literal: %s" % ast.dump(node))


def decode_args(text):
    """(args tuple, kwargs dict) of the library's argument text."""
    args, kwargs = _decode(ast.parse(text, mode="eval").body)
    return args, kwargs


# ---- values -> literal text ------------------------------------------------------------------
def encode(value, depth=0):
    """The literal text of a plain value (the library reads it back); HostCallError for
    anything else."""
    if depth > _MAX_DEPTH:
        raise _error("the result is a tuple or list nested too deeply")
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, _dtype):
        return dtype_param_text(value)
    if isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 63):
            raise _error("the result %d does not fit in 64 bits" % value)
        return str(int(value))
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "1e999" if value > 0 else "-1e999"
        return repr(float(value))
    if isinstance(value, str):
        return repr(str(value))
    if isinstance(value, (tuple, list)):
        items = [encode(v, depth + 1) for v in value]
        if isinstance(value, list):
            return "[%s]" % ", ".join(items)
        return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)
    tname = type(value).__module__ + "." + type(value).__name__
    if tname == "torch.dtype":
        try:
            return dtype_param_text(torch_dtype_name(value))
        except TypeError:
            pass
    elif tname.startswith("numpy.") and getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        return encode(value.item(), depth)  # numpy scalars
    elif hasattr(value, "__index__") and not hasattr(value, "data_ptr"):
        try:
            return encode(value.__index__(), depth)
        except TypeError:  # an array's __index__ refuses
            pass
    raise _error("the result is a %s, not a plain value (%s)" % (tname, _PLAIN))


# ---- the call ----------------------------------------------------------------------------------
def resolve(module, qualname):
    """module.qualname through importlib: attributes, else submodules (`a.b.f` where `a`
    does not import `a.b`)."""
    try:
        obj = importlib.import_module(module)
    except ImportError as e:
        raise _error("cannot import module '%s' (%s: %s)" % (module, type(e).__name__, e)) from None
    parts = qualname.split(".")
    for i, part in enumerate(parts):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            sub = ".".join([module] + parts[:i + 1])
            try:
                obj = importlib.import_module(sub)
            except ImportError:
                raise _error("module '%s' has no attribute '%s'"
                             % (".".join([module] + parts[:i]), part)) from None
    return obj


def call(module, qualname, args_text):
    """Runs module.qualname(*args, **kwargs) for the library; answers the result's text.
    Exceptions of the function itself propagate (tilescale makes them the diagnostic)."""
    fn = resolve(module, qualname)
    if not callable(fn):
        raise _error("%s.%s is a %s, not a function" % (module, qualname, type(fn).__name__))
    args, kwargs = decode_args(args_text)
    return encode(fn(*args, **kwargs))
