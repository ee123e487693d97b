"""scan.py — lists every kernel factory in the corpus, and checks that tests/corpus/manifest.tsv
has exactly one row for each of them.

    python3 tests/corpus/scan.py [--corpus DIR]            one "FILE<TAB>FUNC" line per factory
    python3 tests/corpus/scan.py --check [--corpus DIR]    compare with the manifest; exit 1 on a
                                                           missing, stale or duplicated row

Why: the manifest (the list check_corpus.py compiles) is written by hand from each file's main(),
so this scanner is what keeps it complete when the corpus is refreshed from upstream.

A kernel factory is an outermost Python function of a corpus file (test_*.py included) that
  - is decorated with a TileLang `jit` (@tilelang.jit, @tl.jit, @jit(...) imported from tilelang), or
  - is itself a top-level @T.prim_func, or
  - defines a nested @T.prim_func (a plain builder: `def f(M, N): @T.prim_func def main..; return main`,
    compiled by the caller through tilelang.compile(f(...))).
Functions nested inside a factory (the prim_funcs, T.macro helpers) belong to it and are not counted.
Triton kernels (@triton.jit) are not TileLang factories and are not counted.
The AST is read, never executed: the corpus imports torch, CUDA and friends."""
import argparse
import ast
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SUBDIRS = ("tilelang/examples", "tilescale/examples/distributed")  # the corpus' two trees
JIT_NAMES = {"tilelang.jit", "tl.jit", "jit"}


def decorator_name(d):
    """`@tilelang.jit(out_idx=[3])` -> "tilelang.jit"."""
    return ast.unparse(d.func if isinstance(d, ast.Call) else d)


def is_prim_func(fn):
    return any(decorator_name(d) == "T.prim_func" for d in fn.decorator_list)


def factories_of(tree):
    """Names of the kernel factories of one parsed file, in source order."""
    found = []

    def walk(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                decs = {decorator_name(d) for d in child.decorator_list}
                builds = any(isinstance(n, ast.FunctionDef) and n is not child and is_prim_func(n)
                             for n in ast.walk(child))
                if decs & JIT_NAMES or "T.prim_func" in decs or builds:
                    found.append(child.name)
                    continue  # its nested functions are part of it
            walk(child)
    walk(tree)
    return found


def scan(corpus):
    """Sorted (file relative to the corpus, function) pairs; files that do not parse are errors."""
    rows = []
    for sub in SUBDIRS:
        for d, dirs, files in os.walk(os.path.join(corpus, sub)):
            dirs.sort()
            for f in sorted(files):
                if not f.endswith(".py"):
                    continue
                path = os.path.join(d, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    tree = ast.parse(fh.read(), path)
                rel = os.path.relpath(path, corpus)
                rows += [(rel, name) for name in factories_of(tree)]
    return rows


def read_manifest(path):
    """Rows of the manifest as dicts (see the header of manifest.tsv for the columns)."""
    rows = []
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 6:
                sys.exit("%s:%d: expected 6 tab-separated columns, got %d" % (path, n, len(cols)))
            fam, rel, func, params, status, source = cols
            rows.append({"family": fam, "file": rel, "func": func, "params": params, "status": status,
                         "source": source, "line": n})
    return rows


def check(corpus, manifest):
    """Prints what differs between the corpus and the manifest; returns the number of problems."""
    found = scan(corpus)
    rows = read_manifest(manifest)
    listed = [(r["file"], r["func"]) for r in rows]
    problems = 0
    for key in sorted(set(found) - set(listed)):
        print("manifest misses factory %s %s" % key)
        problems += 1
    for key in sorted(set(listed) - set(found)):
        print("manifest lists %s %s, which the corpus no longer defines" % key)
        problems += 1
    for key in sorted({k for k in listed if listed.count(k) > 1}):
        print("manifest lists %s %s more than once" % key)
        problems += 1
    for r in rows:
        if r["status"] != "hopper" and not r["status"].startswith("skip:"):
            print("%s:%d: status must be 'hopper' or 'skip:<reason>', not %r" % (manifest, r["line"], r["status"]))
            problems += 1
    return problems


def totals(corpus):
    """Factories and files per corpus tree (compare with the corpus README's counts)."""
    rows = scan(corpus)
    for sub in SUBDIRS:
        mine = [r for r in rows if r[0].startswith(sub + "/")]
        print("%s: %d kernel factories in %d files" % (sub, len(mine), len({r[0] for r in mine})))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=os.environ.get("CORPUS", os.path.join(ROOT, "..", "shared", "corpus")))
    ap.add_argument("--manifest", default=os.path.join(HERE, "manifest.tsv"))
    ap.add_argument("--check", action="store_true", help="compare the manifest with the corpus")
    ap.add_argument("--totals", action="store_true", help="count factories and files per tree")
    args = ap.parse_args()
    if not os.path.isdir(args.corpus):
        sys.exit("corpus not found: %s" % args.corpus)
    if args.check:
        n = check(args.corpus, args.manifest)
        print("manifest: %s" % ("complete" if n == 0 else "%d problem(s)" % n))
        sys.exit(1 if n else 0)
    if args.totals:
        totals(args.corpus)
        return
    for rel, func in scan(args.corpus):
        print("%s\t%s" % (rel, func))


if __name__ == "__main__":
    main()
