# A block-wide barrier after a possible T.thread_return(): one thread_sync would place (shared
# memory written before the return, read after it), and the user's own T.sync_threads() at the
# top of a loop whose body returns.
# tilescale-test: -k early
import tilelang.language as T


@T.prim_func
def early(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((128,), "float32")
        s[tx] = A[tx]
        if A[tx] < 0:
            T.thread_return()
        B[tx] = s[127 - tx]
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        for k in T.serial(4):
            T.sync_threads()
            if A[k * 64 + tx] < 0:
                T.thread_return()
            B[k * 64 + tx] = A[k * 64 + tx]
