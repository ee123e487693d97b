"""Tests of bench/tilelang/bench_vs_tilelang.py's row logic, without a GPU or torch: a worker
builds a row's kernels (one, or a --tuned row's menu of configurations), `check` keeps the
right ones, `time` answers the fastest right one with its configuration, and the driver's
measure() asks a memory-bound row for a device copy beside the torch reference.  The kernels
are stand-ins whose results and times are chosen here; compare() and time_call() are
replaced by exact ones over them (their CUDA-event timing is what the GPU run measures).
Run: python3 tests/python/test_bench_driver.py"""
import io
import json
import os
import sys
import types
import unittest
from contextlib import redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "tilelang"))
sys.dont_write_bytecode = True

import bench_vs_tilelang as bench  # noqa: E402

TIMES = {}  # kernel result -> the ms time_call reports for it


def kernel(result):
    return lambda: result


def serve(name, commands):
    """The worker's JSON answers to `commands` for row `name`."""
    sys.stdin = io.StringIO("".join(c + "\n" for c in commands + ["quit"]))
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            bench.worker("corpus", name, "ours")
    finally:
        sys.stdin = sys.__stdin__
    return [json.loads(line) for line in out.getvalue().splitlines()]


class BenchDriver(unittest.TestCase):
    def setUp(self):
        fake_torch = types.ModuleType("torch")
        fake_torch.manual_seed = lambda seed: None
        self.saved = {k: getattr(bench, k) for k in ("compare", "time_call", "device_copy", "torch_sync", "REF_UNTIMED_S")}
        self.saved_torch = sys.modules.get("torch")
        sys.modules["torch"] = fake_torch
        bench.compare = lambda got, want, tol: (got == want, 0.0 if got == want else 1.0, 1.0)
        bench.time_call = lambda run: TIMES[run()]
        bench.device_copy = lambda nbytes: kernel("copy")
        bench.torch_sync = lambda: None
        TIMES.clear()

    def tearDown(self):
        for k, v in self.saved.items():
            setattr(bench, k, v)
        if self.saved_torch is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = self.saved_torch
        bench.CASES.pop("one", None)
        bench.TUNED.pop("menu", None)

    def test_tuned_row_keeps_the_fastest_right_configuration(self):
        def make(corpus, cfg):
            if cfg == "unbuildable":
                raise RuntimeError("needs too much shared memory")
            wrong = cfg == "wrong"
            return kernel(("out", cfg) if not wrong else "garbage"), kernel(("out", cfg)), 1e12, "TFLOP/s"
        bench.TUNED["menu"] = (make, ["slow", "wrong", "unbuildable", "fast"])
        TIMES.update({("out", "slow"): 3.0, ("out", "fast"): 2.0, "garbage": 0.5})
        built, check, timed = serve("menu", ["check", "time"])
        self.assertTrue(built["built"])
        self.assertEqual((check["ready"], check["configs_right"], check["configs"]), (True, 2, 4))
        # the wrong configuration is the quickest, but never a candidate
        self.assertEqual(timed, {"ms": 2.0, "config": "fast"})

    def test_tuned_row_with_no_right_configuration_is_wrong(self):
        bench.TUNED["menu"] = (lambda c, cfg: (kernel(1), kernel(2), 1.0, "TFLOP/s"), ["a", "b"])
        _, check, timed = serve("menu", ["check", "time"])
        self.assertEqual((check["ready"], check["wrong"], check["configs_right"]), (False, True, 0))
        self.assertIn("error", timed)

    def test_one_kernel_row_times_without_a_configuration(self):
        bench.CASES["one"] = lambda c: (kernel(7), kernel(7), 1e9, "GB/s")
        TIMES.update({7: 1.5, "copy": 1.0})
        built, check, timed, copy = serve("one", ["check", "time", "copy"])
        self.assertEqual((built["unit"], check["ready"]), ("GB/s", True))
        self.assertEqual(timed, {"ms": 1.5})
        self.assertEqual(copy, {"ms": 1.0})

    def test_slow_reference_is_not_timed(self):
        bench.CASES["one"] = lambda c: (kernel(7), kernel(7), 1e9, "TFLOP/s")
        TIMES.update({7: 1.5})
        _, check, torch_fast = serve("one", ["check", "torch"])
        self.assertEqual(torch_fast, {"ms": 1.5})
        bench.REF_UNTIMED_S = -1.0  # every reference counts as slower than the limit
        _, check, torch_slow = serve("one", ["check", "torch"])
        self.assertTrue(check["ready"])
        self.assertIn("not timed", torch_slow["error"])

    def test_measure_asks_memory_bound_rows_for_a_copy(self):
        class Worker:
            def __init__(self, unit):
                self.unit, self.asked = unit, []

            def read(self, timeout):
                return {"built": True, "unit": self.unit, "work": 1e9}

            def ask(self, cmd):
                self.asked.append(cmd)
                return {"ready": True} if cmd == "check" else {"ms": 2.0 if cmd == "copy" else 1.0, "config": "c"}

            def close(self):
                pass
        for unit, copied in (("GB/s", True), ("TFLOP/s", False)):
            workers = {"peer": Worker(unit), "ours": Worker(unit)}
            info, best = bench.measure(workers, 2)
            self.assertEqual("copy" in best, copied)
            self.assertEqual(workers["ours"].asked.count("copy"), int(copied))
            self.assertEqual(workers["peer"].asked, ["check", "time", "time"])
            self.assertEqual(info["ours"]["config"], "c")

    def test_ab_times_a_second_build_of_ours_in_the_same_rounds(self):
        """--ab: a third worker, ours under TILESCALE_PASS_CONFIGS, timed in the same rounds;
        the row prints its speed over ours (B/A) and the run its geomean."""
        ms = {"peer": 4.0, "ours": 2.0, "ours_b": 1.6}
        asked, envs_seen = {}, {}

        class Worker:
            def __init__(self, system):
                self.system = system
                asked[system] = []

            def read(self, timeout):
                return {"built": True, "unit": "TFLOP/s", "work": 1e12}

            def ask(self, cmd):
                asked[self.system].append(cmd)
                return {"ready": True} if cmd == "check" else {"ms": ms.get(self.system, 1.0)}

            def close(self):
                pass

        def start(corpus, name, envs):
            envs_seen.update(envs)
            return {s: Worker(s) for s in envs}
        saved_start, saved_argv = bench.start, sys.argv
        bench.start = start
        bench.CASES["one"] = lambda c: None
        sys.argv = ["bench_vs_tilelang.py", "corpus", "--only", "one", "--ab", "ts.x=True", "--rounds", "3"]
        out = io.StringIO()
        try:
            with redirect_stdout(out):
                bench.main()
        finally:
            bench.start, sys.argv = saved_start, saved_argv
        text = out.getvalue()
        self.assertEqual(envs_seen["ours_b"]["TILESCALE_PASS_CONFIGS"], "ts.x=True")
        self.assertNotIn("TILESCALE_PASS_CONFIGS", envs_seen["ours"])
        self.assertEqual(asked["ours_b"].count("time"), 3)
        self.assertIn("B/A 1.250", text)
        self.assertIn("geomean B/A (ts.x=True) over 1 rows: 1.250", text)


if __name__ == "__main__":
    unittest.main()
