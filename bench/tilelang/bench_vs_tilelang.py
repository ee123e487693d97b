"""bench_vs_tilelang.py — TileLang's own example kernels, built by TileLang itself and by this
project from the same file with the file's own configuration, on the same random inputs, both
checked against torch, timed the same way, alternating between the two systems.

    python3 bench/tilelang/bench_vs_tilelang.py CORPUS_EXAMPLES_DIR --peer /tmp/peer [--rounds 2]
                                                [--only NAME[,NAME...]]

Both systems are imported as `tilelang`, so each case has one worker process per system
(--worker CASE SYSTEM): PYTHONPATH=python for ours, PYTHONPATH=PEER for TileLang 0.1.15
(../shared/peer/README.md installs it).  A worker builds the kernel from the corpus file, runs
it on inputs from a fixed seed and compares with the torch reference, then stays alive and
times the kernel call when the driver asks: CUDA events, 10 warm-up runs, then the median of
50, each after flushing L2 (a 256 MB write).  The driver asks peer and ours alternately
`--rounds` times per case and keeps each system's best median (the torch reference is timed
once, in ours); it prints TFLOP/s (or GB/s) for torch, TileLang and ours, and ours / TileLang.
A memory-bound (GB/s) row also gets a torch device-to-device copy moving the same bytes
timed the same way, and ours / copy beside it.
A wrong result is reported as such and never timed.  The cases (one function per example row,
each with the file's own configuration and sizes) are in bench_cases.py.

--ahead K builds the next K cases' kernels (both systems, CPU work) while the current case is
checked and timed; a worker touches the GPU beyond allocating its inputs only when the driver
sends `check`, so timings stay one case at a time.  K=0 builds each case just before its run."""
import argparse
import json
import math
import os
import select
import subprocess
import sys
import tempfile
import time

from bench_cases import CASES, TUNED

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
        g, w = g.float(), w.float()
        same = g == w  # equal infinities (a masked logit) are exact
        err = torch.where(same, torch.zeros_like(g), g - w).abs().max().item()
        finite = w[torch.isfinite(w)]
        scale = finite.abs().max().item() if finite.numel() else 0.0
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


def profile_call(run, reps=10):
    """Where one call's time goes on the GPU, from torch.profiler (CUPTI) over `reps` calls made
    as time_call makes them (L2 flush, call, synchronize), each call opened by a short
    torch.cuda._sleep kernel that marks where it starts: the median over calls of the summed
    kernel times ("busy") and of the span from the flush's end to the last kernel's end
    ("span": busy plus the gaps the host leaves), and each kernel's median time in launch
    order (µs), over the calls that launched the usual number of kernels."""
    import collections
    import statistics
    import torch
    from torch.profiler import ProfilerActivity, profile
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            torch.cuda._sleep(100)
            flush.zero_()
            run()
            torch.cuda.synchronize()
    kernels = sorted((e.time_range.start, e.time_range.end, e.name) for e in prof.events()
                     if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.end > e.time_range.start)
    calls = []
    for k in kernels:
        if "spin_kernel" in k[2]:
            calls.append([])
        elif calls:
            calls[-1].append(k)
    calls = [(c[0][1], c[1:]) for c in calls if len(c) > 1]  # c[0] is the flush
    if not calls:
        return {"error": "the profiler saw no kernels"}
    n = collections.Counter(len(c) for _, c in calls).most_common(1)[0][0]
    calls = [(f, c) for f, c in calls if len(c) == n]
    return {"busy_us": statistics.median(sum(e - b for b, e, _ in c) for _, c in calls),
            "span_us": statistics.median(c[-1][1] - flushed for flushed, c in calls),
            "kernels": [(short_name(calls[0][1][i][2]), statistics.median(c[i][1] - c[i][0] for _, c in calls))
                        for i in range(n)]}


def short_name(kernel):
    """A kernel's name without return type, template arguments and parameters."""
    name = kernel[5:] if kernel.startswith("void ") else kernel
    return name.split("<")[0].split("(")[0][:60]


