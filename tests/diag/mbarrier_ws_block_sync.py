# Two T.ws ranges ordered by mbarriers that also share a tile through ordinary shared-memory
# stores: warpgroup 0 writes S and waits for warpgroup 1's arrival, warpgroup 1 reads S.  The
# read would need a __syncthreads between the two bodies, which would deadlock (warpgroup 0
# waits for an arrival warpgroup 1 makes only after that barrier), so the kernel is refused.
# tilescale-test: -k ws_sync -D M=256 --arch sm_90a
import tilelang
import tilelang.language as T


def ws_sync(M, block_M=128, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M,), dtype), C: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            S = T.alloc_shared((block_M,), dtype)
            done = T.alloc_barrier(arrive_count=128)
            with T.ws(0):
                for i in T.Parallel(block_M):
                    S[i] = A[bx * block_M + i]
                T.barrier_wait(done, 0)
            with T.ws(1):
                for i in T.Parallel(block_M):
                    C[bx * block_M + i] = S[i]
                T.barrier_arrive(done)

    return main
