"""bench_vs_tilelang.py — TileLang's own example kernels, built by TileLang itself and by this
project from the same file with the file's own configuration, on the same random inputs, both
checked against torch, timed the same way, alternating between the two systems.

    python3 bench/tilelang/bench_vs_tilelang.py CORPUS_EXAMPLES_DIR --peer /tmp/peer [--rounds 2]
                                                [--only NAME[,NAME...]]

Both systems are imported as `tilelang`, so each measurement runs in its own worker process
(--worker CASE SYSTEM): PYTHONPATH=python for ours, PYTHONPATH=PEER for TileLang 0.1.15
(../shared/peer/README.md installs it).  A worker builds the kernel from the corpus file, runs
it on inputs from a fixed seed, compares with the torch reference, then times the kernel call
with CUDA events: 10 warm-up runs, then the median of 50, each after flushing L2 (a 256 MB
write).  The driver alternates peer and ours `--rounds` times per case and keeps each
system's best median; it prints TFLOP/s (or GB/s) for torch, TileLang and ours, and ours /
TileLang.  A wrong result is reported as such and never timed.  The cases (one function per
example row, each with the file's own configuration and sizes) are in bench_cases.py."""
import argparse
import json
import math
import os
import subprocess
import sys

from bench_cases import CASES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def compare(got, want, tol):
    """Largest error of got against want relative to max(1, |want|max), over every output (a
    tensor, or a tuple of tensors compared pairwise; a lone reference checks the first output)."""
    import torch
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    worst = (0.0, 0.0, 0.0)  # (relative error, max error, reference max)
    for g, w in zip(got, want):
        if not isinstance(g, torch.Tensor) or g.shape != w.shape:
            raise ValueError("output shape %s, reference %s" % (tuple(getattr(g, "shape", ())), tuple(w.shape)))
        err = (g.float() - w.float()).abs().max().item()
        scale = w.float().abs().max().item()
        rel = err / max(1.0, scale) if math.isfinite(err) else math.inf
        if rel >= worst[0]:
            worst = (rel, err, scale)
    return worst[0] <= tol, worst[1], worst[2]


def time_call(run, reps=50, warmup=10):
    import torch
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        run()
    times = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        run()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def worker(corpus, name, system):
    import torch
    torch.manual_seed(0)
    out = {"case": name, "system": system}
    try:
        run, ref, work, unit, *tol = CASES[name](corpus)
        ok, err, scale = compare(run(), ref(), tol[0] if tol else 5e-2)
        out.update(unit=unit, work=work, max_err=err, ref_max=scale)
        if not ok:
            out["wrong"] = True
        else:
            out["ms"] = time_call(run)
            if system == "ours":
                out["torch_ms"] = time_call(ref)
    except Exception as e:  # noqa: BLE001 (report, never crash the driver)
        out["error"] = ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:200]
    print(json.dumps(out))


def rate(work, ms, unit):
    return work / (ms * 1e-3) / (1e12 if unit == "TFLOP/s" else 1e9)


def run_worker(corpus, name, system, env, timeout=600):
    """One worker process; its last JSON line, or an error naming why there is none."""
    try:
        p = subprocess.run([sys.executable, __file__, corpus, "--worker", name, system], env=env,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after %d s" % timeout}
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if lines:
        return json.loads(lines[-1])
    tail = (p.stderr or p.stdout).strip().splitlines()
    return {"error": "exit %d: %s" % (p.returncode, tail[-1][:200] if tail else "no output")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--peer", default="/tmp/peer")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="", help="run only the cases whose name contains one of these comma-separated substrings")
    ap.add_argument("--worker", nargs=2, metavar=("CASE", "SYSTEM"))
    a = ap.parse_args()
    if a.worker:
        return worker(a.corpus, a.worker[0], a.worker[1])
    envs = {"ours": dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")),
            "peer": dict(os.environ, PYTHONPATH=a.peer, TILELANG_CACHE_DIR=os.environ.get("TILELANG_CACHE_DIR", "/tmp/tlcache"))}
    envs["ours"].setdefault("TILESCALE_LIB", os.path.join(ROOT, "build", "libtilescale.so"))
    names = [n for n in CASES if not a.only or any(part and part in n for part in a.only.split(","))]
    width = max([len(n) for n in names] + [28])
    print("%-*s %9s %9s %9s %8s  %s" % (width, "example (own configuration)", "torch", "TileLang", "ours", "ours/TL", "unit"))
    ratios = []
    for name in names:
        best = {}
        info = {}
        for _ in range(a.rounds):
            for system in ("peer", "ours"):
                r = run_worker(a.corpus, name, system, envs[system])
                info[system] = r
                if "ms" in r:
                    best[system] = min(best.get(system, 1e30), r["ms"])
                if "torch_ms" in r:
                    best["torch"] = min(best.get("torch", 1e30), r["torch_ms"])
        unit = next((r.get("unit") for r in info.values() if r.get("unit")), "")
        work = next((r.get("work") for r in info.values() if r.get("work")), 0)
        cols = []
        for s in ("torch", "peer", "ours"):
            if s in best:
                cols.append("%9.1f" % rate(work, best[s], unit))
            else:
                r = info.get(s, {})
                cols.append("%9s" % ("WRONG" if r.get("wrong") else "error" if s != "torch" else "-"))
        ratio = best["peer"] / best["ours"] if "peer" in best and "ours" in best else None
        if ratio:
            ratios.append(ratio)
        print("%-*s %s %8s  %s" % (width, name, " ".join(cols), "%.2f" % ratio if ratio else "-", unit))
        for s in ("peer", "ours"):
            r = info.get(s, {})
            if "error" in r:
                print("    %s: %s" % (s, r["error"]))
            elif r.get("wrong"):
                print("    %s: wrong, max error %.4g where |ref| max is %.4g" % (s, r["max_err"], r["ref_max"]))
    if ratios:
        print("geomean ours/TileLang over %d rows: %.2f" % (len(ratios), math.exp(sum(map(math.log, ratios)) / len(ratios))))


if __name__ == "__main__":
    main()
