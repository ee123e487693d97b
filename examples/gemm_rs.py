# Two chained GEMMs, the shape of attention: S = Q @ K^T stays in registers, is cast to
# float16 and multiplied by V with its A operand read from registers (wgmma RS on the
# H100): O[M, D] = half(Q[M, D] @ K[N, D]^T) @ V[N, D], one block per block_M rows, the
# whole N at once (N <= 256).
#
# tilescale-test: -k chain -D M=256 -D N=128 -D D=64 --dump-after layout_inference
#
# Run with TileScale:  tilescale run examples/gemm_rs.py -k chain -D M=4096 -D N=128 -D D=64

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def chain(M, N, D, block_M=64, threads=128, dtype="float16"):

    @T.prim_func
    def main(
            Q: T.Tensor((M, D), dtype),
            K: T.Tensor((N, D), dtype),
            V: T.Tensor((N, D), dtype),
            O: T.Tensor((M, D), "float32"),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            Q_shared = T.alloc_shared((block_M, D), dtype)
            K_shared = T.alloc_shared((N, D), dtype)
            V_shared = T.alloc_shared((N, D), dtype)
            S = T.alloc_fragment((block_M, N), "float32")
            P = T.alloc_fragment((block_M, N), dtype)
            O_local = T.alloc_fragment((block_M, D), "float32")
            T.copy(Q[bx * block_M, 0], Q_shared)
            T.copy(K, K_shared)
            T.copy(V, V_shared)
            T.gemm(Q_shared, K_shared, S, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            T.copy(S, P)
            T.gemm(P, V_shared, O_local, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            T.copy(O_local, O[bx * block_M, 0])

    return main
