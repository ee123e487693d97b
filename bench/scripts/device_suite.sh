#!/bin/bash
# device_suite.sh — one device call's worth of GPU checks and benchmarks, chosen by environment
# variables, for a checkout carrying the corpus in .corpus/corpus and the peer's wheels packed
# in .peer/all/peer.tar.xz (bench/tilelang/pack_peer.sh; carry [".corpus", ".peer/all"]):
#   TG=1            build/test_gpu (the C GPU tests)
#   GS=1            bench/scripts/gemm_shapes.py: the AG-GEMM example's GEMM and gemm_persistent's
#                   kernels against cuBLAS (GSA="--shapes ... --kernels ..." for its arguments)
#   REG=1           tests/corpus/regress_gpu.py (RONLY=word,... for some cases; RTMO seconds)
#   REGP=1 PCV=K=V  regress_gpu.py again with TILESCALE_PASS_CONFIGS=$PCV
#   ONLY=rows|all   make bench-tilelang for the rows whose names contain one of the words
#                   (ROUNDS, AHEAD, BTMO seconds, BJSON=file for JSON lines; NOBASE=1 skips it;
#                   TUNED=1 for the best-configuration rows; PROF=1 adds each system's kernels
#                   under torch.profiler: summed time per call and its span, gaps included)
#   PCVS="K=V ..."  the same rows again under each pass configuration (separate runs)
#   AB=K=V,...      in the same run, ours also built with these pass configs, timed in the
#                   same rounds (B/A column and geomean: an A/B without run-to-run drift)
# Prints only the summary lines of each step, with the seconds since the start.
set -u
t0=$(date +%s)
make -s -j16 all build/test_gpu build/test_gemm 2>&1 | grep -v "^ar\|^$" | tail -5
echo "== build $(( $(date +%s)-t0 )) s"
export TILESCALE_LIB=$PWD/build/libtilescale.so
if [ -n "${TG:-}" ]; then ./build/test_gpu 2>&1 | grep -v "^PASS\|^ok" | tail -8; echo "== tg $(( $(date +%s)-t0 )) s"; fi
if [ -n "${GS:-}" ]; then
  gp=python  # python/compat only where cuda-python is missing (the AG-GEMM example imports it)
  PYTHONPATH=$gp python3 -c "from cuda import cudart; import importlib.metadata as m; m.version('cuda-python')" \
    >/dev/null 2>&1 || gp=$gp:python/compat
  PYTHONPATH=$gp timeout 200 python3 bench/scripts/gemm_shapes.py .corpus/corpus ${GSA:-} 2>&1 | grep -v Warn | tail -12
  echo "== gs $(( $(date +%s)-t0 )) s"
fi
reg() { PYTHONPATH=python timeout ${RTMO:-150} python3 tests/corpus/regress_gpu.py .corpus/corpus/tilelang/examples ${RONLY:+--only $RONLY} 2>&1 | grep -v '^PASS' | tail -15; }
if [ -n "${REG:-}" ]; then reg; echo "== reg $(( $(date +%s)-t0 )) s"; fi
if [ -n "${REGP:-}" ]; then TILESCALE_PASS_CONFIGS=$PCV reg; echo "== regp $(( $(date +%s)-t0 )) s"; fi
if [ -n "${ONLY:-}" ]; then
  mkdir -p /tmp/peer; [ -d /tmp/peer/tilelang ] || xz -dc .peer/all/peer.tar.xz | tar -xf - -C /tmp/peer
  export TILELANG_CACHE_DIR=/tmp/tlcache
  [ "$ONLY" = all ] && ONLY=
  b() { PYTHONUNBUFFERED=1 timeout ${BTMO:-400} make -s bench-tilelang CORPUS=.corpus/corpus BENCH_ONLY="$ONLY" BENCH_ROUNDS=${ROUNDS:-2} BENCH_AHEAD=${AHEAD:-4} BENCH_JSON=${BJSON:-} BENCH_TUNED=${TUNED:-} BENCH_AB=${AB:-} BENCH_PROFILE=${PROF:-} 2>&1 | grep "TFLOP\|GB/s\|geomean\|rror\|WRONG\|wrong\|example (own\|best configuration\|^B = \|profile:" | tail -60; }
  [ -n "${NOBASE:-}" ] || { echo "== bench base"; b; }
  for pc in ${PCVS:-}; do echo "== bench $pc"; TILESCALE_PASS_CONFIGS=$pc b; done
  echo "== bench $(( $(date +%s)-t0 )) s"
fi
