# A barrier the kernel writes itself is refused after T.thread_return too, also at the top of a
# loop whose earlier iterations may have returned.
# tilescale-test: -k loop_return
import tilelang
import tilelang.language as T


@tilelang.jit
def loop_return():

    @T.prim_func
    def main(O: T.Tensor((128,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            tx = T.get_thread_binding()
            for i in T.serial(4):
                T.sync_threads()
                O[tx] = i
                if tx >= 64 + i:
                    T.thread_return()

    return main
