"""spills.py — which corpus kernels spill registers: every `hopper` row of tests/corpus/manifest.tsv
compiled with the CLI to PTX for sm_90a, then assembled by ptxas -v (the CUDA toolkit's), one
line per kernel that spills, with its spill bytes and registers, and a count.

    python3 tests/corpus/spills.py [--corpus DIR] [--cli build/tilescale] [-j 2] [--only SUBSTR,...]

Why: a spill in a kernel's loop costs local-memory traffic on every iteration (the GQA backward
kernel's 36 bytes were 604 MB under ncu on an H100), and ptxas reports it on any machine with
the toolkit, no GPU needed.  Warp-specialized kernels are assembled with their setmaxnreg
budgets, so their figures are the consumers' and the producer's as they run.  Rows that do not
compile are listed as such (check_corpus.py is the test for that).  Exit status 0: a report,
not a test."""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROPS = re.compile(r"Function properties for (\S+)\n\s+\d+ bytes stack frame, (\d+) bytes spill stores.*?\n"
                   r"(?:.*\n)*?.*?Used (\d+) registers")


def hopper_rows(only):
    rows = []
    with open(os.path.join(ROOT, "tests", "corpus", "manifest.tsv")) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if line.startswith("#") or len(cols) < 5 or cols[4] != "hopper":
                continue
            if only and not any(o in cols[1] + ":" + cols[2] for o in only.split(",")):
                continue
            rows.append(cols)
    return rows


def assemble(row, corpus, cli):
    """(row, [(kernel, spill bytes, registers)]) or (row, None) when the row does not compile."""
    with tempfile.TemporaryDirectory() as tmp:
        ptx = os.path.join(tmp, "k.ptx")
        cmd = [cli, "compile", os.path.join(corpus, row[1]), "-k", row[2], "--emit", "ptx", "--arch", "sm_90a",
               "--no-cache", "-o", ptx]
        for kv in (shlex.split(row[3]) if row[3] != "-" else []):
            cmd += ["-D", kv]
        if subprocess.run(cmd, capture_output=True, timeout=300).returncode:
            return row, None
        p = subprocess.run(["ptxas", "-arch=sm_90a", "-v", ptx, "-o", os.devnull], capture_output=True, text=True,
                           timeout=600)
        return row, [(k, int(s), int(r)) for k, s, r in PROPS.findall(p.stderr)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "tilescale"))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--only", default="", help="rows whose FILE:FUNC contains one of these comma-separated substrings")
    a = ap.parse_args()
    if not os.path.isdir(a.corpus):
        sys.exit("spills.py: no corpus at %s (--corpus DIR)" % a.corpus)
    rows = hopper_rows(a.only)
    spilling = kernels = 0
    with ThreadPoolExecutor(a.j) as ex:
        for row, found in ex.map(lambda r: assemble(r, a.corpus, a.cli), rows):
            if found is None:
                print("DOES NOT COMPILE  %s:%s" % (row[1], row[2]))
                continue
            for kernel, spill, regs in found:
                kernels += 1
                if spill:
                    spilling += 1
                    print("SPILL %6d B  %3d regs  %s:%s [%s]" % (spill, regs, row[1], row[2], kernel))
    print("spills: %d of %d kernels (%d rows)" % (spilling, kernels, len(rows)))


if __name__ == "__main__":
    main()
