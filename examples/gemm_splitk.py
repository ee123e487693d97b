# Split-K GEMM: C += A @ B with the K dimension split over `split_k` blocks (grid z).
#
# Useful when M and N are small and K is large: each block multiplies one K slice and
# adds its partial tile into C with T.atomic_add, element by element from the accumulator
# fragment (fp32 C, zero-initialised by the caller),
# so more blocks than output tiles keep the GPU busy.
#
# tilescale-test: -k matmul_splitk -D M=128 -D N=128 -D K=1024
#
# Run with TileScale:  tilescale run examples/gemm_splitk.py -D M=256 -D N=256 -D K=16384

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_splitk(M, N, K, split_k=4, block_M=64, block_N=64, block_K=64, num_stages=3, threads=128,
                  dtype="float16", accum_dtype="float32"):
    k_per_split = K // split_k

    @T.prim_func
    def main(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((K, N), dtype),
            C: T.Tensor((M, N), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(k_per_split, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, bz * k_per_split + k * block_K], A_shared)
                T.copy(B[bz * k_per_split + k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(block_M, block_N):
                T.atomic_add(C[by * block_M + i, bx * block_N + j], C_local[i, j])

    return main
