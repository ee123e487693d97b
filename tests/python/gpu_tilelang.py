"""GPU checks of the tilelang package (needs torch with CUDA and a GPU; not part of make test).

Runs the project's examples the way a TileLang user does: the `__main__` harness of the
examples that have one (each checks against torch itself), then the lazy and eager GEMMs
called with torch tensors, the profiler (assert_allclose against torch, do_bench) and the
autotuner on a small config space.  Then the C call path (python/tilescale/_fastcall.c) with real torch tensors: that it is the
path calls take, results with outputs passed and allocated, torch's current stream (a side
stream and a CUDA graph capture), eager calls remembered, outputs with dynamic extents, several
outputs, and argument errors naming the parameter.
Prints one line per check and "N passed, N failed".
Run: PYTHONPATH=python python3 tests/python/gpu_tilelang.py"""
import importlib.util
import os
import runpy
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.dont_write_bytecode = True

import torch  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402

MAIN_EXAMPLES = ["elementwise_add.py", "softmax.py", "rmsnorm.py"]
results = []


def check(name):
    def deco(fn):
        try:
            fn()
            results.append(True)
            print("PASS", name)
        except Exception:  # noqa: BLE001 (report every check)
            results.append(False)
            print("FAIL", name)
            traceback.print_exc()
        return fn
    return deco


def load(rel):
    path = os.path.join(ROOT, rel)
    spec = importlib.util.spec_from_file_location("gpu_tl_" + os.path.basename(rel)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


for ex in MAIN_EXAMPLES:
    check("examples/%s __main__" % ex)(
        lambda ex=ex: runpy.run_path(os.path.join(ROOT, "examples", ex), run_name="__main__"))


@check("lazy gemm: kernel(a, b) against torch, profiler")
def _lazy_gemm():
    gemm = load("examples/gemm.py")
    M, N, K = 1024, 768, 512
    kernel = gemm.matmul(M, N, K)
    a = torch.randn(M, K, dtype=torch.float16, device="cuda")
    b = torch.randn(K, N, dtype=torch.float16, device="cuda")
    c = kernel(a, b)
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=1e-2, atol=1e-2)
    prof = kernel.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.Normal)
    prof.assert_allclose(lambda x, y: x @ y, rtol=1e-2, atol=1e-2)
    ms = prof.do_bench()
    ref_ms = prof.do_bench(lambda x, y: x @ y)
    assert ms > 0 and ref_ms > 0
    print("    gemm %dx%dx%d: %.4f ms (torch %.4f ms)" % (M, N, K, ms, ref_ms))
    assert "__global__" in kernel.get_kernel_source()


@check("eager gemm: matmul(a, b) with sizes from the tensors")
def _eager_gemm():
    mm = load("examples/gemm_eager.py").matmul
    for M, N, K in ((512, 512, 256), (256, 384, 512)):
        a = torch.randn(M, K, dtype=torch.float16, device="cuda")
        b = torch.randn(K, N, dtype=torch.float16, device="cuda")
        c = mm(a, b)
        torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=1e-2, atol=1e-2)
    k = mm.compile(M=512, N=512, K=256)
    a = torch.randn(512, 256, dtype=torch.float16, device="cuda")
    b = torch.randn(256, 512, dtype=torch.float16, device="cuda")
    torch.testing.assert_close(k(a, b), (a.float() @ b.float()).half(), rtol=1e-2, atol=1e-2)


@check("do_bench of a torch op")
def _do_bench():
    from tilelang.profiler import do_bench
    x = torch.randn(4096, 4096, device="cuda")
    t = do_bench(lambda: x * 2, warmup=5, rep=20)
    q = do_bench(lambda: x * 2, warmup=5, rep=20, quantiles=[0.5, 0.9])
    assert t > 0 and len(q) == 2


@check("autotune picks a config and keeps it")
def _autotune():
    mod = load("tests/front/autotune_configs.py")
    k = mod.tuned(1 << 20)
    assert k.config in [{"block": b, "threads": t} for b in (128, 256, 512) for t in (128, 256)]
    assert k.latency > 0
    assert mod.tuned(1 << 20) is k   # tuned once per argument values
    x = torch.randn(1 << 20, device="cuda")
    torch.testing.assert_close(k(x), x + 1)


