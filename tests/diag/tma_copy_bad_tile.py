# T.tma_copy destinations TMA cannot write in the tile's layout: columns that do not start on
# the 128-byte swizzle's 64-column atoms of a wgmma operand, and a box of rows of an unswizzled
# tile (TMA writes a box densely).
# tilescale-test: -k bad_tile -D M=256 -D N=256 -D K=256 --arch sm_90a
import tilelang
import tilelang.language as T


def bad_tile(M, N, K, block_M=128, block_N=128, block_K=128, dtype="float16", accum_dtype="float"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            P_s = T.alloc_shared((block_M, 64), dtype)
            C_l = T.alloc_fragment((block_M, block_N), accum_dtype)
            bar = T.alloc_barrier(arrive_count=128)
            T.tma_copy(A[by * block_M, 32], A_s[:, 32:96], barrier=bar)
            T.tma_copy(B[0, bx * block_N], B_s, barrier=bar)
            T.tma_copy(C[by * block_M, 0], P_s[:, 0:32], barrier=bar)
            T.barrier_arrive(bar)
            T.barrier_wait(bar, 0)
            T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main
