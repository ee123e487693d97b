# T.tma_copy(shared, global) is a TMA store: it completes no mbarrier (the issuing thread waits
# for it with T.tma_store_wait()), so a barrier= is refused at the call.
# tilescale-test: -k store_with_barrier --arch sm_90a
import tilelang
import tilelang.language as T


@tilelang.jit
def store_with_barrier():

    @T.prim_func
    def main(B: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((64, 64), "float16")
            bar = T.alloc_barrier(1)
            T.clear(S)
            T.tma_copy(S, B[0, 0], barrier=bar[0])

    return main
