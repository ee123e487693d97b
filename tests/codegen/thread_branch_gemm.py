# Hand-written warp specialization as a plain branch on the thread index (TileLang's examples
# write it so instead of T.ws): `if tx < 128` is the consumer warpgroup, its GEMM planned and
# lowered over its 128 threads (wgmma, thread index tx); the `else` is the producer warpgroup,
# threads [128, 256), whose T.copy tiles are split over its 128 threads with the index rebased
# (tx - 128).  The two branches run at once and are ordered by the user's mbarriers only: no
# barrier between them, none inside (each touches the tiles the other one owns).  The kernel
# gets no automatic warp specialization or pipelining.  regress_gpu.py runs it on the GPU.
# tilescale-test: -k tb_gemm -D M=256 -D N=256 -D K=256 --arch sm_90a
# tilescale-dump: thread_sync

import tilelang
import tilelang.language as T


def tb_gemm(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16", accum_dtype="float"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            full = T.alloc_barrier(arrive_count=128)
            empty = T.alloc_barrier(arrive_count=128)
            tx = T.get_thread_binding()
            if tx < 128:
                T.clear(C_local)
                for ko in T.serial(T.ceildiv(K, block_K)):
                    T.barrier_wait(full, ko % 2)
                    T.gemm(A_shared, B_shared, C_local)
                    T.barrier_arrive(empty)
                T.copy(C_local, C[by * block_M, bx * block_N])
            else:
                for ko in T.serial(T.ceildiv(K, block_K)):
                    T.barrier_wait(empty, (ko + 1) % 2)
                    T.copy(A[by * block_M, ko * block_K], A_shared)
                    T.copy(B[ko * block_K, bx * block_N], B_shared)
                    T.fence_proxy_async()
                    T.barrier_arrive(full)

    return main
