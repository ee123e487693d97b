# Element atomics that TileLang's examples use beyond the plain form: T.atomic_add(...,
# return_prev=True) yields the old value (a LET bound where it is written, so the atomic runs
# once: topk_selector's slot counters), and T.atomic_addx4(dst[i, j], src[i, j]) adds four
# consecutive elements with one vector atomic (ts::atomic_add_x<4>, sparse_mla_bwd): its
# global address is not wrapped in an out-of-bounds select.
# tilescale-test: -k atomics_ext -D N=256
# tilescale-dump: thread_sync
import tilelang
import tilelang.language as T


@tilelang.jit
def atomics_ext(N, block=64):

    @T.prim_func
    def main(A: T.Tensor((N, 16), "float32"), Out: T.Tensor((N, 16), "float32"), Idx: T.Tensor((N,), "int32")):
        with T.Kernel(N // block, threads=128) as bx:
            counter = T.alloc_shared((1,), "int32")
            tile = T.alloc_shared((block, 16), "float32")
            tx = T.get_thread_binding()
            T.fill(counter, 0)
            T.copy(A[bx * block, 0], tile)
            if tx < block:
                pos = T.atomic_add(counter[0], 1, return_prev=True)
                Idx[bx * block + pos] = tx
            for i, j in T.Parallel(block, 4):
                T.atomic_addx4(Out[Idx[bx * block + i], j * 4], tile[i, j * 4])

    return main
