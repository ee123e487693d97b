# A T.ws GEMM synchronised by explicit mbarriers (TileLang's manual style): warpgroup 1 loads
# two stages with T.tma_copy, warpgroup 0 runs wgmma.  The barriers are declared and
# initialised once at the kernel's start (thread 0, counts 128 each, init fence, __syncthreads).
# Each T.tma_copy is issued by the first thread of its range (tx - 128 == 0): a plain
# expect_tx of the tile's bytes (no arrival: the 128 arrivals are the T.mbarrier_arrive of the
# range's threads) and one TMA box per 64-column swizzle atom (B: two boxes).  Parities are the
# user's; thread_sync adds nothing: the mbarriers order the stages.
# tilescale-test: -k mbar_gemm -D M=256 -D N=256 -D K=256 --arch sm_90a
# tilescale-dump: thread_sync

import tilelang
import tilelang.language as T


def mbar_gemm(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16", accum_dtype="float"):
    stages = 2

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_s = T.alloc_shared((stages, block_M, block_K), dtype)
            B_s = T.alloc_shared((stages, block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), accum_dtype)
            full = T.alloc_barrier([128] * stages)
            empty = T.alloc_barrier(arrive_count=[128] * stages)
            with T.ws(0):
                T.clear(C_l)
            for ko in range(T.ceildiv(K, block_K)):
                with T.ws(1):
                    T.mbarrier_wait_parity(empty[ko % stages], ((ko // stages) % 2) ^ 1)
                    T.tma_copy(A[by * block_M, ko * block_K], A_s[ko % stages, :, :], barrier=full[ko % stages])
                    T.tma_copy(B[ko * block_K, bx * block_N], B_s[ko % stages, :, :], barrier=full[ko % stages])
                    T.mbarrier_arrive(full[ko % stages])
                with T.ws(0):
                    T.barrier_wait(full[ko % stages], (ko // stages) % 2)
                    T.gemm(A_s[ko % stages, :, :], B_s[ko % stages, :, :], C_l)
                    T.barrier_arrive(empty[ko % stages])
            with T.ws(0):
                T.copy(C_l, C[by * block_M, bx * block_N])

    return main
