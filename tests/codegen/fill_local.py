# T.clear / T.fill of a T.alloc_local buffer: every thread fills its whole array (a per-thread
# serial loop, as TileLang lowers it), unlike a fragment, which is split across the threads.
# tilescale-test: -k fill_local
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def fill_local():

    @T.prim_func
    def main(O: T.Tensor((128, 8), "int32")):
        with T.Kernel(1, threads=128) as bx:
            tx = T.get_thread_binding()
            a = T.alloc_local([8], "int32")
            T.clear(a)
            a[tx % 8] += tx
            for j in T.serial(8):
                O[tx, j] = a[j]

    return main
