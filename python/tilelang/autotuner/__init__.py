"""tilelang.autotuner: @autotune(configs=...) over @tilelang.jit, and AutoTuner.from_kernel.

This first version compiles the configs one after another, times each on the GPU with the
profiler (inputs from supply_type or supply_prog, checked against ref_prog unless skip_check)
and keeps the fastest; the choice is cached in memory per argument values.  Not yet: parallel
compilation, the on-disk result cache, a progress bar, timeouts, multi-GPU benchmarking."""
import contextlib
import functools
import logging
import threading

from ..utils.tensor import TensorSupplyType

__all__ = ["autotune", "AutoTuner", "AutotuneResult", "set_autotune_inputs"]

logger = logging.getLogger("tilelang")

_inputs = threading.local()


@contextlib.contextmanager
def set_autotune_inputs(*args):
    """Inside the block, autotuning benchmarks on these tensors instead of generated ones."""
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    prev = getattr(_inputs, "tensors", None)
    _inputs.tensors = tensors
    try:
        yield
    finally:
        _inputs.tensors = prev


class AutotuneResult:
    def __init__(self, latency=None, config=None, ref_latency=None, kernel=None, func=None):
        self.latency, self.config, self.ref_latency = latency, config, ref_latency
        self.kernel, self.func, self.libcode = kernel, func, None

    def __repr__(self):
        return "AutotuneResult(latency=%r, config=%r)" % (self.latency, self.config)


class _Profile:
    """How configs are judged (set_profile_args / autotune keywords)."""

    def __init__(self, warmup=25, rep=100, timeout=100, supply_type=TensorSupplyType.Auto,
                 ref_prog=None, supply_prog=None, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.01,
                 skip_check=False, manual_check_prog=None, cache_input_tensors=False,
                 backend="event", early_stop=False, early_stop_factor=2.0):
        if early_stop and early_stop_factor < 1.0:
            raise ValueError("early_stop_factor must be >= 1.0, got %r" % early_stop_factor)
        self.__dict__.update(locals())
        del self.__dict__["self"]


def _tune(compile_one, configs, prof, name):
    """Compiles and times every config; returns the AutotuneResult of the fastest."""
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("tilelang.autotune: timing the configs of %s needs a CUDA GPU" % name)
    best, errors, inputs, ref_latency = None, [], None, None
    for cfg in configs:
        try:
            kernel = compile_one(cfg)
        except Exception as e:  # noqa: BLE001 (a config that does not compile is skipped)
            errors.append((cfg, e))
            logger.info("autotune %s: config %s does not compile: %s", name, cfg, e)
            continue
        try:
            profiler = kernel.get_profiler(prof.supply_type)
            if getattr(_inputs, "tensors", None) is not None:
                ins = _inputs.tensors
            elif inputs is not None and [tuple(getattr(t, "shape", ())) for t in inputs] == [
                    tuple(p.shape) for p in kernel.inputs]:  # same shapes: reuse the inputs
                ins = inputs
            elif prof.supply_prog is not None:
                ins = prof.supply_prog(profiler._get_params())
            else:
                ins = profiler._get_inputs()
            inputs = ins
            if not prof.skip_check and prof.manual_check_prog is not None:
                profiler.manual_assert_close(prof.ref_prog, ins, prof.manual_check_prog)
            elif not prof.skip_check and prof.ref_prog is not None:
                profiler.assert_allclose(prof.ref_prog, ins, rtol=prof.rtol, atol=prof.atol,
                                         max_mismatched_ratio=prof.max_mismatched_ratio)
            baseline = best.latency * prof.early_stop_factor if (prof.early_stop and best) else None
            latency = profiler.do_bench(warmup=prof.warmup, rep=prof.rep, input_tensors=ins,
                                        backend=prof.backend, early_stop_baseline=baseline)
        except Exception as e:  # noqa: BLE001 (a config that fails its check or run is skipped)
            errors.append((cfg, e))
            logger.info("autotune %s: config %s failed: %s", name, cfg, e)
            continue
        logger.info("autotune %s: %s -> %.4f ms", name, cfg, latency)
        if best is None or latency < best.latency:
            best = AutotuneResult(latency, dict(cfg), kernel=kernel)
    if best is None:
        cfg, e = errors[0] if errors else ({}, RuntimeError("no configs"))
        raise RuntimeError("tilelang.autotune: no config of %s worked (%d tried); first error, "
                           "for %s: %s" % (name, len(configs), cfg, e)) from e
    if prof.ref_prog is not None and inputs is not None:
        ref_latency = best.kernel.get_profiler(prof.supply_type).do_bench(
            prof.ref_prog, warmup=prof.warmup, rep=prof.rep, input_tensors=inputs,
            backend=prof.backend)
    best.ref_latency = ref_latency
    best.kernel.latency, best.kernel.config = best.latency, best.config
    best.kernel.ref_latency = ref_latency
    return best


def _freeze(v):
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


