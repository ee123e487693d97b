# T.gemm_sp with transpose_A and transpose_E: the staged (transposed) copies must then have the
# shapes of A_sparse [M, K/2] and E [M, K/e_factor]; an E stored [M, K/16] is not [K/16, M].
# tilescale-test: -k gemm_sp_trans --arch sm_90a
import tilelang.language as T


def gemm_sp_trans(M=64, N=64, K=128):

    @T.prim_func
    def main(A: T.Tensor((K // 2, M), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((K // 2, M), T.float16)
            E_s = T.alloc_shared((M, K // 16), T.int16)
            B_s = T.alloc_shared((K, N), T.float16)
            C_l = T.alloc_fragment((M, N), T.float32)
            T.copy(A, A_s)
            T.gemm_sp(A_s, E_s, B_s, C_l, transpose_A=True, transpose_E=True)
            T.copy(C_l, C)

    return main
