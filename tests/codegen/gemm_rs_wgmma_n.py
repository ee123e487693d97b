# wgmma RS over two warpgroups on a 64-row tile (MLA decode's P @ V): one 64-row atom, so
# the warpgroups split N (each issues m64n128 from the same A registers); A's fragment is
# the wgmma A operand of one warpgroup replicated over the second (replicate field at
# thread stride 128).  P comes from the first GEMM's accumulator through shared memory,
# whose warpgroups split the 64 columns of S instead (FullCol).
# tilescale-test: -k rs_wgmma_n --arch sm_90a
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def rs_wgmma_n(M=64, S=64, D=64, N=256, threads=256):

    @T.prim_func
    def main(Q: T.Tensor((M, D), "float16"), K: T.Tensor((S, D), "float16"), V: T.Tensor((S, N), "float16"),
             O: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            q_s = T.alloc_shared((M, D), "float16")
            k_s = T.alloc_shared((S, D), "float16")
            v_s = T.alloc_shared((S, N), "float16")
            p_s = T.alloc_shared((M, S), "float16")
            acc_s = T.alloc_fragment((M, S), "float32")
            p = T.alloc_fragment((M, S), "float16")
            acc_o = T.alloc_fragment((M, N), "float32")
            T.copy(Q, q_s)
            T.copy(K, k_s)
            T.copy(V, v_s)
            T.gemm(q_s, k_s, acc_s, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
            T.copy(acc_s, p_s)
            T.copy(p_s, p)
            T.gemm(p, v_s, acc_o, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
            T.copy(acc_o, O)

    return main
