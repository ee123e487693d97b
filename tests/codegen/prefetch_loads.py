# Per-row scales read after a synchronous wgmma (deepgemm's promotion): pass prefetch_loads
# (opt-in, ts.prefetch_loads=True) loads them into registers before the GEMM and the mbarrier waits in front of it, so their
# latency overlaps the wait.  The row bias is not moved: the kernel also writes Bias.
# tilescale-test: -k scaled_gemm -D M=256 -D N=256 -D K=512 --arch sm_90a --pass-config ts.prefetch_loads=True --pass-config ts.prefetch_next_loads=False
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
