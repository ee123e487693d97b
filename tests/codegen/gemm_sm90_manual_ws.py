# A manual warp-specialized GEMM (T.ws): each warpgroup copies its half of B and runs its own
# wgmma over its 128 threads, with the thread index rebased inside the body (tx - 128 for
# warpgroup 1).  The shared A tile is written by all threads (__syncthreads around it); the
# hazards inside a T.ws body are ordered with a named barrier over its own threads (ids 2
# and 3), never __syncthreads, which the other warpgroup would not join.  The kernel gets no
# automatic warp specialization or pipelining (no producer warpgroup, no cp.async).
# tilescale-test: -k ws_gemm -D M=256 -D N=256 -D K=128 --arch sm_90a
# tilescale-dump: thread_sync

import tilelang
import tilelang.language as T


def ws_gemm(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16", accum_dtype="float"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_g0 = T.alloc_shared((block_K, block_N // 2), dtype)
            B_g1 = T.alloc_shared((block_K, block_N // 2), dtype)
            C_g0 = T.alloc_fragment((block_M, block_N // 2), accum_dtype)
            C_g1 = T.alloc_fragment((block_M, block_N // 2), accum_dtype)
            with T.ws(0):
                T.clear(C_g0)
            with T.ws(1):
                T.clear(C_g1)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                with T.ws(0):
                    T.copy(B[ko * block_K, bx * block_N], B_g0)
                    T.gemm(A_shared, B_g0, C_g0)
                with T.ws(1):
                    T.copy(B[ko * block_K, bx * block_N + block_N // 2], B_g1)
                    T.gemm(A_shared, B_g1, C_g1)
            with T.ws(0):
                T.copy(C_g0, C[by * block_M, bx * block_N])
            with T.ws(1):
                T.copy(C_g1, C[by * block_M, bx * block_N + block_N // 2])

    return main
