# examples/gemm.py's kernel after warp_specialize on sm_90a (Hopper pipelining): a TMA
# producer warpgroup on full/empty mbarriers, persistent rasterized tiles, and the wgmma
# issue / wait-for-one-in-flight split in the consumer loop.
# tilescale-test: -k matmul -D M=512 -D N=256 -D K=512 -D num_stages=4
# tilescale-dump: warp_specialize

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=3, threads=128, trans_A=False,
           trans_B=False, dtype="float16", accum_dtype="float32", policy=0):
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(
            A: T.Tensor(A_shape, dtype),
            B: T.Tensor(B_shape, dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_tile, dtype)
            B_shared = T.alloc_shared(B_tile, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A, transpose_B=trans_B, policy=policy)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
