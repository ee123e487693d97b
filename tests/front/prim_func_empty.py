# A @T.prim_func written as an eager kernel (TileLang's out_idx by T.empty): a parameter
# annotated in the body, `B = T.empty(...)` ... `return B` -> B is a trailing output
# parameter (out_idx [1]); a prim_func annotated in its signature may return T.empty too.
# tilescale-test: -k kernel
import tilelang
import tilelang.language as T


@T.prim_func
def kernel(A):
    A: T.Tensor[[128, 64], T.float32]
    B = T.empty([128, 64], T.float32)
    with T.Kernel(2, threads=64) as bx:
        tx = T.get_thread_binding(0)
        for i in T.serial(64):
            B[bx * 64 + i, tx] = A[bx * 64 + i, tx] + 1.0
    return B


@T.prim_func
def annotated(A: T.Tensor((64,), T.float32)):
    B = T.empty((64,), T.float32)
    with T.Kernel(1, threads=64) as bx:
        i = T.get_thread_binding(0)
        B[i] = A[i] * 2.0
    return B
