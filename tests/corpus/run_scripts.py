"""run_scripts.py — runs TileLang's own example scripts unchanged (`python3 FILE`, in the file's
folder) with this project's `tilelang` package, on the GPU, and sorts the outcomes.

    python3 tests/corpus/run_scripts.py CORPUS_EXAMPLES_DIR [-j 6] [--timeout 240] [--only SUBSTR]
            [--json OUT.json] [--shard I/N] [--tests] [--logs DIR]

Each script builds its inputs, runs its kernels and checks them against its own torch
reference, so an assertion failure after the kernels ran is a WRONG result (the class of bug
that matters most), told apart from kernels that do not compile (COMPILE), scripts that need
something the environment lacks (MISSING: a third-party module), time-outs and other errors.
Scripts for other hardware (AMD, Blackwell sm100/sm120/tcgen05) and TileLang's deliberately
broken autodd inputs are skipped, as are scripts whose kernels tests/corpus/manifest.tsv marks
for other hardware only (skip:blackwell, skip:amd).  Classes beyond the obvious ones: OOM (the
GPU ran out of memory; such scripts run again alone after the others, and keep their class
from that run), SKIP (a TileLang test file whose tests all skipped themselves, e.g. for
another compute capability), and MISSING also for a reference the script imports from a
module that is not installed (a NameError for a name from `from M import ...` of an absent
M) or a file of the example that the corpus does not carry.  --tests adds TileLang's own tests of the examples
(test_example_*.py beside them), run under pytest when it is installed, else as scripts.  One
line per script, then per-class totals and "N passed, N failed" (passed: PASS; the share among
the scripts whose kernels compile, i.e. not COMPILE, MISSING or SKIP, is the issue's measure).  Exits
1 when a script gave a WRONG result.  `make check-tilelang-scripts` runs it."""
import argparse
import concurrent.futures as cf
import importlib.util
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP_DIRS = ("amd", "autodd", "blockscaled_gemm_sm100", "flash_attention_sm100", "gemm_sm120", "gemm_tcgen05",
             "bitnet-1.58b")
SKIP_NAME = re.compile(r"(sm100|sm120|tcgen05|triton|_amd|cdna)", re.I)

CLASSES = [
    ("OOM", re.compile(r"OutOfMemoryError|CUDA out of memory|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation")),
    ("WRONG", re.compile(r"AssertionError|Mismatched elements|not close|assert_allclose|Tensor-likes are not")),
    ("COMPILE", re.compile(r"TS_ERR_COMPILE|TS_ERR_UNSUPPORTED|TileScaleError")),
    ("MISSING", re.compile(r"ModuleNotFoundError|No module named")),
]


def other_hardware(corpus):
    """Script paths (under corpus) whose manifest rows are all for other hardware."""
    tags = {}
    with open(os.path.join(ROOT, "tests", "corpus", "manifest.tsv")) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if line.startswith("#") or len(cols) < 5 or not cols[1].startswith("tilelang/examples/"):
                continue
            tags.setdefault(cols[1][len("tilelang/examples/"):], set()).add(cols[4])
    return {os.path.join(corpus, rel) for rel, t in tags.items()
            if t and all(x in ("skip:blackwell", "skip:amd") for x in t)}


def scripts(corpus, only, tests=False):
    out = []
    foreign = other_hardware(corpus)
    for d, _, files in os.walk(corpus):
        rel = os.path.relpath(d, corpus)
        if rel.split(os.sep)[0] in SKIP_DIRS:
            continue
        for f in sorted(files):
            is_test = tests and f.startswith("test_example") and f.endswith(".py")
            if not is_test and (not f.endswith(".py") or f.startswith(("test_", "regression_", "benchmark_",
                                                                        "conftest"))):
                continue
            if SKIP_NAME.search(f):
                continue
            path = os.path.join(d, f)
            if path in foreign:
                continue
            text = open(path, errors="replace").read()
            if "__main__" not in text or "tilelang" not in text:
                continue
            if only and not any(o in path for o in only.split(",")):
                continue
            out.append(path)
    return sorted(out)


def first_error(text):
    lines = [l for l in text.splitlines() if l.strip()]
    for l in reversed(lines):
        if re.search(r"Error|error:|Exception|Traceback|Killed", l):
            return l.strip()[:300]
    return (lines[-1].strip()[:300] if lines else "(no output)")


def has_pytest():
    return subprocess.run([sys.executable, "-c", "import pytest"], capture_output=True).returncode == 0


def command(path, pytest):
    name = os.path.basename(path)
    if pytest and name.startswith("test_example"):
        return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name]
    return [sys.executable, name]


def save_log(logs, path, corpus, out):
    """The whole output of a script that did not pass, as LOGS/<folder>__<file>.log."""
    if logs:
        name = os.path.relpath(path, corpus).replace(os.sep, "__") + ".log"
        with open(os.path.join(logs, name), "w") as f:
            f.write(out)


