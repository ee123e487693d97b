"""tilelang.autotuner: @autotune(configs=...) over @tilelang.jit (lazy factories and eager
kernels), and AutoTuner.from_kernel(...).run().

A tuning run compiles every config in parallel (_compiler.parallel_compile: compile worker
processes build the binaries, then threads with one tilescale.Context each pick them up from
the cache), then times each compiled kernel on the GPU with the
profiler, one after another on the calling thread (inputs from set_autotune_inputs,
supply_prog, supply_type, or for an eager call the call's own tensors; checked against
ref_prog unless skip_check; early_stop skips the full timing of a config whose estimate is
far behind the best) and keeps the fastest.  The choice is cached per function and argument
values (tensors by shape, dtype and strides) in memory and on disk: a JSON file per key in
the autotuner/ folder of the cache directory, so a later run compiles only the chosen config.
A progress line per config goes to stderr when verbose or when there are more than a few
configs.  Per-config pass_configs are merged over the decorator's and applied by the library
(ts_compile_options.pass_configs).  Not yet: timeouts, multi-GPU benchmarking."""
import contextlib
import functools
import hashlib
import json
import logging
import os
import sys
import threading
import time

from .. import _compiler
from ..env import env
from ..utils.tensor import TensorSupplyType

__all__ = ["autotune", "AutoTuner", "AutotuneResult", "set_autotune_inputs"]

logger = logging.getLogger("tilelang")

_inputs = threading.local()
_PASS_CONFIGS = "pass_configs"  # the one config key that is not a function parameter
_FEW = 4                          # more configs than this: progress lines without verbose


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
        self.kernel, self.func = kernel, func
        self.libcode = kernel.get_kernel_source() if kernel is not None else None

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


# ---- compiling the configs ----------------------------------------------------------------------
# ---- timing -----------------------------------------------------------------------------------
def _require_gpu(name):
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("tilelang.autotune: timing the configs of %s needs a CUDA GPU" % name)


class _Bench:
    """Timing state of one tuning run: the inputs (reused while the shapes match), the best
    latency so far (for early_stop)."""

    def __init__(self, prof, call_inputs=None):
        self.prof, self.call_inputs = prof, call_inputs
        self.inputs, self.best = None, None

    def inputs_for(self, kernel, profiler):
        prof = self.prof
        given = getattr(_inputs, "tensors", None)
        if given is not None:
            return given
        shapes = [tuple(p.shape) for p in kernel.inputs]
        if self.inputs is not None and [tuple(getattr(t, "shape", ())) for t in self.inputs] == shapes:
            return self.inputs
        if prof.supply_prog is not None:
            return prof.supply_prog(profiler._get_params())
        try:
            return profiler._get_inputs()
        except ValueError:  # dynamic dims or scalars: an eager call's own arguments
            if self.call_inputs is None:
                raise
            return self.call_inputs(kernel)

    def measure(self, kernel, config):
        """Checks the kernel (compiled for config) against ref_prog and returns its latency
        in ms."""
        prof = self.prof
        profiler = kernel.get_profiler(prof.supply_type)
        ins = self.inputs = self.inputs_for(kernel, profiler)
        if not prof.skip_check and prof.manual_check_prog is not None and prof.ref_prog is not None:
            profiler.manual_assert_close(prof.ref_prog, ins, prof.manual_check_prog)
        elif not prof.skip_check and prof.ref_prog is not None:
            profiler.assert_allclose(prof.ref_prog, ins, rtol=prof.rtol, atol=prof.atol,
                                     max_mismatched_ratio=prof.max_mismatched_ratio)
        baseline = self.best * prof.early_stop_factor if (prof.early_stop and self.best) else None
        return profiler.do_bench(warmup=prof.warmup, rep=prof.rep, input_tensors=ins,
                                 backend=prof.backend, early_stop_baseline=baseline)

    def ref_latency(self, kernel):
        prof = self.prof
        if prof.ref_prog is None or self.inputs is None:
            return None
        return kernel.get_profiler(prof.supply_type).do_bench(
            prof.ref_prog, warmup=prof.warmup, rep=prof.rep, input_tensors=self.inputs,
            backend=prof.backend)


def _short(e, n=300):
    text = " ".join(str(e).split())
    return text if len(text) <= n else text[:n] + " ..."


def _progress(show, name, i, n, cfg, what):
    if show:
        print("[tilelang.autotune] %s %d/%d %s: %s" % (name, i + 1, n, cfg, what), file=sys.stderr,
              flush=True)


# ---- the results cache --------------------------------------------------------------------------
_memory = {}            # key text -> AutotuneResult
_memory_lock = threading.Lock()


def _cache_enabled():
    return env.is_cache_enabled() and not env.is_autotune_cache_disabled()


