#!/usr/bin/env bash
# launch.sh — TileScale's launcher script, over `tilescale launch`:
#
#   GPUS=4 bash launch.sh example.py [args...]       # python3 example.py on 4 GPUs
#   NODES=2 NODE_RANK=0 MASTER_ADDR=host0 GPUS=8 bash launch.sh example.py
#
# GPUS (default: every visible GPU), NODES (1), NODE_RANK (0), MASTER_ADDR / MASTER_PORT
# (ARNOLD_WORKER_0_HOST / _PORT, as TileScale's script reads them), MEMCHECK=1 (every rank under
# compute-sanitizer), PYTHON (python3).  NVLink multicast stays off (NVSHMEM_DISABLE_NVLS=1,
# NCCL_NVLS_ENABLE=0) unless the caller set those.  The `tilescale` CLI is $TILESCALE_CLI, else
# the one on PATH, else the source checkout's build/tilescale.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cli="${TILESCALE_CLI:-}"
if [[ -z "$cli" ]]; then
  if command -v tilescale >/dev/null 2>&1; then
    cli="$(command -v tilescale)"
  elif [[ -x "$here/../../../build/tilescale" ]]; then
    cli="$here/../../../build/tilescale"
  else
    echo "launch.sh: cannot find the tilescale CLI (set TILESCALE_CLI or put it on PATH)" >&2
    exit 2
  fi
fi
if [[ $# -lt 1 ]]; then
  echo "usage: GPUS=N bash launch.sh script.py [args...]" >&2
  exit 2
fi

if [[ -z "${GPUS:-}" ]]; then
  GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  [[ "$GPUS" -gt 0 ]] || GPUS=1
fi
export NVSHMEM_DISABLE_NVLS="${NVSHMEM_DISABLE_NVLS:-1}"
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}"
export CUDA_DEVICE_MAX_CONNECTIONS="${CUDA_DEVICE_MAX_CONNECTIONS:-1}"
export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"
export TILELANG_USE_DISTRIBUTED="${TILELANG_USE_DISTRIBUTED:-1}"

args=(launch -n "$GPUS")
if [[ "${NODES:-1}" -gt 1 ]]; then
  args+=(--nnodes "$NODES" --node-rank "${NODE_RANK:-0}")
fi
addr="${MASTER_ADDR:-${ARNOLD_WORKER_0_HOST:-}}"
port="${MASTER_PORT:-${ARNOLD_WORKER_0_PORT:-}}"
[[ -n "$addr" ]] && args+=(--master-addr "$addr")
[[ -n "$port" ]] && args+=(--master-port "$port")

py="${PYTHON:-python3}"
if [[ "${MEMCHECK:-0}" == 1 ]]; then
  exec "$cli" "${args[@]}" compute-sanitizer --tool memcheck "$py" "$@"
fi
exec "$cli" "${args[@]}" "$py" "$@"
