"""Tests of the drop-in `tilelang` package (python/tilelang) that need no GPU and no torch:
imports, dtypes and placeholders, lazy and eager @tilelang.jit compiled by libtilescale
(NVRTC, sm_90a) from the project's own example files, tilelang.compile of @T.prim_func
markers, argument and keyword errors, and the call path up to a launch that fails cleanly
without a driver (torch replaced by a small stand-in module).
Run: python3 tests/python/test_tilelang.py  (uses $TILESCALE_LIB, else build/libtilescale.so)."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import types
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = os.path.join(ROOT, "python")
sys.path.insert(0, PY)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import tilescale as ts  # noqa: E402
import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from tilelang import _compiler  # noqa: E402

if "TILESCALE_CACHE_DIR" not in os.environ:  # tests/run.sh gives a temporary cache; alone, none
    tilelang.disable_cache()


def load(path, name=None):
    """Imports a kernel file as a module, the way a script's own imports would."""
    name = name or "tl_test_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEMM = load(os.path.join(ROOT, "examples", "gemm.py"))
GEMM_EAGER = load(os.path.join(ROOT, "examples", "gemm_eager.py"))


class FakeTensor:
    """Enough of a CUDA torch.Tensor for the call path: shape, stride, dtype, data_ptr."""
    __module__ = "torch"

    def __init__(self, shape, dtype, ptr=0x10000):
        self.shape, self.dtype, self.ptr, self.is_cuda = tuple(shape), dtype, ptr, True
        self.device = types.SimpleNamespace(index=0, type="cuda")

    def data_ptr(self):
        return self.ptr

    def stride(self):
        out, acc = [], 1
        for s in reversed(self.shape):
            out.append(acc)
            acc *= s
        return tuple(reversed(out))


FakeTensor.__name__ = "Tensor"


def fake_torch():
    """A stand-in torch module: dtypes, empty(), device(), cuda.current_stream()."""
    m = types.ModuleType("torch")
    DType = type("dtype", (), {"__module__": "torch", "__init__": lambda s, n: setattr(s, "n", n),
                                "__str__": lambda s: "torch." + s.n,
                                "__repr__": lambda s: "torch." + s.n})
    for n in ("float16", "bfloat16", "float32", "int32", "int8", "float8_e4m3fn", "bool"):
        setattr(m, n, DType(n))
    m.made = []
    m.empty = lambda shape, dtype, device: m.made.append(FakeTensor(shape, dtype, 0x90000)) or m.made[-1]
    m.device = lambda kind, index=0: types.SimpleNamespace(type=kind, index=index)
    m.cuda = types.SimpleNamespace(current_stream=lambda d=None: types.SimpleNamespace(cuda_stream=0),
                                   current_device=lambda: 0, is_available=lambda: False)
    return m


class WithFakeTorch:
    def __enter__(self):
        self.saved = sys.modules.get("torch")
        self.torch = sys.modules["torch"] = fake_torch()
        return self.torch

    def __exit__(self, *exc):
        if self.saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = self.saved


def has_gpu():
    return _compiler.context().device_sm != 0


class ImportTest(unittest.TestCase):
    def test_import_without_torch(self):
        """Importing every module of the package works with torch made unimportable."""
        code = textwrap.dedent("""
            import sys
            sys.modules["torch"] = None          # `import torch` now raises ImportError
            sys.path.insert(0, %r)
            import tilelang, tilelang.language as T
            import tilelang.testing, tilelang.profiler, tilelang.autotuner, tilelang.math
            import tilelang.utils.tensor, tilelang.carver.arch, tilelang.transform
            from tilelang.profiler import do_bench
            from tilelang.autotuner import autotune, AutoTuner, set_autotune_inputs
            from tilelang.layout import make_swizzled_layout
            from tilelang import tvm
            assert T.float16 == "float16" and tilelang.cdiv(7, 2) == 4
            assert "tilescale" not in sys.modules   # the library loads on first compile
            print("ok")
        """ % PY)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "ok")


