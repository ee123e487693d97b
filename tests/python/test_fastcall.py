"""Tests of the C call path (python/tilescale/_fastcall.c) that need no GPU or torch.

The extension is handed stand-ins for torch (a tensor type with dtype, shape, stride(),
data_ptr(), is_cuda, get_device(); empty(); a current-stream function) through set_torch, as
tilescale hands it the real torch.  Two launch functions are used: the library's real
ts_kernel_launch, which checks every argument before it needs the driver (so on this machine a
correct call ends in TS_ERR_NO_DRIVER and a wrong one in TS_ERR_LAUNCH_ARGUMENT naming the
parameter), and a recording stand-in returning TS_OK, which shows exactly what C passed down
(pointers, shapes, strides, dtypes, devices, stream) and what a call returns.
Also: the pure-Python path when the extension is turned off (TILESCALE_FASTCALL=0).
Run: python3 tests/python/test_fastcall.py  (uses $TILESCALE_LIB, else build/libtilescale.so)."""
import ctypes
import importlib.util
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = os.path.join(ROOT, "python")
sys.path.insert(0, PY)
sys.dont_write_bytecode = True

import tilescale as ts  # noqa: E402
from tilescale import _lib  # noqa: E402

import tilelang  # noqa: E402,F401

FAST = _lib.fastcall


def load(path):
    spec = importlib.util.spec_from_file_location("fc_" + os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---- torch stand-ins ---------------------------------------------------------------------------
class DType:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__


class Device:
    def __init__(self, kind, index=None):
        self.type, self.index = kind, index


class Tensor:
    """What the C path reads of a torch.Tensor (and the Python path: .device, .is_cuda)."""
    __module__ = "torch"

    def __init__(self, shape, dtype, ptr=0x10000, strides=None, device=0):
        self.shape, self.dtype, self.ptr = tuple(shape), dtype, ptr
        self._strides = strides
        self.is_cuda = device >= 0
        self.device = Device("cuda" if device >= 0 else "cpu", device if device >= 0 else None)
        self._dev = device

    def stride(self):
        if self._strides is not None:
            return tuple(self._strides)
        out, acc = [], 1
        for s in reversed(self.shape):
            out.append(acc)
            acc *= s
        return tuple(reversed(out))

    def data_ptr(self):
        return self.ptr

    def get_device(self):
        return self._dev


class FakeTorch:
    """set_torch's arguments, recording what C asks of them."""

    def __init__(self):
        self.dtypes = {n: DType(n) for n in ("float16", "bfloat16", "float32", "int32", "bool",
                                             "complex64")}
        self.made, self.streams, self.devices, self.forms = [], [], [], []
        self.next_ptr = 0x100000

    def empty(self, *size, dtype, device):
        """torch.empty's two spellings: one shape sequence, or the extents as separate ints
        (the one C uses: torch parses it faster); `forms` records which each call used."""
        seq = len(size) == 1 and isinstance(size[0], (tuple, list))
        shape = tuple(size[0]) if seq else size
        assert all(isinstance(d, int) for d in shape), size
        self.forms.append("sequence" if seq else "ints")
        t = Tensor(shape, dtype, self.next_ptr, device=device.index)
        self.next_ptr += 0x100000
        self.made.append((tuple(shape), dtype.name, device.index))
        return t

    def stream(self, dev):
        self.streams.append(dev)
        return 0x5000 + dev

    def device(self, kind, index):
        self.devices.append((kind, index))
        return Device(kind, index)

    def install(self):
        ids = {self.dtypes[n]: _lib.DTYPE_IDS[n]
               for n in ("float16", "bfloat16", "float32", "int32", "bool")}
        FAST.set_torch(Tensor, ids, self.stream, self.empty, self.device)

    def __getattr__(self, name):
        return self.__dict__["dtypes"][name]


LaunchFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_lib.ts_arg), ctypes.c_int,
                            ctypes.c_void_p)