def _cache_path(key):
    digest = hashlib.sha256(key.encode()).hexdigest()
    return os.path.join(env.TILELANG_CACHE_DIR, "autotuner", digest + ".json")


def _value_text(v):
    """Stable text of an argument value for cache keys: tensors by shape, dtype, strides."""
    if hasattr(v, "data_ptr") and hasattr(v, "shape"):
        strides = tuple(v.stride()) if hasattr(v, "stride") else None
        return "tensor(%s, %s, %s)" % (tuple(int(s) for s in v.shape), v.dtype, strides)
    if isinstance(v, dict):
        return "{%s}" % ", ".join("%s: %s" % (_value_text(k), _value_text(x))
                                  for k, x in sorted(v.items(), key=lambda kv: str(kv[0])))
    if isinstance(v, (tuple, list)):
        return "%s(%s)" % (type(v).__name__, ", ".join(_value_text(x) for x in v))
    try:
        return _compiler.param_text(v)
    except TypeError:
        return "<%s %r>" % (type(v).__name__, v)


def _device_text():
    try:
        import torch
        if torch.cuda.is_available():
            return str(torch.cuda.get_device_name(torch.cuda.current_device()))
    except Exception:  # noqa: BLE001
        pass
    from .. import _device
    return "sm_%d%d" % _device.compute_capability()


