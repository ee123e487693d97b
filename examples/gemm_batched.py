# Batched GEMM: C[b] = A[b] @ B[b] for every batch b (grid z walks the batch).
#
# tilescale-test: -k batched_matmul -D batch=2 -D M=256 -D N=128 -D K=128
#
# Run with TileScale:  tilescale run examples/gemm_batched.py -D batch=16 -D M=1024 -D N=1024 -D K=1024

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def batched_matmul(batch, M, N, K, block_M=128, block_N=128, block_K=64, num_stages=3, threads=128,
                   dtype="float16", accum_dtype="float32"):

    @T.prim_func
    def main(
            A: T.Tensor((batch, M, K), dtype),
            B: T.Tensor((batch, K, N), dtype),
            C: T.Tensor((batch, M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), batch, threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[bz, by * block_M, k * block_K], A_shared)
                T.copy(B[bz, k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[bz, by * block_M, bx * block_N])

    return main