@check("tilelang.compile of a plain factory's prim_func")
def _compile_factory():
    import tempfile
    src = (
        "import tilelang.language as T\n\n\n"
        "def make_scale(N, block=256):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((N,), 'float32'), B: T.Tensor((N,), 'float32')):\n"
        "        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:\n"
        "            for i in T.Parallel(block):\n"
        "                B[bx * block + i] = A[bx * block + i] * 3.0\n"
        "    return main\n")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "scale_kernel.py")
        with open(path, "w") as f:
            f.write(src)
        spec = importlib.util.spec_from_file_location("scale_kernel", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        k = tilelang.compile(mod.make_scale(100000), out_idx=-1)
        x = torch.randn(100000, device="cuda")
        torch.testing.assert_close(k(x), x * 3)


# ---- the C call path ------------------------------------------------------------------------------
def call_counter(obj):
    """Counts the calls that reach obj's Python path (_call_py) instead of C."""
    real, calls = obj._call_py, []
    obj._call_py = lambda *a, **kw: calls.append(1) or real(*a, **kw)
    return calls


ADD = None


def add_kernels():
    global ADD
    if ADD is None:
        ADD = load("bench/tilelang/call_overhead_kernels.py")
    return ADD


@check("C call path: taken, outputs passed and allocated")
def _fast_lazy():
    from tilescale import _callpath
    mod = add_kernels()
    k, k_into = mod.add(256, 256), mod.add_into(256, 256)
    a, b = torch.randn(256, 256, device="cuda"), torch.randn(256, 256, device="cuda")
    torch.testing.assert_close(k(a, b), a + b)            # the first call hands torch to C
    assert _callpath.fast is not None and _callpath.fast.torch_ready() and k._fast
    slow, slow_into = call_counter(k), call_counter(k_into)
    for _ in range(3):
        torch.testing.assert_close(k(a, b), a + b)
        c = torch.full_like(a, float("nan"))
        assert k_into(a, b, c) is None
        torch.testing.assert_close(c, a + b)
        c.fill_(float("nan"))
        assert k(a, b, c) is None                         # out_idx kernel given its output
        torch.testing.assert_close(c, a + b)
    assert slow == [] and slow_into == [], (slow, slow_into)


@check("C call path: torch's current stream (side stream, CUDA graph capture)")
def _fast_streams():
    k = add_kernels().add_into(256, 256)
    a, b = torch.randn(256, 256, device="cuda"), torch.randn(256, 256, device="cuda")
    c = torch.zeros_like(a)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(20_000_000)                      # the kernel must queue behind this
        a2 = a * 2
        k(a2, b, c)
    s.synchronize()
    torch.testing.assert_close(c, a * 2 + b)
    g = torch.cuda.CUDAGraph()
    c.zero_()
    k(a, b, c)                                            # warm: module loaded before capture
    c.zero_()
    torch.cuda.synchronize()
    with torch.cuda.graph(g):                             # a launch elsewhere breaks the capture
        k(a, b, c)
    torch.cuda.synchronize()
    assert float(c.abs().sum()) == 0.0                    # captured, not run
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a + b)


@check("C call path: eager calls remembered, several outputs, dynamic extents")
def _fast_eager():
    mod = add_kernels()
    a, b = torch.randn(256, 256, device="cuda"), torch.randn(256, 256, device="cuda")
    torch.testing.assert_close(mod.add_eager(a, b), a + b)
    slow = call_counter(mod.add_eager)
    for _ in range(3):
        torch.testing.assert_close(mod.add_eager(a, b), a + b)
    assert slow == [], slow
    x, y = torch.randn(128, 512, device="cuda"), torch.randn(128, 512, device="cuda")
    torch.testing.assert_close(mod.add_eager(x, y), x + y)   # another shape: compiled once
    torch.testing.assert_close(mod.add_eager(x, y), x + y)
    assert len(slow) == 1, slow
    two = load("tests/front/eager_two_outputs.py").minmax
    x = torch.randn(64, 32, device="cuda")
    lo, hi = two(x)
    lo, hi = two(x)
    torch.testing.assert_close(lo, x.min(dim=1).values)
    torch.testing.assert_close(hi, x.max(dim=1).values)
    rq = load("tests/python/tilelang_gaps.py").row_quant
    k = rq.compile(N=1024)
    slow = call_counter(k)
    x = torch.randn(300, 1024, device="cuda")
    q, scale = k(x)
    assert slow == [] and q.shape == (300, 1024) and scale.shape == (300, 8), (slow, q.shape, scale.shape)
    torch.testing.assert_close(q, x.half())
    assert bool((scale == 1).all())


@check("C call path: argument errors name the parameter")
def _fast_errors():
    import tilescale
    k = add_kernels().add(256, 256)
    a = torch.randn(256, 256, device="cuda")
    k(a, a)
    flat = torch.randn(256 * 256 + 1, device="cuda")
    cases = [(a.half(), "argument 0 ('A'): expected dtype float32, got float16"),
             (a[:128], "argument 0 ('A'): dimension 0 is 128 but the kernel was compiled for 256"),
             (a.t(), "argument 0 ('A'): strides (1, 256) are not compact row-major"),
             (a.cpu(), "argument 0 ('A'): tensor is in host memory"),
             (flat[1:].view(256, 256), "argument 0 ('A'): data pointer"),
             (a[None], "argument 0 ('A'): expected 2 dimensions, got 3")]
    for bad, want in cases:
        try:
            k(bad, a)
        except tilescale.TileScaleError as e:
            assert e.status == "TS_ERR_LAUNCH_ARGUMENT" and want in e.message, (want, e.message)
        else:
            raise AssertionError("no error for: " + want)
    try:
        k(a, a.to(torch.complex64))
    except TypeError as e:
        assert "'B'" in str(e) and "complex64" in str(e), str(e)
    else:
        raise AssertionError("complex64 accepted")
    torch.testing.assert_close(k(a, a), a + a)            # still fine after the errors


print("%d passed, %d failed" % (results.count(True), results.count(False)))
sys.exit(0 if all(results) else 1)
