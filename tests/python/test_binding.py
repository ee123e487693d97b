"""Tests of the ctypes binding (python/tilescale) that need no GPU: load, compile (NVRTC,
sm_90a), artifacts, argument metadata, errors, and launches failing cleanly without a driver.
Run: python3 tests/python/test_binding.py  (uses $TILESCALE_LIB, else build/libtilescale.so)."""
import os
import sys
import types
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import tilescale as ts  # noqa: E402

SOFTMAX = os.path.join(ROOT, "examples", "softmax.py")
BAD = '''import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rowwise(M, N, block_M=32):
    steps = block_M(2)

    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            T.copy(A[bx * block_M, 0], B[bx * block_M, 0])

    return main
'''


class BindingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # tests/run.sh points TILESCALE_CACHE_DIR at a temporary folder; alone, use no cache
        cls.ctx = ts.Context(disable_cache="TILESCALE_CACHE_DIR" not in os.environ)
        cls.prog = cls.ctx.load(SOFTMAX)
        cls.k = cls.prog.compile("softmax", arch="sm_90a", M=256, N=1024)

    def test_functions(self):
        self.assertEqual(self.prog.functions, ["softmax"])

    def test_artifacts(self):
        k = self.k
        self.assertIn("softmax_kernel", k.source)
        self.assertIn("__global__", k.source)
        self.assertTrue(k.ir)
        self.assertIn(".entry", k.ptx)
        self.assertEqual(k.cubin[:4], b"\x7fELF")
        self.assertIsNone(k.autotune_configs)
        self.assertEqual(k.pass_configs, {})

    def test_private_cache(self):
        """A private cache folder (compile workers share one) is used even when
        $TILESCALE_DISABLE_CACHE turns the usual cache off; it needs a folder."""
        import tempfile
        import unittest.mock
        with tempfile.TemporaryDirectory() as d, \
                unittest.mock.patch.dict(os.environ, {"TILESCALE_DISABLE_CACHE": "1"}):
            def compile_once(**opts):
                return ts.Context(cache_dir=d, **opts).load(SOFTMAX).compile(
                    "softmax", arch="sm_90a", M=128, N=512)
            self.assertFalse(compile_once(private_cache=True).from_cache)
            self.assertTrue(compile_once(private_cache=True).from_cache)
            self.assertFalse(compile_once().from_cache)  # the environment still rules the rest
            self.assertEqual(len(os.listdir(d)), 1)
        with self.assertRaises(ValueError):
            ts.Context(private_cache=True)

    def test_args(self):
        self.assertEqual(self.k.args, [
            ts.ArgInfo("X", "tensor", "float16", (256, 1024), False),
            ts.ArgInfo("Y", "tensor", "float16", (256, 1024), True)])
        k = self.ctx.load(os.path.join(ROOT, "tests/front/dynamic_dim.py")).compile(
            "rows_scale", arch="sm_90a", no_jit=True, N=256)
        self.assertEqual(k.args[0].shape, (None, 256))

    def test_params(self):
        k = self.prog.compile("softmax", arch="sm_90a", no_jit=True, M=128, N=64,
                              dtype=ts.float32, block_M=2, threads=64)
        self.assertEqual(k.args[0].dtype, "float32")
        self.assertIsNone(k.ptx)
        self.assertEqual(ts.param_text((1, 2.5, True, "x", ts.bfloat16, [None])),
                         '(1, 2.5, True, "x", bfloat16, [None])')
        self.assertEqual(ts.param_text((64,)), "(64,)")
        self.assertEqual(ts.param_text('a"b'), '"a\\"b"')
        self.assertRaises(TypeError, ts.param_text, object())

    def test_packed4_params(self):
        """4-bit tensors: the library reports their logical shape and dtype; torch holds their
        bytes (outputs allocated with the last dimension halved; fp4 as float4_e2m1fn_x2 when
        torch has it, else uint8)."""
        k = self.ctx.load(os.path.join(ROOT, "tests/codegen/packed4.py")).compile(
            "fp4_convert", arch="sm_90a", no_jit=True)
        self.assertEqual(k.args[1], ts.ArgInfo("Y", "tensor", "float4_e2m1fn", (32, 64), False))
        fake = types.SimpleNamespace(int8="i8", uint8="u8")
        self.assertEqual(ts.packed_output(fake, (32, 64), "float4_e2m1fn"), ((32, 32), "u8"))
        self.assertEqual(ts.packed_output(fake, (3, 8), "int4"), ((3, 4), "i8"))
        fake.float4_e2m1fn_x2 = "f4x2"
        self.assertEqual(ts.packed_output(fake, (2, 2), "float4_e2m1fn"), ((2, 1), "f4x2"))
        self.assertRaises(TypeError, ts.packed_output, fake, (3, 5), "uint4")

    def test_compile_error_has_diagnostics(self):
        prog = self.ctx.load_source("bad_kernel.py", BAD)
        with self.assertRaises(ts.TileScaleError) as cm:
            prog.compile("rowwise", arch="sm_90a", M=256, N=128)
        e = cm.exception
        self.assertEqual(e.status, "TS_ERR_COMPILE")
        self.assertIn("bad_kernel.py:7:13: error: 'int' object is not callable", e.message)
        self.assertIn("^", e.message)
        with self.assertRaises(ts.TileScaleError) as cm:
            self.ctx.load_source("syntax.py", "def f(:\n    pass\n")
        self.assertIn("syntax.py:1:", cm.exception.message)

    def test_bad_define(self):
        with self.assertRaises(ts.TileScaleError) as cm:
            self.prog.compile("softmax", arch="sm_90a", M=256, N=1024, Q=3)
        self.assertEqual(cm.exception.status, "TS_ERR_COMPILE")
        self.assertIn("unknown parameter 'Q'", cm.exception.message)
        with self.assertRaises(ts.TileScaleError) as cm:  # a -D that is not a Python literal
            self.prog.compile("softmax", arch="sm_90a", M=ts.DType("(1,"), N=4)
        self.assertIn("-D M:1:1: error:", cm.exception.message)
        with self.assertRaises(ts.TileScaleError) as cm:
            self.prog.compile("softmax", arch="sm_90a", M=256)
        self.assertIn("missing value for parameter 'N'", cm.exception.message)

    def test_other_errors(self):
        with self.assertRaises(ts.TileScaleError) as cm:
            self.prog.compile("nope", arch="sm_90a")
        self.assertEqual(cm.exception.status, "TS_ERR_NOT_FOUND")
        with self.assertRaises(ts.TileScaleError) as cm:
            self.ctx.load(os.path.join(ROOT, "no_such_file.py"))
        self.assertEqual(cm.exception.status, "TS_ERR_IO")
        with self.assertRaises(ts.TileScaleError) as cm:
            self.prog.compile("softmax", arch="sm_12", M=256, N=1024)
        self.assertEqual(cm.exception.status, "TS_ERR_INVALID_ARGUMENT")

    def test_autotune_and_pass_configs(self):
        k = self.ctx.load(os.path.join(ROOT, "tests/front/autotune_configs.py")).compile(
            "tuned", arch="sm_90a", no_jit=True, N=4096, block=256, threads=128)
        cfgs = k.autotune_configs
        self.assertEqual(len(cfgs), 6)
        self.assertEqual(cfgs[0], {"block": 128, "threads": 128})
        self.assertIn({"block": 256, "threads": 128}, cfgs)
        k = self.ctx.load(os.path.join(ROOT, "tests/front/lazy_pass_configs.py")).compile(
            "scaled", arch="sm_90a", no_jit=True, N=2048)
        self.assertEqual(k.pass_configs.get("tl.enable_fast_math"), "True")

    def _no_gpu(self):
        if self.ctx.device_sm:
            self.skipTest("a GPU is present: the no-driver path cannot be checked")

    def test_launch_without_gpu(self):
        self._no_gpu()
        x = ts.Tensor(0x10000, "float16", (256, 1024))
        y = ts.Tensor(0x20000, ts.float16, (256, 1024), strides=(1024, 1))
        with self.assertRaises(ts.TileScaleError) as cm:
            self.k(x, y)
        self.assertEqual(cm.exception.status, "TS_ERR_NO_DRIVER")
        self.assertEqual(cm.exception.code, 6)

    def test_launch_argument_checks(self):
        y = ts.Tensor(0x20000, "float16", (256, 1024))
        with self.assertRaises(ts.TileScaleError) as cm:  # checked before any driver call
            self.k(ts.Tensor(0x10000, "float32", (256, 1024)), y)
        self.assertEqual(cm.exception.status, "TS_ERR_LAUNCH_ARGUMENT")
        self.assertIn("'X'", cm.exception.message)
        self.assertRaises(TypeError, self.k, y, y, y)
        self.assertRaises(TypeError, self.k, 123, y)

    def test_none_for_an_untouched_tensor(self):
        """None for a tensor parameter the kernel never touches passes the argument checks (the
        launch then needs a driver); for one it reads, the error names it."""
        prog = self.ctx.load(os.path.join(ROOT, "tests/front/optional_bias.py"))
        a, b = (ts.Tensor(p, "float16", (256, 128)) for p in (0x10000, 0x20000))
        c = ts.Tensor(0x30000, "float32", (256, 256))
        for with_bias in (False, True):
            k = prog.compile("gemm_bias", arch="sm_90a", with_bias=with_bias)
            with self.assertRaises(ts.TileScaleError) as cm:
                k(a, b, c, None)
            if with_bias:
                self.assertEqual(cm.exception.status, "TS_ERR_LAUNCH_ARGUMENT")
                self.assertIn("'Bias'): no tensor was given (None)", cm.exception.message)
            elif not self.ctx.device_sm:
                self.assertEqual(cm.exception.status, "TS_ERR_NO_DRIVER")

    def test_scalar_params(self):
        k = self.ctx.load(os.path.join(ROOT, "tests/front/scalar_params.py")).compile(
            "saxpy", arch="sm_90a", N=1024)
        self.assertEqual([(a.name, a.kind, a.dtype, a.shape) for a in k.args[:2]],
                         [("alpha", "scalar", "float32", ()), ("n_valid", "scalar", "int32", ())])
        x, y = (ts.Tensor(p, "float32", (1024,)) for p in (0x10000, 0x20000))
        self.assertRaises(TypeError, k, x, y, 2.0)
        if not self.ctx.device_sm:
            with self.assertRaises(ts.TileScaleError) as cm:
                k(2.0, 1000, x, y)
            self.assertEqual(cm.exception.status, "TS_ERR_NO_DRIVER")

    def test_torch_outputs_allocated(self):
        """The torch path with a stand-in module (no torch or GPU needed): outputs are
        allocated with the kernel's shape and dtype on the inputs' device."""
        self._no_gpu()
        fake = types.ModuleType("torch")
        made = []
        DTypeT = type("dtype", (), {"__module__": "torch",
                                    "__init__": lambda s, n: setattr(s, "n", n),
                                    "__str__": lambda s: "torch." + s.n})
        Dev = type("device", (), {"__module__": "torch",
                                  "__init__": lambda s, t, i: setattr(s, "index", i)})

        class Tensor:  # noqa: D401 (stand-in for torch.Tensor)
            def __init__(self, shape, dtype, device):
                self.shape, self.dtype, self.device, self.is_cuda = shape, dtype, device, True

            def data_ptr(self):
                return 0x40000

            def stride(self):
                return (self.shape[1], 1)
        Tensor.__module__ = "torch"
        fake.float16 = DTypeT("float16")
        fake.device = Dev
        fake.empty = lambda shape, dtype, device: made.append(Tensor(shape, dtype, device)) or made[-1]
        fake.cuda = types.SimpleNamespace(current_stream=lambda d: types.SimpleNamespace(cuda_stream=0))
        saved = sys.modules.get("torch")
        sys.modules["torch"] = fake
        try:
            with self.assertRaises(ts.TileScaleError) as cm:
                self.k(Tensor((256, 1024), fake.float16, Dev("cuda", 0)))
            self.assertEqual(cm.exception.status, "TS_ERR_NO_DRIVER")
        finally:
            if saved is None:
                del sys.modules["torch"]
            else:
                sys.modules["torch"] = saved
        self.assertEqual(len(made), 1)
        self.assertEqual((made[0].shape, str(made[0].dtype), made[0].device.index),
                         ((256, 1024), "torch.float16", 0))


