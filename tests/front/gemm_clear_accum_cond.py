# T.gemm(..., clear_accum=(k == 0)): a runtime condition clears the accumulator on the first K
# tile (the fragment is never T.clear'ed), as an IF between a clearing and an accumulating
# instance of the GEMM; a condition that folds (k_start == 0 with a constant) stays a flag.
# tilescale-test: -k matmul_first_clear -D M=256 -D N=256 -D K=512
import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_first_clear(M, N, K, block_M=128, block_N=128, block_K=32, k_start=0):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, clear_accum=(k == 0))
            T.gemm(A_shared, B_shared, C_local, clear_accum=T.int32(k_start) == 1)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