class Recorder:
    """A ts_kernel_launch stand-in: records each call's arguments, returns TS_OK."""

    def __init__(self):
        self.calls = []
        self.fn = LaunchFn(self._launch)

    def _launch(self, kernel, args, nargs, stream):
        call = []
        for i in range(nargs):
            a = args[i]
            if a.kind == _lib.TS_ARG_SCALAR:
                call.append(("scalar", a.i, a.f))
                continue
            t = a.tensor
            call.append(("tensor", t.data, _lib.DTYPE_NAMES[t.dtype], tuple(t.shape[d] for d in range(t.ndim)),
                         None if not t.strides else tuple(t.strides[d] for d in range(t.ndim)), t.device))
        self.calls.append((call, stream or 0))
        return 0


def init(launch=None):
    """Points the extension at `launch` (a Recorder) or the library's ts_kernel_launch."""
    addr = ctypes.cast(launch.fn if launch else _lib.lib.ts_kernel_launch, ctypes.c_void_p).value
    FAST.init(addr, ctypes.cast(_lib.lib.ts_last_error, ctypes.c_void_p).value, ctypes.sizeof(_lib.ts_arg),
              ts.TileScaleError, tuple(_lib.STATUS_NAMES))


@unittest.skipIf(FAST is None, "the C call path is not built (no Python headers?)")
class FastCallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctx = ts.Context(disable_cache="TILESCALE_CACHE_DIR" not in os.environ)
        cls.softmax = cls.ctx.load(os.path.join(ROOT, "examples", "softmax.py")).compile(
            "softmax", arch="sm_90a", M=256, N=1024)
        cls.saxpy = cls.ctx.load(os.path.join(ROOT, "tests", "front", "scalar_params.py")).compile(
            "saxpy", arch="sm_90a", N=1024)

    def setUp(self):
        self.torch = FakeTorch()
        self.torch.install()
        self.rec = None

    def tearDown(self):
        FAST.set_torch(None)
        init()

    def record(self):
        self.rec = Recorder()
        init(self.rec)
        return self.rec

    def no_gpu(self):
        if self.ctx.device_sm:
            self.skipTest("a GPU is present: the no-driver path cannot be checked")

    def x(self, shape=(256, 1024), dtype="float16", **kw):
        return Tensor(shape, self.torch.dtypes[dtype], **kw)

    def launch_error(self, k, *args):
        with self.assertRaises(ts.TileScaleError) as cm:
            k(*args)
        return cm.exception

    # -- arguments checked by the library, from C --------------------------------------------
    def test_correct_call_reaches_the_driver(self):
        self.no_gpu()
        self.assertTrue(self.softmax._fast)
        e = self.launch_error(self.softmax, self.x(), self.x(ptr=0x20000))
        self.assertEqual(e.status, "TS_ERR_NO_DRIVER")
        self.assertEqual(self.torch.streams, [0])  # torch's current stream: only C asks this way

    def test_argument_errors_name_the_parameter(self):
        k, y = self.softmax, self.x(ptr=0x20000)
        cases = [
            (self.x(dtype="float32"), "argument 0 ('X'): expected dtype float16, got float32"),
            (self.x((256, 512)), "argument 0 ('X'): dimension 1 is 512 but the kernel was compiled for 1024"),
            (self.x((256, 1024, 1)), "argument 0 ('X'): expected 2 dimensions, got 3"),
            (self.x(strides=(1, 256)), "argument 0 ('X'): strides (1, 256) are not compact row-major"),
            (self.x(ptr=0x10008), "argument 0 ('X'): data pointer 0x10008 is not 16-byte aligned"),
            (self.x(ptr=0), "argument 0 ('X'): data pointer is NULL"),
            (self.x(device=-1), "argument 0 ('X'): tensor is in host memory"),
            (self.x(device=1), "argument 0 ('X'): tensor is on device 1 but the context uses device 0"),
        ]
        for bad, want in cases:
            e = self.launch_error(k, bad, y)
            self.assertEqual(e.status, "TS_ERR_LAUNCH_ARGUMENT", want)
            self.assertIn(want, e.message)
        e = self.launch_error(k, y, self.x(dtype="bfloat16"))
        self.assertIn("argument 1 ('Y'): expected dtype float16, got bfloat16", e.message)

    def test_scalars(self):
        self.no_gpu()
        x, y = (self.x((1024,), "float32", ptr=p) for p in (0x10000, 0x20000))
        for alpha in (2.0, 2):
            self.assertEqual(self.launch_error(self.saxpy, alpha, 1000, x, y).status, "TS_ERR_NO_DRIVER")
        e = self.launch_error(self.saxpy, 2.0, 1 << 40, x, y)
        self.assertIn("argument 1 ('n_valid'): value 1099511627776 does not fit in int32", e.message)
        with self.assertRaises(OverflowError) as cm:   # beyond 64 bits: the Python path says so
            self.saxpy(2.0, 1 << 70, x, y)
        self.assertIn("'n_valid'", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            self.saxpy(None, 1000, x, y)
        self.assertIn("'alpha'", str(cm.exception))

    def test_python_path_errors(self):
        """What C hands to _call_py: wrong counts, non-tensors, unknown dtypes, stream=."""
        k, y = self.softmax, self.x(ptr=0x20000)
        with self.assertRaises(TypeError) as cm:
            k(y, y, y)
        self.assertIn("softmax takes 2 arguments (or its 1 inputs), got 3", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            k(123, y)
        self.assertIn("tensor parameter 'X'", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            k(self.x(dtype="complex64"), y)
        self.assertIn("tensor parameter 'X'", str(cm.exception))
        self.assertIn("complex64", str(cm.exception))
        if not self.ctx.device_sm:                   # stream=: the Python path launches
            self.assertEqual(self.launch_error(lambda: k(self.x(), y, stream=0x777)).status,
                             "TS_ERR_NO_DRIVER")
            self.assertEqual(self.torch.streams, [])

    # -- what C passes down and returns ---------------------------------------------------------
    def test_outputs_passed(self):
        rec = self.record()
        self.assertIsNone(self.softmax(self.x(), self.x(ptr=0x20000)))
        (args, stream), = rec.calls
        self.assertEqual(stream, 0x5000)
        self.assertEqual(args, [("tensor", 0x10000, "float16", (256, 1024), (1024, 1), 0),
                                ("tensor", 0x20000, "float16", (256, 1024), (1024, 1), 0)])
        self.assertEqual(self.torch.made, [])

    def test_outputs_allocated(self):
        rec = self.record()
        y = self.softmax(self.x())
        self.assertIsInstance(y, Tensor)
        self.assertEqual(self.torch.made, [((256, 1024), "float16", 0)])
        self.assertEqual(self.torch.forms, ["ints"])  # torch.empty(256, 1024, ...), not ((256, 1024))
        (args, _), = rec.calls
        self.assertEqual(args[1], ("tensor", y.ptr, "float16", (256, 1024), None, 0))
        self.assertEqual(self.torch.devices, [("cuda", 0)])
        self.softmax(self.x())                       # the device object is made once
        self.assertEqual(self.torch.devices, [("cuda", 0)])

    def test_jit_kernel(self):
        gemm = load(os.path.join(ROOT, "examples", "gemm.py"))
        k = gemm.matmul(256, 256, 256)
        self.assertIsInstance(k, tilelang.JITKernel)
        self.assertTrue(k._fast)
        rec = self.record()
        a, b = self.x((256, 256)), self.x((256, 256), ptr=0x20000)
        c = k(a, b)
        self.assertEqual(self.torch.made, [((256, 256), "float16", 0)])
        self.assertEqual(rec.calls[-1][0][2][1], c.ptr)
        self.assertIsNone(k(a, b, c))
        self.assertEqual(len(rec.calls), 2)

    def test_two_outputs_are_a_list(self):
        two = load(os.path.join(ROOT, "tests", "front", "eager_two_outputs.py")).minmax
        k = two.compile(M=64, N=32)
        self.record()
        out = k(self.x((64, 32), "float32"))
        self.assertIsInstance(out, list)
        self.assertEqual(self.torch.made, [((64,), "float32", 0), ((64,), "float32", 0)])

    def test_dynamic_output_extents(self):
        """row_quant's outputs (M, 1024) and (M, 8) take M from the input's rows, in C."""
        gaps = load(os.path.join(ROOT, "tests", "python", "tilelang_gaps.py"))
        k = gaps.row_quant.compile(N=1024, group=128)
        self.assertEqual(k._c_out_dims(), {1: ((0, 0), 1024), 2: ((0, 0), 8)})
        self.record()
        calls = []
        k._call_py = lambda *a, **kw: calls.append(a)      # C must not need it
        k(self.x((300, 1024), "float32"))
        self.assertEqual(calls, [])
        self.assertEqual([m[:2] for m in self.torch.made], [((300, 1024), "float16"), ((300, 8), "float32")])
        self.assertEqual(self.torch.forms, ["ints", "ints"])

    def test_eager_calls_remembered(self):
        gemm_eager = load(os.path.join(ROOT, "examples", "gemm_eager.py"))
        mm = gemm_eager.matmul
        rec = self.record()
        slow = []
        real = mm._call_py
        mm._call_py = lambda *a, **kw: slow.append(1) or real(*a, **kw)
        a, b = self.x((128, 64)), self.x((64, 192), ptr=0x20000)
        c1 = mm(a, b, 64, 64, 32)                          # compiles, then remembered
        self.assertEqual((len(slow), mm._fast_entries), (1, 1))
        c2 = mm(self.x((128, 64), ptr=0x30000), b, 64, 64, 32)   # same shapes: C alone
        self.assertEqual(len(slow), 1)
        self.assertEqual(rec.calls[-1][0][0][1], 0x30000)
        self.assertEqual((c1.shape, c2.shape), ((128, 192), (128, 192)))
        self.assertNotEqual(c1.ptr, c2.ptr)
        mm(a, b, 64, 64, 64)                               # another value: the Python path
        mm(self.x((256, 64)), b, 64, 64, 32)               # another shape
        mm(a, b, block_M=64, block_N=64, block_K=32)       # keywords
        self.assertEqual(len(slow), 4)
        self.assertEqual(mm._fast_entries, 3)
        mm(self.x((128, 64), dtype="bfloat16"), self.x((64, 192), dtype="bfloat16"), 64, 64, 32)
        self.assertEqual(len(slow), 5)
        mm._fast_forget()
        self.assertEqual(mm._fast_entries, 0)


class PythonPathTest(unittest.TestCase):
    def test_without_the_extension(self):
        """TILESCALE_FASTCALL=0: the classes are the Python ones and calls still work."""
        code = (
            "import sys; sys.path.insert(0, %r)\n"
            "import tilelang, tilescale as ts\n"
            "from tilescale import _lib, _callpath\n"
            "assert _lib.fastcall is None and _callpath.fast is None\n"
            "assert tilelang.JITKernel.__mro__[1].__name__ == 'PyLauncher', tilelang.JITKernel.__mro__\n"
            "ctx = ts.Context(disable_cache=True)\n"
            "k = ctx.load(%r).compile('softmax', arch='sm_90a', M=256, N=1024, no_jit=True)\n"
            "x = ts.Tensor(0x10000, 'float32', (256, 1024))\n"
            "try:\n"
            "    k(x, x)\n"
            "except ts.TileScaleError as e:\n"
            "    assert \"argument 0 ('X'): expected dtype float16\" in e.message, e.message\n"
            "print('ok')\n" % (PY, os.path.join(ROOT, "examples", "softmax.py")))
        env = dict(os.environ, TILESCALE_FASTCALL="0")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "ok")


if __name__ == "__main__":
    unittest.main(verbosity=1)
