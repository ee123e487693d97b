#!/bin/bash
# tilelang_sources.sh — the CUDA TileLang generates for bench-tilelang rows (CASES as in
# ncu_cases.sh), from its cache, packed into $OUT/tlsrc.tar.gz (one file: a device call
# returns a limited number of files).
mkdir -p /tmp/peer; [ -d /tmp/peer/tilelang ] || xz -dc .peer/all/peer.tar.xz | tar -xf - -C /tmp/peer
export TILELANG_CACHE_DIR=/tmp/tlcache
IFS='@' read -ra CS <<< "$CASES"
for c in "${CS[@]}"; do
  printf "quit\n" | PYTHONPATH=/tmp/peer timeout 120 python3 bench/tilelang/bench_vs_tilelang.py .corpus/corpus/tilelang/examples \
    --worker "$c" peer 2>&1 | grep '^{' | cut -c1-200 &
done
wait
cd /tmp/tlcache && find . -name "*.cu" | tar -czf ${OUT:-/tmp}/tlsrc.tar.gz -T - && ls -la ${OUT:-/tmp}/tlsrc.tar.gz
