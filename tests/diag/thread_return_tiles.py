# T.thread_return() before tile operations (their work is spread over every thread), inside a
# T.Parallel loop, and in a loop whose next iteration runs a tile copy.
# tilescale-test: -k early
import tilelang.language as T


@T.prim_func
def early(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((128,), "float32")
        if tx >= 64:
            T.thread_return()
        T.copy(A[0:128], s)
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            if A[i] < 0:
                T.thread_return()
            B[i] = A[i]
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        f = T.alloc_fragment((128,), "float32")
        for k in T.serial(2):
            T.copy(A[k * 128:k * 128 + 128], f)
            if tx == k:
                T.thread_return()
