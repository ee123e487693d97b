#!/bin/bash
# deepep_sizes.sh — DeepEP intranode (tests/dist/deepep_model.py) at several sizes on N ranks,
# to find which sizes a wrong combine needs (ring wrap, hidden size, top-k): one line per rank
# and size with the model's verdicts.  SIZES="T,H,K,E ..." (tokens, hidden, top-k, experts).
set -u
N=${N:-2}
# the environment run_corpus_dist.py gives the scripts (its PYTHONPATH with the python/compat
# stand-ins only where the real modules are missing, TILESCALE_LIB, NVLS off)
eval "$(python3 -c 'import shlex, sys, types; sys.path.insert(0, "tests/dist"); import run_corpus_dist as r
env = r.environment(types.SimpleNamespace(cli="build/tilescale", backend=None))
print("\n".join("export %s=%s" % (k, shlex.quote(env[k])) for k in ("PYTHONPATH", "TILESCALE_LIB",
      "NVSHMEM_DISABLE_NVLS", "NCCL_NVLS_ENABLE", "TILELANG_USE_DISTRIBUTED", "PYTHONUNBUFFERED")))')"
for s in ${SIZES:-4096,7168,8,32 4096,1024,4,8 1024,7168,8,32}; do
  IFS=, read -r T H K E <<<"$s"
  echo "== T=$T H=$H K=$K E=$E"
  timeout ${PER:-120} build/tilescale launch --timeout ${PER:-120} -n 1 python3 tests/dist/deepep_model.py \
    --num_ranks "$N" --corpus "$PWD/.corpus/corpus" --num_tokens "$T" --hidden "$H" --num_topk "$K" \
    --num_experts "$E" 2>&1 | grep -E "deepep_model rank|rror|FAIL|Traceback" | grep -v "combine started" | cut -c1-700
done
