"""tilelang.testing: TileLang's test helpers (pytest marks when pytest is installed, plain
skipping decorators otherwise), and main() to run a test file's test_* functions."""
import functools
import inspect
import os
import random
import sys
import unittest

from ..utils.tensor import torch_assert_close  # noqa: F401

__all__ = ["main", "requires_cuda", "requires_distributed", "requires_package", "requires_cuda_compute_version",
           "set_random_seed", "torch_assert_close", "process_func", "regression"] + [
    "requires_cuda_compute_version_" + op for op in ("ge", "gt", "le", "lt", "eq")]


def _pytest():
    try:
        import pytest
        return pytest
    except ImportError:
        return None


def _skip_unless(cond, reason):
    """A decorator skipping the test when cond is false (a pytest mark if pytest is there)."""
    def deco(func):
        pt = _pytest()
        if pt is not None:
            return pt.mark.skipif(not cond, reason=reason)(func)
        if cond:
            return func

        @functools.wraps(func)
        def skipped(*args, **kwargs):
            raise unittest.SkipTest(reason)
        return skipped
    return deco


@functools.lru_cache(maxsize=None)
def _compute_version():
    """(major, minor) of CUDA device 0, or (0, 0) without torch or a GPU."""
    try:
        import torch
        if torch.cuda.is_available():
            return tuple(torch.cuda.get_device_capability(0))
    except Exception:  # noqa: BLE001 (no torch, broken driver: no GPU)
        pass
    return (0, 0)


def _has_cuda():
    return _compute_version() != (0, 0)


def requires_cuda(func=None):
    deco = _skip_unless(_has_cuda(), "Requires a CUDA GPU")
    return deco if func is None else deco(func)


def requires_cuda_or_cdna(func=None):
    """A CUDA GPU or an AMD CDNA one: TileScale runs on CUDA, so a CUDA GPU."""
    return requires_cuda(func)


def requires_rocm(func=None):
    """TileScale compiles for CUDA only: ROCm tests are skipped."""
    deco = _skip_unless(False, "Requires ROCm (TileScale compiles for CUDA only)")
    return deco if func is None else deco(func)


requires_hip = requires_rocm
requires_metal = requires_rocm
requires_cdna = requires_rocm      # AMD CDNA / gfx950 GPUs: ROCm, skipped like it
requires_gfx950 = requires_rocm


def requires_llvm(func=None):
    """TileLang's CPU (LLVM) backend: TileScale has none, so these tests are skipped."""
    deco = _skip_unless(False, "Requires TileLang's LLVM CPU backend (not in TileScale)")
    return deco if func is None else deco(func)


def _distributed_enabled():
    """TILELANG_USE_DISTRIBUTED=1 (tilelang/distributed/launch.sh sets it), or a process started
    by a multi-process launcher (tilescale launch, torchrun, mpirun, srun)."""
    if os.environ.get("TILELANG_USE_DISTRIBUTED", "").strip().lower() in ("1", "true", "on", "yes"):
        return True
    return any(v in os.environ for v in ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                         "SLURM_STEP_NUM_TASKS"))


def requires_distributed(func=None):
    """TileScale's mark for multi-GPU tests: they run when distributed work is enabled (see
    _distributed_enabled), are skipped otherwise, and carry the pytest mark `distributed`
    (`pytest -m distributed`).  TileScale's scripts also decorate their main function with it:
    run under a launcher, it runs."""
    def deco(f):
        pt = _pytest()
        if pt is not None:
            f = pt.mark.distributed(f)
        return _skip_unless(_distributed_enabled(), "Requires TILELANG_USE_DISTRIBUTED=1")(f)
    return deco if func is None else deco(func)


def requires_package(*packages):
    import importlib.util
    missing = [p for p in packages if importlib.util.find_spec(p) is None]
    return _skip_unless(not missing, "Requires package%s %s" % (
        "s" if len(missing) > 1 else "", ", ".join(missing)))


def requires_cuda_compute_version(major_version, minor_version=0, mode="ge"):
    want, have = (major_version, minor_version), _compute_version()
    ops = {"ge": have >= want, "gt": have > want, "le": have <= want, "lt": have < want,
           "eq": have == want}
    if mode not in ops:
        raise ValueError("Invalid mode: %s" % mode)
    cond = _has_cuda() and ops[mode]
    return _skip_unless(cond, "Requires CUDA compute %s %d.%d, but have %d.%d"
                        % (mode, want[0], want[1], have[0], have[1]))


def requires_cuda_compute_version_ge(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "ge")


def requires_cuda_compute_version_gt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "gt")


def requires_cuda_compute_version_eq(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "eq")


def requires_cuda_compute_version_lt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "lt")


def requires_cuda_compute_version_le(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "le")


def set_random_seed(seed=42):
    random.seed(seed)
    try:
        import numpy as np
        np.random.seed(seed)
    except ImportError:
        pass
    import torch
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def main():
    """Runs the calling file's tests: under pytest when installed, else its test_* functions
    in order, and exits with 0 only when none failed."""
    frame = sys._getframe(1)
    test_file = inspect.getsourcefile(frame)
    pt = _pytest()
    if pt is not None:
        sys.exit(pt.main([test_file] + sys.argv[1:]))
    tests = [(n, f) for n, f in frame.f_globals.items() if n.startswith("test") and callable(f)]
    passed = failed = skipped = 0
    for name, f in tests:
        try:
            f()
            passed += 1
            print("PASS %s" % name)
        except unittest.SkipTest as e:
            skipped += 1
            print("SKIP %s: %s" % (name, e))
        except Exception as e:  # noqa: BLE001 (report and go on, like a test runner)
            failed += 1
            print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
    print("%s: %d passed, %d failed, %d skipped" % (os.path.basename(test_file), passed, failed, skipped))
    sys.exit(1 if failed else 0)


# ---- perf regression entry points (examples' regression_*.py files) ------------------------
_RESULTS = []


def process_func(func, name=None, /, **kwargs):
    """Runs a perf function (returning a latency) and records the result."""
    name = name or getattr(func, "__module__", "<unknown>")
    if name.startswith("regression_"):
        name = name[len("regression_"):]
    latency = float(func(**kwargs))
    if latency > 0:
        _RESULTS.append((name, latency))


def regression(prefixes=("regression_",), verbose=True):
    """Runs every `regression_*` function of the calling module and prints name: latency."""
    g = sys._getframe(1).f_globals
    del _RESULTS[:]
    for n, f in list(g.items()):
        if callable(f) and any(n.startswith(p) for p in prefixes):
            f()
    for name, latency in _RESULTS:
        print("%s: %s" % (name, latency))
