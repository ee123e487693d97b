# T.thread_binding names a whole launch axis: the range must be the kernel's own extent, the
# axis one of threadIdx.x/y/z, and it exists only inside a kernel.
# tilescale-test: -k bind
import tilelang.language as T


@T.prim_func
def bind(A: T.Tensor((4, 128), "float32")):
    with T.Kernel(4, threads=128) as bx:
        t0 = T.thread_binding(64, thread="threadIdx.x")
        t1 = T.thread_binding(1, 128, thread="threadIdx.x")
        t2 = T.thread_binding(128, thread="blockIdx.x")
        t3 = T.thread_binding(128)
        A[bx, 0] = T.float32(1)
