# A tile operation after T.thread_return is split across threads that may have left: refused
# (the per-thread store before it, and per-thread code after the return, are fine).
# tilescale-test: -k tile_after_return
import tilelang
import tilelang.language as T


@tilelang.jit
def tile_after_return():

    @T.prim_func
    def main(A: T.Tensor((128,), "float32"), O: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            tx = T.get_thread_binding()
            O[tx] = A[tx]
            if tx >= 64:
                T.thread_return()
            O[tx] = A[tx] * 2.0
            T.copy(A, O)

    return main
