# A T.Parallel body that is more than one copy (a let, arithmetic, three shared operands and
# a shared store) moves each contiguous shared operand through a register array: one vector
# load per operand before the lane loop, one vector store after it (lower_tile_ops, staged
# vector accesses).  The second loop reads S at a neighbouring index of the one it writes,
# so hoisting its reads would be wrong: it stays element by element.
# tilescale-test: -k norm -D M=4 -D N=1024
# tilescale-dump: lower_tile_ops

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def norm(M, N, dtype="bfloat16"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), G: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(M, threads=128) as bx:
            S = T.alloc_shared((N,), dtype)
            Gs = T.alloc_shared((N,), dtype)
            x = T.alloc_fragment((N,), "float")
            T.copy(X[bx, 0], S)
            T.copy(G, Gs)
            T.copy(S, x)
            for j in T.Parallel(N):
                t = x[j] * 2.0
                S[j] = T.Cast(dtype, t * T.Cast("float", Gs[j]) + T.Cast("float", S[j]))
            for j in T.Parallel(N):
                S[j] = T.Cast(dtype, x[j])
                x[j] = T.Cast("float", S[j]) + 1.0
            T.copy(S, Y[bx, 0])

    return main
