"""tilelang.profiler: do_bench (CUDA events through torch, L2 flushed before every timed run)
and the Profiler a JITKernel hands out (inputs from a TensorSupplyType, assert_allclose)."""
import functools

from ..utils.tensor import TensorSupplyType, get_tensor_supply, is_float8_dtype, torch_assert_close

__all__ = ["do_bench", "Profiler", "TensorSupplyType"]

_RETURN_MODES = ("min", "max", "mean", "median")
_BACKENDS = ("event", "cupti", "cudagraph")


def _flush_buffer(torch, cache_mb, device):
    return torch.empty(cache_mb * 1024 * 1024 // 4, dtype=torch.int32, device=device)


def do_bench(fn, warmup=25, rep=100, _n_warmup=0, _n_repeat=0, quantiles=None, fast_flush=True,
             backend="event", return_mode="mean", device=None, cache_size=256,
             early_stop_baseline=None):
    """Runtime of fn() in milliseconds: warmup / rep are target times in ms (the counts come
    from a 5-run estimate unless _n_warmup / _n_repeat are given).  backend 'cupti' and
    'cudagraph' are timed with CUDA events too in this version."""
    import torch
    if return_mode not in _RETURN_MODES:
        raise ValueError("tilelang: return_mode must be one of %s, got %r" % (_RETURN_MODES, return_mode))
    if backend not in _BACKENDS:
        raise ValueError("tilelang: unknown profiler backend %r (%s)" % (backend, ", ".join(_BACKENDS)))
    if device is not None and not isinstance(device, int):
        device = torch.device(device).index
    if device is not None:
        with torch.cuda.device(device):
            return do_bench(fn, warmup, rep, _n_warmup, _n_repeat, quantiles, fast_flush,
                            backend, return_mode, None, cache_size, early_stop_baseline)
    fn()
    torch.cuda.synchronize()
    cache = _flush_buffer(torch, cache_size, "cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        cache.zero_()
        fn()
    end.record()
    end.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-4)
    if early_stop_baseline is not None and estimate > early_stop_baseline:
        return [estimate] * len(quantiles) if quantiles is not None else estimate
    n_warmup = _n_warmup if _n_warmup > 0 else max(1, int(warmup / estimate))
    n_repeat = _n_repeat if _n_repeat > 0 else max(1, int(rep / estimate))
    for _ in range(n_warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for s, e in zip(starts, ends):
        cache.zero_()  # flush L2 so every run reads from HBM
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    times = torch.tensor([s.elapsed_time(e) for s, e in zip(starts, ends)], dtype=torch.float)
    if quantiles is not None:
        ret = torch.quantile(times, torch.tensor(quantiles, dtype=torch.float)).tolist()
        return ret[0] if len(ret) == 1 else ret
    return getattr(torch, return_mode)(times).item()


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (tuple, list)):
        return list(x)
    return [x]


class Profiler:
    """kernel.get_profiler(tensor_supply_type): random inputs for the kernel's input
    parameters, correctness against a reference program, timing."""

    def __init__(self, kernel, supply_type=TensorSupplyType.Auto):
        self.kernel = self.adapter = kernel
        self.params = kernel.params
        self.result_idx = kernel.out_idx
        self.supply_type = supply_type
        self.supply = get_tensor_supply(supply_type)

    @property
    def func(self):
        return self.kernel

    def __call__(self, *args, **kwargs):
        return self.kernel(*args, **kwargs)

    def _get_params(self, with_output=False):
        return [p for i, p in enumerate(self.params) if with_output or i not in self.result_idx]

    def _get_inputs(self, with_output=False, dynamic_symbolic_constraints=None):
        ins = []
        for p in self._get_params(with_output):
            if p.kind == "scalar":
                raise ValueError("tilelang: cannot make a value for scalar parameter '%s'; pass "
                                 "input_tensors" % p.name)
            if dynamic_symbolic_constraints and any(s is None for s in p.shape):
                p = self._bound_param(p, dynamic_symbolic_constraints)
            ins.append(self._symmetric(self.supply(p)))
        return ins

    def _bound_param(self, p, values):
        """p with its dynamic dimensions given by values ({"m": 256}): each dynamic extent is an
        expression of the kernel's dimension symbols (the IR signature names them)."""
        from .. import _symbolic
        ir = getattr(getattr(self.kernel, "kernel", self.kernel), "ir", None) or ""
        exprs = _symbolic.ir_signature(ir).get(p.name)
        if not exprs or len(exprs) != len(p.shape):
            raise ValueError("tilelang: cannot tell the dynamic dimensions of '%s'; pass input_tensors"
                             % p.name)
        shape = []
        for s, e in zip(p.shape, exprs):
            v = s if s is not None else _symbolic.evaluate(e, values)
            if not isinstance(v, int):
                missing = sorted(_symbolic.free_syms(e) - set(values))
                raise ValueError("tilelang: dynamic_symbolic_constraints gives no value for %s (a "
                                 "dimension of '%s'); it has %s" % (", ".join(repr(m) for m in missing),
                                                                    p.name, sorted(values)))
            shape.append(v)
        return p._replace(shape=tuple(shape))  # a tilescale.ArgInfo

    def _symmetric(self, t):
        """A kernel that addresses peers' copies of its tensors needs them on the symmetric
        heap while a group exists (TileScale's profiler does the same with NVSHMEM)."""
        if not getattr(self.kernel, "_dist_uses", None):
            return t
        from ..distributed import _runtime
        if not _runtime.active():
            return t
        sym = _runtime.symmetric(tuple(t.shape), t.dtype)
        sym.copy_(t)
        return sym

    def assert_allclose(self, reference_program, input_tensors=None, atol=1e-2, rtol=1e-2,
                        max_mismatched_ratio=0.01):
        import torch
        ins = self._get_inputs() if input_tensors is None else input_tensors
        ref_outs = _as_list(reference_program(*ins))
        torch.cuda.synchronize()
        lib_outs = _as_list(self.kernel(*ins))
        torch.cuda.synchronize()
        assert len(lib_outs) == len(ref_outs), "len(lib_outs) not equals to len(ref_outs) !"
        for lhs, rhs in zip(lib_outs, ref_outs):
            if lhs is None or rhs is None:
                continue
            torch_assert_close(lhs.float() if is_float8_dtype(lhs.dtype) else lhs,
                               rhs.float() if is_float8_dtype(rhs.dtype) else rhs,
                               rtol=rtol, atol=atol, max_mismatched_ratio=max_mismatched_ratio,
                               check_dtype=False, base_name="tilelang", ref_name="ref")

    def manual_assert_close(self, reference_program, input_tensors=None, manual_check_prog=None):
        import torch
        ins = self._get_inputs() if input_tensors is None else input_tensors
        ref_outs = _as_list(reference_program(*ins))
        torch.cuda.synchronize()
        lib_outs = _as_list(self.kernel(*ins))
        torch.cuda.synchronize()
        assert len(lib_outs) == len(ref_outs), "len(lib_outs) not equals to len(ref_outs) !"
        manual_check_prog(lib_outs, ref_outs)

    def assert_consistent(self, repeat=10):
        import torch
        ins = self._get_inputs()
        ref = _as_list(self.kernel(*ins))
        for _ in range(repeat):
            for lhs, rhs in zip(_as_list(self.kernel(*ins)), ref):
                assert torch.allclose(lhs, rhs), ["result is not consistent", lhs, rhs]

    def run_once(self, func=None):
        ins = self._get_inputs()
        return (func or self.kernel)(*ins)

    def do_bench(self, func=None, warmup=25, rep=100, n_warmup=0, n_repeat=0, input_tensors=None,
                 backend="event", quantiles=None, return_mode="mean",
                 dynamic_symbolic_constraints=None, device=None, early_stop_baseline=None):
        """Time of func(*inputs) (the kernel when func is None) in milliseconds."""
        target = self.kernel if func is None else func
        ins = input_tensors if input_tensors is not None else self._get_inputs(
            dynamic_symbolic_constraints=dynamic_symbolic_constraints)
        return do_bench(functools.partial(target, *ins), warmup=warmup, rep=rep,
                        _n_warmup=n_warmup, _n_repeat=n_repeat, quantiles=quantiles,
                        backend=backend, return_mode=return_mode, device=device,
                        early_stop_baseline=early_stop_baseline)
