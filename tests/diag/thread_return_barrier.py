# A barrier after T.thread_return would wait for threads that left: refused where thread_sync
# would have to place one (one diagnostic per return).
# tilescale-test: -k after_return
import tilelang
import tilelang.language as T


@tilelang.jit
def after_return():

    @T.prim_func
    def main(A: T.Tensor((128,), "int32"), O: T.Tensor((128,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_shared((128,), "int32")
            tx = T.get_thread_binding()
            if tx >= 64:
                T.thread_return()
            s[tx] = A[tx]
            O[tx] = s[127 - tx]

    return main
