# Explicit mbarriers need sm_90 (mbarrier waits by parity, TMA): refused at the call below it.
# tilescale-test: -k old_arch -D M=256 --arch sm_80
import tilelang
import tilelang.language as T


def old_arch(M, block_M=128, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            bar = T.alloc_barrier(arrive_count=128)
            T.barrier_arrive(bar)

    return main
