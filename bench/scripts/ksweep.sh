#!/bin/sh
# ksweep.sh M N "K1 K2 ..." "CFG..." — per-tile fixed cost of ours and cuBLAS: run bench_gemm
# at one (M, N) over several K (fit time = a + b*K per dtype to split per-tile overhead
# from the mainloop).  Prints the bench lines only.
M=$1; N=$2; KS=$3; CFGS=$4
for c in $CFGS; do for k in $KS; do
  echo "== cfg $c K=$k"
  ./build/bench_gemm --shape $M,$N,$k --cfg $c --no-fp8 | grep -E "^(fp16|bf16) "
done; done
