"""call_overhead.py — host time of one kernel call from Python: this project's `tilelang`
package against torch and TileLang 0.1.15, on the same tiny kernel file, in one run.

    python3 bench/tilelang/call_overhead.py [--peer /tmp/peer] [--size 256] [--calls 20000] [--reps 7]

The kernels (call_overhead_kernels.py) add two [size, size] fp32 tensors, so the GPU work is
about a microsecond and the host side decides the time.  Each is called back to back `--calls`
times after a warm-up, with one torch.cuda.synchronize at the end; the time per call is the
median over `--reps` such loops.  Cases:
    passed      kernel(a, b, c): a lazy kernel without out_idx (add_into), output given
    allocated   kernel(a, b): a lazy kernel with out_idx=[-1] (add), output allocated
    eager       add_eager(a, b): the eager style, sizes from the tensors, output allocated
    torch.add   torch.add(a, b, out=c) and torch.add(a, b), the reference a call should approach
Both systems are imported as `tilelang`, so each runs in its own worker process (--worker):
ours through the C call path (python/tilescale/_fastcall.c), ours again with
TILESCALE_FASTCALL=0 (the Python path, for reference), and TileLang from --peer (installed as
../shared/peer/README.md says; skipped when it is not there).  torch.add is timed in every
worker, so each row can be read against the torch of its own process.  Not a test: it prints a
table (µs per call) and, with --json, writes the numbers."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "call_overhead_kernels.py")
CASES = ["passed", "allocated", "eager", "torch.add out=", "torch.add"]


def per_call_us(fn, calls, reps):
    import torch
    for _ in range(min(calls, 2000)):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


def worker(system, size, calls, reps):
    """Builds and checks each kernel, times every case that built; a case that fails is
    reported with its error and the others still run."""
    import importlib.util
    import traceback

    import torch
    import tilelang
    spec = importlib.util.spec_from_file_location("call_overhead_kernels", KERNELS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a = torch.randn(size, size, device="cuda")
    b = torch.randn(size, size, device="cuda")
    c = torch.empty_like(a)
    ref = a + b
    out = {"system": system, "version": getattr(tilelang, "__version__", "?"),
           "device": torch.cuda.get_device_name(), "torch": torch.__version__, "us": {}, "errors": {}}
    fns = {"torch.add out=": lambda: torch.add(a, b, out=c), "torch.add": lambda: torch.add(a, b)}

    def build(case, make):
        try:
            fn, check = make()
            torch.testing.assert_close(check(), ref)      # checked once before it is timed
            fns[case] = fn
        except Exception as e:  # noqa: BLE001 (the other cases still run)
            out["errors"][case] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            traceback.print_exc()

    def passed():
        k = mod.add_into(size, size)

        def check():
            c.zero_()
            k(a, b, c)
            return c
        return (lambda: k(a, b, c)), check

    def allocated():
        k = mod.add(size, size)
        if system == "ours":
            from tilescale import _callpath
            out["c_path"] = bool(_callpath.fast is not None and getattr(k, "_fast", False))
        return (lambda: k(a, b)), (lambda: k(a, b))

    build("passed", passed)
    build("allocated", allocated)
    build("eager", lambda: ((lambda: mod.add_eager(a, b)), (lambda: mod.add_eager(a, b))))
    for name in CASES:
        if name in fns:
            out["us"][name] = per_call_us(fns[name], calls, reps)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", default="/tmp/peer", help="folder TileLang 0.1.15 is installed in")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--json", default="")
    ap.add_argument("--worker", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.size, a.calls, a.reps)
        return
    py = os.path.join(ROOT, "python")
    base = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    base.setdefault("TILESCALE_LIB", os.path.join(ROOT, "build", "libtilescale.so"))
    runs = [("ours", dict(base, PYTHONPATH=py)),
            ("ours, Python path", dict(base, PYTHONPATH=py, TILESCALE_FASTCALL="0"))]
    if os.path.isdir(os.path.join(a.peer, "tilelang")):
        runs.append(("TileLang 0.1.15", dict(base, PYTHONPATH=a.peer, TILELANG_CACHE_DIR=os.environ.get(
            "TILELANG_CACHE_DIR", "/tmp/tlcache"))))
    else:
        print("TileLang not found in %s (../shared/peer/README.md installs it): not measured" % a.peer)
    results = []
    for name, env in runs:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name, "--size", str(a.size),
                            "--calls", str(a.calls), "--reps", str(a.reps)], env=env, capture_output=True,
                           text=True)
        line = [l for l in p.stdout.splitlines() if l.startswith("{")]
        if p.returncode != 0 or not line:
            print("%s: failed (exit %d)\n%s" % (name, p.returncode, (p.stdout + p.stderr)[-3000:]))
            continue
        results.append(json.loads(line[-1]))
    if not results:
        sys.exit(1)
    r0 = results[0]
    print("host time per call, µs (median of %d loops of %d calls), %dx%d fp32 add, %s, torch %s" % (
        a.reps, a.calls, a.size, a.size, r0["device"], r0["torch"]))
    print("%-22s" % "" + "".join("%16s" % c for c in CASES))
    for r in results:
        tag = r["system"] + ("" if r.get("c_path", True) else " (no C path!)")
        print("%-22s" % tag + "".join("%16.2f" % r["us"][c] if c in r["us"] else "%16s" % "failed" for c in CASES))
    for r in results:
        for case, err in r["errors"].items():
            print("%s, %s: %s" % (r["system"], case, err))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
