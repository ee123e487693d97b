# T.gemm operands must be shared tiles or fragments (a fragment B is staged through shared
# memory by plan_gemm); a T.alloc_local buffer (plain per-thread registers, no tensor-core
# layout) is refused at the T.gemm line, naming the buffer and its scope.
# tilescale-test: -k gemm_operand_local --arch sm_90a
import tilelang.language as T


def gemm_operand_local(M=16, N=16, K=16):

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            A_s = T.alloc_shared((M, K), T.float16)
            B_l = T.alloc_local((K, N), T.float16)
            C_l = T.alloc_fragment((M, N), T.float32)
            T.copy(A, A_s)
            T.copy(B, B_l)
            T.gemm(A_s, B_l, C_l, clear_accum=True)
            T.copy(C_l, C)

    return main
