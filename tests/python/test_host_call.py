"""Host calls through CPython (python/tilelang/_host_call.py over ts_context_set_host_call):
a @tilelang.jit factory whose host code calls a function of a module the C front end cannot
evaluate (on sys.path but not beside the kernel file, using Python the interpreter lacks:
dataclasses, classes, lru_cache, generators; or beside it, where the interpreter fails on it
first) compiles with the value that function returns;
dtypes cross both ways; a submodule is found through importlib; a raising helper is a
diagnostic with the kernel file's line and the Python error; a call inside a kernel body is
never sent to CPython; non-plain results are refused; compiles in parallel threads each call
their own context's host.  No GPU and no torch needed (NVRTC compiles for sm_90a).
Run: python3 tests/python/test_host_call.py  (uses $TILESCALE_LIB, else build/libtilescale.so)."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import tilescale as ts  # noqa: E402
import tilelang  # noqa: E402
from tilelang import _compiler, _host_call  # noqa: E402

if "TILESCALE_CACHE_DIR" not in os.environ:
    tilelang.disable_cache()

# On sys.path, not beside the kernel file: the C front end only sees a stub of it.
HELPERS = '''
import functools
from dataclasses import dataclass

import tilelang.language as T

CALLS = []


@dataclass(frozen=True)
class Choice:
    block: int
    stages: int = 2


@functools.lru_cache(maxsize=None)
def pick_block(m, dtype="float16"):
    CALLS.append(("pick_block", m, dtype))
    assert isinstance(dtype, str) and dtype == "float16", repr(dtype)
    c = Choice(block=max(b for b in (32, 64, 128, 256) if b <= m))
    return c.block


def scale_of(shape):
    CALLS.append(("scale_of", shape))
    return sum(x for x in shape) / 1000.0


def out_dtype(dtype):
    return T.float32 if dtype == "float16" else dtype


def bad(n):
    raise ValueError("block %d is not a power of two" % n)


def choice(n):
    return Choice(n)


def nested(m):
    import hc_kernels  # a helper that compiles a kernel itself, while the compiler waits for it
    return len(hc_kernels.scaled(m).params) * 32
'''

# A package whose __init__ does not import its submodule.
PKG_INIT = "NAME = 'hc_pkg'\n"
PKG_TILES = '''
def tiles(m, n):
    return [(i, j) for i in range(0, m, n) for j in (0,)][-1][0] // n + 1
'''

# Beside the kernel file: the interpreter evaluates it first, fails on the dataclass, and the
# call is made again in CPython.
SIBLING = '''
from dataclasses import dataclass


@dataclass
class Plan:
    block: int


def plan_block(m):
    return Plan(block=min(256, m // 4)).block


def broken(m):
    return Plan(m).nope
'''

KERNELS = '''
import tilelang
import tilelang.language as T
from hc_sibling import plan_block, broken
from hc_helpers import pick_block, out_dtype, bad, choice, nested
from hc_pkg import tiles as tiles_mod
import hc_helpers


@tilelang.jit(out_idx=[1])
def scaled(M, dtype="float16"):
    block = pick_block(M, dtype=dtype)
    factor = hc_helpers.scale_of((M, block))
    odt = out_dtype(dtype)
    ntiles = tiles_mod.tiles(M, block)

    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), odt)):
        with T.Kernel(ntiles, threads=block) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = T.Cast(odt, A[bx * block + i]) * factor
    return main


@tilelang.jit(out_idx=[1])
def raising(M, dtype="float16"):
    block = bad(M)

    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=128) as bx:
            B[bx] = A[bx]
    return main


@tilelang.jit(out_idx=[1])
def in_kernel(M, dtype="float16"):

    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=128) as bx:
            B[bx] = A[bx] * hc_helpers.scale_of((M, 1))
    return main


@tilelang.jit(out_idx=[1])
def compiles_inside(M, dtype="float16"):
    threads = nested(M)

    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=threads) as bx:
            B[bx] = A[bx]
    return main


@tilelang.jit(out_idx=[1])
def sibling_plan(M, dtype="float16"):
    block = plan_block(M)

    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block), threads=block) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i]
    return main


@tilelang.jit(out_idx=[1])
def sibling_broken(M, dtype="float16"):
    block = broken(M)

    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=128) as bx:
            B[bx] = A[bx]
    return main


@tilelang.jit(out_idx=[1])
def not_plain(M, dtype="float16"):
    block = choice(M)

    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=128) as bx:
            B[bx] = A[bx]
    return main
'''


def line_of(text, needle):
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


class HostCallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        lib = os.path.join(cls.tmp.name, "lib")
        kdir = os.path.join(cls.tmp.name, "kernels")
        os.makedirs(os.path.join(lib, "hc_pkg"))
        os.makedirs(kdir)
        for rel, text in (("hc_helpers.py", HELPERS), ("hc_pkg/__init__.py", PKG_INIT),
                          ("hc_pkg/tiles.py", PKG_TILES)):
            with open(os.path.join(lib, rel), "w") as f:
                f.write(textwrap.dedent(text))
        cls.path = os.path.join(kdir, "hc_kernels.py")
        for path, text in ((cls.path, KERNELS), (os.path.join(kdir, "hc_sibling.py"), SIBLING)):
            with open(path, "w") as f:
                f.write(text)
        sys.path[:0] = [lib, kdir]  # kdir: as for `python3 kernels/hc_kernels.py`
        cls.lib, cls.kdir = lib, kdir
        spec = importlib.util.spec_from_file_location("hc_kernels", cls.path)
        cls.mod = sys.modules["hc_kernels"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cls.mod)
        import hc_helpers
        cls.helpers = hc_helpers

    @classmethod
    def tearDownClass(cls):
        sys.path.remove(cls.lib)
        sys.path.remove(cls.kdir)
        sys.modules.pop("hc_kernels", None)
        cls.tmp.cleanup()

    def test_value_reaches_kernel(self):
        k = self.mod.scaled(1024)
        src = k.get_kernel_source()
        self.assertIn("__launch_bounds__(256)", src)        # pick_block's answer
        self.assertIn("1.28f", src)                          # scale_of((1024, 256))
        self.assertIn("float* __restrict__ B", src)          # out_dtype's T.float32
        self.assertEqual([a.dtype for a in k.params], ["float16", "float32"])
        self.assertIn(("pick_block", 1024, "float16"), self.helpers.CALLS)

    def test_raising_helper(self):
        with self.assertRaises(ts.TileScaleError) as cm:
            self.mod.raising(100)
        msg = cm.exception.message
        line = line_of(KERNELS, "block = bad(M)")
        self.assertIn("hc_kernels.py:%d:13: error: calling hc_helpers.bad in Python failed: "
                      "ValueError: block 100 is not a power of two (at " % line, msg)
        self.assertIn("hc_helpers.py:%d)" % line_of(textwrap.dedent(HELPERS), "raise ValueError"),
                      msg)

    def test_kernel_body_is_not_sent(self):
        """A kernel body's call of a helper the module path (sys.path) finds is interpreted
        while the kernel is built, as TileLang runs it then: never sent to Python (CALLS does
        not grow), its value in the kernel ((64 + 1) / 1000)."""
        before = len(self.helpers.CALLS)
        src = self.mod.in_kernel(64).get_kernel_source()
        self.assertIn("0.065", src)
        self.assertEqual(len(self.helpers.CALLS), before)

    def test_sibling_the_interpreter_cannot_run(self):
        k = self.mod.sibling_plan(512)
        self.assertIn("__launch_bounds__(128)", k.get_kernel_source())
        with self.assertRaises(ts.TileScaleError) as cm:
            self.mod.sibling_broken(512)
        msg = cm.exception.message
        self.assertIn("hc_sibling.py:%d:12: error: class 'Plan' (with a class decorator) cannot be used while building a kernel"
                      % line_of(SIBLING, "Plan(m).nope"), msg)
        self.assertIn("hc_kernels.py:%d:13: note: hc_sibling.broken could not be run in Python "
                      "either: AttributeError: 'Plan' object has no attribute 'nope'"
                      % line_of(KERNELS, "block = broken(M)"), msg)

    def test_not_plain_result(self):
        with self.assertRaises(ts.TileScaleError) as cm:
            self.mod.not_plain(64)
        self.assertIn("calling hc_helpers.choice in Python failed: the result is a hc_helpers.Choice, "
                      "not a plain value", cm.exception.message)

    def test_helper_compiling_a_kernel(self):
        # the helper's own compile cannot use the context that waits for it: it gets another
        k = self.mod.compiles_inside(96)
        self.assertIn("__launch_bounds__(64)", k.get_kernel_source())

    def test_parallel_compile(self):
        ms = [300, 520, 700, 1100]
        out = _compiler.parallel_compile(lambda m: self.mod.scaled(m), ms, workers=4)
        for m, (k, err) in zip(ms, out):
            self.assertIsNone(err)
            block = max(b for b in (32, 64, 128, 256) if b <= m)
            self.assertIn("__launch_bounds__(%d)" % block, k.get_kernel_source())

    def test_cli_keeps_the_diagnostic(self):
        cli = os.path.join(os.path.dirname(os.path.abspath(ts._lib.lib.path)), "tilescale")
        if not os.path.exists(cli):
            self.skipTest("no CLI beside the library")
        env = dict(os.environ, PYTHONPATH=self.lib)
        r = subprocess.run([cli, "compile", self.path, "-k", "scaled", "-D", "M=1024", "--emit", "ir"],
                           capture_output=True, text=True, env=env)
        # PYTHONPATH finds the helper module; with no Python to run it, the CLI interprets it
        # and says what in it cannot be run there
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("hc_helpers.py:%d:59: error: name 'repr' is not defined"
                      % line_of(textwrap.dedent(HELPERS), "repr(dtype)"), r.stderr)
        r = subprocess.run([cli, "compile", self.path, "-k", "scaled", "-D", "M=1024", "--emit", "ir"],
                           capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=""))
        self.assertNotEqual(r.returncode, 0)  # not found at all: the stub's diagnostic
        self.assertIn("hc_kernels.py:%d:13: error: 'pick_block' (from module 'hc_helpers') is not "
                      "available in kernels" % line_of(KERNELS, "block = pick_block("), r.stderr)


class BindingTest(unittest.TestCase):
    """tilescale.Context.set_host_call alone (no tilelang): answers, exceptions, removal."""
    SRC = textwrap.dedent('''
        import tilelang.language as T
        from somewhere_else import pick


        def f(M):
            b = pick(M, "x")

            @T.prim_func
            def main(A: T.Tensor((M,), "float32")):
                with T.Kernel(1, threads=b) as bx:
                    A[bx] = 1.0
            return main
        ''')

    def compile(self, ctx):
        prog = ctx.load_source("k.py", self.SRC)
        return prog.compile("f", "sm_90a", M=64, no_jit=True)

    def test_set_host_call(self):
        ctx = ts.Context(disable_cache=True)
        seen = []
        ctx.set_host_call(lambda m, q, a: seen.append((m, q, a)) or "96")
        self.assertIn("__launch_bounds__(96)", self.compile(ctx).source)
        self.assertEqual(seen, [("somewhere_else", "pick", "((64, 'x'), {})")])

        def boom(m, q, a):
            raise KeyError("no such block")
        ctx.set_host_call(boom)
        with self.assertRaises(ts.TileScaleError) as cm:
            self.compile(ctx)
        self.assertIn("k.py:7:9: error: calling somewhere_else.pick in Python failed: "
                      "KeyError: 'no such block' (at ", cm.exception.message)
        ctx.set_host_call(lambda m, q, a: 7)
        with self.assertRaises(ts.TileScaleError) as cm:
            self.compile(ctx)
        self.assertIn("answered int, not text", cm.exception.message)
        ctx.set_host_call(None)
        with self.assertRaises(ts.TileScaleError) as cm:
            self.compile(ctx)
        self.assertIn("k.py:7:9: error: 'pick' (from module 'somewhere_else') is not available "
                      "in kernels\n", cm.exception.message)


class LiteralTest(unittest.TestCase):
    """The text both sides exchange (the C side's own reader and writer: tests/unit)."""

    def test_decode(self):
        args, kw = _host_call.decode_args(
            "((1, -2.5, 'a\\'b\\n', None, True, [1, (2,)], T.bfloat16, 1e999, -1e999, "
            "float('nan'), -9223372036854775808), {'dtype': T.float8_e4m3})")
        self.assertEqual(args[:6], (1, -2.5, "a'b\n", None, True, [1, (2,)]))
        self.assertEqual((args[6], type(args[6]).__name__), ("bfloat16", "dtype"))
        self.assertEqual(args[7:9], (float("inf"), float("-inf")))
        self.assertNotEqual(args[9], args[9])
        self.assertEqual(args[10], -(1 << 63))
        self.assertEqual(kw, {"dtype": "float8_e4m3"})
        self.assertRaises(ValueError, _host_call.decode_args, "((__import__('os'),), {})")

    def test_encode(self):
        enc = _host_call.encode
        self.assertEqual(enc((1, [2.5, "x'y"], None, False)), "(1, [2.5, \"x'y\"], None, False)")
        self.assertEqual(enc((7,)), "(7,)")
        self.assertEqual(enc(tilelang.language.float16), "T.float16")
        self.assertEqual((enc(float("inf")), enc(float("nan"))), ("1e999", "float('nan')"))

        class Index:
            def __index__(self):
                return 5
        self.assertEqual(enc(Index()), "5")
        scalar = type("float32", (), {"__module__": "numpy", "ndim": 0, "item": lambda s: 0.5})
        self.assertEqual(enc(scalar()), "0.5")
        with self.assertRaises(ts.HostCallError) as cm:
            enc(1 << 70)
        self.assertIn("does not fit in 64 bits", str(cm.exception))
        with self.assertRaises(ts.HostCallError):
            enc({"a": 1})


if __name__ == "__main__":
    unittest.main(verbosity=1)
