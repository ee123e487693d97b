# A in registers over two warpgroups on a 64-row tile: the warpgroups split N and each holds
# all of A's rows (A's fragment replicated over them), but A is copied straight from the
# first GEMM's accumulator, whose warpgroups split S's columns: each thread would read
# elements another warpgroup holds.  A layout conflict, reported (copy through shared
# memory, as TileLang's MLA decode does with S_shared).
# tilescale-test: -k rs_conflict --arch sm_90a
import tilelang
import tilelang.language as T


@tilelang.jit
def rs_conflict(M=64, S=64, D=64, N=256):

    @T.prim_func
    def main(Q: T.Tensor((M, D), "float16"), K: T.Tensor((S, D), "float16"), V: T.Tensor((S, N), "float16"),
             O: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256) as bx:
            q_s = T.alloc_shared((M, D), "float16")
            k_s = T.alloc_shared((S, D), "float16")
            v_s = T.alloc_shared((S, N), "float16")
            acc_s = T.alloc_fragment((M, S), "float32")
            p = T.alloc_fragment((M, S), "float16")
            acc_o = T.alloc_fragment((M, N), "float32")
            T.copy(Q, q_s)
            T.copy(K, k_s)
            T.copy(V, v_s)
            T.gemm(q_s, k_s, acc_s, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
            T.copy(acc_s, p)
            T.gemm(p, v_s, acc_o, clear_accum=True)
            T.copy(acc_o, O)

    return main
