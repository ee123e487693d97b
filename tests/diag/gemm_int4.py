# T.gemm on 4-bit operands (two elements a byte) is refused with a clear diagnostic: the
# tensor-core s4 path (mma.sync m16n8k64) is not implemented.
# tilescale-test: -k gemm_int4
import tilelang.language as T


def gemm_int4(M=128, N=128, K=128):

    @T.prim_func
    def main(A: T.Tensor((M, K), T.int4), B: T.Tensor((N, K), T.int4), C: T.Tensor((M, N), T.int32)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), T.int4)
            B_s = T.alloc_shared((N, K), T.int4)
            C_l = T.alloc_fragment((M, N), T.int32)
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, C_l, transpose_B=True, clear_accum=True)
            T.copy(C_l, C)

    return main
