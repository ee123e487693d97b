#!/bin/bash
# deepep_sizes.sh — DeepEP intranode (tests/dist/deepep_model.py) at several sizes on N ranks,
# to find which sizes a wrong combine needs (ring wrap, hidden size, top-k): one line per rank
# and size with the model's verdicts.  SIZES="T,H,K,E ..." (tokens, hidden, top-k, experts).
set -u
N=${N:-2}
py=$PWD/python
export PYTHONPATH=$py TILESCALE_LIB=${TILESCALE_LIB:-$PWD/build/libtilescale.so}
# the stand-ins of python/compat only where the real modules are missing (as run_corpus_dist.py)
python3 -c "from cuda import cudart; import importlib.metadata as m; m.version('cuda-python')" 2>/dev/null ||
  PYTHONPATH=$PYTHONPATH:$py/compat
python3 -c "import tvm_ffi" 2>/dev/null || PYTHONPATH=$PYTHONPATH:$py/compat/tvm_ffi_shim
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
for s in ${SIZES:-4096,7168,8,32 4096,1024,4,8 1024,7168,8,32}; do
  IFS=, read -r T H K E <<<"$s"
  echo "== T=$T H=$H K=$K E=$E"
  timeout ${PER:-120} build/tilescale launch --timeout ${PER:-120} -n 1 python3 tests/dist/deepep_model.py \
    --num_ranks "$N" --corpus "$PWD/.corpus/corpus" --num_tokens "$T" --hidden "$H" --num_topk "$K" \
    --num_experts "$E" 2>&1 | grep -E "deepep_model rank|rror|FAIL|Traceback" | grep -v "combine started" | cut -c1-700
done
