# A GEMM whose bias is read only when with_bias (TileLang's jit nullptr test): without it, the
# Bias parameter is never touched and may be passed as no tensor (None / NULL).
import tilelang
import tilelang.language as T


@tilelang.jit
def gemm_bias(M=256, N=256, K=128, with_bias=False):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32"),
             Bias: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 128), threads=128) as (bx, by):
            A_s = T.alloc_shared((128, 32), "float16")
            B_s = T.alloc_shared((128, 32), "float16")
            C_l = T.alloc_fragment((128, 128), "float32")
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                T.copy(A[by * 128, ko * 32], A_s)
                T.copy(B[bx * 128, ko * 32], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=True)
            if with_bias:
                for i, j in T.Parallel(128, 128):
                    C_l[i, j] += Bias[bx * 128 + j]
            T.copy(C_l, C[by * 128, bx * 128])

    return main
