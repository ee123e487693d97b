# --emit stats of a pipelined GEMM with A stored K x M (transpose_A) and an accumulator
# cleared on the first step by a runtime condition (an if of two equal GEMMs): exact
# FLOPs 2*M*N*K = 2*256*512*1024, loads = (A + B) * N/block_N + M/block_M re-reads.
# tilescale-test: -k matmul_t -D M=256 -D N=512 -D K=1024
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_t(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16"):

    @T.prim_func
    def main(A: T.Tensor((K, M), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_K, block_M), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[k * block_K, by * block_M], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=True, clear_accum=k == 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