class DynamicOutputTest(unittest.TestCase):
    def test_output_shape_from_the_inputs(self):
        """An output of dynamic shape is allocated when its dims are variables the inputs give
        (a tensor dim of that name in the signature, or an int scalar): C[M, N] from A[M, K] and
        n; one no input gives (D[P]) is not (None: the call asks for every argument)."""
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            kf = os.path.join(d, "k.py")
            with open(kf, "w") as f:
                f.write("import tilelang.language as T\n\n"
                        "@T.prim_func\n"
                        "def k(A: T.Tensor((T.dynamic('M'), 64), 'float32'), N: T.int32,\n"
                        "      C: T.Tensor((T.dynamic('M'), T.dynamic('N')), 'float32'),\n"
                        "      D: T.Tensor((T.dynamic('P'),), 'float32')):\n"
                        "    with T.Kernel(1, threads=64) as bx:\n"
                        "        C[0, 0] = A[0, 0] + D[0]\n")
            k = ts.Context().load(kf).compile("k", "sm_90a", no_jit=True)
        infos = [a._replace(is_output=a.name in ("C", "D")) for a in k.args]  # as out_idx marks them
        a_in = types.SimpleNamespace(shape=(300, 64))
        c, dd = [a for a in infos if a.name in ("C", "D")]
        self.assertEqual(ts.dynamic_output_shape(k, c, infos, [a_in, 7]), (300, 7))
        self.assertIsNone(ts.dynamic_output_shape(k, dd, infos, [a_in, 7]))

    def test_output_shape_by_arithmetic(self):
        """An output whose dynamic dims are arithmetic over what the inputs give (`M * 2`,
        `(M + 127) // 128`, as the IR prints them) is allocated at that shape."""
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            kf = os.path.join(d, "k.py")
            with open(kf, "w") as f:
                f.write("import tilelang.language as T\n\nM = T.dynamic('M')\n\n"
                        "@T.prim_func\n"
                        "def k(A: T.Tensor((M, 64), 'float32'),\n"
                        "      C: T.Tensor((M * 2, (M + 127) // 128), 'float32')):\n"
                        "    with T.Kernel(1, threads=64) as bx:\n"
                        "        C[0, 0] = A[0, 0]\n")
            k = ts.Context().load(kf).compile("k", "sm_90a", no_jit=True)
        infos = [a._replace(is_output=a.name == "C") for a in k.args]
        c = [a for a in infos if a.name == "C"][0]
        self.assertEqual(ts.dynamic_output_shape(k, c, infos, [types.SimpleNamespace(shape=(300, 64))]),
                         (600, 3))


