#!/bin/bash
# ncu_cases.sh — Nsight Compute on bench-tilelang rows, ours and TileLang's kernel side by side
# (same checkout layout as device_suite.sh).  CASES="exact row name@another row" (names hold
# ';' and ',', hence '@'), SYS="ours peer", SKIP launches of the kernels skipped first (the
# check run and warm-up), NK kernels profiled (2 for a row of two kernels), NCUX more ncu
# options, KF the kernel-name filter (ncu -k; default: every kernel but torch's).  Each report
# goes whole to $OUT/ncu_N.txt; a summary is printed.
set -u
make -s -j16 all >/dev/null 2>&1
mkdir -p /tmp/peer; [ -d /tmp/peer/tilelang ] || xz -dc .peer/all/peer.tar.xz | tar -xf - -C /tmp/peer
export TILESCALE_LIB=$PWD/build/libtilescale.so TILELANG_CACHE_DIR=/tmp/tlcache
IFS='@' read -ra CS <<< "$CASES"
n=0
for c in "${CS[@]}"; do for s in ${SYS:-ours peer}; do
  if [ $s = ours ]; then pp=$PWD/python; else pp=/tmp/peer; fi
  echo "=== $c / $s"
  n=$((n+1))
  # torch's own kernels (the L2 flush, the reference) are filtered out by name
  printf "check\ntime\nquit\n" | PYTHONPATH=$pp timeout ${PTMO:-120} ncu --section SpeedOfLight --section LaunchStats \
     --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis ${NCUX:-} \
     -k "${KF:-regex:^(?!.*(at::|elementwise|vectorized|fill|Fill|distribution|reduce_kernel|copy|gemv2|sm90_xmma|cutlass|flash_fwd|cudnn|nvjet|gemmSN)).*}" \
     --launch-skip ${SKIP:-4} --launch-count ${NK:-1} python3 bench/tilelang/bench_vs_tilelang.py .corpus/corpus/tilelang/examples \
     --worker "$c" $s > ${OUT:-/tmp}/ncu_$n.txt 2>&1
  grep -v '^{' ${OUT:-/tmp}/ncu_$n.txt | grep "Duration\|Registers Per\|Achieved Occ\|DRAM Through\|Compute (SM) Th\|CC 9.0\|rror" | head -40
done; done
