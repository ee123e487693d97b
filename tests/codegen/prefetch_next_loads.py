# The same per-row scale promotion under ts.prefetch_next_loads=True (opt-in): the scales of
# iteration k+1 (S[.., k + 1]) are loaded at the top of iteration k into nxt_S and iteration k
# reads cur_S, copied from nxt_S; the Bias row is the same in every iteration (and written by
# the kernel) and stays where it is.  regress_gpu.py runs the kernel against torch.
# tilescale-test: -k scaled_gemm -D M=256 -D N=256 -D K=512 --arch sm_90a --pass-config ts.prefetch_next_loads=True
# tilescale-dump: prefetch_loads
import tilelang
import tilelang.language as T


@tilelang.jit
def scaled_gemm(M, N, K, block_M=64, block_N=128, block_K=64, write_bias=True):

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((N, K), T.float16), S: T.Tensor((M, K // block_K), T.float32),
             Bias: T.Tensor((M,), T.float32), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), T.float16)
            B_s = T.alloc_shared((block_N, block_K), T.float16)
            C_l = T.alloc_fragment((block_M, block_N), T.float32)
            acc = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_l)
            T.clear(acc)
            for k in T.Pipelined(K // block_K, num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[bx * block_N, k * block_K], B_s)
                T.gemm(A_s, B_s, C_l, transpose_B=True)
                for i, j in T.Parallel(block_M, block_N):
                    acc[i, j] += C_l[i, j] * S[by * block_M + i, k] + Bias[by * block_M + i]
                T.clear(C_l)
            T.copy(acc, C[by * block_M, bx * block_N])
            if write_bias and bx == 0:  # (the GPU test leaves it out: other blocks still read it)
                for i in T.Parallel(block_M):
                    Bias[by * block_M + i] = 0.0

    return main