class LanguageTest(unittest.TestCase):
    def test_dtypes(self):
        self.assertEqual(T.float16, "float16")
        self.assertEqual(T.half, "float16")
        self.assertEqual(T.float, "float32")
        self.assertEqual({T.bfloat16: 1}["bfloat16"], 1)
        self.assertEqual(repr(T.float8_e4m3fn), "T.float8_e4m3fn")
        self.assertEqual(T.dtype("float32").bits, 32)
        self.assertEqual(T.float8_e4m3.bits, 8)
        self.assertRaises(TypeError, T.dtype, "float17")
        with WithFakeTorch() as torch:
            self.assertIs(T.float16.as_torch(), torch.float16)
            self.assertIs(T.float8_e4m3.as_torch(), torch.float8_e4m3fn)
            self.assertEqual(T.dtype(torch.float16), "float16")
            self.assertEqual(_compiler.param_text(torch.bfloat16), "T.bfloat16")
        self.assertRaises(T.KernelOnlyError, T.float32, 1.0)

    def test_placeholders(self):
        with self.assertRaises(T.KernelOnlyError) as cm:
            T.gemm(1, 2, 3)
        self.assertIn("T.gemm can only be used inside a kernel compiled by tilelang",
                      str(cm.exception))
        self.assertEqual(repr(T.GemmWarpPolicy.FullRow), "T.GemmWarpPolicy.FullRow")
        self.assertEqual(_compiler.param_text(T.GemmWarpPolicy.FullRow), "T.GemmWarpPolicy.FullRow")
        from tilelang.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter
        self.assertRaises(T.KernelOnlyError, TensorCoreIntrinEmitter)
        self.assertRaises(T.KernelOnlyError, T.const, "M, N")
        self.assertEqual(T.ceildiv(10, 4), 3)
        self.assertEqual(T.max(3, 5), 5)
        self.assertEqual(repr(T.dynamic("m, n")), "(m, n)")
        ann = T.Tensor((16, 32), T.float16)
        self.assertEqual((ann.shape, ann.dtype), ((16, 32), "float16"))
        self.assertEqual(T.Tensor[(16,), "int32"].shape, (16,))
        self.assertEqual(T.StridedTensor((4, 4), (8, 1), "float32").strides, (8, 1))

    def test_markers(self):
        @T.prim_func
        def body(A: T.Tensor((4,), "float32")):
            T.copy(A, A)

        @T.macro
        def helper(x):
            return x
        self.assertIsInstance(body, T.PrimFuncRef)
        self.assertEqual(body.factory.co_name, "test_markers")  # made inside this function
        self.assertRaises(T.KernelOnlyError, body)
        self.assertRaises(T.KernelOnlyError, helper, 1)

    def test_helpers(self):
        self.assertEqual([tilelang.math.next_power_of_2(x) for x in (0, 1, 5, 64, 65)], [1, 1, 8, 64, 128])
        self.assertEqual(tilelang.PassConfigKey.TL_ENABLE_FAST_MATH, "tl.enable_fast_math")
        self.assertEqual(tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED.value,
                         "tl.disable_warp_specialized")
        self.assertEqual([t.name for t in tilelang.TensorSupplyType],
                         ["Integer", "Uniform", "Normal", "Randn", "Zero", "One", "Auto"])
        self.assertEqual(_compiler.param_text((1, 2.5, True, "x", T.bfloat16, [None])),
                         '(1, 2.5, True, "x", T.bfloat16, [None])')

    def test_testing_helpers(self):
        import tilelang.testing as tt

        @tt.requires_cuda_compute_version_ge(9, 0)
        def needs_hopper():
            return "ran"
        if not has_gpu():
            try:
                needs_hopper()
                self.fail("not skipped")
            except unittest.SkipTest as e:
                self.assertIn("Requires CUDA compute ge 9.0", str(e))


