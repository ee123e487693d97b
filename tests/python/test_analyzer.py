"""Tests of tilelang.tools.Analyzer without a GPU and without torch: the counts come from the
library (`--emit stats`, compiled with NVRTC for sm_90a as test_tilelang.py does), the package
only divides by the device's nominal peaks.  Also runs TileLang's two analyze example scripts
(../shared/corpus/tilelang/examples/analyze) with torch stubbed, checking what they print.
Run: python3 tests/python/test_analyzer.py  (uses $TILESCALE_LIB, else build/libtilescale.so)."""
import contextlib
import io
import os
import pickle
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import test_tilelang as TT  # noqa: E402  (puts python/ first on sys.path; load, load_corpus)
import tilelang  # noqa: E402
from tilelang.carver.arch import CUDA  # noqa: E402
from tilelang.jit.kernel import TirText  # noqa: E402
from tilelang.tools import AnalysisResult, Analyzer  # noqa: E402
from tilelang.tools.analyzer import PEAKS  # noqa: E402

STATS = os.path.join(TT.ROOT, "tests", "stats")
GEMM_T = TT.load(os.path.join(STATS, "gemm_trans.py"))
DYN = TT.load(os.path.join(STATS, "dynamic_rows.py"))


class AnalyzerTest(unittest.TestCase):
    def test_gemm_counts_and_roofline(self):
        tir = GEMM_T.matmul_t.get_tir(M=256, N=512, K=1024)
        r = Analyzer.analysis(tir, CUDA("sm_90a"))
        self.assertIsInstance(r, AnalysisResult)
        self.assertEqual(r.total_flops, 2 * 256 * 512 * 1024)
        # A and B tiles re-read by every block: (256*1024 * 4 + 1024*512 * 2) * 2 bytes; C once
        self.assertEqual(r.total_global_bytes, (256 * 1024 * 4 + 1024 * 512 * 2) * 2 + 256 * 512 * 2)
        self.assertEqual((r.flops_status, r.bytes_status), ("exact", "exact"))
        tf, tb = PEAKS[90]
        want = max(r.total_flops / (tf * 1e12), r.total_global_bytes / (tb * 1e12))
        self.assertAlmostEqual(r.estimated_time, want, delta=want * 1e-9)
        self.assertAlmostEqual(r.bandwidth_GBps, r.total_global_bytes / want / 1e9, places=3)
        self.assertAlmostEqual(r.tflops, r.total_flops / want / 1e12, places=6)
        with self.assertRaises(Exception):
            r.total_flops = 0  # frozen, as TileLang's

    def test_devices_and_peaks(self):
        tir = GEMM_T.matmul_t.get_tir(M=256, N=512, K=1024)
        a100 = Analyzer.analysis(tir, CUDA("sm_80"))
        h100 = Analyzer.analysis(tir, CUDA("sm_90a"))
        self.assertEqual(a100.total_flops, h100.total_flops)
        self.assertGreater(a100.estimated_time, h100.estimated_time)
        own = Analyzer(tir, CUDA("sm_90a"), peak_tflops=1.0, peak_bandwidth_GBps=1e9).calculate()
        self.assertAlmostEqual(own.estimated_time, own.total_flops / 1e12)
        self.assertEqual(Analyzer.analysis(tir, None).total_flops, h100.total_flops)
        with self.assertRaises(TypeError):
            Analyzer.analysis(tir, 3.5)

    def test_tir_text_is_the_ir(self):
        k = GEMM_T.matmul_t.compile(M=256, N=512, K=1024)
        tir = k.get_tir()
        self.assertIsInstance(tir, str)
        self.assertIsInstance(tir, TirText)
        self.assertEqual(tir, k.kernel.ir)
        self.assertTrue(tir.startswith("func main(") or tir.startswith("func "))
        self.assertIn("T.gemm", tir)
        buf = io.StringIO()
        print(tir, file=buf)
        self.assertEqual(buf.getvalue(), k.kernel.ir + "\n")
        self.assertEqual(type(pickle.loads(pickle.dumps(tir))), str)
        # the compiled kernel itself is accepted too, and so is a tilescale.Kernel
        self.assertEqual(Analyzer.analysis(k, CUDA("sm_90a")).total_flops, 2 * 256 * 512 * 1024)
        self.assertEqual(Analyzer.analysis(k.kernel, CUDA("sm_90a")).total_flops, 2 * 256 * 512 * 1024)
        self.assertEqual(k.kernel.stats["kernels"][0]["grid"], [4, 2, 1])

    def test_unknown_counts_are_none(self):
        r = Analyzer.analysis(DYN.matmul_dyn.get_tir(N=256, K=256), CUDA("sm_90a"))
        self.assertIsNone(r.total_flops)
        self.assertIsNone(r.total_global_bytes)
        self.assertIsNone(r.estimated_time)
        self.assertEqual(r.flops_status, "unknown")

    def test_bad_input(self):
        tir = GEMM_T.matmul_t.get_tir(M=256, N=512, K=1024)
        with self.assertRaises(TypeError) as cm:
            Analyzer.analysis(str(tir), CUDA("sm_90a"))
        self.assertIn("get_tir", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            Analyzer.analysis(42, CUDA("sm_90a"))
        self.assertIn("got int", str(cm.exception))


def run_corpus_main(rel):
    """Runs a corpus analyze script's main() with torch stubbed (torch.version.hip is None: the
    CUDA branch), returning what it printed."""
    mod = TT.load_corpus(rel)
    mod.torch = types.SimpleNamespace(version=types.SimpleNamespace(hip=None))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        mod.main()
    return out.getvalue()


def printed(text, label):
    for line in text.splitlines():
        if line.startswith(label + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError("no '%s' line in:\n%s" % (label, text))


class CorpusAnalyzeTest(unittest.TestCase):
    """TileLang's examples/analyze scripts, as test_example_analyze.py runs them."""

    def test_example_gemm_analyze(self):
        out = run_corpus_main("analyze/example_gemm_analyze.py")
        self.assertEqual(printed(out, "Analyzed FLOPs"), printed(out, "Expected FLOPs"))
        self.assertEqual(printed(out, "Expected FLOPs"), 2 * 1024 ** 3)

    def test_example_conv_analyze(self):
        out = run_corpus_main("analyze/example_conv_analyze.py")
        n, c, h, w, f, k = 64, 256, 512, 512, 512, 3   # the script's sizes (stride 1, pad 1)
        self.assertEqual(printed(out, "Analyzed FLOPs"), 2 * (n * h * w) * f * (k * k * c))
        self.assertIn("AnalysisResult(total_flops=", out)


if __name__ == "__main__":
    if "TILESCALE_CACHE_DIR" not in os.environ:
        tilelang.disable_cache()
    unittest.main(verbosity=1)
