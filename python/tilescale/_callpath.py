"""The call path of compiled kernels: the C extension (_fastcall.c) when it was built, else
the same classes in Python.

tilescale.Kernel and tilelang.JITKernel derive from `Launcher`, tilelang.JITImpl from
`Dispatcher`.  With the extension, calling one of them runs C (argument reading, output
allocation through torch.empty, torch's current stream, ts_kernel_launch) and falls back to the
object's `_call_py` method for what C does not handle; without it, `__call__` is `_call_py`.

The extension learns torch's entry points the first time the Python path sees a real torch
(`torch_seen`), so importing the packages never imports torch."""
import ctypes
import sys

from . import _lib, _locate

fast = _locate.fastcall


Launcher, Dispatcher = _locate.Launcher, _locate.Dispatcher

# ts_dtype names -> torch attribute names (the first torch name of each is what outputs get)
# 4-bit dtypes have no torch dtype of their own here (torch.int4 is another thing): their
# tensors are bytes, and outputs of them are allocated by the Python path (packed_output).
_TORCH_NAMES = {"float8_e4m3": ("float8_e4m3fn",), "int4": (), "uint4": (), "float4_e2m1fn": ()}


def init(error_type):
    """Gives the extension the library's launch and last-error functions and the exception type."""
    global fast
    if fast is None:
        return
    addr = lambda f: ctypes.cast(f, ctypes.c_void_p).value  # noqa: E731
    try:
        fast.init(addr(_lib.lib.ts_kernel_launch), addr(_lib.lib.ts_last_error),
                  ctypes.sizeof(_lib.ts_arg), error_type, tuple(_lib.STATUS_NAMES))
    except ImportError as e:  # built against another tilescale.h: its classes pass every
        import warnings       # call to _call_py
        warnings.warn("tilescale: the C call path is not used: %s" % e)
        fast = None


def torch_seen():
    """Hands torch's entry points to the extension once, when torch is a real one with CUDA
    (the test suites' stand-in modules leave the Python path in charge)."""
    if fast is None or fast.torch_ready():
        return
    torch = sys.modules.get("torch")
    try:
        tensor, stream = torch.Tensor, torch._C._cuda_getCurrentRawStream
        empty, device = torch.empty, torch.device
    except AttributeError:
        return
    if not isinstance(tensor, type):
        return
    dtypes = {}
    for i, name in enumerate(_lib.DTYPE_NAMES):
        for tname in _TORCH_NAMES.get(name, (name,)):
            obj = getattr(torch, tname, None)
            if obj is not None and type(obj).__name__ == "dtype":
                dtypes.setdefault(obj, i)
    fast.set_torch(tensor, dtypes, stream, empty, device)


def param_specs(args, outputs, out_dims=None):
    """_launch_setup's parameter list from tilescale.ArgInfo rows: (is_tensor, ts_dtype,
    is_float, is_output, dims) where an output's dims are ints, (param, dim) of an input
    tensor, or None when C cannot know them (out_dims gives those it can: {param: dims})."""
    specs = []
    for i, a in enumerate(args):
        is_out = i in outputs
        dims = None
        if is_out and a.kind == "tensor":
            dims = (out_dims or {}).get(i) or (
                tuple(a.shape) if all(s is not None for s in a.shape) else None)
        specs.append((int(a.kind == "tensor"), _lib.DTYPE_IDS[a.dtype],
                      int(a.dtype.startswith(("float", "bfloat"))), int(is_out), dims))
    return specs
