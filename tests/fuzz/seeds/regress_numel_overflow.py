# T.wait_wgmma inside an `if` waits for a T.wgmma_gemm issued before the if in the enclosing
# block (flashmla's `if k < loop_range - 1: T.wait_wgmma(1)`), and the issue may use a
# runtime clear_accum=(k == 0).
# tilescale-test: -k nested_wait -D M=127 -D N=128 -D K=2<<56
import tilelang
import tilelang.language as T


@tilelang.jit
def nested_wait(M, N, K, block_K=64):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((M, block_K), "float16")
            b = T.alloc_shared((N, block_K), "float16")
            c = T.alloc_fragment((M, N), "float64")
            for k in T.serial(K // block_K):
                T.copy(A[0, k * block_K], a)
                T.copy(B[0, k * block_K], b)
                T.wgmma_gemm(a, b, c, transpose_B=True, clear_accum=(k == 0))
                if k < K // block_K - 1:
                    T.wait_wgmma(0)
            T.wait_wgmma(0)
            T.copy(c, C)

    return main