def device_copy(nbytes):
    """A torch device-to-device copy of nbytes / 2 bytes (so nbytes cross DRAM, as a memory-bound
    row counts its reads and writes): the bandwidth a memory-bound kernel is held against."""
    import torch
    n = max(1, int(nbytes) // 2)
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    return lambda: dst.copy_(src)


def build_variants(corpus, name):
    """The kernels of one row: [(config, case tuple or None, error)], one entry for a CASES row
    (config None), one per configuration of a TUNED row."""
    if name in CASES:
        menu = [(None, CASES[name])]
    else:
        make, configs = TUNED[name]
        menu = [(cfg, lambda c, cfg=cfg: make(c, cfg)) for cfg in configs]
    variants = []
    for cfg, make_case in menu:
        try:
            variants.append((cfg, make_case(corpus), None))
        except Exception as e:  # noqa: BLE001 (report, never crash the driver)
            variants.append((cfg, None, ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:200]))
    return variants


REF_UNTIMED_S = 0.5  # a torch reference slower than this a call (a Python loop over blocks) is not timed


def torch_sync():
    import torch
    torch.cuda.synchronize()


def check_variants(variants):
    """`check` over every built kernel of a row: the answer for the row (the worst error of a
    one-kernel row; for a menu, ready when any configuration is right) and the right ones."""
    right, answer = [], None
    for cfg, case, _ in variants:
        if case is None:
            continue
        run, ref, _work, _unit, *tol = case
        try:
            got = run()
            t0 = time.time()
            want = ref()
            torch_sync()
            ref_s = time.time() - t0
            ok, err, scale = compare(got, want, tol[0] if tol else 5e-2)
        except Exception as e:  # noqa: BLE001
            if len(variants) == 1:
                raise
            ok, err, scale, ref_s = False, math.inf, 0.0, 0.0
        if ok:
            right.append((cfg, case))
        if answer is None or (ok and not answer["ready"]) or (not ok and not right and err > answer["max_err"]):
            answer = {"max_err": err, "ref_max": scale, "ready": ok, "wrong": not ok}
        if answer is not None and case is variants[0][1]:
            answer["ref_s"] = ref_s
    if answer and len(variants) > 1:
        answer.update(ready=bool(right), wrong=not right, configs_right=len(right), configs=len(variants))
    return answer or {"error": "nothing built"}, right


def worker(corpus, name, system):
    """Builds one row's kernels (one, or every configuration of a --tuned row) and prints a JSON
    line, then serves the driver's commands on stdin: `check` (one run of each compared with
    the reference), `time` (the kernel call; a tuned row times every right configuration and
    answers the fastest with its configuration), `profile` (profile_call of the first right
    configuration), `torch` (the reference), `copy` (a
    device-to-device copy moving the row's bytes: half read, half written), `quit`; each
    answer is one JSON line."""
    import torch
    torch.manual_seed(0)
    out = {"case": name, "system": system}
    variants = build_variants(corpus, name)
    built = [case for _, case, _ in variants if case is not None]
    if built:
        out.update(unit=built[0][3], work=built[0][2], built=True)
    else:
        out["error"] = variants[0][2]
    print(json.dumps(out), flush=True)
    if not built:
        return
    right, ref_s = [], 0.0
    while True:
        cmd = sys.stdin.readline().strip()
        if cmd in ("quit", ""):
            break
        try:
            if cmd == "check":
                answer, right = check_variants(variants)
                ref_s = answer.get("ref_s", 0.0)
            elif cmd == "copy":
                answer = {"ms": time_call(device_copy(out["work"]))}
            elif cmd == "profile":
                answer = profile_call(right[0][1][0]) if right else {"error": "nothing right to profile"}
            elif cmd == "time" and not right:
                answer = {"error": "no kernel of this row was right (check first)"}
            elif cmd == "time":
                timed = sorted((time_call(case[0]), i) for i, (_, case) in enumerate(right))
                answer = {"ms": timed[0][0]}
                if right[timed[0][1]][0] is not None:
                    answer["config"] = str(right[timed[0][1]][0])
            elif ref_s > REF_UNTIMED_S:  # `torch`: a reference too slow to time 60 times
                answer = {"error": "the reference takes %.1f s a call: not timed" % ref_s}
            else:
                answer = {"ms": time_call((right[0][1] if right else built[0])[1])}
        except Exception as e:  # noqa: BLE001
            answer = {"error": ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:200]}
        print(json.dumps(answer), flush=True)


