"""check_corpus.py — compiles every `hopper` row of tests/corpus/manifest.tsv with the CLI to PTX
for sm_90a and compares the outcome with the committed baseline (tests/corpus/baseline.txt).

    python3 tests/corpus/check_corpus.py [--corpus DIR] [--cli build/tilescale] [-j 2] [--timeout 30]
                                         [--only SUBSTR] [--update] [--errors]

Why: the corpus (TileLang's and TileScale's own example kernels) is what users write; the
baseline records which factories compile today, so a change that breaks one is caught in the
CPU suite while factories that start compiling are reported (and `--update` records them).

Each row runs `tilescale compile FILE -k FUNC -D name=value... --emit ptx --arch sm_90a` with the
binary cache off (cold compile times), two rows at a time, each with a time limit.  Prints every
failure with its first error line, per-family totals, the most frequent first errors (grouped by
their text with names and numbers blanked), the median cold compile time, and last the line
    corpus: N passed, N failed
where passed counts rows that compiled and failed counts only regressions (baseline rows that no
longer compile) and manifest problems (a factory missing from the manifest or a stale row, as
scan.py --check reports them).  Rows that fail and are not in the baseline are known gaps.
Exit status 1 when failed > 0."""
import argparse
import collections
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import scan  # noqa: E402  (the manifest reader and the completeness check)


def key(row):
    """A row's name in the baseline: FILE:FUNC."""
    return "%s:%s" % (row["file"], row["func"])


def first_error(text):
    """The first diagnostic ("file:line:col: error: ..." or NVRTC's "k.cu(12): error: ..."), else the
    first line that mentions an error, else the first line."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error:" in l and not l.startswith("tilescale:"):
            return l
    for l in lines:
        if "error" in l.lower():
            return l
    return lines[0] if lines else "(no output)"


def pattern(err):
    """An error line without its location, with numbers and layouts blanked, to group alike errors
    (names stay: they say which construct is missing)."""
    err = re.sub(r"^\S+?(:\d+:\d+|\(\d+\)): (error: )?", "", err)   # file:line:col: / k.cu(12):
    err = re.sub(r"^tilescale: compilation failed: ", "", err)
    err = re.sub(r"/\S+", "PATH", err)
    err = re.sub(r"\[[^]]*\]", "[...]", err)
    err = re.sub(r"\b\d+\b", "N", err)
    return err[:120]


def compile_row(row, args, cache):
    """Runs the CLI on one row; returns (ok, seconds, first error line)."""
    cmd = [args.cli, "compile", os.path.join(args.corpus, row["file"]), "-k", row["func"]]
    if row["params"] != "-":
        for p in row["params"].split():  # values never hold spaces: tuples are written (64,128)
            cmd += ["-D", p]
    cmd += ["--emit", "ptx", "--arch", "sm_90a", "--no-cache", "-o", os.devnull]
    env = dict(os.environ, TILESCALE_CACHE_DIR=cache, TILESCALE_DISABLE_CACHE="1")
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, time.monotonic() - t0, "timeout: still compiling after %d s" % args.timeout
    secs = time.monotonic() - t0
    if p.returncode == 0:
        return True, secs, ""
    return False, secs, first_error(p.stderr + p.stdout).replace(args.corpus + os.sep, "")


def read_baseline(path):
    if not os.path.exists(path):
        return set()
    with open(path) as fh:
        return {l.strip() for l in fh if l.strip() and not l.startswith("#")}


def write_baseline(path, keys):
    with open(path, "w") as fh:
        fh.write("# Corpus rows (manifest.tsv FILE:FUNC) that compile to PTX for sm_90a today.\n"
                 "# check_corpus.py fails when one of them stops compiling; --update rewrites this file.\n")
        for k in sorted(keys):
            fh.write(k + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=os.environ.get("CORPUS", os.path.join(ROOT, "..", "shared", "corpus")))
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "tilescale"))
    ap.add_argument("--manifest", default=os.path.join(HERE, "manifest.tsv"))
    ap.add_argument("--baseline", default=os.path.join(HERE, "baseline.txt"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=30, help="seconds per row")
    ap.add_argument("--only", default="", help="only rows whose FILE:FUNC contains this")
    ap.add_argument("--update", action="store_true", help="rewrite the baseline with the rows that compile")
    ap.add_argument("--errors", action="store_true", help="list every grouped first error, not only the top 15")
    args = ap.parse_args()
    if not os.path.isdir(args.corpus):
        print("skip corpus: %s not found" % args.corpus)
        return 0
    args.corpus = os.path.abspath(args.corpus)
    if not os.access(args.cli, os.X_OK):
        sys.exit("check_corpus: no CLI at %s (make first, or pass --cli)" % args.cli)

    problems = scan.check(args.corpus, args.manifest)  # prints what is missing or stale
    rows = [r for r in scan.read_manifest(args.manifest) if args.only in key(r)]
    todo = [r for r in rows if r["status"] == "hopper"]
    baseline = read_baseline(args.baseline)

    with tempfile.TemporaryDirectory(prefix="corpus-cache-") as cache:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(lambda r: compile_row(r, args, cache), todo))

    fams = collections.OrderedDict()  # family -> [rows, hopper rows, compiled]
    for row in rows:
        fams.setdefault(row["family"], [0, 0, 0])[0] += 1
    compiled, regressions, newly, errors = set(), [], [], collections.Counter()
    for row, (ok, secs, err) in zip(todo, results):
        fam = fams[row["family"]]
        fam[1] += 1
        if ok:
            fam[2] += 1
            compiled.add(key(row))
            if key(row) not in baseline:
                newly.append(key(row))
            continue
        errors[pattern(err)] += 1
        tag = "REGRESSION" if key(row) in baseline else "FAIL"
        if tag == "REGRESSION":
            regressions.append(key(row))
        print("%s %s: %s" % (tag, key(row), err))

    print("\n  %-28s %5s %7s %9s" % ("family", "rows", "hopper", "compiled"))
    for fam, (n, hop, ok) in fams.items():
        print("  %-28s %5d %7d %9d" % (fam, n, hop, ok))
    print("  %-28s %5d %7d %9d" % ("total", len(rows), len(todo), len(compiled)))
    if errors:
        print("\nfirst errors, most frequent first:")
        for err, n in errors.most_common(None if args.errors else 15):
            print("  %4d  %s" % (n, err))
    times = [secs for (ok, secs, _) in results if ok]
    if times:
        print("\nmedian cold compile time: %.2f s over %d rows (max %.2f s)" % (statistics.median(times), len(times), max(times)))
    for k in newly:
        print("NEW %s compiles (not in the baseline%s)" % (k, "; recorded" if args.update else "; --update records it"))
    if args.update and not args.only:
        write_baseline(args.baseline, compiled)
        print("baseline: %d rows written to %s" % (len(compiled), os.path.relpath(args.baseline, ROOT)))
    failed = len(regressions) + problems
    print("corpus: %d passed, %d failed" % (len(compiled), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
