# T.wgmma_gemm on types wgmma does not take (float32 A with float16 B, float64): T.gemm computes
# those with FMA (front/gemm_fma.c), but an issued-not-waited wgmma has no such form, so the call
# is refused (a fuzz find: it was an internal error).
# tilescale-test: -k mixed --arch sm_90a
import tilelang
import tilelang.language as T


@tilelang.jit
def mixed(M=64, N=64, K=128, block_K=64):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            a = T.alloc_shared((M, block_K), "float32")
            b = T.alloc_shared((N, block_K), "float16")
            d = T.alloc_shared((N, block_K), "float64")
            c = T.alloc_fragment((M, N), "float32")
            for k in T.serial(K // block_K):
                T.copy(A[0, k * block_K], a)
                T.copy(B[0, k * block_K], b)
                T.wgmma_gemm(a, b, c, transpose_B=True, clear_accum=(k == 0))
                T.wgmma_gemm(d, d, c, transpose_B=True)
            T.copy(c, C)

    return main
