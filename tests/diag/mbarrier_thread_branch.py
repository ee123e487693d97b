# Tile ops under a branch on the thread index are lowered over the branch's threads when those
# form a warp-aligned range (`if tx < 128:` is a T.ws body); `tx < 100` splits a warp, so in a
# kernel with explicit mbarriers the branch is refused rather than lowered over the block.
# tilescale-test: -k tb -D M=256 --arch sm_90a
import tilelang
import tilelang.language as T


def tb(M, block_M=128, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M,), dtype), C: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            S = T.alloc_shared((block_M,), dtype)
            done = T.alloc_barrier(arrive_count=128)
            tx = T.get_thread_binding()
            if tx < 100:
                T.copy(A[bx * block_M], S)
                T.barrier_arrive(done)
            else:
                T.barrier_wait(done, 0)
                T.copy(S, C[bx * block_M])

    return main
