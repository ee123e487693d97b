#!/bin/bash
# bench_probe.sh — builds and checks bench-tilelang rows in both systems at once, without
# timing: each worker (bench_vs_tilelang.py --worker) gets `check` then `quit` under a time
# limit, and prints its JSON lines, its seconds, and on failure its stderr's tail.  For new
# rows, before a timed run: a row that hangs or fails to build shows here in one call.
#   CASES="name@name..." (substrings of row names; default all rows) PTMO (seconds, 240)
mkdir -p /tmp/peer; [ -d /tmp/peer/tilelang ] || xz -dc .peer/all/peer.tar.xz | tar -xf - -C /tmp/peer
export TILELANG_CACHE_DIR=/tmp/tlcache TILESCALE_LIB=$PWD/build/libtilescale.so PYTHONUNBUFFERED=1
cd bench/tilelang
IFS='@' read -ra WANT <<< "${CASES:-}"
python3 bench_vs_tilelang.py ../../.corpus/corpus/tilelang/examples --list > /tmp/probe_rows.txt
mkdir -p /tmp/probe
while read -r row; do
  keep=${#WANT[@]}; for w in "${WANT[@]}"; do [[ "$row" == *"$w"* ]] && keep=0; done
  [ "$keep" = 0 ] || [ ${#WANT[@]} = 0 ] || continue
  for sys in peer ours; do
    n=$(echo "$row$sys" | md5sum | cut -c1-8)
    ( t0=$(date +%s); pp=$([ $sys = peer ] && echo /tmp/peer || echo ../../python)
      printf "check\nquit\n" | PYTHONPATH=$pp timeout ${PTMO:-240} python3 bench_vs_tilelang.py ../../.corpus/corpus/tilelang/examples \
        --worker "$row" $sys > /tmp/probe/$n.out 2> /tmp/probe/$n.err; rc=$?
      echo "== $sys rc=$rc $(( $(date +%s)-t0 )) s: $row"; grep '^{' /tmp/probe/$n.out | cut -c1-300
      [ $rc = 0 ] || tail -5 /tmp/probe/$n.err ) &
  done
done < /tmp/probe_rows.txt
wait
