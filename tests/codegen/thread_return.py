# T.thread_return(): the warps past the first two leave the kernel (`return;`), as TileScale's
# DeepEP kernels end the warps they do not need.  The barrier that orders the shared tile is
# placed before the return; after it, the remaining warps only shuffle within a warp.
# tilescale-test: -k thread_return
# tilescale-dump: thread_sync
import tilelang
import tilelang.language as T


@tilelang.jit
def thread_return():

    @T.prim_func
    def main(A: T.Tensor((128,), "int32"), O: T.Tensor((64,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_shared((128,), "int32")
            T.copy(A, s)
            tx = T.get_thread_binding()
            v = T.alloc_var("int32")
            v = s[127 - tx]
            if tx >= 64:
                T.thread_return()
            O[tx] = T.tvm_warp_shuffle(-1, v, 0, 32, 32)

    return main
