"""GPU checks of the tilelang package (needs torch with CUDA and a GPU; not part of make test).

Runs the project's examples the way a TileLang user does: the `__main__` harness of the
examples that have one (each checks against torch itself), then the lazy and eager GEMMs
called with torch tensors, the profiler (assert_allclose against torch, do_bench) and the
autotuner on a small config space.  Prints one line per check and "N passed, N failed".
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


print("%d passed, %d failed" % (results.count(True), results.count(False)))
sys.exit(0 if all(results) else 1)