class LazyJitTest(unittest.TestCase):
    def test_lazy_compile(self):
        k = GEMM.matmul(256, 256, 256)
        self.assertIsInstance(k, tilelang.JITKernel)
        self.assertEqual(GEMM.matmul.mode, "lazy")
        self.assertEqual([(a.name, a.dtype, a.shape) for a in k.params],
                         [("A", "float16", (256, 256)), ("B", "float16", (256, 256)),
                          ("C", "float16", (256, 256))])
        self.assertEqual(k.out_idx, [2])
        src = k.get_kernel_source()
        self.assertIn("__global__", src)
        self.assertIn("matmul_kernel", src)
        self.assertIs(GEMM.matmul(M=256, N=256, K=256), k)         # cached by values
        self.assertIs(GEMM.matmul(256, 256, 256, block_M=128), k)  # explicit default: same text
        k2 = GEMM.matmul(256, 256, 512, dtype=T.bfloat16, block_N=64)
        self.assertIsNot(k2, k)
        self.assertEqual(k2.params[0].dtype, "bfloat16")
        self.assertEqual(k2.params[1].shape, (512, 256))
        self.assertIn("__global__", GEMM.matmul.get_kernel_source(128, 128, 128))

    def test_lazy_argument_errors(self):
        with self.assertRaises(TypeError) as cm:
            GEMM.matmul(256, 256)                      # K missing
        self.assertIn("missing a required argument: 'K'", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            GEMM.matmul(256, 256, 256, blok_M=64)      # misspelt keyword
        self.assertIn("blok_M", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            GEMM.matmul(256, 256, FakeTensor((4,), "x"))
        self.assertIn("got a tensor", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            GEMM.matmul(256, 256, 256, threads=object())
        self.assertIn("parameter 'threads' of 'matmul'", str(cm.exception))
        with self.assertRaises(ts.TileScaleError) as cm:   # the compiler's own diagnostic
            GEMM.matmul(256, 256, 256, dtype="float17")
        self.assertEqual(cm.exception.status, "TS_ERR_COMPILE")
        self.assertIn("gemm.py:", cm.exception.message)

    def test_kernel_call_checks(self):
        k = GEMM.matmul(256, 256, 256)
        with self.assertRaises(TypeError) as cm:
            k(ts.Tensor(0x10000, "float16", (256, 256)))
        self.assertIn("takes 2 inputs (A, B), got 1", str(cm.exception))
        a = ts.Tensor(0x10000, "float16", (256, 256))
        with self.assertRaises(ts.TileScaleError) as cm:   # checked before any driver call
            k(a, ts.Tensor(0x20000, "float32", (256, 256)), a)
        self.assertEqual(cm.exception.status, "TS_ERR_LAUNCH_ARGUMENT")
        self.assertIn("'B'", cm.exception.message)

    def test_call_allocates_outputs(self):
        """kernel(a, b): C is allocated with torch (stand-in here) and the launch reaches the
        driver, which is missing on a CPU machine."""
        if has_gpu():
            self.skipTest("a GPU is present: the no-driver path cannot be checked")
        k = GEMM.matmul(256, 256, 256)
        with WithFakeTorch() as torch:
            a = FakeTensor((256, 256), torch.float16)
            with self.assertRaises(ts.TileScaleError) as cm:
                k(a, FakeTensor((256, 256), torch.float16, 0x20000))
            self.assertEqual(cm.exception.status, "TS_ERR_NO_DRIVER")
            self.assertEqual([(t.shape, str(t.dtype)) for t in torch.made],
                             [((256, 256), "torch.float16")])

    def test_pass_configs_and_autotune_file(self):
        mod = load(os.path.join(ROOT, "tests", "front", "lazy_pass_configs.py"))
        k = mod.scaled(2048)
        self.assertEqual(k.kernel.pass_configs.get("tl.enable_fast_math"), "True")
        self.assertEqual(k.out_idx, [1])
        mod = load(os.path.join(ROOT, "tests", "front", "autotune_configs.py"))
        # every tuned parameter given: no tuning, a plain compile (no GPU needed)
        k = mod.tuned(4096, block=256, threads=128)
        self.assertIsInstance(k, tilelang.JITKernel)
        self.assertEqual(k.params[0].shape, (4096,))
        with WithFakeTorch():                      # tuning needs a GPU: said clearly
            with self.assertRaises(RuntimeError) as cm:
                mod.tuned(4096)
            self.assertIn("needs a CUDA GPU", str(cm.exception))


class EagerJitTest(unittest.TestCase):
    def test_eager_compile(self):
        mm = GEMM_EAGER.matmul
        self.assertEqual(mm.mode, "eager")
        self.assertEqual(mm.info.eager.consts, ["M", "N", "K"])
        self.assertEqual(mm.info.eager.matcher, {"M": ("A", "shape", 0), "K": ("A", "shape", 1),
                                                 "N": ("B", "shape", 1)})
        k = mm.compile(M=256, N=256, K=256)
        self.assertEqual([(a.name, a.shape, a.is_output) for a in k.params],
                         [("A", (256, 256), False), ("B", (256, 256), False),
                          ("C", (256, 256), True)])
        self.assertEqual(k.out_idx, [2])
        self.assertIn("__global__", k.get_kernel_source())
        self.assertIs(mm.compile(K=256, N=256, M=256), k)
        with self.assertRaises(ValueError) as cm:
            mm.compile(M=256, N=256)
        self.assertIn("no value for T.const 'K'", str(cm.exception))

    def test_eager_call_sizes_from_tensors(self):
        """matmul(a, b) takes M, N, K from the shapes, compiles, allocates C, launches."""
        if has_gpu():
            self.skipTest("a GPU is present: the no-driver path cannot be checked")
        mm = GEMM_EAGER.matmul
        with WithFakeTorch() as torch:
            a, b = FakeTensor((128, 64), torch.float16), FakeTensor((64, 192), torch.float16, 0x20000)
            with self.assertRaises(ts.TileScaleError) as cm:
                mm(a, b, block_M=64, block_N=64, block_K=32)
            self.assertEqual(cm.exception.status, "TS_ERR_NO_DRIVER")
            self.assertEqual(torch.made[0].shape, (128, 192))
        k = mm.compile(M=128, N=192, K=64, block_M=64, block_N=64, block_K=32)
        self.assertEqual(k.params[2].shape, (128, 192))
        self.assertEqual(len(mm._cache), len({id(v) for v in mm._cache.values()}))

    def test_eager_argument_errors(self):
        mm = GEMM_EAGER.matmul
        with WithFakeTorch() as torch:
            a = FakeTensor((128, 64), torch.float16)
            with self.assertRaises(TypeError) as cm:
                mm(a)
            self.assertIn("missing tensor argument 'B'", str(cm.exception))
            with self.assertRaises(TypeError) as cm:
                mm(a, [1, 2])
            self.assertIn("'B' is declared as a tensor", str(cm.exception))
        two = load(os.path.join(ROOT, "tests", "front", "eager_two_outputs.py")).minmax
        k = two.compile(M=64, N=32)
        self.assertEqual(k.out_idx, [1, 2])

    def test_eager_rejects_out_idx(self):
        impl = tilelang.jit(out_idx=[-1])(GEMM_EAGER.matmul.func)
        with self.assertRaises(ValueError) as cm:
            impl.compile(M=128, N=128, K=128)
        self.assertIn("eager kernel", str(cm.exception))


class DecoratorTest(unittest.TestCase):
    def test_unknown_keywords(self):
        with self.assertRaises(TypeError) as cm:
            tilelang.jit(out_idx=[-1], fast=True, bogus=2)
        self.assertIn("'bogus', 'fast'", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            tilelang.compile(None, outidx=[1])
        self.assertIn("'outidx'", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            tilelang.autotune(configs=[{}], warmpu=3)
        self.assertIn("'warmpu'", str(cm.exception))

    def test_bad_options(self):
        with self.assertRaises(ValueError) as cm:
            tilelang.jit(target="hip -mcpu=gfx950")(GEMM.matmul.func)
        self.assertIn("target='hip -mcpu=gfx950'", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            tilelang.jit(execution_backend="torch")(GEMM.matmul.func)
        self.assertIn("execution_backend='torch'", str(cm.exception))
        for backend in ("auto", "tvm_ffi", "cython", "nvrtc", "cutedsl", "nvcc"):
            tilelang.jit(execution_backend=backend)(GEMM.matmul.func)
        k = tilelang.jit(out_idx=-1, target="cuda -arch=sm_80")(GEMM.matmul.func)(128, 128, 128)
        self.assertIn("__global__", k.get_kernel_source())

    def test_decorator_forms(self):
        f = GEMM.matmul.func
        self.assertIsInstance(tilelang.jit(f), tilelang.JITImpl)
        self.assertIsInstance(tilelang.jit()(f), tilelang.JITImpl)
        self.assertIsInstance(tilelang.jit(f, out_idx=[2]), tilelang.JITImpl)
        self.assertRaises(TypeError, tilelang.jit, 42)


KERNELS = '''
import tilelang
import tilelang.language as T

N = 256
BLOCK = 64


@T.prim_func
def scale(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
    with T.Kernel(N // BLOCK, threads=BLOCK) as bx:
        for i in T.Parallel(BLOCK):
            B[bx * BLOCK + i] = A[bx * BLOCK + i] * 2.0


def make_add(M, block=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype), C: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block), threads=block) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return main


def bad_factory(M):
    M = M * 2

    @T.prim_func
    def main(A: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[0] = 1.0
    return main


def outer():
    @tilelang.jit
    def inner(M):
        @T.prim_func
        def main(A: T.Tensor((M,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                A[0] = 1.0
        return main
    return inner


def typo(M):
    @T.prim_func
    def main(A: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[0] = undefined_name
    return main
'''


class CompileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        path = os.path.join(cls.dir.name, "kernels.py")
        with open(path, "w") as f:
            f.write(KERNELS)
        cls.mod = load(path)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_module_prim_func(self):
        k = tilelang.compile(self.mod.scale, out_idx=[1])
        self.assertEqual([(a.name, a.shape) for a in k.params], [("A", (256,)), ("B", (256,))])
        self.assertEqual(k.out_idx, [1])
        self.mod.N = 512   # module constants set at run time travel as -D overrides
        try:
            k2 = tilelang.compile(self.mod.scale, out_idx=-1)
        finally:
            self.mod.N = 256
        self.assertEqual(k2.params[0].shape, (512,))

    def test_factory_prim_func(self):
        ref = self.mod.make_add(1000, dtype=T.bfloat16)
        self.assertEqual(ref.factory_args["M"], 1000)
        k = tilelang.compile(ref, out_idx=[2])
        self.assertEqual([(a.name, a.dtype, a.shape) for a in k.params],
                         [("A", "bfloat16", (1000,)), ("B", "bfloat16", (1000,)),
                          ("C", "bfloat16", (1000,))])
        self.assertEqual(k.out_idx, [2])
        self.assertIs(tilelang.compile(self.mod.make_add(1000, dtype=T.bfloat16), out_idx=[2]), k)
        k3 = tilelang.compile(self.mod.make_add(64))   # no out_idx: every argument passed
        self.assertEqual(k3.out_idx, [])
        self.assertIn("__global__", k3.get_kernel_source())

    def test_compile_errors(self):
        with self.assertRaises(tilelang.TileLangError) as cm:
            tilelang.compile(self.mod.bad_factory(16))
        self.assertIn("assigns to its parameter M", str(cm.exception))
        with self.assertRaises(tilelang.TileLangError) as cm:
            self.mod.outer()(64)
        self.assertIn("defined inside another function", str(cm.exception))
        with self.assertRaises(ts.TileScaleError) as cm:
            tilelang.compile(self.mod.typo(32))
        self.assertIn("kernels.py:50:20: error: name 'undefined_name' is not defined",
                      cm.exception.message)
        self.assertRaises(TypeError, tilelang.compile, "not a kernel")

    def test_python_only_pass_configs_warn(self):
        with self.assertLogs("tilelang", level="WARNING") as cm:
            tilelang.compile(self.mod.make_add(128), pass_configs={"tl.disable_tma_lower": True})
        self.assertIn("tl.disable_tma_lower", cm.output[0])


if __name__ == "__main__":
    unittest.main(verbosity=1)