class Worker:
    """A live worker process of one system for one case: JSON lines out (other output skipped),
    commands in, stderr to a file for the error report."""

    def __init__(self, corpus, name, system, env):
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([sys.executable, __file__, corpus, "--worker", name, system], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, bufsize=0)
        self.buf = b""
        self.closed = False

    def read(self, timeout):
        """The next JSON line, or {"error": ...} when the worker dies or stays silent."""
        deadline = time.time() + timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if line.startswith(b"{"):
                    try:
                        return json.loads(line)
                    except ValueError:
                        pass
            left = deadline - time.time()
            if left <= 0:
                self.close()
                return {"error": "no answer in %d s" % timeout}
            if select.select([self.proc.stdout], [], [], left)[0]:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    self.proc.wait()
                    tail = [] if self.closed else (self.err.seek(0), self.err.read())[1].strip().splitlines()
                    return {"error": "exit %s: %s" % (self.proc.returncode, tail[-1][:200] if tail else "no output")}
                self.buf += chunk

    def ask(self, cmd, timeout=300):
        try:
            self.proc.stdin.write((cmd + "\n").encode())
        except (BrokenPipeError, ValueError):
            return {"error": "worker gone"}
        return self.read(timeout)

    def close(self):
        if self.closed:
            return
        self.closed = True
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b"quit\n")
                self.proc.wait(30)
            except (BrokenPipeError, subprocess.TimeoutExpired, ValueError):
                self.proc.kill()
                self.proc.wait()
        self.err.close()


def start(corpus, name, envs):
    """The workers of one case, one per system of envs (TileLang, ours, and with --ab ours under
    other pass configs), building (no GPU work beyond allocation)."""
    return {s: Worker(corpus, name, s, env) for s, env in envs.items()}


def measure(workers, rounds, profile=False):
    """One case's workers (from start): built, checked, then timed alternately `rounds` times
    (best median kept), the torch reference once in ours, and for a GB/s row a device copy of
    its bytes.  Returns (info per system, best ms)."""
    info = {s: w.read(900) for s, w in workers.items()}
    for s, w in workers.items():
        if info[s].get("built"):
            info[s].update(w.ask("check"))
    best = {}
    for _ in range(rounds):
        for s, w in workers.items():
            if info[s].get("ready"):
                r = w.ask("time")
                if "ms" in r:
                    if r["ms"] < best.get(s, 1e30) and r.get("config"):
                        info[s]["config"] = r["config"]
                    best[s] = min(best.get(s, 1e30), r["ms"])
                else:
                    info[s] = dict(info[s], ready=False, **r)
    for s, w in workers.items():
        if profile and info[s].get("ready"):
            info[s]["profile"] = w.ask("profile")
    if info["ours"].get("ready"):
        r = workers["ours"].ask("torch")
        if "ms" in r:
            best["torch"] = r["ms"]
        if info["ours"].get("unit") == "GB/s":
            r = workers["ours"].ask("copy")
            if "ms" in r:
                best["copy"] = r["ms"]
    for w in workers.values():
        w.close()
    return info, best