class AutoTuneImpl:
    """What @autotune returns: calling it tunes once per argument values (unless every tuned
    parameter is given), then returns the best JITKernel (lazy) or runs it (eager)."""

    def __init__(self, jit_impl, configs, prof, do_not_specialize=None):
        self.jit_impl, self.configs, self.prof = jit_impl, configs, prof
        self.do_not_specialize = set(do_not_specialize or ())
        self._cache = {}
        functools.update_wrapper(self, jit_impl.func)

    def _configs(self, args, kwargs):
        cfgs = self.configs(*args, **kwargs) if callable(self.configs) else self.configs
        return [dict(c) for c in cfgs]

    def compile(self, *args, **kwargs):
        jit = self.jit_impl
        if jit.mode == "eager":
            raise NotImplementedError("tilelang.autotune over an eager @tilelang.jit kernel is not "
                                      "supported yet; pass the sizes with .compile(M=..., ...)")
        bound = jit.signature.bind_partial(*args, **kwargs)
        given = set(bound.arguments)
        configs = self._configs(args, kwargs)
        tuned = {k for c in configs for k in c}
        if not configs or tuned <= given:  # every tuned parameter given: no tuning
            return jit.compile(*args, **kwargs)
        key = _freeze({k: v for k, v in bound.arguments.items() if k not in self.do_not_specialize})
        if key not in self._cache:
            def compile_one(cfg):
                merged = dict(kwargs)
                merged.update({k: v for k, v in cfg.items() if k not in given})
                return jit.compile(*args, **merged)
            self._cache[key] = _tune(compile_one, configs, self.prof, jit.info.name).kernel
        return self._cache[key]

    def __call__(self, *args, **kwargs):
        return self.compile(*args, **kwargs)

    def __repr__(self):
        return "<tilelang.autotune %r>" % self.jit_impl


def autotune(func=None, *, configs=None, warmup=25, rep=100, timeout=100,
             supply_type=TensorSupplyType.Auto, ref_prog=None, supply_prog=None, rtol=1e-2,
             atol=1e-2, max_mismatched_ratio=0.01, skip_check=False, manual_check_prog=None,
             cache_input_tensors=False, do_not_specialize=None, early_stop=False,
             early_stop_factor=2.0, **unknown):
    """@autotune(configs=[{...}, ...], warmup=..., rep=...) stacked over @tilelang.jit."""
    if unknown:
        raise TypeError("tilelang.autotune() got unexpected keyword argument%s %s" % (
            "s" if len(unknown) > 1 else "", ", ".join(repr(k) for k in sorted(unknown))))
    if func is not None:
        raise ValueError("Use tilelang.autotune(configs=...) with arguments: decorating a "
                         "function without configs is not supported")
    if configs is None:
        raise TypeError("tilelang.autotune() needs configs=")
    prof = _Profile(warmup, rep, timeout, supply_type, ref_prog, supply_prog, rtol, atol,
                    max_mismatched_ratio, skip_check, manual_check_prog, cache_input_tensors,
                    early_stop=early_stop, early_stop_factor=early_stop_factor)

    def deco(fn):
        from ..jit import JITImpl, jit
        impl = fn if isinstance(fn, JITImpl) else jit(fn)
        return AutoTuneImpl(impl, configs, prof, do_not_specialize)
    return deco


class AutoTuner:
    """AutoTuner.from_kernel(kernel=factory, configs=[...]).set_compile_args(...)
    .set_profile_args(...).run(): the factory is called with each config and its @T.prim_func
    compiled with tilelang.compile."""

    def __init__(self, fn, configs):
        self.fn, self.configs = fn, configs
        self.compile_args, self.prof = {}, _Profile()

    @classmethod
    def from_kernel(cls, kernel, configs):
        return cls(kernel, configs)

    def set_compile_args(self, out_idx=None, target="auto", execution_backend="auto",
                         target_host=None, verbose=False, pass_configs=None, compile_flags=None):
        self.compile_args = dict(out_idx=out_idx, target=target,
                                 execution_backend=execution_backend, target_host=target_host,
                                 verbose=verbose, pass_configs=pass_configs,
                                 compile_flags=compile_flags)
        return self

    def set_profile_args(self, warmup=25, rep=100, timeout=30, supply_type=TensorSupplyType.Auto,
                         ref_prog=None, supply_prog=None, rtol=1e-2, atol=1e-2,
                         max_mismatched_ratio=0.01, skip_check=False, manual_check_prog=None,
                         cache_input_tensors=False, backend="event"):
        self.prof = _Profile(warmup, rep, timeout, supply_type, ref_prog, supply_prog, rtol, atol,
                             max_mismatched_ratio, skip_check, manual_check_prog,
                             cache_input_tensors, backend)
        return self

    def run(self, warmup=None, rep=None, timeout=None, **_):
        from ..jit import compile as tl_compile
        if warmup is not None:
            self.prof.warmup = warmup
        if rep is not None:
            self.prof.rep = rep
        configs = self.configs() if callable(self.configs) else self.configs
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        return _tune(lambda cfg: tl_compile(self.fn(**cfg), **self.compile_args),
                     [dict(c) for c in configs], self.prof, name)