def run_one(path, timeout, env, pytest=False, logs="", corpus=""):
    path, cls, why, secs, out = run_script(path, timeout, env, pytest)
    if cls != "PASS":
        save_log(logs, path, corpus, out)
    return path, cls, why, secs


def run_script(path, timeout, env, pytest):
    t0 = time.monotonic()
    try:
        p = subprocess.run(command(path, pytest), cwd=os.path.dirname(path), env=env,
                           capture_output=True, text=True, timeout=timeout, errors="replace")
        out, rc = (p.stdout or "") + (p.stderr or ""), p.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or "") if isinstance(e.stdout, str) else ""
        return path, "TIMEOUT", "ran past %d s" % timeout, time.monotonic() - t0, out
    secs = time.monotonic() - t0
    if rc == 0:
        return path, "PASS", "", secs, out
    if rc == 5 and re.search(r"no tests ran|No tests were collected", out) and re.search(r"skipped", out):
        return path, "SKIP", "every test skipped itself (%s)" % first_error(out), secs, out
    for name, pat in CLASSES:
        if pat.search(out):
            return path, name, first_error(out), secs, out
    why = missing_reference(path, out)
    if why:
        return path, "MISSING", why, secs, out
    return path, "ERROR", first_error(out), secs, out


def missing_reference(path, out):
    """Why a failure is the environment's: a NameError for a name the script imports from a
    module that is not installed (its reference implementation), or a file of the example
    folder that the corpus does not carry.  None otherwise."""
    m = re.search(r"NameError: name '(\w+)' is not defined", out)
    if m:
        text = open(path, errors="replace").read()
        for mod in re.findall(r"^\s*from\s+([\w.]+)\s+import\s+[^\n]*\b%s\b" % m.group(1), text, re.M):
            top = mod.split(".")[0]
            if importlib.util.find_spec(top) is None:
                return "reference %s comes from module %s, which is not installed" % (m.group(1), top)
    m = re.search(r"FileNotFoundError: .*?'([^']+)'", out)
    folder = os.path.dirname(os.path.abspath(path))
    if m and os.path.abspath(m.group(1)).startswith(folder + os.sep):
        return "the corpus does not carry %s" % os.path.relpath(m.group(1), folder)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("-j", type=int, default=6)
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--only", default="", help="only scripts whose path contains one of these comma-separated substrings")
    ap.add_argument("--json", default="")
    ap.add_argument("--shard", default="0/1", help="I/N: run every N-th script starting at I (split over calls)")
    ap.add_argument("--tests", action="store_true", help="also TileLang's test_example_*.py (under pytest)")
    ap.add_argument("--logs", default="", help="folder for the whole output of each script that does not pass")
    a = ap.parse_args()
    if not os.path.isdir(a.corpus):
        sys.exit("run_scripts.py: %s is not a folder (the corpus's tilelang/examples)" % a.corpus)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("TILESCALE_LIB", os.path.join(ROOT, "build", "libtilescale.so"))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if a.logs:
        os.makedirs(a.logs, exist_ok=True)
    si, sn = (int(x) for x in a.shard.split("/"))
    todo = scripts(a.corpus, a.only, a.tests)[si::sn]
    pytest = a.tests and has_pytest()
    print("running %d scripts, %d at a time, %d s each at most" % (len(todo), a.j, a.timeout), flush=True)
    results = []
    with cf.ThreadPoolExecutor(a.j) as ex:
        for path, cls, why, secs in ex.map(lambda p: run_one(p, a.timeout, env, pytest, a.logs, a.corpus), todo):
            rel = os.path.relpath(path, a.corpus)
            results.append({"script": rel, "class": cls, "why": why, "seconds": round(secs, 1)})
            print("%-8s %-70s %6.1fs %s" % (cls, rel, secs, why), flush=True)
    oom = [r for r in results if r["class"] == "OOM"]
    if oom:
        print("running %d script(s) that ran out of GPU memory again, one at a time" % len(oom), flush=True)
    for r in oom:
        path, cls, why, secs = run_one(os.path.join(a.corpus, r["script"]), a.timeout, env, pytest, a.logs,
                                         a.corpus)
        r.update({"class": cls, "why": why, "seconds": round(secs, 1)})
        print("%-8s %-70s %6.1fs %s" % (cls, r["script"], secs, why), flush=True)
    totals = {}
    for r in results:
        totals[r["class"]] = totals.get(r["class"], 0) + 1
    print("scripts: %d; " % len(results) + ", ".join("%s %d" % kv for kv in sorted(totals.items())))
    passed = totals.get("PASS", 0)
    compiled = len(results) - sum(totals.get(c, 0) for c in ("COMPILE", "MISSING", "SKIP"))
    print("tilelang scripts: %d of %d pass where the kernels compile (%.0f%%)"
          % (passed, compiled, 100.0 * passed / compiled if compiled else 0.0))
    print("%d passed, %d failed" % (passed, len(results) - passed))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    sys.exit(1 if totals.get("WRONG") else 0)


if __name__ == "__main__":
    main()
