"""JITKernel: one compiled kernel (a tilescale.Kernel) with TileLang's calling convention.

Calling it with only the inputs allocates the outputs (out_idx, or T.empty in the eager style)
with torch on the inputs' device and returns them: one tensor, or a list of several.  Passing
every parameter launches in place and returns None.  A call runs the C call path of tilescale
(python/tilescale/_fastcall.c: JITKernel derives from its Launcher), which reads the tensors,
allocates the outputs with torch.empty and launches on torch's current stream; what it does not
take (stream=..., outputs whose extents need the IR signature) comes to _call_py, the same call
in Python over tilescale.Kernel."""
import logging
import os

from .._callbase import Launcher

from .. import _symbolic

try:
    from ..distributed import _runtime as _dist_runtime
except ImportError:  # a trimmed install without tilelang.distributed
    _dist_runtime = None

logger = logging.getLogger("tilelang")

__all__ = ["JITKernel", "TirText", "normalize_out_idx"]

_warned = set()


def _warn_once(key, msg, *args):
    if key not in _warned:
        _warned.add(key)
        logger.warning(msg, *args)


def normalize_out_idx(out_idx, nparams, name="kernel"):
    """out_idx (int, list or None) as a list of non-negative parameter indices, in the order
    given (a call returns its outputs in that order, as TileLang's does)."""
    if out_idx is None:
        return None
    items = [out_idx] if isinstance(out_idx, int) else list(out_idx)
    out = []
    for i in items:
        if not isinstance(i, int) or not -nparams <= i < nparams:
            raise ValueError("tilelang: out_idx %r is out of range for %s's %d parameters"
                             % (i, name, nparams))
        if i % nparams not in out:
            out.append(i % nparams)
    return out


def _torch_dtype(name):
    import torch
    from ..language.dtypes import dtype
    return dtype(name).as_torch() if name != "bool" else torch.bool


class TirText(str):
    """What get_tir() returns: the IR text (prints, compares and slices as a str) with the
    compiled kernel it came from in `.kernel` (a JITKernel)."""

    def __new__(cls, text, kernel):
        obj = super().__new__(cls, text)
        obj.kernel = kernel
        return obj

    def __reduce__(self):  # pickles (and copies) as the plain text: a kernel does not pickle
        return (str, (str(self),))


