"""Tests of host-side layouts and tilelang.tools.plot_layout (no GPU, no torch): T.Layout and
T.Fragment called by host code build tables from the user's index functions; tilelang.layout's
bank-swizzle helpers follow the 16-byte-chunk XOR rule; plot_layout writes SVG itself and png/pdf
through matplotlib, or SVG with a warning without it; TileLang's own plot_layout example scripts
(../shared/corpus) run unchanged; and T.Layout inside a kernel is still the compiler's.
Run: python3 tests/python/test_plot_layout.py  (uses $TILESCALE_LIB, else build/libtilescale.so)."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = os.path.join(ROOT, "python")
sys.path.insert(0, PY)
sys.dont_write_bytecode = True

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from tilelang.layout import (make_full_bank_swizzled_layout, make_half_bank_swizzled_layout,  # noqa: E402
                             make_quarter_bank_swizzled_layout)
from tilelang.tools import plot_layout  # noqa: E402

CORPUS = os.path.join(os.environ.get("TILESCALE_CORPUS") or os.path.join(os.path.dirname(ROOT), "shared", "corpus"),
                      "tilelang", "examples", "plot_layout")
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def read(path):
    with open(path) as f:
        return f.read()


class HostLayouts(unittest.TestCase):
    def test_layout_table(self):
        t = T.Layout([2, 3], lambda i, j: (j, i))
        self.assertEqual(t.map_indices([1, 2]), [2, 1])
        self.assertEqual((t.get_input_shape(), t.get_output_shape()), ([2, 3], [3, 2]))
        self.assertTrue(t.is_bijective())
        self.assertEqual(repr(t), "Layout([2, 3] -> [3, 2])")
        self.assertTrue(isinstance(t, T.Layout) and not isinstance(t, T.Fragment))
        flat = T.Layout([4], lambda i: i // 2)           # a single output index
        self.assertEqual(flat.map_indices([3]), [1])
        self.assertFalse(flat.is_bijective())

    def test_layout_errors(self):
        with self.assertRaisesRegex(ValueError, "positive extents"):
            T.Layout([0, 4], lambda i, j: (i, j))
        with self.assertRaisesRegex(TypeError, "callable"):
            T.Layout([4, 4], 3)
        with self.assertRaisesRegex(TypeError, "expected integers"):
            T.Layout([2, 2], lambda i, j: (i / 2, j))
        with self.assertRaisesRegex(ValueError, "different lengths"):
            T.Layout([2, 2], lambda i, j: (i,) if j else (i, j))

    def test_layout_equal_repeat_expand(self):
        """is_equal compares the tables (however the functions were written); repeat tiles one
        input dim with the tile number as a new leading output; expand adds leading input dims
        passed through; bad arguments are ValueError / TypeError."""
        atom = T.Layout([8, 64], lambda i, j: i * 64 + j)
        self.assertTrue(atom.is_equal(T.Layout([8, 64], lambda a, b: b + a * 64)))
        self.assertFalse(atom.is_equal(T.Layout([8, 64], lambda i, j: j * 8 + i)))
        self.assertFalse(atom.is_equal(T.Layout([16, 32], lambda i, j: i * 32 + j)))
        r = atom.repeat(dim=0, factor=2)
        self.assertTrue(r.is_equal(T.Layout([16, 64], lambda i, j: [i // 8, (i % 8) * 64 + j])))
        self.assertEqual((r.get_input_shape(), r.get_output_shape()), ([16, 64], [2, 512]))
        self.assertTrue(atom.repeat(dim=-1, factor=3).is_equal(
            T.Layout([8, 192], lambda i, j: [j // 64, i * 64 + j % 64])))
        self.assertIs(atom.repeat(dim=0, factor=1), atom)
        for dim, factor in ((0, 0), (0, -1), (2, 2), (-3, 2)):
            with self.assertRaises(ValueError):
                atom.repeat(dim=dim, factor=factor)
        e = atom.expand([4])
        self.assertTrue(e.is_equal(T.Layout([4, 8, 64], lambda h, i, j: [h, i * 64 + j])))
        self.assertEqual(e.get_output_shape(), [4, 512])
        self.assertTrue(atom.expand(2).is_equal(atom.expand([2])))
        self.assertIs(atom.expand(()), atom)
        for bad in (0, [-1]):
            with self.assertRaises(ValueError):
                atom.expand(bad)
        with self.assertRaises(TypeError):
            atom.expand("4")

    def test_fragment_equal(self):
        f = T.Fragment([32, 4], forward_thread_fn=lambda i, j: i * 4 + j)   # no register index
        self.assertTrue(f.is_equal(T.Fragment([32, 4], forward_thread_fn=lambda x, y: y + x * 4)))
        self.assertFalse(f.is_equal(T.Fragment([32, 4], forward_thread_fn=lambda i, j: j * 32 + i)))
        g = T.Fragment([32, 4], forward_thread_fn=lambda i, j, r: i * 4 + r, replicate=4)
        self.assertFalse(g.is_equal(T.Fragment([32, 4], forward_thread_fn=lambda i, j, r: i * 4 + r, replicate=2)))
        self.assertTrue(T.Fragment([32, 4], forward_fn=lambda i, j: (i * 4 + j, i)).is_equal(
            T.Fragment([32, 4], forward_thread_fn=lambda i, j: i * 4 + j, forward_index_fn=lambda i, j: i)))
        self.assertFalse(f.is_equal(T.Layout([32, 4], lambda i, j: i * 4 + j)))
        from tilelang.layout.fragment import Fragment
        self.assertTrue(isinstance(f, Fragment))

    def test_fragment_threads_replicas_and_registers(self):
        f = T.Fragment([4, 4], forward_thread_fn=lambda i, j, r: (i * 4 + j) // 2 + 8 * r,
                       forward_index_fn=lambda i, j: j % 2, replicate=2)
        self.assertEqual(f.threads[(1, 3)], (3, 11))
        self.assertEqual(f.map_indices([1, 3]), [3, 1])
        self.assertEqual((f.get_thread_size(), f.get_output_shape()), (16, [2]))
        g = T.Fragment([2, 2], forward_fn=lambda i, j: (i, j))
        self.assertEqual(g.map_indices([1, 0]), [1, 0])
        with self.assertRaisesRegex(TypeError, "needs forward_fn or forward_thread_fn"):
            T.Fragment([2, 2], forward_index_fn=lambda i, j: i)

    def test_fragment_repeat_and_replicate(self):
        base = T.Fragment([2, 2], forward_thread_fn=lambda i, j: i * 2 + j, forward_index_fn=lambda i, j: 0)
        on_threads = base.repeat([2, 1], repeat_on_thread=True)       # copy 1 (rows 2-3) on threads 4-7
        self.assertEqual(on_threads.get_input_shape(), [4, 2])
        self.assertEqual(on_threads.map_indices([3, 1]), [7, 0])
        regs = base.repeat([1, 3], repeat_on_thread=False)            # copy c in register c
        self.assertEqual((regs.map_indices([1, 5]), regs.get_output_shape()), ([3, 2], [3]))
        order = base.repeat([2, 2], repeat_on_thread=True, lower_dim_first=False)  # first dim fastest
        self.assertEqual(order.map_indices([0, 2])[0], 8)            # copy (0, 1) is number 2
        self.assertEqual(base.repeat([2, 2], repeat_on_thread=True).map_indices([0, 2])[0], 4)
        rep = on_threads.replicate(2)
        self.assertEqual(rep.threads[(3, 1)], (7, 15))
        self.assertEqual(repr(rep), "Fragment([4, 2] -> threads 16, registers [1], replicate 2)")
        with self.assertRaisesRegex(ValueError, "one positive count per input dimension"):
            base.repeat([2])

    def test_mma_fragment_maps_follow_the_ptx_layout(self):
        """m16n8k16 A: lane 4*(row % 8) + col % 8 // 2; registers a0..a7 walk the column pair,
        then row + 8, then column + 8 (element (9, 10) is a6 of lane 5); every map covers its
        32 lanes x registers exactly once."""
        from tilelang.cuda.intrinsics.layout import mma_layout as ml
        from tilelang.cuda.intrinsics.layout.utils import get_mma_micro_size
        from tvm.tirx import IndexMap
        self.assertEqual(ml.shared_16x16_to_mma_32x8_layout_sr_a(9, 10), (5, 6))
        self.assertEqual(IndexMap.from_func(ml.shared_16x16_to_mma_32x8_layout_sr_b).map_indices([9, 10]), [5, 6])  # b: k pair, k + 8 (2), n + 8 (4)
        self.assertEqual([get_mma_micro_size(d)[2] for d in (T.float16, T.int8, T.float32)], [16, 32, 8])
        for fn, rows, cols in ((ml.shared_16x16_to_mma_32x8_layout_sr_a, 16, 16),
                               (ml.shared_16x16_to_mma_32x8_layout_sr_b, 16, 16),
                               (ml.shared_16x8_to_mma_32x4_layout_sr_a, 16, 8),
                               (ml.shared_16x8_to_mma_32x4_layout_sr_b, 16, 8),
                               (ml.shared_16x32_to_mma_32x16_layout_sr_a, 16, 32),
                               (ml.shared_16x32_to_mma_32x16_layout_sr_b, 16, 32)):
            got = {fn(i, j) for i in range(rows) for j in range(cols)}
            self.assertEqual(got, {(t, r) for t in range(32) for r in range(rows * cols // 32)}, fn.__name__)

    def test_bank_swizzles(self):
        """The 16-byte chunk of row i XORs with (i // (128 / span)) % (span / 16): quarter (32 B)
        swaps the two halves of rows 4-7, full (128 B) XORs 8 chunks with i % 8."""
        q = make_quarter_bank_swizzled_layout(8, 16, 16)
        self.assertEqual([q.map_indices([i, 0])[1] for i in range(8)], [0] * 4 + [8] * 4)
        h = make_half_bank_swizzled_layout(8, 32, 16)
        self.assertEqual([h.map_indices([i, 0])[1] for i in range(8)], [0, 0, 8, 8, 16, 16, 24, 24])
        f = make_full_bank_swizzled_layout(32, 64, 16)
        for i in range(32):
            for j in range(64):
                self.assertEqual(f.map_indices([i, j]), [i, ((j // 8) ^ (i % 8)) * 8 + j % 8])
        self.assertTrue(f.is_bijective())
        self.assertEqual(make_full_bank_swizzled_layout(8, 32, 32).map_indices([3, 5]), [3, 9])  # fp32: chunk 1 ^ 3 = 2, lane 1
        with self.assertRaisesRegex(ValueError, "whole number"):
            make_full_bank_swizzled_layout(8, 48, 16)
        with self.assertRaisesRegex(ValueError, "in bits"):
            make_full_bank_swizzled_layout(8, 64, 2)
        with self.assertRaises(T.KernelOnlyError):
            make_full_bank_swizzled_layout(object())        # a buffer: the compiler's business


class PlotLayout(unittest.TestCase):
    def test_svg_cells_name_outputs_and_threads(self):
        with tempfile.TemporaryDirectory() as d:
            paths = plot_layout(T.Layout([4, 4], lambda i, j: (j, i)), save_directory=d, name="tr", formats="svg")
            self.assertEqual(paths, [os.path.join(d, "tr.svg")])
            svg = read(paths[0])
            self.assertEqual(svg.count("<rect"), 16)
            self.assertIn(">(2,1)</text>", svg)
            frag = T.Fragment([2, 4], forward_thread_fn=lambda i, j: i * 2 + j // 2, forward_index_fn=lambda i, j: j % 2)
            svg = read(plot_layout(frag, save_directory=d, name="fr", formats=["svg"])[0])
            self.assertIn(">T3</text>", svg)
            self.assertIn(">L1</text>", svg)
            self.assertEqual(svg.count("<rect"), 8)

    def test_png_and_pdf(self):
        with tempfile.TemporaryDirectory() as d, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            paths = plot_layout(T.Layout([2, 2], lambda i, j: (i, j)), save_directory=d, name="p", formats="png,pdf")
            if HAS_MATPLOTLIB:
                self.assertEqual(sorted(os.listdir(d)), ["p.pdf", "p.png"])
            else:  # the picture is kept, as SVG, once, with a warning naming the fix
                self.assertEqual(paths, [os.path.join(d, "p.svg")])
                self.assertEqual(os.listdir(d), ["p.svg"])
                self.assertTrue(any("pip install matplotlib" in str(w.message) for w in caught))

    def test_bad_arguments(self):
        with self.assertRaisesRegex(ValueError, "unknown format 'jpg'"):
            plot_layout(T.Layout([2], lambda i: i), formats="jpg")
        with self.assertRaisesRegex(TypeError, "built by host code"):
            plot_layout(T.gemm)


class Scripts(unittest.TestCase):
    @unittest.skipUnless(os.path.isdir(CORPUS), "no corpus at %s" % CORPUS)
    def test_tilelang_plot_layout_examples_run_unchanged(self):
        for script, pictures in (("layout_transform.py", 4), ("layout_swizzle.py", 4), ("fragment_mma_load_a.py", 3)):
            with tempfile.TemporaryDirectory() as d:
                r = subprocess.run([sys.executable, os.path.join(CORPUS, script)], cwd=d, capture_output=True,
                                   text=True, timeout=120, env=dict(os.environ, PYTHONPATH=PY))
                self.assertEqual(r.returncode, 0, r.stderr[-2000:])
                self.assertEqual(len(os.listdir(os.path.join(d, "tmp"))), pictures, script)
                self.assertRegex(r.stdout, r"(Layout|Fragment)\(\[")


class KernelLayouts(unittest.TestCase):
    def test_layout_inside_a_kernel_is_the_compilers(self):
        """T.Layout in a kernel body is evaluated by the C front end from the source: it still
        compiles through the package now that host code may call T.Layout too."""
        src = textwrap.dedent('''
            import tilelang
            import tilelang.language as T

            @tilelang.jit(target="cuda")
            def k(N=64):
                @T.prim_func
                def main(A: T.Tensor((N, N), "float32"), B: T.Tensor((N, N), "float32")):
                    with T.Kernel(1, threads=128) as bx:
                        S = T.alloc_shared((N, N), "float32")
                        T.annotate_layout({S: T.Layout((N, N), lambda i, j: (j, i))})
                        T.copy(A, S)
                        T.copy(S, B)
                return main
            ''')
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "kl.py")
            with open(path, "w") as f:
                f.write(src)
            spec = importlib.util.spec_from_file_location("kl", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            cu = mod.k.compile(N=64).get_kernel_source()
            self.assertIn("__global__", cu)


if __name__ == "__main__":
    if "TILESCALE_CACHE_DIR" not in os.environ:
        tilelang.disable_cache()
    unittest.main()