def rate(work, ms, unit):
    return work / (ms * 1e-3) / (1e12 if unit == "TFLOP/s" else 1e9)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", help="TileLang's examples folder (CORPUS/tilelang/examples)")
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    ap.add_argument("--tuned", action="store_true",
                    help="the best-configuration rows instead: each system's fastest right configuration of one menu")
    ap.add_argument("--peer", default="/tmp/peer")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="", help="run only the cases whose name contains one of these comma-separated substrings")
    ap.add_argument("--ahead", type=int, default=0, help="build this many upcoming cases while one is timed")
    ap.add_argument("--json", help="append one JSON line per row to this file (to join split runs)")
    ap.add_argument("--ab", metavar="KEY=VALUE,...",
                    help="also time ours built with these pass configs (TILESCALE_PASS_CONFIGS), alternating with "
                         "the other two in the same rounds, and print its speed over ours as built (B/A)")
    ap.add_argument("--profile", action="store_true",
                    help="also print each system's kernels under torch.profiler: their summed time per call "
                         "and the call's span on the GPU, from the L2 flush's end to its last kernel's end "
                         "(the difference: gaps the host leaves)")
    ap.add_argument("--worker", nargs=2, metavar=("CASE", "SYSTEM"))
    a = ap.parse_args()
    rows = TUNED if a.tuned else CASES
    if a.list:
        return print("\n".join(rows))
    if not a.corpus:
        ap.error("the corpus folder is required")
    if a.worker:
        return worker(a.corpus, a.worker[0], a.worker[1])
    envs = {"ours": dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")),
            "peer": dict(os.environ, PYTHONPATH=a.peer, TILELANG_CACHE_DIR=os.environ.get("TILELANG_CACHE_DIR", "/tmp/tlcache"))}
    envs["ours"].setdefault("TILESCALE_LIB", os.path.join(ROOT, "build", "libtilescale.so"))
    if a.ab:
        envs["ours_b"] = dict(envs["ours"], TILESCALE_PASS_CONFIGS=a.ab)
        print("B = ours with TILESCALE_PASS_CONFIGS=%s, timed in the same rounds; B/A = its speed over ours" % a.ab)
    names = [n for n in rows if not a.only or any(part and part in n for part in a.only.split(","))]
    width = max([len(n) for n in names] + [28])
    print("%-*s %9s %9s %9s %8s  %-7s  %s" % (width, "example (own configuration)", "torch", "TileLang", "ours", "ours/TL",
                                           "unit", "copy GB/s, ours/copy" + ("; ours B, B/A" if a.ab else "")))
    ratios, ab_ratios = [], []
    pending = {}
    for i, name in enumerate(names):
        for later in names[i:i + 1 + max(0, a.ahead)]:
            if later not in pending:
                pending[later] = start(a.corpus, later, envs)
        info, best = measure(pending.pop(name), a.rounds, a.profile)
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
        vs_copy = ""
        if "copy" in best:
            copy_rate = rate(work, best["copy"], unit)
            vs_copy = "%9.1f" % copy_rate
            if "ours" in best:
                vs_copy += " %5.2f" % (rate(work, best["ours"], unit) / copy_rate)
        if a.ab:
            b = best.get("ours_b")
            ab = best["ours"] / b if b and "ours" in best else None
            if ab:
                ab_ratios.append(ab)
            vs_copy += "; B %s, B/A %s" % ("%.1f" % rate(work, b, unit) if b else
                                           "WRONG" if info.get("ours_b", {}).get("wrong") else "error",
                                           "%.3f" % ab if ab else "-")
        print("%-*s %s %8s  %-7s  %s" % (width, name, " ".join(cols), "%.2f" % ratio if ratio else "-", unit, vs_copy))
        if a.json:
            with open(a.json, "a") as f:
                f.write(json.dumps({"case": name, "unit": unit, "ratio": ratio,
                                    **{s: rate(work, best[s], unit) for s in best},
                                    **{s + "_status": ("wrong" if r.get("wrong") else r.get("error", "ok"))
                                       for s, r in info.items()},
                                    **{s + "_config": r["config"] for s, r in info.items() if r.get("config")},
                                    **{s + "_profile": r["profile"] for s, r in info.items()
                                       if "busy_us" in r.get("profile", {})}}) + "\n")
        if a.tuned:
            print("    best configuration: TileLang %s, ours %s%s" % (
                info.get("peer", {}).get("config", "-"), info.get("ours", {}).get("config", "-"),
                "".join(", %s %d of %d right" % (s, info[s]["configs_right"], info[s]["configs"])
                        for s in ("peer", "ours") if "configs" in info.get(s, {}))))
        for s in [x for x in ("peer", "ours", "ours_b") if x in info]:
            r = info.get(s, {})
            p = r.get("profile")
            if p and "error" in p:
                print("    %s profile: %s" % (s, p["error"]))
            elif p:
                print("    %s profile: busy %.1f us, span %.1f us (gaps %.1f): %s" % (
                    s, p["busy_us"], p["span_us"], p["span_us"] - p["busy_us"],
                    ", ".join("%s %.1f" % (k, t) for k, t in p["kernels"])))
            if "error" in r:
                print("    %s: %s" % (s, r["error"]))
            elif r.get("wrong"):
                print("    %s: wrong, max error %.4g where |ref| max is %.4g" % (s, r["max_err"], r["ref_max"]))
    if ratios:
        print("geomean ours/TileLang over %d rows: %.2f" % (len(ratios), math.exp(sum(map(math.log, ratios)) / len(ratios))))
    if ab_ratios:
        print("geomean B/A (%s) over %d rows: %.3f" % (a.ab, len(ab_ratios),
                                                   math.exp(sum(map(math.log, ab_ratios)) / len(ab_ratios))))


if __name__ == "__main__":
    main()
