#!/bin/sh
# check_wait_timeout.sh — the wait-timeout trap under `tilescale launch` (make check-dist):
#   check_wait_timeout.sh CLI BIN [KERNEL_DIR]
# For each of wait_eq, barrier_blocks, barrier_all_block, sync_all and signal_wait_until,
# rank 1 of 2 spins on something nobody will ever satisfy with TILESCALE_WAIT_TIMEOUT_MS=200
# (wait_timeout.c).  Passes when, well within the launcher's own --timeout: the launcher
# exits non-zero naming rank 1, and rank 1's output has the trap message naming rank 1 (and
# for barriers the missing rank 0), the flag address the host printed, and the value seen.
# Run once per backend (TILESCALE_DIST_BACKEND): on nvshmem the NVSHMEM-family waits are
# ours when the timeout is compiled in, not NVSHMEM's (dist_shmem.cuh).
# Prints one PASS/FAIL line per case; exits non-zero on any failure.
CLI=$1 BIN=$2 DIR=${3:-tests/dist}
fail=0
for mode in wait barrier barrier_all sync_all signal; do
  case $mode in
    wait) what="wait_eq timed out after 200 ms"; held="holds 0, expected 1" ;;
    barrier) what="barrier_blocks timed out after 200 ms waiting for rank 0"; held="holds 1, expected 0" ;;
    barrier_all) what="barrier_all_block timed out after 200 ms waiting for rank 0"; held="holds 1, expected 0" ;;
    sync_all) what="sync_all timed out after 200 ms waiting for rank 0"; held="holds 1, expected 0" ;;
    signal) what="signal_wait_until(EQ) timed out after 200 ms"; held="holds 0, expected 1" ;;
  esac
  start=$(date +%s)
  out=$(TILESCALE_WAIT_TIMEOUT_MS=200 TILESCALE_DISABLE_CACHE=1 "$CLI" launch --timeout 100 --grace 2 -n 2 "$BIN" "$mode" "$DIR" 2>&1)
  rc=$?
  took=$(( $(date +%s) - start ))
  if printf '%s\n' "$out" | grep -q '^\[rank [0-9]*\] SKIP'; then
    echo "SKIP wait-timeout trap ($mode): $(printf '%s\n' "$out" | grep -m1 SKIP)"
    continue
  fi
  addr=$(printf '%s\n' "$out" | sed -n 's/^\[rank 1\] ts-test: flag address \(0x[0-9a-f]*\).*/\1/p' | head -n 1)
  trap_line=$(printf '%s\n' "$out" | grep -m1 "tilescale: rank 1: $what")
  trap_addr=$(printf '%s\n' "$trap_line" | sed -n 's/.*flag at \(0x\)\{0,1\}\([0-9a-fA-F]*\).*/0x\2/p')
  why=""
  [ "$rc" -ne 0 ] || why="$why; the launcher exited 0"
  [ "$rc" -ne 124 ] || why="$why; the launcher's --timeout fired (the wait hung)"
  printf '%s\n' "$out" | grep -q "tilescale launch: failed: rank 1 " || why="$why; the launcher did not name rank 1 as the failed rank"
  [ -n "$trap_line" ] || why="$why; no trap message '$what' from rank 1"
  [ -z "$trap_line" ] || printf '%s\n' "$trap_line" | grep -q "$held" || why="$why; the trap message does not say '$held'"
  if [ -z "$addr" ]; then why="$why; rank 1 printed no flag address"
  elif [ -n "$trap_line" ] && [ "$(printf '%d' "$trap_addr" 2>/dev/null)" != "$(printf '%d' "$addr")" ]; then
    why="$why; the trap names address $trap_addr, the flag is at $addr"
  fi
  [ "$took" -le 60 ] || why="$why; took ${took}s"
  if [ -z "$why" ]; then
    echo "PASS wait-timeout trap ($mode): rank 1 trapped in ${took}s, launcher exit $rc"
  else
    echo "FAIL wait-timeout trap ($mode)${why}"
    printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
    fail=1
  fi
done
exit $fail