def _func_text(info):
    with open(info.path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    return "%s:%s:%d@%s" % (info.path, info.qualname, info.node.lineno, digest)


def _make_key(info, values, configs, extra=()):
    from .. import __version__
    parts = [_func_text(info), "args " + _value_text(values),
             "configs " + _value_text(configs), "device " + _device_text(),
             "tilelang " + __version__] + [str(x) for x in extra]
    return "\n".join(parts)


def _load(key, configs):
    """(config index, latency, ref_latency) of a stored result for key, or None."""
    try:
        with open(_cache_path(key), encoding="utf-8") as f:
            rec = json.load(f)
        i = rec["config_index"]
        if rec.get("key") != key or _value_text(configs[i]) != rec.get("config"):
            return None
        return i, rec.get("latency"), rec.get("ref_latency")
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def _save(key, configs, i, latency, ref_latency):
    path = _cache_path(key)
    rec = {"key": key, "config_index": i, "config": _value_text(configs[i]),
           "latency": latency, "ref_latency": ref_latency}
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = "%s.%d.%d.tmp" % (path, os.getpid(), threading.get_ident())
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(rec, f, indent=1)
        os.replace(tmp, path)  # atomic: safe with several processes tuning at once
    except OSError as e:
        logger.warning("tilelang.autotune: cannot save the result to %s: %s", path, e)


# ---- one tuning run -----------------------------------------------------------------------------
def _tune(name, configs, prepare, build, prof, key=None, call_inputs=None, verbose=False):
    """Chooses the fastest config: prepare(cfg) runs on this thread (the user's host code),
    build(job) -> JITKernel in the compile threads.  Returns an AutotuneResult; cached under
    key (memory, then disk) when key is not None."""
    if not configs:
        raise ValueError("tilelang.autotune: no configurations to tune for %s" % name)
    if key is not None and _cache_enabled():
        with _memory_lock:
            hit = _memory.get(key)
        if hit is not None:
            return hit
        rec = _load(key, configs)
        if rec is not None:
            i, latency, ref_latency = rec
            kernel = build(prepare(configs[i]))
            result = _finish(AutotuneResult(latency, dict(configs[i]), kernel=kernel), ref_latency)
            logger.info("autotune %s: cached choice %s (%.4f ms)", name, configs[i], latency or 0)
            with _memory_lock:
                _memory[key] = result
            return result
    _require_gpu(name)
    show = verbose or env.TILELANG_VERBOSE or len(configs) > _FEW
    jobs, errors = [], {}
    for i, cfg in enumerate(configs):
        try:
            jobs.append((i, prepare(cfg)))
        except Exception as e:  # noqa: BLE001 (the factory rejects this config)
            errors[i] = e
    if show:
        print("[tilelang.autotune] %s: compiling %d configs on %d workers, timing each as it "
              "compiles" % (name, len(jobs), _compiler.num_workers(len(jobs))), file=sys.stderr,
              flush=True)
    for i, err in sorted(errors.items()):
        _progress(show, name, i, len(configs), configs[i], "does not compile: %s" % _short(err))
    t0, timing = time.time(), 0.0
    bench, best = _Bench(prof, call_inputs), None
    index = [i for i, _ in jobs]
    for j, kernel, err in _compiler.compile_as_completed(build, [job for _, job in jobs]):
        i = index[j]
        cfg = configs[i]
        if kernel is None:
            errors[i] = err
            _progress(show, name, i, len(configs), cfg, "does not compile: %s" % _short(err))
            continue
        t1 = time.time()
        try:
            latency = bench.measure(kernel, cfg)
        except Exception as e:  # noqa: BLE001 (a config that fails its check or run is skipped)
            errors[i] = e
            _progress(show, name, i, len(configs), cfg, "failed: %s" % _short(e))
            continue
        finally:
            timing += time.time() - t1
        if best is None or latency < best.latency:
            best = AutotuneResult(latency, dict(cfg), kernel=kernel)
            best.index = i
            bench.best = latency
        _progress(show, name, i, len(configs), cfg, "%.4f ms (best %.4f ms)" % (latency, best.latency))
    logger.info("autotune %s: %d configs compiled and timed in %.1f s (%.1f s of it timing)",
                name, len(jobs), time.time() - t0, timing)
    if best is None:
        i, e = next(iter(sorted(errors.items()))) if errors else (0, RuntimeError("no configs"))
        raise RuntimeError("tilelang.autotune: no config of %s worked (%d tried); first error, "
                           "for %s: %s" % (name, len(configs), configs[i], e)) from e
    result = _finish(best, bench.ref_latency(best.kernel))
    if key is not None and _cache_enabled():
        _save(key, configs, best.index, result.latency, result.ref_latency)
    if key is not None:
        with _memory_lock:
            _memory[key] = result
    return result


def _finish(result, ref_latency):
    result.ref_latency = ref_latency
    k = result.kernel
    k.latency, k.config, k.ref_latency = result.latency, result.config, ref_latency
    return result


def _split(cfg):
    """(parameter values, per-config pass_configs or None) of a config."""
    cfg = dict(cfg)
    return cfg, cfg.pop(_PASS_CONFIGS, None)


def _freeze(v):
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if hasattr(v, "data_ptr") and hasattr(v, "shape"):
        return _value_text(v)
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


# ---- @autotune ---------------------------------------------------------------------------------
class AutoTuneImpl:
    """What @autotune returns.  Lazy factory: calling it tunes once per argument values (unless
    a tuned parameter is given: then a plain compile, as TileLang does) and returns the best
    JITKernel.  Eager kernel: the sizes come from the call's tensors (or keywords to
    .compile); calling it tunes once per argument values (tensors by shape, dtype, strides),
    then runs the best kernel on the call's tensors; .compile(...) returns the best kernel."""

    def __init__(self, jit_impl, configs, prof, do_not_specialize=None):
        self.jit_impl, self.configs, self.prof = jit_impl, configs, prof
        self.do_not_specialize = set(do_not_specialize or ())
        self._tuner_cache = {}  # TileLang's name (its tests clear it)
        self._calls = {}  # eager calls: call_key -> (best kernel, where its inputs are)
        self._lock = threading.Lock()
        functools.update_wrapper(self, jit_impl.func)

    def _configs(self, args, kwargs):
        cfgs = self.configs(*args, **kwargs) if callable(self.configs) else self.configs
        cfgs = [dict(c) for c in cfgs]
        jit = self.jit_impl
        allowed = set(jit.signature.parameters) | {_PASS_CONFIGS}
        if jit.mode == "eager":
            allowed |= set(jit.info.eager.consts)
        for c in cfgs:
            unused = set(c) - allowed
            if unused:
                raise ValueError("tilelang.autotune: config keys %s of %s are not parameters of "
                                 "the function" % (sorted(unused), jit.info.name))
        return cfgs

    def _given(self, args, kwargs):
        names = list(self.jit_impl.signature.parameters)
        return set(kwargs) | set(names[:len(args)])

    def _key(self, args, kwargs, extra=()):
        jit = self.jit_impl
        values = dict(zip(jit.signature.parameters, args))
        values.update(kwargs)
        values = {k: v for k, v in values.items() if k not in self.do_not_specialize}
        if jit.info.nested:
            values["<closure>"] = jit.info.closure()
        return values, _freeze(values)

    def _tuned(self, args, kwargs, compile_one, call_inputs=None):
        """The best JITKernel for these arguments, tuning on the first request."""
        jit = self.jit_impl
        configs = self._configs(args, kwargs)
        tuned = {k for c in configs for k in c if k != _PASS_CONFIGS}
        given = self._given(args, kwargs) & tuned
        if not configs or given:
            if configs and given:
                logger.info("tilelang.autotune: tunable parameters %s of %s given: no tuning",
                            sorted(given), jit.info.name)
            return None
        values, mkey = self._key(args, kwargs)
        with self._lock:
            k = self._tuner_cache.get(mkey)
        if k is None:
            opts = jit.options
            key = _make_key(jit.info, values, configs, (opts.key(),))
            result = _tune(jit.info.name, configs, _split, compile_one, self.prof, key=key,
                           call_inputs=call_inputs, verbose=opts.verbose)
            with self._lock:
                k = self._tuner_cache.setdefault(mkey, result.kernel)
        return k

    def compile(self, *args, **kwargs):
        jit = self.jit_impl
        if jit.mode == "eager":
            return self._eager(args, kwargs, run=False)

        def compile_one(job):
            cfg, pcs = job
            merged = dict(kwargs, **cfg)
            values = jit._lazy_values(args, merged)
            return jit._kernel(values, config=dict(cfg), pass_configs=pcs)
        k = self._tuned(args, kwargs, compile_one)
        return jit.compile(*args, **kwargs) if k is None else k

    def _eager(self, args, kwargs, run):
        """The best kernel for an eager call (run: the call's tensors are all there)."""
        jit = self.jit_impl
        _, tensors = jit._eager_values(args, kwargs, need_tensors=run)

        def compile_one(job):
            cfg, pcs = job
            values, _ = jit._eager_values(args, dict(kwargs, **cfg), need_tensors=False)
            return jit._kernel(values, config=dict(cfg), pass_configs=pcs)

        def call_inputs(kernel):
            return [tensors[a.name] for a in kernel.inputs]
        k = self._tuned(args, kwargs, compile_one, call_inputs if tensors else None)
        if k is None:
            values, _ = jit._eager_values(args, kwargs, need_tensors=run)
            k = jit._kernel(values)
        return k

    def __call__(self, *args, **kwargs):
        jit = self.jit_impl
        if jit.mode != "eager":
            return self.compile(*args, **kwargs)
        from ..jit import call_key
        fkey = None if jit.info.nested else call_key(args, kwargs)
        hit = self._calls.get(fkey) if fkey is not None else None
        if hit is None:
            _, tensors = jit._eager_values(args, kwargs, need_tensors=True)
            hit = jit.bind_call(self._eager(args, kwargs, run=False), tensors, args, kwargs)
            if fkey is not None:
                self._calls[fkey] = hit
        k, where = hit
        return k(*[args[w] if isinstance(w, int) else kwargs[w] for w in where])

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


# ---- AutoTuner.from_kernel ------------------------------------------------------------------------
class AutoTuner:
    """AutoTuner.from_kernel(kernel=factory, configs=[...]).set_compile_args(...)
    .set_profile_args(...).run(): the factory (a plain function returning a @T.prim_func,
    top-level or nested in another function) is called with each config on this thread and
    its @T.prim_func compiled with tilelang.compile in the compile threads."""

    def __init__(self, fn, configs):
        self.fn, self.configs = fn, configs
        self.compile_args, self.prof = {}, _Profile()

    @classmethod
    def from_kernel(cls, kernel, configs):
        return cls(kernel, configs)

    @property
    def cache_dir(self):
        return os.path.join(env.TILELANG_CACHE_DIR, "autotuner")

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

    def run(self, warmup=None, rep=None, timeout=None, use_pipeline=False,
            enable_grouped_compile=False, group_compile_size=2, benchmark_devices=None,
            benchmark_multi_gpu=False, early_stop=None, early_stop_factor=None):
        from ..jit import compile as tl_compile
        if warmup is not None:
            self.prof.warmup = warmup
        if rep is not None:
            self.prof.rep = rep
        if early_stop is not None:
            self.prof.early_stop = bool(early_stop)
        if early_stop_factor is not None:
            self.prof.early_stop_factor = early_stop_factor
        if self.prof.early_stop and self.prof.early_stop_factor < 1.0:
            raise ValueError("early_stop_factor must be >= 1.0, got %r" % self.prof.early_stop_factor)
        configs = self.configs() if callable(self.configs) else self.configs
        configs = [dict(c) for c in configs]
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        base_pcs = self.compile_args.get("pass_configs")

        def prepare(cfg):
            params, pcs = _split(cfg)
            return self.fn(**params), pcs

        def build(job):
            ref, pcs = job
            args = dict(self.compile_args)
            if pcs:
                args["pass_configs"] = dict(base_pcs or {}, **{str(getattr(k, "value", k)): v
                                                               for k, v in pcs.items()})
            return tl_compile(ref, **args)
        key = None
        try:
            info = _compiler.FuncInfo(self.fn, "autotuned factory")
            key = _make_key(info, info.closure(), configs,
                            (_value_text({k: v for k, v in self.compile_args.items()
                                          if k != "verbose"}),))
        except Exception:  # noqa: BLE001 (no source file: tuned, not cached)
            key = None
        return _tune(name, configs, prepare, build, self.prof, key=key,
                     verbose=self.compile_args.get("verbose"))
