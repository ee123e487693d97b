# T.clear / T.fill and T.copy of a T.alloc_local array: every thread fills or copies its whole
# array (a per-thread serial loop, as TileLang lowers copies and fills that touch a "local"
# buffer), unlike a fragment, whose elements are split across the threads.
# tilescale-test: -k fill_local
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def fill_local():

    @T.prim_func
    def main(A: T.Tensor((128, 8), "int32"), O: T.Tensor((128, 8), "int32")):
        with T.Kernel(1, threads=128) as bx:
            tx = T.get_thread_binding()
            a = T.alloc_local([8], "int32")
            b = T.alloc_local([8], "int32")
            T.clear(a)
            T.copy(A[tx, 0:8], b)
            a[tx % 8] += tx
            for j in T.serial(8):
                O[tx, j] = a[j] + b[j]

    return main