class JITKernel(Launcher):
    """A compiled kernel: `kernel(*inputs)` runs it; get_kernel_source(), get_profiler()."""

    def __init__(self, kernel, out_idx=None, *, name=None, config=None, pass_configs=None,
                 compile_flags=None, target=None, execution_backend=None, debug_root_path=None):
        self.kernel = kernel            # tilescale.Kernel
        self.name = name or kernel.name
        self.params = kernel.args       # [tilescale.ArgInfo]
        self.target, self.execution_backend = target, execution_backend
        explicit = normalize_out_idx(out_idx, len(self.params), self.name)
        returned = [a.name for a in self.params if a.is_output == 2]
        if explicit is not None and returned:  # (TileLang's words: its tests match them)
            raise ValueError("tilelang: Out index conflict: out_idx=%r is given, and %s returns its T.empty "
                             "tensor%s %s (its outputs already); leave out_idx out"
                             % (out_idx, self.name, "s" if len(returned) > 1 else "", ", ".join(returned)))
        self.out_idx = explicit if explicit is not None else [
            i for i, a in enumerate(self.params) if a.is_output]
        self.result_idx = self.out_idx
        self.pass_configs = dict(pass_configs or {})
        self.compile_flags = compile_flags
        self.config = config            # the autotuner's choice, when tuned
        self.latency = self.ref_latency = None
        self._ir_sig = None             # {param: [dim expr]} from the IR signature, when needed
        self._check_options()
        # A kernel that uses the distributed device library gets its outputs on the symmetric
        # heap while a group exists (peers address them): the C call path, which allocates with
        # torch.empty, is told it cannot size them, so such calls come to _call_py.
        self._dist_uses = _dist_runtime.kernel_uses(kernel) if _dist_runtime is not None else set()
        spec = kernel.launch_spec(self.out_idx, self._c_out_dims())
        if self._dist_uses:
            spec = spec[:3] + ([p[:4] + (None if p[3] else p[4],) for p in spec[3]],)
        # (the C call path returns outputs in parameter order: out_idx in another order, e.g.
        # [2, 1], takes the Python path, which returns them in out_idx's order)
        if self.out_idx == sorted(self.out_idx):
            self._launch_setup(*spec, True, kernel)
        if _dist_runtime is not None:
            _dist_runtime.track_kernel(self)
        if debug_root_path:
            os.makedirs(debug_root_path, exist_ok=True)
            with open(os.path.join(debug_root_path, self.name + ".cu"), "w") as f:
                f.write(self.get_kernel_source() or "")

    def _check_options(self):
        """Options given from Python that the library did not take (pass_configs reach it
        through ts_compile_options, so a key missing from the kernel's is one it lost; compile
        flags never do): said once, never silently dropped."""
        got = self.kernel.pass_configs
        for k, v in self.pass_configs.items():
            key = str(getattr(k, "value", k))
            if key not in got:
                _warn_once(("pc", key), "tilelang: pass_config %s=%r is not applied: the library did "
                           "not record it for this kernel", key, v)
        if self.compile_flags:
            _warn_once(("cf", str(self.compile_flags)), "tilelang: compile_flags %r are ignored by "
                       "TileScale (NVRTC options are chosen by the library)", self.compile_flags)

    # ---- calling ----------------------------------------------------------------------------
    @property
    def inputs(self):
        return [a for i, a in enumerate(self.params) if i not in self.out_idx]

    def _device(self, args):
        for a in args:
            if getattr(a, "is_cuda", False):
                return a.device
        import torch
        return torch.device("cuda", torch.cuda.current_device())

    def _c_out_dims(self):
        """For the C call path: each output extent that is exactly a dimension variable of an
        input tensor (`C: [M, N]` with `A: [M, K]`), as (input index, dim); outputs with other
        dynamic extents are left to _output_shape."""
        dyn = [i for i in self.out_idx if self.params[i].kind == "tensor"
               and any(s is None for s in self.params[i].shape)]
        if not dyn:
            return None
        if self._ir_sig is None:
            self._ir_sig = _symbolic.ir_signature(self.kernel.ir or "")
        where = {}
        for i, p in enumerate(self.params):
            if i in self.out_idx or p.kind != "tensor":
                continue
            for d, e in enumerate(self._ir_sig.get(p.name) or ()):
                if d < len(p.shape) and p.shape[d] is None and isinstance(e, _symbolic.Sym):
                    where.setdefault(e.name, (i, d))
        out = {}
        for i in dyn:
            exprs = self._ir_sig.get(self.params[i].name)
            if not exprs or len(exprs) != len(self.params[i].shape):
                continue
            dims = tuple(s if s is not None else
                         where.get(e.name) if isinstance(e, _symbolic.Sym) else None
                         for s, e in zip(self.params[i].shape, exprs))
            if all(d is not None for d in dims):
                out[i] = dims
        return out

    def _call_py(self, *args, stream=None):
        n, outs_idx = len(self.params), self.out_idx
        if len(args) == n:
            self.kernel._call_py(*args, stream=stream)
            return None
        if len(args) != n - len(outs_idx):
            names = ", ".join(a.name for a in self.inputs)
            raise TypeError("tilelang: %s takes %d inputs (%s), got %d"
                            % (self.name, n - len(outs_idx), names, len(args)))
        import torch
        dev = self._device(args)
        it, full, outs = iter(args), [], []
        for i, a in enumerate(self.params):
            if i not in outs_idx:
                full.append(next(it))
                continue
            shape = a.shape
            if a.kind == "tensor" and any(s is None for s in shape):
                shape = self._output_shape(i, args)
            if a.kind != "tensor":
                raise TypeError("tilelang: cannot allocate output '%s' of %s: it is a scalar; "
                                "pass every argument" % (a.name, self.name))
            if a.dtype in ("int4", "uint4", "float4_e2m1fn"):  # 4-bit: torch holds the bytes
                import tilescale
                shape, tdt = tilescale.packed_output(torch, shape, a.dtype)
                outs.append(torch.empty(shape, dtype=tdt, device=dev))
            elif self._dist_uses and _dist_runtime.active():
                outs.append(_dist_runtime.symmetric(shape, _torch_dtype(a.dtype)))
            else:
                outs.append(torch.empty(shape, dtype=_torch_dtype(a.dtype), device=dev))
            full.append(outs[-1])
        self.kernel._call_py(*full, stream=stream)
        if not outs:
            return None
        if len(outs) > 1:  # made in parameter order; given back in out_idx's
            made = dict(zip(sorted(outs_idx), outs))
            outs = [made[i] for i in outs_idx]
        return outs[0] if len(outs) == 1 else outs

    def _output_shape(self, index, inputs):
        """The shape of output `index` whose dims are dynamic, from the inputs: the library
        reports a dynamic dim as -1 without its variable, but its IR signature names them
        (`func f(x: bfloat16[M, 1024], quant: float8_e4m3[M, 1024]) dynamic M:`); each
        variable is bound from the input dims (or the scalar parameter) that carry it, and the
        output's dim expressions are evaluated."""
        if self._ir_sig is None:
            self._ir_sig = _symbolic.ir_signature(self.kernel.ir or "")
        sig, out = self._ir_sig, self.params[index]
        dims = sig.get(out.name)
        eqs, known = [], {}
        it = iter(inputs)
        for i, p in enumerate(self.params):
            if i in self.out_idx:
                continue
            x = next(it)
            if p.kind == "scalar":
                if isinstance(x, int) and not isinstance(x, bool):
                    known[p.name] = int(x)
                continue
            pdims = sig.get(p.name)
            shape = tuple(getattr(x, "shape", ()))
            if pdims is not None and len(pdims) == len(shape):
                eqs += [(d, int(s)) for d, s in zip(pdims, shape)]
        names = set()
        for e, _ in eqs:
            names |= _symbolic.free_syms(e)
        sizes = _symbolic.solve_sizes(eqs, names, known)
        shape = []
        for d, (static, expr) in enumerate(zip(out.shape, dims or [None] * len(out.shape))):
            v = static if static is not None else (
                _symbolic.evaluate(expr, sizes) if expr is not None else None)
            if not isinstance(v, int):
                raise TypeError(
                    "tilelang: cannot allocate output '%s' of %s: dimension %d of its shape %s "
                    "(%s) is not given by any input's dimensions; pass every argument"
                    % (out.name, self.name, d, tuple(out.shape), expr if expr is not None
                       else "the library's IR does not name it"))
            shape.append(v)
        return tuple(shape)

    # ---- distributed (TileScale's host API) ----------------------------------------------------
    def initialize(self, allocator=None, stream=None):
        """TileScale's kernel.initialize(allocator=, stream=): uploads the rank and the heap
        table into the kernel's module.  Kernels compiled while a group exists are attached
        already; this repeats it (cheap), and checks that a group exists."""
        if _dist_runtime is None:
            raise RuntimeError("tilelang: the distributed runtime is not available")
        if allocator is not None and not getattr(allocator, "is_distributed", True):
            return
        _dist_runtime.attach(self)

    # ---- artifacts ---------------------------------------------------------------------------
    def get_kernel_source(self, kernel_only=True):
        return self.kernel.source

    @property
    def kernel_source(self):
        return self.kernel.source

    def get_host_source(self):
        return ("// TileScale launches kernels from libtilescale (ts_kernel_launch); there is no "
                "generated host source.\n")

    def get_ptx(self):
        return self.kernel.ptx

    def show_source(self):
        print(self.get_kernel_source())

    def show_ptx(self):
        print(self.get_ptx())

    def get_tir(self, *args, **kwargs):
        """The library's IR as text (TileScale has no TIR objects): a TirText, a str that also
        carries this kernel, so that tilelang.tools.Analyzer can ask the library for its
        work counts."""
        return TirText(self.kernel.ir or "", self)

    def export_library(self, path):
        raise NotImplementedError("tilelang: export_library is not supported; the cubin is "
                                  "kernel.kernel.cubin, or use `tilescale compile --emit lib`")

    def get_profiler(self, tensor_supply_type=None):
        from ..profiler import Profiler
        from ..utils.tensor import TensorSupplyType
        return Profiler(self, tensor_supply_type or TensorSupplyType.Auto)

    def run_once(self, func=None):
        return self.get_profiler().run_once(func)

    @property
    def adapter(self):
        return self

    def __repr__(self):
        return "<tilelang.JITKernel %s(%s) out_idx=%s>" % (
            self.name, ", ".join(a.name for a in self.params), self.out_idx)
