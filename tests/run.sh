#!/usr/bin/env bash
# run.sh — the CPU test suite behind `make test` (and CI).  Runs, in order:
#   1. unit tests (build/test_unit); 1b. the Python binding (tests/python/test_binding.py),
#      the tilelang package over it (tests/python/test_tilelang.py; host calls through
#      CPython: test_host_call.py; tilelang.tools.Analyzer:
#      test_analyzer.py), TileScale's host API
#      (test_distributed.py: launcher environments, a host-only group of two), the C call path
#      (tests/python/test_fastcall.py), the wheel (test_wheel.py: pip wheel, install into a
#      temporary target, import), `make install` with pkg-config (test_make_install.py) and
#      bench-tilelang's row logic (test_bench_driver.py), host-side layouts and
#      tilelang.tools.plot_layout (test_plot_layout.py)
#   2. golden IR: every examples/*.py and tests/front/*.py with a `# tilescale-test:` line
#      is compiled with --emit ir and compared with its golden .ir file
#   2b. pass goldens: every tests/codegen/*.py is compiled with its `# tilescale-test:` ARGS
#      and --dump-after its `# tilescale-dump: PASS`, and compared with its .ir file
#   2c. stats goldens: every tests/stats/*.py is compiled with --emit stats and compared with
#      its .json file (FLOPs and global bytes counted from the tile-level IR)
#   3. diagnostics: every tests/diag/*.py is compiled and its stderr compared with .err
#      (exit code 1, or its `# tilescale-exit: N` line)
#   4. NVRTC: every example is compiled to a cubin for sm_80 and sm_90a (no GPU needed)
#   5. fuzz smoke: the fuzz corpus replayed through the harness (build/fuzz_replay)
#   6. hostile input: tests/hostile/*.py with time and memory limits
#   7. corpus: every Hopper kernel factory of TileLang's and TileScale's examples compiled to PTX
#      (tests/corpus/check_corpus.py; CORPUS=DIR, default ../shared/corpus beside the checkout)
# and ends with one line "N passed, N failed".  UPDATE=1 rewrites missing/changed goldens.
set -u
BUILD=${1:-build}
TS="$BUILD/tilescale"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TILESCALE_CACHE_DIR="$tmp/cache"
export TILESCALE_VERIFY=1  # ir_verify after every pass

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# 1. unit tests: count their own passed/failed line
if out=$("$BUILD/test_unit" 2>"$tmp/unit.err"); then u_rc=0; else u_rc=$?; fi
echo "$out"
u_pass=$(echo "$out" | sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
u_fail=$(echo "$out" | sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
if [ -z "$u_pass" ]; then
  cat "$tmp/unit.err"
  bad "unit test binary crashed or printed no summary"
else
  [ "$u_fail" != 0 ] && cat "$tmp/unit.err"
  pass=$((pass + u_pass))
  fail=$((fail + u_fail))
  # All passed but a non-zero exit: a sanitizer report at exit (leak) under `make asan`.
  if [ "$u_fail" = 0 ] && [ "$u_rc" != 0 ]; then
    bad "unit test binary exited with status $u_rc"; tail -30 "$tmp/unit.err" | sed 's/^/    /'
  fi
fi

# 1b. Python binding (python/tilescale over $BUILD/libtilescale.so), python/tilelang, the C
#     call path (python/tilescale/_fastcall.c, built beside the library), the wheel and
#     `make install` (both reusing $BUILD): one pass/fail each.  Skipped without python3, and
#     for sanitizer builds (their .so cannot be dlopen'ed by python3).
case "$BUILD" in /*) py_lib="$BUILD/libtilescale.so" ;; *) py_lib="$ROOT/$BUILD/libtilescale.so" ;; esac
if ! command -v python3 >/dev/null 2>&1; then
  echo "skip python binding: python3 not found"
elif readelf -d "$py_lib" 2>/dev/null | grep -q 'lib[a-z]*san\.so'; then
  echo "skip python binding: $py_lib is a sanitizer build"
else
  for t in test_binding test_tilelang test_host_call test_analyzer test_distributed test_fastcall test_wheel test_make_install test_bench_driver test_plot_layout; do
    if TILESCALE_LIB="$py_lib" python3 "tests/python/$t.py" >"$tmp/py.out" 2>&1; then
      ok
    else
      bad "python ($t.py)"; tail -30 "$tmp/py.out" | sed 's/^/    /'
    fi
  done
fi

# The arguments of a test file: its `# tilescale-test: ARGS` line.
test_args() { sed -n 's/^# tilescale-test: //p' "$1" | head -1; }

# 2. golden IR
golden_for() {
  case "$1" in
    examples/*) echo "tests/front/examples/$(basename "${1%.py}").ir" ;;
    *) echo "${1%.py}.ir" ;;
  esac
}
for f in examples/*.py tests/front/*.py; do
  [ -f "$f" ] || continue
  args=$(test_args "$f")
  [ -n "$args" ] || continue
  g=$(golden_for "$f")
  # shellcheck disable=SC2086
  if ! "$TS" compile "$f" $args --emit ir -o "$tmp/out.ir" 2>"$tmp/err"; then
    bad "golden $f: compile failed"; sed 's/^/    /' "$tmp/err" | head -20; continue
  fi
  if [ ! -f "$g" ] || ! cmp -s "$tmp/out.ir" "$g"; then
    if [ "${UPDATE:-0}" = 1 ]; then
      mkdir -p "$(dirname "$g")"; cp "$tmp/out.ir" "$g"; echo "updated $g"; ok
    else
      bad "golden $f: IR differs from $g"; diff -u "$g" "$tmp/out.ir" 2>&1 | head -30 | sed 's/^/    /'
    fi
  else
    ok
  fi
done

# 2b. pass goldens: the IR right after one pass (tests/codegen/X.py -> X.ir)
for f in tests/codegen/*.py; do
  [ -f "$f" ] || continue
  args=$(test_args "$f")
  pass_name=$(sed -n 's/^# tilescale-dump: //p' "$f" | head -1)
  [ -n "$args" ] && [ -n "$pass_name" ] || { bad "pass golden $f: needs '# tilescale-test:' and '# tilescale-dump:' lines"; continue; }
  g="${f%.py}.ir"
  # shellcheck disable=SC2086
  if ! "$TS" compile "$f" $args --emit ir --dump-after "$pass_name" -o "$tmp/out.ir" 2>"$tmp/err"; then
    bad "pass golden $f: compile failed"; sed 's/^/    /' "$tmp/err" | head -20; continue
  fi
  if [ ! -f "$g" ] || ! cmp -s "$tmp/out.ir" "$g"; then
    if [ "${UPDATE:-0}" = 1 ]; then cp "$tmp/out.ir" "$g"; echo "updated $g"; ok
    else bad "pass golden $f: IR after $pass_name differs from $g"; diff -u "$g" "$tmp/out.ir" 2>&1 | head -30 | sed 's/^/    /'; fi
  else
    ok
  fi
done

# 2c. stats goldens: --emit stats (tests/stats/X.py -> X.json)
for f in tests/stats/*.py; do
  [ -f "$f" ] || continue
  args=$(test_args "$f")
  [ -n "$args" ] || { bad "stats golden $f: needs a '# tilescale-test:' line"; continue; }
  g="${f%.py}.json"
  # shellcheck disable=SC2086
  if ! "$TS" compile "$f" $args --emit stats -o "$tmp/out.json" 2>"$tmp/err"; then
    bad "stats golden $f: compile failed"; sed 's/^/    /' "$tmp/err" | head -20; continue
  fi
  if [ ! -f "$g" ] || ! cmp -s "$tmp/out.json" "$g"; then
    if [ "${UPDATE:-0}" = 1 ]; then cp "$tmp/out.json" "$g"; echo "updated $g"; ok
    else bad "stats golden $f: stats differ from $g"; diff -u "$g" "$tmp/out.json" 2>&1 | head -30 | sed 's/^/    /'; fi
  else
    ok
  fi
done

# 3. diagnostics: the compile must fail (exit 1, or the file's `# tilescale-exit: N` line:
#    2 for a command-line mistake such as -k naming no function, 0 for a warning on a compile
#    that succeeds) and print exactly the .err text
for f in tests/diag/*.py; do
  [ -f "$f" ] || continue
  args=$(test_args "$f")
  want=$(sed -n 's/^# tilescale-exit: //p' "$f" | head -1)
  want=${want:-1}
  e="${f%.py}.err"
  # shellcheck disable=SC2086
  "$TS" compile "$f" $args --emit ir -o "$tmp/diag.out" 2>"$tmp/diag.err" >/dev/null
  rc=$?
  if [ $rc -ne "$want" ]; then bad "diag $f: exit code $rc, expected $want"; sed 's/^/    /' "$tmp/diag.err" | head; continue; fi
  if [ ! -f "$e" ] || ! cmp -s "$tmp/diag.err" "$e"; then
    if [ "${UPDATE:-0}" = 1 ]; then cp "$tmp/diag.err" "$e"; echo "updated $e"; ok
    else bad "diag $f: diagnostics differ from $e"; diff -u "$e" "$tmp/diag.err" 2>&1 | head -30 | sed 's/^/    /'; fi
  else
    ok
  fi
done

# 4. every example through NVRTC for sm_80 and sm_90a
for f in examples/*.py; do
  [ -f "$f" ] || continue
  args=$(test_args "$f")
  [ -n "$args" ] || continue
  for arch in sm_80 sm_90a; do
    # shellcheck disable=SC2086
    if "$TS" compile "$f" $args --emit cubin --arch $arch -o "$tmp/k.cubin" 2>"$tmp/err" && [ -s "$tmp/k.cubin" ]; then
      ok
    else
      bad "nvrtc $f ($arch)"; sed 's/^/    /' "$tmp/err" | head -20
    fi
  done
done

# 5. fuzz smoke: the committed fuzz corpus and seeds replayed through the harness built
#    without libFuzzer (tests/fuzz/fuzz_front.c); any crash or sanitizer report fails it.
if [ -x "$BUILD/fuzz_replay" ]; then
  if "$BUILD/fuzz_replay" tests/fuzz/seeds tests/fuzz/corpus >"$tmp/fuzz.out" 2>&1; then
    ok
  else
    bad "fuzz replay (tests/fuzz)"; tail -20 "$tmp/fuzz.out" | sed 's/^/    /'
  fi
fi

# 6. hostile input: every tests/hostile/*.py (harness.py) runs its cases with time and RSS
#    limits and ends with "hostile AREA: N passed, N failed"; its counts are added here.
if command -v python3 >/dev/null 2>&1; then
  for f in tests/hostile/*.py; do
    [ "$(basename "$f")" = harness.py ] && continue
    [ -f "$f" ] || continue
    case "$BUILD" in /*) bdir="$BUILD" ;; *) bdir="$ROOT/$BUILD" ;; esac
    out=$(TS_BUILD="$bdir" python3 "$f" 2>&1)
    line=$(echo "$out" | sed -n 's/^hostile .*: \([0-9]*\) passed, \([0-9]*\) failed.*$/\1 \2/p' | tail -1)
    if [ -z "$line" ]; then bad "hostile $f: no summary line"; echo "$out" | tail -20 | sed 's/^/    /'; continue; fi
    echo "$out" | grep -v '^hostile ' | sed -n '1,60p'
    echo "$out" | grep '^hostile '
    pass=$((pass + ${line% *}))
    fail=$((fail + ${line#* }))
  done
else
  echo "skip hostile input: python3 not found"
fi

# 7. corpus: the `hopper` rows of tests/corpus/manifest.tsv compiled to PTX for sm_90a.  Only
#    regressions (rows of tests/corpus/baseline.txt that stop compiling) and manifest gaps count as
#    failures; rows that never compiled are the corpus issue's backlog, listed by `make check-corpus`.
CORPUS=${CORPUS:-$ROOT/../shared/corpus}
if ! command -v python3 >/dev/null 2>&1; then
  echo "skip corpus: python3 not found"
elif [ ! -d "$CORPUS" ]; then
  echo "skip corpus: $CORPUS not found"
else
  # CORPUS_TIMEOUT: seconds per row (check_corpus's 30 by default; `make asan` gives sanitizer builds more)
  out=$(python3 tests/corpus/check_corpus.py --corpus "$CORPUS" --cli "$TS" --timeout "${CORPUS_TIMEOUT:-30}" 2>&1)
  line=$(echo "$out" | sed -n 's/^corpus: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' | tail -1)
  if [ -z "$line" ]; then
    bad "corpus: check_corpus.py printed no summary"; echo "$out" | tail -20 | sed 's/^/    /'
  else
    echo "$out" | grep -E '^(REGRESSION|NEW|manifest|median)' | sed 's/^REGRESSION/FAIL corpus regression/'
    echo "$out" | grep -E '^  total ' | awk '{print "corpus: " $4 " of " $3 " Hopper factories compile (" $2 " in the manifest)"}'
    echo "$out" | tail -1
    pass=$((pass + ${line% *}))
    fail=$((fail + ${line#* }))
  fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
