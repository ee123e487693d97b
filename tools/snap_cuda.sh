#!/bin/bash
# snap_cuda.sh OUTDIR: generated CUDA of every example/test with a tilescale-test line (sm_80 and
# sm_90a), the distributed kernels and the warp-specialized GEMM variants, one file each, so that
# a refactor can be checked byte-identical: tools/snap_cuda.sh /tmp/a; (change); tools/snap_cuda.sh /tmp/b; diff -r /tmp/a /tmp/b
out=$(realpath -m "$1"); mkdir -p "$out"; cd "$(dirname "$0")/.."; tmp=$(mktemp -d)
for f in examples/*.py examples/dist/*.py tests/front/*.py tests/codegen/*.py tests/dist/*.py; do
  args=$(sed -n 's/^# tilescale-test: //p' "$f" | head -1)
  [ -n "$args" ] || continue
  args=$(echo "$args" | sed 's/--arch [a-z0-9_]*//')
  for arch in sm_80 sm_90a; do
    n=$(echo "$f" | tr '/' '_')
    TILESCALE_DISABLE_CACHE=1 build/tilescale compile $f $args --arch $arch --emit cuda -o $out/$n.$arch.cu 2>/dev/null || echo "fail" > $out/$n.$arch.cu
  done
done
ls $out | wc -l
# distributed kernels with their defaults (and variants)
for spec in "tests/dist/all_primitives.py everything" "tests/dist/barriers.py barrier_reuse" "tests/dist/barriers.py grid_sync" \
  "tests/dist/barriers.py shmem_barriers" "tests/dist/barriers.py shmem_barriers -D form=1" "tests/dist/barriers.py shmem_barriers -D form=2" "tests/dist/barriers.py collectives" \
  "tests/dist/ldst_matrix.py ldst_matrix" "tests/dist/ldst_matrix.py ldst_matrix -D dtype=\"uint64\" -D remote_st=False" "tests/dist/timeout.py stuck" "tests/dist/timeout.py stuck -D mode=1" "tests/dist/timeout.py stuck -D mode=2" \
  "tests/dist/waits.py waits" "tests/dist/waits.py waits -D remote_wait=True" "tests/dist/waits.py signals" "tests/dist/workspace.py gpu_barrier" "tests/dist/workspace.py scratch_sum" \
  "examples/dist/all_to_all_signal.py all_to_all_signal" "examples/dist/allgather_put_block.py allgather_put_block" "examples/dist/allgather_putmem.py allgather_putmem" \
  "examples/dist/post_attn_all2all_transpose.py post_attn_all2all_transpose" "examples/dist/pre_attn_all2all.py pre_attn_all2all" "examples/dist/ring_shift.py ring_shift"; do
  set -- $spec; f=$1; k=$2; shift 2
  n=$(echo "$f.$k.$*" | tr '/ =' '___')
  eval TILESCALE_DISABLE_CACHE=1 build/tilescale compile $f -k $k "$@" --arch sm_90a --emit cuda -o $out/$n.cu 2>/dev/null || echo fail > $out/$n.cu
done
# warp-specialized GEMM with pass configs
for cfg in '"tl.enable_tma_multicast": True' '"tl.enable_stream_k": True' '"tl.disable_epilogue_overlap": True' '"tl.enable_tma_multicast": True, "tl.disable_epilogue_overlap": True'; do
  n=$(echo "$cfg" | tr -dc 'a-z_')
  sed "s/@tilelang.jit(out_idx=\[-1\]/@tilelang.jit(out_idx=[-1], pass_configs={$cfg}/" examples/gemm.py > $tmp/gw.py
  for p in "-D M=4096 -D N=4096 -D K=4096 -D block_N=256 -D threads=256 -D num_stages=4" "-D M=4000 -D N=2104 -D K=72 -D block_N=256 -D threads=256 -D num_stages=4" "-D M=8192 -D N=8192 -D K=8192 -D block_K=32 -D num_stages=8 -D block_N=256 -D threads=256"; do
    m=$(echo "$p" | tr -dc '0-9')
    TILESCALE_DISABLE_CACHE=1 build/tilescale compile $tmp/gw.py -k $(sed -n "s/^# tilescale-test: -k \([a-z_]*\).*/\1/p" examples/gemm.py) $p --arch sm_90a --emit cuda -o $out/ws_$n$m.cu 2>/dev/null || echo fail > $out/ws_$n$m.cu
  done
done
ls $out | wc -l; grep -l '^fail' $out/* | wc -l