class ModulePathTest(unittest.TestCase):
    def test_user_module_path_keeps_user_folders_only(self):
        """The folders passed as the compile's module path: a folder put on sys.path is there,
        the standard library and site-packages are not (host code only)."""
        import sysconfig
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            sys.path.insert(0, d)
            try:
                dirs = ts.user_module_path().split(os.pathsep)
            finally:
                sys.path.remove(d)
            self.assertIn(os.path.realpath(d), dirs)
            self.assertNotIn(os.path.realpath(sysconfig.get_paths()["stdlib"]), dirs)
            self.assertFalse([x for x in dirs if "site-packages" in x])

    def test_module_path_reaches_the_compiler(self):
        """A kernel file importing a helper from a folder only sys.path names compiles."""
        import tempfile
        with tempfile.TemporaryDirectory() as lib, tempfile.TemporaryDirectory() as kd:
            with open(os.path.join(lib, "mp_helper_mod.py"), "w") as f:
                f.write("def plus_one(x):\n    return x + 1\n")
            kf = os.path.join(kd, "k.py")
            with open(kf, "w") as f:
                f.write("import tilelang.language as T\nfrom mp_helper_mod import plus_one\n\n"
                        "@T.prim_func\ndef k(A: T.Tensor((64,), 'float32')):\n"
                        "    with T.Kernel(1, threads=64) as bx:\n        for i in T.Parallel(64):\n"
                        "            A[i] = plus_one(A[i])\n")
            prog = ts.Context().load(kf)
            with self.assertRaises(ts.TileScaleError):
                prog.compile("k", "sm_90a", no_jit=True, module_path=[])
            sys.path.insert(0, lib)
            try:
                src = prog.compile("k", "sm_90a", no_jit=True).source
            finally:
                sys.path.remove(lib)
            self.assertIn("+ 1.0", src)

    def test_module_path_object_globals_are_stubs(self):
        """A module on sys.path whose top level builds a value only Python has (DeepEP's
        `ep_ext = load_inline(...)`): importing it still works, its plain globals are values,
        the object is a stub (an error naming it only where a kernel uses it), and the
        host is not asked to build it again."""
        import tempfile
        with tempfile.TemporaryDirectory() as lib, tempfile.TemporaryDirectory() as kd:
            with open(os.path.join(lib, "mp_ext_mod.py"), "w") as f:
                f.write("import json\nN = 64\next = json.JSONDecoder()\n")
            kf = os.path.join(kd, "k.py")
            body = ("import tilelang.language as T\nfrom mp_ext_mod import N, ext\n\n"
                    "@T.prim_func\ndef k(A: T.Tensor((N,), 'float32')):\n"
                    "    with T.Kernel(1, threads=N) as bx:\n        for i in T.Parallel(N):\n"
                    "            A[i] = A[i] + %s\n")
            sys.path.insert(0, lib)
            try:
                with open(kf, "w") as f:
                    f.write(body % "1.0")
                src = ts.Context().load(kf).compile("k", "sm_90a", no_jit=True).source
                self.assertIn("64", src)
                with open(kf, "w") as f:
                    f.write(body % "ext")
                with self.assertRaises(ts.TileScaleError) as cm:
                    ts.Context().load(kf).compile("k", "sm_90a", no_jit=True)
                self.assertIn("ext", str(cm.exception))
            finally:
                sys.path.remove(lib)


if __name__ == "__main__":
    unittest.main(verbosity=1)
