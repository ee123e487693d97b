# Comparisons that the ranges in scope decide are folded (simplify): the padding mask
# `k * 64 + j >= S` of a loop over ceildiv(S, 64) blocks is false everywhere when S is a
# multiple of the block (first loop: the select disappears), and stays where the last
# block runs past S (second loop, T = 250).
# tilescale-test: -k masked -D S=256 -D T=250
# tilescale-dump: simplify

import tilelang
import tilelang.language as T_lang


@tilelang.jit(out_idx=[-1])
def masked(S, T, block=64):
    @T_lang.prim_func
    def main(A: T_lang.Tensor((S,), "float32"), B: T_lang.Tensor((block,), "float32")):
        with T_lang.Kernel(1, threads=64) as bx:
            acc = T_lang.alloc_fragment((block,), "float32")
            T_lang.clear(acc)
            for k in T_lang.serial(T_lang.ceildiv(S, block)):
                for j in T_lang.Parallel(block):
                    acc[j] += T_lang.if_then_else(k * block + j >= S, 0.0, A[k * block + j])
            for k in T_lang.serial(T_lang.ceildiv(T, block)):
                for j in T_lang.Parallel(block):
                    acc[j] += T_lang.if_then_else(k * block + j >= T, 1.0, 0.0)
            T_lang.copy(acc, B)

    return main
