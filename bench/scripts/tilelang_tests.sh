#!/bin/bash
# tilelang_tests.sh — TileLang's own tests (testing/python/<folder>/test_*.py of tile-ai/tilelang,
# the corpus commit a35008a) run unchanged under pytest with this project's `tilelang` package, on
# the GPU machine: a measure of what real TileLang kernels and scripts beyond the corpus examples
# do here.  Input, never source: the tests live only in the git-ignored .tltests/ folder.
# Set up here (a machine with network), once:
#   git -C <tilelang mirror> archive a35008a testing/python | tar -x -C /tmp
#   mkdir -p .tltests && cp -r /tmp/testing/python/{language,kernel,issue,jit,math,...} .tltests/
#   pip download pytest -d .tltests/_wheels && for w in .tltests/_wheels/*.whl; do unzip -qo $w -d .tltests/_site; done
# Run (device call, carry [".corpus", ".tltests"]):  bash bench/scripts/tilelang_tests.sh
#   J files at a time (default 10), TMO seconds per file (default 200), LIMIT seconds in all (300).
# Leaves every file's pytest output in $OUT/tl.tgz (tl/<folder>_<file>.log, tl/rc.txt: exit code,
# file, pytest's summary line) and prints the passed/failed/error/skipped totals per folder.
set -u
make -s -j16 all >/dev/null 2>&1
export TILESCALE_LIB=$PWD/build/libtilescale.so
cd .tltests || { echo "tilelang_tests: no .tltests folder (see the comment at the top)"; exit 2; }
export PYTHONPATH=$PWD/_site:$PWD/../python:$PWD/../.corpus/corpus/tilelang
rm -rf /tmp/tl && mkdir -p /tmp/tl
for d in */; do case $d in _*) ;; *) find "$d" -name 'test_*.py' | sort ;; esac; done > /tmp/tl/files.txt
timeout "${LIMIT:-300}" xargs -a /tmp/tl/files.txt -P "${J:-10}" -I{} sh -c 'f={}; n=$(echo $f | tr / _); cd $(dirname $f) &&
  timeout '"${TMO:-200}"' python3 -m pytest -q -p no:cacheprovider -rA --tb=short $(basename $f) > /tmp/tl/$n.log 2>&1;
  echo "$? $f $(tail -1 /tmp/tl/$n.log)" >> /tmp/tl/rc.txt'
[ -n "${OUT:-}" ] && tar czf "$OUT/tl.tgz" -C /tmp tl
python3 - /tmp/tl/rc.txt <<'PY'
import collections, re, sys
tot = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    folder = line.split()[1].split("/")[0]
    for n, k in re.findall(r"(\d+) (passed|failed|errors?|skipped)", line):
        tot[folder][k.rstrip("s") if k.startswith("error") else k] += int(n)
        tot["all"][k.rstrip("s") if k.startswith("error") else k] += int(n)
for f in sorted(tot):
    c = tot[f]
    print("%-12s passed %4d  failed %4d  error %4d  skipped %4d" % (f, c["passed"], c["failed"], c["error"], c["skipped"]))
PY
