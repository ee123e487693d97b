# tilescale-test: -k bind --arch sm_90a
"""tx = T.thread_binding(n, thread="threadIdx.x") (and the start, stop form): the kernel's thread
index along an axis whose extent is the kernel's; register-reallocation switches are hints."""
import tilelang.language as T


@T.prim_func
def bind(A: T.Tensor((4, 128), "float32")):
    with T.Kernel(4, threads=(128, 2)) as bx:
        T.disable_warp_group_reg_alloc()
        tx = T.thread_binding(128, thread="threadIdx.x")
        ty = T.thread_binding(0, 2, thread="threadIdx.y")
        if ty == 0:
            A[bx, tx] = T.float32(1)
