#!/bin/bash
# dist_suite.sh — one device call's worth of multi-GPU checks and benchmarks (issue 14), chosen by
# environment variables, for a checkout carrying the corpus in .corpus/corpus (carry [".corpus"]):
#   N=4              ranks (default: every GPU nvidia-smi lists)
#   CD=1             make check-dist (DIST_BACKENDS, DIST_TIMEOUT; CDTMO seconds for the whole step)
#   SC=1             TileScale's scripts (tests/dist/run_corpus_dist.py; SCB="ipc nvshmem" backends,
#                    SCONLY=substr,..., SCPER seconds per script,
#                    SCL=torchrun for torch's launcher; SCTMO seconds for the whole step)
#   BD=1             make bench-dist (BOA="--only ag_gemm ..." for bench_overlap's arguments;
#                    BDTMO seconds)
# Each step's whole output goes to $OUT/<step>.log (or /tmp when $OUT is unset); only its summary
# lines are printed, with the seconds since the start.
set -u
t0=$(date +%s)
LOG=${OUT:-/tmp}
N=${N:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
make -s -j"$(nproc)" all 2>&1 | grep -v "^ar\|^$" | tail -5
echo "== build $(( $(date +%s)-t0 )) s, N=$N"
step() {  # step NAME SECONDS PATTERN COMMAND...: run it, keep its log, print the matching lines
  local name=$1 secs=$2 pat=$3; shift 3
  timeout "$secs" "$@" >"$LOG/$name.log" 2>&1; local rc=$?
  grep -E "$pat" "$LOG/$name.log" | tail -80
  echo "== $name rc=$rc $(( $(date +%s)-t0 )) s"
}
if [ -n "${CD:-}" ]; then
  step check_dist "${CDTMO:-300}" '^(PASS|FAIL|SKIP)|FAILED|summary' \
    make -s check-dist NDEV="$N" DIST_TIMEOUT="${DIST_TIMEOUT:-120}" ${DIST_BACKENDS:+DIST_BACKENDS="$DIST_BACKENDS"}
fi
if [ -n "${SC:-}" ]; then
  # the model checks' own references against naive versions (needs torch: here, not in CI)
  python3 tests/python/test_dist_models.py 2>&1 | tail -1 | sed 's/^/== test_dist_models: /'
  for be in ${SCB:-ipc}; do  # SCB="ipc nvshmem" for both, one after the other
    step "scripts_$be${SCL:+_$SCL}" "${SCTMO:-300}" '^(PASS|FAIL|ERROR|MISSING|SKIP|KNOWN)|passed|failed' \
      python3 tests/dist/run_corpus_dist.py .corpus/corpus -n "$N" --timeout "${SCPER:-120}" \
        --backend "$be" ${SCONLY:+--only "$SCONLY"} ${SCL:+--launcher "$SCL"}
  done
fi
if [ -n "${BD:-}" ]; then
  step bench_dist "${BDTMO:-400}" 'GB/s|ms|×|ratio|bench|rror|WRONG|wrong|size' \
    make -s bench-dist NDEV="$N" CORPUS=.corpus/corpus BENCH_OVERLAP_ARGS="${BOA:-}"
fi
